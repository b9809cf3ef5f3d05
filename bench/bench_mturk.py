"""Mechanical Turk: app-side cost of the external HIT page and of reconcile (no network).

    python bench/bench_mturk.py [--hits 200]

Uses a throw-away test database (SQLite in memory unless DATABASE_URL is set) and an
in-process fake MTurk client that answers instantly, so the figures are our own
overhead; every real MTurk call adds its network round trip (typically 100–300 ms).
Prints: HIT page accept (GET) and submit (POST) per second; reconcile time per HIT with
three submitted assignments (ListReviewableHITs pages, then per HIT ListAssignmentsForHIT,
3 GetAssignment confirmations of the provisional answers, 3 approvals, and parking the
decided HIT in Reviewing); then a per-judgment bonus to every worker: grant time and
SendBonus payment time per bonus, and that a second sweep sends nothing.

The fake answers every MTurk call the services make (annotation/services/crowd/mturk*.py,
bonuses.py); a call it does not know fails loudly (AttributeError), so a new call in the
services shows up here as a missing method rather than as a wrong figure.
"""
import argparse
import logging
import os
import sys
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")

import django

django.setup()

from collections import Counter  # noqa: E402
from decimal import Decimal  # noqa: E402

from botocore.exceptions import ClientError  # noqa: E402
from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402
from django.utils import timezone  # noqa: E402


class FakeMturk:
    """Answers like MTurk for the calls reconcile and bonuses make; counts them (per operation too)."""

    def __init__(self, assignments_by_hit):
        self.assignments_by_hit = assignments_by_hit
        self.reviewable: list[str] = []
        self.calls = 0
        self.by_operation: Counter[str] = Counter()
        self.bonus_tokens: set[str] = set()

    def _count(self, operation: str) -> None:
        self.calls += 1
        self.by_operation[operation] += 1

    def list_assignments_for_hit(self, HITId, MaxResults, NextToken=None, AssignmentStatuses=None):
        self._count("ListAssignmentsForHIT")
        found = self.assignments_by_hit.get(HITId, [])
        if AssignmentStatuses:
            found = [a for a in found if a["AssignmentStatus"] in AssignmentStatuses]
        return {"Assignments": found, "NumResults": len(found)}

    def get_assignment(self, AssignmentId):
        self._count("GetAssignment")
        for assignments in self.assignments_by_hit.values():
            for assignment in assignments:
                if assignment["AssignmentId"] == AssignmentId:
                    return {"Assignment": assignment, "HIT": {"HITId": assignment["HITId"]}}
        raise ClientError({"Error": {"Code": "RequestError", "Message": f"Assignment {AssignmentId} does not exist"}},
                          "GetAssignment")

    def approve_assignment(self, AssignmentId, RequesterFeedback, OverrideRejection=None):
        self._count("ApproveAssignment")
        return {}

    def reject_assignment(self, AssignmentId, RequesterFeedback):
        self._count("RejectAssignment")
        return {}

    def list_reviewable_hits(self, Status, MaxResults, NextToken=None, HITTypeId=None):
        self._count("ListReviewableHITs")
        ids = self.reviewable if Status == "Reviewable" else []
        start = int(NextToken or 0)
        page = ids[start:start + MaxResults]
        answer = {"HITs": [{"HITId": i, "HITStatus": Status} for i in page], "NumResults": len(page)}
        if start + MaxResults < len(ids):
            answer["NextToken"] = str(start + MaxResults)
        return answer

    def get_hit(self, HITId):
        self._count("GetHIT")
        return {"HIT": {"HITId": HITId, "HITStatus": "Reviewable", "Expiration": timezone.now() + timedelta(days=1)}}

    def update_hit_review_status(self, HITId, Revert=False):
        self._count("UpdateHITReviewStatus")
        return {}

    def update_expiration_for_hit(self, HITId, ExpireAt):
        self._count("UpdateExpirationForHIT")
        return {}

    def create_additional_assignments_for_hit(self, HITId, NumberOfAdditionalAssignments, UniqueRequestToken=None):
        self._count("CreateAdditionalAssignmentsForHIT")
        return {}

    def send_bonus(self, WorkerId, BonusAmount, AssignmentId, Reason, UniqueRequestToken):
        self._count("SendBonus")
        if UniqueRequestToken in self.bonus_tokens:
            raise ClientError({"Error": {"Code": "RequestError", "Message": (
                f'The idempotency token "{UniqueRequestToken}" has already been processed.')}}, "SendBonus")
        self.bonus_tokens.add(UniqueRequestToken)
        return {}


def main() -> None:
    logging.disable(logging.INFO)  # per-call log lines would dominate the figures
    parser = argparse.ArgumentParser()
    parser.add_argument("--hits", type=int, default=200)
    args = parser.parse_args()

    setup_test_environment()
    old_name = connection.creation.create_test_db(verbosity=0)
    try:
        run(args.hits)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


def run(n_hits: int) -> None:
    from annotation.models import Assignment, Hit, HitItem, Label, Topic
    from annotation.services.crowd.mturk_reconcile import mturk_reconcile_all
    from tests.factories import DocumentFactory, TopicFactory

    settings.MTURK_EXTERNAL_BASE_URL = "https://recall.example.org"
    topic = TopicFactory.create(crowd=Topic.Crowd.MTURK, status=Topic.Status.ACTIVE, reward_per_hit=Decimal("0.05"))
    documents = [DocumentFactory.create(corpus=topic.corpus) for _ in range(n_hits * topic.hit_size)]
    hits = []
    for h in range(n_hits):
        hit = Hit.objects.create(topic=topic, reward=topic.reward_per_hit, external_id=f"3HIT{h:026d}")
        chunk = documents[h * topic.hit_size : (h + 1) * topic.hit_size]
        HitItem.objects.bulk_create(
            [HitItem(hit=hit, topic=topic, document=d, position=i) for i, d in enumerate(chunk)]
        )
        Label.objects.bulk_create([Label(topic=topic, document=d) for d in chunk])
        hits.append((hit, chunk))

    client = Client()
    get_seconds = post_seconds = 0.0
    pages = 0
    for h, (hit, chunk) in enumerate(hits):
        assert hit.external_id is not None  # created with one above
        for slot in range(3):
            query = {
                "assignmentId": f"3A{h:08d}{slot}", "hitId": hit.external_id,
                "workerId": f"AW{h:06d}{slot}", "turkSubmitTo": "https://workersandbox.mturk.com",
            }
            start = time.perf_counter()
            response = client.get(f"/mturk/hit/{hit.pk}/", query)
            get_seconds += time.perf_counter() - start
            token = response.content.decode().split('name="token" value="')[1].split('"')[0]
            data = {**query, "token": token, **{f"doc-{d.pk}": "1" if i % 2 else "0" for i, d in enumerate(chunk)}}
            start = time.perf_counter()
            response = client.post(f"/mturk/hit/{hit.pk}/", data)
            post_seconds += time.perf_counter() - start
            assert response.status_code == 200, response.content[:500]
            pages += 1
    print(f"HIT page, {topic.hit_size} documents: accept {pages / get_seconds:.0f}/s, submit {pages / post_seconds:.0f}/s "
          f"({pages} assignments, {connection.vendor})")

    listing: dict[str | None, list[dict[str, str | None]]] = {}
    for assignment in Assignment.objects.select_related("worker", "hit"):
        listing.setdefault(assignment.hit.external_id, []).append(
            {"AssignmentId": assignment.external_id, "WorkerId": assignment.worker.external_id,
             "HITId": assignment.hit.external_id, "AssignmentStatus": "Submitted"}
        )
    fake = FakeMturk(listing)
    fake.reviewable = [hit.external_id for hit, _ in hits if hit.external_id]
    start = time.perf_counter()
    summary = mturk_reconcile_all(client=fake)
    seconds = time.perf_counter() - start
    assert summary.approved == pages and not summary.errors, summary
    print(f"reconcile: {n_hits} HITs, {summary.approved} approvals, {fake.calls} MTurk calls in {seconds:.2f} s "
          f"= {1000 * seconds / n_hits:.1f} ms per HIT without network ({dict(sorted(fake.by_operation.items()))})")
    fake.assignments_by_hit = {k: [{**a, "AssignmentStatus": "Approved"} for a in v] for k, v in listing.items()}
    start = time.perf_counter()
    again = mturk_reconcile_all(client=fake)
    seconds = time.perf_counter() - start
    print(f"reconcile again (all approved, {again.hits_checked} HITs checked): "
          f"{1000 * seconds / max(again.hits_checked, 1):.1f} ms per HIT")
    bonuses(topic, fake)


def bonuses(topic, fake: FakeMturk) -> None:
    """A per-judgment bonus to every worker: grant (its queued tasks pay), every answer lost and retried, sweep."""
    from django.contrib.auth import get_user_model

    from annotation.crowds.mturk_client import mturk_client_override
    from annotation.models import WorkerBonus
    from annotation.services.crowd.bonuses import bonus_grant, bonus_quote, bonuses_pay_pending

    user = get_user_model().objects.create_user(username="bench-analyst")
    rule, amount = WorkerBonus.Rule.PER_JUDGMENT, Decimal("0.02")
    paid = WorkerBonus.objects.filter(status=WorkerBonus.Status.PAID)
    with mturk_client_override(fake):
        start = time.perf_counter()
        quote = bonus_quote(topic=topic, rule=rule, amount=amount)
        quoted = time.perf_counter() - start
        fake.by_operation.clear()
        start = time.perf_counter()
        # Outside a transaction the queued tasks run at once (eager Celery): grant and payment together.
        grant = bonus_grant(topic=topic, rule=rule, amount=amount, reason="Bench bonus", confirm_total=quote.total,
                            idempotency_key="bench", user=user)
        granted = time.perf_counter() - start
        count, sends = len(grant.bonuses), fake.by_operation["SendBonus"]
        print(f"bonuses: {count} workers, ${quote.total} with fees; quote {1000 * quoted:.0f} ms; grant and pay "
              f"{1000 * granted:.0f} ms = {1000 * granted / max(count, 1):.1f} ms per bonus, {paid.count()} paid "
              f"with {sends} SendBonus")
        # Every answer lost: all pending again, the sweep retries with the same tokens; MTurk pays nothing more.
        WorkerBonus.objects.update(status=WorkerBonus.Status.PENDING, paid_at=None)
        fake.by_operation.clear()
        start = time.perf_counter()
        swept = bonuses_pay_pending(limit=count)
        seconds = time.perf_counter() - start
        print(f"bonuses retried after lost answers: {swept} counted paid from {fake.by_operation['SendBonus']} "
              f"'token already processed' answers in {1000 * seconds / max(count, 1):.1f} ms per bonus; "
              f"bonuses MTurk paid in all: {len(fake.bonus_tokens)}")
        fake.by_operation.clear()
        again = bonuses_pay_pending(limit=count)
        print(f"bonuses swept again: {again} paid, {fake.by_operation['SendBonus']} SendBonus")


if __name__ == "__main__":
    main()
