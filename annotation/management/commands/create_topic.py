"""python manage.py create_topic --corpus NAME --name NAME --pair C1 C2 [--instructions TEXT] [--target-recall 0.8] [--extra C3 ...]"""
from django.core.management.base import BaseCommand, CommandError

from annotation.models import Classifier, Corpus
from annotation.services.classifiers.keywords import terms_parse
from annotation.services.topics.topic import TopicError, topic_create


class Command(BaseCommand):
    help = "Create a topic measured with a pair of classifiers of one corpus."

    def add_arguments(self, parser):
        parser.add_argument("--corpus", required=True)
        parser.add_argument("--name", required=True)
        parser.add_argument("--pair", nargs=2, required=True, metavar=("C1", "C2"), help="classifier names")
        parser.add_argument("--instructions", default="")
        parser.add_argument("--target-recall", type=float, default=0.8)
        parser.add_argument("--extra", nargs="*", default=[], metavar="C", help="further classifiers to measure")
        parser.add_argument("--seed-terms", default="", help="comma-separated seed terms (informative)")

    def handle(self, *args, **options):
        try:
            corpus = Corpus.objects.get(name=options["corpus"])
        except Corpus.DoesNotExist:
            raise CommandError(f"no corpus named {options['corpus']!r}") from None

        def classifier(name: str) -> Classifier:
            try:
                return Classifier.objects.get(corpus=corpus, name=name)
            except Classifier.DoesNotExist:
                raise CommandError(f"corpus {corpus.name!r} has no classifier named {name!r}") from None

        c1, c2 = (classifier(name) for name in options["pair"])
        try:
            topic = topic_create(
                corpus=corpus, name=options["name"], c1=c1, c2=c2, instructions=options["instructions"],
                target_recall=options["target_recall"], seed_terms=terms_parse(options["seed_terms"]),
                extra_classifiers=[classifier(name) for name in options["extra"]],
            )
        except TopicError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"Topic {topic.name!r} (id {topic.pk}) on {corpus.name!r}: pair {c1.name!r} × {c2.name!r}")
