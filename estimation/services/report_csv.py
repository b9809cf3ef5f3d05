"""The CSV export of a stored report: an optional metadata block, one row per classifier, the headline figure of
each classifier, the dependence check's recalls, then one per region (docs/report.md)."""
from __future__ import annotations

import csv
import io
from typing import Any

from annotation.models import REGION_NAMES

CSV_COLUMNS = [
    "row_type", "name", "role", "size", "judged", "relevant",
    "precision", "precision_low", "precision_high",
    "recall", "recall_low", "recall_high", "recall_method",
    "f1", "f1_low", "f1_high", "extrapolated_precision", "fingerprint",
    # Report schema 3: the headline rows say what their figure rests on (empty on the other rows).
    "basis", "statement",
    # Seed 001 Eq. 2 beside the extrapolated precision (classifier rows): documents to review to reach the target
    # recall, n = ρ·N·R_T/P(R_T); and why the row's recall is withheld, when it is ("Every figure honest" #4).
    "review_documents", "recall_withheld_reason",
    # A figure that is neither a precision nor a recall (estimated_relevant, cost, certification rows; on pooled_recall
    # rows the classifier's share of the pool's relevant documents), with its interval where it has one.
    "value", "value_low", "value_high",
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
    # The legend of the region rows' codes: each code's plain name, as the pages print it (issue 26 item 2).
    pair = report.get("pair") or {}
    for r in report.get("regions") or []:
        code = str(r.get("name") or "")
        if code in REGION_NAMES:
            name = REGION_NAMES[code].replace("the first classifier", str(pair.get("c1") or "the first classifier"))
            rows.append((f"region.{code}", name.replace("the second classifier",
                                                         str(pair.get("c2") or "the second classifier"))))
    if report.get("kind") == "multiclass":
        sample = report.get("sample") or {}
        parameters = report.get("parameters") or {}
        rows += [("kind", "multiclass"), ("corpus_size", sample.get("corpus_size")),
                 ("sampled", sample.get("sampled")), ("judged", sample.get("judged")),
                 ("undecided", sample.get("undecided")), ("prior", parameters.get("prior")),
                 ("draws", parameters.get("draws")), ("reference", parameters.get("reference"))]
        rows += [(f"class.{c.get('position')}", c.get("name")) for c in report.get("classes") or []]
        for r in report.get("routers") or []:
            rows.append((f"router.{r.get('id')}", r.get("name")))
            rows.append((f"fingerprint.router.{r.get('id')}", r.get("fingerprint")))
    return rows


# A topic set's report (kind "multiclass"): one "average" row per router and average, one "class" row per router
# and class, one "cell" row per non-empty confusion cell (docs/report.md).
MULTICLASS_CSV_COLUMNS = [
    "row_type", "router", "average_or_class", "position", "true_count", "predicted_count", "count",
    "score", "mean", "low", "high", "sd", "p_above_reference",
    "precision", "precision_low", "precision_high", "recall", "recall_low", "recall_high", "predicted_position",
]


def multiclass_report_csv(*, report: dict[str, Any], metadata: list[tuple[str, Any]] | None = None) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for key, value in metadata or []:
        text = " ".join(str(value).split()) if value is not None else ""
        writer.writerow(["#" + key, csv_cell(text)])
    writer.writerow(MULTICLASS_CSV_COLUMNS)
    width = len(MULTICLASS_CSV_COLUMNS)

    def row(**cells: Any) -> None:
        writer.writerow([csv_cell(cells.get(column)) for column in MULTICLASS_CSV_COLUMNS][:width])

    names = {c.get("position"): c.get("name") for c in report.get("classes") or []}
    for r in report.get("routers") or []:
        posterior = r.get("posterior") or {}
        for average in ("micro", "macro"):
            a = posterior.get(average)
            if a:
                row(row_type="average", router=r["name"], average_or_class=f"{average}-F1", score=a["score"],
                    mean=a["mean"], low=a["hdi"][0], high=a["hdi"][1], sd=a["sd"], p_above_reference=a["above"])
        for c in posterior.get("per_class") or []:
            row(row_type="class", router=r["name"], average_or_class=c["name"], position=c["position"],
                true_count=c["true_count"], predicted_count=c["predicted_count"], count=c["correct"],
                score=c["f1"], mean=c["f1_mean"], low=c["f1_hdi"][0], high=c["f1_hdi"][1],
                precision=c["precision"], precision_low=c["precision_hdi"][0], precision_high=c["precision_hdi"][1],
                recall=c["recall"], recall_low=c["recall_hdi"][0], recall_high=c["recall_hdi"][1])
        for true_position, cells in enumerate(r.get("confusion") or []):
            for predicted_position, count in enumerate(cells):
                if count:
                    row(row_type="cell", router=r["name"], average_or_class=names.get(true_position),
                        position=true_position, count=count, predicted_position=predicted_position)
    return out.getvalue()


def _summary_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows after the regions (issue 26 item 5; issue 24 item 6): seed 003's pooled recall per classifier, the
    estimated relevant documents with their interval, the cost of the samples judged so far and against uniform
    sampling, and the latest certification verdict; each only when the report has it."""
    rows: list[dict[str, Any]] = []
    pooled = report.get("pooled_recall")
    if pooled:
        refused = " ".join(str(pooled.get("pool_recall_refused") or "").split()) or None
        for system in pooled.get("systems") or []:
            rows.append({"row_type": "pooled_recall", "name": system.get("name"), "size": system.get("retrieved"),
                         "judged": system.get("sampled"), "recall": system.get("true_recall"),
                         "recall_low": system.get("true_recall_low"), "recall_high": system.get("true_recall_high"),
                         "recall_method": "seed 003 pooled recall", "basis": pooled.get("basis"),
                         "recall_withheld_reason": refused if system.get("true_recall") is None else None,
                         "value": system.get("pooled_recall"), "value_low": system.get("pooled_recall_low"),
                         "value_high": system.get("pooled_recall_high")})
    relevant = report.get("estimated_relevant")
    if relevant:
        floor = relevant.get("floor")
        rows.append({"row_type": "estimated_relevant", "name": "estimated relevant documents",
                     "size": report.get("corpus_size"), "value": relevant.get("estimate"),
                     "value_low": relevant.get("low"), "value_high": relevant.get("high"),
                     "basis": f"the pair's model ({report.get('design') or 'no design'})",
                     "statement": (f"at least {floor:.0f} relevant documents were found with certain labels"
                                   if floor is not None else None),
                     "recall_withheld_reason": relevant.get("withheld_reason")})
    cost = report.get("cost")
    if cost:
        judged = report.get("judged_documents")
        currency = cost.get("currency") or "USD"
        for name, value in (("spent", cost.get("spent")),
                            ("spent on the estimation samples", cost.get("estimation_spent")),
                            ("spent on certification samples", cost.get("certification_spent")),
                            ("per judged document of the estimation samples", cost.get("per_judged_document"))):
            rows.append({"row_type": "cost", "name": f"{name} ({currency})", "judged": judged, "value": value,
                         "basis": "rewards and crowd fees" if cost.get("includes_fees") else "rewards"})
        uniform = report.get("uniform_sampling_judgments") or {}
        if uniform.get("documents") is not None:
            ratio = report.get("cost_ratio")
            rows.append({"row_type": "cost", "name": "documents a uniform sample would need for the same interval",
                         "judged": judged, "value": uniform.get("documents"),
                         "statement": f"{ratio:.1f} times the documents the pair design judged" if ratio else None})
    latest = (report.get("certification") or {}).get("latest")
    if latest:
        verdict = latest.get("verdict") or {}
        outcome = ("passed" if verdict.get("passed") else "failed") if verdict else latest.get("state")
        confidence = latest.get("confidence")
        at = f" at {confidence:.2f} confidence" if confidence is not None else ""
        rows.append({"row_type": "certification", "name": latest.get("classifier"), "role": latest.get("metric"),
                     "value": verdict.get("estimate"), "value_low": verdict.get("lower_bound"),
                     "basis": latest.get("state"),
                     "statement": f"{latest.get('metric_label') or latest.get('metric')} ≥ {latest.get('target')}"
                                  f"{at}: {outcome}"})
    return rows


def topic_report_csv(*, report: dict[str, Any], metadata: list[tuple[str, Any]] | None = None) -> str:
    """One row per classifier, a `headline` row per classifier (schema 3), a `design_based` row per pair
    classifier when the report has the dependence check, then one per region, then `pooled_recall` (per
    classifier), `estimated_relevant`, `cost` and `certification` rows when the report has them (the last three
    columns, value, value_low, value_high, carry their figures; columns in docs/report.md). With `metadata`, a
    leading block of "#key,value" rows
    (skip them with pandas' comment="#", or any reader that drops lines starting with "#"). A topic set's report
    (kind "multiclass") is written by ``multiclass_report_csv``."""
    if report.get("kind") == "multiclass":
        return multiclass_report_csv(report=report, metadata=metadata)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for key, value in metadata or []:
        text = " ".join(str(value).split()) if value is not None else ""
        writer.writerow(["#" + key, csv_cell(text)])
    writer.writerow(CSV_COLUMNS)
    width = len(CSV_COLUMNS)

    def write(cells: list[Any]) -> None:
        """A row given by position, padded to the header's width (the value columns come last)."""
        writer.writerow(cells + [""] * (width - len(cells)))

    for c in report.get("classifiers") or []:
        write([_csv_cell(v) for v in (
            "classifier", c["name"], c["role"], c["retrieved"], c["precision"]["judged"], None,
            c["precision"]["estimate"], c["precision"]["low"], c["precision"]["high"],
            c["recall"]["estimate"], c["recall"]["low"], c["recall"]["high"], c["recall"]["method"],
            c["f1"]["estimate"], c["f1"]["low"], c["f1"]["high"], c["extrapolated_precision"]["estimate"],
            c["fingerprint"], None, None,
            c["extrapolated_precision"].get("review_documents"), c["recall"].get("withheld_reason"),
        )])
    for c in report.get("classifiers") or []:
        headline = c.get("headline")
        if not headline:
            continue  # a snapshot older than schema 3
        # The figure the page leads with (design-based, δ1 band or pair model) and its statement in words.
        write([_csv_cell(v) for v in (
            "headline", c["name"], c["role"], None, headline.get("judged"), None, None, None, None,
            headline.get("estimate"), headline.get("low"), headline.get("high"), None,
            None, None, None, None, None,
            headline.get("basis"), " ".join(str(headline.get("statement") or "").split()), None, None,
        )])
    design = report.get("design_based") or {}
    pair = report.get("pair") or {}
    for key, role in (("C1", "c1"), ("C2", "c2")):
        recall = design.get(key)
        if not recall:
            continue
        # The dependence check (issue 11): recall without the independence assumption.
        write([_csv_cell(v) for v in (
            "design_based", pair.get(role), role, None, None, None, None, None, None,
            recall.get("estimate"), recall.get("low"), recall.get("high"), recall.get("method"),
            None, None, None, None, None, None, None, None, None,
        )])
    for r in report.get("regions") or []:
        write([_csv_cell(v) for v in (
            "region", r["name"], None, r["size"], r["judged"], r["relevant"], r["precision"],
            None, None, None, None, None, None, None, None, None, None, None, None, None, None, None,
        )])
    for cells in _summary_rows(report):
        if isinstance(cells.get("statement"), str):
            cells["statement"] = " ".join(cells["statement"].split())
        writer.writerow([_csv_cell(cells.get(column)) for column in CSV_COLUMNS])
    return out.getvalue()
