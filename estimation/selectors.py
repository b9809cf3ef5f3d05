"""Reads of stored estimates."""
from __future__ import annotations

from typing import Any

from annotation.models import Topic
from estimation.models import EstimateSnapshot


def topic_snapshot_latest(*, topic: Topic) -> EstimateSnapshot | None:
    return EstimateSnapshot.objects.filter(topic=topic).order_by("-version").first()


def topic_report_latest(*, topic: Topic) -> dict[str, Any] | None:
    """The report of the latest snapshot, with a `snapshot` key (version, created_at, checksum); None before the first."""
    snapshot = topic_snapshot_latest(topic=topic)
    if snapshot is None:
        return None
    return {
        **snapshot.report,
        "snapshot": {
            "version": snapshot.version,
            "created_at": snapshot.created_at.isoformat(),
            "inputs_checksum": snapshot.inputs_checksum,
            "code_version": snapshot.code_version,
        },
    }


def topic_snapshot_history(*, topic: Topic, limit: int = 200) -> list[dict[str, Any]]:
    """Recall of C1 and C2 per snapshot version, oldest first (for "recall over time" plots)."""
    rows = (
        EstimateSnapshot.objects.filter(topic=topic)
        .order_by("-version")
        .values("version", "created_at", "judgments", "report")[:limit]
    )
    history = []
    for row in reversed(list(rows)):
        report = row["report"] or {}
        eq1 = report.get("recall_eq1") or {}
        history.append({
            "version": row["version"],
            "created_at": row["created_at"].isoformat(),
            "judgments": row["judgments"],
            "judged_documents": report.get("judged_documents"),
            "C1": eq1.get("C1"),
            "C2": eq1.get("C2"),
        })
    return history
