from __future__ import annotations

from django.apps import AppConfig
from django.conf import settings
from django.core.signals import request_finished


class ObservabilityConfig(AppConfig):
    """Starts what config/settings/observability.py switched on, in every process that loads Django."""

    name = "core.observability"
    label = "observability"
    verbose_name = "Observability"

    def ready(self) -> None:
        from celery import signals  # noqa: PLC0415 — connected at start-up, not at import

        from core.observability.celery_signals import celery_signals_connect  # noqa: PLC0415
        from core.observability.logs import structlog_configure  # noqa: PLC0415
        from core.observability.middleware import request_context_clear  # noqa: PLC0415

        structlog_configure()
        celery_signals_connect()
        request_finished.connect(request_context_clear, weak=False, dispatch_uid="recall-observability-request")
        endpoint = str(getattr(settings, "OTEL_EXPORTER_OTLP_ENDPOINT", ""))
        service = str(getattr(settings, "OTEL_SERVICE_NAME", "recall"))
        if endpoint:
            from core.observability.tracing import tracing_setup  # noqa: PLC0415 — only when tracing is on

            tracing_setup(service_name=service)
            # A prefork worker's children do not inherit the parent's export thread: each starts its own.
            signals.worker_process_init.connect(lambda **_: tracing_setup(service_name=service), weak=False,
                                                dispatch_uid="recall-observability-tracing")
        dsn = str(getattr(settings, "SENTRY_DSN", ""))
        if dsn:
            from core.observability.tracing import sentry_setup  # noqa: PLC0415 — only when SENTRY_DSN is set

            sentry_setup(dsn=dsn, environment=str(getattr(settings, "SENTRY_ENVIRONMENT", "")),
                         traces_sample_rate=float(getattr(settings, "SENTRY_TRACES_SAMPLE_RATE", 0.0)))
