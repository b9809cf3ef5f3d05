"""Celery tasks of the estimation app: thin wrappers that take ids and call services.

Both are safe to run twice: a snapshot with unchanged inputs is not stored again.
"""
from __future__ import annotations

from celery import shared_task

from estimation.services import recompute


@shared_task(name="estimation.tasks.topic_recompute_task", ignore_result=True)
def topic_recompute_task(*, topic_id: int) -> int | None:
    """Recompute one topic's report and store it as a snapshot (enqueued by topic_recompute_schedule)."""
    return recompute.topic_recompute_run(topic_id=topic_id)


@shared_task(name="estimation.tasks.snapshots_refresh_stale_task", ignore_result=True)
def snapshots_refresh_stale_task() -> list[int]:
    """Periodic sweep (beat): recompute topics whose snapshot is behind their judgments."""
    return recompute.snapshots_refresh_stale()


from estimation.tasks_certification import (  # noqa: E402,F401 - registered with the worker
    certification_decide_task,
    certifications_decide_ready_task,
)
