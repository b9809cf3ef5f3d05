"""Celery tasks of the webhooks app: thin wrappers that take ids (keywords) and call services.

Each is safe to run twice: a delivery is claimed under a row lock and only while
pending and due (webhooks/services/deliveries.py); a completed draw is announced
once (unique WebhookSampleCompletion.draw).
"""
from __future__ import annotations

from celery import shared_task

from webhooks.models import WebhookDelivery
from webhooks.services import deliveries, events


@shared_task(name="webhooks.tasks.webhook_delivery_task", ignore_result=True)
def webhook_delivery_task(*, delivery_id: int) -> str | None:
    """One attempt at a delivery; after a failure, the next attempt is enqueued with its backoff."""
    delivery = deliveries.webhook_delivery_send(delivery_id=delivery_id)
    if delivery is None:
        return None
    if delivery.status == WebhookDelivery.Status.PENDING:
        deliveries.webhook_delivery_enqueue(delivery_id=delivery_id,
                                            countdown=deliveries.retry_delay(attempt=delivery.attempts))
    return str(delivery.status)


@shared_task(name="webhooks.tasks.webhook_deliveries_due_task", ignore_result=True)
def webhook_deliveries_due_task() -> list[int]:
    """Periodic sweep (beat): send deliveries whose retry time has come or whose message was lost."""
    return deliveries.webhook_deliveries_due()


@shared_task(name="webhooks.tasks.webhook_samples_completed_task", ignore_result=True)
def webhook_samples_completed_task(*, topic_id: int) -> int:
    """Announce the topic's draws that new labels completed (sample.completed)."""
    return len(events.webhook_samples_completed(topic_id=topic_id))
