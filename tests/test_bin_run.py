"""bin/run runs the app as production does (issue 25 item 3), with real processes.

Before: without Redis every Celery task ran eagerly inside the browser's request (training a classifier held
the tab for 9 minutes), nothing ever ran a webhook retry (no worker, no beat), and each start of bin/run reset
the demo passwords (`set_password`), signing every user out.

Here bin/run is started on a temporary APP_VAR_DIR whose database already holds the demo (a corpus named like
the demo's and the demo accounts) and a signed-in session: after the start the session still signs its user
in and the password hash is unchanged; a corpus upload queued by another process (as the upload page queues
it) is left pending by that process and imported by bin/run's own worker through the file-system broker;
SIGTERM to bin/run stops the web server, the worker and beat.
"""
from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYTHON = str(Path(sys.executable).parent / "python")
TIMEOUT = 240  # a loaded two-core machine: migrations and three Django start-ups

pytestmark = pytest.mark.slow

PREPARE = """
import json, sys
from django.core.management import call_command
call_command("migrate", "--noinput", verbosity=0)
from django.contrib.auth import get_user_model
from django.test import Client
from annotation.demo.setup import DEMO_CORPUS_NAME
from annotation.models import Corpus
from annotation.services.accounts import demo_accounts_ensure
Corpus.objects.create(name=DEMO_CORPUS_NAME)
demo_accounts_ensure()
user = get_user_model().objects.get(username="analyst")
client = Client()
client.force_login(user)
print(json.dumps({"session": client.cookies["sessionid"].value, "password": user.password}))
"""

ENQUEUE = """
import json
from django.db import transaction
from annotation.services.corpora.corpus_uploads import corpus_upload_create
lines = b"".join(json.dumps({"id": f"d{i}", "title": f"coffee {i}", "text": f"body {i}"}).encode() + b"\\n"
                 for i in range(25))
with transaction.atomic():
    upload = corpus_upload_create(corpus_name="bin-run upload", original_name="c.jsonl", chunks=[lines],
                                  id_field="id", text_fields=["title", "text"])
print(json.dumps({"id": upload.pk, "status": upload.status}))
"""



def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def shell(env: dict[str, str], code: str) -> dict:
    result = subprocess.run([PYTHON, "manage.py", "shell", "-c", code], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def sql(var: Path, query: str) -> list[tuple]:
    """Read bin/run's SQLite database directly (no Django start-up per poll)."""
    with contextlib.closing(sqlite3.connect(var / "db.sqlite3", timeout=30)) as connection:
        return connection.execute(query).fetchall()


def get(port: int, path: str, cookie: str = "") -> http.client.HTTPResponse | None:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("GET", path, headers={"Cookie": cookie} if cookie else {})
        response = connection.getresponse()
        response.read()
        return response
    except OSError:
        return None
    finally:
        connection.close()


def wait_for(predicate, what: str, process: subprocess.Popen, log: Path):
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        if process.poll() is not None:
            pytest.fail(f"bin/run exited ({process.returncode}) before {what}:\n{log.read_text()[-4000:]}")
        time.sleep(0.5)
    pytest.fail(f"timed out after {TIMEOUT}s waiting for {what}:\n{log.read_text()[-4000:]}")


def children(pid: int) -> list[int]:
    result = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True)
    return [int(line) for line in result.stdout.split()]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ")[-1].startswith("Z"))


def test_bin_run_keeps_sessions_and_runs_tasks_on_its_own_worker(tmp_path):
    var = tmp_path / "var"
    env = {k: v for k, v in os.environ.items()
           if k not in {"DATABASE_URL", "REDIS_URL", "CACHE_URL", "CELERY_BROKER_URL", "DJANGO_SECRET_KEY"}}
    env.update(DJANGO_SETTINGS_MODULE="config.settings.local", APP_VAR_DIR=str(var), PYTHON=PYTHON)
    before = shell(env, PREPARE)

    port = free_port()
    log = tmp_path / "bin-run.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(["bash", "bin/run"], cwd=ROOT, env={**env, "PORT": str(port)}, stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    started: list[int] = []
    try:
        wait_for(lambda: (r := get(port, "/healthz")) is not None and r.status == 200, "/healthz", process, log)
        started = children(process.pid)

        # The session made before the start still signs its user in: home sends the analyst on, not to sign-in.
        home = get(port, "/", cookie=f"sessionid={before['session']}")
        assert home is not None and home.status == 302
        assert "/accounts/login/" not in home.headers["Location"], "the start signed the analyst out"
        password = sql(var, "SELECT password FROM auth_user WHERE username = 'analyst'")
        assert password == [(before["password"],)], "the start reset a password"
        assert len(started) == 3, f"web, worker and beat under bin/run: {started}"

        # Another process queues an import (as the upload page does) and returns at once: pending, not done.
        queued = shell({**env, "CELERY_BROKER_URL": "filesystem://"}, ENQUEUE)
        assert queued["status"] == "pending"
        upload_status = f"SELECT status FROM annotation_corpusupload WHERE id = {int(queued['id'])}"
        wait_for(lambda: sql(var, upload_status) == [("done",)], "bin/run's worker to import the upload", process, log)
        worker_log = (var / "log" / "worker.log").read_text()
        assert "corpus_import_task" in worker_log and "succeeded" in worker_log
        assert "beat: Starting" in (var / "log" / "beat.log").read_text()
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        try:
            process.wait(90)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)
            pytest.fail(f"bin/run did not stop on SIGTERM:\n{log.read_text()[-3000:]}")
    deadline = time.monotonic() + 30
    while any(alive(pid) for pid in started) and time.monotonic() < deadline:
        time.sleep(0.5)
    left = [pid for pid in started if alive(pid)]
    if left:
        os.killpg(process.pid, signal.SIGKILL)
    assert not left, f"processes left running after bin/run stopped: {left}"
