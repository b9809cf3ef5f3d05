"""HTTPS to the checked address with the host name's certificate verified, and two senders racing for one delivery."""
from __future__ import annotations

import shutil
import socket
import ssl
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.factories import require_postgres
from webhooks.models import WebhookDelivery, WebhookEvent
from webhooks.services import addresses, deliveries
from webhooks.services.deliveries import webhook_deliveries_create, webhook_delivery_send
from webhooks.services.endpoints import webhook_endpoint_create

Status = WebhookDelivery.Status


@pytest.fixture
def tls_receiver(tmp_path, monkeypatch, settings):
    """An HTTPS receiver on 127.0.0.1 with a self-signed certificate for hooks.test; hooks.test resolves there."""
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command to make a certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=hooks.test",
                    "-addext", "subjectAltName=DNS:hooks.test", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    received: list[dict[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            received.append(dict(self.headers.items()))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    real = socket.getaddrinfo
    monkeypatch.setattr(addresses.socket, "getaddrinfo", lambda host, port, *a, **k: (
        [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))] if host == "hooks.test"
        else real(host, port, *a, **k)))
    settings.WEBHOOK_ALLOWED_HOSTS = ["hooks.test"]
    yield {"port": server.server_address[1], "cert": cert, "received": received}
    server.shutdown()
    server.server_close()


def _delivery(url: str) -> WebhookDelivery:
    webhook_endpoint_create(url=url, events=[WebhookEvent.IMPORT_FINISHED])
    [created] = webhook_deliveries_create(event=WebhookEvent.IMPORT_FINISHED, topic_id=None, data={})
    return created


@pytest.mark.django_db
def test_https_verifies_the_certificate_of_the_host_name(tls_receiver):
    delivery = _delivery(f"https://hooks.test:{tls_receiver['port']}/hook")
    sent = webhook_delivery_send(delivery_id=delivery.pk)
    assert sent.status == Status.PENDING and "CERTIFICATE_VERIFY_FAILED" in sent.last_error  # self-signed
    assert tls_receiver["received"] == []


@pytest.mark.django_db
def test_https_with_a_trusted_certificate_is_delivered_to_the_pinned_address(tls_receiver, monkeypatch):
    trusted = ssl.create_default_context(cafile=str(tls_receiver["cert"]))
    monkeypatch.setattr(deliveries.ssl, "create_default_context", lambda: trusted)
    delivery = _delivery(f"https://hooks.test:{tls_receiver['port']}/hook")
    sent = webhook_delivery_send(delivery_id=delivery.pk)
    assert sent.status == Status.SUCCEEDED and sent.last_response_code == 204
    [headers] = tls_receiver["received"]
    assert headers["Host"] == f"hooks.test:{tls_receiver['port']}" and headers["X-Recall-Delivery"] == str(delivery.pk)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_senders_racing_for_one_delivery_post_it_once(receiver, monkeypatch):
    """Row lock with skip_locked, then the claim moves the next attempt: the losers find nothing to send."""
    require_postgres()
    from django.db import connection

    monkeypatch.setattr(deliveries, "webhook_delivery_enqueue", lambda **kwargs: False)  # the racers send it
    delivery = _delivery(receiver.url())
    barrier = threading.Barrier(4)
    results: list[object] = []

    def send() -> None:
        try:
            barrier.wait()
            results.append(webhook_delivery_send(delivery_id=delivery.pk))
        finally:
            connection.close()

    threads = [threading.Thread(target=send) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(receiver.requests) == 1
    assert sum(r is not None for r in results) == 1
    delivery.refresh_from_db()
    assert delivery.status == Status.SUCCEEDED and delivery.attempts == 1
