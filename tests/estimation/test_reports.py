"""The report wiring: which documents and labels reach which estimator, and the report's shape.

Expected values are computed here from counts written out by hand and passed to
the estimation.stats functions directly — never through the gathering code under test.
"""
from __future__ import annotations

import csv
import io
import json
from decimal import Decimal

import pytest

from annotation.models import (
    Assignment,
    Hit,
    Region,
    SampleDraw,
    Topic,
    Worker,
)
from estimation.services.report_csv import topic_report_csv
from estimation.services.reports import topic_report_build
from estimation.stats import aggregation, f1_posterior, pair_recall, planning, proportions
from estimation.stats.extrapolated_precision import ExtrapolationRefused, extrapolated_precision
from tests.factories import TopicFactory, UserFactory, build_topic, make_draw, make_label

pytestmark = pytest.mark.django_db

DRAWS = 2_000
SEED = 7


# The hand-written design of the sample is tests.factories.add_samples_and_labels;
# per region: (size, judged, relevant).
EXPECTED = {
    "A12": (10, 6, 5.0),
    "B1": (20, 9, 3.0),  # 8 is a sampled document made gold (relevant): counted with its gold answer
    "B2": (15, 7, 3.0),
    "R": (25, 7, 3.0),
    "U": (60, 7, 1.0),
}


def _expected_stratified(*, expected=EXPECTED, classifier_id, draws=DRAWS, seed=SEED):
    return pair_recall.stratified_pair_recall(
        a12=expected["A12"], b1=expected["B1"], b2=expected["B2"], corpus_size=60, confidence=0.95,
        draws=draws, seed=seed, other_classifiers={str(classifier_id): expected["R"]}, return_draws=True,
    )


def _by_name(rows, name):
    return next(r for r in rows if r["name"] == name)


def test_regions_count_distinct_judged_documents_and_exclude_gold_and_certification():
    built = build_topic()
    report = topic_report_build(topic=built.topic, draws=DRAWS, seed=SEED)
    regions = {r["name"]: r for r in report["regions"]}
    for name in ("A12", "B1", "B2", "U"):
        size, judged, relevant = EXPECTED[name]
        assert (regions[name]["size"], regions[name]["judged"], regions[name]["relevant"]) == (size, judged, relevant)
    r = regions[f"R:{built.c3.pk}"]
    assert (r["size"], r["judged"], r["relevant"]) == EXPECTED["R"]
    assert regions["A12"]["sampled"] == 8  # 20..27, the re-drawn 20 and 21 once
    assert regions["B1"]["sampled"] == 10  # 0..9: 8, made gold, keeps its place
    assert "G" not in regions and "A1" not in regions


def test_report_equals_stats_outputs_on_hand_counted_regions():
    built = build_topic()
    report = topic_report_build(topic=built.topic, draws=DRAWS, seed=SEED)
    expected = _expected_stratified(classifier_id=built.c3.pk)

    assert report["design"] == "stratified"
    for key, estimate in (("C1", expected.eq1_r1), ("C2", expected.eq1_r2)):
        got = report["recall_eq1"][key]
        assert (got["estimate"], got["low"], got["high"]) == (estimate.point, estimate.low, estimate.high)
    for key, estimate in (("C1", expected.eq2_r1), ("C2", expected.eq2_r2)):
        got = report["recall_eq2"][key]
        assert (got["estimate"], got["low"], got["high"]) == (estimate.point, estimate.low, estimate.high)
    assert report["recall_stratified"]["C1"]["estimate"] == expected.r1.point
    assert report["estimated_relevant"]["estimate"] == expected.n_hat.point
    assert report["estimated_relevant"]["low"] == expected.n_hat.low
    assert report["estimated_relevant"]["chapman"] == expected.n_hat_chapman
    # Hand check of the point: T12 = 10·5/6, T_B2 = 15·3/7 -> r1 = T12 / (T12 + T_B2).
    t12, tb2 = 10 * 5 / 6, 15 * 3 / 7
    assert report["recall_eq1"]["C1"]["estimate"] == pytest.approx(t12 / (t12 + tb2))

    c1 = _by_name(report["classifiers"], "=title filter")
    assert c1["role"] == "c1" and c1["retrieved"] == 30 and c1["fingerprint"] == built.c1.fingerprint
    assert (c1["precision"]["estimate"], c1["precision"]["low"]) == (expected.p1.point, expected.p1.low)
    assert c1["precision"]["judged"] == 6 + 9
    assert c1["recall"]["estimate"] == expected.r1.point

    c3 = _by_name(report["classifiers"], "model")
    cp = proportions.clopper_pearson_interval(relevant=3.0, judged=7, confidence=0.95)
    assert (c3["precision"]["estimate"], c3["precision"]["low"], c3["precision"]["high"]) == (cp.estimate, cp.low, cp.high)
    other = expected.other_recalls[str(built.c3.pk)]
    assert (c3["recall"]["estimate"], c3["recall"]["low"], c3["recall"]["high"]) == (other.point, other.low, other.high)

    codes = {d["code"] for d in report["diagnostics"]}
    assert {d.code for d in expected.diagnostics} <= codes
    assert [s["delta1"] for s in report["sensitivity"]] == [s.delta1 for s in expected.sensitivity]


def test_f1_extrapolation_uniform_comparison_and_agreement_wiring():
    built = build_topic()
    report = topic_report_build(topic=built.topic, draws=DRAWS, seed=SEED)
    expected = _expected_stratified(classifier_id=built.c3.pk)
    c1 = _by_name(report["classifiers"], "=title filter")

    # F1 from TP = p1|A1|, FP = |A1| - TP, FN = n̂ - TP, rescaled to the 22 judged pair documents.
    tp = expected.p1.point * 30
    fp, fn = 30 - tp, expected.n_hat.point - tp
    scale = 22 / (tp + fp + fn)
    f1 = f1_posterior.binary_f1_posterior(tp=tp * scale, fp=fp * scale, fn=fn * scale, draws=DRAWS, seed=SEED, mass=0.95)
    assert (c1["f1"]["estimate"], c1["f1"]["low"], c1["f1"]["high"]) == (f1["score"], *f1["hdi"])
    assert c1["f1"]["estimate"] == pytest.approx(2 * tp / (2 * tp + fp + fn))

    try:
        extrapolated = extrapolated_precision(precision=expected.p1.point, recall=expected.r1.point,
                                              prevalence=expected.n_hat.point / 60, target_recall=0.8)
        # Seed 001 Eq. 2 beside it: n = ρ·N·R_T/P(R_T), N = the corpus of 60.
        review = expected.n_hat.point / 60 * 60 * 0.8 / extrapolated
        assert c1["extrapolated_precision"] == {"target_recall": 0.8, "estimate": extrapolated, "refused": None,
                                                "review_documents": pytest.approx(review)}
    except ExtrapolationRefused as exc:
        assert c1["extrapolated_precision"] == {"target_recall": 0.8, "estimate": None, "refused": exc.reason,
                                                "review_documents": None}

    half = (expected.r1.high - expected.r1.low) / 2
    documents = planning.uniform_sample_size(recall=min(1.0, expected.r1.point), prevalence=expected.n_hat.point / 60,
                                             half_width=half, confidence=0.95, corpus_size=60)
    assert report["uniform_sampling_judgments"]["documents"] == documents
    assert report["uniform_sampling_judgments"]["judgments"] == 3 * documents
    assert report["cost_ratio"] == pytest.approx(documents / 22)  # 22 judged pair documents: A12 6, B1 9, B2 7

    # Fleiss' kappa over the judged, sampled, non-gold documents with three votes each:
    # 14 unanimous relevant (5 in A12, 2 in B1, 3 in B2, 3 in R, 1 in U), the other 20 unanimous not relevant.
    relevant_docs = 5 + 2 + 3 + 3 + 1
    judged_docs = 6 + 8 + 7 + 6 + 7  # A12, B1, B2, R (10..15; 33 is in B2), U
    counts = [[3, 0]] * relevant_docs + [[0, 3]] * (judged_docs - relevant_docs)
    assert report["worker_agreement"]["documents"] == judged_docs
    assert report["worker_agreement"]["fleiss_kappa"] == aggregation.fleiss_kappa(counts=counts)


def test_soft_labels_sum_dawid_skene_posteriors():
    built = build_topic(aggregator=Topic.Aggregator.DAWID_SKENE)
    report = topic_report_build(topic=built.topic, draws=DRAWS, seed=SEED)
    regions = {r["name"]: r for r in report["regions"]}
    # Posteriors are 0.9 for relevant and 0.1 for not relevant documents.
    soft = {"A12": (6, 5 * 0.9 + 1 * 0.1), "B1": (9, 2 * 0.9 + 6 * 0.1 + 1.0), "B2": (7, 3 * 0.9 + 4 * 0.1)}
    for name, (judged, relevant) in soft.items():
        assert regions[name]["judged"] == judged
        assert regions[name]["relevant"] == pytest.approx(relevant)
    expected = pair_recall.stratified_pair_recall(
        a12=(10, 6, soft["A12"][1]), b1=(20, 9, soft["B1"][1]), b2=(15, 7, soft["B2"][1]), corpus_size=60,
        confidence=0.95, draws=DRAWS, seed=SEED, other_classifiers={str(built.c3.pk): (25, 7, 3 * 0.9 + 4 * 0.1)},
        return_draws=True,
        # Issue 11: the posteriors are label probabilities, so the intervals carry the label noise (the draws
        # depend on the multiset of probabilities, not their order).
        label_probabilities={"A12": (0.9,) * 5 + (0.1,), "B1": (0.9,) * 2 + (0.1,) * 6 + (1.0,), "B2": (0.9,) * 3 + (0.1,) * 4},
    )
    assert report["label_noise"]["widened"] is True
    assert report["recall_eq1"]["C1"]["estimate"] == pytest.approx(expected.r1.point, rel=1e-12)
    assert report["recall_eq1"]["C1"]["low"] == pytest.approx(expected.r1.low, rel=1e-9)
    assert "soft_labels" in {d["code"] for d in report["diagnostics"]}


def test_paper_design_samples_reach_the_paper_estimator():
    built = build_topic()
    topic, docs = built.topic, built.docs
    make_draw(topic, SampleDraw.Purpose.PAPER, Region.A1, [0, 1, 2, 3, 20, 21], docs)
    make_draw(topic, SampleDraw.Purpose.PAPER, Region.A2, [40, 41, 42, 22, 23], docs)
    for position, relevant in ((40, True), (41, False), (42, False)):
        make_label(topic, docs[position], relevant=relevant)
    report = topic_report_build(topic=topic, draws=DRAWS, seed=SEED)
    # A1: 0..3 judged (0, 1 relevant), 20, 21 relevant -> 6 judged, 4 relevant.
    # A2: 40 relevant, 41, 42 not, 22, 23 relevant -> 5 judged, 3 relevant. A12 as before.
    expected = pair_recall.paper_design_pair_recall(
        a1=(30, 6, 4.0), a2=(25, 5, 3.0), a12=(10, 6, 5.0), corpus_size=60, confidence=0.95, draws=DRAWS, seed=SEED)
    paper = report["recall_paper_design"]
    assert paper["eq1"]["C1"]["estimate"] == expected.eq1_r1.point
    assert paper["eq1"]["C1"]["low"] == expected.eq1_r1.low
    assert paper["p2"]["estimate"] == expected.p2.point
    assert report["design"] == "stratified"  # the stratified regions are judged, so they lead


def test_report_is_json_serialisable_with_every_documented_key():
    built = build_topic()
    report = topic_report_build(topic=built.topic, draws=DRAWS, seed=SEED)
    text = json.dumps(report, allow_nan=False)
    assert json.loads(text) == report
    for key in ("topic", "corpus_size", "classifiers", "regions", "recall_eq1", "recall_eq2", "recall_stratified",
                "estimated_relevant", "judgments", "cost", "uniform_sampling_judgments", "cost_ratio", "diagnostics",
                "sensitivity", "pooled_recall", "posterior", "worker_agreement", "certification", "generated_at",
                "code_version"):
        assert key in report, key
    for row in report["classifiers"]:
        assert {"name", "fingerprint", "retrieved", "precision", "recall", "f1", "extrapolated_precision"} <= set(row)
        assert {"estimate", "low", "high", "judged"} <= set(row["precision"])
        assert {"estimate", "low", "high", "method"} <= set(row["recall"])
    posterior = report["posterior"]
    assert len(posterior["edges"]) == posterior["bins"] + 1
    assert sum(posterior["C1"]["counts"]) == posterior["C1"]["draws"] == DRAWS
    assert report["certification"] == {"state": "none"} or "state" in report["certification"]


def test_topic_without_labels_gives_a_valid_report_with_nulls():
    built = build_topic(with_labels=False)
    report = topic_report_build(topic=built.topic, draws=DRAWS, seed=SEED)
    json.dumps(report, allow_nan=False)
    assert report["recall_eq1"]["C1"]["estimate"] is None
    assert report["estimated_relevant"]["estimate"] is None
    assert report["judged_documents"] == 0 and report["judgments"] == 0
    assert report["worker_agreement"] is None and report["posterior"] is None
    assert "no_judgments" in {d["code"] for d in report["diagnostics"]}
    assert all(c["recall"]["estimate"] is None for c in report["classifiers"])
    assert {r["name"] for r in report["regions"]} == {"A12", "B1", "B2"}


def test_topic_without_pair_gives_a_valid_report():
    topic = TopicFactory.create()
    report = topic_report_build(topic=topic, draws=DRAWS, seed=SEED)
    json.dumps(report, allow_nan=False)
    assert report["classifiers"] == [] and report["regions"] == []
    assert {"no_pair", "no_judgments"} <= {d["code"] for d in report["diagnostics"]}


def test_only_b_regions_judged_reports_nulls_and_the_library_diagnostic():
    built = build_topic(with_labels=False)
    make_draw(built.topic, SampleDraw.Purpose.PAIR, Region.B1, [0, 1], built.docs)
    make_label(built.topic, built.docs[0], relevant=True)
    report = topic_report_build(topic=built.topic, draws=DRAWS, seed=SEED)
    assert report["recall_eq1"]["C1"]["estimate"] is None
    assert "unjudged_region" in {d["code"] for d in report["diagnostics"]}


def test_cost_sums_rewards_of_submitted_and_approved_assignments():
    built = build_topic(with_labels=False)
    topic = built.topic
    hit = Hit.objects.create(topic=topic, reward=Decimal("0.25"))
    other = Hit.objects.create(topic=topic, reward=Decimal("0.10"))
    from django.utils import timezone

    for slot, (h, status) in enumerate([(hit, "submitted"), (hit, "approved"), (hit, "rejected")]):
        worker = Worker.objects.create(user=UserFactory.create())
        Assignment.objects.create(hit=h, worker=worker, slot=slot, status=status, deadline=timezone.now())
    worker = Worker.objects.create(user=UserFactory.create())
    Assignment.objects.create(hit=other, worker=worker, slot=0, status="approved", deadline=timezone.now())
    report = topic_report_build(topic=topic, draws=DRAWS, seed=SEED)
    assert report["cost"]["assignments"] == 3
    assert report["cost"]["rewards"] == pytest.approx(0.60)
    assert report["cost"]["spent"] == pytest.approx(0.60)  # local crowd: no fees


def test_csv_has_a_row_per_classifier_and_region():
    built = build_topic()
    report = topic_report_build(topic=built.topic, draws=DRAWS, seed=SEED)
    rows = list(csv.DictReader(io.StringIO(topic_report_csv(report=report))))
    classifiers = [r for r in rows if r["row_type"] == "classifier"]
    regions = [r for r in rows if r["row_type"] == "region"]
    assert len(classifiers) == 3 and len(regions) == len(report["regions"])
    c1 = next(r for r in classifiers if r["role"] == "c1")
    assert c1["name"] == "'=title filter"  # a spreadsheet must not run a classifier name as a formula
    assert float(c1["recall"]) == pytest.approx(report["recall_eq1"]["C1"]["estimate"], rel=1e-5)
    a12 = next(r for r in regions if r["name"] == "A12")
    assert (a12["size"], a12["judged"], a12["relevant"]) == ("10", "6", "5")


def test_pooled_recall_in_the_report_is_the_stratified_block():
    """Issue 11 item 6: the report's pooled recall uses the pair's A12/B1/B2 samples as samples of A1 and A2
    (estimation/services/report_capture.py; hand-counted in tests/estimation/test_report_capture.py).
    The old block, which gave C1 and C2 no sample of their own, is gone."""
    from estimation.services.inputs import topic_inputs_gather
    from estimation.services.report_capture import pooled_recall_block
    from estimation.services.reports import report_parameters

    built = build_topic()
    report = topic_report_build(topic=built.topic, draws=DRAWS, seed=SEED)
    inputs = topic_inputs_gather(topic=built.topic, parameters=report_parameters(draws=DRAWS, seed=SEED))
    block, diagnostics = pooled_recall_block(inputs=inputs, confidence=inputs.confidence, draws=DRAWS, seed=SEED)
    assert report["pooled_recall"] == json.loads(json.dumps(block))
    codes = {d["code"] for d in report["diagnostics"]}
    assert {d["code"] for d in diagnostics} <= codes


@pytest.mark.parametrize("relevant_in_a12, relevant_in_b", [(False, True), (True, False)])
def test_extreme_labels_give_a_json_report_with_reasons_not_errors(relevant_in_a12, relevant_in_b):
    """No relevant document in A12 (n̂ infinite) or none outside it (recall 1): nulls and diagnostics."""
    built = build_topic(with_labels=False)
    topic, docs = built.topic, built.docs
    make_draw(topic, SampleDraw.Purpose.PAIR, Region.A12, range(20, 25), docs)
    make_draw(topic, SampleDraw.Purpose.PAIR, Region.B1, range(0, 5), docs)
    make_draw(topic, SampleDraw.Purpose.PAIR, Region.B2, range(30, 35), docs)
    for position in range(20, 25):
        make_label(topic, docs[position], relevant=relevant_in_a12)
    for position in list(range(0, 5)) + list(range(30, 35)):
        make_label(topic, docs[position], relevant=relevant_in_b)
    report = topic_report_build(topic=topic, draws=DRAWS, seed=SEED)
    json.dumps(report, allow_nan=False)
    c1 = _by_name(report["classifiers"], "=title filter")
    if not relevant_in_a12:
        assert "no_joint_relevant" in {d["code"] for d in report["diagnostics"]}
        assert report["estimated_relevant"]["estimate"] is None  # infinite: shown as not available
        assert c1["f1"]["estimate"] is None
        assert report["cost_ratio"] is None
    else:
        assert report["recall_eq1"]["C1"]["estimate"] == 1.0
        assert c1["extrapolated_precision"]["estimate"] is None
        assert "within 0.01 of 1" in c1["extrapolated_precision"]["refused"]


def test_dependence_uses_the_three_classifier_venn_counts():
    from estimation.stats.capture_recapture import capture_recapture

    built = build_topic()
    # C3 = 10..34 splits the strata: A12 (20..29) lies inside C3; B1 = 0..19 has 10..19 in C3;
    # B2 = 30..44 has 30..34 in C3; C3 has nothing outside A1 ∪ A2.  The B1 sample (0..7 judged)
    # has no document in C3 yet, so history "101" cannot be estimated.
    report = topic_report_build(topic=built.topic, draws=DRAWS, seed=SEED)
    (row,) = report["dependence"]
    assert row["classifier"] == "model" and row["best"] is None
    assert "101" in row["refused"]

    make_draw(built.topic, SampleDraw.Purpose.PAIR, Region.B1, [10, 11, 12], built.docs)  # judged relevant already
    report = topic_report_build(topic=built.topic, draws=DRAWS, seed=SEED)
    (row,) = report["dependence"]
    counts = {
        "111": 10 * 5 / 6,  # A12: 6 judged, 5 relevant, all in C3
        "110": 0.0,  # empty region
        "101": 10 * 3 / 3,  # B1 ∩ C3 (10 documents): 10, 11, 12 judged, all relevant
        "100": 10 * 3 / 9,  # B1 outside C3 (0..9): 9 judged (8 made gold, relevant), 3 relevant
        "011": 5 * 3 / 5,  # B2 ∩ C3 (30..34): 5 judged, 3 relevant
        "010": 10 * 0 / 2,  # B2 outside C3 (35..44): 35, 36 judged, not relevant
        "001": 0.0,  # C3 outside the pair: empty
    }
    assert row["counts"] == pytest.approx(counts)
    expected = capture_recapture(counts=counts)
    # The point fits of every model are the exact-count fits; the chosen model and its summary now come
    # from the interval that includes the regions' sampling variance (issue 11 item 7).
    assert [m["name"] for m in row["models"]] == [m.name for m in expected.models]
    assert row["best"] == row["interval"]["model"]
    assert "capture_recapture" in {d["code"] for d in report["diagnostics"]}


def test_an_impossible_corpus_size_leaves_out_eq2_and_prevalences():
    built = build_topic()
    corpus = built.topic.corpus
    corpus.document_count = 10  # smaller than |A1 ∪ A2| = 45: the import never maintained it
    corpus.save(update_fields=["document_count"])
    report = topic_report_build(topic=built.topic, draws=DRAWS, seed=SEED)
    json.dumps(report, allow_nan=False)
    assert "corpus_size_unknown" in {d["code"] for d in report["diagnostics"]}
    assert report["recall_eq1"]["C1"]["estimate"] is not None
    assert report["recall_eq2"]["C1"]["estimate"] is None
    assert report["estimated_relevant"]["prevalence"] is None
    assert report["uniform_sampling_judgments"]["documents"] is None and report["cost_ratio"] is None
    assert all(c["extrapolated_precision"]["estimate"] is None for c in report["classifiers"])


def _random_inputs(rng, case: int):
    """Random but consistent-looking inputs: empty, tiny, fully judged, all/none relevant, soft labels."""
    from estimation.services.inputs import ClassifierInputs, CostInputs, SampleInputs, TopicInputs

    a12, b1, b2 = (rng.choice([0, 1, 2, 5, 50, 1000]) for _ in range(3))
    corpus = a12 + b1 + b2 + rng.choice([0, 10, 100_000])
    c1 = ClassifierInputs(1, "c1", "f1", "c1", a12 + b1)
    c2 = ClassifierInputs(2, "c2", "f2", "c2", a12 + b2)
    extras = tuple(ClassifierInputs(3 + i, f"x{i}", "f", "extra", rng.choice([1, 30, 500]))
                   for i in range(rng.choice([0, 1, 2])))
    next_id = iter(range(10**6))

    def sample(key, region, size, classifier_id=None):
        n = rng.randint(0, min(size, 40)) if size else 0
        p = rng.choice([0.0, 0.05, 0.5, 1.0])
        soft = rng.random() < 0.3
        labels = tuple(rng.random() if soft else float(rng.random() < p) for _ in range(n))
        holders = tuple(tuple(h for h in (1, 2, 3, 4) if rng.random() < 0.5) for _ in range(n))
        return SampleInputs(key=key, region=region, classifier_id=classifier_id, size=size, sampled=n,
                            document_ids=tuple(next(next_id) for _ in range(n)), labels=labels, retrieved_by=holders)

    samples = {k: sample(k, k, size) for k, size in (("A12", a12), ("B1", b1), ("B2", b2)) if rng.random() < 0.8}
    if rng.random() < 0.3:
        samples["A1"], samples["A2"] = sample("A1", "A1", a12 + b1), sample("A2", "A2", a12 + b2)
    for x in extras:
        if rng.random() < 0.7:
            samples[f"R:{x.id}"] = sample(f"R:{x.id}", "R", x.retrieved, x.id)
    if corpus and rng.random() < 0.5:
        samples["U"] = sample("U", "U", corpus)
    histories = ("111", "110", "101", "100", "011", "010", "001")
    return TopicInputs(
        schema=1, topic_id=case, topic_name="t", corpus_size=corpus, aggregator="majority", soft_labels=False,
        target_recall=rng.choice([0.5, 0.8, 0.95]), confidence=rng.choice([0.9, 0.95]), crowd="local",
        c1=c1, c2=c2, extras=extras, region_sizes={"A12": a12, "B1": b1, "B2": b2, "A1": a12 + b1, "A2": a12 + b2},
        samples=samples, venn3={str(x.id): {h: rng.choice([0, 3, 10]) for h in histories} for x in extras},
        judgments=0, votes=tuple((rng.randint(0, 3), 3) for _ in range(rng.randint(0, 5))),
        cost=CostInputs(0, "0", "0", False), certification={"state": "none"}, code_version="test",
        parameters={"draws": 200, "seed": case},
    )


def test_any_counts_give_a_strict_json_report_never_an_exception():
    """Degenerate counts (empty regions, all or no relevant, fully judged regions) must render, not raise."""
    import random

    from estimation.services.reports import topic_report_from_inputs

    rng = random.Random(20261122)
    for case in range(150):
        report = topic_report_from_inputs(inputs=_random_inputs(rng, case))
        json.dumps(report, allow_nan=False)
        assert isinstance(report["diagnostics"], list)


def test_a_numerical_failure_of_capture_recapture_is_reported_not_raised():
    """These relevant counts per history once overflowed inside the log-linear fit (OverflowError)."""
    from estimation.services.inputs import ClassifierInputs, CostInputs, SampleInputs, TopicInputs
    from estimation.services.reports import topic_report_from_inputs

    def sample(key, size, holders):
        return SampleInputs(key=key, region=key, classifier_id=None, size=size, sampled=len(holders),
                            document_ids=tuple(range(len(holders))), labels=(1.0,) * len(holders),
                            retrieved_by=tuple(holders))

    inputs = TopicInputs(
        schema=1, topic_id=1, topic_name="t", corpus_size=100_000, aggregator="majority", soft_labels=False,
        target_recall=0.8, confidence=0.95, crowd="local",
        c1=ClassifierInputs(1, "c1", "f", "c1", 130), c2=ClassifierInputs(2, "c2", "f", "c2", 110),
        extras=(ClassifierInputs(3, "c3", "f", "extra", 20),),
        region_sizes={"A12": 110, "B1": 20, "B2": 0, "A1": 130, "A2": 110},
        samples={"A12": sample("A12", 110, [(1, 2, 3), (1, 2)]), "B1": sample("B1", 20, [(1, 3), (1,)])},
        venn3={"3": {"111": 10, "110": 100, "101": 10, "100": 10, "011": 0, "010": 0, "001": 0}},
        judgments=0, votes=(), cost=CostInputs(0, "0", "0", False), certification={"state": "none"},
        code_version="test", parameters={"draws": 200, "seed": 1},
    )
    report = topic_report_from_inputs(inputs=inputs)
    json.dumps(report, allow_nan=False)
    (row,) = report["dependence"]
    assert row["counts"] == {"111": 10.0, "110": 100.0, "101": 10.0, "100": 10.0, "011": 0.0, "010": 0.0, "001": 0.0}
    assert row["best"] is not None or row["refused"]


# --------------------------------------------------------------------------- headline wording (issue 12 item 8)


def test_headline_says_meets_below_straddles_or_why_withheld():
    from estimation.templatetags.report_extras import recall_headline

    def text(recall, reason=""):
        return recall_headline(name="Title keywords", recall=recall, target=0.8, confidence=0.95,
                               withheld_reason=reason)

    below = text({"estimate": 0.65, "low": 0.61, "high": 0.68})
    assert below == {"state": "below", "text": "Title keywords: recall 0.650 (0.610–0.680) — below the target 0.80 "
                                               "at 95% confidence."}
    meets = text({"estimate": 0.9, "low": 0.8, "high": 0.95})  # the lower end at the target counts
    assert meets["state"] == "meets" and "meets the target 0.80" in meets["text"]
    straddles = text({"estimate": 0.82, "low": 0.7, "high": 0.9})
    assert straddles["state"] == "straddles"
    assert "cannot tell yet: the interval straddles the target 0.80" in straddles["text"]
    withheld = text({"estimate": None, "low": None, "high": None}, reason="no document has been judged yet")
    assert withheld == {"state": "withheld",
                        "text": "Title keywords: recall not shown yet — no document has been judged yet."}
    assert text(None)["state"] == "withheld" and "not enough judged documents" in text(None)["text"]
    no_interval = text({"estimate": 0.7, "low": None, "high": None})
    assert no_interval["state"] == "no_interval" and "cannot tell" in no_interval["text"]


def test_headline_never_prints_a_figure_equal_to_the_target_when_it_is_not_or_outside_0_1():
    from estimation.templatetags.report_extras import recall_headline

    edge = recall_headline(name="c", recall={"estimate": 0.9, "low": 0.79996, "high": 1.2}, target=0.8,
                           confidence=0.95)
    # 0.79996 would print as 0.800 at three decimals; the headline says "straddles", so it prints more digits.
    assert edge["state"] == "straddles" and "(0.79996–1.000)" in edge["text"]
    clipped = recall_headline(name="c", recall={"estimate": 1.3, "low": -0.1, "high": 1.5}, target=0.8,
                              confidence=None)
    assert "recall 1.000 (0.000–1.000)" in clipped["text"]


def test_plain_words_replace_region_codes_classifier_keys_and_symbols():
    from estimation.templatetags.report_extras import plain, region_name

    pair = {"c1": "kw", "c2": "model"}
    text = plain("Only 1 of the 5 judged documents in region B1 (C1 only) were relevant. Eq. 2 gives C2 a recall "
                 "of 0.9 (seed 000, Assumption 1); dependence ratio of C1 and C2 δ1 ≈ 1.10. Region A12 is small.", pair)
    assert text == ("Only 1 of the 5 judged documents in the region “found only by kw” were relevant. The "
                    "rare-topic estimate gives model a recall of 0.9; dependence ratio of kw and model ≈ 1.10. "
                    "The region “found by both” is small.")
    assert region_name("B2", pair) == "found only by model" and region_name("N") == "found by neither"
    assert region_name("B1") == "found only by the first classifier"
    assert plain(None) == ""
