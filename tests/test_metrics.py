"""/metrics (core/observability/metrics.py, docs/operations.md): who may read it, and what it says."""
from __future__ import annotations

import pytest
from django.test import Client
from prometheus_client import REGISTRY
from prometheus_client.parser import text_string_to_metric_families

from annotation.models import Judgment
from annotation.services.crowd.assignments import assignment_claim_for_hit, assignment_submit
from annotation.services.sampling.draws import samples_launch
from core.errors import ApplicationError
from tests.factories import make_pair_world, make_worker

pytestmark = pytest.mark.django_db

TOKEN = "metrics-token-for-tests-0123456789"


@pytest.fixture
def metrics_on(settings):
    settings.METRICS_TOKEN = TOKEN
    settings.METRICS_ALLOWED_NETWORKS = []
    settings.METRICS_CACHE_SECONDS = 0
    return settings


def _scrape(**headers) -> dict:
    response = Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}", **headers)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    return {family.name: family for family in text_string_to_metric_families(response.content.decode())}


def test_metrics_do_not_exist_without_a_token_or_network(settings):
    settings.METRICS_TOKEN = ""
    settings.METRICS_ALLOWED_NETWORKS = []
    assert Client().get("/metrics").status_code == 404


def test_metrics_refuse_a_missing_or_wrong_token(metrics_on):
    assert Client().get("/metrics").status_code == 403
    assert Client().get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 403
    assert Client().get("/metrics", HTTP_AUTHORIZATION=TOKEN).status_code == 403  # not a bearer header
    assert Client().post("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").status_code == 405


def test_an_allowed_network_reads_without_a_token(settings):
    settings.METRICS_TOKEN = ""
    settings.METRICS_ALLOWED_NETWORKS = ["10.0.0.0/8"]
    assert Client(REMOTE_ADDR="10.1.2.3").get("/metrics").status_code == 200
    assert Client(REMOTE_ADDR="192.168.1.5").get("/metrics").status_code == 403


def test_metrics_serve_every_family_with_the_token(metrics_on):
    Client().get("/healthz")
    families = _scrape()
    for name in ("recall_http_requests", "recall_http_request_duration_seconds", "recall_judgments",
                 "recall_celery_tasks", "recall_celery_task_duration_seconds", "recall_celery_queue_depth",
                 "recall_recompute_lag_seconds", "recall_webhook_deliveries_pending",
                 "recall_webhook_oldest_pending_seconds", "recall_metrics_database_up"):
        assert name in families, name
    requests = {(s.labels["view"], s.labels["status"]) for s in families["recall_http_requests"].samples
                if s.name.endswith("_total")}
    assert ("healthz", "200") in requests
    assert families["recall_metrics_database_up"].samples[0].value == 1


def test_a_judgment_increments_the_judgment_counter_and_the_recompute_lag_sees_it(
        metrics_on, django_capture_on_commit_callbacks):
    world = make_pair_world(n=200, prevalence=0.2, seed=3)
    hit = samples_launch(topic=world.topic, per_region=5, seed=4).hits[0]
    docs = list(hit.items.values_list("document_id", flat=True))
    before = REGISTRY.get_sample_value("recall_judgments_total", {"kind": "binary"}) or 0.0
    worker = make_worker()
    with django_capture_on_commit_callbacks(execute=True):
        assignment = assignment_claim_for_hit(worker=worker, hit=hit)
        assignment_submit(assignment_id=assignment.pk, worker=worker, answers=dict.fromkeys(docs, True))
    assert Judgment.objects.filter(assignment=assignment).count() == len(docs)
    assert REGISTRY.get_sample_value("recall_judgments_total", {"kind": "binary"}) == before + len(docs)
    # No snapshot was made (nothing completed a label): the judgments wait, so the lag is their age.
    from core.observability.metrics import recompute_lag_seconds

    assert recompute_lag_seconds() >= 0.0
    Judgment.objects.filter(assignment=assignment).update(created_at=Judgment.objects.get(
        assignment=assignment, document_id=docs[0]).created_at.replace(year=2020))
    assert recompute_lag_seconds() > 86400


def test_a_refused_submit_counts_nothing(metrics_on, django_capture_on_commit_callbacks):
    world = make_pair_world(n=200, prevalence=0.2, seed=5)
    hit = samples_launch(topic=world.topic, per_region=5, seed=6).hits[0]
    docs = list(hit.items.values_list("document_id", flat=True))
    worker = make_worker()
    assignment = assignment_claim_for_hit(worker=worker, hit=hit)
    before = REGISTRY.get_sample_value("recall_judgments_total", {"kind": "binary"}) or 0.0
    with django_capture_on_commit_callbacks(execute=True), pytest.raises(ApplicationError):
        assignment_submit(assignment_id=assignment.pk, worker=worker, answers={docs[0]: True})  # missing answers
    assert (REGISTRY.get_sample_value("recall_judgments_total", {"kind": "binary"}) or 0.0) == before


def test_webhook_backlog_counts_pending_deliveries(metrics_on):
    from django.utils import timezone

    from webhooks.models import WebhookDelivery, WebhookEndpoint

    endpoint = WebhookEndpoint.objects.create(url="https://hooks.example.org/x", secret="s" * 32, events=["sample.completed"])
    WebhookDelivery.objects.create(endpoint=endpoint, event="sample.completed", payload={},
                                   status="pending", next_attempt_at=timezone.now())
    families = _scrape()
    assert families["recall_webhook_deliveries_pending"].samples[0].value == 1


def test_queue_depth_reads_the_redis_lists(settings, metrics_on):
    import redis

    url = "redis://127.0.0.1:6379/13"
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=1)
        client.ping()
    except redis.RedisError:
        pytest.skip("no local Redis")
    client.delete("celery")
    client.rpush("celery", "a", "b", "c")
    settings.CELERY_BROKER_URL = url
    try:
        from core.observability.metrics import celery_queue_lengths

        assert celery_queue_lengths() == {"celery": 3}
    finally:
        client.delete("celery")
