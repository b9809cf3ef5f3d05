"""The resources: each endpoint calls its service and answers in JSON; errors are problem details."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from annotation.models import Classifier, Corpus, Hit, Judgment, SampleDraw, Topic
from api.models import IdempotencyRecord
from estimation.models import CertificationPlan
from estimation.services.recompute import topic_snapshot_create
from tests.factories import c1, make_pair_world, make_worker, pilot


def _problem(response, status: int) -> dict:
    assert response.status_code == status, response.content[:500]
    assert response["Content-Type"].startswith("application/problem+json")
    body = response.json()
    assert {"type", "title", "status", "detail"} <= set(body) and body["status"] == status
    return body


# --------------------------------------------------------------------------- corpora


JSONL = b"".join(json.dumps({"id": f"n{i}", "title": f"T {i}", "body": f"wheat {i}"}).encode() + b"\n"
                 for i in range(30))


def test_import_a_jsonl_body_answers_202_with_a_job_that_can_be_polled(analyst, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = analyst.client.generic("POST", "/api/v1/corpora/?corpus_name=news", JSONL,
                                          content_type="application/x-ndjson")
    assert response.status_code == 202, response.content
    assert response["Location"] == f"/api/v1/imports/{response.json()['id']}/"
    job = analyst.client.get(response["Location"]).json()
    assert job["status"] == "done" and job["progress"] == 30 and job["summary"]["created"] == 30
    corpus = Corpus.objects.get(name="news")
    assert job["corpus"] == corpus.pk and corpus.document_count == 30
    listed = analyst.client.get("/api/v1/corpora/?name=news").json()
    assert listed["count"] == 1 and listed["results"][0]["document_count"] == 30


def test_import_a_multipart_file_into_an_existing_corpus(analyst, django_capture_on_commit_callbacks):
    corpus = Corpus.objects.create(name="existing")
    upload = io.BytesIO(JSONL)
    upload.name = "more.jsonl"
    with django_capture_on_commit_callbacks(execute=True):
        response = analyst.client.post(f"/api/v1/corpora/{corpus.pk}/imports/", {"file": upload},
                                       format="multipart")
    assert response.status_code == 202
    assert analyst.client.get(response["Location"]).json()["status"] == "done"
    assert analyst.client.get(f"/api/v1/corpora/{corpus.pk}/").json()["document_count"] == 30


def test_a_failed_import_reports_its_line(analyst, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = analyst.client.generic("POST", "/api/v1/corpora/?corpus_name=bad", JSONL + b"{not json\n",
                                          content_type="application/x-ndjson")
    job = analyst.client.get(response["Location"]).json()
    assert job["status"] == "failed" and job["error_line"] == 31


def test_import_refuses_an_unknown_file_type_and_media_type(analyst):
    upload = io.BytesIO(b"x")
    upload.name = "corpus.exe"
    body = _problem(analyst.client.post("/api/v1/corpora/", {"file": upload, "corpus_name": "c"},
                                        format="multipart"), 400)
    assert "Unsupported file type" in body["detail"]
    _problem(analyst.client.generic("POST", "/api/v1/corpora/?corpus_name=c", b"x", content_type="text/xml"), 415)
    body = _problem(analyst.client.generic("POST", "/api/v1/corpora/", JSONL, content_type="application/x-ndjson"), 400)
    assert "corpus_name" in body["detail"]


# --------------------------------------------------------------------------- classifiers


@pytest.fixture
def world(db):
    return make_pair_world(n=400, prevalence=0.2)


def test_upload_ids_as_text_lines_counts_the_unknown(analyst, world):
    corpus = world.topic.corpus
    response = analyst.client.generic("POST", f"/api/v1/corpora/{corpus.pk}/classifiers/ids/?name=nightly",
                                      b"d1\nd2\n\nd2\nnope\n", content_type="text/plain")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["read"] == 3 and body["unknown_count"] == 1 and body["unknown_examples"] == ["nope"]
    classifier = Classifier.objects.get(name="nightly")
    assert body["classifier"]["retrieved_count"] == 2 == classifier.retrieved_count
    assert body["classifier"]["fingerprint"] == classifier.fingerprint
    assert body["classifier"]["corpus_document_count"] == 400
    assert body["classifier"]["not_retrieved_count"] == 398


def test_upload_ids_as_a_json_list_and_as_a_file(analyst, world):
    corpus = world.topic.corpus
    response = analyst.client.post(f"/api/v1/corpora/{corpus.pk}/classifiers/ids/?name=from-json",
                                   ["d1", "d3", 5], format="json")
    assert response.status_code == 201 and response.json()["read"] == 3
    upload = io.BytesIO(b"d7\nd8\n")
    upload.name = "ids.txt"
    response = analyst.client.post(f"/api/v1/corpora/{corpus.pk}/classifiers/ids/",
                                   {"file": upload, "name": "from-file"}, format="multipart")
    assert response.status_code == 201 and response.json()["classifier"]["retrieved_count"] == 2


def test_upload_ids_errors_are_problems_with_field_messages(analyst, world):
    corpus = world.topic.corpus
    body = _problem(analyst.client.generic("POST", f"/api/v1/corpora/{corpus.pk}/classifiers/ids/", b"d1\n",
                                           content_type="text/plain"), 400)
    assert body["errors"] == {"name": ["This field is required."]}
    body = _problem(analyst.client.generic("POST", f"/api/v1/corpora/{corpus.pk}/classifiers/ids/?name=x",
                                           b"zzz\n", content_type="text/plain"), 400)
    assert "none of the 1 ids" in body["detail"]
    body = _problem(analyst.client.post(f"/api/v1/corpora/{corpus.pk}/classifiers/ids/?name=x",
                                        {"not": "a list"}, format="json"), 400)
    assert "list of ids" in body["detail"]
    name = world.topic.pair.c1.name
    body = _problem(analyst.client.generic("POST", f"/api/v1/corpora/{corpus.pk}/classifiers/ids/?name={name}",
                                           b"d1\n", content_type="text/plain"), 400)
    assert "already has a classifier named" in body["detail"]


def test_scores_with_a_threshold_then_moved(analyst, world):
    corpus = world.topic.corpus
    csv = b"id,score\n" + b"".join(f"d{i},{i / 100}\n".encode() for i in range(100))
    response = analyst.client.generic("POST", f"/api/v1/corpora/{corpus.pk}/classifiers/scores/?name=model&threshold=0.5",
                                      csv, content_type="text/csv")
    assert response.status_code == 201, response.content
    classifier = response.json()["classifier"]
    assert classifier["retrieved_count"] == 50 and classifier["definition"]["threshold"] == 0.5
    moved = analyst.client.patch(f"/api/v1/classifiers/{classifier['id']}/", {"threshold": 0.9}, format="json")
    assert moved.status_code == 200 and moved.json()["retrieved_count"] == 10
    assert moved.json()["fingerprint"] != classifier["fingerprint"]
    body = _problem(analyst.client.patch(f"/api/v1/classifiers/{classifier['id']}/", {"threshold": "x"},
                                         format="json"), 400)
    assert body["errors"] == {"threshold": ["A valid number is required."]}


def test_keywords_classifier(analyst, world):
    corpus = world.topic.corpus
    response = analyst.client.post(f"/api/v1/corpora/{corpus.pk}/classifiers/keywords/",
                                   {"name": "kw", "terms": ["number"], "fields": ["text"]}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["kind"] == "keywords" and response.json()["retrieved_count"] == 400
    body = _problem(analyst.client.post(f"/api/v1/corpora/{corpus.pk}/classifiers/keywords/",
                                        {"name": "kw2", "terms": [], "fields": ["nope"]}, format="json"), 400)
    assert set(body["errors"]) == {"terms", "fields"}
    listed = analyst.client.get(f"/api/v1/corpora/{corpus.pk}/classifiers/?kind=keywords").json()
    assert [c["name"] for c in listed["results"]] == ["kw"]


# --------------------------------------------------------------------------- topics


def test_create_a_topic_with_settings_then_change_them(analyst, world):
    pair = world.topic.pair
    response = analyst.client.post("/api/v1/topics/", {
        "corpus": world.topic.corpus_id, "name": "barley", "c1": pair.c1_id, "c2": pair.c2_id,
        "target_recall": 0.7, "hit_size": 4, "budget": "100.00"}, format="json")
    assert response.status_code == 201, response.content
    topic = response.json()
    assert (topic["status"], topic["c1"], topic["hit_size"], topic["budget"]) == ("draft", pair.c1_id, 4, "100.00")
    changed = analyst.client.patch(f"/api/v1/topics/{topic['id']}/", {"confidence": 0.9}, format="json").json()
    assert changed["confidence"] == 0.9 and changed["hit_size"] == 4 and changed["budget"] == "100.00"


def test_topic_errors_are_problem_details(analyst, world):
    pair = world.topic.pair
    body = _problem(analyst.client.post("/api/v1/topics/", {
        "corpus": world.topic.corpus_id, "name": "x", "c1": pair.c1_id, "c2": pair.c1_id}, format="json"), 400)
    assert "two different classifiers" in body["detail"]
    body = _problem(analyst.client.post("/api/v1/topics/", {"name": "x", "target_recall": 2}, format="json"), 400)
    assert {"corpus", "c1", "c2", "target_recall"} <= set(body["errors"])
    assert body["errors"]["target_recall"] == ["Ensure this value is less than or equal to 0.99."]
    _problem(analyst.client.get("/api/v1/topics/999999/"), 404)


def _launch(caller, topic: Topic, *, key: str, cost: str, half_width: float = 0.1):
    return caller.client.post(f"/api/v1/topics/{topic.pk}/launch/", {"half_width": half_width, "confirm_cost": cost},
                              format="json", HTTP_IDEMPOTENCY_KEY=key)


def test_launch_needs_a_key_and_the_quoted_cost(analyst, world):
    topic = world.topic
    quote = analyst.client.get(f"/api/v1/topics/{topic.pk}/quote/?half_width=0.1").json()
    assert quote["hits"] > 0
    body = _problem(analyst.client.post(f"/api/v1/topics/{topic.pk}/launch/",
                                        {"half_width": 0.1, "confirm_cost": quote["cost"]}, format="json"), 400)
    assert "Idempotency-Key" in body["errors"]
    body = _problem(_launch(analyst, topic, key="k", cost="0.01"), 409)
    assert body["type"].endswith("/cost-changed") and body["quote"]["cost"] == quote["cost"]
    assert not SampleDraw.objects.exists() and not IdempotencyRecord.objects.exists()


def test_launch_with_the_same_key_replays_and_never_draws_twice(analyst, world, django_capture_on_commit_callbacks):
    topic = world.topic
    cost = analyst.client.get(f"/api/v1/topics/{topic.pk}/quote/?half_width=0.1").json()["cost"]
    with django_capture_on_commit_callbacks(execute=True):
        first = _launch(analyst, topic, key="nightly-2026-11-24", cost=cost)
    assert first.status_code == 202, first.content
    draws, hits = SampleDraw.objects.count(), Hit.objects.count()
    assert draws > 0 and hits > 0
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        again = _launch(analyst, topic, key="nightly-2026-11-24", cost=cost)
    assert again.status_code == 202 and again.json() == first.json()
    assert again["Idempotent-Replayed"] == "true"
    assert callbacks == []
    assert (SampleDraw.objects.count(), Hit.objects.count()) == (draws, hits)
    body = _problem(_launch(analyst, topic, key="nightly-2026-11-24", cost=cost, half_width=0.05), 409)
    assert "different request" in body["detail"]
    progress = analyst.client.get(f"/api/v1/topics/{topic.pk}/progress/").json()
    assert progress["hits"] == hits and progress["hits_open"] == hits and progress["judgments_done"] == 0
    samples = analyst.client.get(f"/api/v1/topics/{topic.pk}/samples/?purpose=pair").json()
    assert samples["count"] == draws and sum(d["drawn"] for d in samples["results"]) > 0
    page = analyst.client.get(f"/api/v1/topics/{topic.pk}/hits/?limit=2").json()
    assert page["count"] == hits and len(page["results"]) == 2 and page["results"][0]["documents"]


def test_pause_and_resume(analyst, world):
    topic = world.topic
    assert analyst.client.post(f"/api/v1/topics/{topic.pk}/pause/").json()["status"] == "paused"
    body = _problem(_launch(analyst, topic, key="k2", cost="1.00"), 409)
    assert "resume it" in body["detail"]
    assert analyst.client.post(f"/api/v1/topics/{topic.pk}/resume/").json()["status"] == "active"
    assert analyst.client.post(f"/api/v1/topics/{topic.pk}/resume/").status_code == 200  # idempotent
    Topic.objects.filter(pk=topic.pk).update(status=Topic.Status.DRAFT)
    body = _problem(analyst.client.post(f"/api/v1/topics/{topic.pk}/pause/"), 409)
    assert "only a topic that is sampling" in body["detail"]


def test_judgments_are_listed_raw_and_filtered(manager, world):
    from django.utils import timezone

    from annotation.models import Assignment

    topic = world.topic
    hit = Hit.objects.create(topic=topic, reward="0.10")
    worker = make_worker("w1")
    assignment = Assignment.objects.create(hit=hit, worker=worker, slot=0, deadline=timezone.now())
    for doc_id, relevant in ((world.doc_ids[0], True), (world.doc_ids[1], False)):
        Judgment.objects.create(assignment=assignment, topic=topic, document_id=doc_id, worker=worker,
                                relevant=relevant)
    rows = manager.client.get(f"/api/v1/topics/{topic.pk}/judgments/").json()["results"]
    assert [(r["external_id"], r["relevant"], r["hit"], r["worker"]) for r in rows] == [
        ("d0", True, hit.pk, worker.pk), ("d1", False, hit.pk, worker.pk)]
    assert manager.client.get(f"/api/v1/topics/{topic.pk}/judgments/?document=d1").json()["count"] == 1
    assert manager.client.get(f"/api/v1/topics/{topic.pk}/judgments/?since={rows[0]['id']}").json()["count"] == 1
    # The worker is also named as the worker-quality page and the raw judgments export name it (issue 27).
    from estimation.services.exports import judgment_export_rows

    exported = {row["WorkerId"] for row in judgment_export_rows(topic=topic)}
    assert {r["worker_public_id"] for r in rows} == exported and len(exported) == 1
    assert str(worker.pk) not in exported


# --------------------------------------------------------------------------- reports and certification


def test_report_latest_is_the_json_of_the_command_and_versions_are_readable(manager, world):
    pilot(world, per_region=20)
    topic_snapshot_create(topic_id=world.topic.pk)
    out = io.StringIO()
    call_command("topic_report", topic=world.topic.name, format="json", stdout=out)
    latest = manager.client.get(f"/api/v1/topics/{world.topic.pk}/report/")
    assert latest.status_code == 200
    assert latest.json() == json.loads(out.getvalue())
    versions = manager.client.get(f"/api/v1/topics/{world.topic.pk}/report/versions/").json()
    assert [v["version"] for v in versions["results"]] == [1]
    assert manager.client.get(f"/api/v1/topics/{world.topic.pk}/report/versions/1/").json() == latest.json()
    _problem(manager.client.get(f"/api/v1/topics/{world.topic.pk}/report/versions/2/"), 404)


def test_report_of_a_topic_without_snapshot_gets_its_first(manager, world):
    body = manager.client.get(f"/api/v1/topics/{world.topic.pk}/report/").json()
    assert body["snapshot"]["version"] == 1


def test_certification_plan_create_lock_with_confirmation_and_verdict(manager, db):
    world = make_pair_world(n=4000, prevalence=0.2, recall1=0.85, recall2=0.6, noise=0.01, seed=5)
    pilot(world)
    url = f"/api/v1/topics/{world.topic.pk}/certification-plans/"
    body = _problem(manager.client.post(url, {"classifier": c1(world).pk, "target": 1.5}, format="json"), 400)
    assert "target" in body["errors"]
    created = manager.client.post(url, {"classifier": c1(world).pk, "target": 0.6}, format="json")
    assert created.status_code == 202, created.content  # sized by a task (in-process here: done already)
    plan = created.json()
    assert plan["state"] == "draft" and plan["estimated_cost"]
    body = _problem(manager.client.post(f"/api/v1/certification-plans/{plan['plan_id']}/lock/",
                                        {"confirm_cost": "0.00"}, format="json"), 409)
    assert body["estimated_cost"] == plan["estimated_cost"]
    assert CertificationPlan.objects.get().status == "draft"
    locked = manager.client.post(f"/api/v1/certification-plans/{plan['plan_id']}/lock/",
                                 {"confirm_cost": plan["estimated_cost"]}, format="json")
    assert locked.status_code == 200, locked.content
    assert locked.json()["status"] == "locked" and locked.json()["state"] == "pending"
    again = _problem(manager.client.post(f"/api/v1/certification-plans/{plan['plan_id']}/lock/",
                                         {"confirm_cost": plan["estimated_cost"]}, format="json"), 409)
    assert "already locked" in again["detail"]
    verdict = _problem(manager.client.get(f"/api/v1/certification-plans/{plan['plan_id']}/verdict/"), 404)
    assert verdict["state"] == "pending"
    listed = manager.client.get(url + "?status=locked").json()
    assert [p["plan_id"] for p in listed] == [plan["plan_id"]]


@pytest.mark.parametrize("url", [
    "/api/v1/topics/99999999999999999999/", "/api/v1/topics/?corpus=99999999999999999999",
    "/api/v1/topics/?limit=5&offset=99999999999999999999", "/api/v1/topics/1/judgments/?since=99999999999999999999",
    "/api/v1/topics/1/judgments/?worker=-1", "/api/v1/topics/1/report/versions/99999999999999999999/",
    "/api/v1/classifiers/99999999999999999999/", "/api/v1/imports/99999999999999999999/",
])
def test_ids_beyond_the_database_range_are_no_server_error(manager, analyst, world, url):
    caller = manager if "judgments" in url or "report" in url else analyst
    response = caller.client.get(url)
    # An offset past 100,000 is refused with its reason (issue 25: no request walks the table that far).
    expected = (400,) if "offset=" in url else (200, 404)
    assert response.status_code in expected, response.content
    if response.status_code == 200:
        assert response.json()["results"] == []
