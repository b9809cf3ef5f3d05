"""Celery task of a model judge run (annotation/services/crowd/model_judge.py): thin, by run id, safe twice.

Its own module, so the launch service queues it without importing every task; annotation/tasks.py imports it
for Celery's autodiscovery.
"""
from __future__ import annotations

from celery import shared_task

from annotation.services.crowd.model_judge import model_judge_run_execute, model_judge_runs_stuck_fail


@shared_task(name="annotation.tasks.model_judge_run_task", acks_late=True)
def model_judge_run_task(*, run_id: int) -> bool:
    """Ask the judge for the run's pending answers; a run that is not waiting is left alone."""
    return model_judge_run_execute(run_id=run_id)


@shared_task(name="annotation.tasks.model_judge_runs_stuck_task")
def model_judge_runs_stuck_task() -> int:
    """Beat: fail runs with no sign of life for MODEL_JUDGE_STUCK_SECONDS (their worker was lost)."""
    return model_judge_runs_stuck_fail()
