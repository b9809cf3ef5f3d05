"""The shared `core` package as an app, so its signal receivers are connected in every process at start-up."""
from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = "Core"

    def ready(self) -> None:
        from core import signals  # noqa: F401, PLC0415 — AppConfig.ready: connects the receivers once models are loaded
