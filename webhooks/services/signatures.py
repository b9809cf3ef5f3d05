"""The signature every delivery carries (docs/webhooks.md has the receiver's side).

``X-Recall-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" keyed with the secret>``.
Signing the timestamp with the body lets a receiver refuse an old request replayed
by someone who captured it.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import time
from typing import Any

SIGNATURE_TOLERANCE_SECONDS = 300


def webhook_body(*, payload: dict[str, Any]) -> bytes:
    """The exact bytes sent for a payload: canonical JSON (sorted keys, no spaces, UTF-8)."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def webhook_signature(*, secret: str, timestamp: int, body: bytes) -> str:
    """The X-Recall-Signature header value for ``body`` sent at ``timestamp``."""
    digest = hmac.new(secret.encode("utf-8"), f"{timestamp}.".encode("ascii") + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={digest}"


def webhook_signature_verify(*, secret: str, header: str, body: bytes,
                             tolerance: int = SIGNATURE_TOLERANCE_SECONDS, now: float | None = None) -> bool:
    """True when ``header`` signs ``body`` with ``secret`` and its timestamp is within ``tolerance`` of now."""
    try:
        fields = dict(part.split("=", 1) for part in header.split(","))
        timestamp = int(fields["t"])
    except (KeyError, ValueError):
        return False
    if abs((time.time() if now is None else now) - timestamp) > tolerance:
        return False
    expected = webhook_signature(secret=secret, timestamp=timestamp, body=body).split("v1=", 1)[1]
    return hmac.compare_digest(expected, fields.get("v1", ""))
