"""Mechanical Turk: app-side cost of the external HIT page and of reconcile (no network).

    python bench/bench_mturk.py [--hits 200]

Uses a throw-away test database (SQLite in memory unless DATABASE_URL is set) and an
in-process fake MTurk client that answers instantly, so the figures are our own
overhead; every real MTurk call adds its network round trip (typically 100–300 ms).
Prints: HIT page accept (GET) and submit (POST) per second, and reconcile time per
HIT with three submitted assignments (list + 3 approvals + GetHIT = 5 MTurk calls).
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

from decimal import Decimal  # noqa: E402

from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402
from django.utils import timezone  # noqa: E402


class FakeMturk:
    """Answers like MTurk for the calls reconcile makes; counts them."""

    def __init__(self, assignments_by_hit):
        self.assignments_by_hit = assignments_by_hit
        self.calls = 0

    def list_assignments_for_hit(self, HITId, MaxResults, NextToken=None):
        self.calls += 1
        return {"Assignments": self.assignments_by_hit.get(HITId, []), "NumResults": 0}

    def approve_assignment(self, AssignmentId, RequesterFeedback):
        self.calls += 1
        return {}

    def reject_assignment(self, AssignmentId, RequesterFeedback):
        self.calls += 1
        return {}

    def list_reviewable_hits(self, Status, MaxResults, NextToken=None):
        self.calls += 1
        return {"HITs": [], "NumResults": 0}

    def get_hit(self, HITId):
        self.calls += 1
        return {"HIT": {"HITId": HITId, "HITStatus": "Reviewable", "Expiration": timezone.now() + timedelta(days=1)}}


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
    start = time.perf_counter()
    summary = mturk_reconcile_all(client=fake)
    seconds = time.perf_counter() - start
    assert summary.approved == pages and not summary.errors, summary
    print(f"reconcile: {n_hits} HITs, {summary.approved} approvals, {fake.calls} MTurk calls in {seconds:.2f} s "
          f"= {1000 * seconds / n_hits:.1f} ms per HIT without network")
    fake.assignments_by_hit = {k: [{**a, "AssignmentStatus": "Approved"} for a in v] for k, v in listing.items()}
    start = time.perf_counter()
    again = mturk_reconcile_all(client=fake)
    seconds = time.perf_counter() - start
    print(f"reconcile again (all approved, {again.hits_checked} HITs checked): {1000 * seconds / max(again.hits_checked, 1):.1f} ms per HIT")


if __name__ == "__main__":
    main()
