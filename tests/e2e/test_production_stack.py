"""End to end on the production-like stack (issue 15): gunicorn with production settings, a real Celery
worker and beat, PostgreSQL and Redis, driven only through HTTP.

import (upload form → worker) → two keyword classifiers → topic → launch with its confirmation
(the worker draws) → several annotator accounts claim and submit every HIT → the report page and
its JSON carry a recall figure; static files are served with a far-future cache header.
"""
from __future__ import annotations

import re
import threading
import time

import pytest

from tests.e2e.conftest import (
    AnnotatorRun,
    Client,
    PrivateRedis,
    Stack,
    annotate,
    annotator_session,
    classifier_keywords,
    compose_command,
    corpus_upload,
    corpus_write,
    flush_redis_db,
    json_of,
    judgment_invariants,
    postgres_admin_url,
    redis_server_url,
    running_stack,
    topic_create,
    topic_launch,
    truth_by_document,
    wait_for,
)

ANNOTATORS = [f"crowd{i}" for i in range(1, 6)]
USERS = {"ana": "analyst", "manny": "manager", **dict.fromkeys(ANNOTATORS, "annotator")}


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    """The stack on a private `redis-server` of its own (as the fault tests): no database of the shared
    server that another test run, or the real-worker test on another xdist worker (REDIS_URL), could be
    using or flushing. E2E_REDIS_DB=<n> puts it on that database of the shared server instead."""
    import os

    shared_db = os.environ.get("E2E_REDIS_DB")
    if shared_db:
        url = f"{redis_server_url()}/{shared_db}"
        flush_redis_db(url)
        with running_stack(redis_url=url, users=USERS) as running:
            yield running
        flush_redis_db(url)
        return
    postgres_admin_url()  # skip (or fail under REQUIRE_POSTGRES=1) before starting anything
    server = PrivateRedis(tmp_path_factory.mktemp("redis"))
    server.start()
    try:
        with running_stack(redis_url=server.url + "/0", users=USERS) as running:
            yield running
    finally:
        server.stop()


def test_import_classify_sample_crowd_report_over_http(stack: Stack, tmp_path):
    timings: dict[str, float] = dict(stack.timings)
    mark = time.monotonic()

    def lap(name: str) -> None:
        nonlocal mark
        now = time.monotonic()
        timings[name] = round(now - mark, 1)
        mark = now

    analyst = Client(stack)
    analyst.login("ana")
    assert stack.sql("SELECT count(*) FROM auth_user_groups")[0][0] == len(USERS), "user_add gave every role"

    # Import: the upload form streams the file to disk; the worker imports it.
    path, relevant = corpus_write(tmp_path, documents=1500, seed=15, prevalence=0.15)
    upload_id = corpus_upload(analyst, path, name="e2e news")
    state = wait_for(lambda: (s := json_of(analyst.get(f"/analyst/corpora/uploads/{upload_id}/status.json")))
                     ["finished"] and s, "the import", timeout=120, interval=0.5)
    assert state["status"] == "done", state
    corpus_id = state["corpus_id"]
    assert stack.sql("SELECT count(*) FROM annotation_document WHERE corpus_id = %s", (corpus_id,))[0][0] == 1500
    lap("import")

    title = classifier_keywords(analyst, stack, corpus_id=corpus_id, name="coffee headlines",
                                terms=["coffee", "arabica", "espresso"], fields=["title"])
    body = classifier_keywords(analyst, stack, corpus_id=corpus_id, name="coffee bodies",
                               terms=["coffee beans", "robusta", "roasters", "ico quota"], fields=["text"])
    lap("classifiers")

    topic_id = topic_create(analyst, corpus_id=corpus_id, name="Coffee (e2e)", c1=title, c2=body, hit_size=10)
    hits = topic_launch(analyst, stack, topic_id=topic_id, half_width=0.2)
    sampled = stack.sql("SELECT count(*) FROM annotation_sampleddocument WHERE topic_id = %s", (topic_id,))[0][0]
    assert hits > 0 and sampled > 0
    lap("topic+launch")

    # The crowd: every annotator in a thread of its own, each its own signed-in session.
    truth = truth_by_document(stack, corpus_id, relevant)
    runs = [AnnotatorRun() for _ in ANNOTATORS]
    sessions = [annotator_session(stack, name) for name in ANNOTATORS]
    threads = [threading.Thread(target=annotate, args=(session, truth.__getitem__, run))
               for session, run in zip(sessions, runs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(240)
    assert all(not run.failures for run in runs), [run.failures for run in runs]
    lap("crowd")

    judgments = judgment_invariants(stack, runs)
    assert judgments == 3 * sampled, (judgments, sampled)
    complete = stack.sql("SELECT count(*) FROM annotation_label WHERE topic_id = %s AND votes_total = 3",
                         (topic_id,))[0][0]
    assert complete == sampled

    # The report: recomputed by the worker after the last label (or by beat's sweep), read over HTTP.
    manager = Client(stack)
    manager.login("manny")

    def report_caught_up() -> dict | None:
        response = manager.get(f"/reports/topics/{topic_id}/report.json")
        if response.status_code != 200:
            return None
        report = json_of(response)["report"]
        return report if report["judged_documents"] == sampled else None

    report = wait_for(report_caught_up, "the report to hold every label", timeout=90, interval=0.5)
    lap("report")
    for key in ("C1", "C2"):  # each classifier's recall, with its interval
        recall = report["recall_eq1"][key]
        assert 0 < recall["low"] <= recall["estimate"] <= recall["high"] <= 1, recall
    page = manager.page(f"/reports/topics/{topic_id}/")
    assert "Coffee (e2e)" in page.text
    assert re.search(r"\d+(\.\d+)?\s*%", page.text), "the report page shows a recall percentage"

    # Static files: hashed names from the manifest, served by WhiteNoise with a far-future cache header.
    css = re.findall(r'href="(/static/[^"]+\.css)"', page.text)
    assert css and re.search(r"\.[0-9a-f]{12}\.css$", css[0]), css
    response = manager.get(css[0])
    assert response.status_code == 200 and response.headers["Content-Type"].startswith("text/css")
    max_age = re.search(r"max-age=(\d+)", response.headers.get("Cache-Control", ""))
    assert max_age and int(max_age.group(1)) >= 365 * 24 * 3600, response.headers.get("Cache-Control")
    assert "immutable" in response.headers["Cache-Control"]

    assert 500 not in analyst.statuses + manager.statuses + [s for c in sessions for s in c.statuses]
    lap("checks")
    print(f"\ne2e timings (s): {timings}; {hits} HITs, {sampled} documents, {judgments} judgments")


def test_the_compose_healthchecks_pass_and_healthz_answers_plain_http(stack: Stack):
    """Issue 25 item 1: the stack runs the compose services' own commands, and their healthchecks pass against
    them. /healthz answers a plain-HTTP probe (no X-Forwarded-Proto: Docker's probe inside the container) with
    200, not the 301 to an HTTPS port that it answered before; any other page still redirects."""
    assert stack.processes["worker"].args == compose_command("worker")
    for service in ("web", "worker", "beat"):
        # As Docker does (start_period, retries): a process still booting may fail the first probes.
        deadline = time.monotonic() + 180
        while (result := stack.healthcheck(service)).returncode != 0 and time.monotonic() < deadline:
            time.sleep(3)
        assert result.returncode == 0, (service, result.stdout[-2000:], result.stderr[-2000:])
    import requests

    plain = requests.get(stack.url("/healthz"), allow_redirects=False, timeout=10)
    assert plain.status_code == 200, (plain.status_code, plain.headers.get("Location"))
    page = requests.get(stack.url("/accounts/login/"), allow_redirects=False, timeout=10)
    assert page.status_code == 301 and page.headers["Location"].startswith("https://")
