"""The model judge's API (issue 28): the quote's cost is the one the launch confirms (409 with the fresh quote
otherwise), the launch is idempotent, a run and the report block read back; roles.  A local fake endpoint (an
HTTP server thread) answers; nothing leaves the machine."""
from __future__ import annotations

import json
import threading
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from annotation.models import Document, ModelJudgeRun, SampledDocument
from annotation.services.sampling.draws import samples_draw
from tests.factories import judge, make_pair_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def fake_endpoint(settings):
    relevant_titles: set[str] = set()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            title = body["messages"][1]["content"].split("Document title: ", 1)[1].split("\n", 1)[0]
            says = title in relevant_titles
            data = json.dumps({"choices": [{"message": {"content": json.dumps({"relevant": says})}}],
                               "usage": {"prompt_tokens": 50, "completion_tokens": 5}}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    settings.MODEL_JUDGE_BASE_URL = f"http://127.0.0.1:{server.server_address[1]}"
    settings.MODEL_JUDGE_MODEL = "fake"
    settings.MODEL_JUDGE_PRICE_PER_1K_TOKENS = Decimal("1.00")
    settings.MODEL_JUDGE_CONCURRENCY = 4
    yield relevant_titles
    server.shutdown()
    server.server_close()


@pytest.fixture
def world(fake_endpoint):
    w = make_pair_world(n=1500, prevalence=0.1, noise=0.02, seed=5)
    draws = samples_draw(topic=w.topic, per_region=40, complement=200, seed=4)
    judge(w, set(SampledDocument.objects.filter(draw__in=draws).values_list("document_id", flat=True)))
    fake_endpoint.update(Document.objects.filter(pk__in=w.relevant).values_list("title", flat=True))
    return w


QUERY = {"a12": 80, "b1": 80, "b2": 80, "n": 400}


def test_quote_launch_run_and_report(analyst, manager, world):
    url = f"/api/v1/topics/{world.topic.pk}/judge/"
    quote = analyst.client.get(url + "quote/", QUERY)
    assert quote.status_code == 200, quote.content
    q = quote.json()
    assert q["total"] == sum(q["documents"].values()) and Decimal(q["cost"]) > 0
    wrong = analyst.client.post(url + "runs/", {**QUERY, "confirm_cost": str(Decimal(q["cost"]) + 1)}, format="json",
                                HTTP_IDEMPOTENCY_KEY="k0")
    assert wrong.status_code == 409 and wrong.json()["quote"]["cost"] == q["cost"]
    assert not ModelJudgeRun.objects.exists()
    body = {**QUERY, "confirm_cost": q["cost"]}
    started = analyst.client.post(url + "runs/", body, format="json", HTTP_IDEMPOTENCY_KEY="k1")
    assert started.status_code == 202, started.content
    again = analyst.client.post(url + "runs/", body, format="json", HTTP_IDEMPOTENCY_KEY="k1")
    assert again.status_code == 202 and again.headers.get("Idempotent-Replayed") == "true"
    assert ModelJudgeRun.objects.count() == 1
    run = manager.client.get(f"/api/v1/judge-runs/{started.json()['id']}/").json()
    assert run["status"] == "done" and run["answered"] == q["total"] and run["cost_confirmed"] == q["cost"]
    assert Decimal(run["cost_spent"]) == Decimal(55 * q["total"]) / 1000
    report = manager.client.get(url + "report/")
    assert report.status_code == 200, report.content
    block = report.json()
    assert block["available"] and block["judge_documents"] == q["total"]
    assert {c["region"] for c in block["concordance"]} == {"A12", "B1", "B2", "N"}
    assert all(c["agreement"] == 1.0 for c in block["concordance"])
    assert block["r1"]["half_width"] <= block["r1_human"]["half_width"] * 1.05


def test_roles_and_not_found(analyst, manager, annotator, world):
    url = f"/api/v1/topics/{world.topic.pk}/judge/"
    assert manager.client.get(url + "report/").status_code == 404
    assert annotator.client.get(url + "quote/", QUERY).status_code == 403
    assert manager.client.get(url + "quote/", QUERY).status_code == 403
    refused = manager.client.post(url + "runs/", {**QUERY, "confirm_cost": "0"}, format="json",
                                  HTTP_IDEMPOTENCY_KEY="m1")
    assert refused.status_code == 403
    assert manager.client.get(url + "runs/").status_code == 200


def test_no_configured_endpoint_is_a_conflict(analyst, world, settings):
    settings.MODEL_JUDGE_BASE_URL = ""
    answer = analyst.client.get(f"/api/v1/topics/{world.topic.pk}/judge/quote/", QUERY)
    assert answer.status_code == 409 and answer.json()["type"].endswith("judge-not-configured")
