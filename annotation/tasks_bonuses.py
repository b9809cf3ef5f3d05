"""Celery tasks of worker bonuses (annotation/services/crowd/bonuses.py): thin, by bonus id, safe twice.

Its own module, so the grant service queues it without importing every task; annotation/tasks.py imports it
for Celery's autodiscovery, and its crowd reconcile task (every five minutes) sweeps pending bonuses.
"""
from __future__ import annotations

from celery import shared_task

from annotation.services.crowd.bonuses import bonus_pay, bonuses_pay_pending


@shared_task(name="annotation.tasks.bonus_pay_task", acks_late=True)
def bonus_pay_task(*, bonus_id: int) -> str:
    """Pay one bonus; one that is not pending (paid, granted, failed) is left alone. Returns its status."""
    return bonus_pay(bonus_id=bonus_id).status


@shared_task(name="annotation.tasks.bonuses_pending_task")
def bonuses_pending_task() -> int:
    """Try every pending bonus once (MTurk was unreachable or throttling); the number paid."""
    return bonuses_pay_pending()
