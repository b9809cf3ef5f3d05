"""Celery task importing a corpus uploaded in the browser (a thin wrapper over corpus_upload_run)."""
from celery import shared_task

from annotation.services.corpus_uploads import corpus_upload_run


@shared_task(name="annotation.tasks_import.corpus_import_task")
def corpus_import_task(upload_id: int) -> None:
    corpus_upload_run(upload_id=upload_id)
