"""Answer a topic's open HITs with simulated workers (through the same services as real annotators).

    python manage.py simulate_crowd --topic NAME --truth-field FIELD [--truth-value VALUE]
        [--accuracy 0.9] [--workers 30] [--spammers 0] [--seed 1]

Prints one line (what was answered, the cost); with -v 2 the per-task log lines of Celery (one per judged
HIT when tasks run in the process) are shown as well.
"""
import logging
from collections.abc import Iterator
from contextlib import contextmanager

from django.core.management.base import BaseCommand, CommandError

from annotation.management.lookups import topic_named
from annotation.services.crowd.crowd_simulation import crowd_simulate
from core.errors import ApplicationError

# Loggers that write a line per task run in the process ("Task … succeeded in 0.1s"): quiet below -v 2.
TASK_LOGGERS = ("celery.app.trace", "celery.worker.strategy")


@contextmanager
def _quiet(loggers: tuple[str, ...]) -> Iterator[None]:
    saved = {name: logging.getLogger(name).level for name in loggers}
    for name in loggers:
        logging.getLogger(name).setLevel(logging.WARNING)
    try:
        yield
    finally:
        for name, level in saved.items():
            logging.getLogger(name).setLevel(level)


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
            with _quiet(TASK_LOGGERS if options["verbosity"] < 2 else ()):
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
        blocked = f" Workers blocked on gold: {summary.blocked}." if summary.blocked else ""
        self.stdout.write(f"Judgments made: {summary.judgments} in {summary.assignments} assignments on "
                          f"{topic.name!r}. Cost: ${summary.cost:.2f}.{blocked}")
