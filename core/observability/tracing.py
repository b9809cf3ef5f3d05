"""OpenTelemetry traces (request → Celery task → SQL) and Sentry, each only when its setting is given.

* ``OTEL_EXPORTER_OTLP_ENDPOINT`` set: a tracer provider exporting in batches over OTLP/HTTP (the exporter
  reads the endpoint, headers and timeout from the standard ``OTEL_*`` variables), and the Django, Celery and
  psycopg instrumentations. The Celery instrumentation puts the trace context in the task message, so a
  task's span is a child of the request span that enqueued it. Unset: nothing is installed (no overhead).
  ``OTEL_SERVICE_NAME`` names the service (``recall``).
* ``SENTRY_DSN`` set: sentry-sdk with its Django and Celery integrations; ``SENTRY_ENVIRONMENT`` and
  ``SENTRY_TRACES_SAMPLE_RATE`` (0: errors only) tune it.
"""
from __future__ import annotations

import logging
from typing import Any

logger = logging.getLogger(__name__)

_tracer_provider: Any = None


def tracing_setup(*, service_name: str, exporter: Any = None, batch: bool = True) -> Any:
    """Install the tracer provider and instrument Django, Celery and psycopg; returns the provider.

    ``exporter`` defaults to OTLP over HTTP; tests pass an in-memory one with ``batch=False``.
    """
    global _tracer_provider
    from opentelemetry.instrumentation.celery import CeleryInstrumentor  # noqa: PLC0415 — only when tracing is on
    from opentelemetry.instrumentation.django import DjangoInstrumentor  # noqa: PLC0415
    from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor  # noqa: PLC0415
    from opentelemetry.sdk.resources import Resource  # noqa: PLC0415
    from opentelemetry.sdk.trace import TracerProvider  # noqa: PLC0415
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor  # noqa: PLC0415

    if exporter is None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: PLC0415

        exporter = OTLPSpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
    provider.add_span_processor(BatchSpanProcessor(exporter) if batch else SimpleSpanProcessor(exporter))
    for instrumentor in (DjangoInstrumentor(), CeleryInstrumentor(), PsycopgInstrumentor()):
        if instrumentor.is_instrumented_by_opentelemetry:
            instrumentor.uninstrument()
        instrumentor.instrument(tracer_provider=provider)
    _tracer_provider = provider
    return provider


def tracing_teardown() -> None:
    """Undo tracing_setup (tests): the instrumentations are removed and the provider flushed and shut."""
    global _tracer_provider
    from opentelemetry.instrumentation.celery import CeleryInstrumentor  # noqa: PLC0415 — only when tracing is on
    from opentelemetry.instrumentation.django import DjangoInstrumentor  # noqa: PLC0415
    from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor  # noqa: PLC0415

    for instrumentor in (DjangoInstrumentor(), CeleryInstrumentor(), PsycopgInstrumentor()):
        if instrumentor.is_instrumented_by_opentelemetry:
            instrumentor.uninstrument()
    if _tracer_provider is not None:
        _tracer_provider.shutdown()
        _tracer_provider = None


def sentry_setup(*, dsn: str, environment: str, traces_sample_rate: float, transport: Any = None) -> None:
    """Initialise sentry-sdk with the Django and Celery integrations (``transport``: tests pass a fake)."""
    import sentry_sdk  # noqa: PLC0415 — only when SENTRY_DSN is set
    from sentry_sdk.integrations.celery import CeleryIntegration  # noqa: PLC0415
    from sentry_sdk.integrations.django import DjangoIntegration  # noqa: PLC0415

    options: dict[str, Any] = {}
    if transport is not None:
        options["transport"] = transport
    sentry_sdk.init(dsn=dsn, environment=environment or None, traces_sample_rate=traces_sample_rate,
                    integrations=[DjangoIntegration(), CeleryIntegration()], **options)
