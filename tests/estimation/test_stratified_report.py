"""Issue 23: the report of a topic whose N sample was drawn by score strata.

The design-based figures weigh each stratum by its own size (estimation.stats.stratified), the headline rests on
them (basis "design") and says N was score-stratified, and in a small seeded end-to-end study the headline's
interval covers the corpus's true recall of both classifiers.
"""
from __future__ import annotations

import numpy as np
import pytest

from annotation.models import Classifier, ClassifierScore, Region, SampledDocument, SampleDraw
from annotation.services.sampling.draws import samples_draw
from annotation.services.topics.topic import topic_scorer_set
from estimation.services.inputs import topic_inputs_gather
from estimation.services.reports import topic_report_build
from estimation.stats import stratified
from tests.factories import ClassifierFactory, judge_with_simulated_votes, make_pair_world

pytestmark = pytest.mark.django_db


def _scorer(world, *, seed: int = 3) -> Classifier:
    rng = np.random.default_rng(seed)
    scores = {d: float(rng.normal(1.5 if d in world.relevant else 0.0, 1.0)) for d in world.doc_ids}
    scorer = ClassifierFactory.create(corpus=world.topic.corpus, name="model", kind=Classifier.Kind.SCORES,
                                      ids=sorted(d for d, s in scores.items() if s >= 2.5),
                                      definition={"threshold": 2.5})
    ClassifierScore.objects.bulk_create([ClassifierScore(classifier=scorer, document_id=d, score=s)
                                         for d, s in scores.items()])
    return scorer


def _stratified_world(*, seed: int, accuracy: float):
    world = make_pair_world(n=4000, prevalence=0.08, recall1=0.7, recall2=0.6, seed=seed)
    topic_scorer_set(topic=world.topic, scorer=_scorer(world, seed=seed))
    samples_draw(topic=world.topic, per_region=120, complement=400, seed=seed)
    judge_with_simulated_votes(world, accuracy=accuracy, seed=seed)
    return world


def test_the_report_weighs_each_score_stratum_by_its_own_size():
    world = _stratified_world(seed=21, accuracy=1.0)
    inputs = topic_inputs_gather(topic=world.topic)
    parts = inputs.sample_strata("N")
    draws = SampleDraw.objects.filter(topic=world.topic, region=Region.NEITHER)
    assert len(parts) == draws.count() >= 2
    assert sum(p.size for p in parts) == inputs.region_sizes["N"]
    report = topic_report_build(topic=world.topic, draws=2_000, seed=7)
    block = report["design_based"]
    assert block["stratified"] is True
    # The same figures as the stats module on the strata the draws recorded (true labels: unanimous votes).
    strata = []
    for key in ("A12", "B1", "B2"):
        sample = inputs.sample(key)
        strata.append(stratified.Stratum(region=key, size=sample.size, judged=sample.judged, relevant=sample.relevant))
    for draw in draws.order_by("stratum_key"):
        ids = set(SampledDocument.objects.filter(draw=draw).values_list("document_id", flat=True))
        strata.append(stratified.Stratum(region="U", size=draw.region_size, judged=len(ids),
                                         relevant=float(len(ids & world.relevant)), key=draw.stratum_key))
    expected = stratified.stratified_design_recall(strata=strata, confidence=0.95, draws=2_000, seed=7)
    assert (block["C1"]["estimate"], block["C1"]["low"], block["C1"]["high"]) == pytest.approx(
        (expected.r1.point, expected.r1.low, expected.r1.high))
    rows = block["strata"]
    assert [r["region"] for r in rows].count("N") == len(parts)
    assert {r["stratum"]: (r["size"], r["judged"]) for r in rows if r["region"] == "N"} == {
        p.key: (p.size, p.judged) for p in parts}
    headline = report["classifiers"][0]["headline"]
    assert headline["basis"] == "design"
    assert "sampled in" in headline["statement"] and "strata" in headline["statement"]


@pytest.mark.parametrize("accuracy", [1.0, 0.95])
def test_the_headline_is_design_based_and_covers_the_true_recall(accuracy):
    world = _stratified_world(seed=33, accuracy=accuracy)
    report = topic_report_build(topic=world.topic, draws=2_000, seed=5)
    for row, which in zip(report["classifiers"][:2], (1, 2), strict=True):
        headline = row["headline"]
        assert headline["basis"] == "design", headline
        assert headline["low"] <= world.true_recall(which) <= headline["high"], (which, headline,
                                                                                 world.true_recall(which))


def test_without_a_scorer_the_report_has_no_strata():
    world = make_pair_world(n=2000, seed=5)
    samples_draw(topic=world.topic, per_region=60, complement=150, seed=5)
    judge_with_simulated_votes(world, accuracy=1.0, seed=5)
    inputs = topic_inputs_gather(topic=world.topic)
    assert inputs.strata == {} and "strata" not in inputs.as_dict()
    block = topic_report_build(topic=world.topic, draws=2_000, seed=7)["design_based"]
    assert "stratified" not in block and "strata" not in block


def test_the_strata_table_lists_each_stratum_from_the_report_json():
    from django.template.loader import render_to_string

    world = _stratified_world(seed=21, accuracy=1.0)
    block = topic_report_build(topic=world.topic, draws=2_000, seed=7)["design_based"]
    html = render_to_string("reports/_strata.html", {"design": block})
    assert 'id="design-strata-table"' in html
    for row in block["strata"]:
        assert row["label"] in html.replace("&#x27;", "'")
    assert render_to_string("reports/_strata.html", {"design": {"C1": {}}}).strip() == ""
