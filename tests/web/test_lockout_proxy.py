"""Lockout behind the required reverse proxy (issue 25 item 5).

Before: django-axes keyed its lockout on REMOTE_ADDR, which behind the proxy is the proxy's own address for
every visitor, so ten wrong passwords from anyone locked a known username out for everyone for 15 minutes.
Now the client's address is the one the trusted proxy appended to X-Forwarded-For (TRUSTED_PROXY_COUNT,
config/settings/identity.py) and the lockout is keyed on username + that address.
"""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client, RequestFactory

from tests.factories import PASSWORD, user_with_role

pytestmark = pytest.mark.django_db

PROXY = "10.0.0.2"
ATTACKER = "203.0.113.9"
COLLEAGUE = "198.51.100.7"


@pytest.fixture(autouse=True)
def _axes_on(settings):
    settings.AXES_ENABLED = True
    settings.AXES_FAILURE_LIMIT = 10
    settings.AXES_COOLOFF_TIME = timedelta(minutes=15)
    settings.TRUSTED_PROXY_COUNT = 1


def _through_proxy(client_ip: str, spoofed: str = "") -> Client:
    # The proxy appends the address it saw; a client may put anything before it.
    forwarded = f"{spoofed}, {client_ip}" if spoofed else client_ip
    return Client(REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR=forwarded)


def _sign_in(client: Client, password: str, username: str = "ana"):
    return client.post("/accounts/login/", {"username": username, "password": password})


def test_a_strangers_wrong_passwords_through_the_proxy_do_not_lock_the_user_out_elsewhere():
    user_with_role("ana", "analyst")
    attacker = _through_proxy(ATTACKER)
    for n in range(10):
        _sign_in(attacker, f"guess-{n}")
    assert _sign_in(attacker, PASSWORD).status_code == 429  # the stranger is locked out
    # The real user, through the same proxy from their own address, still signs in.
    assert _sign_in(_through_proxy(COLLEAGUE), PASSWORD).status_code == 302


def test_the_client_cannot_choose_its_address_by_writing_x_forwarded_for():
    user_with_role("ana", "analyst")
    # The attacker rotates a spoofed left-most entry; the proxy's entry (their real address) still counts.
    for n in range(10):
        _sign_in(_through_proxy(ATTACKER, spoofed=f"192.0.2.{n}"), f"guess-{n}")
    assert _sign_in(_through_proxy(ATTACKER, spoofed="192.0.2.99"), PASSWORD).status_code == 429


@pytest.mark.parametrize(("count", "forwarded", "expected"), [
    (0, "198.51.100.7", PROXY),  # no trusted proxy: the header is ignored
    (1, "198.51.100.7", "198.51.100.7"),
    (1, "1.2.3.4, 198.51.100.7", "198.51.100.7"),
    (2, "1.2.3.4, 198.51.100.7, 10.0.0.9", "198.51.100.7"),
    (2, "198.51.100.7", PROXY),  # fewer entries than proxies: not through them all
    (1, "not-an-address", PROXY),
    (1, "", PROXY),
])
def test_client_address_is_the_one_the_outermost_trusted_proxy_saw(settings, count, forwarded, expected):
    from config.settings.identity import client_address

    settings.TRUSTED_PROXY_COUNT = count
    request = RequestFactory().get("/", REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR=forwarded)
    assert client_address(request) == expected
