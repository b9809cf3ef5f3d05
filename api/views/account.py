"""Who am I (API), the page where a user creates and revokes their tokens (/account/tokens/), and sign-in
through the company's identity provider (/account/oidc/…, annotation/oidc.py; 404 while OIDC is off)."""
from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.roles import ROLE_PERMISSIONS
from api.models import ApiToken, TokenScope
from api.serializers import MeSerializer
from api.services import api_token_create, api_token_revoke
from api.views.common import PROBLEMS
from core.errors import ApplicationError


class MeView(APIView):
    """Any signed-in account or token: the user's roles, so a script can check its token before a run."""

    @extend_schema(responses={200: MeSerializer, 401: PROBLEMS[401]}, tags=["account"])
    def get(self, request: Request) -> Response:
        user = request.user
        perms = sorted(p for perms in ROLE_PERMISSIONS.values() for p in perms if user.has_perm(p))
        roles = sorted(role for role, needed in ROLE_PERMISSIONS.items() if all(user.has_perm(p) for p in needed))
        token = request.auth.name if isinstance(request.auth, ApiToken) else None
        return Response({"username": user.get_username(), "roles": roles, "permissions": sorted(set(perms)),
                         "token": token})


@login_required
@require_http_methods(["GET", "POST"])
def tokens_page(request: HttpRequest) -> HttpResponse:
    """Any signed-in user (every role may script what its pages allow). The new token is shown once, in the
    response to the POST that created it — never stored, never put in the session or a redirect."""
    created = None
    error = None
    user = request.user
    assert isinstance(user, User)  # login_required
    default_days = getattr(settings, "API_TOKEN_DEFAULT_DAYS", 90)
    max_days = getattr(settings, "API_TOKEN_MAX_DAYS", 365)
    if request.method == "POST":
        try:
            scope, days = _token_terms(request.POST, default_days=default_days, max_days=max_days)
            with transaction.atomic():
                created = api_token_create(user=user, name=request.POST.get("name", ""))
                # The terms, until api_token_create takes them itself (see docs/deploy.md "API tokens").
                ApiToken.objects.filter(pk=created.token.pk).update(
                    scope=scope, expires_at=created.token.created_at + timedelta(days=days))
                created.token.refresh_from_db()
        except ApplicationError as exc:
            error = exc.message
    tokens = ApiToken.objects.filter(user=user)
    response = render(request, "account/tokens.html",
                      {"tokens": tokens, "created": created, "error": error, "scopes": TokenScope.choices,
                       "default_days": default_days, "max_days": max_days},
                      status=400 if error else 200)
    # The page may show a secret: no cache may keep it.
    response["Cache-Control"] = "no-store"
    return response


@login_required
@require_POST
def token_revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    user = request.user
    assert isinstance(user, User)  # login_required
    try:
        token = api_token_revoke(user=user, token_id=token_id)
    except ApplicationError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"Token “{token.name}” revoked: calls with it are refused from now on.")
    return redirect("account:tokens")


def _token_terms(data: Any, *, default_days: int, max_days: int) -> tuple[str, int]:
    """The scope and the days until expiry asked for in the form (parsed here, nothing written)."""
    scope = data.get("scope") or TokenScope.READ_WRITE
    if scope not in TokenScope.values:
        raise ApplicationError(f"Unknown scope {scope!r}: choose read or read and write.")
    raw = (data.get("expires_in_days") or "").strip()
    try:
        days = int(raw) if raw else default_days
    except ValueError:
        raise ApplicationError("Days until the token expires must be a whole number.") from None
    if not 1 <= days <= max_days:
        raise ApplicationError(f"A token lasts 1 to {max_days} days; {days} was asked.")
    return scope, days


# --- Sign-in through the identity provider (annotation/oidc.py) --------------------------------------


def sign_in_options(request: HttpRequest) -> dict[str, Any]:
    """Template context: the provider's name for the "Sign in with …" button, when OIDC is on."""
    return {"oidc_provider_name": getattr(settings, "OIDC_PROVIDER_NAME", "") if _oidc_on() else ""}


def _oidc_on() -> bool:
    return bool(getattr(settings, "OIDC_ENABLED", False))


def oidc_start(request: HttpRequest) -> HttpResponse:
    """Redirect to the provider's sign-in (mozilla-django-oidc, imported only when OIDC is on)."""
    if not _oidc_on():
        raise Http404("Sign-in through an identity provider is not configured.")
    from annotation.oidc import SignInStartView  # noqa: PLC0415 (mozilla-django-oidc only when OIDC is on)

    return SignInStartView.as_view()(request)


def oidc_callback(request: HttpRequest) -> HttpResponse:
    """The provider sends the browser back here with a code: the user is signed in (or sent back to sign-in)."""
    if not _oidc_on():
        raise Http404("Sign-in through an identity provider is not configured.")
    from annotation.oidc import SignInCallbackView  # noqa: PLC0415 (mozilla-django-oidc only when OIDC is on)

    return SignInCallbackView.as_view()(request)
