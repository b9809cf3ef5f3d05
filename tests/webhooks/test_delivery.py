"""Delivery to a real HTTP receiver on 127.0.0.1: success, retry with backoff, no redirects, idempotence."""
from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from webhooks.models import WebhookDelivery, WebhookEndpoint, WebhookEvent
from webhooks.services.deliveries import (
    RETRY_DELAYS,
    webhook_deliveries_create,
    webhook_deliveries_due,
    webhook_delivery_send,
)
from webhooks.services.endpoints import webhook_endpoint_create
from webhooks.tasks import webhook_delivery_task

pytestmark = pytest.mark.django_db
Status = WebhookDelivery.Status


@pytest.fixture
def delivery(receiver) -> WebhookDelivery:
    webhook_endpoint_create(url=receiver.url(), events=[WebhookEvent.IMPORT_FINISHED])
    [created] = webhook_deliveries_create(event=WebhookEvent.IMPORT_FINISHED, topic_id=None,
                                          data={"upload_id": 3, "succeeded": True})
    return created


def test_a_delivery_posts_the_json_body_and_is_logged_as_delivered(receiver, delivery):
    sent = webhook_delivery_send(delivery_id=delivery.pk)
    assert sent.status == Status.SUCCEEDED and sent.attempts == 1 and sent.last_response_code == 200
    assert sent.delivered_at is not None and sent.next_attempt_at is None and sent.last_error == ""
    [request] = receiver.requests
    assert request.path == "/hook" and request.headers["Content-Type"] == "application/json"
    body = json.loads(request.body)
    assert body["event"] == "import.finished" and body["data"] == {"upload_id": 3, "succeeded": True}


def test_a_500_is_retried_after_the_backoff_and_then_succeeds(receiver, delivery):
    receiver.script = [500]
    start = timezone.now()
    first = webhook_delivery_send(delivery_id=delivery.pk, now=start)
    assert first.status == Status.PENDING and first.attempts == 1 and first.last_response_code == 500
    assert "HTTP 500" in first.last_error
    assert first.next_attempt_at == start + timedelta(seconds=60)
    # Not due yet: neither the sweep nor a duplicate task sends it.
    assert webhook_deliveries_due(now=start + timedelta(seconds=59)) == []
    assert webhook_delivery_send(delivery_id=delivery.pk, now=start + timedelta(seconds=30)) is None
    assert len(receiver.requests) == 1
    assert webhook_deliveries_due(now=start + timedelta(seconds=61)) == [delivery.pk]
    delivery.refresh_from_db()
    assert delivery.status == Status.SUCCEEDED and delivery.attempts == 2 and delivery.last_response_code == 200
    assert len(receiver.requests) == 2
    first_request, retry = receiver.requests
    assert first_request.body == retry.body
    assert first_request.headers["X-Recall-Delivery"] == retry.headers["X-Recall-Delivery"] == str(delivery.pk)


def test_the_backoff_grows_and_the_delivery_fails_after_the_last_attempt(settings, receiver, delivery):
    settings.WEBHOOK_MAX_ATTEMPTS = 6
    receiver.script = [503] * 6
    now = timezone.now()
    waits = []
    for attempt in range(1, 7):
        sent = webhook_delivery_send(delivery_id=delivery.pk, now=now)
        assert sent.attempts == attempt
        if attempt < 6:
            assert sent.status == Status.PENDING
            waits.append((sent.next_attempt_at - now).total_seconds())
            now = sent.next_attempt_at
    assert waits == list(RETRY_DELAYS) == [60, 300, 1800, 7200, 43200]
    assert sent.status == Status.FAILED and sent.next_attempt_at is None and sent.last_response_code == 503
    assert webhook_delivery_send(delivery_id=delivery.pk, now=now + timedelta(days=1)) is None
    assert len(receiver.requests) == 6


def test_a_refused_connection_is_a_failed_attempt_not_an_exception(receiver):
    webhook_endpoint_create(url="http://127.0.0.1:1/closed", events=[WebhookEvent.IMPORT_FINISHED])
    [created] = webhook_deliveries_create(event=WebhookEvent.IMPORT_FINISHED, topic_id=None, data={})
    sent = webhook_delivery_send(delivery_id=created.pk)
    assert sent.status == Status.PENDING and sent.last_response_code is None
    assert "Connection" in sent.last_error or "refused" in sent.last_error.lower()


def test_a_redirect_is_not_followed(receiver, delivery):
    receiver.script = [(302, {"Location": receiver.url("/elsewhere")})]
    sent = webhook_delivery_send(delivery_id=delivery.pk)
    assert sent.status == Status.PENDING and sent.last_response_code == 302
    assert "not followed" in sent.last_error and "/elsewhere" in sent.last_error
    assert [r.path for r in receiver.requests] == ["/hook"]


def test_the_task_run_twice_posts_once(receiver, delivery):
    assert webhook_delivery_task.apply(kwargs={"delivery_id": delivery.pk}).get() == "succeeded"
    assert webhook_delivery_task.apply(kwargs={"delivery_id": delivery.pk}).get() is None
    assert len(receiver.requests) == 1
    delivery.refresh_from_db()
    assert delivery.attempts == 1


def test_a_failed_task_run_does_not_retry_at_once_in_process(receiver, delivery):
    """In-process (eager) tasks leave the retry to the sweep: the countdown would otherwise be ignored."""
    receiver.script = [500, 500]
    assert webhook_delivery_task.apply(kwargs={"delivery_id": delivery.pk}).get() == "pending"
    assert len(receiver.requests) == 1


def test_a_switched_off_endpoint_fails_its_pending_delivery_without_a_request(receiver, delivery):
    delivery.endpoint.active = False
    delivery.endpoint.save(update_fields=["active"])
    sent = webhook_delivery_send(delivery_id=delivery.pk)
    assert sent.status == Status.FAILED and "switched off" in sent.last_error
    assert receiver.requests == []


def test_the_database_refuses_inconsistent_rows(delivery):
    from django.db import IntegrityError, transaction

    with pytest.raises(IntegrityError), transaction.atomic():
        WebhookDelivery.objects.filter(pk=delivery.pk).update(status=Status.SUCCEEDED)
    with pytest.raises(IntegrityError), transaction.atomic():
        WebhookDelivery.objects.filter(pk=delivery.pk).update(event="report.deleted")
    with pytest.raises(IntegrityError), transaction.atomic():
        WebhookDelivery.objects.filter(pk=delivery.pk).update(next_attempt_at=None)
    with pytest.raises(IntegrityError), transaction.atomic():
        WebhookEndpoint.objects.filter(pk=delivery.endpoint_id).update(events=[])
    with pytest.raises(IntegrityError), transaction.atomic():
        WebhookEndpoint.objects.filter(pk=delivery.endpoint_id).update(url="ftp://127.0.0.1/")
