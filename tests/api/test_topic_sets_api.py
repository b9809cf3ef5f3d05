"""The topic-set API (issue 13 item 1, seed 002): create → router (CSV, keywords) → preview → launch →
idempotent replay → the report of a multiclass topic; roles and problem details."""
from __future__ import annotations

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import Hit, Router, RouterBuild, RouterPrediction, SampleDraw, Topic, TopicClass
from api.models import IdempotencyRecord
from estimation.models import EstimateSnapshot
from tests.factories import CorpusFactory, make_documents

pytestmark = pytest.mark.django_db

TEXTS = (["The wheat harvest was large."] * 10 + ["A football match ended late."] * 10
         + ["Nothing to see here."] * 20)


@pytest.fixture
def corpus():
    corpus = CorpusFactory(name="news")
    make_documents(corpus, 40, texts=TEXTS)  # external ids d0 … d39
    return corpus


def create_body(the_corpus, **overrides):
    body = {"corpus": the_corpus.pk, "name": "grain and games",
            "classes": [{"name": "Wheat", "description": "Crops of wheat"}, {"name": "Sport"}],
            "instructions": "Pick the one topic the document is about.", "allow_unsure": True,
            "hit_size": 5, "reward_per_hit": "0.50", "budget": "20.00"}
    body.update(overrides)
    return body


@pytest.fixture
def topic_set(analyst, corpus):
    response = analyst.client.post("/api/v1/topic-sets/", create_body(corpus), format="json")
    assert response.status_code == 201, response.content
    return Topic.objects.get(pk=response.json()["id"])


def test_create_returns_the_set_with_its_classes(analyst, corpus):
    response = analyst.client.post("/api/v1/topic-sets/", create_body(corpus), format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["kind"] == "multiclass" and body["status"] == "draft" and body["corpus"] == corpus.pk
    assert body["class_names"] == ["None of these", "Wheat", "Sport"]
    assert body["classes"] == [{"position": 1, "name": "Wheat", "description": "Crops of wheat"},
                               {"position": 2, "name": "Sport", "description": ""}]
    assert body["allow_unsure"] is True and body["reward_per_hit"] == "0.50" and body["budget"] == "20.00"
    assert body["routers"] == [] and body["sample"]["drawn"] == 0
    topic = Topic.objects.get(pk=body["id"])
    assert topic.is_multiclass and not hasattr(topic, "pair")
    assert list(TopicClass.objects.filter(topic=topic).values_list("position", "name")) == [(1, "Wheat"), (2, "Sport")]
    # Also listed, under /topic-sets/ and (with its kind) under /topics/.
    listed = analyst.client.get("/api/v1/topic-sets/").json()
    assert listed["count"] == 1 and listed["results"][0]["id"] == topic.pk
    topics = analyst.client.get("/api/v1/topics/", {"name": "grain and games"}).json()["results"]
    assert [t["kind"] for t in topics] == ["multiclass"] and topics[0]["c1"] is None


@pytest.mark.parametrize(("change", "field"), [
    ({"classes": [{"name": "Only one"}]}, "classes"),
    ({"classes": [{"name": f"c{i}"} for i in range(21)]}, "classes"),
    ({"hit_size": 0}, "hit_size"),
    ({"aggregator": "vote"}, "aggregator"),
    ({"budget": "-1"}, "budget"),
    ({"corpus": 999999}, "corpus"),
    ({"name": ""}, "name"),
])
def test_invalid_input_is_a_validation_problem(analyst, corpus, change, field):
    response = analyst.client.post("/api/v1/topic-sets/", create_body(corpus, **change), format="json")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/problem+json")
    body = response.json()
    assert body["type"].endswith("/validation") and field in body["errors"]
    assert not Topic.objects.exists()


def test_service_refusals_keep_their_message(analyst, corpus, topic_set):
    reserved = analyst.client.post("/api/v1/topic-sets/", create_body(
        corpus, name="other", classes=[{"name": "None"}, {"name": "Sport"}]), format="json")
    assert reserved.status_code == 400 and "reserved" in reserved.json()["detail"]
    duplicate = analyst.client.post("/api/v1/topic-sets/", create_body(corpus), format="json")
    assert duplicate.status_code == 400 and "already exists" in duplicate.json()["detail"]
    assert Topic.objects.count() == 1


def built(response, *, status="done"):
    """The 202 answer of a router POST: the build (tasks run in-process in tests, so it has already ended)."""
    assert response.status_code == 202, response.content[:500]
    build = response.json()
    assert response["Location"] == build["url"] == f"/api/v1/router-builds/{build['id']}/"
    assert build["status"] == status, build
    return build


def test_router_from_csv_multipart_and_text_csv(analyst, topic_set):
    csv = b"id,class\nd0,Wheat\nd1,1\nd2,Sport\nd3,none\nd4,\n"
    response = analyst.client.post(f"/api/v1/topic-sets/{topic_set.pk}/routers/csv/",
                                   {"name": "spark router", "file": SimpleUploadedFile("preds.csv", csv)},
                                   format="multipart")
    build = built(response)
    assert build["kind"] == "upload" and build["name"] == "spark router" and build["error"] == ""
    assert build["processed"] == build["total"] == 6 and build["lines"] == []
    body = build["router"]
    assert body["id"] == build["router_id"] and body["kind"] == "upload" and body["name"] == "spark router"
    assert body["predicted_counts"] == [37, 2, 1]  # 40 documents: 2 Wheat, 1 Sport, 37 none of these
    router = Router.objects.get(pk=body["id"])
    assert RouterPrediction.objects.filter(router=router).count() == 3
    plain = analyst.client.generic("POST", f"/api/v1/topic-sets/{topic_set.pk}/routers/csv/?name=plain",
                                   b"id,class\nd5,Sport\n", content_type="text/csv")
    assert built(plain)["router"]["predicted_counts"] == [39, 0, 1]
    polled = analyst.client.get(build["url"])
    assert polled.status_code == 200 and polled.json() == build


def test_bad_router_csv_fails_the_build_with_every_bad_line_and_creates_nothing(analyst, topic_set):
    csv = b"id,class\nd0,Wheat\nnope,Sport\nd2,Basketball\n"
    response = analyst.client.post(f"/api/v1/topic-sets/{topic_set.pk}/routers/csv/",
                                   {"name": "bad", "file": SimpleUploadedFile("bad.csv", csv)}, format="multipart")
    build = built(response, status="failed")
    assert [entry["line"] for entry in build["lines"]] == [3, 4]
    assert all(entry["problem"] for entry in build["lines"])
    assert "line 3:" in build["error"] and build["router"] is None and build["router_id"] is None
    assert not Router.objects.exists()
    # The name is free again once the build failed.
    retry = analyst.client.post(f"/api/v1/topic-sets/{topic_set.pk}/routers/csv/",
                                {"name": "bad", "file": SimpleUploadedFile("ok.csv", b"id,class\nd0,1\n")},
                                format="multipart")
    assert built(retry)["router"]["predicted_counts"] == [39, 1, 0]


def test_router_csv_mistakes_in_the_request_stay_problems_and_start_nothing(analyst, topic_set, monkeypatch):
    url = f"/api/v1/topic-sets/{topic_set.pk}/routers/csv/"
    header = analyst.client.generic("POST", f"{url}?name=h", b"doc,label\nd0,1\n", content_type="text/csv")
    assert header.status_code == 400 and header["Content-Type"].startswith("application/problem+json")
    assert [entry["line"] for entry in header.json()["lines"]] == [1]
    empty = analyst.client.generic("POST", f"{url}?name=e", b"\n\n", content_type="text/csv")
    assert empty.status_code == 400 and "empty" in empty.json()["detail"]
    no_name = analyst.client.generic("POST", url, b"id,class\nd0,1\n", content_type="text/csv")
    assert no_name.status_code == 400 and "name" in no_name.json()["errors"]
    monkeypatch.setattr("api.views.topic_sets.ROUTER_CSV_MAX_BYTES", 100)
    large = analyst.client.generic("POST", f"{url}?name=big", b"id,class\n" + b"d1,1\n" * 30, content_type="text/csv")
    assert large.status_code == 413 and large.json()["max_bytes"] == 100
    assert not RouterBuild.objects.exists() and not Router.objects.exists()
    media = settings.MEDIA_ROOT
    assert not list((__import__("pathlib").Path(media) / "router-uploads").glob("*"))


def test_a_taken_name_is_refused_and_the_first_build_is_found_by_name(analyst, topic_set):
    url = f"/api/v1/topic-sets/{topic_set.pk}/routers/keywords/"
    body = {"name": "kw", "rules": [{"class": 1, "terms": ["wheat"], "fields": ["title", "text"]}]}
    first = built(analyst.client.post(url, body, format="json"))
    again = analyst.client.post(url, body, format="json")
    assert again.status_code == 400 and "already has a router named" in again.json()["detail"]
    assert RouterBuild.objects.count() == 1
    found = analyst.client.get(f"/api/v1/topic-sets/{topic_set.pk}/router-builds/", {"name": "kw"}).json()
    assert found["count"] == 1 and found["results"][0]["id"] == first["id"]
    assert analyst.client.get(f"/api/v1/topic-sets/{topic_set.pk}/router-builds/",
                              {"status": "failed"}).json()["count"] == 0


def test_without_in_process_tasks_the_request_only_queues_the_build(analyst, topic_set, settings, monkeypatch,
                                                                   django_capture_on_commit_callbacks):
    """With a broker the 202 says pending and no router exists yet; the task builds it, the poll then shows it."""
    from annotation.services.classifiers import router_builds

    queued: list[int] = []
    settings.CELERY_TASK_ALWAYS_EAGER = False
    monkeypatch.setattr(router_builds, "router_build_enqueue", lambda *, build_id: queued.append(build_id) or True)
    with django_capture_on_commit_callbacks(execute=True):
        response = analyst.client.post(f"/api/v1/topic-sets/{topic_set.pk}/routers/keywords/",
                                       {"name": "later", "rules": [{"class": "Wheat", "terms": ["wheat"], "fields": ["title", "text"]}]},
                                       format="json")
    build = built(response, status="pending")
    assert queued == [build["id"]] and build["processed"] == 0 and build["total"] == 40
    assert build["router"] is None and not Router.objects.exists()
    busy = analyst.client.post(f"/api/v1/topic-sets/{topic_set.pk}/routers/keywords/",
                               {"name": "later", "rules": [{"class": 1, "terms": ["x"], "fields": ["title", "text"]}]}, format="json")
    assert busy.status_code == 400 and "being built" in busy.json()["detail"]
    router_builds.router_build_run(build_id=build["id"])
    polled = analyst.client.get(build["url"]).json()
    assert polled["status"] == "done" and polled["processed"] == 40
    assert polled["router"]["predicted_counts"] == [30, 10, 0]


def test_router_build_of_another_topic_set_and_unknown_ids_are_404(analyst, topic_set):
    assert analyst.client.get("/api/v1/router-builds/999999/").status_code == 404
    assert analyst.client.get("/api/v1/topic-sets/999999/router-builds/").status_code == 404


def test_router_from_keyword_rules_first_match_wins(analyst, topic_set):
    rules = [{"class": "Sport", "terms": ["football"], "fields": ["title", "text"]}, {"class": 1, "terms": ["wheat", "football"], "fields": ["title", "text"]}]
    response = analyst.client.post(f"/api/v1/topic-sets/{topic_set.pk}/routers/keywords/",
                                   {"name": "kw", "rules": rules}, format="json")
    build = built(response)
    assert build["kind"] == "keywords" and build["processed"] == build["total"] == 40
    # 10 wheat documents to class 1; 10 football documents to class 2 (the first rule); 20 to none of these.
    assert build["router"]["predicted_counts"] == [20, 10, 10]
    bad = analyst.client.post(f"/api/v1/topic-sets/{topic_set.pk}/routers/keywords/",
                              {"name": "kw2", "rules": [{"class": 7, "terms": ["x"], "fields": ["title", "text"]}]}, format="json")
    assert bad.status_code == 400 and "not one of the topics 1–2" in bad.json()["detail"]
    missing = analyst.client.post(f"/api/v1/topic-sets/{topic_set.pk}/routers/keywords/",
                                  {"name": "kw3", "rules": [{"terms": ["x"], "fields": ["title", "text"]}]}, format="json")
    assert missing.status_code == 400
    assert missing.json()["errors"]["rules"] == {"0": {"class": ["This field is required."]}}
    assert missing.json()["detail"] == "rules.0.class: This field is required."
    assert RouterBuild.objects.count() == 1
    detail = analyst.client.get(f"/api/v1/topic-sets/{topic_set.pk}/").json()
    assert [r["name"] for r in detail["routers"]] == ["kw"]


def test_router_archive_and_delete(analyst, topic_set):
    router_id = analyst.client.post(f"/api/v1/topic-sets/{topic_set.pk}/routers/keywords/",
                                    {"name": "kw", "rules": [{"class": 1, "terms": ["wheat"], "fields": ["title", "text"]}]},
                                    format="json").json()["router_id"]
    archived = analyst.client.post(f"/api/v1/routers/{router_id}/archive/")
    assert archived.status_code == 200 and archived.json()["archived_at"] is not None
    assert analyst.client.get(f"/api/v1/topic-sets/{topic_set.pk}/routers/").json()["count"] == 0
    assert analyst.client.get(f"/api/v1/topic-sets/{topic_set.pk}/routers/?archived=1").json()["count"] == 1
    assert analyst.client.delete(f"/api/v1/routers/{router_id}/").status_code == 204
    assert not Router.objects.exists()


def launch(caller, topic_set, *, key, **body):
    return caller.client.post(f"/api/v1/topic-sets/{topic_set.pk}/launch/", body, format="json",
                              HTTP_IDEMPOTENCY_KEY=key)


def test_preview_launch_and_idempotent_replay(analyst, topic_set):
    # 12 documents in HITs of 5: 3 HITs x 3 assignments x $0.50 = $4.50, 36 judgments.
    preview = analyst.client.get(f"/api/v1/topic-sets/{topic_set.pk}/preview/", {"documents": 12})
    assert preview.status_code == 200
    assert preview.json() == {"documents": 12, "new_documents": 12, "hits": 3, "judgments": 36, "cost": "4.50",
                              "committed": "0.00", "budget": "20.00", "budget_left": "20.00", "refused": None}
    changed = launch(analyst, topic_set, key="k0", documents=12, confirm_cost="4.00")
    assert changed.status_code == 409 and changed.json()["type"].endswith("/cost-changed")
    assert changed.json()["preview"]["cost"] == "4.50"
    assert not SampleDraw.objects.filter(topic=topic_set).exists()
    assert not IdempotencyRecord.objects.filter(key="k0").exists()  # a refused launch keeps no key

    first = launch(analyst, topic_set, key="k1", documents=12, confirm_cost="4.50", seed=7)
    assert first.status_code == 201, first.content
    assert first.json()["drawn"] == 12 and first.json()["hits"] == 3 and first.json()["sample_size"] == 12
    replay = launch(analyst, topic_set, key="k1", documents=12, confirm_cost="4.50", seed=7)
    assert replay.status_code == 201 and replay["Idempotent-Replayed"] == "true"
    assert replay.json() == first.json()
    assert Hit.objects.filter(topic=topic_set).count() == 3  # drawn once
    other = launch(analyst, topic_set, key="k1", documents=15, confirm_cost="1.50")
    assert other.status_code == 409 and "different request" in other.json()["detail"]

    # A repeat asks for the total: 15 in all draws the 3 missing (1 HIT, $1.50).
    assert analyst.client.get(f"/api/v1/topic-sets/{topic_set.pk}/preview/",
                              {"documents": 15}).json()["cost"] == "1.50"
    nothing = launch(analyst, topic_set, key="k2", documents=12, confirm_cost="0.00")
    assert nothing.status_code == 409 and nothing.json()["type"].endswith("/nothing-to-draw")
    detail = analyst.client.get(f"/api/v1/topic-sets/{topic_set.pk}/").json()
    assert detail["status"] == "active" and detail["sample"]["drawn"] == 12
    assert detail["sample"]["judgments_planned"] == 36 and detail["sample"]["judged"] == 0


def test_launch_over_budget_is_refused_with_the_amounts(analyst, topic_set):
    # 40 documents: 8 HITs x 3 x $0.50 = $12.00 fits $20; then raise the ask past the corpus is capped at 40.
    Topic.objects.filter(pk=topic_set.pk).update(budget="5.00")
    preview = analyst.client.get(f"/api/v1/topic-sets/{topic_set.pk}/preview/", {"documents": 40}).json()
    assert preview["cost"] == "12.00" and preview["refused"] and "$5.00" in preview["refused"]
    refused = launch(analyst, topic_set, key="b1", documents=40, confirm_cost="12.00")
    assert refused.status_code == 409 and "$5.00" in refused.json()["detail"]
    assert not SampleDraw.objects.filter(topic=topic_set).exists()


def test_launch_needs_a_key_and_valid_numbers(analyst, topic_set):
    no_key = analyst.client.post(f"/api/v1/topic-sets/{topic_set.pk}/launch/",
                                 {"documents": 5, "confirm_cost": "1.50"}, format="json")
    assert no_key.status_code == 400 and "Idempotency-Key" in no_key.json()["errors"]
    bad = launch(analyst, topic_set, key="v", documents=0, confirm_cost="x")
    assert bad.status_code == 400 and set(bad.json()["errors"]) == {"documents", "confirm_cost"}
    assert analyst.client.get(f"/api/v1/topic-sets/{topic_set.pk}/preview/").status_code == 400


def test_binary_topics_and_topic_sets_stay_apart(analyst, topic_set):
    from tests.factories import make_pair_world

    binary = make_pair_world(n=60, prevalence=0.3).topic
    assert analyst.client.get(f"/api/v1/topic-sets/{binary.pk}/").status_code == 404
    quote = analyst.client.get(f"/api/v1/topics/{topic_set.pk}/quote/")
    assert quote.status_code == 409 and f"/topic-sets/{topic_set.pk}/preview/" in quote.json()["detail"]
    binary_launch = analyst.client.post(f"/api/v1/topics/{topic_set.pk}/launch/",
                                        {"half_width": 0.1, "confirm_cost": "1"}, format="json",
                                        HTTP_IDEMPOTENCY_KEY="x")
    assert binary_launch.status_code == 409


def test_report_endpoint_returns_a_multiclass_snapshot(analyst, manager, annotator, topic_set):
    report = {"kind": "multiclass", "classes": ["None of these", "Wheat", "Sport"], "sample": {"judged": 30},
              "routers": [{"name": "kw", "macro_f1": {"mean": 0.71, "hdi": [0.6, 0.8]}}]}
    EstimateSnapshot.objects.create(topic=topic_set, version=3, code_version="test", aggregator="majority",
                                    inputs={}, inputs_checksum="c" * 64, report=report, judgments=90)
    response = manager.client.get(f"/api/v1/topics/{topic_set.pk}/report/")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["kind"] == "multiclass" and body["routers"][0]["macro_f1"]["hdi"] == [0.6, 0.8]
    assert body["snapshot"]["version"] == 3 and body["snapshot"]["inputs_checksum"] == "c" * 64
    assert analyst.client.get(f"/api/v1/topics/{topic_set.pk}/report/versions/").json()["count"] == 1
    version = manager.client.get(f"/api/v1/topics/{topic_set.pk}/report/versions/3/").json()
    assert version["kind"] == "multiclass" and version["snapshot"]["version"] == 3
    assert annotator.client.get(f"/api/v1/topics/{topic_set.pk}/report/").status_code == 403


@pytest.mark.parametrize("role", ["manager", "annotator"])
def test_only_analysts_configure_topic_sets(callers, corpus, role):
    caller = callers[role]
    assert caller.client.post("/api/v1/topic-sets/", create_body(corpus), format="json").status_code == 403
    assert not Topic.objects.exists()


def test_raw_judgments_carry_the_class_chosen(analyst, manager, topic_set):
    from annotation.services.crowd.assignments import assignment_claim, assignment_submit
    from tests.factories import make_worker

    assert launch(analyst, topic_set, key="j", documents=5, confirm_cost="1.50").status_code == 201
    worker = make_worker("chooser")
    assignment = assignment_claim(worker=worker, topic=topic_set)
    documents = list(assignment.hit.items.order_by("position").values_list("document_id", flat=True))
    answers = dict(zip(documents, [1, 2, 0, None, 1], strict=True))
    assignment_submit(assignment_id=assignment.pk, worker=worker, answers=answers)
    rows = manager.client.get(f"/api/v1/topics/{topic_set.pk}/judgments/").json()["results"]
    assert {row["document"]: row["choice"] for row in rows} == answers
    assert all(row["relevant"] is None for row in rows)


def test_end_to_end_the_report_of_a_judged_topic_set_measures_the_router(analyst, manager, topic_set):
    """Launch 5 documents, three workers agree on each, a router that predicts exactly those classes: the report
    (computed on the first read) is multiclass, counts 5 judged documents and puts them all on the diagonal."""
    from annotation.models import Document
    from annotation.services.crowd.assignments import assignment_claim, assignment_submit
    from tests.factories import make_worker

    assert launch(analyst, topic_set, key="e2e", documents=5, confirm_cost="1.50").status_code == 201
    classes = [1, 2, 0, 1, 2]
    for name in ("w1", "w2", "w3"):
        worker = make_worker(name)
        assignment = assignment_claim(worker=worker, topic=topic_set)
        documents = list(assignment.hit.items.order_by("position").values_list("document_id", flat=True))
        assignment_submit(assignment_id=assignment.pk, worker=worker, answers=dict(zip(documents, classes, strict=True)))
    external = dict(Document.objects.filter(pk__in=documents).values_list("pk", "external_id"))
    csv = "id,class\n" + "".join(f"{external[doc]},{choice}\n" for doc, choice in zip(documents, classes, strict=True))
    router = built(analyst.client.generic("POST", f"/api/v1/topic-sets/{topic_set.pk}/routers/csv/?name=exact",
                                          csv.encode(), content_type="text/csv"))["router"]
    assert router["predicted_counts"] == [36, 2, 2]

    response = manager.client.get(f"/api/v1/topics/{topic_set.pk}/report/")
    assert response.status_code == 200, response.content[:500]
    report = response.json()
    assert report["kind"] == "multiclass" and report["snapshot"]["version"] >= 1
    assert [c["name"] for c in report["classes"]] == ["None of these", "Wheat", "Sport"]
    assert report["sample"]["judged"] == 5
    [entry] = report["routers"]
    assert entry["name"] == "exact" and entry["fingerprint"] == router["fingerprint"]
    confusion = entry["confusion"]
    assert sum(map(sum, confusion)) == 5 and sum(confusion[i][i] for i in range(3)) == 5
    progress = analyst.client.get(f"/api/v1/topic-sets/{topic_set.pk}/").json()["sample"]
    assert progress == {**progress, "drawn": 5, "judged": 5, "decided": 5, "judgments_done": 15}


def test_settings_of_a_topic_set_change_through_the_topic(analyst, topic_set):
    response = analyst.client.patch(f"/api/v1/topics/{topic_set.pk}/", {"budget": "30.00", "allow_unsure": False},
                                    format="json")
    assert response.status_code == 200, response.content[:300]
    detail = analyst.client.get(f"/api/v1/topic-sets/{topic_set.pk}/").json()
    assert detail["budget"] == "30.00" and detail["allow_unsure"] is False
    assert analyst.client.get(f"/api/v1/topic-sets/{topic_set.pk}/preview/",
                              {"documents": 40}).json()["budget_left"] == "30.00"
