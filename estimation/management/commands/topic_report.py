"""Print a topic's recall report as JSON or CSV.

    python manage.py topic_report --topic NAME [--format json|csv] [--snapshot latest|fresh]

`latest` (default) prints the latest stored snapshot (and fails when there is
none yet); `fresh` computes the report from the current labels without storing it.
"""
from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from annotation.management.lookups import topic_named
from estimation.selectors import topic_report_latest
from estimation.services.report_csv import topic_report_csv
from estimation.services.reports import DEFAULT_DRAWS, topic_report_build


class Command(BaseCommand):
    help = "Print a topic's recall report (JSON or CSV), from the latest snapshot or computed fresh."

    def add_arguments(self, parser):
        parser.add_argument("--topic", required=True, help="topic name")
        parser.add_argument("--format", choices=("json", "csv"), default="json")
        parser.add_argument("--snapshot", choices=("latest", "fresh"), default="latest")
        parser.add_argument("--draws", type=int, default=DEFAULT_DRAWS, help="posterior draws (fresh only)")

    def handle(self, *args, **options):
        topic = topic_named(name=options["topic"])
        if options["snapshot"] == "fresh":
            if options["draws"] < 100:
                raise CommandError("--draws must be at least 100.")
            report = topic_report_build(topic=topic, draws=options["draws"])
        else:
            report = topic_report_latest(topic=topic)
            if report is None:
                raise CommandError(
                    f"Topic {topic.name!r} has no stored snapshot yet; use --snapshot fresh to compute one now."
                )
        if options["format"] == "csv":
            self.stdout.write(topic_report_csv(report=report), ending="")
        else:
            self.stdout.write(json.dumps(report, indent=2, ensure_ascii=False, allow_nan=False))
