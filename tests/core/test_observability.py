"""Logs with request and task ids, task metrics, traces and Sentry (core/observability, docs/operations.md).

Nothing here reaches a network: spans go to an in-memory exporter, Sentry to a fake transport, and the one
real-worker test uses the local Redis (skipped without REDIS_URL, like tests/test_celery_worker.py).
"""
from __future__ import annotations

import io
import json
import logging
import uuid

import pytest
import structlog
from django.http import HttpRequest, JsonResponse
from django.test import Client
from django.urls import path
from prometheus_client import REGISTRY

from config.celery import app as celery_app
from core.observability.logs import logging_config

logged_in_task: list[dict] = []


@celery_app.task(name="tests.observability.log_task")
def log_task(marker: str) -> str:
    logging.getLogger("tests.observability").info("inside the task %s", marker)
    logged_in_task.append(dict(structlog.contextvars.get_contextvars()))
    return marker


@celery_app.task(name="tests.observability.failing_task")
def failing_task() -> None:
    raise RuntimeError("this task fails on purpose")


def enqueue_view(request: HttpRequest) -> JsonResponse:
    marker = request.GET.get("marker", "m")
    log_task.delay(marker)
    return JsonResponse({"marker": marker})


urlpatterns = [path("enqueue", enqueue_view, name="enqueue")]


@pytest.fixture
def json_lines():
    """The root logger also writes JSON lines (the production format) into a buffer; returns a reader."""
    config = logging_config(fmt="json", level="INFO")
    formatter_spec = dict(config["formatters"]["structured"])
    factory = formatter_spec.pop("()")
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(factory(**formatter_spec))
    root = logging.getLogger()
    root.addHandler(handler)
    old_level = root.level
    root.setLevel(logging.INFO)

    def read() -> list[dict]:
        handler.flush()
        return [json.loads(line) for line in buffer.getvalue().splitlines() if line.strip()]

    yield read
    root.removeHandler(handler)
    root.setLevel(old_level)


@pytest.mark.django_db
@pytest.mark.urls("tests.core.test_observability")
def test_request_log_line_is_json_with_the_id_of_the_response_header(json_lines):
    response = Client().get("/enqueue?marker=a")
    request_id = response["X-Request-ID"]
    assert len(request_id) == 32
    lines = json_lines()
    request_line = next(line for line in lines if line["event"] == "request")
    assert request_line["request_id"] == request_id
    assert (request_line["view"], request_line["status"], request_line["method"]) == ("enqueue", 200, "GET")
    assert {"timestamp", "level", "logger", "duration_ms"} <= request_line.keys()


@pytest.mark.django_db
@pytest.mark.urls("tests.core.test_observability")
def test_an_incoming_request_id_is_honoured_and_a_hostile_one_replaced(json_lines):
    assert Client().get("/enqueue", HTTP_X_REQUEST_ID="lb-7f3a.99")["X-Request-ID"] == "lb-7f3a.99"
    replaced = Client().get("/enqueue", HTTP_X_REQUEST_ID='x"\n{"admin":true}')["X-Request-ID"]
    assert len(replaced) == 32 and replaced.isalnum()
    assert all("admin" not in str(line.get("request_id")) for line in json_lines())


@pytest.mark.django_db
@pytest.mark.urls("tests.core.test_observability")
def test_an_eager_task_logs_its_task_id_and_the_enqueuing_request_id(json_lines):
    logged_in_task.clear()
    response = Client().get("/enqueue?marker=eager", HTTP_X_REQUEST_ID="req-eager-1")
    assert response.status_code == 200
    task_line = next(line for line in json_lines() if line["event"] == "inside the task eager")
    assert task_line["request_id"] == "req-eager-1"
    assert task_line["task_name"] == "tests.observability.log_task"
    uuid.UUID(task_line["task_id"])
    # After the task, the request's own lines carry the request id and no task id.
    request_line = next(line for line in json_lines() if line["event"] == "request")
    assert request_line["request_id"] == "req-eager-1" and "task_id" not in request_line


def _count(name: str, labels: dict[str, str]) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_a_failing_task_increments_the_failure_counter_and_a_passing_one_the_success_counter(monkeypatch):
    # As in a worker: the failure is recorded, not raised into the caller (an eager task that propagates its
    # exception to the caller never reaches Celery's failure handling, so it is not counted).
    monkeypatch.setitem(celery_app.conf, "CELERY_TASK_EAGER_PROPAGATES", False)
    labels = {"task": "tests.observability.failing_task", "outcome": "failure"}
    before = _count("recall_celery_tasks_total", labels)
    assert failing_task.delay().failed()
    assert _count("recall_celery_tasks_total", labels) == before + 1
    assert _count("recall_celery_task_duration_seconds_count", {"task": "tests.observability.failing_task"}) >= 1

    ok = {"task": "tests.observability.log_task", "outcome": "success"}
    before_ok = _count("recall_celery_tasks_total", ok)
    log_task.delay("counted")
    assert _count("recall_celery_tasks_total", ok) == before_ok + 1
    assert structlog.contextvars.get_contextvars() == {}


def test_publishing_puts_the_request_id_in_the_task_headers():
    from core.observability.celery_signals import _publish

    structlog.contextvars.bind_contextvars(request_id="req-publish")
    try:
        headers: dict = {}
        _publish(headers=headers)
        assert headers == {"request_id": "req-publish"}
    finally:
        structlog.contextvars.clear_contextvars()


# --- a real worker: the id travels in the message, not through the thread's context -------------------------
@pytest.fixture
def worker(monkeypatch):
    """A worker thread in this process taking tasks from Redis (as tests/test_celery_worker.py does)."""
    import os

    import redis
    from celery._state import _set_task_join_will_block, task_join_will_block
    from celery.contrib.testing.worker import start_worker

    url = os.environ.get("REDIS_URL", "")
    required = os.environ.get("REQUIRE_POSTGRES") == "1"
    try:
        if not url:
            raise redis.RedisError("REDIS_URL is not set")
        redis.Redis.from_url(url, socket_connect_timeout=2).ping()
    except redis.RedisError as exc:
        if required:
            pytest.fail(f"REQUIRE_POSTGRES=1 but no Redis for a real worker: {exc}")
        pytest.skip(f"no Redis for a real worker: {exc}")
    monkeypatch.setitem(celery_app.conf, "CELERY_TASK_ALWAYS_EAGER", False)
    monkeypatch.setitem(celery_app.conf, "CELERY_BROKER_URL", url)
    joins_blocked = task_join_will_block()
    try:
        with start_worker(celery_app, pool="solo", concurrency=1, perform_ping_check=False, shutdown_timeout=20,
                          loglevel="WARNING"):
            yield
    finally:
        _set_task_join_will_block(joins_blocked)


@pytest.mark.django_db(transaction=True)
@pytest.mark.urls("tests.core.test_observability")
@pytest.mark.usefixtures("worker")
def test_a_real_worker_logs_the_task_id_and_the_enqueuing_request_id(json_lines):
    import time

    logged_in_task.clear()
    response = Client().get("/enqueue?marker=worker", HTTP_X_REQUEST_ID="req-worker-1")
    assert response.status_code == 200
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not any(line["event"] == "inside the task worker" for line in json_lines()):
        time.sleep(0.1)
    task_line = next(line for line in json_lines() if line["event"] == "inside the task worker")
    assert task_line["request_id"] == "req-worker-1"
    uuid.UUID(task_line["task_id"])
    assert logged_in_task[-1]["request_id"] == "req-worker-1"


# --- traces ------------------------------------------------------------------------------------------------
@pytest.fixture
def spans(settings):
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from core.observability.tracing import tracing_setup, tracing_teardown

    exporter = InMemorySpanExporter()
    tracing_setup(service_name="recall-test", exporter=exporter, batch=False)
    yield exporter
    tracing_teardown()


@pytest.mark.django_db
@pytest.mark.urls("tests.core.test_observability")
def test_with_tracing_on_the_task_span_is_a_child_of_the_request_span(spans):
    response = Client().get("/enqueue?marker=traced")
    assert response.status_code == 200
    finished = spans.get_finished_spans()
    request_span = next(s for s in finished if s.kind.name == "SERVER")
    task_spans = [s for s in finished if s.name.startswith("run/tests.observability.log_task")]
    assert task_spans, [s.name for s in finished]
    assert task_spans[0].parent is not None
    assert task_spans[0].context.trace_id == request_span.context.trace_id
    ancestors = {s.context.span_id: s.parent.span_id if s.parent else None for s in finished}
    node = task_spans[0].context.span_id
    while node is not None and node != request_span.context.span_id:
        node = ancestors.get(node)
    assert node == request_span.context.span_id


def test_without_an_endpoint_nothing_is_instrumented():
    from django.conf import settings
    from opentelemetry.instrumentation.django import DjangoInstrumentor

    assert not settings.OTEL_EXPORTER_OTLP_ENDPOINT
    assert not DjangoInstrumentor().is_instrumented_by_opentelemetry
    assert not any("opentelemetry" in m for m in settings.MIDDLEWARE)


# --- Sentry ------------------------------------------------------------------------------------------------
def test_sentry_initialises_with_django_and_celery_and_sends_nothing_over_the_network(monkeypatch):
    import socket

    import sentry_sdk
    from sentry_sdk.transport import Transport

    from core.observability.tracing import sentry_setup

    def no_network(*args, **kwargs):
        raise AssertionError("Sentry tried to reach the network")

    monkeypatch.setattr(socket, "create_connection", no_network)
    sent: list = []

    class FakeTransport(Transport):
        def capture_envelope(self, envelope):
            sent.append(envelope)

    try:
        sentry_setup(dsn="http://public@127.0.0.1:9/1", environment="test", traces_sample_rate=0.0,
                     transport=FakeTransport)
        client = sentry_sdk.get_client()
        assert client.is_active()
        names = set(client.integrations)
        assert {"django", "celery"} <= names
        sentry_sdk.capture_message("observability test")
        client.flush(timeout=2)
        assert sent, "the event went to the fake transport"
    finally:
        sentry_sdk.get_client().close()
        sentry_sdk.init()
