"""One base for every error whose message is meant for the person who caused it.

A service raises a subclass of ``ApplicationError`` when a request cannot be
carried out *because of what was asked* (a budget too small, a region that has
run out, an expired assignment): its ``message`` says why and what to do, in
words fit for the page.  Anything else (``ValueError``, ``KeyError``, ...) is a
programming error and must reach the server log as one, never a polite message.

Views map it in one place (``core.web``): a form error where a form was
submitted, else a flash message.  The REST API maps it in one place too
(``api/errors.py``), by the two class attributes every error carries: its HTTP
status and a stable code (the problem type's slug).  A subclass sets them when
the defaults do not fit, e.g. ``http_status = 409; code = "conflict"`` for a
request that conflicts with the state of what exists (a budget, a locked plan);
no mapping lists the classes.  The pattern is HackSoft's ``ApplicationError``.
"""
from __future__ import annotations

from typing import Any, ClassVar

# RFC 9457 problem details: the one body shape of every API error (api/errors.py) and of the refusals the
# middleware answers before any view runs (core/middleware_hostile.py, core/middleware_database.py).
PROBLEM_TYPE = "https://recall.invalid/problems/"
PROBLEM_CONTENT_TYPE = "application/problem+json"
TITLES = {
    400: "Bad request", 401: "Not authenticated", 403: "Not allowed", 404: "Not found",
    405: "Method not allowed", 406: "Not acceptable", 409: "Conflict", 413: "Too large",
    415: "Unsupported media type", 429: "Too many requests", 503: "Service unavailable",
}


def problem_body(*, status_code: int, detail: str, slug: str, title: str | None = None,
                 errors: dict[str, Any] | None = None, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """{type, title, status, detail, errors?, ...extra}: a problem's members."""
    body: dict[str, Any] = {"type": PROBLEM_TYPE + slug, "title": title or TITLES.get(status_code, "Error"),
                            "status": status_code, "detail": detail}
    if errors:
        body["errors"] = errors
    if extra:
        body.update(extra)
    return body


def request_is_api(path: str) -> bool:
    """/api and below answer problem+json, never a page."""
    return path == "/api" or path.startswith("/api/")


class ApplicationError(Exception):
    """A request that cannot be carried out; ``message`` is for the user, ``extra`` for callers.

    ``http_status`` is the status the API answers with: 400 when the request itself is at fault,
    409 when it conflicts with the state of what exists (retrying will not help until that changes),
    413 when a body is past its size limit.  ``code`` is the stable slug of the problem type
    (``invalid-request``, ``conflict``, ``too-large``); clients may branch on it, so it never changes
    for an existing error.
    """

    http_status: ClassVar[int] = 400
    code: ClassVar[str] = "invalid-request"

    def __init__(self, message: str, *, extra: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.extra = extra or {}

    def __str__(self) -> str:
        return self.message
