"""Login throttling (issue 15 item 4): "30 wrong passwords then the right one: signed in".

django-axes locks a username from one address out after AXES_FAILURE_LIMIT failures
(10 in production, from the environment) for AXES_COOLOFF_TIME (15 minutes). The test
settings turn axes off (Django's test client signs in without a request, which axes
refuses); these tests turn it on.
"""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client

from tests.factories import PASSWORD, user_with_role

pytestmark = pytest.mark.django_db

ATTACKER = "203.0.113.9"
COLLEAGUE = "198.51.100.7"


@pytest.fixture(autouse=True)
def _axes_on(settings):
    settings.AXES_ENABLED = True
    settings.AXES_FAILURE_LIMIT = 10
    settings.AXES_COOLOFF_TIME = timedelta(minutes=15)
    settings.AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]


def _sign_in(client: Client, password: str, username: str = "ana"):
    return client.post("/accounts/login/", {"username": username, "password": password})


def test_thirty_wrong_passwords_then_the_right_one_does_not_sign_in():
    user_with_role("ana", "analyst")
    client = Client(REMOTE_ADDR=ATTACKER)
    statuses = [_sign_in(client, f"guess-{n}").status_code for n in range(30)]
    # The first nine failures show the form again; the tenth and every later attempt are refused.
    assert statuses[:9] == [200] * 9 and set(statuses[9:]) == {429}
    response = _sign_in(client, PASSWORD)
    assert response.status_code == 429
    assert "_auth_user_id" not in client.session
    assert "Too many failed sign-in attempts" in response.content.decode()
    assert client.get("/analyst/")["Location"].startswith("/accounts/login/")


def test_the_lockout_is_per_username_and_address_and_ends_after_the_cool_off():
    from axes.models import AccessAttempt

    user_with_role("ana", "analyst")
    attacker = Client(REMOTE_ADDR=ATTACKER)
    for n in range(10):
        _sign_in(attacker, f"guess-{n}")
    assert _sign_in(attacker, PASSWORD).status_code == 429
    # The real user at another address still signs in; so does another account at the attacker's address.
    colleague = Client(REMOTE_ADDR=COLLEAGUE)
    assert _sign_in(colleague, PASSWORD).status_code == 302
    user_with_role("bob", "manager")
    assert _sign_in(attacker, PASSWORD, username="bob").status_code == 302
    # Fifteen minutes later the lock is gone.
    AccessAttempt.objects.update(attempt_time=AccessAttempt.objects.first().attempt_time - timedelta(minutes=16))
    assert _sign_in(Client(REMOTE_ADDR=ATTACKER), PASSWORD).status_code == 302


def test_the_admin_sign_in_is_throttled_too():
    user_with_role("root", None, is_staff=True)
    client = Client(REMOTE_ADDR=ATTACKER)
    for n in range(10):
        client.post("/admin/login/", {"username": "root", "password": f"guess-{n}"})
    response = client.post("/admin/login/", {"username": "root", "password": PASSWORD})
    assert response.status_code == 429
    assert "_auth_user_id" not in client.session


def test_limits_come_from_the_environment(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if k not in {"DJANGO_SETTINGS_MODULE", "DATABASE_URL", "REDIS_URL"}}
    env.update({"DJANGO_SETTINGS_MODULE": "config.settings.local", "APP_VAR_DIR": str(tmp_path),
                "AXES_FAILURE_LIMIT": "5", "AXES_COOLOFF_MINUTES": "60"})
    code = ("import django; django.setup(); from django.conf import settings; "
            "print(settings.AXES_FAILURE_LIMIT, settings.AXES_COOLOFF_TIME, settings.AXES_LOCKOUT_PARAMETERS)")
    result = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[0] == "5 1:00:00 [['username', 'ip_address']]"
