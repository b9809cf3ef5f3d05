"""API tokens and idempotency records (issue 14).

A token is shown once, when it is created; only the SHA-256 of its secret is kept.
Its public prefix finds the row, the hash is compared in constant time.
"""
from datetime import datetime, timedelta

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone


def token_expiry_default() -> datetime:
    """A new token's expiry: `API_TOKEN_DEFAULT_DAYS` (90) from now (config/settings/identity.py)."""
    return timezone.now() + timedelta(days=getattr(settings, "API_TOKEN_DEFAULT_DAYS", 90))


class TokenScope(models.TextChoices):
    READ = "read", "read only (GET, HEAD, OPTIONS)"
    READ_WRITE = "read_write", "read and write"


class ApiToken(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    # The token's public part ("rk_<prefix>_<secret>"): finds the row without scanning hashes.
    prefix = models.CharField(max_length=16, unique=True)
    # SHA-256 (hex) of the whole token string; the token itself is never stored.
    secret_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # Calls with the token are refused from this moment (api/authentication.py).
    expires_at = models.DateTimeField(default=token_expiry_default)
    # What the token may do on top of its user's roles: a read token gets 403 on every unsafe method.
    scope = models.CharField(max_length=10, choices=TokenScope.choices, default=TokenScope.READ_WRITE)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["user", "revoked_at"])]

    def __str__(self) -> str:
        return f"{self.name} (rk_{self.prefix}_…)"

    @property
    def expired(self) -> bool:
        return self.expires_at <= timezone.now()

    @property
    def active(self) -> bool:
        return self.revoked_at is None and not self.expired


class IdempotencyRecord(models.Model):
    """The first response to a request made with an `Idempotency-Key`: a retry with the same key gets it again."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=200)
    # METHOD path: the same key on another endpoint is refused, not replayed.
    endpoint = models.CharField(max_length=300)
    # SHA-256 of the request body: the same key with another body is refused.
    request_hash = models.CharField(max_length=64)
    # Null while the first request is still being carried out.
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    response = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "key"], name="idempotency_key_unique_per_user"),
            models.CheckConstraint(condition=Q(key__regex=r"^.+$"), name="idempotency_key_not_empty"),
        ]
