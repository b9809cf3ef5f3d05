"""Settings of one concern (observability), applied at the end of base.py so one owner edits one file.

`apply(s)` reads and extends the settings already defined (`s` is base.py's globals()): append to
`s["MIDDLEWARE"]` or `s["INSTALLED_APPS"]`, add keys; every value comes from the environment.
docs/operations.md explains each log field and metric; core/observability/ holds the code.

| variable | default | meaning |
| --- | --- | --- |
| LOG_FORMAT | console | `json`: one JSON object per line (production); `console`: readable lines |
| METRICS_TOKEN | (none) | bearer token that may read /metrics |
| METRICS_ALLOWED_NETWORKS | (none) | comma-separated CIDRs that may read /metrics without a token |
| METRICS_CACHE_SECONDS | 15 | how long a process reuses the scrape-time database and Redis reads |
| PROMETHEUS_MULTIPROC_DIR | (none) | shared empty directory: counters summed over gunicorn's processes |
| OTEL_EXPORTER_OTLP_ENDPOINT | (none) | OTLP/HTTP collector: traces on; unset: off |
| OTEL_SERVICE_NAME | recall | service name on the spans |
| SENTRY_DSN | (none) | Sentry project: errors reported; unset: off |
| SENTRY_ENVIRONMENT | (none) | Sentry environment name |
| SENTRY_TRACES_SAMPLE_RATE | 0 | share of requests Sentry also traces |
"""
from __future__ import annotations

import os
from typing import Any

from core.observability.logs import logging_config

MIDDLEWARE_PATH = "core.observability.middleware.RequestObservabilityMiddleware"


def apply(s: dict[str, Any]) -> None:
    """Logs, metrics, traces: the app, its outermost middleware, the LOGGING dict and the switches."""
    s["INSTALLED_APPS"] = [*s["INSTALLED_APPS"], "core.observability.apps.ObservabilityConfig"]
    # Right after SecurityMiddleware and WhiteNoise (which answer redirects and static files without logging):
    # the request id is bound before any other middleware can log, and the timing covers them all.
    middleware = list(s["MIDDLEWARE"])
    first = [m for m in ("django.middleware.security.SecurityMiddleware", "whitenoise.middleware.WhiteNoiseMiddleware")
             if m in middleware]
    position = max((middleware.index(m) + 1 for m in first), default=0)
    s["MIDDLEWARE"] = [*middleware[:position], MIDDLEWARE_PATH, *middleware[position:]]

    s["LOG_FORMAT"] = os.environ.get("LOG_FORMAT", "console").strip().lower() or "console"
    s["LOGGING"] = logging_config(fmt=s["LOG_FORMAT"], level=os.environ.get("LOG_LEVEL", "INFO"))
    # Celery keeps Django's logging (and so the JSON format and the ids) instead of installing its own handlers.
    s["CELERY_WORKER_HIJACK_ROOT_LOGGER"] = False

    s["METRICS_TOKEN"] = os.environ.get("METRICS_TOKEN", "").strip()
    s["METRICS_ALLOWED_NETWORKS"] = [c.strip() for c in os.environ.get("METRICS_ALLOWED_NETWORKS", "").split(",")
                                     if c.strip()]
    s["METRICS_CACHE_SECONDS"] = float(os.environ.get("METRICS_CACHE_SECONDS", "15"))
    # Read by prometheus_client itself at import; named here so the settings list every variable.
    s["PROMETHEUS_MULTIPROC_DIR"] = os.environ.get("PROMETHEUS_MULTIPROC_DIR", "")
    if s["PROMETHEUS_MULTIPROC_DIR"]:  # prometheus_client writes there from the first counter on
        os.makedirs(s["PROMETHEUS_MULTIPROC_DIR"], exist_ok=True)

    s["OTEL_EXPORTER_OTLP_ENDPOINT"] = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()
    s["OTEL_SERVICE_NAME"] = os.environ.get("OTEL_SERVICE_NAME", "recall").strip() or "recall"
    s["SENTRY_DSN"] = os.environ.get("SENTRY_DSN", "").strip()
    s["SENTRY_ENVIRONMENT"] = os.environ.get("SENTRY_ENVIRONMENT", "").strip()
    s["SENTRY_TRACES_SAMPLE_RATE"] = float(os.environ.get("SENTRY_TRACES_SAMPLE_RATE", "0"))
