"""The bonus API (issue 27): quote, grant with the confirmed total and an Idempotency-Key, list; paid once."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Assignment, Hit, HitItem, Judgment, Topic, Worker, WorkerBonus
from tests.factories import DocumentFactory, TopicFactory

pytestmark = pytest.mark.django_db

SANDBOX = "https://mturk-requester-sandbox.us-east-1.amazonaws.com"
REASON = "Thank you for the careful work"


@pytest.fixture(autouse=True)
def _no_keys(mturk_sandbox):
    """Sandbox, no AWS credentials (tests/conftest.py)."""


@pytest.fixture
def stub(mturk_stub):
    return mturk_stub


@pytest.fixture
def topic() -> Topic:
    """An MTurk topic: worker W1 with 2 approved judgments, W2 with 4 (one assignment submitted)."""
    topic = TopicFactory.create(crowd=Topic.Crowd.MTURK, status=Topic.Status.ACTIVE)
    for external_id, documents, status in (("W1", 2, "approved"), ("W2", 4, "submitted")):
        worker = Worker.objects.create(platform="mturk", external_id=external_id)
        hit = Hit.objects.create(topic=topic, reward=topic.reward_per_hit)
        assignment = Assignment.objects.create(hit=hit, worker=worker, slot=0, status=status,
                                               deadline=timezone.now() + timedelta(hours=1),
                                               external_id=f"ASSIGN{external_id}")
        for position in range(documents):
            document = DocumentFactory.create(corpus=topic.corpus)
            HitItem.objects.create(hit=hit, topic=topic, document=document, position=position)
            Judgment.objects.create(assignment=assignment, topic=topic, document=document, worker=worker,
                                    relevant=False)
    return topic


def _url(topic: Topic, tail: str = "") -> str:
    return f"/api/v1/topics/{topic.pk}/bonuses/{tail}"


def test_quote_then_grant_with_a_key_pays_each_worker_once(analyst, topic, stub, django_capture_on_commit_callbacks):
    quote = analyst.client.post(_url(topic, "quote/"), {"rule": "per_judgment", "amount": "0.25"}, format="json")
    assert quote.status_code == 200, quote.content
    body = quote.json()
    assert [(line["worker"], line["judgments"], line["amount"], line["fee"]) for line in body["lines"]] == [
        ("W1", 2, "0.50", "0.10"), ("W2", 4, "1.00", "0.20")]
    assert (body["amount"], body["fees"], body["total"]) == ("1.50", "0.30", "1.80")
    grant = {"rule": "per_judgment", "amount": "0.25", "reason": REASON, "confirm_total": body["total"]}

    missing_key = analyst.client.post(_url(topic), grant, format="json")
    assert missing_key.status_code == 400 and "Idempotency-Key" in missing_key.json()["errors"]

    stub.add_response("send_bonus", {}, {"WorkerId": "W1", "BonusAmount": "0.50", "AssignmentId": "ASSIGNW1",
                                         "Reason": REASON, "UniqueRequestToken": stub_token("W1")})
    stub.add_response("send_bonus", {}, {"WorkerId": "W2", "BonusAmount": "1.00", "AssignmentId": "ASSIGNW2",
                                         "Reason": REASON, "UniqueRequestToken": stub_token("W2")})
    with django_capture_on_commit_callbacks(execute=True):
        first = analyst.client.post(_url(topic), grant, format="json", HTTP_IDEMPOTENCY_KEY="bonus-2026-11")
    assert first.status_code == 201, first.content
    assert first.json()["created"] is True and len(first.json()["bonuses"]) == 2
    with django_capture_on_commit_callbacks(execute=True):
        again = analyst.client.post(_url(topic), grant, format="json", HTTP_IDEMPOTENCY_KEY="bonus-2026-11")
    assert again.status_code == 201 and again["Idempotent-Replayed"] == "true"
    assert WorkerBonus.objects.count() == 2
    assert set(WorkerBonus.objects.values_list("status", flat=True)) == {"paid"}

    listed = analyst.client.get(_url(topic))
    assert listed.status_code == 200
    assert listed.json()["count"] == 2
    assert sorted((b["worker"], b["amount"], b["status"]) for b in listed.json()["results"]) == [
        ("W1", "0.50", "paid"), ("W2", "1.00", "paid")]
    assert analyst.client.get(_url(topic) + "?status=failed").json()["count"] == 0
    bad = analyst.client.get(_url(topic) + "?status=nonsense")
    assert bad.status_code == 400 and "status" in bad.json()["errors"]


def stub_token(worker: str) -> object:
    """Any token of the worker's bonus row: compared once the row exists (tokens are random per row)."""

    class _RowToken:
        def __eq__(self, other: object) -> bool:
            return WorkerBonus.objects.filter(worker__external_id=worker, request_token=other).exists()

        def __repr__(self) -> str:
            return f"<request_token of {worker}'s bonus>"

    return _RowToken()


def test_a_changed_total_is_a_409_with_the_fresh_quote(analyst, topic):
    grant = {"rule": "per_worker", "amount": "0.50", "reason": REASON, "confirm_total": "1.00"}
    response = analyst.client.post(_url(topic), grant, format="json", HTTP_IDEMPOTENCY_KEY="k1")
    assert response.status_code == 409
    body = response.json()
    assert body["type"].endswith("/cost-changed") and body["quote"]["total"] == "1.20"
    assert WorkerBonus.objects.count() == 0
    # The same key with the right total is not a replay of the refusal: it grants.
    ok = analyst.client.post(_url(topic), {**grant, "confirm_total": "1.20", "workers": ["W2"]}, format="json",
                             HTTP_IDEMPOTENCY_KEY="k2")
    assert ok.status_code == 409 and ok.json()["quote"]["total"] == "0.60"


def test_bad_input_is_a_400_and_other_roles_are_refused(analyst, manager, annotator, topic):
    for body in ({"rule": "per_hour", "amount": "1"}, {"rule": "per_worker", "amount": "0.001"},
                 {"rule": "per_worker", "amount": "1", "workers": ["NOBODY"]}):
        response = analyst.client.post(_url(topic, "quote/"), body, format="json")
        assert response.status_code == 400, body
    for caller in (manager, annotator):
        assert caller.client.post(_url(topic, "quote/"), {"rule": "per_worker", "amount": "1"},
                                  format="json").status_code == 403
        assert caller.client.get(_url(topic)).status_code == 403
        assert caller.client.post(_url(topic), {}, format="json", HTTP_IDEMPOTENCY_KEY="x").status_code == 403
    assert WorkerBonus.objects.count() == 0
