"""The command-line client's topic-set commands (clients/recall-cli): create a topic set, build routers (upload,
keywords — the client polls the build), launch with cost confirmation; and the build poll on its own."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from annotation.models import Hit, Router, RouterBuild, Topic
from api.services import api_token_create
from tests.factories import CorpusFactory, make_documents, user_with_role
from tests.factories import cli_env as _env
from tests.factories import cli_run as _recall

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "clients" / "recall-cli"))
from recall_cli.cli import ApiError, build_wait

TEXTS = ["The wheat harvest was large."] * 10 + ["A football match ended late."] * 10 + ["Nothing here."] * 20


@pytest.mark.django_db(transaction=True)
def test_create_routers_and_launch_from_the_command_line(live_server, tmp_path):
    corpus = CorpusFactory(name="news")
    make_documents(corpus, 40, texts=TEXTS)  # external ids d0 … d39
    env = _env(live_server, api_token_create(user=user_with_role("pipeline", "analyst"), name="n").plaintext)

    created = _recall(env, "topic-set", "create", "--corpus", "news", "--name", "grain and games",
                      "--class", "Wheat=Crops of wheat", "--class", "Sport", "--hit-size", "5",
                      "--reward-per-hit", "0.50", "--budget", "20.00")
    assert created.returncode == 0, created.stderr
    body = json.loads(created.stdout)
    assert body["class_names"] == ["None of these", "Wheat", "Sport"]
    topic_set = Topic.objects.get(pk=body["id"], kind=Topic.Kind.MULTICLASS)

    predictions = tmp_path / "preds.csv"
    predictions.write_bytes(b"id,class\nd0,Wheat\nd1,1\nd12,Sport\n")
    upload = _recall(env, "router", "upload", "--topic-set", "grain and games", "--name", "spark", str(predictions),
                     "--interval", "0.1")
    assert upload.returncode == 0, upload.stderr
    build = json.loads(upload.stdout)
    assert build["status"] == "done" and build["router"]["predicted_counts"] == [37, 2, 1]
    assert Router.objects.get(name="spark").topic_id == topic_set.pk

    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"id,class\nd0,Wheat\nnope,Sport\nd2,Basketball\n")
    failed = _recall(env, "router", "upload", "--topic-set", str(topic_set.pk), "--name", "bad", str(bad))
    assert failed.returncode == 1
    assert "line 3:" in failed.stderr and "line 4:" in failed.stderr
    assert json.loads(failed.stdout)["status"] == "failed" and not Router.objects.filter(name="bad").exists()
    header = tmp_path / "header.csv"
    header.write_bytes(b"doc,label\nd0,1\n")
    refused = _recall(env, "router", "upload", "--topic-set", str(topic_set.pk), "--name", "h", str(header))
    assert refused.returncode == 1 and "error 400" in refused.stderr

    keywords = _recall(env, "router", "keywords", "--topic-set", "grain and games", "--name", "kw",
                       "--rule", "Sport=football", "--rule", "1=wheat,football")
    assert keywords.returncode == 0, keywords.stderr
    assert json.loads(keywords.stdout)["router"]["predicted_counts"] == [20, 10, 10]
    taken = _recall(env, "router", "keywords", "--topic-set", "grain and games", "--name", "kw", "--rule", "1=x")
    assert taken.returncode == 1 and "already has a router named" in taken.stderr
    assert RouterBuild.objects.filter(name="kw").count() == 1

    # 5 documents in HITs of 5 at $0.50, three annotators: $1.50.
    above = _recall(env, "topic-set", "launch", "--topic-set", "grain and games", "--documents", "5",
                    "--max-cost", "1.00")
    assert above.returncode == 2 and "above --max-cost" in above.stderr and not Hit.objects.exists()
    unconfirmed = _recall(env, "topic-set", "launch", "--topic-set", "grain and games", "--documents", "5")
    assert unconfirmed.returncode == 2 and "--yes" in unconfirmed.stderr and not Hit.objects.exists()
    launched = _recall(env, "topic-set", "launch", "--topic-set", "grain and games", "--documents", "5",
                       "--max-cost", "1.50", "--key", "cli-1")
    assert launched.returncode == 0, launched.stderr
    assert json.loads(launched.stdout)["drawn"] == 5 and Hit.objects.filter(topic=topic_set).count() == 1
    again = _recall(env, "topic-set", "launch", "--topic-set", "grain and games", "--documents", "5", "--yes")
    assert again.returncode == 0 and "Nothing to draw" in again.stderr
    assert Hit.objects.filter(topic=topic_set).count() == 1


class FakeClient:
    """Answers GETs of the build's url from a script: dicts are answers, exceptions are raised."""

    def __init__(self, answers):
        self.answers = list(answers)
        self.calls = 0

    def get(self, path):
        assert path == "/api/v1/router-builds/7/"
        self.calls += 1
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


def _build(status, processed=0):
    return {"id": 7, "url": "/api/v1/router-builds/7/", "status": status, "processed": processed, "total": 40}


def test_build_wait_polls_until_done_through_server_hiccups():
    client = FakeClient([_build("pending"), ApiError(503, {"detail": "down"}), OSError("reset"),
                         _build("running", 20), _build("done", 40), _build("done", 40)])
    final = build_wait(client, _build("pending"), interval=1, timeout=100, clock=lambda: 0.0, sleep=lambda s: None)
    assert final["status"] == "done" and final["processed"] == 40
    assert client.calls == 5  # stops at the first done answer


def test_build_wait_returns_a_failed_build_raises_a_refusal_and_times_out():
    failed = build_wait(FakeClient([_build("failed")]), _build("running"), interval=1, timeout=100,
                        clock=lambda: 0.0, sleep=lambda s: None)
    assert failed["status"] == "failed"
    with pytest.raises(ApiError):
        build_wait(FakeClient([ApiError(404, {"detail": "Not found."})]), _build("pending"), interval=1,
                   timeout=100, clock=lambda: 0.0, sleep=lambda s: None)
    ticks = iter(range(0, 1000, 10))
    slow = FakeClient([_build("running", n) for n in range(5, 40)])
    stopped = build_wait(slow, _build("pending"), interval=1, timeout=25, clock=lambda: float(next(ticks)),
                         sleep=lambda s: None)
    assert stopped["status"] == "running" and slow.calls == 2  # polled at t=10 and 20; 30 passes 25
    done_at_once = FakeClient([])
    assert build_wait(done_at_once, _build("done", 40), interval=1, timeout=0, clock=lambda: 0.0,
                      sleep=lambda s: None)["status"] == "done" and done_at_once.calls == 0
