"""Issue 12 item 6: rename, archive and delete classifiers and topics; coverage warnings.

Delete is refused, with the reason, whenever something measured depends on the object;
archive is always allowed and closes a topic to sampling through its status.
"""
from __future__ import annotations

import pytest

from annotation.models import (
    Classifier,
    ClassifierPair,
    ClassifierScore,
    HitItem,
    Judgment,
    SampleDraw,
    Topic,
    TopicClassifier,
)
from annotation.services.classifiers.classifier import (
    ClassifierError,
    classifier_archive,
    classifier_coverage_warnings,
    classifier_delete,
    classifier_delete_blockers,
    classifier_freeze,
    classifier_rename,
    classifier_unarchive,
)
from annotation.services.crowd.assignments import assignment_claim, assignment_submit
from annotation.services.crowd.workers import worker_for_user
from annotation.services.sampling.draws import SamplingError, samples_launch
from annotation.services.topics.topic import (
    TopicError,
    topic_archive,
    topic_create,
    topic_delete,
    topic_delete_blockers,
    topic_rename,
    topic_unarchive,
)
from annotation.services.topics.topic_settings import TopicStatusError, topic_pause, topic_resume
from tests.factories import ClassifierFactory, corpus_build, make_draw, user_with_role

pytestmark = pytest.mark.django_db


@pytest.fixture
def pair():
    corpus, ids = corpus_build(name="news", size=60)
    c1 = ClassifierFactory.create(corpus=corpus, name="kw", ids=ids[0:30])
    c2 = ClassifierFactory.create(corpus=corpus, name="model", ids=ids[15:45])
    return corpus, ids, c1, c2


def _judge_one_hit(topic: Topic) -> int:
    """Three workers judge the first HIT of a launched topic; returns the number of judgments stored."""
    for i in range(3):
        worker = worker_for_user(user=user_with_role(f"w{i}", "annotator"))
        assignment = assignment_claim(worker=worker, topic=topic)
        assert assignment is not None
        docs = HitItem.objects.filter(hit_id=assignment.hit_id).values_list("document_id", flat=True)
        assignment_submit(assignment_id=assignment.pk, worker=worker, answers=dict.fromkeys(docs, True))
    return Judgment.objects.filter(topic=topic).count()


# --- warnings -------------------------------------------------------------------------------------


def test_coverage_warnings_flag_nothing_and_most_of_the_corpus_only():
    assert "no document" in classifier_coverage_warnings(retrieved=0, corpus_size=60)[0]
    most = classifier_coverage_warnings(retrieved=31, corpus_size=60)
    assert len(most) == 1 and "52%" in most[0] and "31 of 60" in most[0]
    assert classifier_coverage_warnings(retrieved=30, corpus_size=60) == []  # exactly half: fine
    assert classifier_coverage_warnings(retrieved=1, corpus_size=60) == []
    assert classifier_coverage_warnings(retrieved=0, corpus_size=0) == []  # an empty corpus says nothing
    assert "about 90%" in classifier_coverage_warnings(retrieved=900, corpus_size=1000, estimated=True)[0]


# --- classifiers ----------------------------------------------------------------------------------


def test_classifier_rename_keeps_names_unique_per_corpus(pair):
    corpus, _, c1, c2 = pair
    fingerprint = c1.fingerprint
    classifier_rename(classifier=c1, name="  title keywords ")
    c1.refresh_from_db()
    assert c1.name == "title keywords" and c1.fingerprint == fingerprint
    with pytest.raises(ClassifierError, match="already has a classifier named “model”"):
        classifier_rename(classifier=c1, name="model")
    with pytest.raises(ClassifierError, match="needs a name"):
        classifier_rename(classifier=c1, name="  ")
    other, _ = corpus_build(name="other", size=3)
    elsewhere = ClassifierFactory.create(corpus=other, name="x", ids=[])
    classifier_rename(classifier=elsewhere, name="model")  # another corpus may use the name
    assert Classifier.objects.filter(name="model").count() == 2


def test_classifier_archive_is_idempotent_and_refused_by_new_topics(pair):
    corpus, _, c1, c2 = pair
    classifier_archive(classifier=c1)
    first = c1.archived_at
    assert first is not None
    classifier_archive(classifier=c1)
    assert c1.archived_at == first
    with pytest.raises(TopicError, match="archived"):
        topic_create(corpus=corpus, name="Oil", c1=c1, c2=c2)
    classifier_unarchive(classifier=c1)
    assert c1.archived_at is None
    assert topic_create(corpus=corpus, name="Oil", c1=c1, c2=c2).pair.c1 == c1


def test_an_unused_classifier_is_deleted_with_its_scores(pair):
    corpus, ids, _, _ = pair
    unused = ClassifierFactory.create(corpus=corpus, name="scores", kind=Classifier.Kind.SCORES, ids=ids[:3])
    ClassifierScore.objects.create(classifier=unused, document_id=ids[0], score=0.9)
    assert classifier_delete_blockers(classifier=unused) == []
    classifier_delete(classifier=unused)
    assert not Classifier.objects.filter(pk=unused.pk).exists() and not ClassifierScore.objects.exists()


def test_delete_is_refused_for_a_classifier_a_topic_uses(pair):
    corpus, ids, c1, c2 = pair
    extra = ClassifierFactory.create(corpus=corpus, name="extra", ids=ids[10:20])
    topic_create(corpus=corpus, name="Oil", c1=c1, c2=c2, extra_classifiers=[extra])
    for classifier in (c1, c2, extra):
        with pytest.raises(ClassifierError, match="used by topic “Oil”.*Archive it instead"):
            classifier_delete(classifier=classifier)
    assert Classifier.objects.count() == 3
    classifier_archive(classifier=c1)  # archiving is always allowed
    assert ClassifierPair.objects.get().c1 == c1


def test_delete_is_refused_for_a_frozen_or_sampled_classifier(pair):
    corpus, ids, c1, _ = pair
    classifier_freeze(classifier_id=c1.pk, reason="certified by plan 3")
    c1.refresh_from_db()
    with pytest.raises(ClassifierError, match="frozen: certified by plan 3"):
        classifier_delete(classifier=c1)
    # A topic whose sample used the classifier, although the topic no longer lists it.
    sampled = ClassifierFactory.create(corpus=corpus, name="sampled", ids=ids[:5])
    other = ClassifierFactory.create(corpus=corpus, name="other", ids=ids[3:9])
    topic = topic_create(corpus=corpus, name="T", c1=sampled, c2=other, extra_classifiers=[])
    make_draw(topic, SampleDraw.Purpose.PRECISION, "R", [0, 1], ids, classifier=sampled)
    ClassifierPair.objects.filter(topic=topic).delete()
    reasons = classifier_delete_blockers(classifier=sampled)
    assert reasons == ["1 sample draw refers to it"]
    with pytest.raises(ClassifierError, match="1 sample draw refers to it"):
        classifier_delete(classifier=sampled)


# --- topics ---------------------------------------------------------------------------------------


def test_a_draft_topic_with_nothing_measured_is_deleted_and_its_classifiers_stay(pair):
    corpus, ids, c1, c2 = pair
    extra = ClassifierFactory.create(corpus=corpus, name="extra", ids=ids[10:20])
    topic = topic_create(corpus=corpus, name="Oil", c1=c1, c2=c2, extra_classifiers=[extra])
    assert topic_delete_blockers(topic=topic) == []
    topic_delete(topic=topic)
    assert not Topic.objects.exists() and not ClassifierPair.objects.exists() and not TopicClassifier.objects.exists()
    assert Classifier.objects.count() == 3
    classifier_delete(classifier=c1)  # no longer used
    assert not Classifier.objects.filter(pk=c1.pk).exists()


def test_delete_is_refused_for_a_topic_with_judgments_naming_them(pair):
    corpus, _, c1, c2 = pair
    topic = topic_create(corpus=corpus, name="Oil", c1=c1, c2=c2)
    samples_launch(topic=topic, per_region=5, seed=3)
    judgments = _judge_one_hit(topic)
    with pytest.raises(TopicError, match=rf"cannot be deleted: it has {judgments} judgments, \d+ HITs, 3 sample draws"):
        topic_delete(topic=topic)
    assert Topic.objects.filter(pk=topic.pk).exists() and Judgment.objects.count() == judgments


def test_delete_is_refused_for_a_topic_with_only_a_report(pair):
    """Rows of apps annotation does not import (estimation's snapshots) block a delete too."""
    from estimation.models import EstimateSnapshot

    corpus, _, c1, c2 = pair
    topic = topic_create(corpus=corpus, name="Oil", c1=c1, c2=c2)
    EstimateSnapshot.objects.create(topic=topic, version=1, code_version="t", aggregator="majority", inputs={},
                                    inputs_checksum="x", report={})
    assert topic_delete_blockers(topic=topic) == ["1 estimate snapshot"]
    with pytest.raises(TopicError, match="1 estimate snapshot; archive it instead"):
        topic_delete(topic=topic)


def test_archiving_closes_a_sampling_topic_and_unarchiving_brings_it_back_paused(pair):
    corpus, _, c1, c2 = pair
    topic = topic_create(corpus=corpus, name="Oil", c1=c1, c2=c2)
    samples_launch(topic=topic, per_region=5, seed=3)
    topic.refresh_from_db()
    assert topic.status == Topic.Status.ACTIVE
    topic_archive(topic=topic)
    assert topic.archived_at is not None and topic.status == Topic.Status.CLOSED
    worker = worker_for_user(user=user_with_role("late", "annotator"))
    assert assignment_claim(worker=worker, topic=topic) is None  # no new HITs
    assert assignment_claim(worker=worker) is None
    with pytest.raises(SamplingError, match="closed"):
        samples_launch(topic=topic, per_region=8, seed=4)  # no launch, top-up or certification draw
    with pytest.raises(TopicStatusError, match="archived: unarchive it first"):
        topic_resume(topic=topic)
    topic_unarchive(topic=topic)
    assert topic.archived_at is None and topic.status == Topic.Status.PAUSED
    topic_resume(topic=topic)
    assert assignment_claim(worker=worker, topic=topic) is not None


def test_an_archived_draft_comes_back_a_draft_and_archive_is_idempotent(pair):
    corpus, _, c1, c2 = pair
    topic = topic_create(corpus=corpus, name="Oil", c1=c1, c2=c2)
    topic_archive(topic=topic)
    stamp = topic.archived_at
    topic_archive(topic=topic)
    assert topic.archived_at == stamp
    topic_unarchive(topic=topic)
    assert topic.status == Topic.Status.DRAFT
    topic_unarchive(topic=topic)
    assert topic.status == Topic.Status.DRAFT and topic.archived_at is None


def test_a_paused_topic_can_be_archived(pair):
    corpus, _, c1, c2 = pair
    topic = topic_create(corpus=corpus, name="Oil", c1=c1, c2=c2)
    samples_launch(topic=topic, per_region=5, seed=3)
    topic_pause(topic=topic)
    topic_archive(topic=topic)
    assert topic.status == Topic.Status.CLOSED


def test_topic_rename_keeps_names_unique(pair):
    corpus, _, c1, c2 = pair
    topic = topic_create(corpus=corpus, name="Oil", c1=c1, c2=c2)
    other = ClassifierFactory.create(corpus=corpus, name="third", ids=list(c1.corpus.documents.values_list("pk", flat=True))[5:40])
    topic_create(corpus=corpus, name="Wheat", c1=c1, c2=other)
    topic_rename(topic=topic, name=" Crude oil ")
    topic.refresh_from_db()
    assert topic.name == "Crude oil"
    with pytest.raises(TopicError, match="a topic named “Wheat” already exists"):
        topic_rename(topic=topic, name="Wheat")
    with pytest.raises(TopicError, match="needs a name"):
        topic_rename(topic=topic, name="")


def test_the_keyword_preview_leaves_archived_classifiers_out_of_its_overlaps(pair):
    from annotation.services.classifiers.classifier import keyword_preview

    corpus, _, c1, c2 = pair
    classifier_archive(classifier=c1)
    preview = keyword_preview(corpus=corpus, terms=["oil"])
    assert [o.classifier_name for o in preview.overlaps] == ["model"]
