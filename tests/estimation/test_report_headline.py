"""Issue "The headline holds whatever the pair", part 1: each classifier row's `headline` (ESTIMATION-NOTES §8, §9).

tests/factories.build_topic: C1 = documents 0..29, C2 = 20..44 of 60, so |N| = 15 (documents 45..59)."""
from __future__ import annotations

import pytest

from annotation.models import SampleDraw
from estimation.services.report_csv import topic_report_csv
from estimation.services.reports import REPORT_SCHEMA, topic_report_build
from estimation.stats import headline as headline_stats
from tests.factories import build_topic, make_draw, make_label

pytestmark = pytest.mark.django_db

KEYS = {"estimate", "low", "high", "basis", "judged", "statement"}


def _with_complement(built) -> None:
    make_draw(built.topic, SampleDraw.Purpose.PAIR, "N", [45, 46, 47, 48, 49], built.docs)
    for position in range(45, 50):
        make_label(built.topic, built.docs[position], relevant=position == 45)


def _inside(h) -> None:
    assert h["low"] <= h["estimate"] <= h["high"]
    assert 0.0 <= h["low"] <= h["high"] <= 1.0


def test_with_a_judged_complement_sample_the_headline_is_design_based():
    built = build_topic()
    _with_complement(built)
    report = topic_report_build(topic=built.topic, draws=2_000, seed=7)
    assert report["schema"] == REPORT_SCHEMA == 3
    block = report["design_based"]
    judged = sum(r["judged"] for r in report["regions"] if r["name"] in ("A12", "B1", "B2", "N"))
    for row, key in zip(report["classifiers"][:2], ("C1", "C2"), strict=True):
        h = row["headline"]
        assert set(h) == KEYS and h["basis"] == "design"
        _inside(h)
        assert (h["low"], h["high"]) == (block[key]["low"], block[key]["high"])
        assert h["judged"] == judged
        assert "neither classifier retrieved" in h["statement"] and "whatever" in h["statement"]
        # The pair model's figure is still in the row, unchanged.
        assert row["recall"]["method"] is not None


def test_without_a_complement_sample_the_headline_is_the_dependence_band():
    built = build_topic()
    report = topic_report_build(topic=built.topic, draws=2_000, seed=7)
    assert report["design_based"] is None
    band = [p for p in report["sensitivity"] if 0.8 <= p["delta1"] <= 1.25]
    for row, attr in zip(report["classifiers"][:2], ("r1", "r2"), strict=True):
        h = row["headline"]
        assert set(h) == KEYS and h["basis"] == "band"
        _inside(h)
        assert h["low"] == pytest.approx(min(p[f"{attr}_low"] for p in band))
        assert h["high"] == pytest.approx(max(p[f"{attr}_high"] for p in band))
        # The band contains the pair model's own interval.
        assert h["low"] <= row["recall"]["low"] and h["high"] >= min(1.0, row["recall"]["high"])
        assert h["statement"].startswith("If the classifiers' dependence ratio lies between 0.8 and 1.25 (not measured")
        assert f"{h['low']:.3f}" in h["statement"] and f"{h['high']:.3f}" in h["statement"]
        assert h["judged"] == sum(r["judged"] for r in report["regions"] if r["name"] in ("A12", "B1", "B2"))


def test_a_report_without_judgments_still_has_a_headline_per_row_with_nulls():
    built = build_topic(with_labels=False)
    report = topic_report_build(topic=built.topic, draws=500, seed=7)
    for row in report["classifiers"]:
        h = row["headline"]
        assert set(h) == KEYS and h["estimate"] is None and h["low"] is None
        assert h["basis"] == "pair_model" and "independent" in h["statement"]


def test_csv_has_a_headline_row_per_classifier():
    built = build_topic()
    _with_complement(built)
    report = topic_report_build(topic=built.topic, draws=2_000, seed=7)
    lines = topic_report_csv(report=report).splitlines()
    header = lines[0].split(",")
    import csv

    rows = [dict(zip(header, r, strict=False)) for r in csv.reader(lines[1:])]
    heads = [r for r in rows if r["row_type"] == "headline"]
    assert [r["role"] for r in heads] == [c["role"] for c in report["classifiers"]]
    for r, c in zip(heads, report["classifiers"], strict=True):
        assert float(r["recall"]) == pytest.approx(c["headline"]["estimate"], rel=1e-5)
        assert float(r["recall_low"]) == pytest.approx(c["headline"]["low"], rel=1e-5)
        assert r["basis"] == "design" and r["statement"] == c["headline"]["statement"]
    # The old columns keep their places; the new ones come last.
    assert header[:18] == ["row_type", "name", "role", "size", "judged", "relevant", "precision", "precision_low",
                           "precision_high", "recall", "recall_low", "recall_high", "recall_method", "f1", "f1_low",
                           "f1_high", "extrapolated_precision", "fingerprint"]


# --------------------------------------------------------------------------- the pure helpers


def test_headline_figure_clips_the_estimate_into_its_interval_and_into_0_1():
    f = headline_stats.headline_figure(estimate=1.3, low=0.7, high=1.2, basis="band", judged=10)
    assert (f.estimate, f.low, f.high) == (1.0, 0.7, 1.0)
    f = headline_stats.headline_figure(estimate=0.5, low=0.6, high=0.9, basis="design", judged=10)
    assert f.estimate == 0.6
    assert headline_stats.headline_figure(estimate=None, low=0.1, high=0.2, basis="design", judged=0).low is None
    with pytest.raises(ValueError):
        headline_stats.headline_figure(estimate=0.5, low=0.1, high=0.9, basis="guess", judged=0)


def test_band_figure_spans_the_band_and_keeps_the_independent_point():
    points = [(0.8, 0.9, 0.8, 1.0), (0.9, 0.85, 0.75, 0.95), (1.0, 0.72, 0.65, 0.8), (1.1, 0.65, 0.6, 0.72),
              (1.25, 0.58, 0.52, 0.64), (1.5, 0.5, 0.4, 0.6)]
    f = headline_stats.band_figure(points=points, judged=30)
    assert (f.estimate, f.low, f.high, f.basis) == (0.72, 0.52, 1.0, "band")
    g = headline_stats.band_from_pair_interval(estimate=0.72, low=0.65, high=0.8, judged=30)
    assert g.low == pytest.approx(0.65 / 1.25) and g.high == pytest.approx(1.0) and g.estimate == 0.72


def test_ratio_figure_for_a_further_classifier_is_conservative_and_capped():
    f = headline_stats.ratio_figure(found=40.0, found_low=30.0, found_high=50.0, total=100.0, total_low=80.0,
                                    total_high=125.0, judged=50)
    assert (f.estimate, f.low, f.high) == (0.4, 0.24, 0.625)
    g = headline_stats.ratio_figure(found=90.0, found_low=80.0, found_high=99.0, total=95.0, total_low=90.0,
                                    total_high=110.0, judged=50)
    assert g.high == 1.0 and g.low <= g.estimate <= g.high


def test_the_report_updated_webhook_carries_each_classifiers_headline():
    from unittest import mock

    from estimation.services.recompute import topic_snapshot_create
    from webhooks.models import WebhookEvent
    from webhooks.services.events import webhook_report_updated

    built = build_topic()
    snapshot = topic_snapshot_create(topic_id=built.topic.pk, draws=1_000)
    with mock.patch("webhooks.services.events.webhook_deliveries_create", return_value=[]) as create:
        webhook_report_updated(snapshot_id=snapshot.pk)
    kwargs = create.call_args.kwargs
    assert kwargs["event"] == WebhookEvent.REPORT_UPDATED
    rows = kwargs["data"]["classifiers"]
    assert [r["headline"] for r in rows] == [
        {k: c["headline"][k] for k in ("estimate", "low", "high", "basis", "judged", "statement")}
        for c in snapshot.report["classifiers"]]
    assert rows[0]["headline"]["basis"] == "band" and rows[0]["recall"]["estimate"] is not None


@pytest.mark.parametrize("found, expected, corrected, basis", [
    (0, 12.0, False, "design"),     # nothing found: false positives cannot have inflated N's count
    (40, 2.0, False, "design"),     # errors could explain at most 5% of what was found
    (13, 12.6, False, "band"),      # the demo's case: errors alone could produce what was found
    (60, 20.0, False, "band"),      # a third of N's count could be errors: a recall from it would be pulled down
    # New rule: a design figure corrected for label error (Rogan–Gladen at the estimated accuracy) leads anyway.
    (13, 12.6, True, "design"),
    (60, 20.0, True, "design"),
])
def test_the_design_figure_leads_only_when_judging_errors_cannot_account_for_ns_count(found, expected, corrected,
                                                                                       basis):
    """Measured (tests/estimation/stats/test_design_based_coverage.py): with three 0.85-accurate workers the
    uncorrected design-based interval covered the true recall in 0 of 400 studies per setting, because the
    majority's false positives in N (fp 0.061) outnumber N's relevant documents; the headline must not lead with
    it then.  Corrected for the label error (accuracy estimated from the votes) it covered it in 0.965–0.978."""
    from estimation.services.inputs import topic_inputs_gather
    from estimation.services.report_headline import classifier_headlines

    built = build_topic()
    _with_complement(built)
    report = topic_report_build(topic=built.topic, draws=2_000, seed=7)
    assert report["design_based"]["label_error"] is None  # unanimous votes: nothing to correct
    report["design_based"]["noise_floor"] = {"majority_relevant": found, "expected_false_positives": expected}
    if corrected:
        report["design_based"]["label_error"] = {"corrected": True, "method": "rogan_gladen", "worker_accuracy": 0.85,
                                                 "false_positive_rate": 0.061, "false_negative_rate": 0.061}
        report["design_based"]["label_noise_limited"] = found < 3 * expected
    headlines = classifier_headlines(report=report, inputs=topic_inputs_gather(topic=built.topic))
    for h in headlines[:2]:
        assert h["basis"] == basis
        _inside(h)
        if basis == "band":
            assert h["statement"].startswith("The documents neither classifier retrieved were judged, but judging "
                                             "errors could account for about")
        if corrected:
            assert "Corrected for the workers' judging errors (accuracy 0.85" in h["statement"]
            assert "whatever the two classifiers' dependence" in h["statement"]
