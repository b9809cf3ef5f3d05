"""python manage.py token_create <username> --name … [--scope read|read_write] [--days N].

For an operator setting up a pipeline's token from the server (the same service as /account/tokens/,
`api.services.api_token_create`, which checks the scope and the term). The token is printed once, on
standard output alone, so `TOKEN=$(manage.py token_create …)` captures it; only its hash is stored.
"""
from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser

from api.models import TokenScope
from api.services import api_token_create
from core.errors import ApplicationError


class Command(BaseCommand):
    help = "Create an API token for a user, with its scope and days until it expires; prints the token once."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--name", required=True, help="what will use the token, e.g. 'nightly pipeline'")
        parser.add_argument("--scope", default=TokenScope.READ_WRITE.value,
                            help="read or read_write (default read_write)")
        parser.add_argument("--days", type=int, default=None,
                            help="days until the token expires (default API_TOKEN_DEFAULT_DAYS)")

    def handle(self, *args: Any, **options: Any) -> None:
        user = User.objects.filter(username=options["username"]).first()
        if user is None:
            raise CommandError(f"There is no user {options['username']!r}.")
        try:
            created = api_token_create(user=user, name=options["name"], scope=options["scope"],
                                       expires_in_days=options["days"])
        except ApplicationError as exc:
            raise CommandError(str(exc)) from exc
        token = created.token
        self.stderr.write(f"Created token {token.name!r} ({token.get_scope_display()}), "
                          f"expires {token.expires_at:%Y-%m-%d %H:%M} UTC. It is shown once:")
        self.stdout.write(created.plaintext)
