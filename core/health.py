"""`/healthz`: is this web process able to serve? For load balancers and uptime checks.

No sign-in, no session, no template: one `SELECT 1` on the default database and, when `REDIS_URL` is
set, one Redis PING (1 s timeouts). 200 with {"database": "ok", "redis": "ok" | "not configured"},
or 503 with the failed part named ({"database": "error: OperationalError", ...}); the exception's
text goes to the log, not to the (unauthenticated) caller.
"""
from __future__ import annotations

import logging

from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET

logger = logging.getLogger(__name__)
TIMEOUT_SECONDS = 1.0
_redis_clients: dict[str, object] = {}


def _database() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # any failure means "not healthy", named below
        logger.warning("health check: database failed", exc_info=True)
        return f"error: {type(exc).__name__}"
    return "ok"


def _redis() -> str:
    url = getattr(settings, "REDIS_URL", "")
    if not url:
        return "not configured"
    import redis  # noqa: PLC0415 — optional: only when REDIS_URL is set

    client = _redis_clients.get(url)
    if client is None:
        client = _redis_clients[url] = redis.Redis.from_url(
            url, socket_connect_timeout=TIMEOUT_SECONDS, socket_timeout=TIMEOUT_SECONDS)
    try:
        client.ping()  # type: ignore[attr-defined]
    except Exception as exc:
        logger.warning("health check: redis failed", exc_info=True)
        return f"error: {type(exc).__name__}"
    return "ok"


@csrf_exempt
@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    checks = {"database": _database(), "redis": _redis()}
    healthy = all(value in ("ok", "not configured") for value in checks.values())
    return JsonResponse(checks, status=200 if healthy else 503)
