"""Reconcile driven by ListReviewableHITs (issue 25 item 6): MTurk is asked for its reviewable HITs, a page of
100 at a time, and only those (and HITs where the app saw a worker) get a ListAssignmentsForHIT of their own.

Before, every published HIT of the last 7 days cost a ListAssignmentsForHIT and a GetHIT on every run (five
minutes apart): 2 × 304 = 608 calls a run for the topic below. Against botocore's Stubber: every request is
asserted exactly, an unexpected call fails the test, and a client wrapper counts the calls made.
"""
from __future__ import annotations

from collections import Counter
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from botocore.stub import Stubber
from django.utils import timezone

from annotation.models import Assignment, Hit, Topic, Worker
from annotation.services.crowd import mturk as mturk_service
from annotation.services.crowd.mturk import FEEDBACK_APPROVED, FEEDBACK_NO_ANSWERS
from annotation.services.crowd.mturk_reconcile import mturk_reconcile_all
from tests.factories import TopicFactory

pytestmark = pytest.mark.django_db

SANDBOX = "https://mturk-requester-sandbox.us-east-1.amazonaws.com"
OPEN_HITS = 300


@pytest.fixture(autouse=True)
def _mturk_settings(settings, monkeypatch):
    settings.MTURK_ENVIRONMENT = "sandbox"
    settings.MTURK_EXTERNAL_BASE_URL = "https://recall.example.org"
    settings.MTURK_LIFETIME_SECONDS = 604800
    settings.MTURK_AUTO_APPROVAL_DELAY_SECONDS = 259200
    settings.MTURK_APPROVAL_HOLD_SECONDS = 0
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(mturk_service, "_unavailable_until", 0.0)


class Counting:
    """The stubbed client, counting each MTurk operation called through it."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.calls: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._client, name)

        def call(**kwargs: Any) -> Any:
            self.calls[name] += 1
            return method(**kwargs)

        return call

    def take(self) -> Counter[str]:
        calls, self.calls = self.calls, Counter()
        return calls


@pytest.fixture
def stub(mturk_stub):
    return mturk_stub


def _listed(hit_id: str, status: str = "Reviewable") -> dict:
    return {"HITId": hit_id, "HITStatus": status, "Expiration": timezone.now() + timedelta(days=1)}


def _page(stub: Stubber, status: str, hit_ids: list[str], *, token: str | None = None,
          next_token: str | None = None, hit_status: str | None = None) -> None:
    params: dict[str, Any] = {"Status": status, "MaxResults": 100}
    if token:
        params["NextToken"] = token
    reply: dict[str, Any] = {"HITs": [_listed(h, hit_status or status) for h in hit_ids], "NumResults": len(hit_ids)}
    if next_token:
        reply["NextToken"] = next_token
    stub.add_response("list_reviewable_hits", reply, params)


def _assignments(stub: Stubber, hit_id: str, assignment_id: str, worker_id: str) -> None:
    stub.add_response("list_assignments_for_hit", {"Assignments": [
        {"AssignmentId": assignment_id, "WorkerId": worker_id, "HITId": hit_id, "AssignmentStatus": "Submitted"}],
        "NumResults": 1}, {"HITId": hit_id, "MaxResults": 100})


@pytest.fixture
def world():
    """One active MTurk topic: 300 open published HITs nobody took; HIT A where the app recorded a submission
    (MTurk does not list it: it is not full); three HITs the app no longer needs (complete) that MTurk lists
    as Reviewable, each holding a submission the app never recorded (to reject)."""
    topic = TopicFactory.create(crowd=Topic.Crowd.MTURK, status=Topic.Status.ACTIVE, reward_per_hit=Decimal("0.05"))
    Hit.objects.bulk_create([Hit(topic=topic, reward=topic.reward_per_hit, external_id=f"3OPEN{n:025d}")
                             for n in range(OPEN_HITS)])
    a = Hit.objects.create(topic=topic, reward=topic.reward_per_hit, external_id="3HITA0000000000000000000000000")
    Assignment.objects.create(
        hit=a, worker=Worker.objects.create(platform="mturk", external_id="AWORKERA"), slot=0,
        status=Assignment.Status.SUBMITTED, deadline=timezone.now() + timedelta(hours=1),
        submitted_at=timezone.now() - timedelta(minutes=5), external_id="3ASSIGNMENTA")
    reviewable = [Hit.objects.create(topic=topic, reward=topic.reward_per_hit, status=Hit.Status.COMPLETE,
                                     external_id=f"3HITR{n}000000000000000000000000"[:30]) for n in (1, 2, 3)]
    return a, reviewable


def _reject(stub: Stubber, hit: Hit, n: int, *, park: bool = True) -> None:
    assert hit.external_id is not None
    _assignments(stub, hit.external_id, f"3UNRECORDED{n}", f"AWORKERR{n}")
    stub.add_response("reject_assignment", {}, {"AssignmentId": f"3UNRECORDED{n}",
                                                "RequesterFeedback": FEEDBACK_NO_ANSWERS})
    if park:
        stub.add_response("update_hit_review_status", {}, {"HITId": hit.external_id, "Revert": False})


def test_reconcile_pages_through_reviewable_hits_stops_on_throttling_and_finishes_on_the_next_run(stub, world):
    a, (r1, r2, r3) = world
    foreign = "3SOMEONEELSESHIT00000000000000"  # another application on the same account: ignored
    counting = Counting(stub.client)

    # Run 1: two pages of Reviewable HITs, the Reviewing list, then A (recorded: approved), R1 (rejected,
    # parked); MTurk throttles at R2, and the run stops there.
    _page(stub, "Reviewable", [r1.external_id, foreign, r2.external_id], next_token="page-2")
    _page(stub, "Reviewable", [r3.external_id], token="page-2")
    _page(stub, "Reviewing", [])
    _assignments(stub, a.external_id, "3ASSIGNMENTA", "AWORKERA")
    stub.add_response("approve_assignment", {}, {"AssignmentId": "3ASSIGNMENTA", "RequesterFeedback": FEEDBACK_APPROVED})
    _reject(stub, r1, 1)
    stub.add_client_error("list_assignments_for_hit", service_error_code="ThrottlingException",
                          service_message="Rate exceeded", http_status_code=400,
                          expected_params={"HITId": r2.external_id, "MaxResults": 100})
    first = mturk_reconcile_all(client=counting)
    assert first.stopped_early
    assert (first.approved, first.rejected, first.parked, first.reviewable_listed) == (1, 1, 1, 3)
    assert first.errors == [f"HIT {r2.pk} ({r2.external_id}): ThrottlingException Rate exceeded"]
    assert counting.take() == {"list_reviewable_hits": 3, "list_assignments_for_hit": 3, "approve_assignment": 1,
                               "reject_assignment": 1, "update_hit_review_status": 1}
    assert Assignment.objects.get(external_id="3ASSIGNMENTA").status == "approved"

    # Run 2 (five minutes later): R1 is Reviewing now and A has nothing left: only R2 and R3 are asked about.
    _page(stub, "Reviewable", [foreign, r2.external_id], next_token="page-2")
    _page(stub, "Reviewable", [r3.external_id], token="page-2")
    _page(stub, "Reviewing", [r1.external_id])
    _reject(stub, r2, 2)
    _reject(stub, r3, 3)
    second = mturk_reconcile_all(client=counting)
    assert not second.stopped_early and second.errors == []
    assert (second.approved, second.rejected, second.parked, second.hits_checked) == (0, 2, 2, 2)
    assert counting.take() == {"list_reviewable_hits": 3, "list_assignments_for_hit": 2, "reject_assignment": 2,
                               "update_hit_review_status": 2}

    # Run 3, the steady state: 304 published HITs, nothing to decide — two calls in all.
    _page(stub, "Reviewable", [foreign])
    _page(stub, "Reviewing", [r1.external_id, r2.external_id, r3.external_id])
    third = mturk_reconcile_all(client=counting)
    assert (third.hits_checked, third.approved, third.rejected, third.errors) == (0, 0, 0, [])
    assert counting.take() == {"list_reviewable_hits": 2}
    assert Hit.objects.filter(topic=a.topic, external_id__isnull=False).count() == OPEN_HITS + 4


def test_throttled_while_listing_decides_nothing(stub, world):
    a, (r1, _r2, _r3) = world
    _page(stub, "Reviewable", [r1.external_id], next_token="page-2")
    stub.add_client_error("list_reviewable_hits", service_error_code="ThrottlingException",
                          service_message="Rate exceeded", http_status_code=400,
                          expected_params={"Status": "Reviewable", "MaxResults": 100, "NextToken": "page-2"})
    summary = mturk_reconcile_all()  # no other call queued: one would fail the test
    assert summary.stopped_early and summary.hits_checked == 0
    assert summary.errors == ["ListReviewableHITs: ThrottlingException Rate exceeded"]
    assert Assignment.objects.get(external_id="3ASSIGNMENTA").status == "submitted"


def test_an_empty_last_page_with_a_token_ends_the_listing(stub, world):
    a, (r1, _r2, _r3) = world
    Hit.objects.filter(pk__in=[h.pk for h in world[1]]).update(status=Hit.Status.OPEN)  # needed, not expired
    Assignment.objects.all().delete()
    _page(stub, "Reviewable", [r1.external_id], next_token="page-2")
    _page(stub, "Reviewable", [], token="page-2", next_token="page-3")  # MTurk may do this: stop here
    _page(stub, "Reviewing", [])
    stub.add_response("list_assignments_for_hit", {"Assignments": [], "NumResults": 0},
                      {"HITId": r1.external_id, "MaxResults": 100})
    summary = mturk_reconcile_all()
    assert (summary.hits_checked, summary.parked, summary.reopened, summary.errors) == (1, 0, 0, [])
