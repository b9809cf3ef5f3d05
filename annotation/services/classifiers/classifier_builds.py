"""Classifiers built by tasks, with progress, never in a web request (issue 15).

A build is a `ClassifierBuild` row: what to build (kind and definition), its progress (documents or ids
processed of the total), and at the end the classifier it stored or the error that stopped it.

* `classifier_build_start` validates everything it can at once (the name, the terms and fields, the
  uploaded file's format) and raises ClassifierError, so a user mistake never becomes a failed build; it
  queues the build after commit (without a broker, CELERY_TASK_ALWAYS_EAGER, it runs the build at once).
* Keyword builds split the corpus's document ids into `shards` id ranges holding about the same number of
  documents; each range is scanned by its own task (a Celery group, spread over every worker) and a chord
  callback unions the shards' bitmaps and stores the classifier with `classifier_store`. The union of the
  ranges is the whole corpus, so the retrieved set and the fingerprint are those of a one-process scan,
  whatever the number of shards. Without a broker (CELERY_TASK_ALWAYS_EAGER) the group runs inline.
* Trained classifiers (issue 13 item 3, annotation/services/classifiers/trained.py): the request checks fields, partner and
  label counts (`trained_request_check`); the task fits the model with cross-fitting (progress: fit k of 6),
  saves its weights once under MEDIA_ROOT with their sha256 (`trained_model_save`), then scores the corpus in
  the same id-range shards as a keyword build (group + chord); each shard loads and checks the saved weights,
  writes its (ids, scores) to a file and returns the file's name and sha256; the chord callback reads them,
  stores the classifier and one score row per document (COPY on PostgreSQL). Scores do not depend on the split,
  so any number of shards gives the one-process classifier. The weights file is kept (the build names it);
  the shards' files are removed at the end, every file of a failed build too.
* Uploaded ids and scores are one task (resolving ids is one database pass).
* Progress is written by plain UPDATEs in autocommit (no transaction is open during a scan), so the
  page sees it at once; shards add to it atomically and a shard run twice cannot push it past the total.
* Every task is safe to run twice: a build that is no longer pending is not started again, a finished one
  is not stored again. Any exception marks the build failed with a message; a build with no progress for
  CLASSIFIER_BUILD_STUCK_SECONDS (its worker lost) is failed by `classifier_builds_stuck_fail` (beat).
* What each kind does (its definition, its steps, its fingerprint, its cleanup, its page's facts) lives in
  its module of classifiers/kinds/, found through the registry (`kind_get`); this module only runs the
  steps. Queueing, start, progress, failure, the end and the sweep are those of every background job
  (core/jobs.py).
"""
from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.utils import timezone
from pyroaring import BitMap

from annotation.models import Classifier, ClassifierBuild, Corpus
from annotation.services.classifiers.classifier import ClassifierError, ClassifierFileError
from annotation.services.classifiers.kinds import ClassifierKind, kind_get, kinds_buildable
from annotation.services.classifiers.kinds.ids import UPLOAD_DIR, upload_absolute, upload_file_save
from annotation.services.classifiers.kinds.steps import bitmap_encode, shard_ranges
from core.errors import ApplicationError
from core.jobs import (
    job_begin,
    job_enqueue,
    job_enqueue_on_commit,
    job_fail,
    job_fail_exception,
    job_heartbeat,
    job_progress_add,
    jobs_stuck_fail,
)

logger = logging.getLogger(__name__)

__all__ = ["UPLOAD_DIR"]
# Default number of shards of a sharded build: one per this many documents, at most MAX_SHARDS.
DOCUMENTS_PER_SHARD = 250_000
MAX_SHARDS = 64
DEFAULT_STUCK_SECONDS = 30 * 60
UNEXPECTED = "The build stopped on an unexpected error; the details are in the server log."
STUCK = ("The build stopped making progress (its worker or the database went away) and nothing has been heard "
         "from it since. Nothing was stored: start it again.")
QUEUE_DOWN = "The build could not be queued (the task queue is unreachable). Start it again when it is back."
LIVE = (ClassifierBuild.Status.PENDING, ClassifierBuild.Status.RUNNING)


# --- start ----------------------------------------------------------------------------------------------


def _name_check(*, corpus: Corpus, name: str) -> str:
    name = (name or "").strip()
    if not name:
        raise ClassifierError("the classifier needs a name")
    if Classifier.objects.filter(corpus=corpus, name=name).exists():
        raise ClassifierError(f"corpus “{corpus.name}” already has a classifier named “{name}”; choose another name")
    if ClassifierBuild.objects.filter(corpus=corpus, name=name, status__in=LIVE).exists():
        raise ClassifierError(f"a classifier named “{name}” is being built for corpus “{corpus.name}”; choose another "
                              "name or wait for it")
    return name


def _upload_absolute(relative: str) -> Path:
    return upload_absolute(relative)


def classifier_build_file_save(*, original_name: str, chunks: Iterable[bytes]) -> str:
    """Stream an uploaded ids or scores file under MEDIA_ROOT; returns its path relative to MEDIA_ROOT."""
    return upload_file_save(original_name=original_name, chunks=chunks)


def _shard_count(*, documents: int, shards: int | None) -> int:
    if shards is None:
        shards = -(-documents // DOCUMENTS_PER_SHARD)
    return max(1, min(int(shards), MAX_SHARDS, max(documents, 1)))


def _buildable(kind: str) -> ClassifierKind:
    if kind not in kinds_buildable():
        raise ClassifierError(f"a {kind} classifier is not built here")
    return kind_get(kind)


def classifier_build_start(*, corpus: Corpus, name: str, kind: str, definition: dict, user: Any = None,
                           shards: int | None = None) -> ClassifierBuild:
    """Validate a classifier and queue its build (after commit); ClassifierError for every user mistake.

    The definition is the kind's (classifiers/kinds/): keywords {"terms": [...], "fields": [...]} (fields:
    title, text or metadata fields of the corpus); ids {"file": <path under MEDIA_ROOT from
    classifier_build_file_save>, "source": <file name>}; scores the same plus "threshold"; trained: see
    kinds/trained.py. `shards` splits a sharded build (default: one per 250,000 documents).
    """
    builder = _buildable(kind)
    if shards is not None and not 1 <= int(shards) <= MAX_SHARDS:
        raise ClassifierError(f"shards must be between 1 and {MAX_SHARDS}")
    try:
        name = _name_check(corpus=corpus, name=name)
        clean = builder.definition_clean(corpus=corpus, definition=definition)
    except ClassifierError:
        builder.start_refused(definition=definition)
        raise
    total = builder.build_total(corpus=corpus, definition=clean)
    shard_count = _shard_count(documents=total, shards=shards) if builder.steps in ("scan", "train") else 1
    build = ClassifierBuild.objects.create(
        corpus=corpus, name=name, kind=kind, definition=clean, total=total, shards=shard_count,
        created_by=user if getattr(user, "pk", None) else None,
    )
    # No broker, no worker: the build runs now, in the caller's transaction (a rollback forgets both).
    job_enqueue_on_commit(job=build, enqueue=lambda: classifier_build_enqueue(build_id=build.pk))
    return build


def classifier_build_enqueue(*, build_id: int) -> bool:
    """Queue the build's task; with the broker down, fail the build with the reason and return False."""
    from annotation.tasks_builds import classifier_build_task  # noqa: PLC0415 — a task module imports this service

    return job_enqueue(model=ClassifierBuild, job_id=build_id,
                         send=lambda: classifier_build_task.delay(build_id=build_id),
                         queue_down=QUEUE_DOWN, unexpected=UNEXPECTED, on_fail=lambda: _cleanup(build_id))


# --- run --------------------------------------------------------------------------------------------------


def _cleanup(build_id: int) -> None:
    """What a failed build leaves behind (files), removed by its kind."""
    build = ClassifierBuild.objects.filter(pk=build_id).only("pk", "kind", "definition", "status").first()
    if build is not None and build.status == ClassifierBuild.Status.FAILED and build.kind in kinds_buildable():
        kind_get(build.kind).cleanup(build=build)


def _fail(build_id: int, message: str) -> None:
    if job_fail(model=ClassifierBuild, job_id=build_id, message=message):
        _cleanup(build_id)


def classifier_build_fail(*, build_id: int, exc: BaseException) -> None:
    """Record why a build stopped: the message of a user-facing error (and its detail), else a pointer to the
    log."""
    if job_fail_exception(model=ClassifierBuild, job_id=build_id, exc=exc, unexpected=UNEXPECTED,
                          message=lambda error: _message(build_id, error)):
        _cleanup(build_id)


def _message(build_id: int, exc: ApplicationError) -> str:
    """A user-facing error's message; an uploaded file's problem names the file as uploaded, not the stored copy."""
    if not isinstance(exc, ClassifierFileError):
        return exc.message
    definition = ClassifierBuild.objects.filter(pk=build_id).values_list("definition", flat=True).first() or {}
    source = definition.get("source") if isinstance(definition, dict) else None
    return exc.named(str(source)) if source else exc.message


def _heartbeat() -> dict:
    # While a build runs, its details hold only the heartbeat (and a phase): a shard's write replaces it whole.
    return {"heartbeat": timezone.now().isoformat()}


def _progress_add(build_id: int, count: int) -> None:
    job_progress_add(model=ClassifierBuild, job_id=build_id, count=count, details=_heartbeat())


def _phase(build_id: int, phase: str) -> None:
    job_heartbeat(model=ClassifierBuild, job_id=build_id, details={**_heartbeat(), "phase": phase})


def classifier_build_begin(*, build_id: int) -> ClassifierBuild | None:
    """Mark a waiting build running and return it; None when it is not waiting (started already, or gone)."""
    if not job_begin(model=ClassifierBuild, job_id=build_id, details=_heartbeat()):
        return None
    return ClassifierBuild.objects.select_related("corpus").get(pk=build_id)


def classifier_build_shard_ranges(*, corpus: Corpus, shards: int) -> list[tuple[int, int]]:
    """`shards` half-open id ranges [lo, hi) holding about the same number of the corpus's documents."""
    return shard_ranges(corpus=corpus, shards=shards)


def classifier_build_prepare(*, build_id: int) -> list[tuple[int, int]] | None:
    """The in-task steps of a started build, by its kind: a "run" kind is built here (None: nothing to
    shard); a "train" kind fits here, then, as a "scan" kind, its id ranges are returned for the shard tasks.
    None too when the build stopped meanwhile."""
    build = ClassifierBuild.objects.select_related("corpus").get(pk=build_id)
    if build.status != ClassifierBuild.Status.RUNNING:
        return None
    kind = kind_get(build.kind)
    if kind.steps == "run":
        kind.run(build_id=build_id, progress=lambda n: _progress_add(build_id, n))
        return None
    if kind.steps == "train" and not kind.prepare(build=build, phase=lambda text: _phase(build_id, text)):
        return None
    return classifier_build_shard_ranges(corpus=build.corpus, shards=build.shards)


def classifier_build_shard(*, build_id: int, pk_from: int, pk_to: int) -> str:
    """Scan or score one id range of a build; returns its result (text, for the chord)."""
    build = ClassifierBuild.objects.select_related("corpus").get(pk=build_id)
    if build.status != ClassifierBuild.Status.RUNNING:
        return bitmap_encode(BitMap())  # failed meanwhile (another shard): the chord will not store anything
    return kind_get(build.kind).shard(build=build, pk_range=(pk_from, pk_to),
                                      progress=lambda n: _progress_add(build_id, n))


def classifier_build_finish(*, build_id: int, shard_results: list[str]) -> ClassifierBuild | None:
    """Store the classifier from the shards' results; a build not running (done, failed) is left alone."""
    kind = ClassifierBuild.objects.filter(pk=build_id).values_list("kind", flat=True).first()
    if kind is None:
        return None
    return kind_get(kind).finish(build_id=build_id, shard_results=shard_results,
                                 phase=lambda text: _phase(build_id, text))


# --- stuck builds -----------------------------------------------------------------------------------------


def _stuck_after() -> timedelta:
    return timedelta(seconds=int(getattr(settings, "CLASSIFIER_BUILD_STUCK_SECONDS", DEFAULT_STUCK_SECONDS)))


def classifier_builds_stuck_fail(*, now: datetime | None = None) -> int:
    """Fail waiting or running builds with no sign of life (progress, heartbeat) for the stuck delay."""
    failed = jobs_stuck_fail(model=ClassifierBuild, older_than=_stuck_after(), message=STUCK, now=now)
    for build_id in failed:
        _cleanup(build_id)
    return len(failed)


# --- the page -----------------------------------------------------------------------------------------------


def classifier_build_state(*, build: ClassifierBuild) -> dict[str, Any]:
    """What the build page and its JSON status show (the kind adds its own facts)."""
    details = build.details if isinstance(build.details, dict) else {}
    kind = kind_get(build.kind)
    status_display = build.get_status_display()
    detail = kind.status_detail(build=build, details=details) if build.status == ClassifierBuild.Status.RUNNING \
        else None
    if detail:
        status_display = f"{status_display} ({detail})"
    state: dict[str, Any] = {
        "status": build.status, "status_display": status_display, "finished": build.job_finished,
        "processed": build.processed, "total": build.total, "percent": build.job_percent, "shards": build.shards,
        "error": build.error, "classifier_id": build.classifier_id,
        "retrieved": details.get("retrieved"), "warnings": details.get("warnings", []),
        "unknown_count": details.get("unknown_count", 0), "unknown_examples": details.get("unknown_examples", []),
    }
    state.update(kind.state(build=build, details=details))
    return state
