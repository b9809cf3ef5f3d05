"""Throttling of token calls: at most `DEFAULT_THROTTLE_RATES["token"]` requests per token (a setting, generous
by default: config/settings/base.py, env API_TOKEN_THROTTLE_RATE; empty = no limit). Session calls (the
browser) are not throttled here. Past the rate: 429 problem details with `Retry-After` (api/errors.py).

A fixed window per token, counted atomically: one Lua script does INCR and, on the window's first call,
PEXPIRE, and returns the count and the time left — one round trip, no read-then-write, so concurrent calls
on one token can never pass the limit (DRF's SimpleRateThrottle reads the call history, appends and writes it
back: 12 concurrent clients on one token passed 1,200/min by about 60%, issue 25). A counter that somehow
lost its expiry gets it back on the next call. Redis is used through Django's cache when CACHES names
Redis (production: CACHE_URL/REDIS_URL); any other cache counts with `add` + `incr` (atomic in the
per-process memory cache, where the count is per process anyway).

A fixed window lets a token make up to twice the rate across a window boundary; the limit exists to stop a
runaway script, for which that is enough, and it costs one key per token.
"""
from __future__ import annotations

import math
import time
from typing import Any

from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from rest_framework.request import Request
from rest_framework.settings import api_settings
from rest_framework.throttling import BaseThrottle

from api.models import ApiToken

# KEYS[1] the window's counter, ARGV[1] the window in milliseconds → {count, milliseconds left}.
COUNT_SCRIPT = """
local n = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if n == 1 or ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {n, ttl}
"""
_scripts: dict[int, Any] = {}


def throttle_count(*, key: str, window_seconds: int) -> tuple[int, float]:
    """Count one call in `key`'s current window: (calls in it so far, this one included; seconds it has left)."""
    cache = caches["default"]
    if isinstance(cache, RedisCache):
        backend = cache
        full_key = backend.make_and_validate_key(key)
        client = backend._cache.get_client(full_key, write=True)
        script = _scripts.get(id(client))
        if script is None:
            script = _scripts[id(client)] = client.register_script(COUNT_SCRIPT)
        count, left_ms = script(keys=[full_key], args=[window_seconds * 1000])
        return int(count), max(int(left_ms), 0) / 1000
    started_key = f"{key}:started"
    if cache.add(key, 0, window_seconds):
        cache.set(started_key, time.time(), window_seconds)
    try:
        count = cache.incr(key)
    except ValueError:  # the window ended between add and incr: this call opens the next one
        cache.add(key, 0, window_seconds)
        cache.set(started_key, time.time(), window_seconds)
        count = cache.incr(key)
    started = cache.get(started_key) or time.time()
    return int(count), max(window_seconds - (time.time() - started), 0.0)


class TokenRateThrottle(BaseThrottle):
    scope = "token"
    cache_format = "throttle_%(scope)s_%(ident)s"

    def get_rate(self) -> str | None:
        # Read live (not the class attribute DRF binds at import), so a changed setting applies at once.
        return (api_settings.DEFAULT_THROTTLE_RATES or {}).get(self.scope) or None

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        token = request.auth
        if not isinstance(token, ApiToken):
            return None  # not a token call: not throttled
        # The token's random public prefix, never reused (a row id may be, after a rollback on SQLite).
        return self.cache_format % {"scope": self.scope, "ident": token.prefix}

    @staticmethod
    def parse_rate(rate: str) -> tuple[int, int]:
        """"1200/minute" → (1200, 60); the period is s, m, h or d (DRF's format)."""
        number, period = rate.split("/")
        return int(number), {"s": 1, "m": 60, "h": 3600, "d": 86400}[period[0]]

    def allow_request(self, request: Request, view: Any) -> bool:
        self._wait: float | None = None
        rate = self.get_rate()
        key = self.get_cache_key(request, view) if rate else None
        if rate is None or key is None:
            return True
        limit, window = self.parse_rate(rate)
        count, left = throttle_count(key=f"{key}:{window}", window_seconds=window)
        if count <= limit:
            return True
        self._wait = max(math.ceil(left), 1)
        return False

    def wait(self) -> float | None:
        return getattr(self, "_wait", None)
