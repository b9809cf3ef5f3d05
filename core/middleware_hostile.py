"""Hostile input is refused with a 400 that says why, before any view (or parser) sees it.

* **Characters no text column can hold**: a NUL (U+0000) — PostgreSQL refuses it in every text value, so a
  filter `?name=a%00b` reached the driver and answered 500 — and a lone UTF-16 surrogate (U+D800–U+DFFF, which
  JSON can spell as "\\ud800" and no UTF-8 database can store). Looked for in the query string's names and
  values, in a URL-encoded form's fields, in a JSON body's keys and strings, and in a multipart form's fields
  once the CSRF check has parsed them (a view that installs its own upload handlers reads its body itself:
  this middleware never parses a multipart body).
* **JSON nested deeper than JSON_MAX_DEPTH** (64): Python's parser recurses once per level, so a body of a
  few thousand `[` raised RecursionError, a 500 on every JSON endpoint. The depth is counted on the raw bytes
  (strings removed first) before anything parses the body.

Under /api/ the answer is problem+json (``invalid-request``); elsewhere the error page (templates/errors/http.html)
with the reason. A body past DATA_UPLOAD_MAX_MEMORY_SIZE is left to Django's own refusal.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from itertools import accumulate, repeat
from operator import sub
from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse, QueryDict
from django.template.response import TemplateResponse

from core.errors import PROBLEM_CONTENT_TYPE, problem_body, request_is_api

JSON_MAX_DEPTH = 64

# A NUL or a lone surrogate (a well-formed pair decodes to one character outside this range).
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
# A JSON string, escapes included (the unrolled form: no backtracking per character).
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
# Every byte but brackets, to delete; then "[" and "{" become 2 and "]" and "}" 0 (minus 1: +1 and -1).
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_BRACKET_STEPS = bytes.maketrans(b"[{]}", b"\x02\x02\x00\x00")


def unstorable_reason(value: str) -> str | None:
    """Why `value` cannot be stored as text (a NUL, a lone surrogate), or None."""
    found = _UNSTORABLE.search(value)
    if found is None:
        return None
    char = found.group()
    if char == "\x00":
        return "contains a NUL character (\\u0000), which no text value can hold"
    return f"contains a lone surrogate (\\u{ord(char):04x}), which is not a character"


def json_depth(body: bytes) -> int:
    """The deepest nesting of arrays and objects in a JSON text, counted without parsing it (strings and
    their escaped quotes removed first), so a body nested too deep is refused before any parser recurses.
    Linear in the body's length (C-level loops: translate, accumulate)."""
    steps = _JSON_STRING.sub(b'""', body).translate(None, _NOT_BRACKETS).translate(_BRACKET_STEPS)
    return max(accumulate(map(sub, steps, repeat(1))), default=0)


def _json_strings(value: Any) -> Iterable[tuple[str, str]]:
    """(path, text) for every key and string of a parsed JSON value, without recursion."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str):
            yield path or "the body", item
        elif isinstance(item, dict):
            for key, child in item.items():
                child_path = f"{path}.{key}" if path else str(key)
                yield f"a key of {path or 'the body'}", key
                stack.append((child_path, child))
        elif isinstance(item, list):
            stack.extend((f"{path}.{index}" if path else str(index), child) for index, child in enumerate(item))


def json_refusal(body: bytes, *, max_depth: int = JSON_MAX_DEPTH) -> str | None:
    """Why a JSON body is refused (nested too deep; a string no text can hold), or None. A body that is not
    JSON at all is not refused here: the parser downstream says what is wrong with it."""
    depth = json_depth(body)
    if depth > max_depth:
        return f"The JSON body is nested {depth} levels deep; at most {max_depth} levels are accepted."
    try:
        value = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    for path, text in _json_strings(value):
        reason = unstorable_reason(text)
        if reason:
            return f"The JSON value at {path} {reason}."
    return None


def fields_refusal(fields: QueryDict, *, where: str) -> str | None:
    """Why a query string's or form's fields are refused (a name or value no text can hold), or None."""
    for name, values in fields.lists():
        reason = unstorable_reason(name)
        if reason:
            return f"A {where} name {reason}."
        for value in values:
            if isinstance(value, str) and (reason := unstorable_reason(value)):
                return f"The {where} {name!r} {reason}."
    return None


def _media_type(request: HttpRequest) -> str:
    return (request.content_type or "").split(";")[0].strip().lower()


def _is_json(media_type: str) -> bool:
    return media_type == "application/json" or (media_type.startswith("application/") and media_type.endswith("+json"))


def hostile_refused(request: HttpRequest, reason: str) -> HttpResponse:
    """400 with the reason: problem+json under /api/, else the error page."""
    if request_is_api(request.path):
        body = problem_body(status_code=400, detail=reason, slug="invalid-request")
        return JsonResponse(body, status=400, content_type=PROBLEM_CONTENT_TYPE)
    response = TemplateResponse(request, "errors/http.html",
                                {"title": "Bad request", "status": 400, "message": reason}, status=400)
    return response.render()


class HostileInputMiddleware:
    """Refuse a NUL or lone surrogate in a query string, form field or JSON string, and JSON nested past
    JSON_MAX_DEPTH, with a 400 saying which (module docstring)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        reason = fields_refusal(request.GET, where="query parameter") or self._body_refusal(request)
        if reason:
            return hostile_refused(request, reason)
        return self.get_response(request)

    def process_view(self, request: HttpRequest, view: Callable[..., Any], args: Any, kwargs: Any) -> HttpResponse | None:
        """A multipart form's fields, if something before the view (the CSRF check) has parsed them."""
        if "_post" in request.__dict__ and _media_type(request) == "multipart/form-data":
            reason = fields_refusal(request.POST, where="form field")
            if reason:
                return hostile_refused(request, reason)
        return None

    @staticmethod
    def _body_refusal(request: HttpRequest) -> str | None:
        media_type = _media_type(request)
        if request.method in ("GET", "HEAD", "OPTIONS") or not (
                _is_json(media_type) or media_type == "application/x-www-form-urlencoded"):
            return None
        try:
            body = request.body
        except RequestDataTooBig:  # Django's own 400 when the view reads it
            return None
        if _is_json(media_type):
            return json_refusal(body)
        # Parsed here, not through request.POST: that would fix the upload handlers before the view runs.
        return fields_refusal(QueryDict(body, encoding=request.encoding), where="form field")
