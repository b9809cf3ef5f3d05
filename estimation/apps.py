from django.apps import AppConfig


class EstimationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "estimation"

    def ready(self) -> None:
        # Subscribe to annotation's domain events (the only place estimation listens to annotation).
        from estimation import receivers  # noqa: F401, PLC0415 — AppConfig.ready: models are loaded only now
