"""Whether this server may have the demo accounts (published passwords): never under production settings.

The one check, called by the demo set-up (`annotation.services.accounts.demo_accounts_ensure`, which refuses to
create them) and by the sign-in page (`config/urls.py`, which would otherwise list them with their passwords).
It reads only the settings module's name, so it needs no app and no database.
"""
from __future__ import annotations

import os

from django.conf import settings

PRODUCTION_SETTINGS = "config.settings.production"


def settings_module() -> str:
    """The settings module's dotted name (settings.SETTINGS_MODULE is None when a test runner configured them)."""
    return getattr(settings, "SETTINGS_MODULE", None) or os.environ.get("DJANGO_SETTINGS_MODULE", "")


def demo_accounts_allowed() -> bool:
    """False under the production settings (or a module extending them, `config.settings.production_*`):
    demo accounts are neither created nor shown there."""
    module = settings_module()
    return not (module == PRODUCTION_SETTINGS or module.startswith(PRODUCTION_SETTINGS + "_"))
