from django.apps import AppConfig


class EstimationConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "estimation"
