"""The request id of the work in hand, shared by the logs, the task headers and the response header.

Kept in structlog's context variables, so every log line (structlog's or the standard library's) carries it,
per thread and per asyncio task alike.
"""
from __future__ import annotations

import re
import uuid

import structlog

REQUEST_ID_HEADER = "X-Request-ID"
# The header a task message carries the enqueuing request's id in (celery_signals.py).
TASK_HEADER = "request_id"
# An incoming id is honoured when it is short and plain (uuid, hex, a load balancer's trace id): anything
# else (newlines, quotes, kilobytes) would reach log files and response headers, so a new id replaces it.
_ACCEPTED = re.compile(r"[A-Za-z0-9._:-]{1,128}")


def request_id_accept(value: str | None) -> str:
    """The incoming id when acceptable, else a new uuid4 (32 hex digits)."""
    if value and _ACCEPTED.fullmatch(value):
        return value
    return uuid.uuid4().hex


def request_id_current() -> str | None:
    """The id bound for the current request or task, if any."""
    value = structlog.contextvars.get_contextvars().get("request_id")
    return value if isinstance(value, str) else None
