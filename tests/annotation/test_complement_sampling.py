"""Sampling region N (the complement of the pair's union) as part of the pair's stratified design (issue 11)."""
import pytest

from annotation.models import Document, HitItem, SampledDocument, SampleDraw, Topic
from annotation.services.corpora.retrieved_sets import bitmap_from_ids, bitmap_to_bytes
from annotation.services.sampling.draws import (
    SamplingError,
    region_bitmap,
    sample_draw_reproduce,
    samples_draw,
    samples_launch,
    samples_launch_enqueue,
)
from tests.factories import make_pair_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    return make_pair_world(n=1500, prevalence=0.1, seed=4)


def _ids(draw) -> set[int]:
    return set(SampledDocument.objects.filter(draw=draw).values_list("document_id", flat=True))


def _complement(world) -> set[int]:
    return set(world.doc_ids) - world.a1 - world.a2


def test_complement_is_drawn_as_a_pair_stratum_of_region_n(world):
    draws = samples_draw(topic=world.topic, per_region=10, complement=60, seed=3)
    assert sorted(d.region for d in draws) == ["A12", "B1", "B2", "N"]
    draw = next(d for d in draws if d.region == "N")
    neither = _complement(world)
    assert (draw.purpose, draw.stratum_key, draw.classifier) == (SampleDraw.Purpose.PAIR, "", None)
    assert draw.region_size == len(neither) and draw.requested == draw.drawn == 60
    ids = _ids(draw)
    assert len(ids) == 60 and ids <= neither
    probabilities = set(SampledDocument.objects.filter(draw=draw).values_list("inclusion_probability", flat=True))
    assert len(probabilities) == 1 and probabilities.pop() == pytest.approx(60 / len(neither))
    assert set(SampledDocument.objects.filter(draw=draw).values_list("region", flat=True)) == {"N"}
    # Reproducible from its record like any draw.
    assert sample_draw_reproduce(draw=draw) == sorted(ids)


def test_without_complement_nothing_changes(world):
    draws = samples_draw(topic=world.topic, per_region=10, seed=3)
    assert sorted(d.region for d in draws) == ["A12", "B1", "B2"]
    assert not SampledDocument.objects.filter(topic=world.topic, region="N").exists()


def test_complement_top_up_keeps_a_simple_random_sample(world):
    first = samples_draw(topic=world.topic, per_region=0, complement=40, seed=1)
    assert [d.region for d in first] == ["N"]
    assert samples_draw(topic=world.topic, per_region=0, complement=40, seed=1) == []  # totals already reached
    assert samples_draw(topic=world.topic, per_region=0, complement=20, seed=1) == []  # a smaller total draws nothing
    (topped,) = samples_draw(topic=world.topic, per_region=0, complement=100, seed=2)
    assert topped.requested == 60 and not _ids(first[0]) & _ids(topped)
    neither = _complement(world)
    rows = SampledDocument.objects.filter(topic=world.topic, region="N")
    assert rows.count() == 100 and set(rows.values_list("document_id", flat=True)) <= neither
    probabilities = set(rows.values_list("inclusion_probability", flat=True))
    assert len(probabilities) == 1 and probabilities.pop() == pytest.approx(100 / len(neither))
    assert sample_draw_reproduce(draw=topped) == sorted(_ids(topped))


def test_same_seed_same_complement_documents(world):
    (a,) = samples_draw(topic=world.topic, per_region=0, complement=30, seed=77)
    other = make_pair_world(n=1500, prevalence=0.1, seed=4, topic_name="other")
    (b,) = samples_draw(topic=other.topic, per_region=0, complement=30, seed=77)
    ra, rb = list(region_bitmap(topic=world.topic, region="N")), list(region_bitmap(topic=other.topic, region="N"))
    assert sorted(ra.index(i) for i in _ids(a)) == sorted(rb.index(i) for i in _ids(b))


def test_complement_larger_than_region_n_takes_it_whole(world):
    neither = _complement(world)
    (draw,) = samples_draw(topic=world.topic, per_region=0, complement=len(neither) + 500, seed=5)
    assert _ids(draw) == neither
    assert set(SampledDocument.objects.filter(draw=draw).values_list("inclusion_probability", flat=True)) == {1.0}


def test_negative_complement_is_refused(world):
    with pytest.raises(SamplingError, match="cannot be negative"):
        samples_draw(topic=world.topic, per_region=5, complement=-1)


def test_a_certification_complement_is_a_stratum_of_its_own(world):
    samples_draw(topic=world.topic, per_region=0, complement=30, seed=1)
    (draw,) = samples_draw(topic=world.topic, per_region=0, complement=30, seed=1,
                           purpose=SampleDraw.Purpose.CERTIFICATION, stratum_key="certification-plan:1",
                           exclude_documents=bitmap_from_ids(
                               SampledDocument.objects.filter(topic=world.topic).values_list("document_id", flat=True)))
    assert (draw.region, draw.purpose, draw.stratum_key) == ("N", SampleDraw.Purpose.CERTIFICATION,
                                                             "certification-plan:1")
    pair_ids = set(SampledDocument.objects.filter(topic=world.topic, draw__purpose=SampleDraw.Purpose.PAIR)
                   .values_list("document_id", flat=True))
    assert len(_ids(draw)) == 30 and not _ids(draw) & pair_ids


def test_a_grown_corpus_refuses_a_complement_top_up(world):
    samples_draw(topic=world.topic, per_region=0, complement=20, seed=1)
    corpus = world.topic.corpus
    new = Document.objects.create(corpus=corpus, external_id="late", title="t", text="x", content_hash="late")
    corpus.documents_bitmap = bitmap_to_bytes(bitmap_from_ids([*world.doc_ids, new.pk]))
    corpus.save(update_fields=["documents_bitmap"])
    with pytest.raises(SamplingError, match="top-up would not be a simple random sample"):
        samples_draw(topic=world.topic, per_region=0, complement=40, seed=2)


def test_launch_queues_the_complement_into_hits(world):
    launch = samples_launch(topic=world.topic, per_region=5, complement=25, seed=9, publish=False)
    n_ids = set(SampledDocument.objects.filter(topic=world.topic, region="N").values_list("document_id", flat=True))
    assert len(n_ids) == 25
    queued = set(HitItem.objects.filter(hit__topic=world.topic).values_list("document_id", flat=True))
    assert n_ids <= queued and launch.documents == 25 + sum(d.drawn for d in launch.draws if d.region != "N")


def test_enqueued_launch_passes_the_complement_to_the_task(world, django_capture_on_commit_callbacks):
    Topic.objects.filter(pk=world.topic.pk).update(status=Topic.Status.DRAFT)
    with django_capture_on_commit_callbacks(execute=True):
        samples_launch_enqueue(topic=world.topic, per_region=5, complement=15, seed=9)
    assert SampledDocument.objects.filter(topic=world.topic, region="N").count() == 15


def test_a_nested_pair_from_before_the_rule_is_not_sampled(world):
    """Issue 11 (Reuters `earn`): a partner containing the classifier buys a recall of 1 by construction."""
    from annotation.models import ClassifierPair
    from annotation.services.sampling.draws import planned_region_sizes
    from tests.factories import ClassifierFactory

    container = ClassifierFactory.create(corpus=world.topic.corpus, name="container", ids=sorted(world.a1 | world.a2))
    ClassifierPair.objects.filter(topic=world.topic).update(c2=container)
    world.topic.refresh_from_db()
    for call in (lambda: samples_draw(topic=world.topic, per_region=10, seed=1),
                 lambda: samples_draw(topic=world.topic, per_region=0, complement=10, seed=1),
                 lambda: planned_region_sizes(topic=world.topic, half_width=0.1)):
        with pytest.raises(SamplingError, match="cannot be sampled: Classifier .* retrieves nothing"):
            call()
    assert not SampledDocument.objects.filter(topic=world.topic).exists()
    # A uniform sample needs no pair and is still drawn.
    assert [d.region for d in samples_draw(topic=world.topic, per_region=0, uniform=20, seed=1)] == ["U"]
