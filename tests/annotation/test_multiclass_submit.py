"""Topic sets through the submit path: class votes, majority class, unsure, replays, corrections, MTurk, Dawid–Skene."""
from decimal import Decimal
from unittest import mock

import boto3
import numpy as np
import pytest
from botocore.stub import Stubber
from django.utils import timezone

from annotation.crowds.mturk_client import mturk_client_override
from annotation.models import Assignment, Hit, HitItem, Judgment, Label, Topic
from annotation.selectors import assignment_answers
from annotation.services.crowd import mturk as mturk_service
from annotation.services.crowd.assignments import (
    CorrectionRefused,
    InvalidAnswers,
    assignment_claim_for_hit,
    assignment_submit,
    judgment_correct,
)
from annotation.services.crowd.labels import labels_posteriors_recompute
from annotation.services.topics.topic_sets import topic_set_create, topic_set_launch
from tests.factories import CorpusFactory, make_documents, make_worker

pytestmark = pytest.mark.django_db

CLASSES = [("Sport", ""), ("Politics", ""), ("Science", "")]  # positions 1..3; 0 is none of these


def _topic_set(n_documents=20, sample=5, hit_size=5, **kwargs) -> tuple[Topic, Hit]:
    corpus = CorpusFactory.create()
    make_documents(corpus, n_documents)
    topic = topic_set_create(corpus=corpus, name=kwargs.pop("name", "desks"), classes=CLASSES, hit_size=hit_size,
                             **kwargs)
    launch = topic_set_launch(topic=topic, documents=sample, seed=7, publish=False)
    topic.refresh_from_db()
    return topic, launch.hits[0]


def _docs(hit: Hit) -> list[int]:
    return list(HitItem.objects.filter(hit=hit).order_by("position").values_list("document_id", flat=True))


def _submit(hit: Hit, answers_by_doc: dict[int, int | None], worker=None):
    worker = worker or make_worker()
    assignment = assignment_claim_for_hit(worker=worker, hit=hit)
    return assignment_submit(assignment_id=assignment.pk, worker=worker, answers=answers_by_doc), assignment, worker


def _label(topic: Topic, doc_id: int) -> Label:
    return Label.objects.get(topic=topic, document_id=doc_id)


def test_three_workers_give_class_votes_and_a_majority_class():
    topic, hit = _topic_set()
    d = _docs(hit)
    # Per document, three workers' classes; expected majority typed by hand.
    votes = {d[0]: (1, 1, 2), d[1]: (0, 0, 0), d[2]: (1, 2, 3), d[3]: (3, 3, 3), d[4]: (2, 0, 2)}
    expected_majority = {d[0]: 1, d[1]: 0, d[2]: None, d[3]: 3, d[4]: 2}
    results = [_submit(hit, {doc: votes[doc][k] for doc in d})[0] for k in range(3)]
    assert [r.labels_completed for r in results[:2]] == [(), ()]
    assert sorted(results[2].labels_completed) == sorted(d) and results[2].hit_complete
    for doc in d:
        label = _label(topic, doc)
        counts = [0, 0, 0, 0]
        for v in votes[doc]:
            counts[v] += 1
        assert label.class_votes == counts
        assert (label.votes_total, label.votes_unsure, label.votes_relevant) == (3, 0, 0)
        assert label.majority_class == expected_majority[doc]
        assert label.majority is None  # no yes/no majority in a topic set
    judgments = Judgment.objects.filter(topic=topic)
    assert judgments.count() == 15 and not judgments.filter(relevant__isnull=False).exists()


def test_unsure_fills_the_place_but_never_the_majority():
    topic, hit = _topic_set(allow_unsure=True)
    d = _docs(hit)
    plans = [{d[0]: None, d[1]: None, d[2]: 2, d[3]: 1, d[4]: None},
             {d[0]: 1, d[1]: None, d[2]: None, d[3]: 2, d[4]: None},
             {d[0]: None, d[1]: None, d[2]: None, d[3]: None, d[4]: 0}]
    for plan in plans:
        _submit(hit, plan)
    got = {doc: (_label(topic, doc).class_votes, _label(topic, doc).votes_unsure, _label(topic, doc).majority_class)
           for doc in d}
    assert got == {
        d[0]: ([0, 1, 0, 0], 2, 1),   # one sure vote: it is the majority
        d[1]: ([0, 0, 0, 0], 3, None),  # no sure vote
        d[2]: ([0, 0, 1, 0], 2, 2),
        d[3]: ([0, 1, 1, 0], 1, None),  # 1 against 1: tied
        d[4]: ([1, 0, 0, 0], 2, 0),
    }
    assert set(Judgment.objects.filter(topic=topic, document_id=d[1]).values_list("choice", "relevant")) == {(None, None)}


def test_unsure_refused_where_the_topic_set_does_not_allow_it():
    topic, hit = _topic_set()
    d = _docs(hit)
    with pytest.raises(InvalidAnswers, match="no \"unsure\""):
        _submit(hit, dict.fromkeys(d))
    assert not Judgment.objects.exists()


@pytest.mark.parametrize("bad, fragment", [
    (4, "not a choice"),
    (-1, "not a choice"),
    (True, "topic set"),
    (False, "topic set"),
    ("2", "topic set"),
    (1.5, "topic set"),
])
def test_out_of_range_and_binary_answers_refused(bad, fragment):
    topic, hit = _topic_set()
    d = _docs(hit)
    answers: dict[int, object] = dict.fromkeys(d, 1)
    answers[d[2]] = bad
    with pytest.raises(InvalidAnswers, match=fragment):
        _submit(hit, answers)
    assert not Judgment.objects.exists()
    assert all(label.class_votes == [0, 0, 0, 0] for label in Label.objects.filter(topic=topic))


def test_a_binary_topic_still_refuses_class_positions():
    from annotation.services.sampling.draws import samples_launch
    from tests.factories import make_pair_world

    world = make_pair_world(n=300)
    launch = samples_launch(topic=world.topic, per_region=2, seed=3, publish=False)
    hit = launch.hits[0]
    with pytest.raises(InvalidAnswers, match="on topic"):
        _submit(hit, dict.fromkeys(_docs(hit), 1))


def test_replay_and_double_submit_record_once():
    topic, hit = _topic_set()
    d = _docs(hit)
    answers = {doc: i % 4 for i, doc in enumerate(d)}
    first, assignment, worker = _submit(hit, answers)
    again = assignment_submit(assignment_id=assignment.pk, worker=worker, answers=answers)
    assert again.replayed and not again.differs
    stale = assignment_submit(assignment_id=assignment.pk, worker=worker, answers=dict.fromkeys(d, 0))
    assert stale.replayed and stale.differs
    as_bools = assignment_submit(assignment_id=assignment.pk, worker=worker,
                                 answers={doc: bool(v) for doc, v in answers.items()})
    assert as_bools.differs  # True is 1 in Python, but a yes/no answer is never a class
    assert Judgment.objects.filter(assignment=assignment).count() == 5
    assert sum(sum(label.class_votes) for label in Label.objects.filter(topic=topic)) == 5
    assert assignment_answers(assignment=assignment) == answers


def test_correction_moves_class_votes_until_a_label_completes():
    topic, hit = _topic_set(allow_unsure=True)
    d = _docs(hit)
    _, assignment, worker = _submit(hit, dict.fromkeys(d, 1))
    result = judgment_correct(worker=worker, assignment_id=assignment.pk,
                              answers={d[0]: 2, d[1]: None, d[2]: 1, d[3]: 1, d[4]: 0})
    assert result.changed == 3
    assert _label(topic, d[0]).class_votes == [0, 0, 1, 0]
    assert (_label(topic, d[1]).class_votes, _label(topic, d[1]).votes_unsure) == ([0, 0, 0, 0], 1)
    assert _label(topic, d[4]).class_votes == [1, 0, 0, 0]
    assert assignment_answers(assignment=assignment)[d[1]] is None
    with pytest.raises(InvalidAnswers):
        judgment_correct(worker=worker, assignment_id=assignment.pk, answers=dict.fromkeys(d, 9))
    _submit(hit, dict.fromkeys(d, 2))
    _submit(hit, dict.fromkeys(d, 2))
    assert _label(topic, d[0]).majority_class == 2 and _label(topic, d[0]).class_votes == [0, 0, 3, 0]
    with pytest.raises(CorrectionRefused):
        judgment_correct(worker=worker, assignment_id=assignment.pk, answers=dict.fromkeys(d, 3))


# --------------------------------------------------------------------------- Mechanical Turk


MTURK_HIT_ID = "3Z8UJEJOCZEG603II1EL4BE2QUB93V"


@pytest.fixture
def stub(settings, monkeypatch):
    settings.MTURK_ENVIRONMENT = "sandbox"
    settings.MTURK_ASSIGNMENT_DURATION_SECONDS = 1800
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    client = boto3.client("mturk", region_name="us-east-1",
                          endpoint_url="https://mturk-requester-sandbox.us-east-1.amazonaws.com",
                          aws_access_key_id="test", aws_secret_access_key="test")
    with Stubber(client) as stubber, mturk_client_override(client):
        yield stubber, client
        stubber.assert_no_pending_responses()


def test_mturk_answers_are_provisional_then_counted_as_classes(stub):
    stubber, client = stub
    topic, hit = _topic_set(allow_unsure=True, reward_per_hit=Decimal("0.05"))
    Topic.objects.filter(pk=topic.pk).update(crowd=Topic.Crowd.MTURK)
    Hit.objects.filter(pk=hit.pk).update(external_id=MTURK_HIT_ID)
    hit = Hit.objects.select_related("topic").get(pk=hit.pk)
    d = _docs(hit)
    answers = {d[0]: 1, d[1]: 0, d[2]: None, d[3]: 3, d[4]: 2}
    # MTurk's GetHIT check of a new place is tested in test_mturk_ops.py; the stub here answers the reconcile only.
    with mock.patch.object(mturk_service, "_mturk_places_check"):
        assignment = mturk_service.mturk_assignment_start(
            hit=hit, mturk_hit_id=MTURK_HIT_ID, mturk_assignment_id="3ASSIGNMENTCLASSES0",
            mturk_worker_id="AWORKERCLASSES0")
    with pytest.raises(InvalidAnswers):
        mturk_service.mturk_assignment_submit(hit=hit, mturk_assignment_id="3ASSIGNMENTCLASSES0",
                                              mturk_worker_id="AWORKERCLASSES0", answers={**answers, d[0]: 7})
    with pytest.raises(InvalidAnswers):
        mturk_service.mturk_assignment_submit(hit=hit, mturk_assignment_id="3ASSIGNMENTCLASSES0",
                                              mturk_worker_id="AWORKERCLASSES0", answers=dict.fromkeys(d, True))
    submission = mturk_service.mturk_assignment_submit(
        hit=hit, mturk_assignment_id="3ASSIGNMENTCLASSES0", mturk_worker_id="AWORKERCLASSES0", answers=answers)
    assert (submission.counted, submission.answers, submission.relevant) == (False, 5, 3)
    stored = Assignment.objects.get(pk=assignment.pk)
    assert stored.provisional_answers == {str(doc): answers[doc] for doc in sorted(d)}
    assert not Judgment.objects.exists()
    assert all(label.class_votes == [0, 0, 0, 0] for label in Label.objects.filter(topic=topic))

    stubber.add_response("get_assignment", {"Assignment": {
        "AssignmentId": "3ASSIGNMENTCLASSES0", "WorkerId": "AWORKERCLASSES0", "HITId": MTURK_HIT_ID,
        "AssignmentStatus": "Submitted"}}, {"AssignmentId": "3ASSIGNMENTCLASSES0"})
    outcome = mturk_service.mturk_assignment_verify(assignment=stored, client=client, now=timezone.now())
    assert outcome == mturk_service.VERIFIED
    counted = Assignment.objects.get(pk=assignment.pk)
    assert counted.status == Assignment.Status.SUBMITTED and counted.provisional_answers is None
    assert assignment_answers(assignment=counted) == answers
    assert _label(topic, d[3]).class_votes == [0, 0, 0, 1]
    assert (_label(topic, d[2]).class_votes, _label(topic, d[2]).votes_unsure) == ([0, 0, 0, 0], 1)
    summary = mturk_service.mturk_submission_summary(assignment=counted)
    assert (summary.counted, summary.answers, summary.relevant) == (True, 5, 3)


# --------------------------------------------------------------------------- Dawid–Skene


def test_dawid_skene_recovers_planted_classes_from_a_noisy_crowd():
    """200 documents with planted classes 0..3; five workers of accuracy 0.9 … 0.45, three per HIT, wrong
    answers uniform over the other classes (the one-coin model). Seeded: the posterior's argmax must find
    the planted class at least as often as the majority does, and on at least 90% of the documents."""
    rng = np.random.default_rng(20241125)
    corpus = CorpusFactory.create()
    make_documents(corpus, 200)
    topic = topic_set_create(corpus=corpus, name="ds", classes=CLASSES, hit_size=10, aggregator="dawid_skene")
    launch = topic_set_launch(topic=topic, documents=200, seed=1, publish=False)
    topic.refresh_from_db()
    doc_ids = sorted(HitItem.objects.filter(topic=topic).values_list("document_id", flat=True))
    truth = dict(zip(doc_ids, rng.choice(4, size=len(doc_ids), p=[0.4, 0.3, 0.2, 0.1]).tolist(), strict=True))
    accuracies = [0.9, 0.85, 0.8, 0.5, 0.45]
    workers = [make_worker(f"crowd{i}") for i in range(len(accuracies))]
    for index, hit in enumerate(sorted(launch.hits, key=lambda h: h.pk)):
        chosen = [(index + k) % len(workers) for k in range(3)]
        for w in chosen:
            answers = {}
            for doc in _docs(hit):
                if rng.random() < accuracies[w]:
                    answers[doc] = truth[doc]
                else:
                    answers[doc] = int(rng.choice([c for c in range(4) if c != truth[doc]]))
            assignment = assignment_claim_for_hit(worker=workers[w], hit=hit)
            assignment_submit(assignment_id=assignment.pk, worker=workers[w], answers=answers)
    updated = labels_posteriors_recompute(topic=topic)
    labels = list(Label.objects.filter(topic=topic))
    decided = [label for label in labels if label.majority_class is not None]
    assert updated == len(decided) > 150
    for label in decided:
        assert len(label.class_posterior) == 4 and abs(sum(label.class_posterior) - 1) < 1e-9
    ds_right = sum(int(np.argmax(label.class_posterior)) == truth[label.document_id] for label in decided)
    majority_right = sum(label.majority_class == truth[label.document_id] for label in decided)
    assert ds_right >= majority_right
    assert ds_right >= 0.9 * len(decided)
    assert all(label.class_posterior is None for label in labels if label.majority_class is None)


# --------------------------------------------------------------------------- gold and agreement


def test_gold_documents_of_a_topic_set_take_a_class():
    from annotation.services.crowd.labels import GoldDocumentError, gold_document_add, topic_gold_answers

    topic, _ = _topic_set()
    doc = topic.corpus.documents.order_by("pk").last()
    label = gold_document_add(topic=topic, document=doc, gold_class=2)
    assert (label.gold_class, label.gold) == (2, None)
    assert gold_document_add(topic=topic, document=doc, gold_class=0).gold_class == 0
    assert topic_gold_answers(topic=topic) == {doc.pk: 0}
    for bad in ({"gold_class": 4}, {"gold_class": -1}, {"gold_class": True}, {"relevant": True}, {}):
        with pytest.raises(GoldDocumentError):
            gold_document_add(topic=topic, document=doc, **bad)
    from tests.factories import make_pair_world

    world = make_pair_world(n=50)
    with pytest.raises(GoldDocumentError):
        gold_document_add(topic=world.topic, document=world.topic.corpus.documents.first(), gold_class=1)


def test_gold_checks_compare_classes_and_block_a_careless_worker():
    from annotation.services.crowd.labels import gold_document_add

    corpus = CorpusFactory.create()
    make_documents(corpus, 400)
    topic = topic_set_create(corpus=corpus, name="gold desks", classes=CLASSES, hit_size=5)
    documents = list(corpus.documents.order_by("-pk")[:5])
    gold = {doc.pk: position % 4 for position, doc in enumerate(documents)}
    for doc in documents:
        gold_document_add(topic=topic, document=doc, gold_class=gold[doc.pk])
    Topic.objects.filter(pk=topic.pk).update(status=Topic.Status.ACTIVE)
    launch = topic_set_launch(topic=topic, documents=25, seed=3, publish=False)
    careful, careless = make_worker("careful"), make_worker("careless")
    hits = sorted(launch.hits, key=lambda h: h.pk)
    # The seed draws no gold document into the sample (a drawn one would be judged twice by a worker here).
    assert not HitItem.objects.filter(topic=topic, is_gold=False, document_id__in=list(gold)).exists()
    assert sorted(HitItem.objects.filter(topic=topic, is_gold=True).values_list("document_id", flat=True)) == sorted(gold)
    for hit in hits:
        items = list(HitItem.objects.filter(hit=hit).values_list("document_id", "is_gold"))
        for worker, right in ((careful, True), (careless, False)):
            answers = {doc: (gold[doc] if right else (gold[doc] + 1) % 4) if is_gold else 1 for doc, is_gold in items}
            assignment = assignment_claim_for_hit(worker=worker, hit=hit)
            assignment_submit(assignment_id=assignment.pk, worker=worker, answers=answers)
    careful.refresh_from_db()
    careless.refresh_from_db()
    assert not careful.blocked
    assert careless.blocked and "0 of 5 gold answers" in careless.blocked_reason
    # Gold votes never reach the labels' counts (they are not sample documents).
    assert all(sum(v) == 2 for v in Label.objects.filter(topic=topic, gold_class__isnull=True)
               .values_list("class_votes", flat=True))

    from annotation.selectors import worker_quality_for_topic

    quality = {q.name: q for q in worker_quality_for_topic(topic=topic)}
    assert (quality["careful"].gold_answered, quality["careful"].gold_correct) == (5, 5)
    assert (quality["careless"].gold_answered, quality["careless"].gold_correct) == (5, 0)


def test_fleiss_kappa_of_a_topic_set_by_hand():
    from annotation.selectors import topic_fleiss_kappa

    topic, _ = _topic_set(n_documents=4, sample=1)
    docs = list(topic.corpus.documents.order_by("pk"))
    Label.objects.filter(topic=topic).delete()
    # Two documents, three raters: votes (2 none, 1 Sport) and (3 Politics).
    # P̄ = (1/3 + 1)/2 = 2/3; shares 2/6, 1/6, 3/6: P̄e = 14/36; κ = (2/3 − 7/18)/(1 − 7/18) = 5/11.
    Label.objects.create(topic=topic, document=docs[0], votes_total=3, class_votes=[2, 1, 0, 0])
    Label.objects.create(topic=topic, document=docs[1], votes_total=3, class_votes=[0, 0, 3, 0])
    assert topic_fleiss_kappa(topic=topic) == pytest.approx(5 / 11)


def test_gold_from_a_judged_topic_set_document_and_no_yes_no_gold_file():
    from annotation.services.crowd.gold import GoldCsvError, GoldDocumentRefused, gold_add_from_judged, gold_csv_parse

    topic, hit = _topic_set()
    d = _docs(hit)
    with pytest.raises(GoldDocumentRefused, match="complete"):
        gold_add_from_judged(topic=topic, document_id=d[0], gold_class=1)
    for k in range(3):
        _submit(hit, dict.fromkeys(d, (1, 2, 3)[k]))  # a three-way tie on every document
    assert _label(topic, d[0]).majority_class is None
    label = gold_add_from_judged(topic=topic, document_id=d[0], gold_class=3)
    assert label.gold_class == 3 and label.gold is None
    with pytest.raises(GoldDocumentRefused, match="already gold"):
        gold_add_from_judged(topic=topic, document_id=d[0], gold_class=3)
    with pytest.raises(GoldCsvError, match="topic set"):
        gold_csv_parse(topic=topic, data=b"id,relevant\nd0,yes\n")
