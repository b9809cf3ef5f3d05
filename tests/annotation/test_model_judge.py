"""The model judge end to end against a local fake endpoint (a real HTTP server thread; nothing leaves the machine).

The fake answers deterministically at a chosen accuracy from the document's title ("Title <i>": the planted truth
of make_pair_world), and can be slow, answer 429 with Retry-After, 500, or malformed JSON, per document."""
from __future__ import annotations

import hashlib
import json
import socket
import threading
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from annotation.models import Judgment, Label, ModelJudgeRun, ModelJudgment, SampledDocument
from annotation.services.crowd.judge_endpoint import (
    EndpointConfig,
    JudgeFailure,
    judge_answer_parse,
    judge_ask,
    judge_messages,
)
from annotation.services.crowd.model_judge import (
    JudgeCostChanged,
    JudgeNotConfigured,
    model_judge_launch,
    model_judge_quote,
    model_judge_retry,
    model_judge_run_execute,
)
from annotation.services.sampling.draws import samples_draw
from estimation.services.report_judge import topic_judge_report
from tests.factories import judge, make_pair_world

pytestmark = pytest.mark.django_db


class FakeJudge:
    """A chat-completions server thread.  ``accuracy``: share of documents answered right (by a hash of the
    title, so the same document always gets the same answer); ``behaviour(title, count)`` may return
    "429", "500", "malformed", "slow" or None (count: how many times this title was asked)."""

    def __init__(self, *, relevant_titles: set[str], accuracy: float = 1.0, behaviour=None, latency: float = 0.0):
        self.relevant_titles = relevant_titles
        self.accuracy = accuracy
        self.behaviour = behaviour or (lambda title, count: None)
        self.latency = latency
        self.asked: dict[str, int] = {}
        self.prompt_tokens_sent = 0
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                user = body["messages"][1]["content"]
                title = user.split("Document title: ", 1)[1].split("\n", 1)[0]
                with fake.lock:
                    fake.asked[title] = count = fake.asked.get(title, 0) + 1
                what = fake.behaviour(title, count)
                if what == "429":
                    self.send_response(429)
                    self.send_header("Retry-After", "0")
                    self.end_headers()
                    return
                if what == "500":
                    self.send_response(500)
                    self.end_headers()
                    return
                if what == "slow" or fake.latency:
                    threading.Event().wait(fake.latency or 1.0)
                truth = title in fake.relevant_titles
                right = int(hashlib.sha256(title.encode()).hexdigest(), 16) % 10_000 < fake.accuracy * 10_000
                says = truth if right else not truth
                content = "not json at all" if what == "malformed" else json.dumps(
                    {"relevant": says, "probability": 0.9 if says else 0.1})
                reply = {"choices": [{"message": {"role": "assistant", "content": content}}],
                         "usage": {"prompt_tokens": 100, "completion_tokens": 10}}
                data = json.dumps(reply).encode()
                with fake.lock:
                    fake.prompt_tokens_sent += 100
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def _config(url, **kw):
    return EndpointConfig(base_url=url, model="fake", timeout=kw.pop("timeout", 5.0), attempts=kw.pop("attempts", 3),
                          backoff=0.001, max_wait=0.01, **kw)


def _messages(title):
    return judge_messages(topic_name="wheat", instructions="Is it about wheat?", title=title, text="x", max_chars=100)


def _closed_port_url():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


# ------------------------------------------------------------------------------------------- the HTTP client


def test_each_endpoint_failure_has_its_outcome():
    behaviour = {"Title 1": "429", "Title 2": "500", "Title 3": "malformed", "Title 4": "slow"}

    def act(title, count):
        if title == "Title 5":  # 429 once, then an answer
            return "429" if count == 1 else None
        return behaviour.get(title)

    with FakeJudge(relevant_titles={"Title 0", "Title 5"}, behaviour=act) as fake:
        ok = judge_ask(config=_config(fake.url), messages=_messages("Title 0"))
        assert (ok.relevant, ok.probability, ok.attempts, ok.prompt_tokens) == (True, 0.9, 1, 100)
        retried = judge_ask(config=_config(fake.url), messages=_messages("Title 5"))
        assert retried.relevant and retried.attempts == 2
        for title, reason in [("Title 1", "rate-limited"), ("Title 2", "server-error"), ("Title 3", "malformed")]:
            with pytest.raises(JudgeFailure) as failure:
                judge_ask(config=_config(fake.url), messages=_messages(title))
            assert failure.value.reason == reason and failure.value.attempts == 3
            assert fake.asked[title] == 3
        # A malformed answer was still paid for: its tokens are counted.
        with pytest.raises(JudgeFailure) as failure:
            judge_ask(config=_config(fake.url, attempts=1), messages=_messages("Title 3"))
        assert failure.value.prompt_tokens == 100
        with pytest.raises(JudgeFailure) as failure:
            judge_ask(config=_config(fake.url, timeout=0.2, attempts=2), messages=_messages("Title 4"))
        assert failure.value.reason == "timeout"
    with pytest.raises(JudgeFailure) as failure:
        judge_ask(config=_config(_closed_port_url()), messages=_messages("Title 0"))
    assert failure.value.reason == "unreachable"


def test_a_client_error_is_not_retried():
    class Unauthorised(BaseHTTPRequestHandler):
        calls = 0

        def log_message(self, *args):
            pass

        def do_POST(self):
            Unauthorised.calls += 1
            self.send_response(401)
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Unauthorised)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with pytest.raises(JudgeFailure) as failure:
            judge_ask(config=_config(f"http://127.0.0.1:{server.server_address[1]}"), messages=_messages("Title 0"))
        assert failure.value.reason == "client-error" and Unauthorised.calls == 1
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("content, expected", [
    ('{"relevant": true, "probability": 0.8}', (True, 0.8)),
    ('Sure! ```json\n{"relevant": false}\n```', (False, 0.0)),
    ('{"class": "Relevant", "probability": 1}', (True, 1.0)),
])
def test_answers_parse(content, expected):
    assert judge_answer_parse(content) == expected


@pytest.mark.parametrize("content", ['{"relevant": "yes"}', '{"relevant": true, "probability": 1.5}', "[1]", None,
                                     '{"relevant": true, "probability": true}'])
def test_answers_that_are_not_what_was_asked_are_refused(content):
    with pytest.raises(ValueError):
        judge_answer_parse(content)


# ------------------------------------------------------------------------------------------- the run


@pytest.fixture
def world(settings):
    settings.MODEL_JUDGE_MODEL = "fake-judge"
    settings.MODEL_JUDGE_API_KEY = ""
    settings.MODEL_JUDGE_ATTEMPTS = 3
    settings.MODEL_JUDGE_BACKOFF = 0.001
    settings.MODEL_JUDGE_MAX_WAIT = 0.01
    settings.MODEL_JUDGE_TIMEOUT = 5.0
    settings.MODEL_JUDGE_CONCURRENCY = 4
    settings.MODEL_JUDGE_PRICE_PER_1K_TOKENS = Decimal("0.50")
    w = make_pair_world(n=3000, prevalence=0.1, recall1=0.7, recall2=0.6, noise=0.02, seed=11)
    draws = samples_draw(topic=w.topic, per_region=60, complement=300, seed=3)
    judge(w, set(SampledDocument.objects.filter(draw__in=draws).values_list("document_id", flat=True)))
    return w


def _titles(w):
    from annotation.models import Document

    return set(Document.objects.filter(pk__in=w.relevant).values_list("title", flat=True))


PLAN = {"A12": 150, "B1": 150, "B2": 150, "N": 900}


def test_launch_needs_a_configured_endpoint(world, settings):
    settings.MODEL_JUDGE_BASE_URL = ""
    with pytest.raises(JudgeNotConfigured):
        model_judge_quote(topic=world.topic, plan=PLAN)


def test_a_run_end_to_end_through_launch_and_report(world, settings):
    labels_before = list(Label.objects.filter(topic=world.topic).order_by("pk").values_list("pk", "votes_total",
                                                                                          "votes_relevant"))
    judgments_before = Judgment.objects.count()

    def flaky(title, count):
        number = int(title.split()[1])
        if number % 17 == 0 and count == 1:
            return "429"
        if number % 29 == 0:
            return "500"
        if number % 31 == 0:
            return "malformed"
        return None

    with FakeJudge(relevant_titles=_titles(world), accuracy=0.92, behaviour=flaky) as fake:
        settings.MODEL_JUDGE_BASE_URL = fake.url
        quote = model_judge_quote(topic=world.topic, plan=PLAN)
        assert quote.cost > 0 and quote.tokens > 0
        # The human sample is read first: every sampled document of the region is in the judge's documents.
        human_a12 = set(SampledDocument.objects.filter(topic=world.topic, region="A12").values_list("document_id",
                                                                                                   flat=True))
        assert human_a12 <= set(quote.documents["A12"])
        with pytest.raises(JudgeCostChanged):
            model_judge_launch(topic_id=world.topic.pk, plan=PLAN, confirm_cost=quote.cost + Decimal("0.01"))
        assert not ModelJudgeRun.objects.exists()
        run = model_judge_launch(topic_id=world.topic.pk, plan=PLAN, confirm_cost=quote.cost)
        run.refresh_from_db()
    assert run.status == "done", run.error
    assert run.total == quote.total == ModelJudgment.objects.filter(run=run).count()
    failed = ModelJudgment.objects.filter(run=run, status="failed")
    assert set(failed.values_list("reason", flat=True)) <= {"server-error", "malformed"}
    assert failed.count() > 0
    assert not ModelJudgment.objects.filter(run=run, status="pending").exists()
    # Rate-limited documents were retried and answered.
    retried = ModelJudgment.objects.filter(run=run, status="ok", attempts=2)
    assert retried.exists()
    # Tokens and money counted from the replies that arrived (a malformed reply is paid for too).
    assert run.prompt_tokens == fake.prompt_tokens_sent
    assert run.completion_tokens == fake.prompt_tokens_sent // 10
    assert run.cost_spent == (Decimal("0.50") * (run.prompt_tokens + run.completion_tokens) / 1000).quantize(
        Decimal("0.0001"))
    # Never a human judgment, never a vote.
    assert Judgment.objects.count() == judgments_before
    assert list(Label.objects.filter(topic=world.topic).order_by("pk").values_list(
        "pk", "votes_total", "votes_relevant")) == labels_before
    # A second delivery of the task does nothing.
    assert model_judge_run_execute(run_id=run.pk) is False

    block = topic_judge_report(topic=world.topic)
    assert block is not None and block["available"], block
    by_region = {c["region"]: c for c in block["concordance"]}
    assert set(by_region) == {"A12", "B1", "B2", "N"}
    overall = sum(c["both_relevant"] + c["neither"] for c in by_region.values()) / sum(
        c["total"] for c in by_region.values())
    assert 0.85 <= overall <= 0.99
    truth = world.true_recall(1)
    assert block["r1_human"]["low"] <= truth <= block["r1_human"]["high"]
    assert block["r1"]["low"] <= truth <= block["r1"]["high"]
    assert block["judge_documents"] == run.total
    assert "nothing about the judge" in block["assumptions"]


def test_a_dead_endpoint_stops_the_run_and_a_retry_finishes_it(world, settings):
    settings.MODEL_JUDGE_BASE_URL = _closed_port_url()
    quote = model_judge_quote(topic=world.topic, plan={"A12": 20, "B1": 20, "B2": 20, "N": 20})
    run = model_judge_launch(topic_id=world.topic.pk, plan={"A12": 20, "B1": 20, "B2": 20, "N": 20},
                             confirm_cost=quote.cost)
    run.refresh_from_db()
    assert run.status == "failed" and "could not be reached" in run.error
    assert ModelJudgment.objects.filter(run=run, status="pending").exists()
    assert run.cost_spent == 0
    with FakeJudge(relevant_titles=_titles(world)) as fake:
        settings.MODEL_JUDGE_BASE_URL = fake.url
        run.base_url = fake.url
        assert model_judge_retry(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == "done"
    assert ModelJudgment.objects.filter(run=run, status="ok").count() == run.total == 80


def test_a_scores_classifier_as_judge(world):
    from annotation.models import Classifier, ClassifierScore

    c1 = world.topic.pair.c1
    c1.kind = Classifier.Kind.SCORES
    c1.save(update_fields=["kind"])
    ClassifierScore.objects.bulk_create([ClassifierScore(classifier=c1, document_id=d, score=0.9 if d in world.a1
                                                         else 0.2) for d in world.doc_ids])
    plan = {"A12": 100, "B1": 100, "B2": 100, "N": 400}
    quote = model_judge_quote(topic=world.topic, plan=plan, kind="classifier", classifier_id=c1.pk)
    assert quote.cost == 0
    run = model_judge_launch(topic_id=world.topic.pk, plan=plan, kind="classifier", classifier_id=c1.pk,
                             confirm_cost=Decimal("0"))
    run.refresh_from_db()
    assert run.status == "done" and ModelJudgment.objects.filter(run=run, status="ok").count() == run.total
    block = topic_judge_report(topic=world.topic)
    assert block["available"]


def test_a_finished_run_schedules_the_report_recompute(world, django_capture_on_commit_callbacks):
    """The report's judge block reads the latest finished run: finishing one makes the report stale, so estimation
    schedules a recompute through the ModelJudgeFinished event (after commit), as labels do."""
    from unittest import mock

    from annotation.models import Classifier, ClassifierScore

    c1 = world.topic.pair.c1
    c1.kind = Classifier.Kind.SCORES
    c1.save(update_fields=["kind"])
    ClassifierScore.objects.bulk_create([ClassifierScore(classifier=c1, document_id=d, score=0.9 if d in world.a1
                                                         else 0.2) for d in world.doc_ids])
    plan = {"A12": 20, "B1": 20, "B2": 20, "N": 40}
    with mock.patch("estimation.receivers.topic_recompute_schedule") as schedule, \
            django_capture_on_commit_callbacks(execute=True):
        run = model_judge_launch(topic_id=world.topic.pk, plan=plan, kind="classifier", classifier_id=c1.pk,
                                 confirm_cost=Decimal("0"))
    run.refresh_from_db()
    assert run.status == "done"
    schedule.assert_any_call(topic_id=world.topic.pk)


def test_a_run_whose_worker_was_lost_is_failed_by_the_sweep_and_retry_finishes_it(world, settings):
    """Issue 28: a run whose worker died mid-run stayed 'running' for ever (no sweep). Now the beat's sweep fails it
    after MODEL_JUDGE_STUCK_SECONDS without a stored batch, with a message; retry asks for what is still pending."""
    from datetime import timedelta

    from annotation.services.crowd.model_judge import STUCK, model_judge_runs_stuck_fail
    from annotation.tasks_judge import model_judge_runs_stuck_task
    from core.jobs import job_begin

    settings.MODEL_JUDGE_STUCK_SECONDS = 600
    plan = {"A12": 10, "B1": 10, "B2": 10, "N": 10}
    with FakeJudge(relevant_titles=_titles(world)) as fake:
        settings.MODEL_JUDGE_BASE_URL = fake.url
        quote = model_judge_quote(topic=world.topic, plan=plan)
        run = model_judge_launch(topic_id=world.topic.pk, plan=plan, confirm_cost=quote.cost,
                                 enqueue=lambda run_id: None)  # the task never ran: its worker was lost
        assert job_begin(model=ModelJudgeRun, job_id=run.pk)  # … after it had started
        started = ModelJudgeRun.objects.get(pk=run.pk).started_at
        assert model_judge_runs_stuck_fail(now=started + timedelta(seconds=599)) == 0
        assert ModelJudgeRun.objects.get(pk=run.pk).status == "running"
        assert model_judge_runs_stuck_fail(now=started + timedelta(seconds=601)) == 1
        run.refresh_from_db()
        assert run.status == "failed" and run.error == STUCK
        assert model_judge_runs_stuck_task() == 0  # nothing else stuck; the task is the service
        run.base_url = fake.url
        assert model_judge_retry(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == "done" and ModelJudgment.objects.filter(run=run, status="ok").count() == run.total == 40
    assert "fail-stuck-judge-runs" in settings.CELERY_BEAT_SCHEDULE
