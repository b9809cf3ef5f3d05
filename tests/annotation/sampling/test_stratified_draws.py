"""Issue 23: a topic with a scorer draws region N (retrieved by neither classifier) by score strata.

Each score stratum is its own simple random sample: its documents carry inclusion probability n_h/N_h (top-ups
included), its draws reproduce from their records, and without a scorer N is drawn exactly as before.
"""
from __future__ import annotations

import numpy as np
import pytest

from annotation.models import Classifier, ClassifierScore, Region, SampledDocument, SampleDraw
from annotation.services.corpora.retrieved_sets import bitmap_draw, pair_regions
from annotation.services.sampling.draws import (
    draw_seed_derive,
    launch_stream,
    sample_draw_reproduce,
    samples_draw,
)
from annotation.services.sampling.strata import score_stratum_parse
from annotation.services.topics.topic import topic_scorer_set
from tests.factories import ClassifierFactory, make_pair_world

pytestmark = pytest.mark.django_db


def scorer_for(world, *, seed: int = 3, name: str = "model") -> Classifier:
    """A scores classifier over every document: relevant ones score higher on average (a useful, imperfect scorer)."""
    rng = np.random.default_rng(seed)
    scores = {d: float(rng.normal(0.7 if d in world.relevant else 0.3, 0.15)) for d in world.doc_ids}
    scorer = ClassifierFactory.create(corpus=world.topic.corpus, name=name, kind=Classifier.Kind.SCORES,
                                      ids=sorted(d for d, s in scores.items() if s >= 0.9),
                                      definition={"threshold": 0.9})
    ClassifierScore.objects.bulk_create([ClassifierScore(classifier=scorer, document_id=d, score=s)
                                         for d, s in scores.items()])
    return scorer


def _neither(world):
    pair = world.topic.pair
    return pair_regions(c1=pair.c1, c2=pair.c2).by_code(Region.NEITHER)


def test_with_a_scorer_n_is_drawn_by_score_strata_each_a_simple_random_sample():
    world = make_pair_world(n=3000, seed=11)
    topic_scorer_set(topic=world.topic, scorer=scorer_for(world))
    samples_draw(topic=world.topic, per_region=30, complement=120, seed=5)
    draws = list(SampleDraw.objects.filter(topic=world.topic, region=Region.NEITHER))
    assert len(draws) >= 2 and all(score_stratum_parse(d.stratum_key) for d in draws)
    neither = _neither(world)
    # The strata partition N: their sizes add up to |N| and no document is in two.
    assert sum(d.region_size for d in draws) == len(neither)
    drawn = [set(SampledDocument.objects.filter(draw=d).values_list("document_id", flat=True)) for d in draws]
    assert sum(len(s) for s in drawn) == len(set().union(*drawn)) == sum(d.drawn for d in draws)
    assert set().union(*drawn) <= set(neither)
    for draw, ids in zip(draws, drawn, strict=True):
        probabilities = SampledDocument.objects.filter(draw=draw).values_list("inclusion_probability", flat=True)
        assert list(probabilities) == [pytest.approx(draw.drawn / draw.region_size)] * draw.drawn
        assert sample_draw_reproduce(draw=draw) == sorted(ids)
    # 120 shared in the joint plan's proportions, each stratum at least 10 (or all of it).
    assert 120 <= sum(d.drawn for d in draws) <= 120 + 10 * len(draws)


def test_a_top_up_of_a_score_stratum_keeps_its_strata_and_sets_n_over_big_n():
    world = make_pair_world(n=3000, seed=12)
    topic_scorer_set(topic=world.topic, scorer=scorer_for(world))
    samples_draw(topic=world.topic, per_region=20, complement=80, seed=6)
    keys = set(SampleDraw.objects.filter(topic=world.topic, region=Region.NEITHER).values_list("stratum_key", flat=True))
    samples_draw(topic=world.topic, per_region=20, complement=200, seed=7)
    draws = SampleDraw.objects.filter(topic=world.topic, region=Region.NEITHER)
    assert set(draws.values_list("stratum_key", flat=True)) == keys  # the same strata, topped up
    for key in keys:
        stratum = draws.filter(stratum_key=key)
        size = stratum.first().region_size
        rows = SampledDocument.objects.filter(draw__in=stratum)
        assert list(rows.values_list("inclusion_probability", flat=True)) == [
            pytest.approx(rows.count() / size)] * rows.count()
        for draw in stratum:
            assert sample_draw_reproduce(draw=draw) == sorted(
                SampledDocument.objects.filter(draw=draw).values_list("document_id", flat=True))


def test_the_same_seed_draws_the_same_strata():
    world = make_pair_world(n=2000, seed=13)
    topic_scorer_set(topic=world.topic, scorer=scorer_for(world))
    first = samples_draw(topic=world.topic, per_region=0, complement=60, seed=42)
    ids = {d.stratum_key: sorted(SampledDocument.objects.filter(draw=d).values_list("document_id", flat=True))
           for d in first}
    SampleDraw.objects.filter(topic=world.topic).delete()
    again = samples_draw(topic=world.topic, per_region=0, complement=60, seed=42)
    assert {d.stratum_key: sorted(SampledDocument.objects.filter(draw=d).values_list("document_id", flat=True))
            for d in again} == ids


def test_without_a_scorer_n_is_one_simple_random_sample_as_before():
    world = make_pair_world(n=2000, seed=14)
    samples_draw(topic=world.topic, per_region=0, complement=70, seed=9)
    (draw,) = SampleDraw.objects.filter(topic=world.topic, region=Region.NEITHER)
    assert draw.stratum_key == "" and draw.drawn == 70
    neither = _neither(world)
    # Today's design, draw for draw: the seed of stream "N:0:0" of the launch seed, one SRS of N.
    expected = bitmap_draw(bitmap=neither, k=70, exclude=None, rng=np.random.default_rng(
        draw_seed_derive(seed=9, stream=launch_stream(region="N", classifier_id=None, previous_draws=0))))
    assert sorted(SampledDocument.objects.filter(draw=draw).values_list("document_id", flat=True)) == sorted(expected)
    assert list(SampledDocument.objects.filter(draw=draw).values_list("inclusion_probability", flat=True)) == [
        pytest.approx(70 / len(neither))] * 70
