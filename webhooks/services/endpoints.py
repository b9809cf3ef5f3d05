"""Registering and removing webhook endpoints (the manager pages call these)."""
from __future__ import annotations

import secrets
from collections.abc import Iterable

from django.contrib.auth.models import User

from annotation.models import Topic
from core.errors import ApplicationError
from webhooks.models import EVENT_NAMES, WebhookEndpoint
from webhooks.services.addresses import webhook_target_check

SECRET_MIN_CHARS = 16


class WebhookEndpointInvalid(ApplicationError):
    pass


def webhook_secret_generate() -> str:
    return secrets.token_hex(32)


def webhook_endpoint_create(*, url: str, events: Iterable[str], topic: Topic | None = None, secret: str = "",
                            user: User | None = None) -> WebhookEndpoint:
    """Register an endpoint after checking its URL against the operator's settings (host allowed, address
    public unless private networks are allowed).  A blank secret is generated; either way the caller shows
    ``endpoint.secret`` once and never again.  Raises WebhookAddressRefused / WebhookEndpointInvalid."""
    chosen = sorted(set(events))
    unknown = [e for e in chosen if e not in EVENT_NAMES]
    if unknown or not chosen:
        raise WebhookEndpointInvalid("Choose at least one of the events: " + ", ".join(EVENT_NAMES) + ".")
    secret = secret.strip()
    if secret and len(secret) < SECRET_MIN_CHARS:
        raise WebhookEndpointInvalid(f"A secret needs at least {SECRET_MIN_CHARS} characters (or leave it blank "
                                     "and one is generated).")
    url = url.strip()
    webhook_target_check(url=url)
    return WebhookEndpoint.objects.create(url=url, events=chosen, topic=topic,
                                          secret=secret or webhook_secret_generate(), created_by=user)


def webhook_endpoint_delete(*, endpoint_id: int) -> None:
    """Remove the endpoint and its delivery log (pending deliveries are never sent)."""
    WebhookEndpoint.objects.filter(pk=endpoint_id).delete()
