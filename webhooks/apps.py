from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "webhooks"

    def ready(self) -> None:
        # Subscribe to annotation's and estimation's domain events (the only place webhooks listens).
        from webhooks import receivers  # noqa: F401, PLC0415 — AppConfig.ready: models are loaded only now
