"""Demo accounts: one per role (plus two more annotators, since three distinct workers judge each HIT).

The passwords are fixed and documented (README, `bin/run` prints them) so anyone
running the demo can sign in. They are for a local machine only: under the
production settings this refuses to run.
"""
from __future__ import annotations

import os

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction

from annotation.roles import roles_ensure
from core.errors import ApplicationError

PRODUCTION_SETTINGS = "config.settings.production"

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
    """Create (or reset) the demo accounts in their role groups; returns (role, username, password)."""
    if _settings_module() == PRODUCTION_SETTINGS:
        raise DemoAccountsRefused("Demo accounts with published passwords are never created under production settings.")
    groups = roles_ensure()
    user_model = get_user_model()
    with transaction.atomic():
        for role, username, password in DEMO_ACCOUNTS:
            user, _ = user_model.objects.get_or_create(username=username)
            user.set_password(password)
            user.is_active = True
            user.save()
            user.groups.add(groups[role])
    return list(DEMO_ACCOUNTS)


def _settings_module() -> str:
    # settings.SETTINGS_MODULE is None when settings were configured by a test runner.
    return getattr(settings, "SETTINGS_MODULE", None) or os.environ.get("DJANGO_SETTINGS_MODULE", "")
