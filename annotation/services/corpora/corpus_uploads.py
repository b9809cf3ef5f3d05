"""Corpus files uploaded in the browser: streamed to disk, then imported by a task.

The import itself is `corpus_import` (the same rules as `manage.py import_corpus`);
this module only keeps the CorpusUpload row up to date so the page can show
progress and, on failure, the file line and the problem.

Life of an upload (issue 15 items 5 and 6, issue 12 item 6):

* The file is streamed to MEDIA_ROOT with a size cap (`CORPUS_UPLOAD_MAX_BYTES`):
  past it the partial file is removed and `CorpusUploadTooLarge` raised.
* The task imports it. Progress (records read) and a heartbeat are written after
  every batch *outside* the import's transaction (on PostgreSQL a second,
  autocommit connection), so the page sees them while the import runs; the import
  itself stays all or nothing.
* A database that goes away (OperationalError, InterfaceError) is re-raised for the
  task to retry; an upload whose task is gone (no heartbeat for
  `CORPUS_UPLOAD_STUCK_SECONDS`) is marked failed by a periodic sweep, with a
  reason and a retry button (its file is kept for that).
* Status, queueing, failure (message and `error_detail` {"line", "problem"}),
  retry and the sweep are those of every background job (core/jobs.py); this
  module keeps what is an upload's own: the file, the import, its summary.
* When an import finishes or fails because of the file, the file is deleted (the
  error line and problem are kept); `ImportFinished` is announced once.
* An analyst may delete a finished or failed upload record: its file goes, the
  corpus it created stays.
"""
from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from datetime import datetime, timedelta
from pathlib import Path, PurePath

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, InterfaceError, OperationalError, connection, connections, transaction
from django.db.models import Q
from django.utils import timezone

from annotation.events import ImportFinished
from annotation.models import CorpusUpload
from annotation.services.corpora.corpus_import import CorpusImportError, ImportSummary, corpus_import
from core.errors import ApplicationError
from core.events import event_send_on_commit
from core.jobs import (
    job_begin,
    job_enqueue,
    job_enqueue_on_commit,
    job_fail,
    job_finish,
    job_retry,
    jobs_stuck_fail,
)

logger = logging.getLogger(__name__)
UPLOAD_DIR = "corpus-uploads"
DEFAULT_MAX_BYTES = 1024 ** 3
DEFAULT_STUCK_SECONDS = 30 * 60
STUCK = ("The import stopped without finishing: the worker or the database went away and nothing has been "
         "heard from it since. Nothing was imported; the file is kept, so you can retry.")
UNEXPECTED = "The import stopped on an unexpected error; the details are in the server log. The file is kept: retry it."


class CorpusUploadTooLarge(ApplicationError):
    """The upload passed CORPUS_UPLOAD_MAX_BYTES; nothing was kept."""

    http_status = 413
    code = "too-large"


class CorpusUploadBusy(ApplicationError):
    """The upload is still waiting or importing, so it cannot be deleted."""


class CorpusUploadNotRetryable(ApplicationError):
    """Only a waiting upload, or one that failed for a reason other than its file, can be queued again."""


# The file types an upload may be (by name): JSON Lines or CSV, either gzip-compressed.
CORPUS_SUFFIXES = (".jsonl", ".jsonl.gz", ".json", ".json.gz", ".ndjson", ".ndjson.gz", ".csv", ".csv.gz")


class CorpusUploadRefused(ApplicationError):
    """A file that cannot be a corpus, seen before it is stored (its name's type, no bytes)."""


def corpus_upload_file_check(*, name: str, size: int | None) -> None:
    """Refuse a corpus file by its name and size before anything is stored (the page's form and the API alike)."""
    if not PurePath(name).name.lower().endswith(CORPUS_SUFFIXES):
        raise CorpusUploadRefused("Unsupported file type: upload .jsonl, .csv or either compressed with gzip (.gz).")
    if not size:
        raise CorpusUploadRefused("The file is empty.")


def upload_max_bytes() -> int:
    return int(getattr(settings, "CORPUS_UPLOAD_MAX_BYTES", DEFAULT_MAX_BYTES))


def _stuck_after() -> timedelta:
    return timedelta(seconds=int(getattr(settings, "CORPUS_UPLOAD_STUCK_SECONDS", DEFAULT_STUCK_SECONDS)))


def too_large_message(max_bytes: int) -> str:
    return (f"The file is larger than the limit of {_size(max_bytes)} (CORPUS_UPLOAD_MAX_BYTES); nothing was kept. "
            "Split it, or import it on the server with manage.py import_corpus.")


def _size(n: int) -> str:
    for unit, factor in (("GiB", 1024 ** 3), ("MiB", 1024 ** 2), ("KiB", 1024)):
        if n >= factor:
            return f"{n / factor:,.1f} {unit}".replace(".0 ", " ")
    return f"{n:,} bytes"


def _absolute(relative: str) -> Path:
    return Path(settings.MEDIA_ROOT) / relative


def _file_remove(upload: CorpusUpload) -> None:
    """Delete the upload's file if it is one of ours (under MEDIA_ROOT/corpus-uploads); a missing file is fine."""
    if not upload.file_path.startswith(f"{UPLOAD_DIR}/") or ".." in PurePath(upload.file_path).parts:
        return
    try:
        _absolute(upload.file_path).unlink(missing_ok=True)
    except OSError:
        logger.warning("could not delete the file of upload %s", upload.pk, exc_info=True)


def corpus_upload_file_exists(*, upload: CorpusUpload) -> bool:
    return upload.file_path.startswith(f"{UPLOAD_DIR}/") and _absolute(upload.file_path).is_file()


def corpus_upload_create(*, corpus_name: str, original_name: str, chunks: Iterable[bytes], id_field: str,
                         text_fields: list[str], user=None) -> CorpusUpload:
    """Stream the uploaded chunks to MEDIA_ROOT and queue the import (after commit).

    Raises CorpusUploadTooLarge as soon as the bytes written pass CORPUS_UPLOAD_MAX_BYTES; the partial file
    is removed and no row is created.
    """
    safe_name = PurePath(original_name).name.replace(" ", "_")[-120:] or "corpus"
    relative = f"{UPLOAD_DIR}/{uuid.uuid4().hex}-{safe_name}"
    path = _absolute(relative)
    path.parent.mkdir(parents=True, exist_ok=True)
    max_bytes = upload_max_bytes()
    size = 0
    try:
        with path.open("wb") as out:
            for chunk in chunks:
                size += len(chunk)
                if size > max_bytes:
                    raise CorpusUploadTooLarge(too_large_message(max_bytes), extra={"max_bytes": max_bytes})
                out.write(chunk)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    upload = CorpusUpload.objects.create(
        corpus_name=corpus_name, original_name=PurePath(original_name).name[:255], file_path=relative,
        file_size=size, id_field=id_field, text_fields=list(text_fields), created_by=user,
    )
    job_enqueue_on_commit(job=upload, enqueue=lambda: corpus_upload_enqueue(upload_id=upload.pk), eager_now=False)
    return upload


QUEUE_DOWN = "The import could not be queued (the task queue is unreachable). The file is saved: retry when it is back."


def corpus_upload_enqueue(*, upload_id: int) -> bool:
    """Queue the import task; with the broker down, record why on the row (the file stays) and return False."""
    from annotation.tasks_uploads import corpus_import_task  # noqa: PLC0415 — a task module imports this service

    return job_enqueue(model=CorpusUpload, job_id=upload_id, send=lambda: corpus_import_task.delay(upload_id=upload_id),
                       queue_down=QUEUE_DOWN, wait_when_down=True)


def corpus_upload_retry(*, upload_id: int) -> CorpusUpload:
    """Queue an upload again when `corpus_upload_retryable` says so; CorpusUploadNotRetryable otherwise."""
    upload = CorpusUpload.objects.get(pk=upload_id)
    if upload.status == CorpusUpload.Status.FAILED:
        if not corpus_upload_retryable(upload=upload):
            raise CorpusUploadNotRetryable(
                "This import failed because of the file itself (see the line and the problem), or its file is "
                "gone: correct the file and upload it again.")
        if not job_retry(model=CorpusUpload, job_id=upload_id, error_line=None, summary=_heartbeat()):  # somebody else retried it first
            upload.refresh_from_db()
            return upload
    elif not corpus_upload_retryable(upload=upload):
        # Queuing a live import twice would run it twice; a lost one is failed by the sweep, then retried.
        raise CorpusUploadNotRetryable("This upload is queued, importing or already imported; there is nothing "
                                       "to retry.")
    else:
        _set(upload_id, summary=_heartbeat(), heartbeat_at=timezone.now())
    corpus_upload_enqueue(upload_id=upload_id)
    upload.refresh_from_db()
    return upload


def corpus_upload_retryable(*, upload: CorpusUpload) -> bool:
    """An upload that could not be queued (the queue was down), or a failed one whose failure was not the
    file's (stuck, unexpected error) while its file is kept, can be queued again."""
    if upload.status == CorpusUpload.Status.PENDING:
        return upload.error_problem == QUEUE_DOWN
    return (upload.status == CorpusUpload.Status.FAILED and upload.error_problem in (STUCK, UNEXPECTED)
            and corpus_upload_file_exists(upload=upload))


def corpus_upload_delete(*, upload_id: int) -> CorpusUpload:
    """Delete a finished or failed upload record and its file; the corpus it imported is kept.

    Refused (CorpusUploadBusy) while the upload is waiting or importing. Returns the deleted row (unsaved).
    """
    with transaction.atomic():
        upload = CorpusUpload.objects.select_for_update().get(pk=upload_id)
        if upload.status not in (CorpusUpload.Status.DONE, CorpusUpload.Status.FAILED):
            raise CorpusUploadBusy(
                f"The upload of “{upload.corpus_name}” is {upload.get_status_display().lower()}: it can be deleted "
                "once it has finished or failed.")
        upload.delete()
        transaction.on_commit(lambda: _file_remove(upload))
    return upload


def _set(upload_id: int, **fields) -> None:
    CorpusUpload.objects.filter(pk=upload_id).update(**fields)


def _heartbeat() -> dict:
    """What the `summary` of a waiting or running upload holds: when it last gave a sign of life (as the row's
    `heartbeat_at` does; the summary's copy is what pages and tools of the earlier release read)."""
    return {"heartbeat": timezone.now().isoformat()}


@contextmanager
def _progress_writer(upload_id: int) -> Iterator[Callable[[int], None]]:
    """`write(records_read)`: progress and heartbeat on the upload row, visible to other connections at once.

    On PostgreSQL the import holds one transaction open on the default connection, so an update through it
    would stay invisible until the end: a second connection (autocommit) writes instead. It never touches
    what the import writes, so the import stays all or nothing. SQLite allows one writer at a time, so
    there the update goes through the import's own connection (visible at commit), as it does when the
    caller already holds a transaction (the row may be locked by it: a second connection would wait for ever).
    """
    if connection.vendor != "postgresql" or connection.in_atomic_block:
        yield lambda count: _set(upload_id, progress=count, summary=_heartbeat(), heartbeat_at=timezone.now())
        return
    default = connections[DEFAULT_DB_ALIAS]
    side = type(default)(dict(default.settings_dict), DEFAULT_DB_ALIAS)
    table = CorpusUpload._meta.db_table
    try:
        def write(count: int) -> None:
            with side.cursor() as cursor:
                cursor.execute(f"UPDATE {table} SET progress = %s, summary = %s::jsonb, heartbeat_at = %s WHERE id = %s",
                               [count, json.dumps(_heartbeat()), timezone.now(), upload_id])

        yield write
    finally:
        side.close()


def corpus_upload_run(*, upload_id: int) -> CorpusUpload | None:
    """Import an uploaded file; safe to run twice (a finished upload is left alone).

    A lost database connection (OperationalError, InterfaceError) propagates so the task can retry; the
    upload then stays "importing" until the retry or the stuck-upload sweep settles it.
    """
    upload = CorpusUpload.objects.filter(pk=upload_id).first()
    if upload is None or upload.status in (CorpusUpload.Status.DONE, CorpusUpload.Status.FAILED):
        return upload
    job_begin(model=CorpusUpload, job_id=upload_id)  # a retried task (lost connection) finds it running already

    try:
        with _progress_writer(upload_id) as progress:
            progress(0)  # the import starts over, with a heartbeat
            summary = corpus_import(
                path=_absolute(upload.file_path), corpus_name=upload.corpus_name, id_field=upload.id_field,
                text_fields=tuple(upload.text_fields), progress=progress,
            )
    except CorpusImportError as exc:
        _finish(upload, status=CorpusUpload.Status.FAILED, remove_file=True, error_line=exc.line,
                error_problem=exc.problem, error_detail={"line": exc.line, "problem": exc.problem})
    except (OperationalError, InterfaceError):
        # The task retries (autoretry_for); Celery's Django fixup closes the broken connection before the next run.
        logger.warning("corpus upload %s: database connection lost; the task will retry", upload_id, exc_info=True)
        raise
    except Exception:  # a bug must not leave the page saying "importing" for ever
        logger.exception("corpus upload %s failed", upload_id)
        _finish(upload, status=CorpusUpload.Status.FAILED, remove_file=False, error_problem=UNEXPECTED)
    else:
        _finish(upload, status=CorpusUpload.Status.DONE, remove_file=True, corpus_id=summary.corpus_id,
                summary=_summary_dict(summary), progress=summary.read)
    upload.refresh_from_db()
    return upload


def _finish(upload: CorpusUpload, *, status: str, remove_file: bool, error_problem: str = "",
            error_detail: dict | None = None, **fields) -> None:
    """Mark the upload done or failed, announce it, and delete the file when it is of no further use."""
    done = status == CorpusUpload.Status.DONE
    if done:
        job_finish(job=upload, **fields)
    else:
        fields.setdefault("summary", {})
        job_fail(model=CorpusUpload, job_id=upload.pk, message=error_problem, detail=error_detail, **fields)
    event_send_on_commit(event=ImportFinished(upload_id=upload.pk, corpus_id=fields.get("corpus_id") if done else None,
                                              succeeded=done))
    if remove_file:
        _file_remove(upload)


def corpus_uploads_stuck_fail(*, now: datetime | None = None) -> int:
    """Mark failed every upload waiting or importing with no sign of life for CORPUS_UPLOAD_STUCK_SECONDS
    (its task is gone: a worker killed, retries exhausted on a dead database). The file is kept for a retry.
    Uploads waiting because the queue was down already say so and are left alone. Returns how many."""
    failed = jobs_stuck_fail(model=CorpusUpload, older_than=_stuck_after(), message=STUCK, now=now,
                             exclude=Q(error_problem=QUEUE_DOWN), error_line=None)
    for upload_id in failed:
        event_send_on_commit(event=ImportFinished(upload_id=upload_id, corpus_id=None, succeeded=False))
    return len(failed)


def _summary_dict(summary: ImportSummary) -> dict:
    """The import's counts as plain JSON for the upload page (the path is the server's, not shown)."""
    data = asdict(summary)
    data.pop("path", None)
    data["conflict_examples"] = [list(example) for example in summary.conflict_examples]
    return data


def _documents(n: int) -> str:
    return f"{n:,} document" + ("" if n == 1 else "s")


def corpus_upload_message(*, upload: CorpusUpload) -> str:
    """The outcome of a finished import in words, e.g. "Imported 21,578 documents into Reuters (3 skipped as
    duplicates)."."""
    summary = upload.summary if isinstance(upload.summary, dict) else {}
    name = summary.get("corpus_name") or upload.corpus_name
    created = int(summary.get("created") or 0)
    unchanged = int(summary.get("unchanged") or 0)
    conflicts = int(summary.get("conflicts") or 0)
    skipped = []
    if unchanged:
        skipped.append(f"{unchanged:,} skipped as duplicates")
    if conflicts:
        skipped.append(f"{conflicts:,} skipped because a document with the same id and different content exists")
    message = f"Imported {_documents(created)} into {name}"
    if skipped:
        message += f" ({'; '.join(skipped)})"
    count = summary.get("document_count")
    if count is not None and int(count) != created:
        message += f"; the corpus now has {_documents(int(count))}"
    return message + "."
