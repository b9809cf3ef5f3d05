"""Roles in every deploy: groups from a migration, `user_add` and `user_deactivate` (issue 15, item 1)."""
from __future__ import annotations

import io
import os
import subprocess
import sys
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone

from annotation.models import Assignment, Hit, Worker
from annotation.roles import ROLE_PERMISSIONS
from tests.factories import TopicFactory

ROOT = Path(__file__).resolve().parents[2]
GOOD_PASSWORD = "correct horse battery staple 42"
STARTS = {"analyst": "/analyst/", "manager": "/reports/", "annotator": "/annotate/"}
# Variables a test run may set that a deployment never has.
TEST_ONLY_ENV = {"DATABASE_URL", "REDIS_URL", "DJANGO_SECRET_KEY", "DJANGO_ALLOW_ASYNC_UNSAFE", "DJANGO_SETTINGS_MODULE"}


def _add(username: str, role: str, password: str = GOOD_PASSWORD, **options) -> str:
    out = io.StringIO()
    call_command("user_add", username, role=role, password_stdin=True, stdin=io.StringIO(password + "\n"),
                 stdout=out, **options)
    return out.getvalue()


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


# --- a fresh production deploy ------------------------------------------------------------


@pytest.mark.slow
def test_a_fresh_production_deploy_has_the_roles_and_user_add_gives_one(tmp_path):
    """The issue's case: migrate only (no demo command, which production refuses), then user_add."""
    env = {k: v for k, v in os.environ.items() if k not in TEST_ONLY_ENV}
    env.update({
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DJANGO_SECRET_KEY": "s" * 30 + "-fresh-deploy-test-key-0123456789",
        "APP_VAR_DIR": str(tmp_path),
    })

    def manage(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, input=stdin,
                              capture_output=True, text=True, timeout=180)

    migrated = manage("migrate", "--noinput")
    assert migrated.returncode == 0, migrated.stderr
    added = manage("user_add", "alice", "--role", "analyst", "--email", "alice@example.org", "--password-stdin",
                   stdin=GOOD_PASSWORD + "\n")
    assert added.returncode == 0, added.stderr
    assert GOOD_PASSWORD not in added.stdout + added.stderr
    code = (
        "from django.contrib.auth.models import Group, User;"
        "u = User.objects.get(username='alice');"
        "print(sorted(Group.objects.values_list('name', flat=True)));"
        "print(sorted(u.get_all_permissions()));"
        f"print(u.check_password({GOOD_PASSWORD!r}), u.email, u.is_active, u.is_staff)"
    )
    shown = manage("shell", "-c", code)
    assert shown.returncode == 0, shown.stderr
    groups, perms, rest = shown.stdout.strip().splitlines()[-3:]  # after django-axes' start-up line
    assert groups == "['analyst', 'annotator', 'manager']"
    assert perms == str(sorted(ROLE_PERMISSIONS["analyst"]))
    assert rest == "True alice@example.org True False"


@pytest.mark.django_db
def test_the_roles_migration_creates_the_groups_and_keeps_existing_members():
    """annotation/0009_roles, run again on a database whose groups were removed or left without permissions."""
    from importlib import import_module
    from types import SimpleNamespace

    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    Group.objects.all().delete()
    kept = Group.objects.create(name="manager")  # an old group with a member and no permissions
    member = get_user_model().objects.create_user(username="old-manager", password=GOOD_PASSWORD)
    member.groups.add(kept)
    state_apps = MigrationExecutor(connection).loader.project_state(("annotation", "0009_roles")).apps
    migration = import_module("annotation.migrations.0009_roles")
    for _ in range(2):  # idempotent
        migration.roles_create(state_apps, SimpleNamespace(connection=connection))
    for role, perms in ROLE_PERMISSIONS.items():
        group = Group.objects.get(name=role)
        found = {f"{p.content_type.app_label}.{p.codename}" for p in group.permissions.select_related("content_type")}
        assert found == set(perms), role
    assert Group.objects.get(name="manager").pk == kept.pk
    assert list(member.groups.values_list("name", flat=True)) == ["manager"]
    assert migration.ROLE_PERMISSIONS == {role: tuple(p.split(".")[1] for p in perms)
                                          for role, perms in ROLE_PERMISSIONS.items()}  # the frozen copy is current


# --- user_add ---------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("role", sorted(ROLE_PERMISSIONS))
def test_user_add_creates_a_user_who_signs_in_to_the_role_start_page(role):
    out = _add(f"new-{role}", role, email=f"{role}@example.org")
    assert f"new-{role}" in out and role in out and GOOD_PASSWORD not in out
    user = get_user_model().objects.get(username=f"new-{role}")
    assert list(user.groups.values_list("name", flat=True)) == [role]
    assert user.email == f"{role}@example.org" and user.is_active and not user.is_staff
    client = Client()
    assert client.login(username=f"new-{role}", password=GOOD_PASSWORD)
    assert client.get("/")["Location"] == STARTS[role]


@pytest.mark.django_db
def test_user_add_prompts_twice_on_a_terminal(monkeypatch):
    answers = iter([GOOD_PASSWORD, GOOD_PASSWORD])
    monkeypatch.setattr("getpass.getpass", lambda prompt="": next(answers))
    call_command("user_add", "typed", role="manager", stdin=_Tty(), stdout=io.StringIO())
    assert get_user_model().objects.get(username="typed").check_password(GOOD_PASSWORD)


@pytest.mark.django_db
def test_user_add_refuses_two_different_typed_passwords(monkeypatch):
    answers = iter([GOOD_PASSWORD, GOOD_PASSWORD + "x"])
    monkeypatch.setattr("getpass.getpass", lambda prompt="": next(answers))
    with pytest.raises(CommandError, match="differ"):
        call_command("user_add", "typo", role="manager", stdin=_Tty())
    assert not get_user_model().objects.filter(username="typo").exists()


@pytest.mark.django_db
def test_user_add_without_a_terminal_needs_password_stdin():
    with pytest.raises(CommandError, match="--password-stdin"):
        call_command("user_add", "script", role="manager", stdin=io.StringIO(GOOD_PASSWORD + "\n"))
    assert not get_user_model().objects.filter(username="script").exists()


def test_the_password_is_never_an_argument():
    from annotation.management.commands.user_add import Command

    parser = Command().create_parser("manage.py", "user_add")
    with pytest.raises(CommandError):
        parser.parse_args(["bob", "--role", "analyst", "--password", GOOD_PASSWORD])
    with pytest.raises(CommandError):
        parser.parse_args(["bob", "--role", "analyst", GOOD_PASSWORD])


@pytest.mark.django_db
@pytest.mark.parametrize(
    "password,reason",
    [("short1", "too short"), ("password123", "too common"), ("12345678901", "entirely numeric"), ("\n", "no password")],
)
def test_user_add_refuses_a_weak_or_empty_password(password, reason):
    with pytest.raises(CommandError, match=reason):
        _add("weak", "annotator", password=password.rstrip("\n"))
    assert not get_user_model().objects.filter(username="weak").exists()


@pytest.mark.django_db
def test_user_add_refuses_an_unknown_role_an_existing_user_and_a_bad_email():
    with pytest.raises(CommandError, match="invalid choice"):
        _add("bob", "admin")
    _add("bob", "manager")
    with pytest.raises(CommandError, match="already exists"):
        _add("bob", "analyst")
    assert list(get_user_model().objects.get(username="bob").groups.values_list("name", flat=True)) == ["manager"]
    with pytest.raises(CommandError, match="email"):
        _add("carol", "manager", email="not an address")
    assert not get_user_model().objects.filter(username="carol").exists()


# --- user_deactivate ----------------------------------------------------------------------


@pytest.mark.django_db
def test_user_deactivate_ends_sign_in_and_open_sessions_and_releases_hits_in_progress():
    _add("leaver", "annotator")
    user = get_user_model().objects.get(username="leaver")
    signed_in = Client()
    assert signed_in.login(username="leaver", password=GOOD_PASSWORD)
    assert signed_in.get("/annotate/").status_code in (200, 302)
    topic = TopicFactory.create(status="active")
    hit = Hit.objects.create(topic=topic, reward=Decimal("0.05"))
    worker, _ = Worker.objects.get_or_create(user=user)
    claimed = Assignment.objects.create(hit=hit, worker=worker, slot=0, deadline=timezone.now() + timedelta(hours=1))

    out = io.StringIO()
    call_command("user_deactivate", "leaver", stdout=out)
    assert "1 HITs in progress released" in out.getvalue()

    user.refresh_from_db()
    assert user.is_active is False and user.check_password(GOOD_PASSWORD)  # nothing deleted
    assert Assignment.objects.get(pk=claimed.pk).status == Assignment.Status.EXPIRED
    assert not Client().login(username="leaver", password=GOOD_PASSWORD)
    # The session opened before is no longer a signed-in user.
    assert signed_in.get("/annotate/")["Location"].startswith("/accounts/login/")


@pytest.mark.django_db
def test_user_deactivate_of_an_unknown_user_is_a_clear_error():
    with pytest.raises(CommandError, match="No user named ghost"):
        call_command("user_deactivate", "ghost")
