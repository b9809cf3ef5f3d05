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
from estimation.services.multiclass_report import (
    MULTICLASS_DRAWS,
    multiclass_inputs_gather,
    multiclass_parameters,
    multiclass_report_from_inputs,
)
from estimation.services.report_csv import topic_report_csv
from estimation.services.reports import DEFAULT_DRAWS, DEFAULT_SEED, topic_report_build


class Command(BaseCommand):
    help = "Print a topic's recall report (JSON or CSV), from the latest snapshot or computed fresh."

    def add_arguments(self, parser):
        parser.add_argument("--topic", required=True, help="topic name")
        parser.add_argument("--format", choices=("json", "csv"), default="json")
        parser.add_argument("--snapshot", choices=("latest", "fresh"), default="latest")
        parser.add_argument(
            "--draws", type=int, default=None,
            help=f"posterior draws (fresh only; default {DEFAULT_DRAWS}, topic sets {MULTICLASS_DRAWS})",
        )

    def handle(self, *args, **options):
        topic = topic_named(name=options["topic"])
        if options["snapshot"] == "fresh":
            draws = options["draws"]
            if draws is not None and draws < 100:
                raise CommandError("--draws must be at least 100.")
            if topic.is_multiclass:  # a topic set: seed 002's report (estimation/services/multiclass_report.py)
                parameters = multiclass_parameters(draws=draws or MULTICLASS_DRAWS, seed=DEFAULT_SEED)
                report = multiclass_report_from_inputs(inputs=multiclass_inputs_gather(topic=topic, parameters=parameters))
            else:
                report = topic_report_build(topic=topic, draws=draws or DEFAULT_DRAWS)
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
