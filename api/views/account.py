"""Who am I (API), and the page where a user creates and revokes their tokens (/account/tokens/)."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.roles import ROLE_PERMISSIONS
from api.models import ApiToken
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
    if request.method == "POST":
        try:
            created = api_token_create(user=user, name=request.POST.get("name", ""))
        except ApplicationError as exc:
            error = exc.message
    tokens = ApiToken.objects.filter(user=user)
    response = render(request, "account/tokens.html", {"tokens": tokens, "created": created, "error": error},
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
