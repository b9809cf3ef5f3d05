"""python manage.py add_classifier --corpus NAME --name NAME (--keywords TERMS --fields title|text|title,text | --ids FILE | --scores FILE --threshold T)"""
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Corpus
from annotation.services.classifiers.classifier import (
    ClassifierError,
    classifier_create_from_ids,
    classifier_create_from_scores,
    classifier_create_keywords,
)
from annotation.services.classifiers.keywords import terms_parse


class Command(BaseCommand):
    help = "Define a classifier: a keyword filter, a list of retrieved ids, or scores with a threshold."

    def add_arguments(self, parser):
        parser.add_argument("--corpus", required=True)
        parser.add_argument("--name", required=True)
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--keywords", help='comma-separated terms or phrases, e.g. "coffee,arabica,green coffee"')
        source.add_argument("--ids", type=Path, help="file with one external document id per line")
        source.add_argument("--scores", type=Path, help="CSV id,score (header optional)")
        # No default, as on the keyword form (no field ticked in advance): a "title" filter must read titles only,
        # so where the terms are looked for is always said, never assumed (issue 26 item 1).
        parser.add_argument("--fields", default=None,
                            help="with --keywords (required): where to look, among title,text, e.g. title or title,text")
        parser.add_argument("--threshold", type=float, help="with --scores: retrieved when score >= threshold")

    def handle(self, *args, **options):
        try:
            corpus = Corpus.objects.get(name=options["corpus"])
        except Corpus.DoesNotExist:
            raise CommandError(f"no corpus named {options['corpus']!r}") from None
        if options["scores"] is not None and options["threshold"] is None:
            raise CommandError("--scores needs --threshold")
        if options["scores"] is None and options["threshold"] is not None:
            raise CommandError("--threshold only goes with --scores")
        if options["keywords"] is not None and not (options["fields"] or "").strip():
            raise CommandError("--keywords needs --fields: title, text or title,text (where the terms are looked for; "
                               "nothing is read by default, as on the keyword form)")
        if options["keywords"] is None and options["fields"] is not None:
            raise CommandError("--fields only goes with --keywords")
        try:
            if options["keywords"] is not None:
                classifier = classifier_create_keywords(
                    corpus=corpus, name=options["name"], terms=terms_parse(options["keywords"]),
                    fields=[f.strip() for f in options["fields"].split(",") if f.strip()],
                )
                result = None
            elif options["ids"] is not None:
                result = classifier_create_from_ids(corpus=corpus, name=options["name"], path=options["ids"])
                classifier = result.classifier
            else:
                result = classifier_create_from_scores(
                    corpus=corpus, name=options["name"], path=options["scores"], threshold=options["threshold"]
                )
                classifier = result.classifier
        except ClassifierError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            f"Classifier {classifier.name!r} ({classifier.get_kind_display().lower()}) on corpus {corpus.name!r}: "
            f"{classifier.retrieved_count} documents retrieved; fingerprint {classifier.fingerprint}"
        )
        if result is not None and result.unknown_count:
            self.stderr.write(
                self.style.WARNING(
                    f"WARNING: {result.unknown_count} of {result.read} ids are not in the corpus and were ignored, "
                    f"e.g. {', '.join(repr(i) for i in result.unknown_examples)}"
                )
            )
