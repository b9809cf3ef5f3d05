"""Sign-in through the company's identity provider (issue 25 item 5), end to end with no network.

A fake OpenID provider runs in a thread on 127.0.0.1 (a real HTTP server): discovery, an authorization
endpoint that redirects back with a code, a token endpoint issuing an RS256-signed id token, JWKS and userinfo.
The test client goes through the real flow: /account/oidc/authenticate/ → the provider → /account/oidc/callback/
(mozilla-django-oidc with annotation/oidc.py's backend).
"""
from __future__ import annotations

import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlparse

import jwt
import pytest
import requests
from cryptography.hazmat.primitives.asymmetric import rsa
from django.contrib.auth.models import User
from django.test import Client

from tests.factories import PASSWORD, user_with_role

pytestmark = pytest.mark.django_db

CLIENT_ID = "recall-app"
CLIENT_SECRET = "s3cret"
ROLE_MAP = {"recall-analysts": "analyst", "recall-managers": "manager", "recall-annotators": "annotator"}


class FakeProvider:
    """One identity provider: the claims of the next person to sign in are set by the test."""

    def __init__(self) -> None:
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.kid = "test-key-1"
        self.codes: dict[str, dict[str, Any]] = {}
        self.tokens: dict[str, dict[str, Any]] = {}
        self.claims: dict[str, Any] = {}
        self.audience = CLIENT_ID
        self.requests: list[str] = []
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _json(self, body: Any, status: int = 200) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                url = urlparse(self.path)
                provider.requests.append(f"GET {url.path}")
                if url.path == "/.well-known/openid-configuration":
                    self._json(provider.discovery())
                elif url.path == "/jwks":
                    public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(provider.key.public_key()))
                    self._json({"keys": [{**public, "kid": provider.kid, "alg": "RS256", "use": "sig"}]})
                elif url.path == "/authorize":
                    query = {k: v[0] for k, v in parse_qs(url.query).items()}
                    code = secrets.token_urlsafe(16)
                    provider.codes[code] = {"nonce": query.get("nonce"), "redirect_uri": query["redirect_uri"],
                                            "client_id": query["client_id"], "claims": dict(provider.claims)}
                    self.send_response(302)
                    self.send_header("Location", f"{query['redirect_uri']}?{urlencode({'code': code, 'state': query['state']})}")
                    self.end_headers()
                elif url.path == "/userinfo":
                    token = self.headers.get("Authorization", "").removeprefix("Bearer ")
                    if token not in provider.tokens:
                        self._json({"error": "invalid_token"}, 401)
                        return
                    self._json(provider.tokens[token])
                else:
                    self._json({"error": "not_found"}, 404)

            def do_POST(self) -> None:
                provider.requests.append(f"POST {self.path}")
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(int(self.headers["Content-Length"])).decode()).items()}
                grant = provider.codes.pop(form.get("code", ""), None)
                if (self.path != "/token" or grant is None or form.get("client_secret") != CLIENT_SECRET
                        or form.get("redirect_uri") != grant["redirect_uri"]):
                    self._json({"error": "invalid_grant"}, 400)
                    return
                now = int(time.time())
                claims = grant["claims"]
                id_token = jwt.encode(
                    {"iss": provider.issuer, "aud": provider.audience, "sub": claims["sub"], "iat": now,
                     "exp": now + 300, "nonce": grant["nonce"]},
                    provider.key, algorithm="RS256", headers={"kid": provider.kid})
                access = secrets.token_urlsafe(16)
                provider.tokens[access] = claims
                self._json({"access_token": access, "token_type": "Bearer", "id_token": id_token, "expires_in": 300})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.issuer = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def discovery(self) -> dict[str, Any]:
        return {"issuer": self.issuer, "authorization_endpoint": f"{self.issuer}/authorize",
                "token_endpoint": f"{self.issuer}/token", "userinfo_endpoint": f"{self.issuer}/userinfo",
                "jwks_uri": f"{self.issuer}/jwks", "id_token_signing_alg_values_supported": ["RS256"]}


@pytest.fixture
def provider(settings):
    fake = FakeProvider()
    fake.thread.start()
    settings.OIDC_ENABLED = True
    settings.OIDC_PROVIDER_NAME = "Company SSO"
    settings.OIDC_RP_CLIENT_ID = CLIENT_ID
    settings.OIDC_RP_CLIENT_SECRET = CLIENT_SECRET
    settings.OIDC_OP_ISSUER = fake.issuer
    for name in ("OIDC_OP_AUTHORIZATION_ENDPOINT", "OIDC_OP_TOKEN_ENDPOINT", "OIDC_OP_USER_ENDPOINT",
                 "OIDC_OP_JWKS_ENDPOINT"):
        setattr(settings, name, "")
    settings.OIDC_ROLE_MAP = ROLE_MAP
    settings.OIDC_GROUPS_CLAIM = "groups"
    settings.AUTHENTICATION_BACKENDS = [*settings.AUTHENTICATION_BACKENDS, "annotation.oidc.RoleMappingOIDCBackend"]
    yield fake
    fake.server.shutdown()
    fake.server.server_close()


def _sign_in(client: Client, provider: FakeProvider, **claims: Any):
    provider.claims = {"sub": "u-123", "email": "ana@example.com", "given_name": "Ana", "family_name": "Lopez",
                       **claims}
    start = client.get("/account/oidc/authenticate/")
    assert start.status_code == 302 and start["Location"].startswith(f"{provider.issuer}/authorize?")
    query = parse_qs(urlparse(start["Location"]).query)
    assert query["code_challenge_method"] == ["S256"] and query["nonce"]  # PKCE and a nonce
    back = requests.get(start["Location"], allow_redirects=False, timeout=5)  # the provider signs the person in
    callback = urlparse(back.headers["Location"])
    assert callback.path == "/account/oidc/callback/"
    return client.get(f"{callback.path}?{callback.query}")


def _roles(user: User) -> set[str]:
    return set(user.groups.values_list("name", flat=True))


def test_the_groups_claim_gives_the_roles_and_the_user_is_created(provider):
    client = Client()
    response = _sign_in(client, provider, groups=["recall-analysts", "recall-annotators", "unrelated"])
    assert response.status_code == 302 and response["Location"] == "/"
    user = User.objects.get(pk=client.session["_auth_user_id"])
    assert user.username.startswith("sso-") and not user.has_usable_password()
    assert (user.email, user.first_name, user.last_name) == ("ana@example.com", "Ana", "Lopez")
    assert _roles(user) == {"analyst", "annotator"}
    assert user.has_perm("annotation.configure_topics")
    # The whole flow went through the provider: discovery, token, JWKS, userinfo.
    assert {"GET /.well-known/openid-configuration", "POST /token", "GET /jwks", "GET /userinfo"} <= set(
        provider.requests)


def test_the_next_sign_in_updates_the_roles_of_the_same_user(provider):
    _sign_in(Client(), provider, groups=["recall-analysts"])
    client = Client()
    _sign_in(client, provider, groups="recall-managers")  # a string claim is accepted too
    assert User.objects.filter(username__startswith="sso-").count() == 1
    user = User.objects.get(pk=client.session["_auth_user_id"])
    assert _roles(user) == {"manager"}


def test_someone_whose_groups_map_to_no_role_is_refused(provider):
    client = Client()
    response = _sign_in(client, provider, groups=["everyone"])
    assert "_auth_user_id" not in client.session
    assert response.status_code == 302 and "sso=failed" in response["Location"]
    assert not User.objects.filter(username__startswith="sso-").exists()
    page = client.get(response["Location"])
    assert "has no role here" in page.content.decode()


def test_an_id_token_for_another_client_is_refused(provider):
    provider.audience = "another-app"
    client = Client()
    _sign_in(client, provider, groups=["recall-analysts"])
    assert "_auth_user_id" not in client.session


def test_a_local_account_with_the_same_email_is_not_taken_over(provider):
    local = user_with_role("ana", "analyst", email="ana@example.com")
    client = Client()
    _sign_in(client, provider, groups=["recall-annotators"])
    assert int(client.session["_auth_user_id"]) != local.pk
    assert _roles(local) == {"analyst"}


def test_local_accounts_still_sign_in_and_the_page_offers_the_provider(provider):
    user_with_role("bob", "manager")
    client = Client()
    page = client.get("/accounts/login/")
    assert "Sign in with Company SSO" in page.content.decode()
    response = client.post("/accounts/login/", {"username": "bob", "password": PASSWORD})
    assert response.status_code == 302
    assert provider.requests == []  # a password sign-in never waits on the provider


def test_without_oidc_the_sign_in_routes_are_404_and_the_page_has_no_button(settings):
    settings.OIDC_ENABLED = False
    client = Client()
    assert client.get("/account/oidc/authenticate/").status_code == 404
    assert client.get("/account/oidc/callback/?code=x&state=y").status_code == 404
    assert "Sign in with" not in client.get("/accounts/login/").content.decode()
