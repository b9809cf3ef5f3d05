"""Celery tasks of certification sizing (estimation/services/certification_plans.py): thin, by id, safe twice.

`certification_sizing_task` sizes a plan (a second delivery of a sizing that started or ended does nothing);
a refusal (CertificationError) is recorded on the sizing as its message, anything else too, and re-raised.
`certification_sizings_stuck_task` is the beat's sweep ("fail-stuck-certification-sizings").
"""
from __future__ import annotations

from celery import shared_task

from core.errors import ApplicationError
from estimation.services.certification_plans import (
    certification_sizing_fail,
    certification_sizing_run,
    certification_sizings_stuck_fail,
)


@shared_task(name="estimation.tasks_sizing.certification_sizing_task")
def certification_sizing_task(*, sizing_id: int) -> str | None:
    try:
        sizing = certification_sizing_run(sizing_id=sizing_id)
    except ApplicationError as exc:  # refused on the current pilot: the sizing says why, no retry
        certification_sizing_fail(sizing_id=sizing_id, exc=exc)
        return "failed"
    except Exception as exc:
        certification_sizing_fail(sizing_id=sizing_id, exc=exc)
        raise
    return None if sizing is None else sizing.status


@shared_task(name="estimation.tasks_sizing.certification_sizings_stuck_task")
def certification_sizings_stuck_task() -> int:
    return certification_sizings_stuck_fail()
