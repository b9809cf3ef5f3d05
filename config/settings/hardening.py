"""Settings of one concern (hardening against hostile input and a dropped database), applied at the end of
base.py so one owner edits one file.

* ``core.middleware_database.DatabaseDropMiddleware`` goes right after SecurityMiddleware and WhiteNoise (which
  must stay first and touch no database): outermost of the rest, it sees every 500 a dropped connection caused
  below it, and its ``process_exception`` runs after every other middleware's.
* ``core.middleware_hostile.HostileInputMiddleware`` goes right after CsrfViewMiddleware: its ``process_view``
  then sees a multipart form's fields once the CSRF check has parsed them, and it runs before any view.
"""
from __future__ import annotations

from typing import Any

DATABASE_DROP = "core.middleware_database.DatabaseDropMiddleware"
HOSTILE_INPUT = "core.middleware_hostile.HostileInputMiddleware"
CSRF = "django.middleware.csrf.CsrfViewMiddleware"
FIRST = ("django.middleware.security.SecurityMiddleware", "whitenoise.middleware.WhiteNoiseMiddleware")


def apply(s: dict[str, Any]) -> None:
    middleware = [name for name in s["MIDDLEWARE"] if name not in (DATABASE_DROP, HOSTILE_INPUT)]
    middleware.insert(max((middleware.index(name) + 1 for name in FIRST if name in middleware), default=0),
                      DATABASE_DROP)
    middleware.insert(middleware.index(CSRF) + 1 if CSRF in middleware else len(middleware), HOSTILE_INPUT)
    s["MIDDLEWARE"] = middleware
