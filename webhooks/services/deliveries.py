"""Deliveries: created by the event receivers, sent by a task, retried with backoff, replayable.

Send protocol (``webhook_delivery_send``), safe to run any number of times at once:

1. *Claim*, in a short transaction: lock the row with ``select_for_update(skip_locked=True)``
   and only if it is still pending and due, count the attempt and move ``next_attempt_at``
   to when the *next* attempt would be due.  A second worker (a duplicate message, the
   periodic sweep) either skips the locked row or finds it not due any more: one POST.
2. *POST* outside any transaction (5 s timeout, no redirect followed), to the address
   checked against the settings just now (``webhook_target_check``).
3. *Record*: succeeded with ``delivered_at``; or the error, and failed for good after
   ``WEBHOOK_MAX_ATTEMPTS``.  A worker that dies between 2 and 3 leaves the row pending
   with its next attempt already scheduled, so it is retried (the receiver deduplicates
   on ``X-Recall-Delivery``: delivery is at least once).

Retries wait ``RETRY_DELAYS`` (1 min, 5 min, 30 min, 2 h, 12 h).  The task re-enqueues
itself with that countdown; the beat sweep ``webhook_deliveries_due`` sends whatever is
due and was not (a lost message, in-process tasks without a broker).
"""
from __future__ import annotations

import http.client
import logging
import socket
import ssl
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from core.errors import ApplicationError
from webhooks.models import WebhookDelivery, WebhookEndpoint
from webhooks.services.addresses import WebhookAddressRefused, WebhookTarget, webhook_target_check
from webhooks.services.signatures import webhook_body, webhook_signature

logger = logging.getLogger(__name__)

RETRY_DELAYS = (60, 300, 1800, 7200, 43200)
USER_AGENT = "Recall-Webhooks/1"
_ERROR_CHARS = 500

Status = WebhookDelivery.Status


class WebhookReplayRefused(ApplicationError):
    pass


def retry_delay(*, attempt: int) -> int:
    """Seconds to wait after failed attempt number ``attempt`` (1-based)."""
    return RETRY_DELAYS[min(attempt, len(RETRY_DELAYS)) - 1]


# =========================================================================== creating


def webhook_payload(*, event: str, data: dict[str, Any], now: datetime | None = None) -> dict[str, Any]:
    return {"event": event, "created_at": (now or timezone.now()).isoformat(), "data": data}


def webhook_endpoints_for(*, event: str, topic_id: int | None) -> list[WebhookEndpoint]:
    """Active endpoints subscribed to ``event`` for the topic: the topic's own and the global ones.

    An event without a topic (import.finished) goes to global endpoints only.
    """
    scope = Q(topic__isnull=True) if topic_id is None else Q(topic__isnull=True) | Q(topic_id=topic_id)
    return [e for e in WebhookEndpoint.objects.filter(scope, active=True).order_by("pk") if e.subscribes(event)]


def webhook_deliveries_create(*, event: str, topic_id: int | None, data: dict[str, Any]) -> list[WebhookDelivery]:
    """One pending delivery per subscribed endpoint; each is sent by the task after commit."""
    endpoints = webhook_endpoints_for(event=event, topic_id=topic_id)
    if not endpoints:
        return []
    now = timezone.now()
    payload = webhook_payload(event=event, data=data, now=now)
    with transaction.atomic():
        deliveries = [WebhookDelivery.objects.create(endpoint=e, event=event, payload=payload, next_attempt_at=now)
                      for e in endpoints]
        _enqueue_on_commit([d.pk for d in deliveries])
    return deliveries


def webhook_delivery_replay(*, delivery_id: int) -> WebhookDelivery:
    """A new delivery of the same event and payload to the same endpoint (the original is left as it is)."""
    original = WebhookDelivery.objects.select_related("endpoint").get(pk=delivery_id)
    if not original.endpoint.active:
        raise WebhookReplayRefused("This endpoint is switched off, so nothing was sent.")
    with transaction.atomic():
        replay = WebhookDelivery.objects.create(endpoint=original.endpoint, event=original.event,
                                                payload=original.payload, next_attempt_at=timezone.now(),
                                                replay_of=original)
        _enqueue_on_commit([replay.pk])
    return replay


def _enqueue_on_commit(delivery_ids: Iterable[int]) -> None:
    for delivery_id in delivery_ids:
        transaction.on_commit(partial(webhook_delivery_enqueue, delivery_id=delivery_id), robust=True)


def webhook_delivery_enqueue(*, delivery_id: int, countdown: float | None = None) -> bool:
    """Send the task; with the broker down, log (the sweep sends it later).  In-process (eager) tasks run
    now, and a retry with a countdown is left to the sweep (it would otherwise run at once)."""
    from webhooks.tasks import webhook_delivery_task  # noqa: PLC0415 — a task module imports this service

    try:
        if webhook_delivery_task.app.conf.task_always_eager:
            if countdown:
                return False
            webhook_delivery_task.apply(kwargs={"delivery_id": delivery_id})
        else:
            webhook_delivery_task.apply_async(kwargs={"delivery_id": delivery_id}, countdown=countdown, retry=False)
    except Exception:  # the row is committed; the sweep sends it
        logger.warning("webhook delivery %s not enqueued", delivery_id, exc_info=True)
        return False
    return True


# =========================================================================== sending


@dataclass(frozen=True)
class SendOutcome:
    ok: bool
    code: int | None
    error: str


class _PinnedHTTPConnection(http.client.HTTPConnection):
    """Connects to the checked address; Host header and URL stay the endpoint's."""

    def __init__(self, target: WebhookTarget, timeout: float) -> None:
        super().__init__(target.host, target.port, timeout=timeout)
        self._address = target.address

    def connect(self) -> None:
        self.sock = socket.create_connection((self._address, self.port), self.timeout)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """As above, with TLS verified against the endpoint's host name (SNI and certificate)."""

    def __init__(self, target: WebhookTarget, timeout: float) -> None:
        super().__init__(target.host, target.port, timeout=timeout, context=ssl.create_default_context())
        self._address = target.address

    def connect(self) -> None:
        sock = socket.create_connection((self._address, self.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)  # type: ignore[attr-defined]


def _post(*, delivery: WebhookDelivery, endpoint: WebhookEndpoint) -> SendOutcome:
    try:
        target = webhook_target_check(url=endpoint.url)
    except WebhookAddressRefused as exc:
        return SendOutcome(ok=False, code=None, error=f"refused: {exc.message}")
    body = webhook_body(payload=delivery.payload)
    timestamp = int(time.time())
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-Recall-Event": delivery.event,
        "X-Recall-Delivery": str(delivery.pk),
        "X-Recall-Timestamp": str(timestamp),
        "X-Recall-Signature": webhook_signature(secret=endpoint.secret, timestamp=timestamp, body=body),
    }
    connection_class = _PinnedHTTPSConnection if target.scheme == "https" else _PinnedHTTPConnection
    connection = connection_class(target, timeout=float(settings.WEBHOOK_TIMEOUT_SECONDS))
    try:
        connection.request("POST", target.path, body=body, headers=headers)
        response = connection.getresponse()
        code = response.status
        snippet = response.read(_ERROR_CHARS).decode("utf-8", "replace")
        location = response.getheader("Location")
    except (OSError, http.client.HTTPException) as exc:
        return SendOutcome(ok=False, code=None, error=f"{type(exc).__name__}: {exc}"[:_ERROR_CHARS])
    finally:
        connection.close()
    if 200 <= code < 300:
        return SendOutcome(ok=True, code=code, error="")
    if 300 <= code < 400:
        return SendOutcome(ok=False, code=code, error=f"redirect to {location!r} not followed"[:_ERROR_CHARS])
    return SendOutcome(ok=False, code=code, error=f"HTTP {code}: {snippet}"[:_ERROR_CHARS])


def _claim(*, delivery_id: int, now: datetime) -> WebhookDelivery | None:
    with transaction.atomic():
        delivery = (WebhookDelivery.objects.select_for_update(skip_locked=True)
                    .filter(pk=delivery_id, status=Status.PENDING, next_attempt_at__lte=now).first())
        if delivery is None:
            return None
        delivery.attempts += 1
        delivery.next_attempt_at = now + timedelta(seconds=retry_delay(attempt=delivery.attempts))
        delivery.save(update_fields=["attempts", "next_attempt_at"])
        return delivery


def webhook_delivery_send(*, delivery_id: int, now: datetime | None = None) -> WebhookDelivery | None:
    """Make one attempt if the delivery is pending and due; None when there was nothing to do.

    After a failure the delivery stays pending until its next attempt time, or becomes
    failed once it has had ``WEBHOOK_MAX_ATTEMPTS`` attempts.
    """
    delivery = _claim(delivery_id=delivery_id, now=now or timezone.now())
    if delivery is None:
        return None
    endpoint = WebhookEndpoint.objects.get(pk=delivery.endpoint_id)
    if not endpoint.active:
        outcome = SendOutcome(ok=False, code=None, error="the endpoint is switched off")
        final = True
    else:
        outcome = _post(delivery=delivery, endpoint=endpoint)
        final = delivery.attempts >= settings.WEBHOOK_MAX_ATTEMPTS
    fields: dict[str, Any] = {"last_response_code": outcome.code, "last_error": outcome.error}
    if outcome.ok:
        fields.update(status=Status.SUCCEEDED, delivered_at=timezone.now(), next_attempt_at=None)
    elif final:
        fields.update(status=Status.FAILED, next_attempt_at=None)
    WebhookDelivery.objects.filter(pk=delivery.pk, status=Status.PENDING).update(**fields)
    delivery.refresh_from_db()
    level = logging.INFO if outcome.ok else logging.WARNING
    logger.log(level, "webhook delivery %s (%s, attempt %s) to endpoint %s: %s%s", delivery.pk, delivery.event,
               delivery.attempts, endpoint.pk, delivery.status,
               f" ({outcome.code or ''} {outcome.error})" if not outcome.ok else f" ({outcome.code})")
    return delivery


def webhook_deliveries_due(*, now: datetime | None = None, limit: int = 500) -> list[int]:
    """Send every pending delivery whose attempt time has come (the beat sweep); returns the ids tried."""
    now = now or timezone.now()
    ids = list(WebhookDelivery.objects.filter(status=Status.PENDING, next_attempt_at__lte=now)
               .order_by("next_attempt_at", "pk").values_list("pk", flat=True)[:limit])
    tried = []
    for delivery_id in ids:
        try:
            if webhook_delivery_send(delivery_id=delivery_id, now=now) is not None:
                tried.append(delivery_id)
        except Exception:  # one broken delivery must not stop the sweep
            logger.exception("webhook delivery %s failed to send", delivery_id)
    return tried
