"""Celery task of retrieved-set uploads (annotation/services/classifiers/retrieved_upload.py): thin, by build id,
safe twice. Its own module, as for the other jobs: the service queues it without importing every task of the app,
and annotation/tasks.py imports it for Celery's autodiscovery."""
from __future__ import annotations

from celery import shared_task

from annotation.services.classifiers.retrieved_upload import classifier_retrieved_upload_run


@shared_task(name="annotation.tasks_retrieved.classifier_retrieved_upload_task")
def classifier_retrieved_upload_task(*, build_id: int) -> int | None:
    """Resolve an uploaded Roaring bitmap or Parquet file into a classifier (the build's page polls the row)."""
    build = classifier_retrieved_upload_run(build_id=build_id)
    return build.classifier_id if build is not None else None
