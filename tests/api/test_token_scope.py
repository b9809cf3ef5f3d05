"""API tokens: expiry, scope and last-used (issue 25 item 5).

Before: tokens never expired and carried the user's whole role. Now each has an expiry (90 days by default,
chosen at creation) and a scope: a read token gets 403 on every unsafe method.
"""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from api.models import ApiToken, TokenScope
from api.services import api_token_create
from tests.factories import PASSWORD, user_with_role

pytestmark = pytest.mark.django_db


def _call(method: str, token: str, path: str = "/api/v1/topics/", **kwargs):
    return getattr(Client(), method)(path, HTTP_AUTHORIZATION=f"Bearer {token}", content_type="application/json",
                                     **kwargs)


def test_a_new_token_expires_after_the_default_term(settings):
    settings.API_TOKEN_DEFAULT_DAYS = 90
    created = api_token_create(user=user_with_role("ana", "analyst"), name="pipeline")
    left = created.token.expires_at - timezone.now()
    assert timedelta(days=89, hours=23) < left <= timedelta(days=90)


def test_an_expired_token_is_refused():
    created = api_token_create(user=user_with_role("ana", "analyst"), name="pipeline")
    assert _call("get", created.plaintext, "/api/v1/me/").status_code == 200
    ApiToken.objects.filter(pk=created.token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    response = _call("get", created.plaintext, "/api/v1/me/")
    assert response.status_code == 401
    assert "expired" in response.json()["detail"]


def test_a_read_token_reads_but_gets_403_on_every_unsafe_method():
    user = user_with_role("ana", "analyst")
    created = api_token_create(user=user, name="dashboard", scope=TokenScope.READ)
    assert _call("get", created.plaintext).status_code == 200
    for method in ("post", "put", "patch", "delete"):
        response = _call(method, created.plaintext, data={"name": "x"})
        assert response.status_code == 403, method
        assert "read-only" in response.json()["detail"]
    # The same user's read-and-write token may write (the request reaches validation, not 403).
    writer = api_token_create(user=user, name="writer")
    assert _call("post", writer.plaintext, data={}).status_code not in (401, 403)


def test_last_used_is_written_at_most_once_a_minute(django_assert_max_num_queries):
    created = api_token_create(user=user_with_role("ana", "analyst"), name="pipeline")
    _call("get", created.plaintext, "/api/v1/me/")
    first = ApiToken.objects.get(pk=created.token.pk).last_used_at
    assert first is not None
    _call("get", created.plaintext, "/api/v1/me/")
    assert ApiToken.objects.get(pk=created.token.pk).last_used_at == first


def test_the_tokens_page_creates_a_read_token_with_the_chosen_term():
    user_with_role("ana", "analyst")
    client = Client()
    assert client.login(username="ana", password=PASSWORD)
    response = client.post("/account/tokens/", {"name": "dash", "scope": "read", "expires_in_days": "7"})
    assert response.status_code == 200
    token = ApiToken.objects.get(name="dash")
    assert token.scope == TokenScope.READ
    assert timedelta(days=6, hours=23) < token.expires_at - timezone.now() <= timedelta(days=7)
    assert "read only" in response.content.decode()


@pytest.mark.parametrize(("days", "scope"), [("0", "read"), ("400", "read"), ("x", "read"), ("7", "admin")])
def test_the_tokens_page_refuses_a_term_or_scope_out_of_bounds(days, scope):
    user_with_role("ana", "analyst")
    client = Client()
    assert client.login(username="ana", password=PASSWORD)
    response = client.post("/account/tokens/", {"name": "dash", "scope": scope, "expires_in_days": days})
    assert response.status_code == 400
    assert not ApiToken.objects.filter(name="dash").exists()
