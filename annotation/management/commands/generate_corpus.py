"""python manage.py generate_corpus OUT.jsonl.gz --documents N --seed S"""
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.demo.corpus import DEFAULT_TOPICS, demo_corpus_write


class Command(BaseCommand):
    help = (
        "Write a synthetic corpus of news-like stories (headline and paragraphs from templates) with planted "
        "rare topics; the metadata field 'topics' holds the truth."
    )

    def add_arguments(self, parser):
        parser.add_argument("out", type=Path)
        parser.add_argument("--documents", type=int, default=20_000)
        parser.add_argument("--seed", type=int, default=1)

    def handle(self, *args, **options):
        if options["documents"] < 1:
            raise CommandError("--documents must be at least 1")
        path = demo_corpus_write(path=options["out"], documents=options["documents"], seed=options["seed"])
        planted = ", ".join(f"{t.name} (~{t.prevalence:.1%})" for t in DEFAULT_TOPICS)
        self.stdout.write(f"Wrote {options['documents']} documents to {path}; planted topics: {planted}")
