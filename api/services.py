"""Tokens and idempotency: the API's own business rules (keyword-only, one entity per function)."""
from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from api.models import ApiToken, IdempotencyRecord, TokenScope
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


def token_days_bounds() -> tuple[int, int]:
    """(default, maximum) days a new token lasts: `API_TOKEN_DEFAULT_DAYS`, `API_TOKEN_MAX_DAYS`
    (config/settings/identity.py; 90 and 365 when the settings do not define them)."""
    maximum = int(getattr(settings, "API_TOKEN_MAX_DAYS", 365))
    default = min(int(getattr(settings, "API_TOKEN_DEFAULT_DAYS", 90)), maximum)
    return default, maximum


def api_token_create(*, user: User, name: str, scope: TokenScope | str = TokenScope.READ_WRITE,
                     expires_in_days: int | None = None) -> CreatedToken:
    """A new token for `user` with its scope and term; the plaintext is returned here and nowhere else.

    The one place a token's terms are checked: `scope` is one of `TokenScope`, `expires_in_days` (None: the
    default term) is a whole number from 1 to `API_TOKEN_MAX_DAYS`. The page and the management command
    pass what they were asked and show the TokenError.
    """
    name = (name or "").strip()
    if not name:
        raise TokenError("Give the token a name (what will use it, e.g. “nightly pipeline”).")
    if len(name) > 100:
        raise TokenError("The token's name is longer than 100 characters.")
    if scope not in TokenScope.values:
        raise TokenError(f"Unknown scope {str(scope)[:40]!r}: choose read or read and write.",
                         extra={"field": "scope"})
    default_days, max_days = token_days_bounds()
    days = default_days if expires_in_days is None else expires_in_days
    if isinstance(days, bool) or not isinstance(days, int) or not 1 <= days <= max_days:
        raise TokenError(f"A token lasts 1 to {max_days} days; {str(days)[:40]} was asked.",
                         extra={"field": "expires_in_days"})
    if ApiToken.objects.filter(user=user, revoked_at__isnull=True).count() >= MAX_TOKENS_PER_USER:
        raise TokenError(f"You already have {MAX_TOKENS_PER_USER} active tokens: revoke some first.")
    for _ in range(5):
        prefix = secrets.token_urlsafe(PREFIX_BYTES).replace("_", "x").replace("-", "y")
        plaintext = f"{TOKEN_PREFIX}{prefix}_{secrets.token_urlsafe(SECRET_BYTES)}"
        try:
            with transaction.atomic():
                token = ApiToken.objects.create(
                    user=user, name=name, prefix=prefix, secret_hash=_hash(plaintext), scope=TokenScope(scope),
                    expires_at=timezone.now() + timedelta(days=days))
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
