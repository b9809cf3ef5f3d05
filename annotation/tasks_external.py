"""Celery task of a corpus that stays in the team's engine (annotation/services/corpora/backends/external.py):
the pair's region counts, counted in the engine outside any request. Thin, by topic id, safe to run twice
(the second run finds the counts of the current snapshot cached and does nothing)."""
from __future__ import annotations

from celery import shared_task

from annotation.services.corpora.backends.external import external_pair_count_run


@shared_task(name="annotation.tasks_external.external_pair_count_task")
def external_pair_count_task(*, topic_id: int) -> dict | None:
    """Count the topic's pair in its corpus's engine and keep the counts for the plan page, the quote and the launch."""
    plan = external_pair_count_run(topic_id=topic_id)
    return None if plan is None else {"snapshot": plan.snapshot, "engine": plan.engine, "counts": plan.counts}
