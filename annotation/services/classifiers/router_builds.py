"""Routers built by tasks, with progress, never in a web request (issue 15; routers: annotation/services/classifiers/routers.py).

A build is a `RouterBuild` row: what to build (kind and definition), its progress, and at the end the router
it stored or the error that stopped it. The pattern is that of classifier builds
(annotation/services/classifiers/classifier_builds.py):

* `router_build_start` checks in the request what is cheap to check — the topic is a topic set, the name is
  free (and no build of that name is waiting or running), the keyword rules are well formed (routers.py's
  `_rules_clean`), an upload's size and header line — and raises RouterError, so such a mistake never
  becomes a failed build. An upload is saved under MEDIA_ROOT/router-uploads with its sha256 and removed
  when the build ends, whatever the outcome. The build is queued after commit (without a broker,
  CELERY_TASK_ALWAYS_EAGER, it runs at once, in the caller's transaction).
* `router_build_run` does the work. A keyword build scans the corpus in chunks of SCAN_CHUNK_DOCUMENTS
  (5,000) documents, writing its progress after each chunk in autocommit (no transaction is open during the
  scan, so the page sees it at once), then stores the router with routers.py's `_router_store` under the
  build's row lock. An upload is read, checked line by line and stored by `router_create_from_csv` itself,
  under the build's row lock; bad lines fail the build with every line number and reason in its error.
* Safe twice: only a waiting build is started (a conditional UPDATE), a build is stored only while it runs
  (select_for_update on its row), and the Router (topic, name) unique constraint refuses a second router.
* Queueing, start, progress, failure (with the bad lines as data in `error_detail`), the end and the
  stuck sweep are those of every background job (core/jobs.py).
"""
from __future__ import annotations

import hashlib
import logging
import uuid
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path, PurePath
from typing import Any

from django.conf import settings
from django.db import transaction

from annotation.models import Router, RouterBuild, Topic
from annotation.services.classifiers import routers
from annotation.services.classifiers.routers import ROUTER_CSV_MAX_BYTES, RouterError
from core.errors import ApplicationError
from core.jobs import (
    job_begin,
    job_enqueue,
    job_enqueue_on_commit,
    job_fail,
    job_fail_exception,
    job_finish,
    job_progress_add,
    jobs_stuck_fail,
)

logger = logging.getLogger(__name__)

UPLOAD_DIR = "router-uploads"
# Bad lines of an upload written into the build's error (one per line); the count of the rest follows.
ERROR_LINES_SHOWN = 100
UNEXPECTED = "The build stopped on an unexpected error; the details are in the server log."
STUCK = ("The build did not finish in time (its worker or the database went away). Nothing was stored: start it "
         "again.")
DEFAULT_STUCK_SECONDS = 30 * 60
QUEUE_DOWN = "The build could not be queued (the task queue is unreachable). Start it again when it is back."
LIVE = (RouterBuild.Status.PENDING, RouterBuild.Status.RUNNING)


# --- start ----------------------------------------------------------------------------------------------


def _upload_absolute(relative: str) -> Path:
    return Path(settings.MEDIA_ROOT) / relative


def _upload_relative_ok(relative: str) -> bool:
    return relative.startswith(f"{UPLOAD_DIR}/") and ".." not in PurePath(relative).parts


def _file_remove(relative: str) -> None:
    if not _upload_relative_ok(relative):
        return
    try:
        _upload_absolute(relative).unlink(missing_ok=True)
    except OSError:
        logger.warning("could not delete the router upload %s", relative, exc_info=True)


def _file_save(*, original_name: str, chunks: Iterable[bytes]) -> tuple[str, str, int]:
    """Stream an upload under MEDIA_ROOT; (path relative to MEDIA_ROOT, sha256, size). RouterError past the limit."""
    safe_name = PurePath(original_name).name.replace(" ", "_")[-120:] or "router.csv"
    relative = f"{UPLOAD_DIR}/{uuid.uuid4().hex}-{safe_name}"
    path = _upload_absolute(relative)
    path.parent.mkdir(parents=True, exist_ok=True)
    digest, size = hashlib.sha256(), 0
    try:
        with path.open("wb") as out:
            for chunk in chunks:
                size += len(chunk)
                if size > ROUTER_CSV_MAX_BYTES:
                    raise RouterError(f"the file is larger than {ROUTER_CSV_MAX_BYTES // 1_000_000} MB")
                digest.update(chunk)
                out.write(chunk)
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return relative, digest.hexdigest(), size


def router_build_csv_header_check(*, path: Path, source_name: str) -> int:
    """Check an upload's first non-empty line is the header ``id,class``; returns the number of lines.

    Streams the file (it may be ROUTER_CSV_MAX_BYTES): only the header is decoded. routers.py has no public
    check of the header alone: this reads it with routers.py's own line and cell readers (`_lines`, `_cells`),
    so the request refuses a wrong header as the full check in the task would.
    """
    header_ok: bool | None = None
    lines = 0
    with path.open("rb") as handle:
        for raw in handle:
            lines += 1
            if header_ok is not None or not raw.strip():
                continue
            number = lines
            # routers._lines decodes as the task will (a BOM dropped on line 1 only): as line 1, or after one.
            for _, text in list(routers._lines(raw if number == 1 else b"\n" + raw))[-1:]:
                if text is None:
                    raise RouterError(f"{source_name}: line {number} is not valid UTF-8 text",
                                      lines=[(number, "is not valid UTF-8 text")])
                cells = routers._cells(text)
                header_ok = not isinstance(cells, str) and [cell.strip().lower() for cell in cells] == ["id", "class"]
                if not header_ok:
                    reason = "the first line must be the header “id,class”"
                    raise RouterError(f"{source_name}: line {number}: {reason}", lines=[(number, reason)])
                break
    if header_ok is None:
        raise RouterError(f"{source_name}: the file is empty; it needs the header “id,class” and one line per document")
    return lines


def _name_free(*, topic: Topic, name: str) -> str:
    name = routers._name_check(topic=topic, name=name)
    if RouterBuild.objects.filter(topic=topic, name=name, status__in=LIVE).exists():
        raise RouterError(f"a router named {name!r} is being built for topic set {topic.name!r}; choose another name "
                          "or wait for it")
    return name


def router_build_start(*, topic: Topic, name: str, kind: str, rules: Sequence[Mapping[str, Any]] | None = None,
                       data: bytes | Iterable[bytes] | None = None, source_name: str | None = None,
                       user: Any = None) -> RouterBuild:
    """Check a router cheaply and queue its build (after commit); RouterError for every user mistake found now.

    keywords: `rules` as for routers.router_create_from_keywords; upload: `data` (the CSV's bytes, or its
    chunks) and `source_name` (the file's name as uploaded), as for routers.router_create_from_csv.
    """
    if kind not in Router.Kind.values:
        raise RouterError(f"a {kind} router is not built here")
    classes = routers._topic_set_check(topic)
    name = _name_free(topic=topic, name=name)
    if kind == Router.Kind.KEYWORDS:
        cleaned = routers._rules_clean(topic=topic, rules=rules or [], classes=classes)
        definition: dict[str, Any] = {"rules": cleaned}
        total = topic.corpus.document_count
    else:
        if data is None:
            raise RouterError("choose the CSV file of predictions")
        source = PurePath(source_name or "upload.csv").name[:255] or "upload.csv"
        chunks = [data] if isinstance(data, bytes | bytearray) else data
        relative, sha256, _ = _file_save(original_name=source, chunks=chunks)
        try:
            total = router_build_csv_header_check(path=_upload_absolute(relative), source_name=source)
        except BaseException:
            _file_remove(relative)
            raise
        definition = {"file": relative, "sha256": sha256, "source": source}
    build = RouterBuild.objects.create(topic=topic, name=name, kind=kind, definition=definition, total=total,
                                       created_by=user if getattr(user, "pk", None) else None)
    job_enqueue_on_commit(job=build, enqueue=lambda: router_build_enqueue(build_id=build.pk))
    return build


def router_build_enqueue(*, build_id: int) -> bool:
    """Queue the build's task; with the broker down, fail the build with the reason and return False."""
    from annotation.tasks_routers import router_build_task  # noqa: PLC0415 — a task module imports this service

    return job_enqueue(model=RouterBuild, job_id=build_id, send=lambda: router_build_task.delay(build_id=build_id),
                         queue_down=QUEUE_DOWN, unexpected=UNEXPECTED, on_fail=lambda: _cleanup(build_id))


# --- run --------------------------------------------------------------------------------------------------


def _cleanup(build_id: int) -> None:
    """What a failed build leaves behind: an upload's file."""
    build = RouterBuild.objects.filter(pk=build_id).only("kind", "definition", "status").first()
    if build is not None and build.status == RouterBuild.Status.FAILED and build.kind == Router.Kind.UPLOAD:
        _file_remove(str((build.definition or {}).get("file") or ""))


def _error_text(exc: ApplicationError) -> str:
    """The user-facing message; an upload's bad lines listed one per line after a one-line summary."""
    lines = list(getattr(exc, "lines", None) or [])
    if not lines:
        return exc.message
    head = exc.message.split(" — ", 1)[0]
    listed = [f"line {number}: {reason}" for number, reason in lines[:ERROR_LINES_SHOWN]]
    if len(lines) > ERROR_LINES_SHOWN:
        listed.append(f"(and {len(lines) - ERROR_LINES_SHOWN} more)")
    return "\n".join([head, *listed])


def _error_detail(exc: ApplicationError) -> dict[str, Any] | None:
    """An upload's bad lines as data (the first ERROR_LINES_SHOWN, as in the message), with their count."""
    lines = list(getattr(exc, "lines", None) or [])
    if not lines:
        return None
    return {"lines": [{"line": int(number), "problem": str(reason)} for number, reason in lines[:ERROR_LINES_SHOWN]],
            "count": len(lines)}


def router_build_fail(*, build_id: int, exc: BaseException) -> None:
    """Record why a build stopped: the message of a user-facing error (with its lines), else a pointer to the log."""
    if isinstance(exc, ApplicationError):
        failed = job_fail(model=RouterBuild, job_id=build_id, message=_error_text(exc), detail=_error_detail(exc))
    else:
        failed = job_fail_exception(model=RouterBuild, job_id=build_id, exc=exc, unexpected=UNEXPECTED)
    if failed:
        _cleanup(build_id)


def _progress_add(build_id: int, count: int) -> None:
    job_progress_add(model=RouterBuild, job_id=build_id, count=count)


def router_build_run(*, build_id: int) -> RouterBuild | None:
    """Build the router of a waiting build and return the build; a build not waiting is returned as it is.

    RouterError (bad lines, a name taken meanwhile) and any other exception propagate: the task records them
    with `router_build_fail`.
    """
    if not job_begin(model=RouterBuild, job_id=build_id):
        return RouterBuild.objects.filter(pk=build_id).first()
    build = RouterBuild.objects.select_related("topic", "topic__corpus").defer("topic__corpus__documents_bitmap").get(
        pk=build_id)
    topic = build.topic
    if build.kind == Router.Kind.KEYWORDS:
        rules = build.definition["rules"]
        predictions = routers.router_keyword_predictions(topic=topic, rules=rules,
                                                         progress=lambda n: _progress_add(build_id, n))
        n_classes = max(routers._topic_set_check(topic).values())
        with transaction.atomic():
            locked = RouterBuild.objects.select_for_update().get(pk=build_id)
            if locked.status != RouterBuild.Status.RUNNING:
                return locked
            router = routers._router_store(topic=topic, name=build.name, kind=Router.Kind.KEYWORDS,
                                           definition={"rules": rules}, predictions=predictions, n_classes=n_classes)
            job_finish(job=locked, router=router)
        return locked
    relative = str(build.definition.get("file") or "")
    try:
        if not _upload_relative_ok(relative) or not _upload_absolute(relative).is_file():
            raise RouterError("the uploaded file is missing; upload it again")
        data = _upload_absolute(relative).read_bytes()
        if hashlib.sha256(data).hexdigest() != build.definition.get("sha256"):
            raise RouterError("the uploaded file changed after it was received; upload it again")
        with transaction.atomic():
            locked = RouterBuild.objects.select_for_update().get(pk=build_id)
            if locked.status != RouterBuild.Status.RUNNING:
                return locked
            router = routers.router_create_from_csv(topic=topic, name=build.name, data=data,
                                                    source_name=str(build.definition.get("source") or "upload.csv"))
            job_finish(job=locked, router=router)
    finally:
        _file_remove(relative)
    return locked


# --- stuck builds -----------------------------------------------------------------------------------------


def router_builds_stuck_fail(*, now: datetime | None = None) -> int:
    """Fail builds waiting or running with no sign of life (start, progress) for ROUTER_BUILD_STUCK_SECONDS
    (default 30 min; their worker or the queue went away); returns how many. Far above what
    bench/bench_router_builds.py measures (about 1 s per 50,000 documents)."""
    limit = timedelta(seconds=int(getattr(settings, "ROUTER_BUILD_STUCK_SECONDS", DEFAULT_STUCK_SECONDS)))
    failed = jobs_stuck_fail(model=RouterBuild, older_than=limit, message=STUCK, now=now)
    for build_id in failed:
        _cleanup(build_id)
    return len(failed)


# --- the page -----------------------------------------------------------------------------------------------


def router_build_bad_lines(*, build: RouterBuild) -> list[dict[str, Any]]:
    """A failed upload's bad lines as data ({"line", "problem"}, the first ERROR_LINES_SHOWN), from the
    build's `error_detail`; empty for any other build."""
    detail = build.error_detail if isinstance(build.error_detail, dict) else {}
    return [{"line": int(row["line"]), "problem": str(row["problem"])} for row in detail.get("lines") or []]


def router_build_error_parts(*, build: RouterBuild) -> dict[str, Any]:
    """A failed build's error for its page: the message's first line, an upload's bad lines as (number, reason)
    rows from `error_detail` (never parsed back out of the text), and how many more there were."""
    head = (build.error or "").splitlines()[0] if build.error else ""
    rows = [(row["line"], row["problem"]) for row in router_build_bad_lines(build=build)]
    detail = build.error_detail if isinstance(build.error_detail, dict) else {}
    count = int(detail.get("count") or len(rows))
    more = f"(and {count - len(rows)} more)" if count > len(rows) else ""
    return {"error_head": head, "bad_lines": rows, "bad_lines_more": more}


def router_build_state(*, build: RouterBuild) -> dict[str, Any]:
    """What the build page and its JSON status show (the keys the classifier build page's script reads)."""
    return {"status": build.status, "status_display": build.get_status_display(), "finished": build.job_finished,
            "processed": build.processed, "total": build.total, "percent": build.job_percent, "error": build.error,
            "router_id": build.router_id}
