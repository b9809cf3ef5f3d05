"""Throttling of token calls: at most `DEFAULT_THROTTLE_RATES["token"]` requests per token (a setting, generous
by default: config/settings/base.py, env API_TOKEN_THROTTLE_RATE; empty = no limit). Session calls (the
browser) are not throttled here. Past the rate: 429 problem details with `Retry-After` (api/errors.py).

Counts live in Django's cache: per process with the default local-memory cache, shared across processes and
hosts once CACHES names a shared cache.
"""
from __future__ import annotations

from typing import Any

from rest_framework.request import Request
from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle

from api.models import ApiToken


class TokenRateThrottle(SimpleRateThrottle):
    scope = "token"

    def get_rate(self) -> str | None:
        # Read live (not the class attribute DRF binds at import), so a changed setting applies at once.
        return (api_settings.DEFAULT_THROTTLE_RATES or {}).get(self.scope) or None

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        token = request.auth
        if not isinstance(token, ApiToken):
            return None  # not a token call: not throttled
        # The token's random public prefix, never reused (a row id may be, after a rollback on SQLite).
        return self.cache_format % {"scope": self.scope, "ident": token.prefix}
