"""/healthz (issue 15): no sign-in, no session; 200 when the database (and Redis, if configured) answer,
503 naming the part that does not."""
from __future__ import annotations

import json
import socket

import pytest
from django.db import connection, connections
from django.test import Client, RequestFactory

from core import health

pytestmark = pytest.mark.django_db


def _closed_port() -> int:
    """A loopback port nobody listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(autouse=True)
def _fresh_clients(monkeypatch):
    monkeypatch.setattr(health, "_redis_clients", {})


def test_healthy_without_redis_configured(settings, django_assert_max_num_queries):
    settings.REDIS_URL = ""
    with django_assert_max_num_queries(1):  # the SELECT 1; no session, no user
        response = Client().get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"database": "ok", "redis": "not configured"}
    assert not response.cookies  # no session, no CSRF cookie
    assert "no-cache" in response["Cache-Control"]


def test_redis_on_a_closed_port_gives_503_naming_redis(settings):
    settings.REDIS_URL = f"redis://127.0.0.1:{_closed_port()}/8"
    response = Client().get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["database"] == "ok" and body["redis"].startswith("error: ") and "ConnectionError" in body["redis"]


def test_a_failing_database_gives_503_naming_the_database(monkeypatch, settings):
    settings.REDIS_URL = ""

    def broken_cursor(*args, **kwargs):
        from django.db import OperationalError

        raise OperationalError("the server closed the connection")

    monkeypatch.setattr(connection, "cursor", broken_cursor)
    response = health.healthz(RequestFactory().get("/healthz"))
    assert response.status_code == 503
    assert b'"database": "error: OperationalError"' in response.content


def test_a_real_redis_answers_ok(settings):
    """With the Redis of the test environment (REDIS_URL db 8), when one is running."""
    url = "redis://127.0.0.1:6379/8"
    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=0.5).close()
    except OSError:
        pytest.skip("no Redis on 127.0.0.1:6379")
    settings.REDIS_URL = url
    response = Client().get("/healthz")
    assert response.status_code == 200 and response.json() == {"database": "ok", "redis": "ok"}


def test_post_is_refused_and_never_signs_in(settings):
    settings.REDIS_URL = ""
    assert Client().post("/healthz").status_code == 405


def _wsgi_get(path: str) -> tuple[int, bytes]:
    """Through Django's WSGI handler as gunicorn calls it (the test Client skips the request_started
    connection check that this is about)."""
    from wsgiref.util import setup_testing_defaults

    from django.core.handlers.wsgi import WSGIHandler

    environ: dict = {"PATH_INFO": path, "REQUEST_METHOD": "GET"}
    setup_testing_defaults(environ)
    statuses: list[str] = []
    def start_response(status, headers, exc_info=None):
        statuses.append(status)
        return lambda data: None

    response = WSGIHandler()(environ, start_response)
    try:
        body = b"".join(response)
    finally:
        response.close()  # request_finished: persistent connections are kept, as in production
    return int(statuses[0].split()[0]), body


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("health_checks", [True, False])
def test_a_connection_the_database_dropped_is_replaced_not_a_failed_request(health_checks, settings):
    """Issue 15 item 6: with persistent connections, a backend killed by the database (restart, failover) must
    not fail the next request. The production settings turn CONN_HEALTH_CHECKS on; without it (the
    reproduction) the next request meets the dead connection."""
    from config.settings import base
    from tests.factories import require_postgres

    require_postgres()
    assert base.DATABASES["default"]["CONN_HEALTH_CHECKS"] is True
    settings.REDIS_URL = ""
    saved = {key: connection.settings_dict[key] for key in ("CONN_MAX_AGE", "CONN_HEALTH_CHECKS")}
    connection.settings_dict.update(CONN_MAX_AGE=60, CONN_HEALTH_CHECKS=health_checks)
    try:
        assert _wsgi_get("/healthz")[0] == 200  # opens the persistent connection
        pid = connection.connection.info.backend_pid
        default = connections["default"]
        killer = type(default)(dict(default.settings_dict), "killer")
        with killer.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
        killer.close()
        status, body = _wsgi_get("/healthz")
        if health_checks:
            assert status == 200 and json.loads(body)["database"] == "ok"
            assert connection.connection.info.backend_pid != pid  # a new connection
        else:
            assert status == 503  # the stale connection reached the request
    finally:
        connection.settings_dict.update(saved)
        connection.close()
