"""Log configuration: one line per record, JSON in production (``LOG_FORMAT=json``), readable in development.

structlog's ``ProcessorFormatter`` renders the standard library's records too (Django, Celery, every
``logging.getLogger(__name__)`` in the apps), so all lines share the fields: ``timestamp``, ``level``,
``logger``, ``event`` (the message), and whatever the context holds — ``request_id`` in a request,
``task_id``, ``task_name`` and the enqueuing ``request_id`` in a Celery task.
"""
from __future__ import annotations

from typing import Any

import structlog

FORMATS = ("json", "console")


def _shared_processors() -> list[Any]:
    return [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.stdlib.ExtraAdder(),
    ]


def logging_config(*, fmt: str, level: str) -> dict[str, Any]:
    """The LOGGING dict for Django's dictConfig: the root logger writes to stderr in the chosen format."""
    if fmt not in FORMATS:
        raise ValueError(f"LOG_FORMAT must be one of {', '.join(FORMATS)}, not {fmt!r}")
    renderer: Any = (structlog.processors.JSONRenderer() if fmt == "json"
                     # Plain tracebacks: rich's (with locals) cost tens of milliseconds a record, and a dead
                     # Redis logs a warning on every request (e2e test_faults: submits took 2-8 s).
                     else structlog.dev.ConsoleRenderer(colors=False,
                                                        exception_formatter=structlog.dev.plain_traceback))
    final: list[Any] = [structlog.stdlib.ProcessorFormatter.remove_processors_meta]
    if fmt == "json":
        final.append(structlog.processors.format_exc_info)
    final.append(renderer)
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {
            "structured": {
                "()": structlog.stdlib.ProcessorFormatter,
                "processors": final,
                "foreign_pre_chain": _shared_processors(),
            },
        },
        "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "structured"}},
        "root": {"handlers": ["console"], "level": level},
    }


def structlog_configure() -> None:
    """structlog's own loggers hand their events to the standard library (one pipeline, one format)."""
    structlog.configure(
        processors=[*_shared_processors(), structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
