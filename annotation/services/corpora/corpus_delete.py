"""Deleting a corpus: started in the request, carried out by a task in batches (issue 25 item 2: the admin's
"delete" of a corpus of 60,000 documents collected and listed every row in the request, timed out, and
deleted nothing).

* `corpus_delete_start` (the admin's action and delete page) refuses a corpus that topics use (they PROTECT it:
  their samples and judgments cite its documents) and queues the task after commit. Bounded work: a few
  counts.
* `corpus_delete_run` (the task) deletes the classifiers' scores, the classifiers and their builds, then the
  documents, DELETE_BATCH at a time, each batch its own transaction, lowering the corpus's `document_count`
  as it goes (the progress the admin's list shows), and last the corpus row. Safe to run twice, and a run cut
  short is continued by the next (queue it again from the admin).

There is no job row of its own (a model is needed for one: see the issue's note); the corpus's document count
is its progress and the server log its failure.
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from django.db import transaction
from django.db.models import QuerySet

from annotation.models import Classifier, ClassifierBuild, ClassifierScore, Corpus, Document, Topic
from core.errors import ApplicationError

logger = logging.getLogger(__name__)

DELETE_BATCH = 5_000


class CorpusInUse(ApplicationError):
    """Topics use the corpus: it cannot be deleted before them."""

    http_status = 409
    code = "conflict"


@dataclass(frozen=True)
class CorpusDeletion:
    corpus_id: int
    name: str
    documents: int
    classifiers: int


def corpus_delete_refusal(*, corpus: Corpus) -> str | None:
    """Why the corpus cannot be deleted (topics use it), or None."""
    names = list(Topic.objects.filter(corpus=corpus).order_by("name").values_list("name", flat=True)[:6])
    if not names:
        return None
    shown = ", ".join(f"“{name}”" for name in names[:5]) + (" and more" if len(names) > 5 else "")
    return (f"Corpus “{corpus.name}” is used by topics ({shown}): their samples and judgments cite its documents. "
            "Delete those topics first.")


def corpus_delete_start(*, corpus: Corpus) -> CorpusDeletion:
    """Check the corpus can go and queue its deletion after commit (at once without a broker)."""
    refusal = corpus_delete_refusal(corpus=corpus)
    if refusal:
        raise CorpusInUse(refusal)
    deletion = CorpusDeletion(corpus_id=corpus.pk, name=corpus.name, documents=corpus.document_count,
                              classifiers=Classifier.objects.filter(corpus=corpus).count())
    transaction.on_commit(lambda: corpus_delete_enqueue(corpus_id=deletion.corpus_id))
    return deletion


def corpus_delete_enqueue(*, corpus_id: int) -> bool:
    """Queue the deletion's task; False (logged) when the queue is unreachable: nothing was deleted."""
    from annotation.tasks_corpora import corpus_delete_task  # noqa: PLC0415 — the task module imports this service

    try:
        corpus_delete_task.delay(corpus_id=corpus_id)
    except Exception:  # kombu/redis raise many kinds
        logger.exception("could not queue the deletion of corpus %s", corpus_id)
        return False
    return True


def _batches_delete(queryset: QuerySet, *, on_batch: Callable[[int], None] | None = None) -> int:
    """Delete the rows of `queryset` DELETE_BATCH at a time (by primary key), each batch in its own transaction."""
    deleted = 0
    while True:
        pks = list(queryset.order_by("pk").values_list("pk", flat=True)[:DELETE_BATCH])
        if not pks:
            return deleted
        with transaction.atomic():
            queryset.model._default_manager.filter(pk__in=pks).delete()
            deleted += len(pks)
            if on_batch is not None:
                on_batch(len(pks))


def corpus_delete_run(*, corpus_id: int) -> bool:
    """Delete the corpus and everything of it in batches; False if it is gone already or topics use it now."""
    corpus = Corpus.objects.defer("documents_bitmap").filter(pk=corpus_id).first()
    if corpus is None:
        return False
    refusal = corpus_delete_refusal(corpus=corpus)
    if refusal:
        logger.warning("corpus %s not deleted: %s", corpus_id, refusal)
        return False
    classifiers = Classifier.objects.filter(corpus_id=corpus_id)
    _batches_delete(ClassifierScore.objects.filter(classifier__in=classifiers))
    _batches_delete(ClassifierBuild.objects.filter(corpus_id=corpus_id))
    _batches_delete(classifiers)

    documents = Document.objects.filter(corpus_id=corpus_id)
    remaining = [documents.count()]

    def documents_gone(count: int) -> None:  # the progress: the corpus's count falls batch by batch
        remaining[0] = max(0, remaining[0] - count)
        Corpus.objects.filter(pk=corpus_id).update(document_count=remaining[0])

    _batches_delete(documents, on_batch=documents_gone)
    Corpus.objects.filter(pk=corpus_id).delete()
    logger.info("corpus %s (%s) deleted", corpus_id, corpus.name)
    return True
