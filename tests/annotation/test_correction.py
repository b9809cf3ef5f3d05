"""A worker changes their own submitted answers until the HIT's labels are complete (issue 12)."""
import threading

import pytest
from django.db import connection
from django.urls import reverse

from annotation.models import Assignment, Hit, HitItem, Judgment, Label, Topic
from annotation.roles import roles_ensure
from annotation.services.crowd.assignments import (
    AssignmentNotFound,
    CorrectionRefused,
    InvalidAnswers,
    assignment_claim,
    assignment_claim_for_hit,
    assignment_correctable,
    assignment_submit,
    judgment_correct,
)
from annotation.services.crowd.workers import worker_for_user
from annotation.services.sampling.draws import samples_launch
from tests.factories import UserFactory, make_pair_world, make_worker, require_postgres


def _world():
    world = make_pair_world(n=600, prevalence=0.2, seed=9, allow_unsure=True)
    samples_launch(topic=world.topic, per_region=4, seed=1)  # 12 documents → 3 HITs
    return world


@pytest.fixture
def world(db):
    return _world()


def _docs(hit):
    return list(HitItem.objects.filter(hit=hit).order_by("document_id").values_list("document_id", flat=True))


def _submit(worker, hit, value):
    assignment = assignment_claim_for_hit(worker=worker, hit=hit)
    assignment_submit(assignment_id=assignment.pk, worker=worker, answers=dict.fromkeys(_docs(hit), value))
    return assignment


def _counts(topic, hit):
    return {
        label.document_id: (label.votes_total, label.votes_relevant, label.votes_unsure, label.majority)
        for label in Label.objects.filter(topic=topic, document_id__in=_docs(hit))
    }


def _assert_counters_match_judgments(topic, hit):
    for doc, (total, relevant, unsure, _) in _counts(topic, hit).items():
        values = list(Judgment.objects.filter(topic=topic, document_id=doc).values_list("relevant", flat=True))
        assert (total, relevant, unsure) == (len(values), values.count(True), values.count(None))


def test_correction_changes_judgments_and_label_counters(world):
    first, second = make_worker(), make_worker()
    assignment = _submit(first, Hit.objects.filter(topic=world.topic).first(), True)
    hit = assignment.hit
    _submit(second, hit, True)
    docs = _docs(hit)
    new = dict.fromkeys(docs, False) | {docs[0]: None}
    result = judgment_correct(worker=first, assignment_id=assignment.pk, answers=new)
    assert result.changed == len(docs)
    assert dict(Judgment.objects.filter(assignment=assignment).values_list("document_id", "relevant")) == new
    counts = _counts(world.topic, hit)
    assert counts[docs[0]] == (2, 1, 1, None) and counts[docs[1]] == (2, 1, 0, None)
    _assert_counters_match_judgments(world.topic, hit)
    # The third vote then decides over the corrected votes: docs[1] is 1–1 + False → off topic.
    _submit(make_worker(), hit, False)
    counts = _counts(world.topic, hit)
    assert counts[docs[1]][3] is False
    assert counts[docs[0]][3] is None  # True, unsure, False: the sure votes tie
    _assert_counters_match_judgments(world.topic, hit)


def test_a_repeated_correction_changes_nothing(world):
    worker = make_worker()
    assignment = _submit(worker, Hit.objects.filter(topic=world.topic).first(), True)
    new = dict.fromkeys(_docs(assignment.hit), False)
    assert judgment_correct(worker=worker, assignment_id=assignment.pk, answers=new).changed == len(new)
    before = _counts(world.topic, assignment.hit)
    assert judgment_correct(worker=worker, assignment_id=assignment.pk, answers=new).changed == 0
    assert _counts(world.topic, assignment.hit) == before
    _assert_counters_match_judgments(world.topic, assignment.hit)


def test_correction_is_refused_once_the_labels_are_complete(world):
    workers = [make_worker() for _ in range(3)]
    hit = Hit.objects.filter(topic=world.topic).first()
    assignments = [_submit(w, hit, True) for w in workers]
    assert not assignment_correctable(assignment=assignments[0])
    before = _counts(world.topic, hit)
    with pytest.raises(CorrectionRefused, match="can no longer be changed"):
        judgment_correct(worker=workers[0], assignment_id=assignments[0].pk, answers=dict.fromkeys(_docs(hit), False))
    assert _counts(world.topic, hit) == before
    assert set(Judgment.objects.filter(assignment=assignments[0]).values_list("relevant", flat=True)) == {True}


def test_correction_is_refused_for_someone_elses_or_an_unsubmitted_assignment(world):
    owner, other = make_worker(), make_worker()
    assignment = _submit(owner, Hit.objects.filter(topic=world.topic).first(), True)
    answers = dict.fromkeys(_docs(assignment.hit), False)
    with pytest.raises(AssignmentNotFound):
        judgment_correct(worker=other, assignment_id=assignment.pk, answers=answers)
    claimed = assignment_claim(worker=other, topic=world.topic)
    with pytest.raises(CorrectionRefused, match="submitted"):
        judgment_correct(worker=other, assignment_id=claimed.pk, answers=dict.fromkeys(_docs(claimed.hit), False))
    with pytest.raises(InvalidAnswers):  # every document needs an answer, as on submit
        judgment_correct(worker=owner, assignment_id=assignment.pk, answers={})


def test_correction_is_not_offered_on_mechanical_turk(world):
    worker = make_worker()
    assignment = _submit(worker, Hit.objects.filter(topic=world.topic).first(), True)
    Topic.objects.filter(pk=world.topic.pk).update(crowd=Topic.Crowd.MTURK)
    assignment.refresh_from_db()
    assert not assignment_correctable(assignment=assignment)
    with pytest.raises(CorrectionRefused, match="Mechanical Turk"):
        judgment_correct(worker=worker, assignment_id=assignment.pk,
                         answers=dict.fromkeys(_docs(assignment.hit), False))


def test_the_pages_offer_change_my_answers_and_save_it(client, world):
    user = UserFactory.create(username="corrector")
    user.groups.add(roles_ensure()["annotator"])
    client.force_login(user)
    client.post("/annotate/next/")
    assignment = Assignment.objects.get(worker__user=user)
    docs = _docs(assignment.hit)
    client.post(reverse("annotator:assignment", args=[assignment.pk]),
                {f"doc-{d}": "1" for d in docs} | {"then": "home"})
    home = client.get("/annotate/").content.decode()
    correct_url = reverse("annotator:correct", args=[assignment.pk])
    assert "Change my answers" in home and correct_url in home
    page = client.get(correct_url)
    assert page.status_code == 200 and "Save my changes" in page.content.decode()
    response = client.post(correct_url, {f"doc-{d}": "0" for d in docs} | {f"doc-{docs[0]}": "u"})
    assert response.status_code == 302 and response["Location"] == reverse("annotator:home")
    recorded = dict(Judgment.objects.filter(assignment=assignment).values_list("document_id", "relevant"))
    assert recorded[docs[0]] is None and recorded[docs[1]] is False
    # Once the other two workers are done, the link is gone and a POST is refused with a message.
    for _ in range(2):
        _submit(make_worker(), assignment.hit, True)
    assert correct_url not in client.get("/annotate/").content.decode()
    assert client.get(correct_url).status_code == 302
    refused = client.post(correct_url, {f"doc-{d}": "1" for d in docs}, follow=True)
    assert "can no longer be changed" in refused.content.decode()
    assert dict(Judgment.objects.filter(assignment=assignment).values_list("document_id", "relevant")) == recorded
    # Someone else's assignment is a 404, as on the HIT page.
    intruder = UserFactory.create(username="intruder")
    intruder.groups.add(roles_ensure()["annotator"])
    worker_for_user(user=intruder)
    client.force_login(intruder)
    assert client.get(correct_url).status_code == 404


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_correction_racing_the_last_submit_never_breaks_the_counters():
    """The third worker's submit and the first worker's correction at once, on PostgreSQL, many times:
    either the correction lands before the label completes (and the majority uses it) or it is refused."""
    require_postgres()
    world = _world()
    outcomes = []
    for hit in Hit.objects.filter(topic=world.topic):
        first, second, third = make_worker(), make_worker(), make_worker()
        assignment = _submit(first, hit, True)
        _submit(second, hit, False)
        last = assignment_claim_for_hit(worker=third, hit=hit)
        docs = _docs(hit)
        barrier = threading.Barrier(2)
        errors: list[str] = []
        result: dict[str, object] = {}

        def correct(assignment=assignment, docs=docs, barrier=barrier, errors=errors, result=result, first=first):
            try:
                barrier.wait()
                judgment_correct(worker=first, assignment_id=assignment.pk, answers=dict.fromkeys(docs, False))
                result["correct"] = "applied"
            except CorrectionRefused:
                result["correct"] = "refused"
            except Exception as exc:  # noqa: BLE001 - reported below
                errors.append(repr(exc))
            finally:
                connection.close()

        def submit(last=last, docs=docs, barrier=barrier, errors=errors, third=third):
            try:
                barrier.wait()
                assignment_submit(assignment_id=last.pk, worker=third, answers=dict.fromkeys(docs, True))
            except Exception as exc:  # noqa: BLE001 - reported below
                errors.append(repr(exc))
            finally:
                connection.close()

        threads = [threading.Thread(target=correct), threading.Thread(target=submit)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert not errors
        _assert_counters_match_judgments(world.topic, hit)
        majority = {m for *_, m in _counts(world.topic, hit).values()}
        # Applied: False, False, True → off topic; refused: True, False, True → on topic.
        assert majority == ({False} if result["correct"] == "applied" else {True})
        outcomes.append(result["correct"])
    assert outcomes  # at least one race was run
