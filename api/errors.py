"""Errors as RFC 9457 problem details: {type, title, status, detail, errors?} as application/problem+json.

* ``core.errors.ApplicationError`` (a user's request that cannot be carried out) keeps its message as
  ``detail``; its status and slug are the error's own ``http_status`` and ``code`` (core/errors.py), so no
  list of classes lives here: 409 ``conflict`` when it conflicts with the state of what exists (a budget, a
  locked plan, a topic's status), 413 ``too-large`` for a body past its size limit (an import past
  CORPUS_UPLOAD_MAX_BYTES, a retrieved-set file past RETRIEVED_UPLOAD_MAX_BYTES; with ``max_bytes``), else
  400 ``invalid-request``.  A file's bad lines (``extra["lines"]``) travel with the problem.
* DRF's own errors (validation, authentication, permission, not found, parse, throttling) keep their
  status (throttling: 429 with ``Retry-After``, api/throttling.py); validation errors list their field messages under ``errors`` ({field: [messages]}).
* Anything else is a bug: it propagates (a 500 in the log), as everywhere in the project.
"""
from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponsePermanentRedirect, JsonResponse
from django.urls import Resolver404, ResolverMatch, resolve
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import set_rollback

from core.errors import PROBLEM_CONTENT_TYPE, PROBLEM_TYPE, TITLES, ApplicationError, problem_body

# The problem body's shape lives in core/errors.py (the middleware answers problems before any view runs).
__all__ = ["PROBLEM_CONTENT_TYPE", "PROBLEM_TYPE", "TITLES", "ProblemError", "api_not_found", "api_unknown_path",
           "problem", "problem_body", "problem_exception_handler"]


class ProblemError(exceptions.APIException):
    """A problem raised by a view with its own status, slug and extra members (e.g. a changed quote)."""

    def __init__(self, *, status_code: int, detail: str, slug: str, extra: dict[str, Any] | None = None) -> None:
        super().__init__(detail=detail)
        self.status_code = status_code
        self.slug = slug
        self.extra = extra or {}


def problem(*, status_code: int, detail: str, slug: str, title: str | None = None,
            errors: dict[str, Any] | None = None, extra: dict[str, Any] | None = None) -> Response:
    body = problem_body(status_code=status_code, detail=detail, slug=slug, title=title, errors=errors, extra=extra)
    return Response(body, status=status_code, content_type=PROBLEM_CONTENT_TYPE)


def api_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """A 404 under /api/ as a problem, never the HTML page: an unknown path (api/urls.py's last route) or an
    Http404 raised outside DRF (config/urls.py's handler404). No sign-in is asked: nothing is there to protect.

    A path that exists with a trailing slash says so (CommonMiddleware's APPEND_SLASH redirect cannot: the
    catch-all route matches first), and GET or HEAD is redirected there as before.
    """
    path = request.path
    if settings.APPEND_SLASH and not path.endswith("/"):
        match = _resolve(path + "/")
        if match is not None and match.func is not api_unknown_path:
            if request.method in ("GET", "HEAD"):
                query = request.META.get("QUERY_STRING", "")
                return HttpResponsePermanentRedirect(path + "/" + (f"?{query}" if query else ""))
            return _problem_response(404, f"No endpoint at {path}; did you mean {path}/ (with the slash)?")
    return _problem_response(404, f"No endpoint at {path}. The endpoints are listed in the schema at "
                                  "/api/schema/ and browsable at /api/docs/.")


def api_unknown_path(request: HttpRequest, unknown: str = "") -> HttpResponse:
    """The last route of /api/: whatever no other route takes."""
    return api_not_found(request)


def _resolve(path: str) -> ResolverMatch | None:
    try:
        return resolve(path)
    except Resolver404:
        return None


def _problem_response(status_code: int, detail: str) -> HttpResponse:
    body = problem_body(status_code=status_code, detail=detail, slug="not-found")
    return JsonResponse(body, status=status_code, content_type=PROBLEM_CONTENT_TYPE)


def _messages(value: Any) -> Any:
    """DRF's nested error structure as plain strings."""
    if isinstance(value, dict):
        return {str(k): _messages(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_messages(v) for v in value]
    return str(value)


def _field_errors(detail: Any) -> dict[str, Any]:
    if isinstance(detail, dict):
        return _messages(detail)
    return {"non_field_errors": _messages(detail if isinstance(detail, list) else [detail])}


def _first_message(errors: dict[str, Any]) -> str:
    """The first message, after the path of the field it is about (`rules.0.class: This field is required.`)."""
    for field, messages in errors.items():
        path = [field]
        while isinstance(messages, (list, dict)) and messages:
            if isinstance(messages, list):
                messages = messages[0]
            else:
                key, messages = next(iter(messages.items()))
                path.append(str(key))
        if isinstance(messages, str):
            return messages if field == "non_field_errors" else f"{'.'.join(path)}: {messages}"
    return "The request is not valid."


def _application_error_extra(exc: ApplicationError) -> dict[str, Any] | None:
    """The members an ApplicationError's ``extra`` adds to its problem: a size limit, a file's bad lines."""
    extra: dict[str, Any] = {}
    if exc.http_status == status.HTTP_413_REQUEST_ENTITY_TOO_LARGE and "max_bytes" in exc.extra:
        extra["max_bytes"] = exc.extra["max_bytes"]
    if exc.extra.get("lines"):  # a router's CSV: [{line, problem}]
        extra["lines"] = exc.extra["lines"]
    return extra or None


def problem_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, ApplicationError):
        set_rollback()  # nothing of a refused request is kept
        return problem(status_code=exc.http_status, detail=exc.message, slug=exc.code,
                       extra=_application_error_extra(exc))
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    if not isinstance(exc, exceptions.APIException):
        return None
    set_rollback()
    headers: dict[str, str] = {}
    if isinstance(exc, (exceptions.NotAuthenticated, exceptions.AuthenticationFailed)):
        request = context.get("request")
        view = context.get("view")
        auth_header = view.get_authenticate_header(request) if view is not None and request is not None else None
        if auth_header:
            headers["WWW-Authenticate"] = auth_header
        else:
            exc.status_code = status.HTTP_403_FORBIDDEN
    if isinstance(exc, exceptions.Throttled) and exc.wait is not None:
        headers["Retry-After"] = str(int(exc.wait))
    if isinstance(exc, ProblemError):
        response = problem(status_code=exc.status_code, detail=str(exc.detail), slug=exc.slug, extra=exc.extra)
    elif isinstance(exc, exceptions.ValidationError):
        errors = _field_errors(exc.detail)
        response = problem(status_code=exc.status_code, detail=_first_message(errors), slug="validation",
                           title="Invalid input", errors=errors)
    else:
        detail = exc.detail if isinstance(exc.detail, str) else _first_message(_field_errors(exc.detail))
        slug = {401: "not-authenticated", 403: "forbidden", 404: "not-found",
                429: "too-many-requests"}.get(exc.status_code, "error")
        response = problem(status_code=exc.status_code, detail=str(detail), slug=slug)
    for name, value in headers.items():
        response[name] = value
    return response
