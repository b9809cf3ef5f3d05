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
from django.db import InterfaceError, OperationalError, transaction

from annotation.events import LabelPosteriorsUpdated, event_send_on_commit
from annotation.models import Topic
from annotation.services.corpora.corpus_uploads import corpus_upload_run, corpus_uploads_stuck_fail
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


# A database that drops its connections mid-import: retried 5 times, at most 2, 4, 8, 16, 32 s apart (capped at
# 5 minutes, with jitter); after that the upload stays "importing" until corpus_uploads_stuck_task fails it.
IMPORT_RETRIES = 5


@shared_task(name="annotation.tasks_import.corpus_import_task", autoretry_for=(OperationalError, InterfaceError),
             max_retries=IMPORT_RETRIES, retry_backoff=2, retry_backoff_max=300, retry_jitter=True)
def corpus_import_task(*, upload_id: int) -> None:
    """Import a corpus uploaded in the browser (the page polls the upload row)."""
    corpus_upload_run(upload_id=upload_id)


@shared_task(name="annotation.tasks_import.corpus_uploads_stuck_task")
def corpus_uploads_stuck_task() -> int:
    """Fail uploads whose import task is gone (no heartbeat for CORPUS_UPLOAD_STUCK_SECONDS); beat runs it."""
    return corpus_uploads_stuck_fail()


# Classifier builds (issue 15) live in their own module; imported here so Celery's autodiscovery registers them.
from annotation.tasks_builds import (  # noqa: E402,F401
    classifier_build_finish_task,
    classifier_build_shard_task,
    classifier_build_task,
    classifier_builds_stuck_task,
)

# Router builds (issue 15, topic sets) likewise: annotation/tasks_routers.py.
from annotation.tasks_routers import router_build_task, router_builds_stuck_task  # noqa: E402,F401
