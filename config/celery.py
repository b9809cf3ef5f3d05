"""The Celery application.

With REDIS_URL unset, settings make every task run in-process (eager), so the
embedded setup needs no broker; with it set, tasks go to real workers.
"""
import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")

app = Celery("recall")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
