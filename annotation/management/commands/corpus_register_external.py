"""Register a corpus that stays in its engine, or test one's connection (issue 29).

    manage.py corpus_register_external NAME --engine duckdb --location /data/corpus/ [--text-fields text,abstract]
    manage.py corpus_register_external NAME --check

The same services as the pages and the API (annotation.services.corpora.backends.external).
"""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from annotation.models import ExternalCorpusSource
from annotation.services.corpora.backends.external import external_corpus_check, external_corpus_register
from core.errors import ApplicationError


class Command(BaseCommand):
    help = "Register a corpus kept in Parquet files (DuckDB or Spark), or --check an existing one."

    def add_arguments(self, parser) -> None:
        parser.add_argument("name")
        parser.add_argument("--engine", choices=list(ExternalCorpusSource.Engine.values), default="duckdb")
        parser.add_argument("--location", help="a folder of Parquet files (or one file)")
        parser.add_argument("--id-field", default="id")
        parser.add_argument("--title-field", default="title")
        parser.add_argument("--text-fields", default="text", help="comma-separated")
        parser.add_argument("--connection-env", default="", help="the NAME of an environment variable (never its value)")
        parser.add_argument("--description", default="")
        parser.add_argument("--check", action="store_true", help="test the connection of a registered corpus")

    def handle(self, *args, **options) -> None:
        if options["check"]:
            source = ExternalCorpusSource.objects.select_related("corpus").filter(corpus__name=options["name"]).first()
            if source is None:
                raise CommandError(f"No external corpus named {options['name']!r}.")
            check = external_corpus_check(source=source)
            if not check.ok:
                raise CommandError(check.error)
            self.stdout.write(f"{source.corpus.name}: {check.size} documents, snapshot {check.snapshot}")
            for change in check.changes:
                self.stdout.write(f"  changed: {change}")
            return
        if not options["location"]:
            raise CommandError("Give --location (a folder of Parquet files), or --check.")
        try:
            source = external_corpus_register(
                name=options["name"], engine=options["engine"], location=options["location"],
                id_field=options["id_field"], title_field=options["title_field"],
                text_fields=options["text_fields"].split(","), connection_env=options["connection_env"],
                description=options["description"])
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(f"{source.corpus.name} (corpus {source.corpus_id}): {source.document_count} documents, "
                          f"snapshot {source.snapshot}")
