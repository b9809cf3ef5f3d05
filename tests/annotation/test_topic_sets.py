"""Topic sets (seed 002): creation, classes, and the uniform launch with its preview and budget."""
from decimal import Decimal

import pytest

from annotation.models import (
    NONE_OF_THESE,
    Hit,
    HitItem,
    Label,
    Region,
    SampledDocument,
    SampleDraw,
    Topic,
    TopicClass,
)
from annotation.services.crowd.hits import BudgetExceeded
from annotation.services.sampling.draws import SamplingError, samples_draw, samples_launch
from annotation.services.topics.topic import topic_delete
from annotation.services.topics.topic_sets import (
    TopicSetError,
    topic_set_class_names,
    topic_set_classes,
    topic_set_create,
    topic_set_launch,
    topic_set_launch_preview,
)
from tests.factories import HOSTILE, CorpusFactory, make_documents, make_pair_world

pytestmark = pytest.mark.django_db

CLASSES = [("Sport", "Games and athletes"), ("Politics", "Elections, parliaments"), ("Science", "")]


@pytest.fixture
def corpus():
    corpus = CorpusFactory.create()
    make_documents(corpus, 40)
    return corpus


def _create(corpus, **kwargs):
    kwargs.setdefault("name", "News desks")
    kwargs.setdefault("classes", CLASSES)
    return topic_set_create(corpus=corpus, **kwargs)


def test_create_stores_kind_and_classes_in_order(corpus):
    topic = _create(corpus, allow_unsure=True, aggregator="dawid_skene", hit_size=4,
                    reward_per_hit=Decimal("0.25"), budget=Decimal("30"))
    topic.refresh_from_db()
    assert topic.kind == Topic.Kind.MULTICLASS and topic.is_multiclass
    assert topic.status == Topic.Status.DRAFT
    assert (topic.allow_unsure, topic.aggregator, topic.hit_size) == (True, "dawid_skene", 4)
    assert (topic.reward_per_hit, topic.budget) == (Decimal("0.25"), Decimal("30"))
    assert not hasattr(topic, "pair") or not Topic.objects.filter(pk=topic.pk, pair__isnull=False).exists()
    assert [(c.position, c.name, c.description) for c in topic_set_classes(topic=topic)] == [
        (1, "Sport", "Games and athletes"), (2, "Politics", "Elections, parliaments"), (3, "Science", "")]
    assert topic_set_class_names(topic=topic) == ["None of these", "Sport", "Politics", "Science"]
    assert NONE_OF_THESE == 0


@pytest.mark.parametrize("classes, fragment", [
    ([("Sport", "")], "between 2 and 20"),
    ([(f"c{i}", "") for i in range(21)], "between 2 and 20"),
    ([("Sport", ""), ("sport", "")], "already class 1"),
    ([("Sport", ""), ("", "empty")], "needs a name"),
    ([("Sport", ""), ("None of these", "")], "reserved"),
    ([("Sport", ""), ("x" * 201, "")], "at most 200"),
    (["Sport", "Politics"], "(name, description) pair"),
])
def test_create_refuses_bad_classes(corpus, classes, fragment):
    with pytest.raises(TopicSetError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        _create(corpus, classes=classes)
    assert not Topic.objects.exists() and not TopicClass.objects.exists()


def test_create_refuses_duplicate_name_bad_aggregator_and_amounts(corpus):
    _create(corpus)
    with pytest.raises(TopicSetError, match="already exists"):
        _create(corpus)
    with pytest.raises(TopicSetError, match="aggregator"):
        _create(corpus, name="b", aggregator="vote")
    with pytest.raises(TopicSetError, match="non-negative"):
        _create(corpus, name="c", budget=Decimal("-1"))
    with pytest.raises(TopicSetError, match="HIT holds"):
        _create(corpus, name="d", hit_size=0)
    with pytest.raises(TopicSetError, match="not an amount"):
        _create(corpus, name="e", reward_per_hit="abc")
    assert Topic.objects.count() == 1


def test_create_keeps_hostile_names_as_text(corpus):
    topic = _create(corpus, name=HOSTILE, classes=[(HOSTILE, HOSTILE), ("b", "")])
    assert topic_set_class_names(topic=topic)[1] == " ".join(HOSTILE.split())


def test_launch_draws_a_uniform_sample_and_queues_hits(corpus):
    topic = _create(corpus, hit_size=4)
    launch = topic_set_launch(topic=topic, documents=10, seed=5, publish=False)
    assert [(d.purpose, d.region, d.drawn) for d in launch.draws] == [("uniform", "U", 10)]
    assert len(launch.hits) == 3  # ceil(10 / 4)
    topic.refresh_from_db()
    assert topic.status == Topic.Status.ACTIVE
    sampled = set(SampledDocument.objects.filter(topic=topic).values_list("document_id", flat=True))
    assert len(sampled) == 10
    # Every sampled document has an inclusion probability of n / N = 10 / 40.
    assert set(SampledDocument.objects.filter(topic=topic).values_list("inclusion_probability", flat=True)) == {0.25}
    assert set(HitItem.objects.filter(topic=topic).values_list("document_id", flat=True)) == sampled
    # Labels exist with a vote counter per class 0..3.
    assert {tuple(v) for v in Label.objects.filter(topic=topic).values_list("class_votes", flat=True)} == {(0, 0, 0, 0)}


def test_launch_is_a_total_and_a_repeat_draws_the_difference(corpus):
    topic = _create(corpus, hit_size=5)
    topic_set_launch(topic=topic, documents=10, seed=1, publish=False)
    again = topic_set_launch(topic=topic, documents=10, seed=2, publish=False)
    assert again.draws == [] and again.hits == []
    more = topic_set_launch(topic=topic, documents=15, seed=3, publish=False)
    assert [d.drawn for d in more.draws] == [5] and len(more.hits) == 1
    assert SampledDocument.objects.filter(topic=topic).values("document_id").distinct().count() == 15
    assert set(SampledDocument.objects.filter(topic=topic).values_list("inclusion_probability", flat=True)) == {15 / 40}
    # Asking for more than the corpus judges the whole corpus, once.
    topic_set_launch(topic=topic, documents=1000, seed=4, publish=False)
    assert SampledDocument.objects.filter(topic=topic).count() == 40


def test_preview_counts_and_prices_what_the_launch_adds(corpus):
    topic = _create(corpus, hit_size=5, reward_per_hit=Decimal("0.20"), budget=Decimal("10.00"))
    preview = topic_set_launch_preview(topic=topic, documents=12)
    # 12 documents in HITs of 5: 3 HITs, 3 assignments each at $0.20 (local crowd: no fee).
    assert (preview.new_documents, preview.hits, preview.judgments) == (12, 3, 36)
    assert preview.cost == Decimal("1.80") and preview.committed == Decimal("0")
    assert preview.budget_left == Decimal("10.00") and preview.refused is None
    topic_set_launch(topic=topic, documents=12, seed=9, publish=False)
    after = topic_set_launch_preview(topic=topic, documents=20)
    assert (after.new_documents, after.hits) == (8, 2)
    assert after.committed == Decimal("1.80") and after.budget_left == Decimal("8.20")
    assert after.cost == Decimal("1.20")
    assert topic_set_launch_preview(topic=topic, documents=12).new_documents == 0


def test_budget_refuses_the_whole_launch_with_the_amounts(corpus):
    topic = _create(corpus, hit_size=5, reward_per_hit=Decimal("0.50"), budget=Decimal("3.00"))
    preview = topic_set_launch_preview(topic=topic, documents=20)
    # 4 HITs × 3 × $0.50 = $6.00 > $3.00.
    assert preview.refused is not None and "$6.00" in preview.refused and "$3.00" in preview.refused
    with pytest.raises(TopicSetError, match=r"\$6\.00") as caught:
        topic_set_launch(topic=topic, documents=20, seed=1, publish=False)
    assert isinstance(caught.value, BudgetExceeded)
    assert not SampleDraw.objects.filter(topic=topic).exists() and not Hit.objects.filter(topic=topic).exists()
    # Two HITs fit ($3.00 exactly).
    launch = topic_set_launch(topic=topic, documents=10, seed=1, publish=False)
    assert len(launch.hits) == 2


@pytest.mark.parametrize("documents", [0, -3, "many"])
def test_launch_refuses_bad_sizes(corpus, documents):
    topic = _create(corpus)
    with pytest.raises(TopicSetError):
        topic_set_launch(topic=topic, documents=documents, publish=False)
    with pytest.raises(TopicSetError):
        topic_set_launch_preview(topic=topic, documents=documents)


def test_binary_topics_are_not_topic_sets():
    world = make_pair_world(n=200)
    with pytest.raises(TopicSetError, match="single topic"):
        topic_set_launch(topic=world.topic, documents=5)
    with pytest.raises(TopicSetError, match="single topic"):
        topic_set_launch_preview(topic=world.topic, documents=5)


@pytest.mark.parametrize("options, fragment", [
    ({}, "per_region=0"),
    ({"per_region": 5}, "per_region=0"),
    ({"half_width": 0.1}, "per_region=0"),
    ({"per_region": 0, "complement": 5}, "dependence check"),
    ({"per_region": 0, "extra_per_classifier": 5}, "further classifiers"),
    ({"per_region": 0, "design": "paper"}, "paper design"),
])
def test_sampling_refuses_pair_options_for_a_topic_set(corpus, options, fragment):
    topic = _create(corpus)
    with pytest.raises(SamplingError, match=fragment):
        samples_draw(topic=topic, uniform=5, seed=1, **options)
    assert not SampleDraw.objects.filter(topic=topic).exists()


def test_samples_launch_takes_a_uniform_only_launch_of_a_topic_set(corpus):
    topic = _create(corpus)
    launch = samples_launch(topic=topic, per_region=0, uniform=6, seed=3, publish=False)
    assert [(d.region, d.drawn) for d in launch.draws] == [(Region.UNIFORM, 6)]


def test_binary_launch_unchanged():
    world = make_pair_world(n=400)
    launch = samples_launch(topic=world.topic, per_region=5, seed=11, publish=False)
    assert sorted(d.region for d in launch.draws) == ["A12", "B1", "B2"]
    assert all(v == [] for v in Label.objects.filter(topic=world.topic).values_list("class_votes", flat=True))


def test_a_topic_set_with_classes_only_can_be_deleted(corpus):
    topic = _create(corpus)
    topic_delete(topic=topic)
    assert not Topic.objects.exists() and not TopicClass.objects.exists()
