"""Tokens and idempotency: the API's own business rules (keyword-only, one entity per function)."""
from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from api.models import ApiToken, IdempotencyRecord
from core.errors import ApplicationError

TOKEN_PREFIX = "rk_"
PREFIX_BYTES = 6  # 8 url-safe characters
SECRET_BYTES = 32
# last_used_at is written at most this often per token: a busy pipeline must not write on every call.
LAST_USED_RESOLUTION = timedelta(minutes=1)
MAX_TOKENS_PER_USER = 50


class TokenError(ApplicationError):
    pass


class IdempotencyConflict(ApplicationError):
    """The key was used for another request, or its first request is still being carried out."""

    http_status = 409
    code = "conflict"


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class CreatedToken:
    token: ApiToken
    plaintext: str  # shown once, never stored


def api_token_create(*, user: User, name: str) -> CreatedToken:
    """A new token for `user`; the plaintext is returned here and nowhere else."""
    name = (name or "").strip()
    if not name:
        raise TokenError("Give the token a name (what will use it, e.g. “nightly pipeline”).")
    if len(name) > 100:
        raise TokenError("The token's name is longer than 100 characters.")
    if ApiToken.objects.filter(user=user, revoked_at__isnull=True).count() >= MAX_TOKENS_PER_USER:
        raise TokenError(f"You already have {MAX_TOKENS_PER_USER} active tokens: revoke some first.")
    for _ in range(5):
        prefix = secrets.token_urlsafe(PREFIX_BYTES).replace("_", "x").replace("-", "y")
        plaintext = f"{TOKEN_PREFIX}{prefix}_{secrets.token_urlsafe(SECRET_BYTES)}"
        try:
            with transaction.atomic():
                token = ApiToken.objects.create(user=user, name=name, prefix=prefix, secret_hash=_hash(plaintext))
        except IntegrityError:  # a prefix collision: draw again
            continue
        return CreatedToken(token=token, plaintext=plaintext)
    raise RuntimeError("could not draw a unique token prefix")  # pragma: no cover - 48 random bits, 5 times


def api_token_revoke(*, user: User, token_id: int) -> ApiToken:
    """Revoke one of the user's tokens; revoking twice keeps the first time."""
    token = ApiToken.objects.filter(user=user, pk=token_id).first()
    if token is None:
        raise TokenError("There is no such token among yours.")
    ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
    token.refresh_from_db()
    return token


def _split(plaintext: str) -> str | None:
    """The prefix of a well-formed token, else None."""
    if not plaintext.startswith(TOKEN_PREFIX):
        return None
    prefix, sep, secret = plaintext[len(TOKEN_PREFIX):].partition("_")
    if not sep or not prefix or not secret or len(prefix) > 16:
        return None
    return prefix


def api_token_authenticate(*, plaintext: str) -> ApiToken | None:
    """The active token whose plaintext this is (its user active too), else None. Constant-time comparison."""
    prefix = _split(plaintext)
    candidate = ApiToken.objects.select_related("user").filter(prefix=prefix).first() if prefix else None
    # Compare even without a candidate, so a wrong prefix takes as long as a wrong secret.
    expected = candidate.secret_hash if candidate is not None else "0" * 64
    if not hmac.compare_digest(expected, _hash(plaintext)) or candidate is None:
        return None
    if candidate.revoked_at is not None or not candidate.user.is_active:
        return None
    now = timezone.now()
    if candidate.last_used_at is None or now - candidate.last_used_at > LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=candidate.pk).update(last_used_at=now)
        candidate.last_used_at = now
    return candidate


# --------------------------------------------------------------------------- idempotency


def request_fingerprint(*, body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def idempotency_begin(*, user: User, key: str, endpoint: str,
                      request_hash: str) -> IdempotencyRecord | None:
    """Claim `key` for this request: None when it is new (the caller then does the work and calls
    `idempotency_finish`), else the stored record whose response is to be replayed.

    Refused (IdempotencyConflict) when the key was used for another endpoint or body, or its first
    request has not finished yet.
    """
    key = key.strip()
    if not key or len(key) > 200:
        raise IdempotencyConflict("The Idempotency-Key header must be 1 to 200 characters.")
    try:
        with transaction.atomic():
            IdempotencyRecord.objects.create(user=user, key=key, endpoint=endpoint, request_hash=request_hash)
        return None
    except IntegrityError:
        pass
    record = IdempotencyRecord.objects.get(user=user, key=key)
    if record.endpoint != endpoint or record.request_hash != request_hash:
        raise IdempotencyConflict(
            "This Idempotency-Key was already used for a different request. Use a new key for a new request.")
    if record.status_code is None:
        raise IdempotencyConflict("The first request with this Idempotency-Key is still being carried out; "
                                  "retry in a moment to get its result.")
    return record


def idempotency_finish(*, user: User, key: str, status_code: int, response: Any) -> None:
    IdempotencyRecord.objects.filter(user=user, key=key.strip()).update(status_code=status_code, response=response)
