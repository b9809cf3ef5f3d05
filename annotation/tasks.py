"""Celery tasks of the annotation app: thin wrappers that take ids (as keywords) and call services.

Each is safe to run twice: a launch draws up to totals (a second run draws
nothing new), expiry only touches assignments past their deadline, posteriors
are recomputed from all judgments, an upload that is no longer pending is left
alone.  Task names are kept stable so messages queued by an older release still
find their task.
"""
from __future__ import annotations

from typing import Any

from celery import shared_task
from django.db import transaction

from annotation.events import LabelPosteriorsUpdated, event_send_on_commit
from annotation.models import Topic
from annotation.services.crowd.assignments import assignments_expire
from annotation.services.crowd.crowds import crowd_reconcile_all
from annotation.services.crowd.labels import labels_posteriors_recompute
from annotation.services.sampling.draws import samples_launch


@shared_task(name="annotation.tasks.samples_draw_task")
def samples_draw_task(*, topic_id: int, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """Draw, queue and publish a topic's samples; `options` are samples_draw's JSON-able keywords."""
    topic = Topic.objects.get(pk=topic_id)
    launch = samples_launch(topic=topic, **(options or {}))
    return {"draws": [d.pk for d in launch.draws], "hits": len(launch.hits), "documents": launch.documents}


@shared_task(name="annotation.tasks.assignments_expire_task")
def assignments_expire_task() -> int:
    return assignments_expire()


@shared_task(name="annotation.tasks.labels_posteriors_task")
def labels_posteriors_task(*, topic_id: int) -> int:
    """Dawid–Skene posteriors of a topic's labels; announced after commit (estimation recomputes)."""
    topic = Topic.objects.get(pk=topic_id)
    with transaction.atomic():
        updated = labels_posteriors_recompute(topic=topic)
        event_send_on_commit(event=LabelPosteriorsUpdated(topic_id=topic_id))
    return updated


@shared_task(name="annotation.tasks.crowd_reconcile_task")
def crowd_reconcile_task() -> None:
    """Every registered crowd platform's reconcile (Mechanical Turk: publish, confirm, pay, expire)."""
    crowd_reconcile_all()


# Classifier builds (issue 15) live in their own module; imported here so Celery's autodiscovery registers them.
from annotation.tasks_builds import (  # noqa: E402,F401
    classifier_build_finish_task,
    classifier_build_shard_task,
    classifier_build_task,
    classifier_builds_stuck_task,
)

# Router builds (issue 15, topic sets) likewise: annotation/tasks_routers.py.
from annotation.tasks_routers import router_build_task, router_builds_stuck_task  # noqa: E402,F401

# Corpus uploads' import and sweep likewise: annotation/tasks_uploads.py (the upload service queues its task
# without importing every task of the app).
from annotation.tasks_uploads import IMPORT_RETRIES, corpus_import_task, corpus_uploads_stuck_task  # noqa: E402,F401
