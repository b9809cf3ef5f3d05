"""Celery task of a topic's label posteriors (annotation/services/crowd/labels.py): thin, by topic id, safe twice.

Its own module, so ``assignment_submit`` queues it without importing every task of the app;
annotation/tasks.py imports it for Celery's autodiscovery. The task name is kept.
"""
from __future__ import annotations

from celery import shared_task
from django.db import transaction

from annotation.events import LabelPosteriorsUpdated
from annotation.models import Topic
from annotation.services.crowd.labels import labels_posteriors_recompute
from core.events import event_send_on_commit


@shared_task(name="annotation.tasks.labels_posteriors_task")
def labels_posteriors_task(*, topic_id: int) -> int:
    """Dawid–Skene posteriors of a topic's labels; announced after commit (estimation recomputes)."""
    topic = Topic.objects.get(pk=topic_id)
    with transaction.atomic():
        updated = labels_posteriors_recompute(topic=topic)
        event_send_on_commit(event=LabelPosteriorsUpdated(topic_id=topic_id))
    return updated
