"""Labels that are not a plain majority: undecided certification documents and sampled documents made gold.

* A certification document whose three judgments leave no majority (unsure answers, a tie among the sure
  votes) takes the value least favourable to a pass, so the plan is decided (never stalls) and such a
  document can only pull the bound down.
* A judged document of an estimation sample that an analyst makes gold keeps its place in its sample with
  the known answer: dropping it would leave the rest of the sample non-random.
"""
from __future__ import annotations

import pytest

from annotation.models import Label, SampledDocument
from annotation.services.corpora.retrieved_sets import classifier_bitmap
from annotation.services.crowd.gold import gold_add_from_judged
from estimation.models import CertificationPlan
from estimation.services.certification_locks import certification_plan_lock
from estimation.services.certification_plans import certification_plan_create
from estimation.services.certification_verdicts import certification_decide
from estimation.services.inputs import topic_inputs_gather
from estimation.services.recompute import snapshots_stale_topic_ids, topic_snapshot_create
from tests.factories import UserFactory, c1, certification_ids, judge, make_pair_world, pilot

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    return make_pair_world(n=4000, prevalence=0.2, recall1=0.85, recall2=0.6, noise=0.01, seed=5)


def _locked(world):
    manager = UserFactory.create(username="manager")
    plan = certification_plan_create(topic=world.topic, classifier=c1(world),
                                     metric=CertificationPlan.Metric.PAIR_RECALL, target=0.6, user=manager)
    assert plan.pilot["feasible"], plan.pilot["reason"]
    return certification_plan_lock(plan_id=plan.pk, user=manager, seed=3)


def _undecided(world, doc_ids):
    """Three judgments and no majority (e.g. one unsure answer and a 1–1 tie)."""
    for doc_id in doc_ids:
        Label.objects.update_or_create(topic=world.topic, document_id=doc_id,
                                       defaults={"votes_total": 3, "votes_relevant": 1, "votes_unsure": 1,
                                                 "majority": None})


def test_undecided_certification_documents_take_the_least_favourable_value_and_the_plan_is_decided(world):
    pilot(world)
    plan = _locked(world)
    ids = sorted(certification_ids(plan))
    retrieved = classifier_bitmap(classifier=c1(world))
    # Undecided: two relevant documents the classifier retrieved (they helped it) and two irrelevant ones it
    # missed (harmless to it), so the least favourable reading lowers recall on both counts.
    hits = [d for d in ids if d in retrieved and d in world.relevant][:2]
    harmless = [d for d in ids if d not in retrieved and d not in world.relevant][:2]
    assert len(hits) == 2 and len(harmless) == 2
    judge(world, [d for d in ids if d not in hits + harmless])
    _undecided(world, hits + harmless)

    verdict = certification_decide(plan_id=plan.pk)
    assert verdict is not None, "an undecided label must not leave the plan pending forever"
    evaluation = verdict.inputs["evaluation"]
    assert evaluation["undecided_least_favourable"] == 4
    labels = {doc_id: label for doc_id, _region, label, _retrieved in verdict.inputs["documents"]}
    assert all(labels[d] == 0 for d in hits) and all(labels[d] == 1 for d in harmless)


def test_the_least_favourable_reading_never_raises_the_bound(world):
    pilot(world)
    plan = _locked(world)
    ids = sorted(certification_ids(plan))
    judge(world, ids)
    from estimation.services.certification_verdicts import _certification_documents, _evaluate

    truthful = _evaluate(plan=plan, documents=_certification_documents(plan=plan))
    assert truthful is not None
    retrieved = classifier_bitmap(classifier=c1(world))
    _undecided(world, [d for d in ids if (d in retrieved) == (d in world.relevant)][:6])
    pessimistic = _evaluate(plan=plan, documents=_certification_documents(plan=plan))
    assert pessimistic is not None
    assert pessimistic[0]["lower_bound"] < truthful[0]["lower_bound"]


def test_a_sampled_document_made_gold_keeps_its_place_with_the_known_answer(world):
    sampled = sorted(pilot(world))
    before = topic_inputs_gather(topic=world.topic)
    sizes = {key: (s.sampled, s.judged) for key, s in before.samples.items()}
    doc_id = sampled[0]
    truth = doc_id in world.relevant
    # The crowd got it wrong; the analyst makes it gold with the right answer.
    Label.objects.filter(topic=world.topic, document_id=doc_id).update(
        majority=not truth, votes_relevant=0 if truth else 3)
    topic_snapshot_create(topic_id=world.topic.pk)
    assert world.topic.pk not in snapshots_stale_topic_ids()
    gold_add_from_judged(topic=world.topic, document_id=doc_id, relevant=truth)
    assert world.topic.pk in snapshots_stale_topic_ids(), "a new gold answer must make the report stale"

    after = topic_inputs_gather(topic=world.topic)
    assert {key: (s.sampled, s.judged) for key, s in after.samples.items()} == sizes
    key = SampledDocument.objects.filter(topic=world.topic, document_id=doc_id).values_list("region", flat=True)[0]
    sample = after.samples[key]
    assert sample.labels[sample.document_ids.index(doc_id)] == (1.0 if truth else 0.0)
    # Its votes (which mix gold-check judgments) are kept out of the topic's agreement figures.
    assert len(after.votes) == len(before.votes) - 1
