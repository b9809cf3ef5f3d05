"""Who am I (API), the page where a user creates and revokes their tokens (/account/tokens/), and sign-in
through the company's identity provider (/account/oidc/…, annotation/oidc.py; 404 while OIDC is off)."""
from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
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
from api.services import api_token_create, api_token_revoke, token_days_bounds
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
    default_days, max_days = token_days_bounds()
    if request.method == "POST":
        try:
            created = api_token_create(user=user, name=request.POST.get("name", ""),
                                       scope=request.POST.get("scope") or TokenScope.READ_WRITE,
                                       expires_in_days=_days_parse(request.POST.get("expires_in_days")))
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


def _days_parse(raw: str | None) -> int | None:
    """The form's days until expiry as a number (None when left empty); its bounds are the service's."""
    raw = (raw or "").strip()
    if not raw:
        return None
    try:
        return int(raw)
    except ValueError:
        raise ApplicationError("Days until the token expires must be a whole number.") from None


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
