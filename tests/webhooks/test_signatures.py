"""The signature a receiver checks: docs/webhooks.md's verifier, run as written, against what the app sends."""
from __future__ import annotations

import re
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from webhooks.models import WebhookEvent
from webhooks.services.deliveries import webhook_deliveries_create, webhook_delivery_send
from webhooks.services.endpoints import webhook_endpoint_create
from webhooks.services.signatures import webhook_body, webhook_signature, webhook_signature_verify

pytestmark = pytest.mark.django_db

DOC = Path(__file__).resolve().parents[2] / "docs" / "webhooks.md"
SECRET = "s3cret-for-the-tests-0123456789"


@pytest.fixture
def documented_verify():
    """The ```python block of docs/webhooks.md that defines verify(), executed as a receiver would paste it."""
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
    source = next(b for b in blocks if "def verify(" in b)
    namespace: dict = {}
    exec(compile(source, str(DOC), "exec"), namespace)  # our own documentation
    return namespace


def _delivered(receiver):
    endpoint = webhook_endpoint_create(url=receiver.url(), events=[WebhookEvent.IMPORT_FINISHED], secret=SECRET)
    [delivery] = webhook_deliveries_create(event=WebhookEvent.IMPORT_FINISHED, topic_id=None,
                                           data={"upload_id": 7, "note": "naïve <b>"})
    webhook_delivery_send(delivery_id=delivery.pk)
    [request] = receiver.requests
    return endpoint, delivery, request


def test_the_documented_verifier_accepts_what_the_app_sends(receiver, documented_verify):
    endpoint, delivery, request = _delivered(receiver)
    header = request.headers["X-Recall-Signature"]
    assert documented_verify["verify"](SECRET, request.body, header) is True
    assert request.headers["X-Recall-Event"] == "import.finished"
    assert request.headers["X-Recall-Delivery"] == str(delivery.pk)
    assert header.startswith(f"t={request.headers['X-Recall-Timestamp']},v1=")
    assert abs(int(request.headers["X-Recall-Timestamp"]) - time.time()) < 30
    assert request.body == webhook_body(payload=delivery.payload)  # the stored payload, byte for byte


def test_a_tampered_body_a_wrong_secret_or_a_mangled_header_fails(receiver, documented_verify):
    _, _, request = _delivered(receiver)
    verify, header = documented_verify["verify"], request.headers["X-Recall-Signature"]
    assert verify(SECRET, request.body.replace(b'"upload_id":7', b'"upload_id":8'), header) is False
    assert verify(SECRET, request.body + b" ", header) is False
    assert verify("another-secret-0123456789", request.body, header) is False
    assert verify(SECRET, request.body, header.replace("v1=", "v0=")) is False
    assert verify(SECRET, request.body, "garbage") is False


def test_an_old_timestamp_fails_even_with_a_valid_signature(receiver, documented_verify):
    _, _, request = _delivered(receiver)
    header = request.headers["X-Recall-Signature"]
    sent = int(request.headers["X-Recall-Timestamp"])
    documented_verify["time"] = SimpleNamespace(time=lambda: sent + 301)  # the receiver's clock, later
    assert documented_verify["verify"](SECRET, request.body, header) is False
    documented_verify["time"] = SimpleNamespace(time=lambda: sent + 299)
    assert documented_verify["verify"](SECRET, request.body, header) is True


def test_the_apps_own_verifier_agrees_with_the_documented_one(documented_verify):
    body = b'{"a":1}'
    now = int(time.time())
    header = webhook_signature(secret=SECRET, timestamp=now, body=body)
    assert webhook_signature_verify(secret=SECRET, header=header, body=body)
    assert documented_verify["verify"](SECRET, body, header)
    old = webhook_signature(secret=SECRET, timestamp=now - 1000, body=body)
    assert not webhook_signature_verify(secret=SECRET, header=old, body=body)
    assert not documented_verify["verify"](SECRET, body, old)
