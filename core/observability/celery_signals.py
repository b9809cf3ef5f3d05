"""Celery's side: the enqueuing request's id travels in the task message's headers; each task's log lines
carry ``task_id``, ``task_name`` and that ``request_id``; durations and outcomes are counted.

Connected once, by ObservabilityConfig.ready(), in every process that loads Django (web, worker, beat).
"""
from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import structlog
from celery import signals

from core.observability.context import TASK_HEADER, request_id_current
from core.observability.metrics import TASK_SECONDS, TASKS

# task id -> (start time, context tokens to restore): an eager task runs inside the request, whose id
# must survive it; a worker thread runs one task at a time.
_running: dict[str, tuple[float, Mapping[str, Any]]] = {}


def _publish(headers: dict[str, Any] | None = None, **_: Any) -> None:
    request_id = request_id_current()
    if headers is not None and request_id and TASK_HEADER not in headers:
        headers[TASK_HEADER] = request_id


def _prerun(task_id: str | None = None, task: Any = None, **_: Any) -> None:
    if task_id is None:
        return
    request_id = getattr(getattr(task, "request", None), TASK_HEADER, None) or request_id_current()
    tokens = structlog.contextvars.bind_contextvars(task_id=task_id, task_name=getattr(task, "name", ""),
                                                    request_id=request_id)
    _running[task_id] = (time.perf_counter(), tokens)


def _postrun(task_id: str | None = None, task: Any = None, state: str | None = None, **_: Any) -> None:
    started = _running.pop(task_id or "", None)
    if started is None:
        return
    name = getattr(task, "name", "unknown")
    TASK_SECONDS.labels(task=name).observe(time.perf_counter() - started[0])
    if state == "SUCCESS":
        TASKS.labels(task=name, outcome="success").inc()
    elif state == "RETRY":
        TASKS.labels(task=name, outcome="retry").inc()
    structlog.contextvars.reset_contextvars(**started[1])


def _failure(sender: Any = None, task_id: str | None = None, **_: Any) -> None:
    # Counted and closed here: an eager task that propagates its exception never reaches task_postrun.
    name = getattr(sender, "name", "unknown")
    TASKS.labels(task=name, outcome="failure").inc()
    started = _running.pop(task_id or "", None)
    if started is not None:
        TASK_SECONDS.labels(task=name).observe(time.perf_counter() - started[0])
        structlog.contextvars.reset_contextvars(**started[1])


def celery_signals_connect() -> None:
    signals.before_task_publish.connect(_publish, weak=False, dispatch_uid="recall-observability-publish")
    signals.task_prerun.connect(_prerun, weak=False, dispatch_uid="recall-observability-prerun")
    signals.task_postrun.connect(_postrun, weak=False, dispatch_uid="recall-observability-postrun")
    signals.task_failure.connect(_failure, weak=False, dispatch_uid="recall-observability-failure")
