"""Users of each role with a token each, and a client that calls the API with a token."""
from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from api.services import api_token_create
from tests.factories import user_with_role

ROLES = ("analyst", "manager", "annotator", None)


@dataclass
class Caller:
    user: User
    token: str
    client: APIClient


def _caller(role: str | None) -> Caller:
    user = user_with_role(f"api-{role or 'norole'}", role)
    token = api_token_create(user=user, name=f"{role} token").plaintext
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return Caller(user=user, token=token, client=client)


@pytest.fixture
def callers(db) -> dict[str | None, Caller]:
    return {role: _caller(role) for role in ROLES}


@pytest.fixture
def analyst(callers) -> Caller:
    return callers["analyst"]


@pytest.fixture
def manager(callers) -> Caller:
    return callers["manager"]


@pytest.fixture
def annotator(callers) -> Caller:
    return callers["annotator"]
