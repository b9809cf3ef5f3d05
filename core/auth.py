"""Permission checks without two queries per request (issue 15: the annotator path's overhead).

Django's ModelBackend asks the database for a user's own and group permissions on every request
that checks one (`role_required`, the API's role permissions). `CachedPermissionsBackend` keeps the
answer in the shared cache (Redis in production), under the user's id, next to a *version* token:

* any change that can alter someone's permissions — group membership (`User.groups`), a user's own
  permissions, a group's permissions, a group or permission saved or deleted — replaces the version
  token, right away and again after the transaction commits (`permissions_version_bump`), so every
  process sees the change on its next request: the entry stored under an older version is ignored;
* the version is read *before* the database, so an entry computed from data that changed meanwhile
  is stored under the old version and never trusted;
* `AUTH_PERMISSION_CACHE_SECONDS` bounds any change made behind the ORM's back (raw SQL, bulk
  writes of the link tables); 0 turns the cache off (the default without a shared cache: a
  per-process memory cache could not hear another process's change);
* `is_active` is checked on the user loaded for this request, never cached; superuser status and the
  account's creation time are part of the key (deleting an account also replaces the version); object
  permissions are not cached;
* a cache that does not answer (Redis down) costs the two queries, never a failed request.
"""
from __future__ import annotations

import logging
import uuid
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core.cache import cache
from django.db import transaction

logger = logging.getLogger(__name__)
UserModel = get_user_model()

VERSION_KEY = "auth-perms:version"
# The account's creation time is part of the key: an id that a deleted account freed (SQLite can reuse one)
# never serves the old account's permissions to a new one.
ENTRY_KEY = "auth-perms:user:{user_id}:{joined}:{superuser:d}"


def permissions_cache_seconds() -> int:
    return int(getattr(settings, "AUTH_PERMISSION_CACHE_SECONDS", 0) or 0)


def permissions_cache_key(user: Any) -> str:
    """Where the user's permission set is cached (ENTRY_KEY)."""
    joined = getattr(user, "date_joined", None)
    return ENTRY_KEY.format(user_id=user.pk, joined=joined.timestamp() if joined else "",
                            superuser=bool(user.is_superuser))


def permissions_version_bump() -> None:
    """A new version token now and after commit: every cached permission set becomes stale."""

    def bump() -> None:
        try:
            cache.set(VERSION_KEY, uuid.uuid4().hex, None)
        except Exception:  # entries still expire after AUTH_PERMISSION_CACHE_SECONDS
            logger.warning("could not bump the permission cache version", exc_info=True)

    if not permissions_cache_seconds():
        return
    bump()
    transaction.on_commit(bump, robust=True)


class CachedPermissionsBackend(ModelBackend):
    """ModelBackend whose `get_all_permissions` is served from the shared cache (module docstring).

    `get_user` (the signed-in user of every request) also loads the one-to-one relations named in
    `AUTH_USER_SELECT_RELATED` in the same query: the annotator pages need the user's worker on every
    request, and this saves them a query each.
    """

    def get_user(self, user_id: Any) -> Any:
        related = tuple(getattr(settings, "AUTH_USER_SELECT_RELATED", ()))
        if not related:
            return super().get_user(user_id)
        try:
            user = UserModel._default_manager.select_related(*related).get(pk=user_id)
        except UserModel.DoesNotExist:
            return None
        return user if self.user_can_authenticate(user) else None

    def get_all_permissions(self, user_obj: Any, obj: Any = None) -> set[str]:
        ttl = permissions_cache_seconds()
        if not ttl or obj is not None or not user_obj.is_active or user_obj.is_anonymous:
            return super().get_all_permissions(user_obj, obj)
        if hasattr(user_obj, "_perm_cache"):
            return user_obj._perm_cache
        key = permissions_cache_key(user_obj)
        try:
            found = cache.get_many([VERSION_KEY, key])
        except Exception:  # the database answers instead
            logger.warning("permission cache unavailable", exc_info=True)
            return super().get_all_permissions(user_obj, obj)
        version = found.get(VERSION_KEY)
        entry = found.get(key)
        if version is not None and isinstance(entry, tuple) and len(entry) == 2 and entry[0] == version:
            user_obj._perm_cache = set(entry[1])
            return user_obj._perm_cache
        if version is None:
            version = uuid.uuid4().hex
            try:
                if not cache.add(VERSION_KEY, version, None):
                    version = cache.get(VERSION_KEY)
            except Exception:  # noqa: BLE001
                version = None
        perms = super().get_all_permissions(user_obj, obj)
        if version is not None:
            try:
                cache.set(key, (version, frozenset(perms)), ttl)
            except Exception:  # only a missed saving
                logger.warning("could not cache permissions of user %s", user_obj.pk, exc_info=True)
        return perms
