"""Celery tasks of corpus uploads (annotation/services/corpora/corpus_uploads.py): thin, by upload id, safe twice.

Their own module, as for builds (tasks_builds.py, tasks_routers.py), so the upload service queues its task
without importing every task of the app; annotation/tasks.py imports them for Celery's autodiscovery. The
task names are kept ("annotation.tasks_import.*") so messages queued by an older release still find them.
"""
from __future__ import annotations

from celery import shared_task
from django.db import InterfaceError, OperationalError

from annotation.services.corpora.corpus_uploads import corpus_upload_run, corpus_uploads_stuck_fail

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
