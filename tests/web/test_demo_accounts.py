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
