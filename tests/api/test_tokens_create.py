"""A token's scope and term are checked and stored by one service, `api_token_create` (issue 25 item 5):
the tokens page and `manage.py token_create` pass what they were asked; nothing updates the row afterwards.
(There is no API endpoint that creates tokens: a token cannot mint tokens.)"""
from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone

from api.models import ApiToken, TokenScope
from api.services import TokenError, api_token_authenticate, api_token_create
from tests.factories import PASSWORD, user_with_role

pytestmark = pytest.mark.django_db


def _days_left(token: ApiToken) -> timedelta:
    return token.expires_at - timezone.now()


def test_the_service_stores_the_scope_and_the_term_it_was_given():
    user = user_with_role("ana", "analyst")
    created = api_token_create(user=user, name="dash", scope=TokenScope.READ, expires_in_days=3)
    row = ApiToken.objects.get(pk=created.token.pk)
    assert row.scope == "read"
    assert timedelta(days=2, hours=23) < _days_left(row) <= timedelta(days=3)


def test_the_service_defaults_to_read_and_write_for_the_default_term(settings):
    settings.API_TOKEN_DEFAULT_DAYS = 10
    row = ApiToken.objects.get(pk=api_token_create(user=user_with_role("ana", "analyst"), name="n").token.pk)
    assert row.scope == "read_write"
    assert timedelta(days=9, hours=23) < _days_left(row) <= timedelta(days=10)


@pytest.mark.parametrize(("scope", "days", "field"), [
    ("admin", 7, "scope"), ("", 7, "scope"), ("read", 0, "expires_in_days"), ("read", -3, "expires_in_days"),
    ("read", 31, "expires_in_days"), ("read", True, "expires_in_days"), ("read", "7", "expires_in_days"),
])
def test_the_service_refuses_a_scope_or_term_out_of_bounds(settings, scope, days, field):
    settings.API_TOKEN_MAX_DAYS = 30
    with pytest.raises(TokenError) as refused:
        api_token_create(user=user_with_role("ana", "analyst"), name="n", scope=scope, expires_in_days=days)
    assert refused.value.extra["field"] == field
    assert not ApiToken.objects.exists()


def test_the_page_follows_the_maximum_the_settings_define(settings):
    settings.API_TOKEN_MAX_DAYS = 30
    user_with_role("ana", "analyst")
    client = Client()
    assert client.login(username="ana", password=PASSWORD)
    refused = client.post("/account/tokens/", {"name": "long", "scope": "read", "expires_in_days": "31"})
    assert refused.status_code == 400
    assert "1 to 30 days" in refused.content.decode()
    assert not ApiToken.objects.exists()
    assert client.post("/account/tokens/", {"name": "ok", "scope": "read_write",
                                            "expires_in_days": "30"}).status_code == 200
    row = ApiToken.objects.get(name="ok")
    assert row.scope == "read_write"
    assert timedelta(days=29, hours=23) < _days_left(row) <= timedelta(days=30)


def test_the_management_command_creates_a_token_with_its_scope_and_term():
    user_with_role("pipeline", "analyst")
    out, err = StringIO(), StringIO()
    call_command("token_create", "pipeline", "--name", "nightly", "--scope", "read", "--days", "14",
                 stdout=out, stderr=err)
    plaintext = out.getvalue().strip()
    row = ApiToken.objects.get(name="nightly")
    assert api_token_authenticate(plaintext=plaintext) == row
    assert row.scope == "read"
    assert timedelta(days=13, hours=23) < _days_left(row) <= timedelta(days=14)
    assert plaintext not in err.getvalue()


@pytest.mark.parametrize("args", [["--scope", "write"], ["--days", "0"], ["--days", "9999"]])
def test_the_management_command_refuses_a_bad_scope_or_term(args):
    user_with_role("pipeline", "analyst")
    with pytest.raises(CommandError):
        call_command("token_create", "pipeline", "--name", "nightly", *args, stdout=StringIO(), stderr=StringIO())
    assert not ApiToken.objects.exists()


def test_the_management_command_refuses_an_unknown_user():
    with pytest.raises(CommandError, match="no user"):
        call_command("token_create", "nobody", "--name", "n", stdout=StringIO(), stderr=StringIO())
