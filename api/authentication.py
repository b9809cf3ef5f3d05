"""`Authorization: Bearer <token>` for scripts (no CSRF: a browser never sends this header on its own).

A token past its `expires_at` is refused (401) like a revoked one; a read-scoped token is refused (403) on
every unsafe method, whatever its user's roles allow. `last_used_at` is written at most once a minute
(api.services.api_token_authenticate), never on every call.
"""
from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions
from rest_framework.permissions import SAFE_METHODS
from rest_framework.request import Request

from api.models import TokenScope
from api.services import api_token_authenticate


class BearerTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[Any, Any] | None:
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() != self.keyword.lower().encode():
            return None  # not ours: the session (with CSRF) may still authenticate the request
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("Malformed Authorization header: use “Bearer <token>”.")
        try:
            plaintext = header[1].decode("ascii")
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed("The token has characters a token never has.") from None
        token = api_token_authenticate(plaintext=plaintext)
        if token is None:
            raise exceptions.AuthenticationFailed("Invalid, revoked or expired token, or the account is inactive.")
        if token.expired:
            raise exceptions.AuthenticationFailed(
                f"This token expired on {token.expires_at:%Y-%m-%d %H:%M} UTC: create another on /account/tokens/."
            )
        if token.scope == TokenScope.READ and request.method not in SAFE_METHODS:
            raise exceptions.PermissionDenied(
                f"This token is read-only: it cannot {request.method}. Use a read-and-write token."
            )
        return token.user, token

    def authenticate_header(self, request: Request) -> str:
        return f'{self.keyword} realm="api"'


class BearerTokenScheme(OpenApiAuthenticationExtension):
    target_class = "api.authentication.BearerTokenAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer",
                "description": "A personal token from /account/tokens/ (shown once when created)."}
