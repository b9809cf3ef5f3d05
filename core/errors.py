"""One base for every error whose message is meant for the person who caused it.

A service raises a subclass of ``ApplicationError`` when a request cannot be
carried out *because of what was asked* (a budget too small, a region that has
run out, an expired assignment): its ``message`` says why and what to do, in
words fit for the page.  Anything else (``ValueError``, ``KeyError``, ...) is a
programming error and must reach the server log as one, never a polite message.

Views map it in one place (``core.web``): a form error where a form was
submitted, else a flash message.  The pattern is HackSoft's ``ApplicationError``.
"""
from __future__ import annotations

from typing import Any


class ApplicationError(Exception):
    """A request that cannot be carried out; ``message`` is for the user, ``extra`` for callers."""

    def __init__(self, message: str, *, extra: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.extra = extra or {}

    def __str__(self) -> str:
        return self.message
