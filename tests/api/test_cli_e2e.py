"""The command-line client (clients/recall-cli) end to end against a live server: the daily job."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.db import OperationalError

from annotation.models import Classifier, Hit, Topic
from annotation.services.crowd.crowd_simulation import crowd_simulate
from api.services import api_token_create
from tests.factories import cli_env as _env
from tests.factories import cli_run as _recall
from tests.factories import make_pair_world, user_with_role

CLIENT_DIR = Path(__file__).resolve().parents[2] / "clients" / "recall-cli"


def _retrying(call, attempts: int = 50):
    for _ in range(attempts - 1):
        try:
            return call()
        except OperationalError:
            time.sleep(0.1)
    return call()


@pytest.mark.django_db(transaction=True)
def test_upload_ids_measure_wait_and_report(live_server, tmp_path):
    world = make_pair_world(n=300, prevalence=0.3, topic_name="wheat", status="draft")
    user = user_with_role("pipeline", "analyst")
    env = _env(live_server, api_token_create(user=user, name="nightly").plaintext)

    ids = tmp_path / "retrieved.txt"
    ids.write_text("".join(f"d{i}\n" for i in range(0, 300, 3)) + "not-a-document\n")
    done = _recall(env, "upload-ids", "--corpus", world.topic.corpus.name, "--classifier", "nightly", str(ids))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["unknown_count"] == 1
    assert Classifier.objects.get(name="nightly").retrieved_count == 100

    refused = _recall(env, "measure", "--topic", "wheat", "--half-width", "0.2", "--max-cost", "0.01")
    assert refused.returncode == 2 and "above --max-cost" in refused.stderr
    assert not Hit.objects.exists()

    waiting = subprocess.Popen(
        [sys.executable, "-m", "recall_cli", "measure", "--topic", "wheat", "--half-width", "0.2", "--yes",
         "--wait", "--interval", "0.3", "--timeout", "90"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    try:
        deadline = time.monotonic() + 60
        while not _retrying(lambda: Hit.objects.filter(topic=world.topic).exists()):
            assert waiting.poll() is None, waiting.communicate()
            assert time.monotonic() < deadline, "the launch created no HIT"
            time.sleep(0.2)
        time.sleep(1)  # the client is polling, with HITs open
        assert waiting.poll() is None
        # The crowd answers while the client polls (the in-memory test database is shared with the server
        # thread and locks a table now and then: retry, as a real crowd would).
        while _retrying(lambda: Hit.objects.filter(topic=world.topic, status=Hit.Status.OPEN).exists()):
            _retrying(lambda: crowd_simulate(topic=Topic.objects.get(pk=world.topic.pk), truth_field="topics",
                                             truth_value="wheat", accuracy=1.0, workers=6))
            assert time.monotonic() < deadline + 60, "the simulated crowd could not finish"
        out, err = waiting.communicate(timeout=60)
    finally:
        if waiting.poll() is None:
            waiting.kill()
    assert waiting.returncode == 0, err
    final = json.loads(out[out.rindex("{\n  \"status\""):])
    assert final["hits"] == Hit.objects.filter(topic=world.topic).count() > 0
    assert final["hits_open"] == 0 and final["judgments_outstanding"] == 0

    report = _recall(env, "report", "--topic", "wheat", "--format", "json")
    assert report.returncode == 0, report.stderr
    body = json.loads(report.stdout)
    assert body["topic"]["name"] == "wheat" and body["snapshot"]["version"] >= 1

    annotator = user_with_role("someone", "annotator")
    denied = _recall(_env(live_server, api_token_create(user=annotator, name="t").plaintext),
                     "report", "--topic", str(world.topic.pk))
    assert denied.returncode == 1 and "error 403" in denied.stderr


def test_the_client_needs_a_token(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "RECALL_TOKEN"}
    env["PYTHONPATH"] = str(CLIENT_DIR)
    done = _recall(env, "report", "--topic", "x")
    assert done.returncode == 2 and "RECALL_TOKEN" in done.stderr
