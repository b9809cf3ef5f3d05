"""The compose healthchecks' probes (core/health.py) against real processes (issue 25 item 1).

Before: `ports: 8000:8000` with DJANGO_SECURE_SSL_REDIRECT=1 and no proxy, so `/healthz` answered every
plain-HTTP probe with a 301 to an HTTPS port where nothing listened, and web, worker and beat had no
healthcheck at all. Here gunicorn is started with the Dockerfile's own CMD under the production settings
(SQLite in a temporary APP_VAR_DIR) and the web service's healthcheck command is run against it.
"""
from __future__ import annotations

import http.client
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core import health
from tests.e2e.conftest import compose_command, compose_healthcheck

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def gunicorn(tmp_path):
    """The Dockerfile's CMD under production settings, one worker, on a loopback port (GUNICORN_BIND)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_", "REDIS_", "CACHE_"))}
    env.update(DJANGO_SETTINGS_MODULE="config.settings.production", DJANGO_SECRET_KEY=secrets.token_urlsafe(64),
               DJANGO_ALLOWED_HOSTS="recall.example.org,localhost", APP_VAR_DIR=str(tmp_path),
               GUNICORN_BIND=f"127.0.0.1:{port}", WEB_CONCURRENCY="1")
    log = open(tmp_path / "gunicorn.log", "wb")
    process = subprocess.Popen(compose_command("web"), cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                               start_new_session=True)
    deadline = time.monotonic() + 120
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                log.close()
                pytest.fail(f"gunicorn did not start:\n{(tmp_path / 'gunicorn.log').read_text()[-3000:]}")
            time.sleep(0.3)
    yield port, env
    os.killpg(process.pid, signal.SIGTERM)
    process.wait(30)
    log.close()


def _get(port: int, path: str, host: str) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("GET", path, headers={"Host": host})
    response = connection.getresponse()
    response.read()
    connection.close()
    return response


def test_the_web_healthcheck_passes_over_plain_http_while_pages_still_redirect(gunicorn):
    port, env = gunicorn
    assert _get(port, "/healthz", "recall.example.org").status == 200
    page = _get(port, "/accounts/login/", "recall.example.org")
    assert page.status == 301 and page.headers["Location"] == "https://recall.example.org/accounts/login/"
    check = compose_healthcheck("web")
    result = subprocess.run([sys.executable if check[0].endswith("python") else check[0], *check[1:]], cwd=ROOT,
                            env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "healthz: 200" in result.stdout


def test_the_web_probe_fails_when_nothing_answers():
    assert health.probe_web({"GUNICORN_BIND": f"0.0.0.0:{free_port()}"}) == 1


def test_the_probe_sends_a_host_the_settings_allow():
    assert health.probe_host("recall.example.org,localhost") == "recall.example.org"
    assert health.probe_host(".example.org") == "example.org"
    assert health.probe_host("*") == "localhost"
    assert health.probe_host("") == "localhost"


def test_the_beat_probe_reads_the_age_of_the_schedule_file(tmp_path):
    env = {"APP_VAR_DIR": str(tmp_path)}
    assert health.probe_beat(env) == 1  # beat never started
    schedule = tmp_path / "celerybeat-schedule.db"
    schedule.write_bytes(b"")
    written = schedule.stat().st_mtime
    assert health.probe_beat(env, now=written + 60) == 0
    assert health.probe_beat(env, now=written + health.BEAT_STALE_SECONDS + 1) == 1


def test_beat_writes_its_schedule_where_the_probe_looks(tmp_path):
    """CELERY_BEAT_SCHEDULE_FILENAME is APP_VAR_DIR/celerybeat-schedule (the compose command names no file)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_", "REDIS_"))}
    env.update(DJANGO_SETTINGS_MODULE="config.settings.local", APP_VAR_DIR=str(tmp_path))
    code = "from config.celery import app; print(app.conf.beat_schedule_filename)"
    result = subprocess.run([sys.executable, "-c", "import django; django.setup(); " + code], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(tmp_path / "celerybeat-schedule")
