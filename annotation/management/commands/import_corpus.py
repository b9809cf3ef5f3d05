"""python manage.py import_corpus FILE --corpus NAME [--id-field id] [--text-fields title,body]"""
import sys
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.services.corpora.corpus_import import CorpusImportError, corpus_import


class Command(BaseCommand):
    help = (
        "Import documents from JSON lines (.jsonl/.json/.ndjson) or CSV (.csv), optionally gzipped. "
        "The first text field becomes the title, the others (joined by a blank line) the text; a single "
        "text field becomes the text. Other fields go to metadata. A bad record aborts the whole import; "
        "documents whose id exists with different content are skipped and reported as conflicts."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--corpus", required=True, help="corpus name (created on first import)")
        parser.add_argument("--id-field", default="id")
        parser.add_argument("--text-fields", default="title,body", help="comma-separated, e.g. title,body")
        parser.add_argument("--format", choices=["jsonl", "csv"], help="override detection by file name")

    def handle(self, *args, **options):
        started = time.monotonic()
        show_bar = sys.stderr.isatty()

        def progress(read: int) -> None:
            if show_bar:
                rate = read / max(time.monotonic() - started, 1e-6)
                sys.stderr.write(f"\r  {read:>12,} documents read  ({rate:,.0f}/s)")
                sys.stderr.flush()

        try:
            summary = corpus_import(
                path=options["file"],
                corpus_name=options["corpus"],
                id_field=options["id_field"],
                text_fields=[f for f in options["text_fields"].split(",") if f.strip()],
                progress=progress,
                file_format=options.get("format"),
            )
        except CorpusImportError as exc:
            raise CommandError(f"import failed, nothing was written: {exc}") from exc
        finally:
            if show_bar:
                sys.stderr.write("\n")
        elapsed = time.monotonic() - started
        self.stdout.write(f"{summary.describe()} in {elapsed:.1f} s")
        if summary.conflicts:
            self.stderr.write(
                self.style.WARNING(
                    f"WARNING: {summary.conflicts} document(s) already exist with different content and were "
                    "skipped (not overwritten):"
                )
            )
            for line, external_id in summary.conflict_examples:
                self.stderr.write(f"  line {line}: id {external_id!r}")
            if summary.conflicts > len(summary.conflict_examples):
                self.stderr.write(f"  ... and {summary.conflicts - len(summary.conflict_examples)} more")
