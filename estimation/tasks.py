"""Celery tasks of the estimation app: thin wrappers that take ids (keyword arguments) and call services.

Every task is safe to run twice: a snapshot with unchanged inputs is not stored
again, and a decided plan returns its stored verdict.  The certification tasks
keep the names they were registered under in ``estimation.tasks_certification``
(beat schedules and queued messages refer to them by name).
"""
from __future__ import annotations

from celery import shared_task

from estimation.services import certification_verdicts, recompute


@shared_task(name="estimation.tasks.topic_recompute_task", ignore_result=True)
def topic_recompute_task(*, topic_id: int) -> int | None:
    """Recompute one topic's report and store it as a snapshot (enqueued by topic_recompute_schedule)."""
    return recompute.topic_recompute_run(topic_id=topic_id)


@shared_task(name="estimation.tasks.snapshots_refresh_stale_task", ignore_result=True)
def snapshots_refresh_stale_task() -> list[int]:
    """Periodic sweep (beat): recompute topics whose snapshot is behind their judgments."""
    return recompute.snapshots_refresh_stale()


@shared_task(name="estimation.tasks_certification.certification_decide_task", ignore_result=True)
def certification_decide_task(*, plan_id: int) -> bool:
    """Decide one locked plan if its sample is ready (enqueued on commit when its labels land)."""
    return certification_verdicts.certification_decide(plan_id=plan_id) is not None


@shared_task(name="estimation.tasks_certification.certifications_decide_ready_task", ignore_result=True)
def certifications_decide_ready_task() -> list[int]:
    """Periodic sweep (beat): decide every locked plan whose sample is fully judged."""
    return certification_verdicts.certifications_decide_ready()


# Certification sizing (a job per plan edit) and its stuck sweep: estimation/tasks_sizing.py.
from estimation.tasks_sizing import certification_sizing_task, certification_sizings_stuck_task  # noqa: E402,F401
