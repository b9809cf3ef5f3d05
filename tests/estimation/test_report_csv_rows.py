"""Issue 26 item 5: the report CSV had no estimated-relevant count, cost or certification rows; issue 24 item 6:
seed 003's pooled recall appeared in no CSV.  Before the fix ``topic_report_csv`` wrote none of these rows (and
had no value columns)."""
from __future__ import annotations

import csv
import io

import pytest

from estimation.services.report_csv import CSV_COLUMNS, topic_report_csv


def _report() -> dict:
    return {
        "corpus_size": 20_000, "design": "stratified", "judged_documents": 400, "classifiers": [], "regions": [],
        "estimated_relevant": {"estimate": 812.4, "low": 700.0, "high": 951.0, "floor": 388.0,
                               "withheld_reason": None},
        "cost": {"spent": 96.0, "rewards": 80.0, "currency": "USD", "assignments": 1200, "includes_fees": True,
                 "estimation_spent": 90.0, "certification_spent": 6.0, "per_judged_document": 0.225},
        "uniform_sampling_judgments": {"documents": 5_200, "judgments": 15_600},
        "cost_ratio": 13.0,
        "pooled_recall": {
            "basis": "Seed 003: true recall = the pool's recall × share.", "pool_recall": None,
            "pool_recall_refused": "The uniform sample of 300 documents holds 8 labelled relevant; … not shown.",
            "systems": [{"name": "=title", "retrieved": 900, "sampled": 0, "true_recall": None,
                         "true_recall_low": None, "true_recall_high": None, "pooled_recall": 0.71,
                         "pooled_recall_low": 0.6, "pooled_recall_high": 0.8}]},
        "certification": {"state": "passed", "latest": {
            "classifier": "body", "metric": "recall", "metric_label": "Recall", "target": 0.8, "confidence": 0.95,
            "state": "passed", "verdict": {"passed": True, "estimate": 0.86, "lower_bound": 0.81}}},
    }


def _rows(report: dict) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(topic_report_csv(report=report))))


def test_csv_has_estimated_relevant_cost_certification_and_pooled_rows():
    rows = _rows(_report())
    assert {"value", "value_low", "value_high"} <= set(CSV_COLUMNS)
    by_type: dict[str, list[dict[str, str]]] = {}
    for row in rows:
        by_type.setdefault(row["row_type"], []).append(row)
    (relevant,) = by_type["estimated_relevant"]
    assert (relevant["value"], relevant["value_low"], relevant["value_high"]) == ("812.4", "700", "951")
    assert "at least 388 relevant documents" in relevant["statement"]
    cost = {row["name"]: row for row in by_type["cost"]}
    assert cost["spent (USD)"]["value"] == "96" and cost["spent (USD)"]["basis"] == "rewards and crowd fees"
    assert cost["spent on the estimation samples (USD)"]["value"] == "90"
    assert cost["per judged document of the estimation samples (USD)"]["value"] == "0.225"
    uniform = cost["documents a uniform sample would need for the same interval"]
    assert uniform["value"] == "5200" and uniform["statement"].startswith("13.0 times")
    (certification,) = by_type["certification"]
    assert certification["name"] == "body" and certification["value"] == "0.86"
    assert certification["value_low"] == "0.81" and certification["statement"] == "Recall ≥ 0.8 at 0.95 confidence: passed"
    (pooled,) = by_type["pooled_recall"]
    assert pooled["name"] == "'=title"  # user text never runs as a formula
    assert pooled["recall"] == "" and "8 labelled relevant" in pooled["recall_withheld_reason"]
    assert pooled["value"] == "0.71" and pooled["basis"].startswith("Seed 003")


def test_rows_are_left_out_when_the_report_has_no_such_figure():
    report = _report()
    for key in ("estimated_relevant", "cost", "pooled_recall", "certification"):
        report[key] = None
    assert [row["row_type"] for row in _rows(report)] == []
    report["certification"] = {"state": "none"}
    assert _rows(report) == []


@pytest.mark.parametrize("width", [len(CSV_COLUMNS)])
def test_every_row_has_the_header_width(width):
    report = _report()
    report["classifiers"] = [{"name": "a", "role": "c1", "retrieved": 1, "fingerprint": "f",
                              "precision": {"estimate": 1.0, "low": 0.5, "high": 1.0, "judged": 2},
                              "recall": {"estimate": None, "low": None, "high": None, "method": None},
                              "f1": {"estimate": None, "low": None, "high": None},
                              "extrapolated_precision": {"estimate": None}}]
    report["regions"] = [{"name": "A12", "size": 3, "judged": 2, "relevant": 1, "precision": 0.5}]
    lines = list(csv.reader(io.StringIO(topic_report_csv(report=report))))
    assert {len(line) for line in lines} == {width}
