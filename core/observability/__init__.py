"""What an operator sees (issue 25 item 4, docs/operations.md): JSON logs carrying request and task ids
(``logs``, ``middleware``, ``celery_signals``), Prometheus metrics at /metrics (``metrics``), and OpenTelemetry
traces and Sentry when configured (``tracing``). Wired by ``config/settings/observability.py`` and ``apps``."""
