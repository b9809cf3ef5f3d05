"""Mechanical Turk: client, publish, reconcile and costs, against botocore's Stubber (no network).

Every request is asserted exactly (expected_params); the Stubber also fails the test
if a call is made that was not expected, or an expected one is left unmade.
"""
import hashlib
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from unittest import mock

import pytest
from botocore.exceptions import EndpointConnectionError, ReadTimeoutError
from django.db import transaction
from django.utils import timezone

from annotation.crowds.mturk_client import (
    MturkNotConfigured,
    mturk_client_get,
)
from annotation.models import Assignment, Hit, HitItem, Judgment, Topic, Worker
from annotation.services.crowd import crowds
from annotation.services.crowd import mturk as mturk_service
from annotation.services.crowd.hits import BudgetExceeded, hits_budget_check
from annotation.services.crowd.mturk import (
    FEEDBACK_APPROVED,
    FEEDBACK_LOW_ACCURACY,
    FEEDBACK_NO_ANSWERS,
    mturk_configuration_problem,
    mturk_cost_per_assignment,
    mturk_hit_publish,
    mturk_unpublished_count,
)
from annotation.services.crowd.mturk_reconcile import mturk_reconcile_all
from tests.factories import DocumentFactory, TopicFactory

pytestmark = pytest.mark.django_db

SANDBOX = "https://mturk-requester-sandbox.us-east-1.amazonaws.com"
PRODUCTION = "https://mturk-requester.us-east-1.amazonaws.com"
BASE = "https://recall.example.org"
NS = "http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2006-07-14/ExternalQuestion.xsd"
MTURK_HIT_ID = "3Z8UJEJOCZEG603II1EL4BE2QUB93V"
QUALIFICATIONS = [
    {
        "QualificationTypeId": "000000000000000000L0",
        "Comparator": "GreaterThanOrEqualTo",
        "IntegerValues": [95],
        "ActionsGuarded": "DiscoverPreviewAndAccept",
    },
    {
        "QualificationTypeId": "00000000000000000071",
        "Comparator": "In",
        "LocaleValues": [{"Country": "US"}],
        "ActionsGuarded": "DiscoverPreviewAndAccept",
    },
    {
        "QualificationTypeId": "00000000000000000040",
        "Comparator": "GreaterThanOrEqualTo",
        "IntegerValues": [100],
        "ActionsGuarded": "DiscoverPreviewAndAccept",
    },
]


@pytest.fixture(autouse=True)
def _mturk_settings(settings, monkeypatch):
    settings.MTURK_ENVIRONMENT = "sandbox"
    settings.MTURK_EXTERNAL_BASE_URL = BASE
    settings.MTURK_LIFETIME_SECONDS = 604800
    settings.MTURK_ASSIGNMENT_DURATION_SECONDS = 1800
    settings.MTURK_AUTO_APPROVAL_DELAY_SECONDS = 259200
    settings.MTURK_APPROVAL_HOLD_SECONDS = 0
    settings.MTURK_FRAME_HEIGHT = 800
    settings.MTURK_QUALIFICATION_MIN_APPROVAL_RATE = 95
    settings.MTURK_QUALIFICATION_LOCALES = ["US"]
    settings.MTURK_QUALIFICATION_MIN_APPROVED = 100
    # A developer's real keys must never be picked up by a test.
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(mturk_service, "_unavailable_until", 0.0)


@pytest.fixture
def stub(mturk_stub):
    return mturk_stub


def _topic(**kwargs) -> Topic:
    defaults = {"crowd": Topic.Crowd.MTURK, "status": Topic.Status.ACTIVE, "reward_per_hit": Decimal("0.05")}
    return TopicFactory.create(**{**defaults, **kwargs})


def _hit(topic: Topic, documents: int = 2, **kwargs) -> Hit:
    hit = Hit.objects.create(topic=topic, reward=topic.reward_per_hit, **kwargs)
    for position in range(documents):
        HitItem.objects.create(hit=hit, topic=topic, document=DocumentFactory.create(corpus=topic.corpus), position=position)
    return Hit.objects.get(pk=hit.pk)


def _token(hit: Hit) -> str:
    url = f"{BASE}/mturk/hit/{hit.pk}/"
    return f"recall-hit-{hit.pk}-" + hashlib.sha256(f"{url}|{hit.created_at.isoformat()}".encode()).hexdigest()[:32]


def _create_hit_params(hit: Hit, documents: int = 2) -> dict:
    token = _token(hit)
    return {
        "MaxAssignments": 3,
        "AutoApprovalDelayInSeconds": 259200,
        "LifetimeInSeconds": 604800,
        "AssignmentDurationInSeconds": 1800,
        "Reward": "0.05",
        "Title": f"Judge whether short documents match a topic ({documents} documents)",
        "Keywords": "relevance, judgment, classification, text, documents",
        "Description": "Read each document and answer yes or no: is it about the topic described in the instructions?",
        "Question": (
            f'<ExternalQuestion xmlns="{NS}"><ExternalURL>{BASE}/mturk/hit/{hit.pk}/</ExternalURL>'
            "<FrameHeight>800</FrameHeight></ExternalQuestion>"
        ),
        "RequesterAnnotation": token,
        "QualificationRequirements": QUALIFICATIONS,
        "UniqueRequestToken": token,
    }


def _created(hit_id: str = MTURK_HIT_ID) -> dict:
    return {"HIT": {"HITId": hit_id, "HITTypeId": "3ZZTYPE0000000000000000000000A"}}


def _live_hit(hit_id: str = MTURK_HIT_ID, status: str = "Assignable", expires_in: float = 86400) -> dict:
    return {"HIT": {"HITId": hit_id, "HITStatus": status, "Expiration": timezone.now() + timedelta(seconds=expires_in)}}


def _listed(hit_id: str = MTURK_HIT_ID, status: str = "Reviewable", expires_in: float = 86400) -> dict:
    """A HIT as ListReviewableHITs returns it (Reviewable: expired, or every assignment submitted)."""
    return {"HITId": hit_id, "HITStatus": status, "Expiration": timezone.now() + timedelta(seconds=expires_in)}


def _lists(stub, reviewable: Sequence[dict] = (), reviewing: Sequence[dict] = ()) -> None:
    """The two listings every reconcile run of published HITs starts with, one page each."""
    stub.add_response("list_reviewable_hits", {"HITs": list(reviewable), "NumResults": len(reviewable)},
                      {"Status": "Reviewable", "MaxResults": 100})
    stub.add_response("list_reviewable_hits", {"HITs": list(reviewing), "NumResults": len(reviewing)},
                      {"Status": "Reviewing", "MaxResults": 100})


def _submitted_app_assignment(hit: Hit, mturk_assignment_id: str, worker_id: str, *, blocked: bool = False):
    worker = Worker.objects.create(platform="mturk", external_id=worker_id, blocked=blocked)
    return Assignment.objects.create(
        hit=hit,
        worker=worker,
        slot=Assignment.objects.filter(hit=hit).count(),
        status=Assignment.Status.SUBMITTED,
        deadline=timezone.now() + timedelta(hours=1),
        submitted_at=timezone.now(),
        external_id=mturk_assignment_id,
    )


def _mturk_assignment(assignment_id: str, worker_id: str, status: str = "Submitted") -> dict:
    return {"AssignmentId": assignment_id, "WorkerId": worker_id, "HITId": MTURK_HIT_ID, "AssignmentStatus": status}


# --- client -------------------------------------------------------------------------


def test_client_uses_the_sandbox_by_default(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret-example")
    assert mturk_client_get().meta.endpoint_url == SANDBOX


def test_client_uses_production_only_when_asked_exactly(settings, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret-example")
    settings.MTURK_ENVIRONMENT = "production"
    assert mturk_client_get().meta.endpoint_url == PRODUCTION
    settings.MTURK_ENVIRONMENT = "prod"
    with pytest.raises(MturkNotConfigured, match="MTURK_ENVIRONMENT"):
        mturk_client_get()


def test_missing_credentials_are_a_clear_error_and_the_hit_stays_unpublished(caplog):
    with pytest.raises(MturkNotConfigured, match="AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"):
        mturk_client_get()
    hit = _hit(_topic())
    assert mturk_hit_publish(hit=hit) is None
    assert Hit.objects.get(pk=hit.pk).external_id is None
    assert "credentials are missing" in caplog.text
    summary = mturk_reconcile_all()
    assert summary.errors == ["Mechanical Turk credentials are missing: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"]


@pytest.mark.parametrize("base", ["", "http://recall.example.org", "https://recall.example.org/?x=1", "ftp://x"])
def test_publish_refuses_a_base_url_that_is_not_https(settings, stub, base):
    settings.MTURK_EXTERNAL_BASE_URL = base
    hit = _hit(_topic())
    assert mturk_hit_publish(hit=hit) is None  # the Stubber fails the test if anything was sent
    assert Hit.objects.get(pk=hit.pk).external_id is None


# --- publish ------------------------------------------------------------------------


def test_publish_sends_the_exact_create_hit_request_and_stores_the_hit_id(stub):
    hit = _hit(_topic())
    stub.add_response("create_hit", _created(), _create_hit_params(hit))
    assert mturk_hit_publish(hit=hit) == MTURK_HIT_ID
    assert Hit.objects.get(pk=hit.pk).external_id == MTURK_HIT_ID
    # Publishing again is a no-op (no second request: the Stubber has none queued).
    assert mturk_hit_publish(hit=hit) == MTURK_HIT_ID


def test_qualifications_follow_settings(settings, stub):
    settings.MTURK_QUALIFICATION_MIN_APPROVAL_RATE = 0
    settings.MTURK_QUALIFICATION_LOCALES = ["US", "CA", "US-NY"]
    settings.MTURK_QUALIFICATION_MIN_APPROVED = 0
    hit = _hit(_topic())
    params = _create_hit_params(hit)
    params["QualificationRequirements"] = [
        {
            "QualificationTypeId": "00000000000000000071",
            "Comparator": "In",
            "LocaleValues": [{"Country": "US"}, {"Country": "CA"}, {"Country": "US", "Subdivision": "NY"}],
            "ActionsGuarded": "DiscoverPreviewAndAccept",
        }
    ]
    stub.add_response("create_hit", _created(), params)
    assert mturk_hit_publish(hit=hit) == MTURK_HIT_ID


def test_publish_retried_after_a_timeout_uses_the_same_token_and_finds_the_hit(stub):
    """The first CreateHIT reached MTurk but its reply was lost; the retry must not make a second HIT."""
    hit = _hit(_topic())
    client = stub.client
    lost = {"n": 0}

    def lose_first_reply(**kwargs):
        lost["n"] += 1
        if lost["n"] == 1:
            raise ReadTimeoutError(endpoint_url=SANDBOX)

    client.meta.events.register("after-call.mturk.CreateHIT", lose_first_reply)
    stub.add_response("create_hit", _created(), _create_hit_params(hit))
    stub.add_client_error(
        "create_hit",
        service_error_code="RequestError",
        service_message=f"The HIT with ID {MTURK_HIT_ID} already exists. (1732290000000)",
        http_status_code=400,
        modeled_fields={"TurkErrorCode": "AWS.MechanicalTurk.HitAlreadyExists"},
        expected_params=_create_hit_params(hit),  # the same UniqueRequestToken
    )
    assert mturk_hit_publish(hit=hit) == MTURK_HIT_ID
    assert Hit.objects.get(pk=hit.pk).external_id == MTURK_HIT_ID
    assert lost["n"] == 2


def test_duplicate_reply_without_an_id_is_resolved_by_the_requester_annotation(stub):
    hit = _hit(_topic())
    stub.add_client_error(
        "create_hit",
        service_error_code="RequestError",
        service_message="A HIT with this token already exists.",
        http_status_code=400,
        modeled_fields={"TurkErrorCode": "AWS.MechanicalTurk.HitAlreadyExists"},
        expected_params=_create_hit_params(hit),
    )
    other = {"HITId": "3OTHERHIT00000000000000000000A", "RequesterAnnotation": "someone else"}
    stub.add_response("list_hits", {"HITs": [other], "NextToken": "p2", "NumResults": 1}, {"MaxResults": 100})
    ours = {"HITId": MTURK_HIT_ID, "RequesterAnnotation": _token(hit)}
    stub.add_response("list_hits", {"HITs": [ours], "NumResults": 1}, {"MaxResults": 100, "NextToken": "p2"})
    assert mturk_hit_publish(hit=hit) == MTURK_HIT_ID


def test_failed_publish_keeps_the_hit_unpublished_and_reconcile_publishes_it(stub, caplog):
    topic = _topic()
    hit = _hit(topic)
    for _ in range(2):  # both attempts of the first publish
        stub.add_client_error(
            "create_hit", service_error_code="ServiceFault", service_message="try later", http_status_code=500,
            expected_params=_create_hit_params(hit),
        )
    assert mturk_hit_publish(hit=hit) is None
    assert Hit.objects.get(pk=hit.pk).external_id is None
    assert "not published" in caplog.text and "reconcile will retry" in caplog.text

    stub.add_response("create_hit", _created(), _create_hit_params(hit))
    _lists(stub)  # an open HIT nobody took, on offer: no call of its own
    summary = mturk_reconcile_all()
    assert (summary.published, summary.publish_failed, summary.errors, summary.hits_checked) == (1, 0, [], 0)
    assert Hit.objects.get(pk=hit.pk).external_id == MTURK_HIT_ID


def test_a_refused_request_is_not_retried_and_is_logged(stub, caplog):
    hit = _hit(_topic())
    stub.add_client_error(
        "create_hit", service_error_code="RequestError", service_message="Reward is too low", http_status_code=400,
        expected_params=_create_hit_params(hit),
    )
    assert mturk_hit_publish(hit=hit) is None
    assert "MTurk refused CreateHIT (RequestError): Reward is too low" in caplog.text


def test_crowd_publish_sends_the_hit_only_after_commit(stub, django_capture_on_commit_callbacks):
    hit = _hit(_topic())
    stub.add_response("create_hit", _created(), _create_hit_params(hit))
    with django_capture_on_commit_callbacks(execute=True):
        with transaction.atomic():
            crowds.crowd_publish(hit=hit)
            assert Hit.objects.get(pk=hit.pk).external_id is None  # nothing sent inside the transaction
    assert Hit.objects.get(pk=hit.pk).external_id == MTURK_HIT_ID


def test_after_mturk_failed_to_answer_a_launch_does_not_wait_on_every_hit(stub, django_capture_on_commit_callbacks):
    topic = _topic()
    first, second = _hit(topic), _hit(topic)
    for _ in range(2):  # the two attempts for the first HIT; nothing is queued for the second
        stub.add_client_error(
            "create_hit", service_error_code="ServiceFault", service_message="down", http_status_code=500,
            expected_params=_create_hit_params(first),
        )
    with django_capture_on_commit_callbacks(execute=True):
        with transaction.atomic():
            crowds.crowd_publish(hit=first)
            crowds.crowd_publish(hit=second)
    assert mturk_unpublished_count(topic=topic) == 2  # both wait for reconcile, which ignores the pause


def test_configuration_problem_is_reported_for_the_analyst(settings, monkeypatch):
    assert "AWS_ACCESS_KEY_ID" in mturk_configuration_problem()
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret-example")
    assert mturk_configuration_problem() is None
    settings.MTURK_EXTERNAL_BASE_URL = "http://recall.example.org"
    assert "https://" in mturk_configuration_problem()


def test_rolled_back_hit_never_reaches_mturk(stub, django_capture_on_commit_callbacks):
    hit = _hit(_topic())
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        with pytest.raises(RuntimeError):
            with transaction.atomic():
                crowds.crowd_publish(hit=hit)
                raise RuntimeError("creation failed later")
    assert callbacks == []  # and the Stubber has no create_hit queued: a call would fail the test


# --- reconcile ----------------------------------------------------------------------


def _published(topic: Topic | None = None, **kwargs) -> Hit:
    hit = _hit(topic or _topic(), **kwargs)
    Hit.objects.filter(pk=hit.pk).update(external_id=MTURK_HIT_ID)
    return Hit.objects.get(pk=hit.pk)


def test_reconcile_reads_every_page_approves_recorded_work_and_rejects_unrecorded(stub):
    hit = _published()
    recorded = _submitted_app_assignment(hit, "3ASSIGNMENTRECORDED00000000001", "A1WORKERRECORDED")
    listing = {"HITId": MTURK_HIT_ID, "MaxResults": 100}
    _lists(stub)
    stub.add_response(
        "list_assignments_for_hit",
        {"Assignments": [_mturk_assignment("3ASSIGNMENTRECORDED00000000001", "A1WORKERRECORDED")], "NextToken": "page-2", "NumResults": 1},
        listing,
    )
    stub.add_response(
        "approve_assignment", {}, {"AssignmentId": "3ASSIGNMENTRECORDED00000000001", "RequesterFeedback": FEEDBACK_APPROVED}
    )
    stub.add_response(
        "list_assignments_for_hit",
        {"Assignments": [_mturk_assignment("3ASSIGNMENTNOANSWERS0000000002", "A2WORKERBYPASS")], "NumResults": 1},
        {**listing, "NextToken": "page-2"},
    )
    stub.add_response(
        "reject_assignment", {}, {"AssignmentId": "3ASSIGNMENTNOANSWERS0000000002", "RequesterFeedback": FEEDBACK_NO_ANSWERS}
    )
    # The app still needs the third vote: MTurk offers one more assignment (retry-safe token).
    stub.add_response(
        "create_additional_assignments_for_hit",
        {},
        {
            "HITId": MTURK_HIT_ID,
            "NumberOfAdditionalAssignments": 1,
            "UniqueRequestToken": "recall-extra-3ASSIGNMENTNOANSWERS0000000002",
        },
    )

    summary = mturk_reconcile_all()
    assert (summary.hits_checked, summary.approved, summary.rejected, summary.replaced) == (1, 1, 1, 1)
    assert (summary.expired, summary.errors) == (0, [])
    recorded.refresh_from_db()
    assert (recorded.status, recorded.feedback) == ("approved", FEEDBACK_APPROVED)


def test_a_refused_replacement_is_reported_and_the_run_goes_on(stub):
    hit = _published()
    claimed = Assignment.objects.create(
        hit=hit, worker=Worker.objects.create(platform="mturk", external_id="A8BYPASS"), slot=0,
        deadline=timezone.now() + timedelta(hours=1), external_id="3ASSIGNMENTCLAIMED00000000008",
    )
    _lists(stub)
    stub.add_response(
        "list_assignments_for_hit",
        {"Assignments": [_mturk_assignment("3ASSIGNMENTCLAIMED00000000008", "A8BYPASS")], "NumResults": 1},
        {"HITId": MTURK_HIT_ID, "MaxResults": 100},
    )
    stub.add_response(
        "reject_assignment", {}, {"AssignmentId": "3ASSIGNMENTCLAIMED00000000008", "RequesterFeedback": FEEDBACK_NO_ANSWERS}
    )
    stub.add_client_error(
        "create_additional_assignments_for_hit", service_error_code="RequestError",
        service_message="HITs created with fewer than 10 assignments cannot be extended to 10 or more.",
        http_status_code=400,
        expected_params={"HITId": MTURK_HIT_ID, "NumberOfAdditionalAssignments": 1,
                         "UniqueRequestToken": "recall-extra-3ASSIGNMENTCLAIMED00000000008"},
    )
    summary = mturk_reconcile_all()
    assert (summary.rejected, summary.replaced, summary.hits_checked) == (1, 0, 1)
    assert "cannot be extended" in summary.errors[0]
    claimed.refresh_from_db()
    assert (claimed.status, claimed.feedback) == ("rejected", FEEDBACK_NO_ANSWERS)  # its app place is free again


def test_reconcile_rejects_work_of_workers_blocked_for_gold_accuracy(stub):
    hit = _published()
    blocked = _submitted_app_assignment(hit, "3ASSIGNMENTBLOCKED00000000003", "A3WORKERBLOCKED", blocked=True)
    _lists(stub)
    stub.add_response(
        "list_assignments_for_hit",
        {"Assignments": [_mturk_assignment("3ASSIGNMENTBLOCKED00000000003", "A3WORKERBLOCKED")], "NumResults": 1},
        {"HITId": MTURK_HIT_ID, "MaxResults": 100},
    )
    stub.add_response(
        "reject_assignment", {}, {"AssignmentId": "3ASSIGNMENTBLOCKED00000000003", "RequesterFeedback": FEEDBACK_LOW_ACCURACY}
    )
    summary = mturk_reconcile_all()
    assert (summary.approved, summary.rejected) == (0, 1)
    blocked.refresh_from_db()
    assert blocked.status == "rejected"
    assert "accuracy" in blocked.feedback


def test_approval_waits_for_the_hold_so_later_gold_checks_can_still_block(settings, stub):
    settings.MTURK_APPROVAL_HOLD_SECONDS = 6 * 3600
    hit = _published()
    assignment = _submitted_app_assignment(hit, "3ASSIGNMENTHELD000000000000006", "A6WORKERHELD")
    listing = {"HITId": MTURK_HIT_ID, "MaxResults": 100}
    found = {"Assignments": [_mturk_assignment("3ASSIGNMENTHELD000000000000006", "A6WORKERHELD")], "NumResults": 1}
    _lists(stub)
    stub.add_response("list_assignments_for_hit", found, listing)
    summary = mturk_reconcile_all()  # no approve_assignment queued: a call would fail the test
    assert (summary.held, summary.approved) == (1, 0)
    assert Assignment.objects.get(pk=assignment.pk).status == "submitted"

    Assignment.objects.filter(pk=assignment.pk).update(submitted_at=timezone.now() - timedelta(hours=7))
    _lists(stub)
    stub.add_response("list_assignments_for_hit", found, listing)
    stub.add_response(
        "approve_assignment", {}, {"AssignmentId": "3ASSIGNMENTHELD000000000000006", "RequesterFeedback": FEEDBACK_APPROVED}
    )
    assert mturk_reconcile_all().approved == 1


def test_the_hold_never_reaches_mturks_auto_approval(settings, stub):
    settings.MTURK_APPROVAL_HOLD_SECONDS = 10 * 24 * 3600  # longer than the 3-day auto-approval delay
    hit = _published()
    assignment = _submitted_app_assignment(hit, "3ASSIGNMENTLATE000000000000007", "A7WORKERLATE")
    Assignment.objects.filter(pk=assignment.pk).update(submitted_at=timezone.now() - timedelta(hours=71, minutes=1))
    _lists(stub)
    stub.add_response(
        "list_assignments_for_hit",
        {"Assignments": [_mturk_assignment("3ASSIGNMENTLATE000000000000007", "A7WORKERLATE")], "NumResults": 1},
        {"HITId": MTURK_HIT_ID, "MaxResults": 100},
    )
    stub.add_response(
        "approve_assignment", {}, {"AssignmentId": "3ASSIGNMENTLATE000000000000007", "RequesterFeedback": FEEDBACK_APPROVED}
    )
    assert mturk_reconcile_all().approved == 1


def test_reconcile_does_not_approve_twice(stub):
    """A crash after approving on MTurk, then two runs: MTurk refuses the repeat, we read the status."""
    hit = _published()
    assignment = _submitted_app_assignment(hit, "3ASSIGNMENTTWICE0000000000004", "A4WORKERTWICE")
    listing = {"HITId": MTURK_HIT_ID, "MaxResults": 100}
    _lists(stub)
    stub.add_response(
        "list_assignments_for_hit",
        {"Assignments": [_mturk_assignment("3ASSIGNMENTTWICE0000000000004", "A4WORKERTWICE")], "NumResults": 1},
        listing,
    )
    stub.add_client_error(
        "approve_assignment",
        service_error_code="RequestError",
        service_message="This operation can be called with a status of: Submitted (1732290000000)",
        http_status_code=400,
        expected_params={"AssignmentId": "3ASSIGNMENTTWICE0000000000004", "RequesterFeedback": FEEDBACK_APPROVED},
    )
    stub.add_response(
        "get_assignment",
        {"Assignment": _mturk_assignment("3ASSIGNMENTTWICE0000000000004", "A4WORKERTWICE", "Approved")},
        {"AssignmentId": "3ASSIGNMENTTWICE0000000000004"},
    )
    first = mturk_reconcile_all()
    assert (first.approved, first.already_reviewed, first.errors) == (0, 1, [])
    assignment.refresh_from_db()
    assert assignment.status == "approved"

    # Second run (the HIT now full, so Reviewable): MTurk lists the assignment as Approved; no approve_assignment
    # call is made (none is queued).
    _lists(stub, reviewable=[_listed()])
    stub.add_response(
        "list_assignments_for_hit",
        {"Assignments": [_mturk_assignment("3ASSIGNMENTTWICE0000000000004", "A4WORKERTWICE", "Approved")], "NumResults": 1},
        listing,
    )
    second = mturk_reconcile_all()
    assert (second.approved, second.rejected, second.errors) == (0, 0, [])
    assignment.refresh_from_db()
    assert assignment.status == "approved"


@pytest.mark.parametrize(
    "topic_status,hit_status",
    [(Topic.Status.PAUSED, Hit.Status.OPEN), (Topic.Status.CLOSED, Hit.Status.OPEN), (Topic.Status.ACTIVE, Hit.Status.CANCELLED)],
)
def test_reconcile_expires_hits_no_longer_needed(stub, topic_status, hit_status):
    _published(_topic(status=topic_status), status=hit_status)
    _lists(stub)  # in neither list: still on offer, so expired (no GetHIT, no listing of its assignments)
    stub.add_response(
        "update_expiration_for_hit", {}, {"HITId": MTURK_HIT_ID, "ExpireAt": datetime(2015, 1, 1, tzinfo=UTC)}
    )
    summary = mturk_reconcile_all()
    assert summary.expired == 1


def test_reconcile_does_not_expire_an_already_expired_hit_and_parks_it_once_decided(stub):
    _published(_topic(status=Topic.Status.CLOSED))
    _lists(stub, reviewable=[_listed(expires_in=-60)])
    stub.add_response("list_assignments_for_hit", {"Assignments": [], "NumResults": 0}, {"HITId": MTURK_HIT_ID, "MaxResults": 100})
    stub.add_response("update_hit_review_status", {}, {"HITId": MTURK_HIT_ID, "Revert": False})
    summary = mturk_reconcile_all()
    assert (summary.expired, summary.parked, summary.reviewable_listed) == (0, 1, 1)
    # Next run MTurk lists it as Reviewing: no call of its own any more.
    _lists(stub, reviewing=[_listed(status="Reviewing", expires_in=-60)])
    summary = mturk_reconcile_all()
    assert (summary.hits_checked, summary.expired, summary.parked) == (0, 0, 0)


def test_reconcile_reopens_a_needed_hit_whose_mturk_lifetime_ran_out(stub):
    _published()
    _lists(stub, reviewable=[_listed(expires_in=-60)])
    stub.add_response("list_assignments_for_hit", {"Assignments": [], "NumResults": 0}, {"HITId": MTURK_HIT_ID, "MaxResults": 100})
    stub.add_response("update_expiration_for_hit", {}, {"HITId": MTURK_HIT_ID, "ExpireAt": stub_any_future()})
    summary = mturk_reconcile_all()
    assert (summary.reopened, summary.parked) == (1, 0)


def test_reconcile_reopens_a_hit_parked_while_its_topic_was_paused(stub):
    """Parked in Reviewing when the topic paused; resumed, the app needs it again: back to Reviewable, extended."""
    _published()
    _lists(stub, reviewing=[_listed(status="Reviewing", expires_in=-60)])
    stub.add_response("update_hit_review_status", {}, {"HITId": MTURK_HIT_ID, "Revert": True})
    stub.add_response("update_expiration_for_hit", {}, {"HITId": MTURK_HIT_ID, "ExpireAt": stub_any_future()})
    summary = mturk_reconcile_all()
    assert (summary.reopened, summary.hits_checked) == (1, 1)


def stub_any_future():
    class Future:
        def __eq__(self, other):
            return isinstance(other, datetime) and other > timezone.now() + timedelta(days=6)

        def __repr__(self):
            return "<a date about a week ahead>"

    return Future()


def test_one_failing_hit_does_not_stop_the_others(stub):
    topic = _topic()
    first = _published(topic)
    second = _hit(topic)
    Hit.objects.filter(pk=second.pk).update(external_id="3SECONDHIT0000000000000000000B")
    _lists(stub, reviewable=[_listed(), _listed("3SECONDHIT0000000000000000000B")])
    stub.add_client_error(
        "list_assignments_for_hit", service_error_code="RequestError", service_message="Hit does not exist.",
        http_status_code=400, expected_params={"HITId": MTURK_HIT_ID, "MaxResults": 100},
    )
    stub.add_response(
        "list_assignments_for_hit", {"Assignments": [], "NumResults": 0},
        {"HITId": "3SECONDHIT0000000000000000000B", "MaxResults": 100},
    )
    summary = mturk_reconcile_all()
    assert summary.hits_checked == 2
    assert summary.errors == [f"HIT {first.pk} ({MTURK_HIT_ID}): RequestError Hit does not exist."]
    assert not summary.stopped_early


def test_reconcile_stops_early_when_mturk_is_throttling(stub):
    """Every further call would wait out its own retries; the next run (5 minutes later) starts over."""
    topic = _topic()
    first = _published(topic)
    second = _hit(topic)
    Hit.objects.filter(pk=second.pk).update(external_id="3SECONDHIT0000000000000000000B")
    _lists(stub, reviewable=[_listed(), _listed("3SECONDHIT0000000000000000000B")])
    stub.add_client_error(
        "list_assignments_for_hit", service_error_code="ThrottlingException", service_message="Rate exceeded",
        http_status_code=400, expected_params={"HITId": MTURK_HIT_ID, "MaxResults": 100},
    )
    summary = mturk_reconcile_all()  # no call for the second HIT is queued: one would fail the test
    assert summary.stopped_early
    assert summary.errors == [f"HIT {first.pk} ({MTURK_HIT_ID}): ThrottlingException Rate exceeded"]


def test_reconcile_stops_publishing_when_mturk_is_unreachable(stub):
    topic = _topic()
    first, _second = _hit(topic), _hit(topic)
    stub.client.meta.events.register(
        "after-call.mturk.CreateHIT",
        lambda **kwargs: (_ for _ in ()).throw(EndpointConnectionError(endpoint_url=SANDBOX)),
    )
    for _ in range(2):  # the two attempts for the first HIT; none for the second
        stub.add_response("create_hit", _created(), _create_hit_params(first))
    summary = mturk_reconcile_all()
    assert (summary.published, summary.publish_failed, summary.stopped_early) == (0, 1, True)
    assert "Could not connect to the endpoint URL" in summary.errors[0]
    assert Hit.objects.filter(external_id__isnull=True).count() == 2


# --- costs and budget -----------------------------------------------------------------


@pytest.mark.parametrize(
    "reward,assignments,expected",
    [
        ("0.05", 3, "0.06"),  # 20% of 5¢ = 1¢
        ("0.10", 3, "0.12"),
        ("0.10", 10, "0.14"),  # 20% + 20% at 10 or more assignments
        ("1.00", 9, "1.20"),
        ("1.00", 10, "1.40"),
        ("0.13", 3, "0.16"),  # 2.6¢ rounds half-up to 3¢
        ("0.02", 3, "0.03"),  # 0.4¢ is below Amazon's minimum fee of 1¢
        ("0.00", 3, "0.00"),
    ],
)
def test_cost_per_assignment_includes_amazons_commission(reward, assignments, expected):
    assert mturk_cost_per_assignment(reward=Decimal(reward), assignments=assignments) == Decimal(expected)


def test_five_cents_times_three_assignments_costs_eighteen_cents_per_hit():
    assert mturk_cost_per_assignment(reward=Decimal("0.05"), assignments=3) * 3 == Decimal("0.18")


def test_crowd_interface_prices_mturk_with_the_commission():
    topic = _topic(reward_per_hit=Decimal("0.05"))
    assert crowds.crowd_cost_per_assignment(topic) == Decimal("0.06")
    assert crowds.crowd_cost_per_assignment(topic, reward=Decimal("0.10")) == Decimal("0.12")


def test_budget_refuses_hits_beyond_it_at_mturk_prices():
    topic = _topic(reward_per_hit=Decimal("0.05"), budget=Decimal("0.50"))
    hits_budget_check(topic=topic, new_hits=2)  # 2 × 3 × $0.06 = $0.36
    with pytest.raises(BudgetExceeded, match=r"\$0\.54"):
        hits_budget_check(topic=topic, new_hits=3)  # $0.54 > $0.50; at the bare reward it would be $0.45
    _hit(topic)  # an existing HIT commits $0.18
    with pytest.raises(BudgetExceeded):
        hits_budget_check(topic=topic, new_hits=2)  # 0.18 + 0.36 = 0.54


def test_judgments_are_not_touched_by_reconcile(stub):
    """The app's record is authoritative: reconcile changes statuses, never judgments."""
    hit = _published()
    assignment = _submitted_app_assignment(hit, "3ASSIGNMENTJUDGED000000000005", "A5WORKER")
    item = HitItem.objects.filter(hit=hit).first()
    Judgment.objects.create(
        assignment=assignment, topic=hit.topic, document=item.document, worker=assignment.worker, relevant=True
    )
    _lists(stub)
    stub.add_response(
        "list_assignments_for_hit",
        {"Assignments": [_mturk_assignment("3ASSIGNMENTJUDGED000000000005", "A5WORKER")], "NumResults": 1},
        {"HITId": MTURK_HIT_ID, "MaxResults": 100},
    )
    stub.add_response("approve_assignment", {}, {"AssignmentId": "3ASSIGNMENTJUDGED000000000005", "RequesterFeedback": FEEDBACK_APPROVED})
    mturk_reconcile_all()
    assert list(Judgment.objects.filter(assignment=assignment).values_list("relevant", flat=True)) == [True]


@pytest.mark.parametrize("topic_status", [Topic.Status.PAUSED, Topic.Status.DRAFT, Topic.Status.CLOSED])
def test_hits_of_an_inactive_topic_wait_unpublished(stub, topic_status):
    hit = _hit(_topic(status=topic_status))
    assert mturk_hit_publish(hit=hit) is None  # no request queued: a call would fail the test
    assert mturk_reconcile_all().published == 0
    Topic.objects.filter(pk=hit.topic_id).update(status=Topic.Status.ACTIVE)
    stub.add_response("create_hit", _created(), _create_hit_params(hit))
    _lists(stub)
    assert mturk_reconcile_all().published == 1


# --- provisional answers: counted only once MTurk confirms the assignment (issue 15 item 3) ------

FORGED = [(f"3FORGEDASSIGNMENT{n}", f"AFORGEDWORKER{n}") for n in range(3)]


def _provisional(hit: Hit, assignment_id: str, worker_id: str, relevant: bool = True) -> Assignment:
    """What the HIT page does for a worker (tests/annotation/test_mturk_views.py drives the page itself)."""
    # MTurk's GetHIT check of a new place (invented ids take none) is tested in test_mturk_ops.py; these tests
    # stub only the calls of the reconcile they exercise.
    with mock.patch.object(mturk_service, "_mturk_places_check"):
        assignment = mturk_service.mturk_assignment_start(
            hit=hit, mturk_hit_id=MTURK_HIT_ID, mturk_assignment_id=assignment_id, mturk_worker_id=worker_id
        )
    doc_ids = HitItem.objects.filter(hit=hit).values_list("document_id", flat=True)
    mturk_service.mturk_assignment_submit(
        hit=hit, mturk_assignment_id=assignment_id, mturk_worker_id=worker_id,
        answers=dict.fromkeys(doc_ids, relevant),
    )
    return Assignment.objects.get(pk=assignment.pk)


def _got(assignment_id: str, worker_id: str, status: str = "Submitted", hit_id: str = MTURK_HIT_ID) -> dict:
    return {"Assignment": {"AssignmentId": assignment_id, "WorkerId": worker_id, "HITId": hit_id,
                           "AssignmentStatus": status}}


def _unknown(stub, assignment_id: str) -> None:
    stub.add_client_error(
        "get_assignment", service_error_code="RequestError", http_status_code=400,
        service_message=f"Assignment {assignment_id} does not exist. (1700000000000)",
        expected_params={"AssignmentId": assignment_id},
    )


def _no_assignments_listed(stub) -> None:
    stub.add_response("list_assignments_for_hit", {"Assignments": [], "NumResults": 0}, {"HITId": MTURK_HIT_ID, "MaxResults": 100})


def _labels(hit: Hit) -> list[tuple[int, bool | None]]:
    from annotation.models import Label

    doc_ids = HitItem.objects.filter(hit=hit).values_list("document_id", flat=True)
    return sorted(Label.objects.filter(topic=hit.topic, document_id__in=doc_ids).values_list("votes_total", "majority"))


def test_three_forged_pairs_decide_nothing_and_expire_unverified(stub):
    """The issue's case: three invented assignmentId/workerId pairs for a published five-document HIT."""
    hit = _published(documents=5)
    forged = [_provisional(hit, a, w) for a, w in FORGED]
    assert Judgment.objects.count() == 0 and _labels(hit) == []
    assert {a.status for a in forged} == {"claimed"}  # waiting; their places are held meanwhile

    # Within MTurk's time for the assignments, an id MTurk does not know may still be handed back.
    _lists(stub)
    for assignment_id, _ in FORGED:
        _unknown(stub, assignment_id)
    _no_assignments_listed(stub)
    summary = mturk_reconcile_all()
    assert (summary.verified, summary.unverified, summary.awaiting_verification) == (0, 0, 3)
    assert (summary.approved, summary.rejected) == (0, 0)

    # Past MTurk's deadline (30 min after the claim) plus the grace: given up, kept, never counted.
    Assignment.objects.filter(hit=hit).update(claimed_at=timezone.now() - timedelta(minutes=41))
    _lists(stub)
    for assignment_id, _ in FORGED:
        _unknown(stub, assignment_id)
    _no_assignments_listed(stub)
    summary = mturk_reconcile_all()
    assert (summary.verified, summary.unverified, summary.awaiting_verification) == (0, 3, 0)
    stored = list(Assignment.objects.filter(hit=hit).order_by("pk"))
    assert {a.status for a in stored} == {"expired"}  # their places are free for real workers
    assert all(a.provisional_answers is not None and len(a.provisional_answers) == 5 for a in stored)
    assert all("never confirmed" in a.feedback for a in stored)
    assert Judgment.objects.count() == 0 and _labels(hit) == []
    hit.refresh_from_db()
    assert (hit.status, hit.completed_assignments) == (Hit.Status.OPEN, 0)
    assert mturk_service.mturk_verification_counts(topic=hit.topic) == {"pending": 0, "unverified": 3}


def test_confirmed_submissions_count_decide_labels_and_are_paid(stub):
    hit = _published(documents=5)
    real = [(f"3REALASSIGNMENT{n}", f"AREALWORKER{n}") for n in range(3)]
    for n, (assignment_id, worker_id) in enumerate(real):
        _provisional(hit, assignment_id, worker_id, relevant=n != 2)  # two say yes, one no
    assert Judgment.objects.count() == 0

    _lists(stub)
    for assignment_id, worker_id in real:
        stub.add_response("get_assignment", _got(assignment_id, worker_id), {"AssignmentId": assignment_id})
    stub.add_response(
        "list_assignments_for_hit",
        {"Assignments": [_mturk_assignment(a, w) for a, w in real], "NumResults": 3},
        {"HITId": MTURK_HIT_ID, "MaxResults": 100},
    )
    for assignment_id, _ in real:
        stub.add_response("approve_assignment", {}, {"AssignmentId": assignment_id, "RequesterFeedback": FEEDBACK_APPROVED})
    # Complete now: reconcile takes the HIT off MTurk (in neither list: still on offer there).
    stub.add_response("update_expiration_for_hit", {}, {"HITId": MTURK_HIT_ID, "ExpireAt": datetime(2015, 1, 1, tzinfo=UTC)})

    summary = mturk_reconcile_all()
    assert (summary.verified, summary.unverified, summary.approved, summary.expired) == (3, 0, 3, 1)
    assert Judgment.objects.count() == 15
    assert _labels(hit) == [(3, True)] * 5
    hit.refresh_from_db()
    assert (hit.status, hit.completed_assignments) == (Hit.Status.COMPLETE, 3)
    stored = Assignment.objects.filter(hit=hit)
    assert {(a.status, a.provisional_answers) for a in stored} == {("approved", None)}
    # Counted at the worker's own submission time, not at reconcile's.
    assert all(a.submitted_at is not None and a.submitted_at < timezone.now() for a in stored)


@pytest.mark.parametrize(
    "reply,reason",
    [
        (_got("3FORGEDASSIGNMENT0", "AREALOWNER000"), "another worker"),
        (_got("3FORGEDASSIGNMENT0", "AFORGEDWORKER0", hit_id="3OTHERHIT000000000000000000000"), "another HIT"),
        (_got("3FORGEDASSIGNMENT0", "AFORGEDWORKER0", status="Rejected"), "rejected"),
    ],
)
def test_a_contradicted_submission_is_given_up_at_once(stub, reply, reason):
    """A real assignment id used with another worker id (or for another HIT) never counts, even early."""
    hit = _published()
    pending = _provisional(hit, *FORGED[0])
    _lists(stub)
    stub.add_response("get_assignment", reply, {"AssignmentId": FORGED[0][0]})
    _no_assignments_listed(stub)
    summary = mturk_reconcile_all()
    assert (summary.verified, summary.unverified) == (0, 1)
    pending.refresh_from_db()
    assert pending.status == "expired" and reason in pending.feedback and pending.provisional_answers is not None
    assert Judgment.objects.count() == 0


def test_verification_waits_while_mturk_is_unreachable(stub):
    hit = _published()
    pending = _provisional(hit, *FORGED[0])
    Assignment.objects.filter(pk=pending.pk).update(claimed_at=timezone.now() - timedelta(hours=3))
    _lists(stub)
    stub.add_client_error("get_assignment", service_error_code="ServiceFault", http_status_code=500)
    summary = mturk_reconcile_all()
    assert summary.stopped_early and summary.unverified == 0
    pending.refresh_from_db()
    assert pending.status == "claimed" and pending.provisional_answers is not None  # asked again next run


def test_a_pending_submission_holds_its_place_until_the_verify_window_ends(settings):
    from annotation.services.crowd.assignments import assignments_expire

    settings.MTURK_VERIFY_WINDOW_SECONDS = 3600
    hit = _published()
    pending = _provisional(hit, *FORGED[0])
    assert pending.deadline >= pending.submitted_at + timedelta(seconds=3600)
    assert assignments_expire(now=timezone.now() + timedelta(minutes=59)) == 0
    # MTurk unreachable all that time: the expiry sweep ends it, unverified (answers kept).
    assert assignments_expire(now=timezone.now() + timedelta(minutes=61)) == 1
    pending.refresh_from_db()
    assert pending.status == "expired" and pending.provisional_answers is not None
    assert mturk_service.mturk_verification_counts(topic=hit.topic) == {"pending": 0, "unverified": 1}


def test_reconcile_never_rejects_work_still_waiting_for_confirmation(stub):
    """MTurk lists it Submitted while GetAssignment does not know it yet: neither paid nor rejected."""
    hit = _published()
    pending = _provisional(hit, *FORGED[0])
    _lists(stub)
    _unknown(stub, FORGED[0][0])
    stub.add_response(
        "list_assignments_for_hit", {"Assignments": [_mturk_assignment(*FORGED[0])], "NumResults": 1},
        {"HITId": MTURK_HIT_ID, "MaxResults": 100},
    )
    summary = mturk_reconcile_all()
    assert (summary.approved, summary.rejected, summary.held, summary.awaiting_verification) == (0, 0, 1, 1)
    assert Assignment.objects.get(pk=pending.pk).status == "claimed"
