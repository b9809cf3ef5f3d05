"""Webhooks' subscriptions to annotation's and estimation's domain events (bus: core/events.py).

Connected once, in ``WebhooksConfig.ready``.  Each receiver runs after the fact's
transaction committed and only creates delivery rows (sent by the task after
their own commit) — or, for new labels, schedules the task that finds the draws
they completed.  A failure here is logged by the event bus and never reaches the
request that produced the fact.
"""
from __future__ import annotations

from django.db import transaction

from annotation.events import ImportFinished, LabelsCompleted
from core.events import event_subscribe
from estimation.events import CertificationDecided, ReportUpdated
from webhooks.services import events
from webhooks.tasks import webhook_samples_completed_task


@event_subscribe(ReportUpdated)
def report_updated(event: ReportUpdated) -> None:
    events.webhook_report_updated(snapshot_id=event.snapshot_id)


@event_subscribe(CertificationDecided)
def certification_decided(event: CertificationDecided) -> None:
    events.webhook_certification_decided(verdict_id=event.verdict_id)


@event_subscribe(ImportFinished)
def import_finished(event: ImportFinished) -> None:
    events.webhook_import_finished(upload_id=event.upload_id, corpus_id=event.corpus_id, succeeded=event.succeeded)


@event_subscribe(LabelsCompleted)
def labels_completed(event: LabelsCompleted) -> None:
    """Which draws are now complete is checked in the task, not in the request that submitted the labels."""
    topic_id = event.topic_id
    transaction.on_commit(lambda: webhook_samples_completed_task.delay(topic_id=topic_id), robust=True)
