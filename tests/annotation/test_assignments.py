from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Assignment, Hit, HitItem, Judgment, Label, Topic
from annotation.services.crowd.assignments import (
    AssignmentExpired,
    AssignmentNotFound,
    AssignmentReleased,
    ClaimRefused,
    InvalidAnswers,
    ReleaseRefused,
    SubmitRefused,
    assignment_claim,
    assignment_claim_for_hit,
    assignment_claim_fresh,
    assignment_release,
    assignment_submit,
    assignments_expire,
)
from annotation.services.crowd.hits import hit_cancel
from annotation.services.crowd.workers import worker_block
from annotation.services.sampling.draws import samples_launch
from tests.factories import make_pair_world, make_worker

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    world = make_pair_world(n=600, prevalence=0.2, seed=9)
    samples_launch(topic=world.topic, per_region=4, seed=1)  # 12 documents → 3 HITs
    return world


def _answers(assignment, value=True):
    return dict.fromkeys(HitItem.objects.filter(hit=assignment.hit).values_list("document_id", flat=True), value)


def test_three_distinct_workers_per_hit_then_it_is_full(world):
    workers = [make_worker() for _ in range(4)]
    first = [assignment_claim(worker=w, topic=world.topic) for w in workers[:3]]
    hit_ids = {a.hit_id for a in first}
    # Claims spread over candidates, but no HIT ever holds more than three live assignments.
    for hit in Hit.objects.filter(topic=world.topic):
        assert Assignment.objects.filter(hit=hit, status="claimed").count() <= 3
    for a in first:
        assignment_submit(assignment_id=a.pk, worker=a.worker, answers=_answers(a))
    # Each worker keeps claiming until nothing is left: every HIT ends with 3 distinct workers.
    for w in workers:
        while (a := assignment_claim(worker=w, topic=world.topic)) is not None:
            assignment_submit(assignment_id=a.pk, worker=w, answers=_answers(a))
    for hit in Hit.objects.filter(topic=world.topic):
        hit.refresh_from_db()
        subs = Assignment.objects.filter(hit=hit, status="submitted")
        assert subs.count() == 3 == hit.completed_assignments
        assert len({a.worker_id for a in subs}) == 3
        assert {a.slot for a in subs} == {0, 1, 2}
        assert hit.status == Hit.Status.COMPLETE
    assert hit_ids


def test_claim_resumes_the_assignment_in_progress(world):
    w = make_worker()
    a = assignment_claim(worker=w, topic=world.topic)
    assert assignment_claim(worker=w, topic=world.topic).pk == a.pk
    assert assignment_claim(worker=w).pk == a.pk


def test_no_hits_left_returns_none(world):
    w = make_worker()
    Hit.objects.filter(topic=world.topic).update(status=Hit.Status.COMPLETE)
    assert assignment_claim(worker=w, topic=world.topic) is None


def test_paused_topic_hands_out_nothing(world):
    Topic.objects.filter(pk=world.topic.pk).update(status=Topic.Status.PAUSED)
    assert assignment_claim(worker=make_worker()) is None


def test_blocked_worker_cannot_claim(world):
    w = make_worker()
    worker_block(worker=w, reason="spam")
    with pytest.raises(ClaimRefused, match="spam"):
        assignment_claim(worker=w, topic=world.topic)


def test_expiry_frees_the_slot_and_it_is_offered_again(world):
    Hit.objects.filter(topic=world.topic).exclude(pk=Hit.objects.filter(topic=world.topic).order_by("pk")[0].pk).update(
        status=Hit.Status.CANCELLED
    )
    now = timezone.now()
    slow, others = make_worker(), [make_worker() for _ in range(3)]
    a_slow = assignment_claim(worker=slow, now=now)
    a1 = assignment_claim(worker=others[0], now=now)
    a2 = assignment_claim(worker=others[1], now=now)
    assert assignment_claim(worker=others[2], now=now) is None  # full
    later = now + timedelta(seconds=1801)
    assert assignments_expire(now=later) == 3
    a_slow.refresh_from_db()
    assert a_slow.status == Assignment.Status.EXPIRED
    # The slot is offered again (lazy expiry on claim also does it).
    retaken = assignment_claim(worker=others[2], now=later)
    assert retaken is not None and retaken.hit_id == a_slow.hit_id
    # The slow worker's late submission is refused clearly once the slot is re-taken.
    with pytest.raises(AssignmentExpired, match="another worker has taken your place"):
        assignment_submit(assignment_id=a_slow.pk, worker=slow, answers=_answers(a_slow), now=later)
    assert not Judgment.objects.filter(assignment=a_slow).exists()
    assert {a1.pk, a2.pk}


def test_late_submission_accepted_while_the_slot_is_free(world):
    now = timezone.now()
    w = make_worker()
    a = assignment_claim(worker=w, now=now)
    assignments_expire(now=now + timedelta(hours=1))
    result = assignment_submit(assignment_id=a.pk, worker=w, answers=_answers(a), now=now + timedelta(hours=1))
    assert result.judgments == len(_answers(a))
    a.refresh_from_db()
    assert a.status == Assignment.Status.SUBMITTED


def test_double_submit_records_one_set_of_judgments(world):
    w = make_worker()
    a = assignment_claim(worker=w, topic=world.topic)
    first = assignment_submit(assignment_id=a.pk, worker=w, answers=_answers(a, True))
    second = assignment_submit(assignment_id=a.pk, worker=w, answers=_answers(a, False))  # replay, even changed
    assert first == second
    assert not first.replayed and second.replayed
    assert Judgment.objects.filter(assignment=a).count() == len(_answers(a))
    assert set(Judgment.objects.filter(assignment=a).values_list("relevant", flat=True)) == {True}
    hit = Hit.objects.get(pk=a.hit_id)
    assert hit.completed_assignments == 1
    assert set(Label.objects.filter(document_id__in=_answers(a)).values_list("votes_total", flat=True)) == {1}


def test_someone_elses_assignment_is_not_found(world):
    owner, intruder = make_worker(), make_worker()
    a = assignment_claim(worker=owner, topic=world.topic)
    with pytest.raises(AssignmentNotFound):
        assignment_submit(assignment_id=a.pk, worker=intruder, answers=_answers(a))
    with pytest.raises(AssignmentNotFound):
        assignment_submit(assignment_id=10_000_000, worker=owner, answers={})
    assert not Judgment.objects.exists()


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda ans: dict(list(ans.items())[1:]), "answer every document"),
        (lambda ans: {**ans, 99_999_999: True}, "not in this HIT"),
        (lambda ans: dict.fromkeys(ans, "yes"), "on topic"),
        (lambda ans: {"x": True}, "keyed by document id"),
    ],
)
def test_answers_must_cover_exactly_the_hit(world, mutate, message):
    w = make_worker()
    a = assignment_claim(worker=w, topic=world.topic)
    with pytest.raises(InvalidAnswers, match=message):
        assignment_submit(assignment_id=a.pk, worker=w, answers=mutate(_answers(a)))
    a.refresh_from_db()
    assert a.status == Assignment.Status.CLAIMED and not Judgment.objects.exists()


def test_cancelled_hit_refuses_submission(world):
    w = make_worker()
    a = assignment_claim(worker=w, topic=world.topic)
    hit_cancel(hit=a.hit)
    with pytest.raises(SubmitRefused, match="withdrawn"):
        assignment_submit(assignment_id=a.pk, worker=w, answers=_answers(a))


def test_third_judgment_sets_the_majority_and_schedules_a_recompute(
    world, monkeypatch, django_capture_on_commit_callbacks
):
    calls = []
    # The submit announces LabelsCompleted after commit; estimation's receiver schedules the recompute.
    monkeypatch.setattr("estimation.receivers.topic_recompute_schedule", lambda *, topic_id: calls.append(topic_id))
    hit = Hit.objects.filter(topic=world.topic).order_by("pk").first()
    docs = list(HitItem.objects.filter(hit=hit).order_by("position").values_list("document_id", flat=True))
    votes = [
        {docs[0]: True, **dict.fromkeys(docs[1:], False)},
        {docs[0]: True, **dict.fromkeys(docs[1:], False)},
        dict.fromkeys(docs, True),
    ]
    workers = [make_worker() for _ in range(3)]
    for i, (w, answers) in enumerate(zip(workers, votes)):
        a = assignment_claim_for_hit(worker=w, hit=hit)
        with django_capture_on_commit_callbacks(execute=True):
            result = assignment_submit(assignment_id=a.pk, worker=w, answers=answers)
        label = Label.objects.get(topic=world.topic, document_id=docs[0])
        if i < 2:
            assert label.majority is None and calls == []
            assert result.labels_completed == ()
    assert set(result.labels_completed) == set(docs)
    assert calls == [world.topic.pk]
    assert Label.objects.get(topic=world.topic, document_id=docs[0]).majority is True
    for d in docs[1:]:
        label = Label.objects.get(topic=world.topic, document_id=d)
        assert (label.votes_relevant, label.votes_total, label.majority) == (1, 3, False)
    assert result.hit_complete


def test_claim_for_hit_is_idempotent_and_refuses_a_full_hit(world):
    hit = Hit.objects.filter(topic=world.topic).first()
    w = [make_worker() for _ in range(4)]
    a = assignment_claim_for_hit(worker=w[0], hit=hit, external_assignment_id="ASSIGN-1")
    assert assignment_claim_for_hit(worker=w[0], hit=hit).pk == a.pk
    assignment_claim_for_hit(worker=w[1], hit=hit)
    assignment_claim_for_hit(worker=w[2], hit=hit)
    with pytest.raises(ClaimRefused, match="no free place"):
        assignment_claim_for_hit(worker=w[3], hit=hit)
    assert Assignment.objects.get(pk=a.pk).external_id == "ASSIGN-1"


def test_expire_task_expires_overdue_claims(world, monkeypatch):
    from annotation.tasks import assignments_expire_task

    w = make_worker()
    a = assignment_claim(worker=w, topic=world.topic)
    Assignment.objects.filter(pk=a.pk).update(deadline=timezone.now() - timedelta(seconds=1))
    assert assignments_expire_task.delay().get() == 1
    assert assignments_expire_task.delay().get() == 0  # safe to run twice
    a.refresh_from_db()
    assert a.status == Assignment.Status.EXPIRED


def test_mturk_reconcile_task_calls_the_mturk_service(monkeypatch):
    from annotation.tasks import crowd_reconcile_task

    calls = []
    monkeypatch.setattr("annotation.services.crowd.mturk_reconcile.mturk_reconcile_all", lambda: calls.append(1))
    crowd_reconcile_task.delay()
    assert calls == [1]


def test_local_claims_never_take_places_of_mechanical_turk_hits(world):
    Topic.objects.filter(pk=world.topic.pk).update(crowd=Topic.Crowd.MTURK)
    w = make_worker()
    assert assignment_claim(worker=w) is None
    assert assignment_claim(worker=w, topic=world.topic) is None
    # MTurk workers arrive for a particular HIT.
    hit = Hit.objects.filter(topic=world.topic).first()
    assert assignment_claim_for_hit(worker=w, hit=hit).hit_id == hit.pk


# --------------------------------------------------------------------------- return (skip), issue 12 item 3


def test_a_returned_slot_is_offered_to_another_worker_at_once(world):
    hits = list(Hit.objects.filter(topic=world.topic).order_by("pk"))
    holders = [make_worker() for _ in range(3)]
    held = {(w.pk, h.pk): assignment_claim_for_hit(worker=w, hit=h) for w in holders for h in hits}
    late = make_worker()
    assert assignment_claim(worker=late, topic=world.topic) is None  # every place is taken
    returned = held[(holders[0].pk, hits[1].pk)]
    assignment_release(assignment_id=returned.pk, worker=holders[0])
    # No expiry sweep, no wait: the next claim gets the freed place.
    taken = assignment_claim(worker=late, topic=world.topic)
    assert taken is not None and taken.hit_id == hits[1].pk and taken.slot == returned.slot
    assert Assignment.objects.filter(hit=hits[1], status="claimed").count() == 3


def test_a_returned_assignment_cannot_be_submitted(world):
    worker = make_worker()
    assignment = assignment_claim(worker=worker, topic=world.topic)
    released = assignment_release(assignment_id=assignment.pk, worker=worker)
    assert released.status == "expired"
    assert assignment_release(assignment_id=assignment.pk, worker=worker).pk == assignment.pk  # idempotent
    # Refused even while nobody has taken the place (an expired one would still be accepted).
    with pytest.raises(AssignmentReleased, match="You returned this HIT"):
        assignment_submit(assignment_id=assignment.pk, worker=worker, answers=_answers(assignment))
    assert not Judgment.objects.exists() and not Label.objects.filter(votes_total__gt=0).exists()
    hit = Hit.objects.get(pk=assignment.hit_id)
    assert hit.completed_assignments == 0


def test_return_is_refused_after_submit_and_for_another_workers_assignment(world):
    worker, other = make_worker(), make_worker()
    assignment = assignment_claim(worker=worker, topic=world.topic)
    with pytest.raises(AssignmentNotFound):
        assignment_release(assignment_id=assignment.pk, worker=other)
    assignment_submit(assignment_id=assignment.pk, worker=worker, answers=_answers(assignment))
    with pytest.raises(ReleaseRefused):
        assignment_release(assignment_id=assignment.pk, worker=worker)
    assert Assignment.objects.get(pk=assignment.pk).status == "submitted"


def test_claim_fresh_never_hands_back_a_returned_hit(world):
    worker = make_worker()
    seen = []
    while (assignment := assignment_claim_fresh(worker=worker, topic=world.topic)) is not None:
        seen.append(assignment.hit_id)
        assignment_release(assignment_id=assignment.pk, worker=worker)
    assert sorted(seen) == sorted(Hit.objects.filter(topic=world.topic).values_list("pk", flat=True))  # 3 HITs, once each
    # The plain claim (Mechanical Turk's "return" semantics) may offer a returned HIT again.
    assert assignment_claim(worker=worker, topic=world.topic) is not None


def test_a_stale_replay_with_other_answers_is_flagged_and_changes_nothing(world):
    worker = make_worker()
    assignment = assignment_claim(worker=worker, topic=world.topic)
    first = assignment_submit(assignment_id=assignment.pk, worker=worker, answers=_answers(assignment, True))
    assert not first.replayed and not first.differs
    same = assignment_submit(assignment_id=assignment.pk, worker=worker, answers=_answers(assignment, True))
    assert same.replayed and not same.differs
    stale = assignment_submit(assignment_id=assignment.pk, worker=worker, answers=_answers(assignment, False))
    assert stale.replayed and stale.differs
    assert set(Judgment.objects.filter(assignment=assignment).values_list("relevant", flat=True)) == {True}
