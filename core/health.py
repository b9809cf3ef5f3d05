"""`/healthz`: is this web process able to serve? For load balancers and uptime checks.

No sign-in, no session, no template: one `SELECT 1` on the default database and, when `REDIS_URL` is
set, one Redis PING (1 s timeouts). 200 with {"database": "ok", "redis": "ok" | "not configured"},
or 503 with the failed part named ({"database": "error: OperationalError", ...}); the exception's
text goes to the log, not to the (unauthenticated) caller.
"""
from __future__ import annotations

import http.client
import logging
import os
import sys
import time
from pathlib import Path

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


# --- container probes (docker-compose.yml's healthchecks; `python -m core.health web|beat`) ------------------
#
# Run inside the container, without Django set up: the web probe asks this container's own gunicorn for
# /healthz over plain HTTP (production exempts /healthz from the HTTPS redirect, SECURE_REDIRECT_EXEMPT) with
# a Host the settings allow; the beat probe checks that beat has written its schedule file lately.

BEAT_STALE_SECONDS = 10 * 60  # beat writes its schedule at least every 3 minutes while it sends tasks


def probe_host(allowed_hosts: str) -> str:
    """A Host header DJANGO_ALLOWED_HOSTS accepts: its first concrete name ('.example.org' → 'example.org')."""
    for item in (part.strip() for part in allowed_hosts.split(",")):
        if item and item != "*":
            return item.lstrip(".")
    return "localhost"


def probe_web(environ: dict[str, str]) -> int:
    """0 when GET /healthz on this machine's gunicorn (GUNICORN_BIND's port) answers 200, else 1."""
    port = int(environ.get("GUNICORN_BIND", "0.0.0.0:8000").rsplit(":", 1)[1])
    connection_ = http.client.HTTPConnection("127.0.0.1", port, timeout=8)  # compose's healthcheck timeout: 10 s
    try:
        connection_.request("GET", "/healthz", headers={
            "Host": probe_host(environ.get("DJANGO_ALLOWED_HOSTS", "localhost"))})
        response = connection_.getresponse()
        body = response.read(500).decode(errors="replace")
    except OSError as exc:
        print(f"healthz: {exc}")
        return 1
    finally:
        connection_.close()
    print(f"healthz: {response.status} {body}")
    return 0 if response.status == 200 else 1


def probe_beat(environ: dict[str, str], now: float | None = None) -> int:
    """0 when beat's schedule file (any of the shelve's files) changed in the last BEAT_STALE_SECONDS, else 1."""
    var_dir = Path(environ.get("APP_VAR_DIR") or Path(__file__).resolve().parent.parent / "var")
    files = list(var_dir.glob("celerybeat-schedule*"))
    if not files:
        print(f"beat: no schedule file in {var_dir}")
        return 1
    age = (time.time() if now is None else now) - max(f.stat().st_mtime for f in files)
    print(f"beat: schedule written {age:.0f} s ago")
    return 0 if age < BEAT_STALE_SECONDS else 1


if __name__ == "__main__":
    probes = {"web": probe_web, "beat": probe_beat}
    if len(sys.argv) != 2 or sys.argv[1] not in probes:
        sys.exit(f"usage: python -m core.health {'|'.join(probes)}")
    sys.exit(probes[sys.argv[1]](dict(os.environ)))
