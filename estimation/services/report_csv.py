"""The CSV export of a stored report: an optional metadata block, one row per classifier, the dependence check's
recalls, then one per region (docs/report.md)."""
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


def csv_cell(value: Any) -> Any:
    """A CSV cell: None empty, floats to 6 significant digits, text that a spreadsheet would run as a formula
    (starting with = + - @ tab or CR) prefixed with '."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        # A spreadsheet would run it as a formula: classifier names are user text.
        return "'" + value
    return value


_csv_cell = csv_cell


def report_csv_metadata(*, report: dict[str, Any], snapshot_version: int | None, snapshot_created_at: str | None,
                        corpus: str | None, target_recall: float | None) -> list[tuple[str, Any]]:
    """The metadata block of the report CSV: (key, value) pairs, written as rows whose first cell starts with "#"."""
    topic = report.get("topic") or {}
    rows: list[tuple[str, Any]] = [
        ("topic", topic.get("name")), ("topic_id", topic.get("id")),
        ("snapshot_version", snapshot_version), ("snapshot_created_at", snapshot_created_at),
        ("generated_at", report.get("generated_at")), ("code_version", report.get("code_version")),
        ("confidence", topic.get("confidence")), ("target_recall", target_recall),
        ("corpus", corpus), ("corpus_size", report.get("corpus_size")),
    ]
    for c in report.get("classifiers") or []:
        rows.append((f"classifier.{c.get('role')}.{c.get('id')}", c.get("name")))
        rows.append((f"fingerprint.{c.get('role')}.{c.get('id')}", c.get("fingerprint")))
    return rows


def topic_report_csv(*, report: dict[str, Any], metadata: list[tuple[str, Any]] | None = None) -> str:
    """One row per classifier, a `design_based` row per pair classifier when the report has the dependence
    check, then one per region (columns in docs/report.md). With `metadata`, a leading block of "#key,value" rows
    (skip them with pandas' comment="#", or any reader that drops lines starting with "#")."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for key, value in metadata or []:
        text = " ".join(str(value).split()) if value is not None else ""
        writer.writerow(["#" + key, csv_cell(text)])
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
