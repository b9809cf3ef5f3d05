from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "annotation"

    def ready(self) -> None:
        # Every kind of classifier registers itself (annotation/services/classifiers/kinds/) before any request.
        from annotation.services.classifiers import kinds  # noqa: F401, PLC0415 — AppConfig.ready: models are loaded only now
