"""Sessions read from the shared cache, written through to the database (issue 15: one query less per request).

Django's `cached_db` engine, with two differences that matter when Redis misbehaves:

* a cache that fails never fails the request: reading falls back to the database, writing and
  deleting in the cache are logged and skipped (Django's own engine lets the cache's error through
  on a load that misses and on a delete, so a sign-out would answer 500 with Redis down);
* entries live `SESSION_CACHE_SECONDS` (300) in the cache, not the session's two weeks: a sign-out
  whose cache delete failed (its database row is gone) stops being honoured within that time, and
  any session is read from the database at most once per that time.
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.sessions.backends.cached_db import SessionStore as CachedDBStore
from django.contrib.sessions.backends.db import SessionStore as DBStore
from django.core.cache.backends.base import BaseCache

logger = logging.getLogger(__name__)


def _cache_seconds(expiry_age: int) -> int:
    return max(0, min(expiry_age, int(getattr(settings, "SESSION_CACHE_SECONDS", 300))))


class SessionStore(CachedDBStore):
    # Private attributes of Django's stores that django-stubs does not declare.
    _cache: BaseCache
    _session: dict[str, Any]
    _get_session_from_db: Callable[[], Any]

    def _cache_set(self, data: dict[str, Any], expiry_age: int) -> None:
        try:
            self._cache.set(self.cache_key, data, _cache_seconds(expiry_age))
        except Exception:  # the database holds the session
            logger.warning("could not cache a session", exc_info=True)

    def load(self) -> dict[str, Any]:
        try:
            data = self._cache.get(self.cache_key)
        except Exception:  # noqa: BLE001 - the database answers instead
            data = None
        if data is None:
            row = self._get_session_from_db()
            if row:
                data = self.decode(row.session_data)
                self._cache_set(data, self.get_expiry_age(expiry=row.expire_date))
            else:
                data = {}
        return data

    def save(self, must_create: bool = False) -> None:
        DBStore.save(self, must_create)
        self._cache_set(self._session, self.get_expiry_age())

    def delete(self, session_key: str | None = None) -> None:
        DBStore.delete(self, session_key)
        if session_key is None:
            if self.session_key is None:
                return
            session_key = self.session_key
        try:
            self._cache.delete(self.cache_key_prefix + session_key)
        except Exception:  # the entry expires within SESSION_CACHE_SECONDS
            logger.warning("could not delete a cached session", exc_info=True)
