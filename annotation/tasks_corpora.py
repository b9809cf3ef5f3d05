"""Celery task of corpus deletion (annotation/services/corpora/corpus_delete.py): thin, by corpus id, safe twice
(a second run continues what the first left, or finds the corpus gone)."""
from __future__ import annotations

from celery import shared_task
from django.db import InterfaceError, OperationalError

from annotation.services.corpora.corpus_delete import corpus_delete_run


@shared_task(name="annotation.tasks_corpora.corpus_delete_task", autoretry_for=(OperationalError, InterfaceError),
             max_retries=5, retry_backoff=2, retry_backoff_max=300, retry_jitter=True)
def corpus_delete_task(*, corpus_id: int) -> bool:
    """Delete a corpus in batches (the admin's delete starts it)."""
    return corpus_delete_run(corpus_id=corpus_id)
