"""Demo accounts: one per role, documented passwords that sign in, never under production settings."""
import pytest
from django.test import Client

from annotation.demo.setup import demo_accounts_ensure as demo_lines
from annotation.services import accounts


@pytest.mark.django_db
def test_each_role_gets_an_account_that_signs_in_to_its_start_page():
    created = accounts.demo_accounts_ensure()
    assert {role for role, _, _ in created} == {"analyst", "manager", "annotator"}
    starts = {"analyst": "/analyst/", "manager": "/reports/", "annotator": "/annotate/"}
    for role, username, password in created:
        client = Client()
        assert client.login(username=username, password=password)
        assert client.get("/")["Location"] == starts[role]
    assert accounts.demo_accounts_ensure() == created  # idempotent


@pytest.mark.django_db
def test_demo_setup_prints_names_and_passwords():
    lines = "\n".join(demo_lines())
    for _, username, password in accounts.DEMO_ACCOUNTS:
        assert username in lines and password in lines


@pytest.mark.django_db
def test_refused_under_production_settings(settings):
    settings.SETTINGS_MODULE = "config.settings.production"
    with pytest.raises(accounts.DemoAccountsRefused):
        accounts.demo_accounts_ensure()
    assert "never created under production" in demo_lines()[0]


@pytest.mark.django_db
def test_ensuring_the_demo_accounts_again_keeps_a_changed_password():
    """bin/run ensures the demo on every start: an account whose password was changed keeps it (issue 25 item 3:
    restarts used to reset every demo password, and with it every session's auth hash)."""
    from django.contrib.auth import get_user_model

    role, username, password = accounts.demo_accounts_ensure()[0]
    user = get_user_model().objects.get(username=username)
    user.set_password("changed-by-its-owner-1")
    user.save()
    accounts.demo_accounts_ensure()
    user.refresh_from_db()
    assert user.check_password("changed-by-its-owner-1") and not user.check_password(password)


# --- One check, core.demo.demo_accounts_allowed, for the set-up and the sign-in page (issue 25) ------------


@pytest.mark.django_db
def test_the_sign_in_page_never_lists_demo_accounts_under_production_settings(settings):
    """Accounts that exist (say, a database copied from a demo machine) are still not shown with their published
    passwords once the server runs the production settings: the page asks the same check as the set-up."""
    accounts.demo_accounts_ensure()
    shown = Client().get("/accounts/login/").content.decode()
    assert 'id="demo-accounts"' in shown and "analyst-demo" in shown
    settings.SETTINGS_MODULE = "config.settings.production"
    hidden = Client().get("/accounts/login/").content.decode()
    assert 'id="demo-accounts"' not in hidden and "analyst-demo" not in hidden


@pytest.mark.parametrize(("module", "allowed"), [
    ("config.settings.production", False), ("config.settings.production_eu", False),
    ("config.settings.local", True), ("config.settings.test", True),
])
def test_demo_accounts_allowed_by_settings_module(settings, module, allowed):
    from core.demo import demo_accounts_allowed

    settings.SETTINGS_MODULE = module
    assert demo_accounts_allowed() is allowed


def test_the_real_production_settings_refuse_demo_accounts(tmp_path):
    """Loads config/settings/production.py itself in a fresh process (a renamed module or a settings change that
    lost the refusal would fail here), then asks the one check and the demo set-up's message."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    code = ("import django; django.setup(); from core.demo import demo_accounts_allowed; "
            "from django.conf import settings; print(settings.SETTINGS_MODULE, demo_accounts_allowed())")
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL", "DJANGO_SECRET_KEY"}}
    env.update({"DJANGO_SETTINGS_MODULE": "config.settings.production", "APP_VAR_DIR": str(tmp_path),
                "DJANGO_SECRET_KEY": "k" * 20 + "-Zq8#vR2$pL9!wX4&nB7*tY1^mC6%hJ3",
                "DJANGO_ALLOWED_HOSTS": "recall.example.com"})
    result = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[2], env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["config.settings.production", "False"]
