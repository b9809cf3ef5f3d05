"""Deleting a corpus: started in the request, carried out by a task in batches, as a job the operator can see
(issue 25 item 2: the admin's "delete" of a corpus of 60,000 documents collected and listed every row in the
request, timed out, and deleted nothing).

* `corpus_delete_start` (the admin's action and delete page) refuses a corpus that topics use (they PROTECT it:
  their samples and judgments cite its documents), creates a `CorpusDeletion` row (one live deletion per
  corpus: asking again returns it) and queues the task after commit. Bounded work: a few counts.
* `corpus_deletion_run` (the task) deletes the classifiers' scores, the classifiers and their builds, then the
  documents, DELETE_BATCH at a time, each batch its own transaction, adding to the row's progress
  ("deleting… n of m documents", a heartbeat too) and lowering the corpus's `document_count` as it goes, and
  last the corpus row. A failure is recorded on the row (its message for the admin); nothing is rolled back,
  and the next run continues where it stopped.
* `corpus_deletion_retry` (the admin's "run again") puts a failed deletion back in the queue's hands: a
  deletion killed mid-way is failed by the stuck sweep (`corpus_deletions_stuck_fail`, beat
  "fail-stuck-corpus-deletions") and then run again safely, since every step deletes what is left.
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import QuerySet

from annotation.models import Classifier, ClassifierBuild, ClassifierScore, Corpus, CorpusDeletion, Document, Topic
from core.errors import ApplicationError
from core.jobs import (
    LIVE,
    job_begin,
    job_enqueue,
    job_fail_exception,
    job_finish,
    job_heartbeat,
    job_progress_add,
    job_retry,
    jobs_stuck_fail,
)

logger = logging.getLogger(__name__)

DELETE_BATCH = 5_000
# No sign of life (a batch deleted) for this long: its worker or the queue went away. A batch of 5,000 documents
# takes well under a minute even on a loaded database.
DEFAULT_STUCK_SECONDS = 30 * 60
STUCK = ("No sign of life for {minutes} minutes (its worker or the queue went away): nothing more was deleted. "
         "Run it again (action “Run the selected deletions again”): it continues where it stopped.")
QUEUE_DOWN = ("The task queue could not be reached, so the deletion has not started; nothing was deleted. "
              "Run it again once the queue is back.")
UNEXPECTED = ("The deletion stopped on an unexpected error (see the server log); what was deleted stays deleted. "
              "Run it again: it continues where it stopped.")


class CorpusInUse(ApplicationError):
    """Topics use the corpus: it cannot be deleted before them."""

    http_status = 409
    code = "conflict"


class DeletionNotFailed(ApplicationError):
    """Only a failed deletion can be run again (a live one is running, a finished one is done)."""

    http_status = 409
    code = "conflict"


@dataclass(frozen=True)
class CorpusDeletionStarted:
    deletion: CorpusDeletion
    documents: int
    classifiers: int
    already_running: bool  # a live deletion of this corpus existed: it is returned, no second one is queued

    @property
    def name(self) -> str:
        return self.deletion.corpus_name


def corpus_delete_refusal(*, corpus: Corpus) -> str | None:
    """Why the corpus cannot be deleted (topics use it), or None."""
    names = list(Topic.objects.filter(corpus=corpus).order_by("name").values_list("name", flat=True)[:6])
    if not names:
        return None
    shown = ", ".join(f"“{name}”" for name in names[:5]) + (" and more" if len(names) > 5 else "")
    return (f"Corpus “{corpus.name}” is used by topics ({shown}): their samples and judgments cite its documents. "
            "Delete those topics first.")


def corpus_delete_start(*, corpus: Corpus, user: User | None = None) -> CorpusDeletionStarted:
    """Check the corpus can go, record its deletion and queue the task after commit."""
    refusal = corpus_delete_refusal(corpus=corpus)
    if refusal:
        raise CorpusInUse(refusal)
    classifiers = Classifier.objects.filter(corpus=corpus).count()
    with transaction.atomic():
        Corpus.objects.select_for_update().filter(pk=corpus.pk).values_list("pk", flat=True).first()  # one at a time
        live = CorpusDeletion.objects.filter(corpus_pk=corpus.pk, status__in=LIVE).first()
        if live is not None:
            return CorpusDeletionStarted(deletion=live, documents=corpus.document_count, classifiers=classifiers,
                                         already_running=True)
        deletion = CorpusDeletion.objects.create(
            corpus=corpus, corpus_pk=corpus.pk, corpus_name=corpus.name, total=corpus.document_count,
            created_by=user if user is not None and user.is_authenticated else None)
    deletion_id = deletion.pk
    transaction.on_commit(lambda: corpus_deletion_enqueue(deletion_id=deletion_id))
    return CorpusDeletionStarted(deletion=deletion, documents=corpus.document_count, classifiers=classifiers,
                                 already_running=False)


def corpus_deletion_enqueue(*, deletion_id: int) -> bool:
    """Queue the deletion's task; False when the queue is unreachable (the row then says so: nothing deleted)."""
    from annotation.tasks_corpora import corpus_delete_task  # noqa: PLC0415 — the task module imports this service

    return job_enqueue(model=CorpusDeletion, job_id=deletion_id,
                       send=lambda: corpus_delete_task.delay(deletion_id=deletion_id),
                       queue_down=QUEUE_DOWN, unexpected=UNEXPECTED)


def corpus_deletion_retry(*, deletion: CorpusDeletion) -> CorpusDeletion:
    """Run a failed deletion again (it continues where it stopped); refused unless it failed."""
    if deletion.corpus_id is None and not Corpus.objects.filter(pk=deletion.corpus_pk).exists():
        raise DeletionNotFailed(f"Corpus “{deletion.corpus_name}” is gone already: nothing is left to delete.")
    if not job_retry(model=CorpusDeletion, job_id=deletion.pk):
        raise DeletionNotFailed(f"The deletion of corpus “{deletion.corpus_name}” has not failed "
                                f"({deletion.get_status_display().lower()}): there is nothing to run again.")
    deletion_id = deletion.pk
    transaction.on_commit(lambda: corpus_deletion_enqueue(deletion_id=deletion_id))
    deletion.refresh_from_db()
    return deletion


def _batches_delete(queryset: QuerySet, *, on_batch: Callable[[int], None]) -> int:
    """Delete the rows of `queryset` DELETE_BATCH at a time (by primary key), each batch in its own transaction."""
    deleted = 0
    while True:
        pks = list(queryset.order_by("pk").values_list("pk", flat=True)[:DELETE_BATCH])
        if not pks:
            return deleted
        with transaction.atomic():
            queryset.model._default_manager.filter(pk__in=pks).delete()
            deleted += len(pks)
            on_batch(len(pks))


def corpus_deletion_run(*, deletion_id: int) -> CorpusDeletion | None:
    """Carry out a waiting deletion and return it; one not waiting (a second run of the task) is returned as it
    is. CorpusInUse and any other exception propagate: the task records them with `corpus_deletion_fail`, and
    what was deleted stays deleted."""
    if not job_begin(model=CorpusDeletion, job_id=deletion_id):
        return CorpusDeletion.objects.filter(pk=deletion_id).first()
    _run(deletion_id)
    return CorpusDeletion.objects.filter(pk=deletion_id).first()


def corpus_deletion_fail(*, deletion_id: int, exc: BaseException) -> bool:
    """Record why a deletion stopped: a user-facing error's message, else a pointer to the log."""
    return job_fail_exception(model=CorpusDeletion, job_id=deletion_id, exc=exc, unexpected=UNEXPECTED)


def _run(deletion_id: int) -> None:
    deletion = CorpusDeletion.objects.get(pk=deletion_id)
    corpus_id = deletion.corpus_pk
    corpus = Corpus.objects.defer("documents_bitmap").filter(pk=corpus_id).first()
    if corpus is None:  # gone already (an earlier run finished between its last batch and its row)
        job_finish(job=deletion, total=0, processed=0)
        return
    refusal = corpus_delete_refusal(corpus=corpus)
    if refusal:
        raise CorpusInUse(refusal)
    documents = Document.objects.filter(corpus_id=corpus_id)
    remaining = [documents.count()]
    CorpusDeletion.objects.filter(pk=deletion_id).update(total=remaining[0])

    def beat(_count: int) -> None:
        job_heartbeat(model=CorpusDeletion, job_id=deletion_id)

    classifiers = Classifier.objects.filter(corpus_id=corpus_id)
    _batches_delete(ClassifierScore.objects.filter(classifier__in=classifiers), on_batch=beat)
    _batches_delete(ClassifierBuild.objects.filter(corpus_id=corpus_id), on_batch=beat)
    _batches_delete(classifiers, on_batch=beat)

    def documents_gone(count: int) -> None:  # the progress: the job's count rises, the corpus's falls
        job_progress_add(model=CorpusDeletion, job_id=deletion_id, count=count)
        remaining[0] = max(0, remaining[0] - count)
        Corpus.objects.filter(pk=corpus_id).update(document_count=remaining[0])

    _batches_delete(documents, on_batch=documents_gone)
    with transaction.atomic():
        Corpus.objects.filter(pk=corpus_id).delete()
        deletion = CorpusDeletion.objects.select_for_update().get(pk=deletion_id)
        job_finish(job=deletion)
    logger.info("corpus %s (%s) deleted", corpus_id, deletion.corpus_name)


def corpus_deletions_stuck_fail(*, now: datetime | None = None) -> int:
    """Fail deletions waiting or running with no sign of life for CORPUS_DELETION_STUCK_SECONDS (default 30
    minutes); returns how many. Each can then be run again from the admin."""
    seconds = int(getattr(settings, "CORPUS_DELETION_STUCK_SECONDS", DEFAULT_STUCK_SECONDS))
    return len(jobs_stuck_fail(model=CorpusDeletion, older_than=timedelta(seconds=seconds),
                               message=STUCK.format(minutes=seconds // 60), now=now))

