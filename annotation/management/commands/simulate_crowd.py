"""Answer a topic's open HITs with simulated workers (through the same services as real annotators).

    python manage.py simulate_crowd --topic NAME --truth-field FIELD [--truth-value VALUE]
        [--accuracy 0.9] [--workers 30] [--spammers 0] [--seed 1]
"""
from django.core.management.base import BaseCommand, CommandError

from annotation.management.lookups import topic_named
from annotation.services.crowd.crowd_simulation import crowd_simulate
from core.errors import ApplicationError


class Command(BaseCommand):
    help = "Simulate a crowd answering a topic's HITs; truth is read from document metadata."

    def add_arguments(self, parser):
        parser.add_argument("--topic", required=True)
        parser.add_argument("--truth-field", required=True, help="metadata field holding the truth (topic sets: the class named in it)")
        parser.add_argument("--truth-value", default=None, help="on topic when the field equals/contains it (default: topic name)")
        parser.add_argument("--accuracy", type=float, default=0.9)
        parser.add_argument("--workers", type=int, default=30)
        parser.add_argument("--spammers", type=int, default=0)
        parser.add_argument("--seed", type=int, default=1)

    def handle(self, *args, **options):
        topic = topic_named(name=options["topic"])
        try:
            summary = crowd_simulate(
                topic=topic,
                truth_field=options["truth_field"],
                truth_value=options["truth_value"],
                accuracy=options["accuracy"],
                workers=options["workers"],
                spammers=options["spammers"],
                seed=options["seed"],
            )
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(f"Judgments made: {summary.judgments}")
        self.stdout.write(f"Assignments submitted: {summary.assignments}")
        self.stdout.write(f"Cost: ${summary.cost:.2f}")
        if summary.blocked:
            self.stdout.write(f"Workers blocked on gold: {summary.blocked}")
