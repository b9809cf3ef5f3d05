"""The CSV export of a stored report: one row per classifier, the dependence check's recalls, then one per region (docs/report.md)."""
from __future__ import annotations

import csv
import io
from typing import Any

CSV_COLUMNS = [
    "row_type", "name", "role", "size", "judged", "relevant",
    "precision", "precision_low", "precision_high",
    "recall", "recall_low", "recall_high", "recall_method",
    "f1", "f1_low", "f1_high", "extrapolated_precision", "fingerprint",
]


def _csv_cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        # A spreadsheet would run it as a formula: classifier names are user text.
        return "'" + value
    return value


def topic_report_csv(*, report: dict[str, Any]) -> str:
    """One row per classifier, a `design_based` row per pair classifier when the report has the dependence
    check, then one per region (columns in docs/report.md)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for c in report.get("classifiers") or []:
        writer.writerow([_csv_cell(v) for v in (
            "classifier", c["name"], c["role"], c["retrieved"], c["precision"]["judged"], None,
            c["precision"]["estimate"], c["precision"]["low"], c["precision"]["high"],
            c["recall"]["estimate"], c["recall"]["low"], c["recall"]["high"], c["recall"]["method"],
            c["f1"]["estimate"], c["f1"]["low"], c["f1"]["high"], c["extrapolated_precision"]["estimate"],
            c["fingerprint"],
        )])
    design = report.get("design_based") or {}
    pair = report.get("pair") or {}
    for key, role in (("C1", "c1"), ("C2", "c2")):
        recall = design.get(key)
        if not recall:
            continue
        # The dependence check (issue 11): recall without the independence assumption.
        writer.writerow([_csv_cell(v) for v in (
            "design_based", pair.get(role), role, None, None, None, None, None, None,
            recall.get("estimate"), recall.get("low"), recall.get("high"), recall.get("method"),
            None, None, None, None, None,
        )])
    for r in report.get("regions") or []:
        writer.writerow([_csv_cell(v) for v in (
            "region", r["name"], None, r["size"], r["judged"], r["relevant"], r["precision"],
            None, None, None, None, None, None, None, None, None, None, None,
        )])
    return out.getvalue()
