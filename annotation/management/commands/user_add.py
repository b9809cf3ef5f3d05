"""python manage.py user_add <username> --role analyst|manager|annotator [--email …] [--password-stdin].

The password is never an argument (it would sit in the shell history and in `ps`):
it is typed twice at a prompt, or read from the first line of standard input with
--password-stdin (for scripts: `printf '%s\n' "$PW" | manage.py user_add …`).
"""
from __future__ import annotations

import getpass
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.roles import ROLE_PERMISSIONS
from annotation.services.accounts import user_add
from core.errors import ApplicationError


class Command(BaseCommand):
    help = "Create a user with one role (analyst, manager or annotator); the password is prompted or read from stdin."
    stealth_options = ("stdin",)

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--role", required=True, choices=sorted(ROLE_PERMISSIONS))
        parser.add_argument("--email", default="")
        parser.add_argument(
            "--password-stdin", action="store_true", help="read the password from the first line of standard input"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        password = self._password(options)
        try:
            user = user_add(
                username=options["username"], role=options["role"], email=options["email"], password=password
            )
        except ApplicationError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"Created {user.get_username()} with the role {options['role']}.")

    def _password(self, options: dict[str, Any]) -> str:
        stdin = options.get("stdin") or sys.stdin
        if options["password_stdin"]:
            line = stdin.readline()
            password = line[:-1] if line.endswith("\n") else line
            if not password:
                raise CommandError("--password-stdin: standard input held no password.")
            return password
        if not stdin.isatty():
            raise CommandError("No terminal to prompt for the password: use --password-stdin.")
        password = getpass.getpass("Password: ")
        if password != getpass.getpass("Password (again): "):
            raise CommandError("The two passwords differ; nothing was created.")
        return password
