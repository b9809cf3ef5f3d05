"""Celery tasks of certification: thin wrappers that take ids and call the service.

Both are safe to run twice: a decided plan returns its stored verdict.
"""
from __future__ import annotations

from celery import shared_task

from estimation.services import certification


@shared_task(name="estimation.tasks_certification.certification_decide_task", ignore_result=True)
def certification_decide_task(plan_id: int) -> bool:
    """Decide one locked plan if its sample is ready (enqueued on commit when its labels land)."""
    return certification.certification_decide(plan_id=plan_id) is not None


@shared_task(name="estimation.tasks_certification.certifications_decide_ready_task", ignore_result=True)
def certifications_decide_ready_task() -> list[int]:
    """Periodic sweep (beat): decide every locked plan whose sample is fully judged."""
    return certification.certifications_decide_ready()
