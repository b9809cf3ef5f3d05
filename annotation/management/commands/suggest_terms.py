"""python manage.py suggest_terms --corpus NAME --seed "coffee,arabica" [-k 10] [--measure jaccard|overlap]"""
from django.core.management.base import BaseCommand, CommandError

from annotation.models import Corpus
from annotation.services.classifiers.classifier import ClassifierError
from annotation.services.classifiers.keywords import terms_parse
from annotation.services.classifiers.term_suggestions import neighbour_terms_suggest


class Command(BaseCommand):
    help = "Suggest neighbour terms of seed terms by Jaccard or overlap similarity of document sets (seed 000, Sec. 6.1.1)."

    def add_arguments(self, parser):
        parser.add_argument("--corpus", required=True)
        parser.add_argument("--seed", required=True, help="comma-separated seed terms")
        parser.add_argument("-k", type=int, default=10)
        parser.add_argument("--measure", choices=["jaccard", "overlap"], default="jaccard")
        parser.add_argument("--fields", default="title,text")
        parser.add_argument("--min-doc-count", type=int, default=2)

    def handle(self, *args, **options):
        try:
            corpus = Corpus.objects.get(name=options["corpus"])
        except Corpus.DoesNotExist:
            raise CommandError(f"no corpus named {options['corpus']!r}") from None
        try:
            terms = neighbour_terms_suggest(
                corpus=corpus, seed_terms=terms_parse(options["seed"]), k=options["k"], measure=options["measure"],
                fields=options["fields"].split(","), min_doc_count=options["min_doc_count"],
            )
        except ClassifierError as exc:
            raise CommandError(str(exc)) from exc
        if not terms:
            self.stdout.write("No document matches the seed terms.")
            return
        self.stdout.write(f"{'term':<24} {options['measure']:>8} {'documents':>10}")
        for term in terms:
            self.stdout.write(f"{term.term:<24} {term.score:>8.4f} {term.doc_count:>10}")
