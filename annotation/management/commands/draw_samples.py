"""Draw a topic's samples, queue them into HITs and publish them to the topic's crowd.

    python manage.py draw_samples --topic NAME [--half-width 0.05 | --per-region N]
        [--uniform N] [--complement N] [--extra-per-classifier N] [--seed S] [--design stratified|paper]

Sizes are totals: running it again tops the samples up to the new totals (or draws nothing).
"""
from django.core.management.base import BaseCommand, CommandError

from annotation.management.lookups import topic_named
from annotation.services.crowd.crowds import CrowdUnavailable
from annotation.services.crowd.hits import BudgetExceeded
from annotation.services.sampling.draws import DESIGNS, SamplingError, samples_launch


class Command(BaseCommand):
    help = "Draw samples for a topic's classifier pair and publish the HITs."

    def add_arguments(self, parser):
        parser.add_argument("--topic", required=True, help="topic name")
        size = parser.add_mutually_exclusive_group()
        size.add_argument("--half-width", type=float, help="target half-width of the recall interval (default 0.05)")
        size.add_argument("--per-region", type=int, help="documents per region (total, including earlier draws)")
        parser.add_argument("--uniform", type=int, default=0, help="documents of a uniform corpus sample (total)")
        parser.add_argument("--complement", type=int, default=0,
                            help="dependence check: documents of region N, retrieved by neither classifier (total)")
        parser.add_argument("--extra-per-classifier", type=int, default=None,
                            help="precision sample of each further classifier (total)")
        parser.add_argument("--seed", type=int, default=None, help="random seed (default: a fresh one, recorded)")
        parser.add_argument("--design", choices=DESIGNS, default="stratified")
        parser.add_argument("--no-publish", action="store_true", help="create the HITs without offering them")

    def handle(self, *args, **options):
        topic = topic_named(name=options["topic"])
        try:
            launch = samples_launch(
                topic=topic,
                publish=not options["no_publish"],
                half_width=options["half_width"],
                per_region=options["per_region"],
                uniform=options["uniform"],
                complement=options["complement"],
                extra_per_classifier=options["extra_per_classifier"],
                seed=options["seed"],
                design=options["design"],
            )
        except (SamplingError, BudgetExceeded, CrowdUnavailable) as exc:
            raise CommandError(str(exc)) from exc
        for draw in launch.draws:
            label = f"{draw.region}" + (f" ({draw.classifier})" if draw.classifier_id else "")
            self.stdout.write(
                f"{label}: drew {draw.drawn} of {draw.region_size} (requested {draw.requested}, seed {draw.seed})"
            )
        if not launch.draws:
            self.stdout.write("Nothing new to draw: the samples already have the requested sizes.")
        self.stdout.write(self.style.SUCCESS(f"{launch.documents} documents drawn, {len(launch.hits)} HITs created."))
