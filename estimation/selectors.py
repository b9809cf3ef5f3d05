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

