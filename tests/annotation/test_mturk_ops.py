"""Mechanical Turk operations (issue 25 item 6), against botocore's Stubber (no network).

* The production account's balance is checked against a launch's cost before anything is published: a launch
  the account cannot pay for is refused whole, the message giving both figures.
* Invented assignment/worker ids take no place in a HIT: a new place needs an accepted MTurk assignment to
  match it (GetHIT's NumberOfAssignmentsPending + NumberOfAssignmentsCompleted). Before, anyone who could
  preview a HIT could fill its places with invented ids for ~40 minutes (24 h when MTurk was unreachable).
"""
from __future__ import annotations

from decimal import Decimal

import boto3
import pytest
from botocore.stub import Stubber
from django.db import transaction

from annotation.crowds.mturk_client import mturk_client_override
from annotation.models import Assignment, Hit, HitItem, Topic, Worker
from annotation.services.crowd import crowds
from annotation.services.crowd import mturk as mturk_service
from annotation.services.crowd.mturk import MturkInsufficientFunds, MturkPageRefused, mturk_assignment_start
from tests.factories import DocumentFactory, TopicFactory

pytestmark = pytest.mark.django_db

PRODUCTION = "https://mturk-requester.us-east-1.amazonaws.com"
MTURK_HIT_ID = "3Z8UJEJOCZEG603II1EL4BE2QUB93V"


@pytest.fixture(autouse=True)
def _mturk_settings(settings, monkeypatch):
    settings.MTURK_EXTERNAL_BASE_URL = "https://recall.example.org"
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(mturk_service, "_unavailable_until", 0.0)
    mturk_service._funds_checked.clear()


@pytest.fixture
def stub():
    client = boto3.client("mturk", region_name="us-east-1", endpoint_url=PRODUCTION,
                          aws_access_key_id="test", aws_secret_access_key="test")
    with Stubber(client) as stubber, mturk_client_override(client):
        yield stubber
        stubber.assert_no_pending_responses()


def _topic() -> Topic:
    return TopicFactory.create(crowd=Topic.Crowd.MTURK, status=Topic.Status.ACTIVE, reward_per_hit=Decimal("0.05"))


def _hit(topic: Topic, **kwargs) -> Hit:
    hit = Hit.objects.create(topic=topic, reward=topic.reward_per_hit, max_assignments=3, **kwargs)
    for position in range(2):
        HitItem.objects.create(hit=hit, topic=topic, document=DocumentFactory.create(corpus=topic.corpus),
                               position=position)
    return hit


# --- the account's balance before a production launch ------------------------------------------------


def _launch(topic: Topic, hits: int) -> list[Hit]:
    """What a launch does: create the HITs and hand them to the crowd, in one transaction."""
    with transaction.atomic():
        created = [_hit(topic) for _ in range(hits)]
        for hit in created:
            crowds.crowd_publish(hit=Hit.objects.select_related("topic").get(pk=hit.pk))
    return created


def test_a_production_launch_the_balance_cannot_pay_for_is_refused_with_both_figures(settings, stub):
    settings.MTURK_ENVIRONMENT = "production"
    topic = _topic()
    # Two HITs × 3 assignments × ($0.05 + $0.01 commission) = $0.36; one GetAccountBalance for the launch.
    stub.add_response("get_account_balance", {"AvailableBalance": "0.20"}, {})
    with pytest.raises(MturkInsufficientFunds) as refused:
        _launch(topic, hits=2)
    message = refused.value.message
    assert "$0.20 available" in message and "needs $0.36" in message and "$0.16 short" in message
    assert not Hit.objects.filter(topic=topic).exists()  # the launch was rolled back whole


def test_a_funded_production_launch_asks_the_balance_once_then_publishes(settings, stub,
                                                                          django_capture_on_commit_callbacks):
    settings.MTURK_ENVIRONMENT = "production"
    topic = _topic()
    stub.add_response("get_account_balance", {"AvailableBalance": "10000.00"}, {})
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        hits = _launch(topic, hits=3)
    assert len(hits) == 3 and len(callbacks) == 3  # published after commit (not run here: no CreateHIT stubbed)


def test_a_second_launch_of_the_same_size_asks_the_balance_again(settings, stub, django_capture_on_commit_callbacks):
    settings.MTURK_ENVIRONMENT = "production"
    topic = _topic()
    stub.add_response("get_account_balance", {"AvailableBalance": "1.00"}, {})
    with django_capture_on_commit_callbacks(execute=False):
        first = _launch(topic, hits=2)
    for n, hit in enumerate(first):  # published meanwhile
        Hit.objects.filter(pk=hit.pk).update(external_id=f"3PUBLISHED{n}")
    stub.add_response("get_account_balance", {"AvailableBalance": "0.30"}, {})  # the first launch used funds
    with pytest.raises(MturkInsufficientFunds, match=r"\$0.30 available"):
        _launch(topic, hits=2)


def test_mturk_not_answering_the_balance_refuses_the_production_launch(settings, stub):
    settings.MTURK_ENVIRONMENT = "production"
    topic = _topic()
    stub.add_client_error("get_account_balance", service_error_code="ServiceUnavailable", http_status_code=503)
    with pytest.raises(mturk_service.MturkUnavailable, match="Launch again in a minute"):
        _launch(topic, hits=1)
    assert not Hit.objects.filter(topic=topic).exists()


def test_the_sandbox_balance_is_not_checked(settings, stub, django_capture_on_commit_callbacks):
    settings.MTURK_ENVIRONMENT = "sandbox"
    with django_capture_on_commit_callbacks(execute=False):
        _launch(_topic(), hits=2)  # the Stubber fails the test on any call


# --- invented ids take no place -----------------------------------------------------------------------


def _get_hit(stub: Stubber, *, pending: int, completed: int = 0) -> None:
    stub.add_response("get_hit", {"HIT": {"HITId": MTURK_HIT_ID, "HITStatus": "Assignable",
                                          "NumberOfAssignmentsPending": pending,
                                          "NumberOfAssignmentsAvailable": 3 - pending - completed,
                                          "NumberOfAssignmentsCompleted": completed}},
                      {"HITId": MTURK_HIT_ID})


def _start(hit: Hit, assignment_id: str, worker_id: str) -> Assignment:
    return mturk_assignment_start(hit=hit, mturk_hit_id=MTURK_HIT_ID, mturk_assignment_id=assignment_id,
                                  mturk_worker_id=worker_id)


def test_invented_ids_take_no_place_when_mturk_counts_no_accepted_assignment(settings, stub):
    settings.MTURK_ENVIRONMENT = "sandbox"
    hit = _hit(_topic(), external_id=MTURK_HIT_ID)
    for n in range(3):
        _get_hit(stub, pending=0)
        with pytest.raises(MturkPageRefused, match="no accepted assignment"):
            _start(hit, f"3INVENTED{n}", f"AINVENTED{n}")
    assert not Assignment.objects.filter(hit=hit).exists()
    assert not Worker.objects.filter(external_id__startswith="AINVENTED").exists()


def test_places_never_outnumber_mturks_accepted_assignments(settings, stub):
    settings.MTURK_ENVIRONMENT = "sandbox"
    hit = _hit(_topic(), external_id=MTURK_HIT_ID)
    _get_hit(stub, pending=1)  # one genuine worker accepted
    genuine = _start(hit, "3GENUINE0001", "AGENUINE1")
    _get_hit(stub, pending=1)  # someone invents a second pair: MTurk still counts one
    with pytest.raises(MturkPageRefused):
        _start(hit, "3INVENTED0001", "AINVENTED1")
    # A reload of the genuine worker's page keeps their place without asking MTurk again.
    assert _start(hit, "3GENUINE0001", "AGENUINE1").pk == genuine.pk
    _get_hit(stub, pending=1, completed=1)  # a second genuine worker accepted (and the first handed back)
    assert _start(hit, "3GENUINE0002", "AGENUINE2").status == Assignment.Status.CLAIMED
    assert Assignment.objects.filter(hit=hit).count() == 2


def test_mturk_not_answering_gives_no_new_place(settings, stub):
    settings.MTURK_ENVIRONMENT = "sandbox"
    hit = _hit(_topic(), external_id=MTURK_HIT_ID)
    stub.add_client_error("get_hit", service_error_code="ThrottlingException", http_status_code=400)
    with pytest.raises(MturkPageRefused, match="reload this page in a minute"):
        _start(hit, "3GENUINE0001", "AGENUINE1")
    assert not Assignment.objects.filter(hit=hit).exists()
