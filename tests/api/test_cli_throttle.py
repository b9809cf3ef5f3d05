"""The command-line client against a live server that throttles its token: a read answered 429 waits for
Retry-After and is retried (bounded); a write is never repeated (issue 14)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.core.cache import cache
from django.test import override_settings

from api.services import api_token_create
from tests.factories import user_with_role

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "clients" / "recall-cli"))
from recall_cli.cli import THROTTLE_RETRIES, ApiError, Client, _retry_after

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def client(live_server):
    cache.clear()
    token = api_token_create(user=user_with_role("throttled", "analyst"), name="nightly").plaintext
    yield Client(live_server.url, token, timeout=30)
    cache.clear()


def _rate(rate: str):
    return override_settings(REST_FRAMEWORK={**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"token": rate}})


def test_a_throttled_read_waits_for_retry_after_then_succeeds(client):
    waits: list[float] = []

    def sleep(seconds: float) -> None:  # time passes: the server's window empties
        waits.append(seconds)
        cache.clear()

    client.sleep = sleep
    with _rate("2/minute"):
        assert [client.get("/api/v1/me/")["username"] for _ in range(3)] == ["throttled"] * 3
    assert len(waits) == 1 and 0 < waits[0] <= 60


def test_a_read_still_throttled_after_the_retries_raises_the_problem(client):
    waits: list[float] = []
    client.sleep = waits.append  # time never passes
    with _rate("1/minute"):
        client.get("/api/v1/me/")
        with pytest.raises(ApiError) as refused:
            client.get("/api/v1/me/")
    assert refused.value.status == 429 and refused.value.problem["type"].endswith("/too-many-requests")
    assert len(waits) == THROTTLE_RETRIES


def test_a_throttled_write_is_not_repeated(client):
    waits: list[float] = []
    client.sleep = waits.append
    with _rate("1/minute"):
        client.get("/api/v1/me/")
        with pytest.raises(ApiError) as refused:
            client.request("POST", "/api/v1/topics/", json_body={})
    assert refused.value.status == 429 and waits == []


def test_retry_after_is_read_in_seconds_and_bounded():
    assert _retry_after("7") == 7 and _retry_after(None) == 1 and _retry_after("soon") == 1
    assert _retry_after("3600") == 60 and _retry_after("-5") == 0
