"""Prometheus metrics (docs/operations.md lists each with its alert), served at /metrics.

prometheus_client is used directly rather than django-prometheus: the request metrics come from the one
middleware that already times each request for the log line (django-prometheus adds two middlewares and
wraps every database and cache backend), and the gauges an operator asked for — queue depth, recompute lag,
webhook backlog — are application collectors read at scrape time, which django-prometheus has no place for.

Under gunicorn (several processes) set ``PROMETHEUS_MULTIPROC_DIR`` to an empty directory shared by the web
processes (and by Celery workers on the same machine): counters and histograms are then written to files
there and every scrape sums them (prometheus_client's multiprocess mode). Without it, each process reports
its own counts, which is right for runserver and the tests.

The scrape-time collectors read the database with three small queries and Redis with one LLEN per queue,
cached for ``METRICS_CACHE_SECONDS`` (15 s) per process, so scraping every few seconds costs nothing more.
They name the apps' tables through ``django.apps`` (core sits below the apps and imports none of them).
"""
from __future__ import annotations

import hmac
import ipaddress
import logging
import os
import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any

from celery import current_app
from django.apps import apps
from django.conf import settings
from django.db import DatabaseError
from django.db.models import Min, OuterRef, Subquery
from django.http import Http404, HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client import REGISTRY as DEFAULT_REGISTRY
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

logger = logging.getLogger(__name__)

# --- Counted where they happen (web processes and Celery workers) -------------------------------------------
REQUESTS = Counter("recall_http_requests", "HTTP requests answered, by view and status code.",
                   ["view", "method", "status"])
REQUEST_SECONDS = Histogram("recall_http_request_duration_seconds", "Time to answer a request, by view.",
                            ["view"], buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30))
JUDGMENTS = Counter("recall_judgments", "Crowd judgments stored (committed), by topic kind.", ["kind"])
TASKS = Counter("recall_celery_tasks", "Celery tasks finished, by task and outcome (success, failure, retry).",
                ["task", "outcome"])
TASK_SECONDS = Histogram("recall_celery_task_duration_seconds", "Run time of Celery tasks, by task.", ["task"],
                         buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800))


def judgments_stored(*, count: int, kind: str) -> None:
    """Count ``count`` judgments once their transaction has committed (the submit service calls this on commit)."""
    JUDGMENTS.labels(kind=kind).inc(count)


# --- Read at scrape time -------------------------------------------------------------------------------------
def _cache_seconds() -> float:
    return float(getattr(settings, "METRICS_CACHE_SECONDS", 15))


def celery_queue_names() -> list[str]:
    """The queues Celery sends to: the default one and any named by task routes."""
    app = current_app  # the project's app (config/celery.py) once Django has loaded; core imports no config
    names = {app.conf.task_default_queue or "celery"}
    routes = app.conf.task_routes or {}
    if isinstance(routes, dict):
        names.update(r["queue"] for r in routes.values() if isinstance(r, dict) and r.get("queue"))
    return sorted(names)


def celery_queue_lengths() -> dict[str, int] | None:
    """LLEN of each Celery queue in the Redis broker; None when the broker is not Redis or is unreachable."""
    url = settings.CELERY_BROKER_URL
    if not url.startswith(("redis://", "rediss://")):
        return None
    import redis  # noqa: PLC0415 — only when the broker is Redis

    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=1)
        pipe = client.pipeline(transaction=False)
        names = celery_queue_names()
        for name in names:
            pipe.llen(name)
        return dict(zip(names, (int(n) for n in pipe.execute())))
    except redis.RedisError:
        logger.warning("metrics: the broker's queue lengths could not be read", exc_info=True)
        return None


def recompute_lag_seconds() -> float:
    """How long the oldest judgment not yet in its topic's latest report has waited (0 when all are in).

    For each topic, the first judgment stored after the topic's newest EstimateSnapshot (or any judgment,
    when it has none); the lag is now minus the oldest of these. The recompute chain (estimation/services/
    recompute.py) and its sweep keep it to seconds; a growing value means reports have stopped following.
    """
    judgment = apps.get_model("annotation", "Judgment")
    snapshot = apps.get_model("estimation", "EstimateSnapshot")
    topic = apps.get_model("annotation", "Topic")
    latest = snapshot.objects.filter(topic=OuterRef("pk")).order_by("-version").values("created_at")[:1]
    first_new = (judgment.objects.filter(topic=OuterRef("pk")).order_by("created_at"))
    first_after = first_new.filter(created_at__gt=OuterRef("snapshot_at")).values("created_at")[:1]
    first_any = first_new.values("created_at")[:1]
    rows = topic.objects.annotate(snapshot_at=Subquery(latest)).annotate(
        waiting_since=Subquery(first_after)).annotate(never=Subquery(first_any))
    oldest = None
    for snapshot_at, waiting_since, never in rows.values_list("snapshot_at", "waiting_since", "never"):
        since = waiting_since if snapshot_at is not None else never
        if since is not None and (oldest is None or since < oldest):
            oldest = since
    return 0.0 if oldest is None else max(0.0, (timezone.now() - oldest).total_seconds())


def webhook_backlog() -> tuple[int, float]:
    """Pending webhook deliveries and the age in seconds of the oldest (0 when none)."""
    delivery = apps.get_model("webhooks", "WebhookDelivery")
    pending = delivery.objects.filter(status="pending")
    row = pending.aggregate(oldest=Min("created_at"))
    count = pending.count()
    oldest = row["oldest"]
    return count, (0.0 if oldest is None else max(0.0, (timezone.now() - oldest).total_seconds()))


class ApplicationCollector(Collector):
    """Gauges computed when Prometheus scrapes: queue depth, recompute lag, webhook backlog."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cached: tuple[float, list[GaugeMetricFamily]] | None = None

    def collect(self) -> Iterator[GaugeMetricFamily]:
        with self._lock:
            now = time.monotonic()
            if self._cached is None or now - self._cached[0] >= _cache_seconds():
                self._cached = (now, list(self._gather()))
            families = self._cached[1]
        yield from families

    def _gather(self) -> Iterable[GaugeMetricFamily]:
        depth = GaugeMetricFamily("recall_celery_queue_depth", "Messages waiting in each Celery queue (Redis LLEN).",
                                  labels=["queue"])
        lengths = celery_queue_lengths()
        for name, length in (lengths or {}).items():
            depth.add_metric([name], length)
        yield depth
        up = GaugeMetricFamily("recall_metrics_database_up", "1 when the scrape-time database reads succeeded.")
        try:
            lag = recompute_lag_seconds()
            backlog, backlog_age = webhook_backlog()
        except DatabaseError:
            logger.warning("metrics: the database could not be read", exc_info=True)
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        yield GaugeMetricFamily("recall_recompute_lag_seconds",
                                "Age of the oldest judgment not yet in its topic's latest report.", value=lag)
        yield GaugeMetricFamily("recall_webhook_deliveries_pending", "Webhook deliveries waiting to be sent.",
                                value=backlog)
        yield GaugeMetricFamily("recall_webhook_oldest_pending_seconds",
                                "Age of the oldest pending webhook delivery.", value=backlog_age)


_application = ApplicationCollector()


def metrics_exposition() -> bytes:
    """The text exposition: the counted metrics (summed over processes in multiprocess mode) and the gauges."""
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    app_registry = CollectorRegistry(auto_describe=False)
    app_registry.register(_application)
    if directory:
        counted = CollectorRegistry()
        MultiProcessCollector(counted, path=directory)
        return generate_latest(counted) + generate_latest(app_registry)
    return generate_latest(DEFAULT_REGISTRY) + generate_latest(app_registry)


# --- Who may read ---------------------------------------------------------------------------------------------
def _networks() -> list[Any]:
    return [ipaddress.ip_network(cidr.strip(), strict=False)
            for cidr in getattr(settings, "METRICS_ALLOWED_NETWORKS", []) if cidr.strip()]


def metrics_access(request: HttpRequest) -> int:
    """200 when the request may read the metrics, 403 when it may not, 404 when /metrics is switched off.

    Allowed: a bearer token equal to METRICS_TOKEN, or a client address inside METRICS_ALLOWED_NETWORKS
    (REMOTE_ADDR: behind a proxy that is the proxy's address, so scrape the web service directly).
    With neither setting, the endpoint does not exist.
    """
    token = getattr(settings, "METRICS_TOKEN", "")
    networks = _networks()
    if not token and not networks:
        return 404
    if token:
        given = request.headers.get("Authorization", "")
        if given.startswith("Bearer ") and hmac.compare_digest(given[7:].strip().encode(), token.encode()):
            return 200
    if networks:
        try:
            address = ipaddress.ip_address(request.META.get("REMOTE_ADDR", ""))
        except ValueError:
            return 403
        if any(address in network for network in networks):
            return 200
    return 403


@csrf_exempt
@require_GET
def metrics_view(request: HttpRequest) -> HttpResponse:
    status = metrics_access(request)
    if status == 404:
        raise Http404("metrics are not enabled")
    if status == 403:
        response = HttpResponse("Forbidden: a bearer token or an allowed network is required.\n", status=403,
                                content_type="text/plain")
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    return HttpResponse(metrics_exposition(), content_type=CONTENT_TYPE_LATEST)
