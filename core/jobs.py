"""One base for background jobs whose page polls a row: corpus uploads, classifier builds, router builds.

A job is a row with a status (pending → running → done | failed), its progress (`processed` of `total`), a
message for the user when it failed, a machine-readable `error_detail` (JSON: e.g. the file, line and problem
of an upload's bad line) and its times (created, started, last heartbeat, finished). `Job` is the abstract
model; the functions below are the one set of rules every job kind follows:

* `job_enqueue_on_commit` queues the job's task after commit (at once without a broker,
  CELERY_TASK_ALWAYS_EAGER); with the broker down the row says so (`job_enqueue`).
* `job_begin` starts a waiting job (a conditional UPDATE: a second run of the task does nothing).
* `job_progress_add` adds to the progress atomically, never past the total, and is a heartbeat.
* `job_fail` fails a live job once, with its message cut at MESSAGE_MAX_CHARS and an optional detail;
  `job_fail_exception` does it for an exception (an ApplicationError's message, else a pointer to the log).
* `job_finish` marks a job done; `job_retry` puts a failed job back in the queue's hands.
* `jobs_stuck_fail` is the sweep: live jobs with no sign of life for `older_than` are failed.

The models keep their own column names where they differ (a corpus upload's `progress` and `error_problem`,
the builds' `processed` and `error`): `job_processed_field` and `job_message_field` name them, so data,
templates and the API are unchanged. core imports no app: the functions take the model class.
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any, ClassVar, TypeVar

from django.conf import settings
from django.db import models, transaction
from django.db.models import F, Q
from django.db.models.functions import Least
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from core.errors import ApplicationError

logger = logging.getLogger(__name__)

# One cut length for every job's message (a router upload lists up to 100 bad lines, one per line).
MESSAGE_MAX_CHARS = 20_000


class JobStatus(models.TextChoices):
    PENDING = "pending", "Waiting"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


LIVE = (JobStatus.PENDING.value, JobStatus.RUNNING.value)
FINISHED = (JobStatus.DONE.value, JobStatus.FAILED.value)


class Job(models.Model):
    """Abstract: the columns every background job has. A concrete model may re-declare `status` with its own
    labels (the values are JobStatus's) and names its progress and message columns in the two class
    attributes below (default `processed` and `error`)."""

    job_processed_field: ClassVar[str] = "processed"
    job_message_field: ClassVar[str] = "error"
    # A JSON column where an older release wrote {"heartbeat": iso time}; read by the sweep, None if none.
    job_legacy_heartbeat_field: ClassVar[str | None] = None

    status = models.CharField(max_length=16, choices=JobStatus.choices, default=JobStatus.PENDING)
    total = models.PositiveBigIntegerField(default=0)
    # Machine-readable facts of a failure (an upload's file, line and problem; a router upload's bad lines).
    error_detail = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True

    @property
    def job_finished(self) -> bool:
        return self.status in FINISHED

    @property
    def job_percent(self) -> int:
        if self.status == JobStatus.DONE:
            return 100
        processed = int(getattr(self, self.job_processed_field) or 0)
        return int(100 * processed / self.total) if self.total else 0


J = TypeVar("J", bound=Job)


def job_message_cut(message: str) -> str:
    return message[:MESSAGE_MAX_CHARS]


# --- queue ------------------------------------------------------------------------------------------------


def job_enqueue(*, model: type[Job], job_id: int, send: Callable[[], Any], queue_down: str, unexpected: str = "",
                wait_when_down: bool = False, on_fail: Callable[[], Any] | None = None) -> bool:
    """Call `send` (the task's `.delay`); False when it raises, with the reason on the row.

    By default the job is failed: with `unexpected` without a broker (CELERY_TASK_ALWAYS_EAGER: `send` ran the
    job in-process and the exception is the job's own; a no-op if the job recorded why), else with
    `queue_down`. With `wait_when_down` it stays waiting with `queue_down` as its message, so it can be
    queued again as it is; a later successful send clears that message. `on_fail` runs if this call failed
    the job (its cleanup).
    """
    try:
        send()
    except Exception:  # kombu/redis raise many kinds; the row must say what happened
        if wait_when_down:
            logger.exception("could not queue %s %s", model._meta.verbose_name, job_id)
            model._default_manager.filter(pk=job_id).update(**{model.job_message_field: queue_down})
            return False
        if getattr(settings, "CELERY_TASK_ALWAYS_EAGER", False):
            logger.warning("%s %s failed in-process", model._meta.verbose_name, job_id, exc_info=True)
            failed = job_fail(model=model, job_id=job_id, message=unexpected)
        else:
            logger.warning("could not queue %s %s", model._meta.verbose_name, job_id, exc_info=True)
            failed = job_fail(model=model, job_id=job_id, message=queue_down)
        if failed and on_fail is not None:
            on_fail()
        return False
    model._default_manager.filter(pk=job_id, **{model.job_message_field: queue_down}).update(
        **{model.job_message_field: ""})
    return True


def job_enqueue_on_commit(*, job: Job, enqueue: Callable[[], Any], eager_now: bool = True) -> None:
    """Run `enqueue` after the current transaction commits (a rollback forgets the job and its task).

    Without a broker (CELERY_TASK_ALWAYS_EAGER) and `eager_now`, it runs at once, in the caller's transaction,
    and `job` is refreshed, so the caller answers with the finished job.
    """
    if eager_now and getattr(settings, "CELERY_TASK_ALWAYS_EAGER", False):
        enqueue()
        job.refresh_from_db()
    else:
        transaction.on_commit(enqueue)


# --- run --------------------------------------------------------------------------------------------------


def job_begin(*, model: type[J], job_id: int, **fields: Any) -> bool:
    """Mark a waiting job running (progress 0, started and heartbeat now); False if it was not waiting."""
    now = timezone.now()
    return bool(model._default_manager.filter(pk=job_id, status=JobStatus.PENDING).update(
        status=JobStatus.RUNNING, started_at=now, heartbeat_at=now, **{model.job_processed_field: 0}, **fields))


def job_heartbeat(*, model: type[Job], job_id: int, **fields: Any) -> bool:
    """A sign of life of a running job (with any other columns to write); False if it is not running."""
    return bool(model._default_manager.filter(pk=job_id, status=JobStatus.RUNNING).update(
        heartbeat_at=timezone.now(), **fields))


def job_progress_add(*, model: type[Job], job_id: int, count: int, **fields: Any) -> bool:
    """Add `count` to a running job's progress atomically, never past its total; also a heartbeat."""
    column = model.job_processed_field
    return job_heartbeat(model=model, job_id=job_id, **{column: Least(F(column) + count, F("total"))}, **fields)


def job_fail(*, model: type[Job], job_id: int, message: str, detail: Any = None, **fields: Any) -> bool:
    """Fail a waiting or running job with `message` (cut at MESSAGE_MAX_CHARS) and `detail` (JSON, the
    machine-readable facts); True if this call failed it (the caller then cleans up), False if it had ended."""
    return bool(model._default_manager.filter(pk=job_id, status__in=LIVE).update(
        status=JobStatus.FAILED, finished_at=timezone.now(), error_detail=detail,
        **{model.job_message_field: job_message_cut(message)}, **fields))


def job_error_detail(exc: ApplicationError) -> Any:
    """The machine-readable facts of a user-facing error: its `detail` (JSON-able) if it has one."""
    detail = getattr(exc, "detail", None)
    return detail() if callable(detail) else detail


def job_fail_exception(*, model: type[Job], job_id: int, exc: BaseException, unexpected: str,
                       message: Callable[[ApplicationError], str] | None = None) -> bool:
    """Fail a job for an exception: an ApplicationError's message (or `message(exc)`) and detail; anything
    else is logged with its traceback and the job says `unexpected` (a pointer to the log)."""
    if isinstance(exc, ApplicationError):
        text = message(exc) if message is not None else exc.message
        return job_fail(model=model, job_id=job_id, message=text, detail=job_error_detail(exc))
    logger.error("%s %s failed", model._meta.verbose_name, job_id, exc_info=exc)
    return job_fail(model=model, job_id=job_id, message=unexpected)


def job_finish(*, job: Job, **fields: Any) -> None:
    """Mark a job done, finished now, with `fields` set; its progress becomes its total unless `fields` set it.
    Saves only those columns."""
    job.status = JobStatus.DONE
    job.finished_at = timezone.now()
    for name, value in fields.items():
        setattr(job, name, value)
    if job.job_processed_field not in fields:
        setattr(job, job.job_processed_field, job.total)
    job.save(update_fields=list(dict.fromkeys(["status", job.job_processed_field, "finished_at", *fields])))


def job_retry(*, model: type[Job], job_id: int, **fields: Any) -> bool:
    """Put a failed job back to waiting (message, detail, times and progress cleared); False if it was not
    failed (somebody retried it first). The caller queues it again."""
    now = timezone.now()
    return bool(model._default_manager.filter(pk=job_id, status=JobStatus.FAILED).update(
        status=JobStatus.PENDING, error_detail=None, started_at=None, finished_at=None, heartbeat_at=now,
        **{model.job_message_field: "", model.job_processed_field: 0}, **fields))


# --- the sweep --------------------------------------------------------------------------------------------


def job_last_sign_of_life(job: Job) -> datetime:
    """Its latest heartbeat (its own, or an older release's JSON one); without any, its start, else its creation."""
    beats = [job.heartbeat_at]
    legacy = job.job_legacy_heartbeat_field
    if legacy:
        data = getattr(job, legacy, None)
        beat = data.get("heartbeat") if isinstance(data, dict) else None
        beats.append(parse_datetime(beat) if isinstance(beat, str) else None)
    known = [beat for beat in beats if beat is not None]
    return max(known) if known else (job.started_at or job.created_at)


def jobs_stuck_fail(*, model: type[Job], older_than: timedelta, message: str, now: datetime | None = None,
                    exclude: Q | None = None, **fields: Any) -> list[int]:
    """Fail every waiting or running job with no sign of life (`job_last_sign_of_life`) for `older_than`;
    `fields` are written with the failure. Returns their ids (the caller cleans up: files, events). Each is looked at again under its row lock, and a
    job whose task holds the lock (storing right now) is skipped, so a heartbeat written meanwhile keeps it."""
    now = now or timezone.now()
    cutoff = now - older_than
    live = model._default_manager.filter(status__in=LIVE)
    if exclude is not None:
        live = live.exclude(exclude)
    failed: list[int] = []
    for job_id in list(live.values_list("pk", flat=True)):
        with transaction.atomic():
            fresh = live.select_for_update(skip_locked=True).filter(pk=job_id).first()
            if fresh is None or job_last_sign_of_life(fresh) >= cutoff:
                continue
            if job_fail(model=model, job_id=job_id, message=message, **fields):
                logger.warning("%s %s marked failed: no sign of life since %s", model._meta.verbose_name, job_id,
                               job_last_sign_of_life(fresh))
                failed.append(job_id)
    return failed
