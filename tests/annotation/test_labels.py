import pytest

from annotation.models import Label, Topic
from annotation.services.crowd.assignments import assignment_claim_for_hit, assignment_submit
from annotation.services.crowd.labels import (
    GoldDocumentError,
    gold_document_add,
    labels_posteriors_recompute,
    labels_votes_add,
)
from annotation.services.sampling.draws import samples_launch
from tests.factories import DocumentFactory, make_pair_world, make_worker

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    return make_pair_world(n=400, prevalence=0.2, seed=1)


def test_votes_accumulate_and_majority_set_on_the_third(world):
    doc = world.doc_ids[0]
    Label.objects.create(topic=world.topic, document_id=doc)
    assert labels_votes_add(topic=world.topic, votes={doc: True}) == []
    assert labels_votes_add(topic=world.topic, votes={doc: False}) == []
    assert labels_votes_add(topic=world.topic, votes={doc: False}) == [doc]
    label = Label.objects.get(topic=world.topic, document_id=doc)
    assert (label.votes_relevant, label.votes_total, label.majority) == (1, 3, False)


def test_missing_label_row_is_created(world):
    doc = world.doc_ids[1]
    labels_votes_add(topic=world.topic, votes={doc: True})
    assert Label.objects.get(topic=world.topic, document_id=doc).votes_total == 1


def test_an_even_tie_stays_undecided(world):
    doc = world.doc_ids[2]
    Label.objects.create(topic=world.topic, document_id=doc)
    labels_votes_add(topic=world.topic, votes={doc: True}, votes_needed=2)
    assert labels_votes_add(topic=world.topic, votes={doc: False}, votes_needed=2) == [doc]
    assert Label.objects.get(topic=world.topic, document_id=doc).majority is None


def test_gold_document_add_and_wrong_corpus(world):
    doc = world.topic.corpus.documents.get(pk=world.doc_ids[3])
    label = gold_document_add(topic=world.topic, document=doc, relevant=True)
    assert label.gold is True
    assert gold_document_add(topic=world.topic, document=doc, relevant=False).gold is False
    with pytest.raises(GoldDocumentError, match="not in the corpus"):
        gold_document_add(topic=world.topic, document=DocumentFactory.create(), relevant=True)


def test_dawid_skene_posteriors_follow_reliable_workers(world):
    world.topic.aggregator = Topic.Aggregator.DAWID_SKENE
    world.topic.save()
    launch = samples_launch(topic=world.topic, per_region=10, seed=2)
    truth = world.relevant
    good = [make_worker() for _ in range(2)]
    bad = make_worker()
    for hit in launch.hits:
        docs = list(hit.items.values_list("document_id", flat=True))
        for w in good:
            a = assignment_claim_for_hit(worker=w, hit=hit)
            assignment_submit(assignment_id=a.pk, worker=w, answers={d: d in truth for d in docs})
        a = assignment_claim_for_hit(worker=bad, hit=hit)
        assignment_submit(assignment_id=a.pk, worker=bad, answers={d: d not in truth for d in docs})
    assert labels_posteriors_recompute(topic=world.topic) == Label.objects.filter(topic=world.topic).count()
    for label in Label.objects.filter(topic=world.topic):
        assert label.posterior is not None
        if label.document_id in truth:
            assert label.posterior > 0.9
        else:
            assert label.posterior < 0.1


def test_dawid_skene_task_runs_after_commit(world, django_capture_on_commit_callbacks):
    world.topic.aggregator = Topic.Aggregator.DAWID_SKENE
    world.topic.save()
    launch = samples_launch(topic=world.topic, per_region=2, seed=2)
    hit = launch.hits[0]
    docs = list(hit.items.values_list("document_id", flat=True))
    with django_capture_on_commit_callbacks(execute=True):
        for _ in range(3):
            w = make_worker()
            a = assignment_claim_for_hit(worker=w, hit=hit)
            assignment_submit(assignment_id=a.pk, worker=w, answers=dict.fromkeys(docs, True))
    assert all(
        p is not None for p in Label.objects.filter(topic=world.topic, document_id__in=docs).values_list("posterior", flat=True)
    )
