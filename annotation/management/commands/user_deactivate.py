"""python manage.py user_deactivate <username>: the account can no longer sign in; nothing is deleted.

Sessions already open stop working at their next request (Django refuses inactive
users when it loads the session's user). Judgments, reports and audit rows keep pointing at the user. The user's HITs in
progress are released for other annotators. Reactivate in the admin (Users → Active).
"""
from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.services.accounts import user_deactivate
from core.errors import ApplicationError


class Command(BaseCommand):
    help = "Deactivate a user: no more sign-in (open sessions stop working), HITs in progress released."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            result = user_deactivate(username=options["username"])
        except ApplicationError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            f"Deactivated {options['username']}: open sessions no longer work, "
            f"{result.assignments_released} HITs in progress released."
        )
