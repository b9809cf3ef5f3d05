"""Tokens: shown once, hashed at rest, revocable; CSRF enforced for the session, not needed with a token."""
from __future__ import annotations

import hashlib
import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from api.models import ApiToken
from api.services import api_token_authenticate, api_token_create, api_token_revoke
from tests.factories import PASSWORD, user_with_role

TOKEN_RE = re.compile(r"rk_[A-Za-z0-9]+_[A-Za-z0-9_-]{20,}")


@pytest.fixture
def browser_client(db):
    user = user_with_role("pat", "analyst")
    client = Client(enforce_csrf_checks=True)
    assert client.login(username="pat", password=PASSWORD)
    return user, client


def _csrf(client: Client, url: str = "/account/tokens/") -> str:
    response = client.get(url)
    found = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', response.content.decode())
    assert found is not None
    return found.group(1)


def test_token_page_shows_the_new_token_once_and_stores_only_its_hash(browser_client):
    user, client = browser_client
    response = client.post("/account/tokens/", {"name": "nightly <b>pipeline</b>",
                                                "csrfmiddlewaretoken": _csrf(client)})
    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"
    html = response.content.decode()
    shown = TOKEN_RE.findall(html)
    assert len(shown) == 1
    assert "nightly &lt;b&gt;pipeline&lt;/b&gt;" in html  # escaped
    token = ApiToken.objects.get(user=user)
    assert token.secret_hash == hashlib.sha256(shown[0].encode()).hexdigest()
    assert shown[0] not in str([getattr(token, f.attname) for f in ApiToken._meta.fields])
    # Shown once: the page never shows it again.
    assert shown[0] not in client.get("/account/tokens/").content.decode()
    # And it works.
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {shown[0]}")
    assert api.get("/api/v1/me/").json() == {"username": "pat", "roles": ["analyst", "manager"],
                                            "permissions": ["annotation.configure_topics",
                                                            "annotation.read_reports"],
                                            "token": "nightly <b>pipeline</b>"}


def test_token_page_refuses_a_post_without_csrf(browser_client):
    _, client = browser_client
    assert client.post("/account/tokens/", {"name": "x"}).status_code == 403
    assert not ApiToken.objects.exists()


def test_token_page_needs_a_name(browser_client):
    _, client = browser_client
    response = client.post("/account/tokens/", {"name": "  ", "csrfmiddlewaretoken": _csrf(client)})
    assert response.status_code == 400
    assert "Give the token a name" in response.content.decode()


def test_revocation_on_the_page_refuses_later_calls(browser_client):
    user, client = browser_client
    created = api_token_create(user=user, name="ci")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {created.plaintext}")
    assert api.get("/api/v1/me/").status_code == 200
    response = client.post(f"/account/tokens/{created.token.pk}/revoke/", {"csrfmiddlewaretoken": _csrf(client)})
    assert response.status_code == 302
    refused = api.get("/api/v1/me/")
    assert refused.status_code == 401
    assert refused.json()["detail"].startswith("Invalid, revoked")


def test_someone_elses_token_cannot_be_revoked(browser_client):
    _, client = browser_client
    other = user_with_role("other", "analyst")
    created = api_token_create(user=other, name="theirs")
    client.post(f"/account/tokens/{created.token.pk}/revoke/", {"csrfmiddlewaretoken": _csrf(client)})
    assert ApiToken.objects.get(pk=created.token.pk).revoked_at is None


def test_authenticate_rejects_wrong_secret_prefix_and_inactive_user(db):
    user = user_with_role("sam", "manager")
    created = api_token_create(user=user, name="t")
    assert api_token_authenticate(plaintext=created.plaintext).user == user
    assert api_token_authenticate(plaintext=created.plaintext[:-1] + ("A" if created.plaintext[-1] != "A" else "B")) is None
    assert api_token_authenticate(plaintext="rk_nosuch_secret") is None
    assert api_token_authenticate(plaintext="garbage") is None
    user.is_active = False
    user.save()
    assert api_token_authenticate(plaintext=created.plaintext) is None


def test_revoking_twice_keeps_the_first_time(db):
    user = user_with_role("sam", "manager")
    created = api_token_create(user=user, name="t")
    first = api_token_revoke(user=user, token_id=created.token.pk).revoked_at
    assert api_token_revoke(user=user, token_id=created.token.pk).revoked_at == first


def test_last_used_is_recorded_at_most_once_a_minute(db):
    user = user_with_role("sam", "manager")
    created = api_token_create(user=user, name="t")
    api_token_authenticate(plaintext=created.plaintext)
    used = ApiToken.objects.get(pk=created.token.pk).last_used_at
    assert used is not None
    api_token_authenticate(plaintext=created.plaintext)
    assert ApiToken.objects.get(pk=created.token.pk).last_used_at == used
    ApiToken.objects.filter(pk=created.token.pk).update(last_used_at=used - timedelta(minutes=2))
    api_token_authenticate(plaintext=created.plaintext)
    assert ApiToken.objects.get(pk=created.token.pk).last_used_at > used - timedelta(seconds=1)
    assert ApiToken.objects.get(pk=created.token.pk).last_used_at <= timezone.now()


@pytest.mark.parametrize("header", ["Bearer", "Bearer a b", "Bearer \u00e9t\u00e9"])
def test_malformed_authorization_is_a_401_problem(db, header):
    response = APIClient().get("/api/v1/me/", HTTP_AUTHORIZATION=header.encode("utf-8").decode("latin-1"))
    assert response.status_code == 401
    assert response.json()["status"] == 401


# --------------------------------------------------------------------------- CSRF


def test_session_call_without_csrf_is_refused(browser_client):
    _, client = browser_client
    response = client.post("/api/v1/topics/", {}, content_type="application/json")
    assert response.status_code == 403
    assert "CSRF" in response.json()["detail"]


def test_session_call_with_csrf_passes_the_check(browser_client):
    _, client = browser_client
    token = _csrf(client)
    response = client.post("/api/v1/topics/", {}, content_type="application/json", HTTP_X_CSRFTOKEN=token)
    assert response.status_code == 400  # past CSRF and the role: the empty body is what is refused
    assert "name" in response.json()["errors"]


def test_token_call_needs_no_csrf(db):
    user = user_with_role("tok", "analyst")
    client = Client(enforce_csrf_checks=True)
    response = client.post("/api/v1/topics/", {}, content_type="application/json",
                           HTTP_AUTHORIZATION=f"Bearer {api_token_create(user=user, name='t').plaintext}")
    assert response.status_code == 400
    assert "name" in response.json()["errors"]
