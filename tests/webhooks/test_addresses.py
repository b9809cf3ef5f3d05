"""Never to an address the operator has not allowed: checked at registration and again at send (after DNS)."""
from __future__ import annotations

import socket

import pytest

from webhooks.models import WebhookDelivery, WebhookEndpoint, WebhookEvent
from webhooks.services import addresses
from webhooks.services.addresses import WebhookAddressRefused
from webhooks.services.deliveries import webhook_deliveries_create, webhook_delivery_send
from webhooks.services.endpoints import WebhookEndpointInvalid, webhook_endpoint_create

pytestmark = pytest.mark.django_db

EVENTS = [WebhookEvent.IMPORT_FINISHED]
PUBLIC = "93.184.216.34"


@pytest.fixture
def dns(monkeypatch):
    """A fake resolver: names in the mapping resolve to the given addresses; others go to the real one."""
    table: dict[str, list[str]] = {}
    real = socket.getaddrinfo

    def fake(host, port, *args, **kwargs):
        if host in table:
            family = lambda a: socket.AF_INET6 if ":" in a else socket.AF_INET  # noqa: E731
            return [(family(a), socket.SOCK_STREAM, 6, "", (a, port)) for a in table[host]]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(addresses.socket, "getaddrinfo", fake)
    return table


def test_an_unlisted_host_is_refused_at_registration(settings):
    settings.WEBHOOK_ALLOWED_HOSTS = ["hooks.example.com"]
    with pytest.raises(WebhookAddressRefused, match="not in WEBHOOK_ALLOWED_HOSTS"):
        webhook_endpoint_create(url="http://127.0.0.1:9/x", events=EVENTS)
    assert not WebhookEndpoint.objects.exists()


def test_an_empty_allow_list_allows_nothing(settings, dns):
    settings.WEBHOOK_ALLOWED_HOSTS = []
    dns["hooks.example.com"] = [PUBLIC]
    with pytest.raises(WebhookAddressRefused):
        webhook_endpoint_create(url="https://hooks.example.com/x", events=EVENTS)


@pytest.mark.parametrize("address", ["127.0.0.1", "10.1.2.3", "192.168.0.9", "172.16.5.5", "169.254.169.254",
                                     "100.64.0.1", "::1", "fe80::1", "fd00::1", "::ffff:10.0.0.1", "0.0.0.0"])
def test_private_loopback_and_link_local_addresses_are_refused_at_registration(settings, dns, address):
    settings.WEBHOOK_ALLOWED_HOSTS = ["*.example.com"]
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = False
    dns["hooks.example.com"] = [address]
    with pytest.raises(WebhookAddressRefused, match="resolves to"):
        webhook_endpoint_create(url="https://hooks.example.com/x", events=EVENTS)


def test_one_private_address_among_public_ones_is_enough_to_refuse(settings, dns):
    settings.WEBHOOK_ALLOWED_HOSTS = ["hooks.example.com"]
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = False
    dns["hooks.example.com"] = [PUBLIC, "10.0.0.1"]
    with pytest.raises(WebhookAddressRefused, match="10.0.0.1"):
        webhook_endpoint_create(url="https://hooks.example.com/x", events=EVENTS)


def test_an_allowed_public_host_is_registered_with_a_pattern(settings, dns):
    settings.WEBHOOK_ALLOWED_HOSTS = ["*.example.com"]
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = False
    dns["ci.hooks.example.com"] = [PUBLIC]
    endpoint = webhook_endpoint_create(url="https://ci.hooks.example.com/x", events=EVENTS)
    assert endpoint.pk and len(endpoint.secret) >= 32
    with pytest.raises(WebhookAddressRefused):  # the pattern is not a suffix match
        webhook_endpoint_create(url="https://example.com.evil.org/x", events=EVENTS)


@pytest.mark.parametrize("url", ["ftp://127.0.0.1/x", "file:///etc/passwd", "http:///nohost",
                                 "http://user:pw@127.0.0.1/x", "javascript:alert(1)", "http://127.0.0.1:99999/"])
def test_malformed_urls_are_refused(url):
    with pytest.raises(WebhookAddressRefused):
        webhook_endpoint_create(url=url, events=EVENTS)


def test_events_must_be_a_known_non_empty_set_and_a_given_secret_long_enough(receiver):
    with pytest.raises(WebhookEndpointInvalid):
        webhook_endpoint_create(url=receiver.url(), events=[])
    with pytest.raises(WebhookEndpointInvalid):
        webhook_endpoint_create(url=receiver.url(), events=["report.deleted"])
    with pytest.raises(WebhookEndpointInvalid, match="at least 16"):
        webhook_endpoint_create(url=receiver.url(), events=EVENTS, secret="short")


def _pending_delivery(receiver) -> WebhookDelivery:
    webhook_endpoint_create(url=receiver.url(), events=EVENTS)
    [delivery] = webhook_deliveries_create(event=WebhookEvent.IMPORT_FINISHED, topic_id=None, data={})
    return delivery


def test_settings_tightened_after_registration_refuse_the_send(settings, receiver):
    delivery = _pending_delivery(receiver)
    settings.WEBHOOK_ALLOWED_HOSTS = ["hooks.example.com"]
    sent = webhook_delivery_send(delivery_id=delivery.pk)
    assert sent.status == WebhookDelivery.Status.PENDING and sent.attempts == 1
    assert "refused" in sent.last_error and sent.last_response_code is None
    assert receiver.requests == []


def test_private_networks_switched_off_refuse_the_send_to_loopback(settings, receiver):
    delivery = _pending_delivery(receiver)
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = False
    sent = webhook_delivery_send(delivery_id=delivery.pk)
    assert "loopback" in sent.last_error and receiver.requests == []


def test_dns_rebinding_a_host_checked_public_at_registration_is_refused_at_send(settings, dns, receiver):
    settings.WEBHOOK_ALLOWED_HOSTS = ["hooks.example.com"]
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = False
    dns["hooks.example.com"] = [PUBLIC]
    webhook_endpoint_create(url=f"http://hooks.example.com:{receiver.port}/hook", events=EVENTS)
    [delivery] = webhook_deliveries_create(event=WebhookEvent.IMPORT_FINISHED, topic_id=None, data={})
    dns["hooks.example.com"] = ["127.0.0.1"]  # the name now points inside
    sent = webhook_delivery_send(delivery_id=delivery.pk)
    assert "resolves to 127.0.0.1" in sent.last_error
    assert receiver.requests == []


def test_the_send_connects_to_the_checked_address_and_keeps_the_host_name(settings, dns, receiver):
    settings.WEBHOOK_ALLOWED_HOSTS = ["hooks.test"]
    dns["hooks.test"] = ["127.0.0.1"]
    webhook_endpoint_create(url=f"http://hooks.test:{receiver.port}/in?x=1", events=EVENTS)
    [delivery] = webhook_deliveries_create(event=WebhookEvent.IMPORT_FINISHED, topic_id=None, data={})
    sent = webhook_delivery_send(delivery_id=delivery.pk)
    assert sent.status == WebhookDelivery.Status.SUCCEEDED
    [request] = receiver.requests
    assert request.headers["Host"] == f"hooks.test:{receiver.port}" and request.path == "/in?x=1"
