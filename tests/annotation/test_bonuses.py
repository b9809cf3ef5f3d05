"""Worker bonuses (issue 27): quote, grant with a confirmed total, paid exactly once (botocore Stubber, no network).

Every SendBonus is asserted exactly (expected_params); the Stubber fails a test on a call that was not
expected and on an expected one left unmade, so "paid once" is checked by MTurk's side too.
"""
from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import boto3
import pytest
from botocore.stub import Stubber
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.crowds.mturk_client import mturk_client_override
from annotation.models import Assignment, Hit, HitItem, Judgment, Topic, Worker, WorkerBonus
from annotation.services.crowd.bonuses import (
    BonusCostChanged,
    BonusRefused,
    bonus_grant,
    bonus_pay,
    bonus_quote,
    bonuses_pay_pending,
)
from annotation.services.crowd.workers import worker_public_id
from annotation.tasks import crowd_reconcile_task
from annotation.tasks_bonuses import bonus_pay_task
from tests.factories import DocumentFactory, TopicFactory, make_worker, user_with_role

pytestmark = pytest.mark.django_db

SANDBOX = "https://mturk-requester-sandbox.us-east-1.amazonaws.com"
REASON = "Careful work on the hard documents"


@pytest.fixture(autouse=True)
def _no_keys(mturk_sandbox):
    """Sandbox, no AWS credentials (tests/conftest.py)."""


@pytest.fixture
def stub(mturk_stub):
    return mturk_stub


def _work(topic: Topic, worker: Worker, *, documents: int, status: str = Assignment.Status.APPROVED,
          assignment_id: str | None = None) -> Assignment:
    """One assignment of `worker` in a new HIT of the topic with `documents` judgments."""
    hit = Hit.objects.create(topic=topic, reward=topic.reward_per_hit)
    assignment = Assignment.objects.create(hit=hit, worker=worker, slot=0, status=status,
                                           deadline=timezone.now() + timedelta(hours=1), external_id=assignment_id)
    for position in range(documents):
        document = DocumentFactory.create(corpus=topic.corpus)
        HitItem.objects.create(hit=hit, topic=topic, document=document, position=position)
        Judgment.objects.create(assignment=assignment, topic=topic, document=document, worker=worker, relevant=True)
    return assignment


@pytest.fixture
def mturk_world():
    """Worker A: 3 judgments (approved); B: 5 counted (2 approved + 3 submitted) and 2 in a rejected assignment."""
    topic = TopicFactory.create(crowd=Topic.Crowd.MTURK, status=Topic.Status.ACTIVE)
    a = Worker.objects.create(platform="mturk", external_id="AWORKER1")
    b = Worker.objects.create(platform="mturk", external_id="BWORKER2")
    _work(topic, a, documents=3, assignment_id="ASSIGNA1")
    _work(topic, b, documents=2, assignment_id="ASSIGNB1")
    _work(topic, b, documents=3, status=Assignment.Status.SUBMITTED, assignment_id="ASSIGNB2")
    _work(topic, b, documents=2, status=Assignment.Status.REJECTED, assignment_id="ASSIGNB3")
    analyst = user_with_role("bonus-analyst", "analyst")
    return {"topic": topic, "a": a, "b": b, "analyst": analyst}


def _params(bonus: WorkerBonus, *, worker: str, amount: str, assignment: str) -> dict:
    return {"WorkerId": worker, "BonusAmount": amount, "AssignmentId": assignment, "Reason": REASON,
            "UniqueRequestToken": bonus.request_token}


def _grant(world, *, rule=WorkerBonus.Rule.PER_JUDGMENT, amount="0.10", total, key="batch-1", workers=None):
    return bonus_grant(topic=world["topic"], rule=rule, amount=Decimal(amount), reason=REASON,
                       confirm_total=Decimal(total), idempotency_key=key, user=world["analyst"], workers=workers)


def test_per_judgment_quote_counts_the_workers_submitted_and_approved_judgments_with_mturk_fees(mturk_world):
    quote = bonus_quote(topic=mturk_world["topic"], rule=WorkerBonus.Rule.PER_JUDGMENT, amount=Decimal("0.10"))
    by_worker = {line.worker: line for line in quote.lines}
    assert set(by_worker) == {"AWORKER1", "BWORKER2"}
    assert (by_worker["AWORKER1"].judgments, by_worker["AWORKER1"].amount, by_worker["AWORKER1"].fee) == (
        3, Decimal("0.30"), Decimal("0.06"))
    # The rejected assignment's 2 judgments do not count: 5, not 7.
    assert (by_worker["BWORKER2"].judgments, by_worker["BWORKER2"].amount, by_worker["BWORKER2"].fee) == (
        5, Decimal("0.50"), Decimal("0.10"))
    assert (quote.amount, quote.fees, quote.total) == (Decimal("0.80"), Decimal("0.16"), Decimal("0.96"))


def test_per_worker_quote_and_the_minimum_fee_and_a_chosen_worker(mturk_world):
    quote = bonus_quote(topic=mturk_world["topic"], rule=WorkerBonus.Rule.PER_WORKER, amount=Decimal("0.02"))
    # 20% of 2 cents is below Amazon's $0.01 minimum fee.
    assert [(line.amount, line.fee) for line in quote.lines] == [(Decimal("0.02"), Decimal("0.01"))] * 2
    assert quote.total == Decimal("0.06")
    only_b = bonus_quote(topic=mturk_world["topic"], rule=WorkerBonus.Rule.PER_WORKER, amount=Decimal("1.00"),
                         workers=["BWORKER2"])
    assert [line.worker for line in only_b.lines] == ["BWORKER2"] and only_b.total == Decimal("1.20")
    with pytest.raises(BonusRefused, match="NOBODY"):
        bonus_quote(topic=mturk_world["topic"], rule=WorkerBonus.Rule.PER_WORKER, amount=Decimal("1.00"),
                    workers=["NOBODY"])
    with pytest.raises(BonusRefused, match="whole cents"):
        bonus_quote(topic=mturk_world["topic"], rule=WorkerBonus.Rule.PER_WORKER, amount=Decimal("0.005"))
    with pytest.raises(BonusRefused, match="at most"):
        bonus_quote(topic=mturk_world["topic"], rule=WorkerBonus.Rule.PER_JUDGMENT, amount=Decimal("40.00"))


def test_quote_grant_pay_sends_bonus_once_with_the_rows_token(mturk_world, stub, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        grant = _grant(mturk_world, total="0.96")
    assert grant.created and len(callbacks) == 1
    a_bonus, b_bonus = sorted(grant.bonuses, key=lambda b: b.worker.external_id)
    assert {b.status for b in grant.bonuses} == {WorkerBonus.Status.PENDING}
    assert a_bonus.request_token != b_bonus.request_token and len(a_bonus.request_token) <= 64
    stub.add_response("send_bonus", {}, _params(a_bonus, worker="AWORKER1", amount="0.30", assignment="ASSIGNA1"))
    # B's approved assignment is preferred to the submitted one.
    stub.add_response("send_bonus", {}, _params(b_bonus, worker="BWORKER2", amount="0.50", assignment="ASSIGNB1"))
    callbacks[0]()  # the commit's hook: the pay task, run eagerly, once per bonus
    for bonus in (a_bonus, b_bonus):
        bonus.refresh_from_db()
        assert bonus.status == WorkerBonus.Status.PAID and bonus.paid_at is not None and bonus.attempts == 1
    # The task run again, and the sweep: nothing is sent (the Stubber would fail on a call).
    assert bonus_pay_task(bonus_id=a_bonus.pk) == WorkerBonus.Status.PAID
    assert bonuses_pay_pending() == 0


def test_a_second_grant_with_the_same_key_pays_nothing_more(mturk_world, stub, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as first:
        grant = _grant(mturk_world, rule=WorkerBonus.Rule.PER_WORKER, amount="1.00", total="1.20",
                       workers=["AWORKER1"])
    assert len(grant.bonuses) == 1 and len(first) == 1
    with django_capture_on_commit_callbacks(execute=False) as second:
        again = _grant(mturk_world, rule=WorkerBonus.Rule.PER_WORKER, amount="1.00", total="1.20",
                       workers=["AWORKER1"])
    assert not again.created and [b.pk for b in again.bonuses] == [grant.bonuses[0].pk]
    assert second == [] and WorkerBonus.objects.count() == 1
    bonus = grant.bonuses[0]
    stub.add_response("send_bonus", {}, _params(bonus, worker="AWORKER1", amount="1.00", assignment="ASSIGNA1"))
    first[0]()
    bonus_pay_task(bonus_id=bonus.pk)
    bonus.refresh_from_db()
    assert bonus.status == WorkerBonus.Status.PAID and bonus.attempts == 1


def test_a_throttled_call_stays_pending_and_is_paid_on_retry_with_the_same_token(mturk_world, stub):
    grant = _grant(mturk_world, rule=WorkerBonus.Rule.PER_WORKER, amount="0.50", total="0.60", workers=["BWORKER2"])
    bonus = grant.bonuses[0]
    params = _params(bonus, worker="BWORKER2", amount="0.50", assignment="ASSIGNB1")
    stub.add_client_error("send_bonus", service_error_code="ThrottlingException", service_message="Rate exceeded",
                          http_status_code=400, expected_params=params)
    bonus = bonus_pay(bonus_id=bonus.pk)
    assert bonus.status == WorkerBonus.Status.PENDING and "ThrottlingException" in bonus.error
    stub.add_response("send_bonus", {}, params)
    crowd_reconcile_task()  # the five-minute beat sweeps pending bonuses (no HIT published: no other call)
    bonus.refresh_from_db()
    assert bonus.status == WorkerBonus.Status.PAID and bonus.attempts == 2


def test_the_token_already_used_answer_counts_as_paid(mturk_world, stub):
    bonus = _grant(mturk_world, rule=WorkerBonus.Rule.PER_WORKER, amount="0.50", total="0.60",
                   workers=["AWORKER1"]).bonuses[0]
    stub.add_client_error(
        "send_bonus", service_error_code="RequestError", http_status_code=400,
        service_message=f'The idempotency token "{bonus.request_token}" has already been processed. (1626172412406)',
        expected_params=_params(bonus, worker="AWORKER1", amount="0.50", assignment="ASSIGNA1"))
    bonus = bonus_pay(bonus_id=bonus.pk)
    assert bonus.status == WorkerBonus.Status.PAID and bonus.paid_at is not None and bonus.error == ""


def test_a_hard_error_marks_the_bonus_failed_with_mturks_message(mturk_world, stub):
    bonus = _grant(mturk_world, rule=WorkerBonus.Rule.PER_WORKER, amount="0.50", total="0.60",
                   workers=["AWORKER1"]).bonuses[0]
    stub.add_client_error("send_bonus", service_error_code="RequestError", http_status_code=400,
                          service_message="Assignment ASSIGNA1 does not exist. (1698330947012 s)")
    bonus = bonus_pay(bonus_id=bonus.pk)
    assert bonus.status == WorkerBonus.Status.FAILED and "does not exist" in bonus.error
    assert bonus_pay(bonus_id=bonus.pk).status == WorkerBonus.Status.FAILED  # not sent again


def test_a_changed_total_is_refused_with_the_fresh_quote(mturk_world):
    with pytest.raises(BonusCostChanged) as refused:
        _grant(mturk_world, total="0.80")  # the bonuses without their fees
    assert refused.value.quote.total == Decimal("0.96") and refused.value.code == "cost-changed"
    assert WorkerBonus.objects.count() == 0
    # One more judgment for A since the quote: the old total no longer holds.
    _work(mturk_world["topic"], mturk_world["a"], documents=1, assignment_id="ASSIGNA2")
    with pytest.raises(BonusCostChanged) as refused:
        _grant(mturk_world, total="0.96")
    assert refused.value.quote.total == Decimal("1.08")
    assert WorkerBonus.objects.count() == 0


def test_builtin_crowd_bonus_is_recorded_as_granted_without_any_network(django_capture_on_commit_callbacks):
    topic = TopicFactory.create(crowd=Topic.Crowd.LOCAL, status=Topic.Status.ACTIVE)
    worker = make_worker("local-annotator")
    _work(topic, worker, documents=4)
    analyst = user_with_role("bonus-analyst-2", "analyst")
    client = boto3.client("mturk", region_name="us-east-1", endpoint_url=SANDBOX, aws_access_key_id="test",
                          aws_secret_access_key="test")
    with Stubber(client), mturk_client_override(client), django_capture_on_commit_callbacks(execute=True) as hooks:
        quote = bonus_quote(topic=topic, rule=WorkerBonus.Rule.PER_JUDGMENT, amount=Decimal("0.25"))
        assert (quote.total, quote.fees, quote.paid_through_platform) == (Decimal("1.00"), Decimal("0.00"), False)
        grant = bonus_grant(topic=topic, rule=WorkerBonus.Rule.PER_JUDGMENT, amount=Decimal("0.25"), reason=REASON,
                            confirm_total=Decimal("1.00"), idempotency_key="k", user=analyst)
    assert hooks == []  # nothing queued
    bonus = grant.bonuses[0]
    assert (bonus.status, bonus.amount, bonus.judgments, bonus.platform) == (
        WorkerBonus.Status.GRANTED, Decimal("1.00"), 4, "local")
    assert bonus.paid_at is not None and bonus.created_by == analyst
    assert bonus_pay(bonus_id=bonus.pk).status == WorkerBonus.Status.GRANTED
    assert quote.lines[0].worker == worker_public_id(worker_id=worker.pk, external_id=None)


# --------------------------------------------------------------------------- the page


def _login(username: str, role: str, *, csrf: bool = False) -> Client:
    client = Client(enforce_csrf_checks=csrf)
    client.force_login(user_with_role(username, role))
    return client


def test_the_page_confirms_the_cost_then_grants_once(mturk_world, stub, django_capture_on_commit_callbacks):
    topic = mturk_world["topic"]
    client = Client()
    client.force_login(mturk_world["analyst"])
    workers_page = client.get(reverse("analyst:workers", args=[topic.pk])).content.decode()
    assert "Pay a bonus" in workers_page and reverse("analyst:bonus_confirm", args=[topic.pk]) in workers_page
    form = {"rule": "per_judgment", "amount": "0.10", "reason": REASON, "workers": ""}
    confirm = client.post(reverse("analyst:bonus_confirm", args=[topic.pk]), form)
    page = confirm.content.decode()
    assert confirm.status_code == 200 and "AWORKER1" in page and "BWORKER2" in page
    assert '<th class="num" id="quote-total">$0.96</th>' in page and "$0.16" in page
    key = page.split('name="idempotency_key" value="')[1].split('"')[0]
    assert WorkerBonus.objects.count() == 0
    changed = client.post(reverse("analyst:bonus_grant", args=[topic.pk]),
                          {**form, "confirm_total": "0.80", "idempotency_key": key})
    assert changed.status_code == 409 and "$0.96" in changed.content.decode() and WorkerBonus.objects.count() == 0
    grant = {**form, "confirm_total": "0.96", "idempotency_key": key}
    with django_capture_on_commit_callbacks(execute=False):
        first = client.post(reverse("analyst:bonus_grant", args=[topic.pk]), grant)
        second = client.post(reverse("analyst:bonus_grant", args=[topic.pk]), grant)  # a double click
    assert first.status_code == second.status_code == 302 and WorkerBonus.objects.count() == 2
    listing = client.get(reverse("analyst:bonuses", args=[topic.pk]), follow=True).content.decode()
    assert "Waiting to be paid" in listing and "$0.30" in listing and REASON in listing


@pytest.mark.parametrize("role", ["manager", "annotator"])
def test_only_analysts_see_and_post_the_bonus_pages(mturk_world, role):
    topic = mturk_world["topic"]
    client = _login(f"bonus-{role}", role)
    form = {"rule": "per_worker", "amount": "0.50", "reason": REASON, "confirm_total": "1.20", "idempotency_key": "k"}
    assert client.get(reverse("analyst:bonuses", args=[topic.pk])).status_code == 403
    assert client.post(reverse("analyst:bonus_confirm", args=[topic.pk]), form).status_code == 403
    assert client.post(reverse("analyst:bonus_grant", args=[topic.pk]), form).status_code == 403
    if role == "manager":  # the manager reads the worker-quality page, without the bonus form
        page = client.get(reverse("analyst:workers", args=[topic.pk])).content.decode()
        assert "Worker quality" in page and "Pay a bonus" not in page
    assert WorkerBonus.objects.count() == 0


def test_the_grant_post_needs_the_csrf_token(mturk_world):
    client = Client(enforce_csrf_checks=True)
    client.force_login(mturk_world["analyst"])
    form = {"rule": "per_worker", "amount": "0.50", "reason": REASON, "confirm_total": "1.20", "idempotency_key": "k"}
    assert client.post(reverse("analyst:bonus_grant", args=[mturk_world["topic"].pk]), form).status_code == 403
    assert WorkerBonus.objects.count() == 0


def test_a_bad_form_on_the_page_is_refused_with_the_reason(mturk_world):
    client = Client()
    client.force_login(mturk_world["analyst"])
    url = reverse("analyst:bonus_confirm", args=[mturk_world["topic"].pk])
    response = client.post(url, {"rule": "per_worker", "amount": "0.001", "reason": REASON}, follow=True)
    assert response.status_code < 500 and "amount" in response.content.decode()
    response = client.post(url, {"rule": "per_worker", "amount": "1.00", "reason": REASON, "workers": "NOBODY"},
                           follow=True)
    assert response.status_code < 500 and "NOBODY" in response.content.decode()
    assert WorkerBonus.objects.count() == 0


@pytest.mark.parametrize("listed_reason", [REASON, "An earlier, other bonus"])
def test_a_retry_past_the_tokens_24_hours_asks_mturks_bonus_payments_first(mturk_world, stub, listed_reason):
    bonus = _grant(mturk_world, rule=WorkerBonus.Rule.PER_WORKER, amount="0.50", total="0.60",
                   workers=["AWORKER1"]).bonuses[0]
    # Tried once (the answer was lost), still pending a day later: MTurk may have forgotten the token.
    WorkerBonus.objects.filter(pk=bonus.pk).update(attempts=1, created_at=timezone.now() - timedelta(hours=25))
    stub.add_response("list_bonus_payments", {"NumResults": 1, "BonusPayments": [
        {"WorkerId": "AWORKER1", "BonusAmount": "0.50", "AssignmentId": "ASSIGNA1", "Reason": listed_reason,
         "GrantTime": timezone.now() - timedelta(hours=24)}]}, {"AssignmentId": "ASSIGNA1", "MaxResults": 100})
    already_paid = listed_reason == REASON
    if not already_paid:  # the payment MTurk lists is another bonus: this one is sent
        stub.add_response("send_bonus", {}, _params(bonus, worker="AWORKER1", amount="0.50", assignment="ASSIGNA1"))
    bonus = bonus_pay(bonus_id=bonus.pk)
    assert bonus.status == WorkerBonus.Status.PAID and bonus.attempts == 2
