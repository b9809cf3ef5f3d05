"""A Dawid–Skene topic's report carries the uncertainty of the workers' accuracies (issue 24 item 5).

Through the services: a pair world, samples launched as HITs, a pool of simulated workers of accuracy 0.75
answering through ``assignment_submit``, posteriors by ``labels_posteriors_recompute``, then the report.
The point-posterior interval (the report before: stored EM posteriors taken as the labels' probabilities)
is computed here by the stats function from the stored posteriors, so the comparison is measured.
"""
from __future__ import annotations

import html as html_lib
import re

import numpy as np
import pytest
from django.template.loader import render_to_string

from annotation.models import Label, Topic
from annotation.services.crowd.assignments import assignment_claim_for_hit, assignment_submit
from annotation.services.crowd.labels import labels_posteriors_recompute
from annotation.services.sampling.draws import samples_launch
from estimation.services.inputs import topic_inputs_gather
from estimation.services.report_common import region_sample
from estimation.services.reports import report_parameters, topic_report_build, topic_report_from_inputs
from estimation.stats import pair_recall
from tests.factories import make_pair_world, make_worker
from tests.simulations.dawid_skene import pair_topic_inputs

pytestmark = pytest.mark.django_db

DRAWS, SEED = 2_000, 11


def _judged_world(*, accuracy: float = 0.75, per_region: int = 25, workers: int = 6, seed: int = 3):
    world = make_pair_world(n=1500, prevalence=0.2, recall1=0.7, recall2=0.6, noise=0.03, seed=seed,
                            aggregator=Topic.Aggregator.DAWID_SKENE)
    launch = samples_launch(topic=world.topic, per_region=per_region, seed=seed)
    rng = np.random.default_rng(seed)
    pool = [make_worker() for _ in range(workers)]
    for hit in launch.hits:
        docs = list(hit.items.values_list("document_id", flat=True))
        for w in rng.choice(workers, size=3, replace=False):
            a = assignment_claim_for_hit(worker=pool[w], hit=hit)
            answers = {d: bool((d in world.relevant) == (rng.random() < accuracy)) for d in docs}
            assignment_submit(assignment_id=a.pk, worker=pool[w], answers=answers)
    assert labels_posteriors_recompute(topic=world.topic) > 0
    return world


def _point_posterior_interval(inputs) -> pair_recall.StratifiedPairRecall:
    """The report's stratified estimate as it was: the stored EM posteriors as fixed label probabilities."""
    sizes = inputs.region_sizes
    return pair_recall.stratified_pair_recall(
        a12=region_sample(inputs.sample("A12"), sizes["A12"]), b1=region_sample(inputs.sample("B1"), sizes["B1"]),
        b2=region_sample(inputs.sample("B2"), sizes["B2"]), confidence=inputs.confidence, draws=DRAWS, seed=SEED,
        label_probabilities={k: inputs.sample(k).labels for k in ("A12", "B1", "B2")})


def test_dawid_skene_report_interval_is_wider_than_the_point_posteriors_and_holds_its_estimate():
    world = _judged_world()
    assert Label.objects.filter(topic=world.topic, posterior__isnull=False).exists()
    inputs = topic_inputs_gather(topic=world.topic, parameters=report_parameters(draws=DRAWS, seed=SEED))
    crowd = inputs.crowd_judgments
    assert crowd is not None and len(crowd.items) == 3 * len(crowd.document_ids)  # three votes per document
    assert len(set(crowd.workers)) == 6 and max(crowd.workers) == 5  # renumbered, no worker id stored
    report = topic_report_from_inputs(inputs=inputs)
    old = _point_posterior_interval(inputs)
    assert report["label_noise"]["source"] == "dawid_skene_draws"
    assert report["label_noise"]["accuracy_uncertainty"] is True and report["label_noise"]["widened"] is True
    low, high = report["label_noise"]["worker_accuracy_interval"]
    assert 0.5 < low < report["label_noise"]["worker_accuracy"] < high < 1.0
    for name, before in (("C1", old.r1), ("C2", old.r2)):
        now = report["recall_stratified"][name]
        assert now["high"] - now["low"] > before.high - before.low, (name, now, before)
        assert now["low"] <= now["estimate"] <= now["high"]
    rows = {row["role"]: row for row in report["classifiers"]}
    assert rows["c1"]["recall"]["low"] <= rows["c1"]["recall"]["estimate"] <= rows["c1"]["recall"]["high"]
    # The words a reader sees, in the JSON and on the page.
    messages = " ".join(d["message"] for d in report["diagnostics"])
    assert "how accurate each worker is can only be estimated" in messages
    body = render_to_string("reports/_report_body.html", {
        "topic": world.topic, "report": report, "snapshot": {"version": 1}, "diagnostics": report["diagnostics"],
        "certification": {}, "certification_state": {"state": "none"}})
    paragraph = html_lib.unescape(re.search(r'<p class="muted" id="label-noise">(.*?)</p>', body, re.S).group(1))
    assert "how uncertain the workers’ accuracies are" in paragraph.replace("'", "’")
    assert f"{low:.2f}–{high:.2f}" in paragraph


def test_dawid_skene_report_is_reproducible_and_majority_topics_gather_no_judgments():
    world = _judged_world(per_region=10, seed=5)
    first = topic_report_build(topic=world.topic, draws=DRAWS, seed=SEED)
    second = topic_report_build(topic=world.topic, draws=DRAWS, seed=SEED)
    assert first["recall_stratified"] == second["recall_stratified"]
    world.topic.aggregator = Topic.Aggregator.MAJORITY
    world.topic.save(update_fields=["aggregator"])
    inputs = topic_inputs_gather(topic=world.topic, parameters=report_parameters(draws=DRAWS, seed=SEED))
    assert inputs.crowd_judgments is None and "crowd_judgments" not in inputs.as_dict()
    assert topic_report_from_inputs(inputs=inputs)["label_noise"]["source"] == "votes"


def test_pure_report_of_600_documents_carries_the_accuracies_only_with_judgments():
    """The report from hand-built inputs (tests.simulations.dawid_skene.pair_topic_inputs: 600 judged documents ×
    3 votes from 20 workers of accuracy ≈ 0.7): without judgments it is the stored-posterior report as before."""
    before = topic_report_from_inputs(inputs=pair_topic_inputs(accuracy=0.7, seed=4, with_judgments=False,
                                                                 draws=DRAWS))
    after = topic_report_from_inputs(inputs=pair_topic_inputs(accuracy=0.7, seed=4, draws=DRAWS))
    assert before["label_noise"]["source"] == "dawid_skene_posteriors"
    assert before["label_noise"]["accuracy_uncertainty"] is False
    assert after["label_noise"]["source"] == "dawid_skene_draws" and after["label_noise"]["draws"] == 200
    for name in ("C1", "C2"):
        old, new = before["recall_stratified"][name], after["recall_stratified"][name]
        assert new["high"] - new["low"] > old["high"] - old["low"]
        assert new["low"] <= new["estimate"] <= new["high"]
    again = topic_report_from_inputs(inputs=pair_topic_inputs(accuracy=0.7, seed=4, draws=DRAWS))
    assert again["recall_stratified"] == after["recall_stratified"]  # seeded: the same labels, the same report
