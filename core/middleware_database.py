"""A database connection dropped mid-request (a failover, a restart, a killed backend) answers 503, never 500.

The driver raises ``OperationalError`` or ``InterfaceError`` (Django's wrappers of the DB-API classes); the
connection is then closed if it no longer answers, so the next use opens a new one. A safe request (GET,
HEAD) is run once more at once — it changed nothing, and the new connection usually succeeds; otherwise, or
when the retry fails too, the answer is 503 with ``Retry-After`` (RETRY_AFTER_SECONDS): problem+json
``database-unavailable`` under /api/, a short standalone page elsewhere (rendering the site's layout needs the
database that just failed). An unsafe request is never repeated here: the client decides.

Two ways in, one class (placed first in MIDDLEWARE by config/settings/hardening.py):

* ``process_exception``: the view (or its template's rendering) raised — the usual case.
* a failure elsewhere (another middleware reading the session, saving it afterwards) reaches Django's
  500 handler; ``got_request_exception`` marks the request and ``__call__``, outermost, replaces that 500.
"""
from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import Any

from django.core.signals import got_request_exception
from django.db import InterfaceError, OperationalError, connections
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.html import escape

from core.errors import PROBLEM_CONTENT_TYPE, problem_body, request_is_api

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 5
SAFE_METHODS = ("GET", "HEAD")
DROPPED = (OperationalError, InterfaceError)
_MARK = "_database_dropped"
_RETRIED = "_database_retried"


def database_connections_reset() -> None:
    """Close every connection that had an error and no longer answers (the next query opens a new one)."""
    for conn in connections.all(initialized_only=True):
        if conn.connection is not None and conn.errors_occurred:
            if conn.is_usable():
                conn.errors_occurred = False
            else:
                conn.close()


def database_unavailable(request: HttpRequest) -> HttpResponse:
    """503 with Retry-After: problem+json under /api/, else a standalone page."""
    detail = ("The database connection was lost while answering; nothing was changed by this failure unless "
              f"the request had already been carried out. Try again in {RETRY_AFTER_SECONDS} seconds.")
    response: HttpResponse
    if request_is_api(request.path):
        body = problem_body(status_code=503, detail=detail, slug="database-unavailable")
        response = JsonResponse(body, status=503, content_type=PROBLEM_CONTENT_TYPE)
    else:
        response = HttpResponse(
            "<!doctype html><html lang=en><head><meta charset=utf-8><title>Service unavailable</title></head>"
            f"<body><h1>Service unavailable (503)</h1><p role=alert>{escape(detail)}</p>"
            f"<p><a href=\"{escape(request.get_full_path())}\">Try again</a></p></body></html>", status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def _mark_dropped(sender: Any, request: HttpRequest | None = None, **kwargs: Any) -> None:
    exc = sys.exc_info()[1]
    if request is not None and isinstance(exc, DROPPED):
        setattr(request, _MARK, True)


got_request_exception.connect(_mark_dropped, dispatch_uid="core.middleware_database")


class DatabaseDropMiddleware:
    """Retry a safe request once after a dropped connection; otherwise 503 with Retry-After (module docstring)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if response.status_code != 500 or not getattr(request, _MARK, False):
            return response
        setattr(request, _MARK, False)
        database_connections_reset()
        if request.method in SAFE_METHODS and not getattr(request, _RETRIED, False):
            setattr(request, _RETRIED, True)
            logger.warning("database connection lost during %s %s; retrying once", request.method, request.path)
            response = self.get_response(request)
            if response.status_code != 500 or not getattr(request, _MARK, False):
                return response
            database_connections_reset()
        return database_unavailable(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, DROPPED):
            return None
        database_connections_reset()
        match = request.resolver_match
        if request.method in SAFE_METHODS and match is not None and not getattr(request, _RETRIED, False):
            setattr(request, _RETRIED, True)
            logger.warning("database connection lost during %s %s; retrying once", request.method, request.path,
                           exc_info=exception)
            try:
                response = match.func(request, *match.args, **match.kwargs)
                render = getattr(response, "render", None)
                if callable(render) and not getattr(response, "is_rendered", True):
                    response = render()
                return response
            except DROPPED as again:
                database_connections_reset()
                exception = again
        logger.error("database connection lost during %s %s: 503", request.method, request.path, exc_info=exception)
        return database_unavailable(request)
