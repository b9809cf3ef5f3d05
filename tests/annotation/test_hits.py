from decimal import Decimal

import pytest

from annotation.models import Hit, HitItem, Label, SampledDocument, SampleDraw, Topic
from annotation.services.crowd import crowds
from annotation.services.crowd import mturk as mturk_service
from annotation.services.crowd.hits import BudgetExceeded, hits_create_for_draws, topic_committed_cost
from annotation.services.crowd.labels import gold_document_add
from annotation.services.sampling.draws import samples_draw, samples_launch
from tests.factories import make_pair_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    return make_pair_world(n=1200, prevalence=0.15, seed=5, hit_size=5)


def test_hits_group_documents_by_hit_size(world):
    draws = samples_draw(topic=world.topic, per_region=12, seed=1)
    hits = hits_create_for_draws(topic=world.topic, draws=draws)
    sampled = set(SampledDocument.objects.filter(topic=world.topic).values_list("document_id", flat=True))
    assert len(hits) == -(-len(sampled) // 5)
    items = list(HitItem.objects.filter(topic=world.topic))
    assert {i.document_id for i in items} == sampled
    assert len(items) == len(sampled)  # each document in exactly one HIT
    sizes = sorted(HitItem.objects.filter(hit=h).count() for h in hits)
    assert sizes[-1] == 5 and sizes[0] >= 1
    for hit in hits:
        assert hit.reward == world.topic.reward_per_hit and hit.max_assignments == 3
    # A label row waits for every queued document.
    assert set(Label.objects.filter(topic=world.topic).values_list("document_id", flat=True)) == sampled


def test_a_document_in_two_samples_is_queued_once(world):
    pair = samples_draw(topic=world.topic, per_region=30, seed=1)
    hits_create_for_draws(topic=world.topic, draws=pair)
    paper = samples_draw(topic=world.topic, per_region=30, seed=2, design="paper")
    hits_create_for_draws(topic=world.topic, draws=paper)
    pair_docs = set(SampledDocument.objects.filter(draw__purpose=SampleDraw.Purpose.PAIR).values_list("document_id", flat=True))
    paper_docs = set(SampledDocument.objects.filter(draw__purpose=SampleDraw.Purpose.PAPER).values_list("document_id", flat=True))
    assert pair_docs & paper_docs  # the designs overlap...
    queued = list(HitItem.objects.filter(topic=world.topic, is_gold=False).values_list("document_id", flat=True))
    assert len(queued) == len(set(queued)) == len(pair_docs | paper_docs)  # ...but each is queued once


def test_budget_refuses_and_records_nothing(world):
    world.topic.budget = Decimal("1.00")  # 3 HITs of 3 × $0.10
    world.topic.save()
    with pytest.raises(BudgetExceeded, match=r"over the budget of \$1.00"):
        samples_launch(topic=world.topic, per_region=10, seed=1)
    assert not SampleDraw.objects.filter(topic=world.topic).exists()
    assert not Hit.objects.filter(topic=world.topic).exists()
    launch = samples_launch(topic=world.topic, per_region=3, seed=1)  # 9 documents → 2 HITs → $0.60
    assert len(launch.hits) == 2
    assert topic_committed_cost(topic=world.topic) == Decimal("0.60")
    with pytest.raises(BudgetExceeded, match=r"\$0.60 already committed"):
        samples_launch(topic=world.topic, per_region=6, seed=2)


def test_mturk_cost_includes_commission(world):
    world.topic.crowd = Topic.Crowd.MTURK
    world.topic.reward_per_hit = Decimal("0.50")
    assert crowds.crowd_cost_per_assignment(world.topic) == Decimal("0.60")
    world.topic.reward_per_hit = Decimal("0.02")  # 20% would be less than Amazon's $0.01 minimum
    assert crowds.crowd_cost_per_assignment(world.topic) == Decimal("0.03")
    # The commission is rounded to the cent per assignment (2.6¢ → 3¢), as Amazon charges it.
    world.topic.reward_per_hit = Decimal("0.13")
    assert crowds.crowd_cost_per_assignment(world.topic) == Decimal("0.16")


def test_unknown_crowd_is_a_clear_error(world):
    world.topic.crowd = "carrier-pigeon"
    with pytest.raises(crowds.CrowdUnavailable, match="unknown crowd"):
        crowds.crowd_cost_per_assignment(world.topic)


def test_mturk_publish_dispatches_each_hit(world, monkeypatch):
    world.topic.crowd = Topic.Crowd.MTURK
    world.topic.save()
    published = []

    monkeypatch.setattr(mturk_service, "mturk_hit_publish_on_commit", lambda *, hit: published.append(hit.pk))
    launch = samples_launch(topic=world.topic, per_region=3, seed=1)
    assert published == [h.pk for h in launch.hits]


def test_launch_activates_a_draft_topic():
    world = make_pair_world(n=300, seed=2, status=Topic.Status.DRAFT)
    samples_launch(topic=world.topic, per_region=2, seed=1)
    world.topic.refresh_from_db()
    assert world.topic.status == Topic.Status.ACTIVE


def test_gold_item_mixed_into_each_hit(world):
    gold_docs = world.doc_ids[-4:]
    for i, doc_id in enumerate(gold_docs):
        gold_document_add(topic=world.topic, document=world.topic.corpus.documents.get(pk=doc_id), relevant=i % 2 == 0)
    draws = samples_draw(topic=world.topic, per_region=10, seed=1)
    hits = hits_create_for_draws(topic=world.topic, draws=draws)
    for hit in hits:
        gold = list(HitItem.objects.filter(hit=hit, is_gold=True).values_list("document_id", flat=True))
        assert len(gold) == 1 and gold[0] in gold_docs
        assert HitItem.objects.filter(hit=hit, is_gold=False).count() <= 5
    uses = [HitItem.objects.filter(topic=world.topic, is_gold=True, document_id=g).count() for g in gold_docs]
    assert max(uses) - min(uses) <= 1  # spread evenly
