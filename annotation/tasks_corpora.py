"""Celery tasks of corpus deletion (annotation/services/corpora/corpus_delete.py): thin, by id, safe twice (a
second run of a deletion returns it as it is; a failed one is run again from the admin and continues)."""
from __future__ import annotations

from celery import shared_task

from annotation.models import Corpus
from annotation.services.corpora.corpus_delete import (
    corpus_delete_start,
    corpus_deletion_fail,
    corpus_deletion_run,
    corpus_deletions_stuck_fail,
)
from core.errors import ApplicationError


@shared_task(name="annotation.tasks_corpora.corpus_delete_task")
def corpus_delete_task(*, deletion_id: int | None = None, corpus_id: int | None = None) -> str | None:
    """Carry out a corpus deletion (the admin starts it); returns its status. `corpus_id` alone is what the
    previous release queued (no deletion row then): its row is created here, and the deletion runs."""
    if deletion_id is None and corpus_id is not None:
        corpus = Corpus.objects.defer("documents_bitmap").filter(pk=corpus_id).first()
        if corpus is None:
            return None
        try:
            started = corpus_delete_start(corpus=corpus)  # queues the run after commit
        except ApplicationError:  # topics use it now: nothing to delete (the admin shows why when asked again)
            return None
        return started.deletion.status
    if deletion_id is None:
        return None
    try:
        deletion = corpus_deletion_run(deletion_id=deletion_id)
    except ApplicationError as exc:  # topics use the corpus now: the row says so, no retry
        corpus_deletion_fail(deletion_id=deletion_id, exc=exc)
        return "failed"
    except Exception as exc:
        corpus_deletion_fail(deletion_id=deletion_id, exc=exc)
        raise
    return deletion.status if deletion is not None else None


@shared_task(name="annotation.tasks_corpora.corpus_deletions_stuck_task")
def corpus_deletions_stuck_task() -> int:
    """Fail deletions with no sign of life (beat "fail-stuck-corpus-deletions"); they can be run again."""
    return corpus_deletions_stuck_fail()
