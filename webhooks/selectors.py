"""Reads of the webhook pages."""
from __future__ import annotations

from django.db.models import Count, QuerySet

from webhooks.models import WebhookDelivery, WebhookEndpoint

DELIVERIES_SHOWN = 200


def webhook_endpoints_list() -> QuerySet[WebhookEndpoint]:
    return WebhookEndpoint.objects.select_related("topic", "created_by").annotate(n_deliveries=Count("deliveries"))


def webhook_deliveries_list(*, endpoint_id: int | None = None) -> list[WebhookDelivery]:
    """The latest deliveries (all endpoints, or one), newest first."""
    deliveries = WebhookDelivery.objects.select_related("endpoint").defer("payload")
    if endpoint_id is not None:
        deliveries = deliveries.filter(endpoint_id=endpoint_id)
    return list(deliveries.order_by("-created_at", "-id")[:DELIVERIES_SHOWN])
