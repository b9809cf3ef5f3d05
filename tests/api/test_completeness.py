"""Topic.allow_unsure in the settings, unsure judgments as relevant: null, throttled token calls (429), and an
import past CORPUS_UPLOAD_MAX_BYTES (413) — all as problem details where they are errors (issue 14)."""
from __future__ import annotations

import io
import json

import pytest
from django.conf import settings
from django.test import override_settings
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.models import Assignment, Corpus, CorpusUpload, Hit, Judgment, Topic
from tests.factories import make_pair_world, make_worker


def _problem(response, status: int) -> dict:
    assert response.status_code == status, response.content[:500]
    assert response["Content-Type"].startswith("application/problem+json")
    body = response.json()
    assert {"type", "title", "status", "detail"} <= set(body) and body["status"] == status
    return body


@pytest.fixture
def world(db):
    return make_pair_world(n=200, prevalence=0.2)


# --------------------------------------------------------------------------- allow_unsure


def test_allow_unsure_is_read_set_at_creation_and_changed(analyst, world):
    topic = world.topic
    assert analyst.client.get(f"/api/v1/topics/{topic.pk}/").json()["allow_unsure"] is False
    changed = analyst.client.patch(f"/api/v1/topics/{topic.pk}/", {"allow_unsure": True}, format="json")
    assert changed.status_code == 200, changed.content
    assert changed.json()["allow_unsure"] is True
    topic.refresh_from_db()
    assert topic.allow_unsure is True
    # Other settings leave it alone; false turns it off again.
    analyst.client.patch(f"/api/v1/topics/{topic.pk}/", {"confidence": 0.9}, format="json")
    topic.refresh_from_db()
    assert topic.allow_unsure is True
    assert analyst.client.patch(f"/api/v1/topics/{topic.pk}/", {"allow_unsure": False},
                                format="json").json()["allow_unsure"] is False

    pair = topic.pair
    created = analyst.client.post("/api/v1/topics/", {
        "corpus": topic.corpus_id, "name": "with-unsure", "c1": pair.c1_id, "c2": pair.c2_id,
        "allow_unsure": True}, format="json")
    assert created.status_code == 201, created.content
    assert created.json()["allow_unsure"] is True
    assert Topic.objects.get(name="with-unsure").allow_unsure is True


def test_allow_unsure_must_be_a_boolean(analyst, world):
    body = _problem(analyst.client.patch(f"/api/v1/topics/{world.topic.pk}/", {"allow_unsure": "maybe"},
                                         format="json"), 400)
    assert "allow_unsure" in body["errors"]


def test_unsure_judgments_export_relevant_null(manager, world):
    topic = world.topic
    hit = Hit.objects.create(topic=topic, reward="0.10")
    worker = make_worker("unsure-worker")
    assignment = Assignment.objects.create(hit=hit, worker=worker, slot=0, deadline=timezone.now())
    for doc_id, relevant in ((world.doc_ids[0], True), (world.doc_ids[1], None), (world.doc_ids[2], False)):
        Judgment.objects.create(assignment=assignment, topic=topic, document_id=doc_id, worker=worker,
                                relevant=relevant)
    response = manager.client.get(f"/api/v1/topics/{topic.pk}/judgments/")
    assert response.status_code == 200
    rows = json.loads(response.content)["results"]  # the raw JSON: null, not false or absent
    assert [(row["external_id"], row["relevant"]) for row in rows] == [("d0", True), ("d1", None), ("d2", False)]
    assert b'"relevant":null' in response.content.replace(b" ", b"")


# --------------------------------------------------------------------------- throttling


def _rates(rate: str | None) -> dict:
    return {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"token": rate}}


def test_token_calls_past_the_rate_answer_429_problems_per_token(callers):
    analyst, manager = callers["analyst"], callers["manager"]
    with override_settings(REST_FRAMEWORK=_rates("3/minute")):
        statuses = [analyst.client.get("/api/v1/me/").status_code for _ in range(4)]
        assert statuses == [200, 200, 200, 429]
        body = _problem(analyst.client.get("/api/v1/corpora/"), 429)
        assert body["type"].endswith("/too-many-requests") and body["title"] == "Too many requests"
        response = analyst.client.get("/api/v1/me/")
        assert 0 < int(response["Retry-After"]) <= 60
        # Counted per token: another token (here another user's) still has its calls.
        assert manager.client.get("/api/v1/me/").status_code == 200


def test_session_calls_are_not_throttled_and_no_rate_means_no_limit(callers):
    analyst = callers["analyst"]
    session = APIClient()
    session.force_login(analyst.user)
    with override_settings(REST_FRAMEWORK=_rates("2/minute")):
        assert [session.get("/api/v1/me/").status_code for _ in range(4)] == [200] * 4
    with override_settings(REST_FRAMEWORK=_rates(None)):
        assert [analyst.client.get("/api/v1/me/").status_code for _ in range(5)] == [200] * 5


def test_the_default_rate_is_generous():
    rate = settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]["token"]
    count, period = rate.split("/")
    assert int(count) / {"s": 1, "m": 60, "h": 3600, "d": 86400}[period[0]] >= 10  # at least 10 calls a second


# --------------------------------------------------------------------------- uploads past the limit


JSONL = b"".join(json.dumps({"id": f"n{i}", "title": f"T {i}", "body": f"wheat {i}"}).encode() + b"\n"
                 for i in range(50))


@override_settings(CORPUS_UPLOAD_MAX_BYTES=500)
def test_an_import_past_the_size_limit_is_413_and_keeps_nothing(analyst, tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path
    body = _problem(analyst.client.generic("POST", "/api/v1/corpora/?corpus_name=big", JSONL,
                                           content_type="application/x-ndjson"), 413)
    assert body["type"].endswith("/too-large") and body["max_bytes"] == 500
    assert "limit" in body["detail"]
    corpus = Corpus.objects.create(name="existing")
    upload = io.BytesIO(JSONL)
    upload.name = "big.jsonl"
    body = _problem(analyst.client.post(f"/api/v1/corpora/{corpus.pk}/imports/", {"file": upload},
                                        format="multipart"), 413)
    assert body["max_bytes"] == 500
    assert not CorpusUpload.objects.exists() and not Corpus.objects.filter(name="big").exists()
    assert not any(tmp_path.rglob("*.jsonl"))
    # Under the limit the same route answers 202.
    small = JSONL[:400]
    assert analyst.client.generic("POST", "/api/v1/corpora/?corpus_name=small", small,
                                  content_type="application/x-ndjson").status_code == 202
