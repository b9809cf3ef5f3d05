"""python manage.py classifier_import_retrieved --corpus NAME --name NAME [--format auto|roaring|parquet]
[--column id] FILE

A retrieved set computed by another engine (Spark, Dask, Ray, pandas): a serialized 32-bit Roaring bitmap of the
corpus's integer external ids, or a Parquet file with a column of external ids (annotation/services/classifiers/retrieved_upload.py).
A file already on the server has no upload size limit; a refused file creates nothing."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Corpus
from annotation.services.classifiers.retrieved_upload import FORMATS, classifier_create_from_retrieved_file
from core.errors import ApplicationError


class Command(BaseCommand):
    help = "Create a classifier from a retrieved set computed elsewhere: a Roaring bitmap or a Parquet file of ids."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path, help="the .roaring / .parquet file")
        parser.add_argument("--corpus", required=True, help="the corpus's name (or id)")
        parser.add_argument("--name", required=True, help="the new classifier's name")
        parser.add_argument("--format", dest="file_format", choices=FORMATS, default="auto",
                            help="auto (default) recognises Parquet by its first bytes; anything else is read as a bitmap")
        parser.add_argument("--column", default="id", help="Parquet: the column holding the external ids (default id)")

    def handle(self, *args: Any, **options: Any) -> None:
        corpus = _corpus(options["corpus"])
        try:
            result = classifier_create_from_retrieved_file(
                corpus=corpus, name=options["name"], path=options["file"], file_format=options["file_format"],
                column=options["column"], size_limited=False)
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        classifier = result.classifier
        self.stdout.write(
            f"Classifier {classifier.name!r} (id {classifier.pk}, {classifier.definition.get('format')}) on corpus "
            f"{corpus.name!r}: {classifier.retrieved_count:,} documents retrieved of {result.read:,} ids read; "
            f"fingerprint {classifier.fingerprint}")
        if result.unknown_count:
            self.stderr.write(f"{result.unknown_count:,} ids are not documents of the corpus, for example "
                              f"{', '.join(result.unknown_examples[:5])}")


def _corpus(value: str) -> Corpus:
    corpus = Corpus.objects.defer("documents_bitmap").filter(name=value).first()
    if corpus is None and value.isdigit():
        corpus = Corpus.objects.defer("documents_bitmap").filter(pk=int(value)).first()
    if corpus is None:
        raise CommandError(f"no corpus named {value!r}")
    return corpus
