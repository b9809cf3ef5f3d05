"""Corpus files uploaded in the browser: streamed to disk, then imported by a task.

The import itself is `corpus_import` (the same rules as `manage.py import_corpus`);
this module only keeps the CorpusUpload row up to date so the page can show
progress and, on failure, the file line and the problem.
"""
from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path, PurePath

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotation.models import CorpusUpload
from annotation.services.corpus_import import CorpusImportError, ImportSummary, corpus_import

logger = logging.getLogger(__name__)
UPLOAD_DIR = "corpus-uploads"


def _absolute(relative: str) -> Path:
    return Path(settings.MEDIA_ROOT) / relative


def corpus_upload_create(*, corpus_name: str, original_name: str, chunks: Iterable[bytes], id_field: str,
                         text_fields: list[str], user=None) -> CorpusUpload:
    """Stream the uploaded chunks to MEDIA_ROOT and queue the import (after commit)."""
    safe_name = PurePath(original_name).name.replace(" ", "_")[-120:] or "corpus"
    relative = f"{UPLOAD_DIR}/{uuid.uuid4().hex}-{safe_name}"
    path = _absolute(relative)
    path.parent.mkdir(parents=True, exist_ok=True)
    size = 0
    with path.open("wb") as out:
        for chunk in chunks:
            out.write(chunk)
            size += len(chunk)
    upload = CorpusUpload.objects.create(
        corpus_name=corpus_name, original_name=PurePath(original_name).name[:255], file_path=relative,
        file_size=size, id_field=id_field, text_fields=list(text_fields), created_by=user,
    )
    transaction.on_commit(lambda: corpus_upload_enqueue(upload_id=upload.pk))
    return upload


QUEUE_DOWN = "The import could not be queued (the task queue is unreachable). The file is saved: retry when it is back."


def corpus_upload_enqueue(*, upload_id: int) -> bool:
    """Queue the import task; with the broker down, record why on the row (the file stays) and return False."""
    from annotation.tasks import corpus_import_task

    try:
        corpus_import_task.delay(upload_id=upload_id)
    except Exception:  # noqa: BLE001 - kombu/redis raise many kinds; the upload must survive all of them
        logger.exception("could not queue the import of upload %s", upload_id)
        _set(upload_id, error_problem=QUEUE_DOWN)
        return False
    CorpusUpload.objects.filter(pk=upload_id, error_problem=QUEUE_DOWN).update(error_problem="")
    return True


def _set(upload_id: int, **fields) -> None:
    CorpusUpload.objects.filter(pk=upload_id).update(**fields)


def corpus_upload_run(*, upload_id: int) -> CorpusUpload | None:
    """Import an uploaded file; safe to run twice (a finished upload is left alone)."""
    upload = CorpusUpload.objects.filter(pk=upload_id).first()
    if upload is None or upload.status in (CorpusUpload.Status.DONE, CorpusUpload.Status.FAILED):
        return upload
    _set(upload_id, status=CorpusUpload.Status.RUNNING, progress=0)

    def progress(count: int, *args, **kwargs) -> None:
        # Called by the importer after each batch with the records read so far.
        _set(upload_id, progress=count)

    try:
        summary = corpus_import(
            path=_absolute(upload.file_path), corpus_name=upload.corpus_name, id_field=upload.id_field,
            text_fields=tuple(upload.text_fields), progress=progress,
        )
    except CorpusImportError as exc:
        _set(upload_id, status=CorpusUpload.Status.FAILED, error_line=exc.line, error_problem=exc.problem,
             finished_at=timezone.now())
    except Exception:  # a bug must not leave the page saying "importing" for ever
        logger.exception("corpus upload %s failed", upload_id)
        _set(upload_id, status=CorpusUpload.Status.FAILED, finished_at=timezone.now(),
             error_problem="The import stopped on an unexpected error; the details are in the server log.")
    else:
        _set(upload_id, status=CorpusUpload.Status.DONE, corpus_id=summary.corpus_id, summary=_summary_dict(summary),
             progress=summary.read, finished_at=timezone.now())
    upload.refresh_from_db()
    return upload


def _summary_dict(summary: ImportSummary) -> dict:
    """The import's counts as plain JSON for the upload page (the path is the server's, not shown)."""
    data = asdict(summary)
    data.pop("path", None)
    data["conflict_examples"] = [list(example) for example in summary.conflict_examples]
    return data

