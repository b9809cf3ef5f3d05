import pytest
from pyroaring import BitMap

from annotation.models import Label, Region, SampledDocument, SampleDraw, TopicClassifier
from annotation.services.sampling.draws import (
    SamplingError,
    planned_region_sizes,
    region_bitmap,
    region_sample_draw,
    sample_draw_reproduce,
    samples_draw,
)
from tests.factories import ClassifierFactory, TopicFactory, make_pair_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    return make_pair_world(n=1500, prevalence=0.15, seed=3)


def _drawn(draw):
    return sorted(SampledDocument.objects.filter(draw=draw).values_list("document_id", flat=True))


def test_stratified_draw_takes_disjoint_regions(world):
    draws = samples_draw(topic=world.topic, per_region=20, seed=11)
    assert sorted(d.region for d in draws) == ["A12", "B1", "B2"]
    a12, b1, b2 = world.a1 & world.a2, world.a1 - world.a2, world.a2 - world.a1
    expected_sets = {"A12": a12, "B1": b1, "B2": b2}
    for draw in draws:
        ids = _drawn(draw)
        assert draw.purpose == SampleDraw.Purpose.PAIR
        assert draw.region_size == len(expected_sets[draw.region])
        assert len(ids) == draw.drawn == min(20, draw.region_size)
        assert set(ids) <= expected_sets[draw.region]


def test_inclusion_probability_is_n_over_region_size(world):
    draws = samples_draw(topic=world.topic, per_region=20, seed=11)
    for draw in draws:
        probabilities = set(SampledDocument.objects.filter(draw=draw).values_list("inclusion_probability", flat=True))
        assert len(probabilities) == 1 and probabilities.pop() == pytest.approx(draw.drawn / draw.region_size)


def test_same_seed_same_documents_and_reproduce_matches(world):
    first = samples_draw(topic=world.topic, per_region=15, seed=99)
    for draw in first:
        assert sample_draw_reproduce(draw=draw) == _drawn(draw)
    other = make_pair_world(n=1500, prevalence=0.15, seed=3, topic_name="other-topic")
    # Same corpus layout (same seed), different topic and document ids: compare positions within regions.
    second = samples_draw(topic=other.topic, per_region=15, seed=99)
    for d1, d2 in zip(sorted(first, key=lambda d: d.region), sorted(second, key=lambda d: d.region)):
        r1 = list(region_bitmap(topic=world.topic, region=d1.region))
        r2 = list(region_bitmap(topic=other.topic, region=d2.region))
        assert [r1.index(i) for i in _drawn(d1)] == [r2.index(i) for i in _drawn(d2)]


def test_different_seed_different_documents(world):
    a = samples_draw(topic=world.topic, per_region=15, seed=1)
    other = make_pair_world(n=1500, prevalence=0.15, seed=3, topic_name="other-topic")
    b = samples_draw(topic=other.topic, per_region=15, seed=2)
    pos = lambda topic, d: [list(region_bitmap(topic=topic, region=d.region)).index(i) for i in _drawn(d)]  # noqa: E731
    a12a = next(d for d in a if d.region == "A12")
    a12b = next(d for d in b if d.region == "A12")
    assert pos(world.topic, a12a) != pos(other.topic, a12b)


def test_top_up_adds_without_redrawing_and_updates_probabilities(world):
    first = {d.region: d for d in samples_draw(topic=world.topic, per_region=10, seed=5)}
    again = samples_draw(topic=world.topic, per_region=10, seed=5)
    assert again == []  # totals already reached: nothing new
    topped = {d.region: d for d in samples_draw(topic=world.topic, per_region=25, seed=6)}
    for region, draw in topped.items():
        old, new = set(_drawn(first[region])), set(_drawn(draw))
        assert not old & new
        assert draw.requested == 15
        total = SampledDocument.objects.filter(topic=world.topic, region=region).count()
        assert total == min(25, draw.region_size)
        probabilities = set(
            SampledDocument.objects.filter(topic=world.topic, region=region).values_list("inclusion_probability", flat=True)
        )
        assert len(probabilities) == 1 and probabilities.pop() == pytest.approx(total / draw.region_size)
        # The top-up is reproducible too: its record holds the earlier documents as exclusions.
        assert sample_draw_reproduce(draw=draw) == sorted(new)


def test_top_up_of_small_region_stops_at_its_size():
    world = make_pair_world(n=400, prevalence=0.05, noise=0.0, seed=4)
    draws = samples_draw(topic=world.topic, per_region=500, seed=1)
    for draw in draws:
        assert draw.drawn == draw.region_size
        assert set(SampledDocument.objects.filter(draw=draw).values_list("inclusion_probability", flat=True)) == {1.0}
    assert samples_draw(topic=world.topic, per_region=600, seed=2) == []


def test_changed_region_refuses_top_up(world):
    samples_draw(topic=world.topic, per_region=5, seed=5)
    bigger = region_bitmap(topic=world.topic, region="A12") | BitMap(world.doc_ids[:3])
    with pytest.raises(SamplingError, match="top-up"):
        region_sample_draw(
            topic=world.topic, region="A12", bitmap=bigger, k=3, seed=1, purpose=SampleDraw.Purpose.PAIR
        )


def test_paper_design_samples_a1_a2_a12(world):
    draws = samples_draw(topic=world.topic, per_region=12, seed=3, design="paper")
    assert sorted(d.region for d in draws) == ["A1", "A12", "A2"]
    assert {d.purpose for d in draws} == {SampleDraw.Purpose.PAPER}
    a1 = next(d for d in draws if d.region == "A1")
    assert set(_drawn(a1)) <= world.a1
    assert a1.region_size == len(world.a1)


def test_uniform_and_extra_classifier_samples(world):
    extra = ClassifierFactory.create(corpus=world.topic.corpus, ids=world.doc_ids[:300])
    TopicClassifier.objects.create(topic=world.topic, classifier=extra)
    draws = samples_draw(topic=world.topic, per_region=10, uniform=40, seed=8)
    uniform = next(d for d in draws if d.region == Region.UNIFORM)
    assert uniform.purpose == SampleDraw.Purpose.UNIFORM
    assert uniform.region_size == 1500 and uniform.drawn == 40
    precision = next(d for d in draws if d.region == Region.RETRIEVED)
    assert precision.classifier == extra and precision.purpose == SampleDraw.Purpose.PRECISION
    assert set(_drawn(precision)) <= set(world.doc_ids[:300])
    assert precision.drawn == 10
    assert sample_draw_reproduce(draw=precision) == _drawn(precision)
    assert sample_draw_reproduce(draw=uniform) == _drawn(uniform)


def test_exclude_documents_are_never_drawn_and_reproduction_uses_them(world):
    excluded = BitMap(sorted(world.a1 & world.a2)[:50])
    draws = samples_draw(topic=world.topic, per_region=40, seed=4, exclude_documents=excluded)
    a12 = next(d for d in draws if d.region == "A12")
    assert not set(_drawn(a12)) & set(excluded)
    assert sample_draw_reproduce(draw=a12) == _drawn(a12)
    population = a12.region_size - 50
    assert SampledDocument.objects.filter(draw=a12).first().inclusion_probability == pytest.approx(40 / population)


def test_half_width_uses_the_planner(world):
    planned = planned_region_sizes(topic=world.topic, half_width=0.1)
    draws = samples_draw(topic=world.topic, half_width=0.1, seed=1)
    assert {d.region: d.requested for d in draws} == {r: n for r, n in planned.items() if n}
    # A tighter interval needs more documents.
    tighter = planned_region_sizes(topic=world.topic, half_width=0.05)
    assert sum(tighter.values()) > sum(planned.values())


def test_pilot_labels_change_the_plan(world):
    before = planned_region_sizes(topic=world.topic, half_width=0.1)
    draws = samples_draw(topic=world.topic, per_region=30, seed=2)
    # Pretend the pilot found A12 entirely relevant and B2 entirely irrelevant.
    for draw in draws:
        for doc_id in _drawn(draw):
            Label.objects.create(
                topic=world.topic, document_id=doc_id, votes_total=3, votes_relevant=3 if draw.region == "A12" else 0,
                majority=draw.region == "A12",
            )
    after = planned_region_sizes(topic=world.topic, half_width=0.1)
    assert after != before


def test_errors_are_clear(world):
    with pytest.raises(SamplingError, match="not both"):
        samples_draw(topic=world.topic, half_width=0.05, per_region=3)
    with pytest.raises(SamplingError, match="design"):
        samples_draw(topic=world.topic, per_region=3, design="cluster")
    lonely = TopicFactory.create()
    with pytest.raises(SamplingError, match="no classifier pair"):
        samples_draw(topic=lonely, per_region=3)
    with pytest.raises(SamplingError, match="certification plan"):
        samples_draw(topic=world.topic, per_region=3, purpose=SampleDraw.Purpose.CERTIFICATION)
    world.topic.status = "closed"
    world.topic.save()
    with pytest.raises(SamplingError, match="closed"):
        samples_draw(topic=world.topic, per_region=3)
    assert not SampleDraw.objects.exists()


def test_launch_task_runs_after_commit_and_is_safe_to_run_twice(world, django_capture_on_commit_callbacks):
    from annotation.models import Hit
    from annotation.services.sampling.draws import samples_launch_enqueue
    from annotation.tasks import samples_draw_task

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        samples_launch_enqueue(topic=world.topic, per_region=5, seed=3)
        assert not SampleDraw.objects.exists()  # nothing before the commit
    assert len(callbacks) == 1
    hits = Hit.objects.filter(topic=world.topic).count()
    assert SampledDocument.objects.filter(topic=world.topic).count() == 15 and hits == 3
    again = samples_draw_task.delay(topic_id=world.topic.pk, options={"per_region": 5, "seed": 3}).get()
    assert again == {"draws": [], "hits": 0, "documents": 0}
    assert Hit.objects.filter(topic=world.topic).count() == hits


def test_certification_draws_are_strata_of_their_own(world):
    from estimation.models import CertificationPlan

    pair_draws = samples_draw(topic=world.topic, per_region=0, uniform=50, seed=1)
    plan = CertificationPlan.objects.create(
        topic=world.topic, classifier=world.topic.pair.c1, metric=CertificationPlan.Metric.F1, target=0.7
    )
    used = BitMap(SampledDocument.objects.filter(topic=world.topic).values_list("document_id", flat=True))
    draws = samples_draw(
        topic=world.topic, per_region=0, uniform=80, seed=2, exclude_documents=used,
        purpose=SampleDraw.Purpose.CERTIFICATION, stratum_key=f"certification-plan:{plan.pk}",
    )
    assert [d.region for d in pair_draws] == ["U"] and [d.region for d in draws] == ["U"]
    cert = draws[0]
    assert cert.purpose == SampleDraw.Purpose.CERTIFICATION and cert.stratum_key == f"certification-plan:{plan.pk}"
    assert cert.drawn == 80  # not reduced by the 50 of the other (uniform) stratum...
    assert not set(_drawn(cert)) & set(used)  # ...but none of them reused
    assert sample_draw_reproduce(draw=cert) == _drawn(cert)


@pytest.mark.parametrize(
    "seed, stream, shift, expected",
    [
        # Values of the launch's former _draw_seed and the certification lock's former _region_seed,
        # computed before they became one function: locked plans and recorded draws must reproduce.
        (1, ("A12", None, 0), 31, 789541447415752385),
        (1, ("B1", None, 1), 31, 3077598378609736069),
        (2**61 + 7, ("R", 42, 3), 31, 2461571347191378136),
        (12345, ("U", None, 0), 31, 2312946141272659648),
        (1234, 0, 30, 3120934798227604556),
        (1234, 1, 30, 3113867781475239326),
        (2**61 + 7, 2, 30, 1641706296214528024),
        (0, 0, 30, 3187737299990140903),
    ],
)
def test_draw_seeds_are_those_recorded_before_the_seed_derivations_merged(seed, stream, shift, expected):
    from annotation.services.sampling.draws import draw_seed_derive, launch_stream

    if isinstance(stream, tuple):
        region, classifier_id, previous = stream
        stream = launch_stream(region=region, classifier_id=classifier_id, previous_draws=previous)
    assert draw_seed_derive(seed=seed, stream=stream, shift=shift) == expected
