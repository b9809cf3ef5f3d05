"""Celery task of a topic's launch (annotation/services/sampling/draws.py): thin, by topic id, safe to run twice.

Its own module, so ``samples_launch_enqueue`` queues it without importing every task of the app;
annotation/tasks.py imports it for Celery's autodiscovery. The task name is kept.
"""
from __future__ import annotations

from typing import Any

from celery import shared_task

from annotation.models import Topic
from annotation.services.sampling.draws import samples_launch


@shared_task(name="annotation.tasks.samples_draw_task")
def samples_draw_task(*, topic_id: int, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """Draw, queue and publish a topic's samples; `options` are samples_draw's JSON-able keywords."""
    topic = Topic.objects.get(pk=topic_id)
    launch = samples_launch(topic=topic, **(options or {}))
    return {"draws": [d.pk for d in launch.draws], "hits": len(launch.hits), "documents": launch.documents}
