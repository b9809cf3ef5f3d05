"""Accounts: real users with a role (`user_add`, `user_deactivate`) and the demo accounts.

Real users are created by `manage.py user_add` (docs/deploy.md): one role group,
a password that passes Django's validators, never one given on a command line.
Demo accounts: one per role (plus two more annotators, since three distinct workers
judge each HIT). Their passwords are fixed and documented (README, `bin/run` prints
them) so anyone running the demo can sign in. They are for a local machine only:
under the production settings this refuses to run.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import transaction

from annotation.models import Assignment
from annotation.roles import ROLE_PERMISSIONS, roles_ensure
from core.demo import demo_accounts_allowed
from core.errors import ApplicationError


class AccountRefused(ApplicationError):
    """The account cannot be created or changed as asked; the message says why."""


@dataclass(frozen=True)
class DeactivateResult:
    username: str
    assignments_released: int


def _messages(exc: ValidationError) -> str:
    if hasattr(exc, "error_dict"):
        return " ".join(f"{name}: {' '.join(msgs)}" for name, msgs in exc.message_dict.items())
    return " ".join(exc.messages)


def user_add(*, username: str, role: str, password: str, email: str = "") -> AbstractBaseUser:
    """Create an active, non-staff user in the role's group; refuses an existing name or a weak password."""
    if role not in ROLE_PERMISSIONS:
        raise AccountRefused(f"Unknown role {role!r}: choose one of {', '.join(sorted(ROLE_PERMISSIONS))}.")
    user_model = get_user_model()
    if user_model._default_manager.filter(**{user_model.USERNAME_FIELD: username}).exists():
        raise AccountRefused(f"A user named {username} already exists; change their roles in the admin.")
    user = user_model(**{user_model.USERNAME_FIELD: username, "email": user_model.objects.normalize_email(email)})
    if not password:
        raise AccountRefused("A password is required.")
    try:
        validate_password(password, user=user)
    except ValidationError as exc:
        raise AccountRefused(f"Password refused: {_messages(exc)}") from None
    user.set_password(password)
    try:
        user.full_clean(exclude=["password", "last_login"])
    except ValidationError as exc:
        raise AccountRefused(_messages(exc)) from None
    with transaction.atomic():
        groups = roles_ensure()
        user.save()
        user.groups.add(groups[role])
    return user


def user_deactivate(*, username: str) -> DeactivateResult:
    """No more sign-in (open sessions stop at their next request); HITs in progress are released.

    Nothing is deleted: judgments, reports and audit rows keep their author.
    """
    user_model = get_user_model()
    with transaction.atomic():
        user = user_model._default_manager.filter(**{user_model.USERNAME_FIELD: username}).first()
        if user is None:
            raise AccountRefused(f"No user named {username}.")
        user.is_active = False
        user.save(update_fields=["is_active"])
        # Django refuses an inactive user when it loads a session's user (ModelBackend.get_user).
        released = Assignment.objects.filter(worker__user=user, status=Assignment.Status.CLAIMED).update(
            status=Assignment.Status.EXPIRED
        )
    return DeactivateResult(username=username, assignments_released=released)


# (role, username, password) — documented demo credentials, local use only.
DEMO_ACCOUNTS: tuple[tuple[str, str, str], ...] = (
    ("analyst", "analyst", "analyst-demo"),
    ("manager", "manager", "manager-demo"),
    ("annotator", "annotator", "annotator-demo"),
    ("annotator", "annotator2", "annotator-demo"),
    ("annotator", "annotator3", "annotator-demo"),
)


class DemoAccountsRefused(ApplicationError):
    pass


def demo_accounts_ensure() -> list[tuple[str, str, str]]:
    """Create the demo accounts in their role groups (an existing account keeps its password); returns (role, username, password)."""
    if not demo_accounts_allowed():
        raise DemoAccountsRefused("Demo accounts with published passwords are never created under production settings.")
    groups = roles_ensure()
    user_model = get_user_model()
    with transaction.atomic():
        for role, username, password in DEMO_ACCOUNTS:
            user, created = user_model.objects.get_or_create(username=username)
            if created:
                # Only a new account gets the published password: a restart of bin/run signs nobody out.
                user.set_password(password)
            user.is_active = True
            user.save()
            user.groups.add(groups[role])
    return list(DEMO_ACCOUNTS)
