"""Operating characteristics of the certification protocol, by simulation (seed 004).

    python manage.py certification_oc --metric recall --target 0.75 --true-recall 0.75 \\
        [--alpha 0.05] [--power 0.9] [--runs 1000] [--seed 1] [--accuracy 1.0] [--peek] [--monitor] [--looks 10] \\
        [--plan pilot|truth] [--pilot-size N] [--fixed-size N | --fixed-size A12=60,B2=150] \\
        [--format text|json]

Simulates the whole protocol ``--runs`` times on a generated population whose
metric equals ``--true-recall`` (for ``--metric f1`` that is the true F1):
pilot, plan, fresh sample, three-worker majority labels of the chosen
accuracy, verdict.  Prints the pass rate (the false-pass rate when the true
value equals the target, the power above it) and the judgments used.
``--peek`` also runs the naive protocol that looks after each batch and passes
at the first look whose fixed-sample bound clears the target.  Populations and
caveats: docs/certification.md.
"""
from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from estimation.stats.operating_characteristics import delta_method_pair_planner, simulate_certification

METRICS = {"recall": "pair_recall", "pair_recall": "pair_recall", "f1": "f1", "qbcb": "qbcb_recall",
           "qbcb_recall": "qbcb_recall"}


def _fixed_size(text: str | None) -> dict | int | None:
    if not text:
        return None
    if "=" not in text:
        try:
            return int(text)
        except ValueError:
            raise CommandError(f"--fixed-size must be a number or REGION=N,...; got {text!r}") from None
    sizes = {}
    for part in text.split(","):
        region, _, value = part.partition("=")
        if region.strip() not in ("A12", "B2") or not value.strip().isdigit():
            raise CommandError(f"--fixed-size for pair recall is A12=N,B2=N; got {text!r}")
        sizes[region.strip()] = int(value)
    return sizes


class Command(BaseCommand):
    help = "Simulate the certification protocol and print its pass rate and judgments used."

    def add_arguments(self, parser):
        parser.add_argument("--metric", choices=sorted(METRICS), default="recall",
                            help="recall (pair-based, the default), f1, or qbcb (recall on a uniform sample)")
        parser.add_argument("--target", type=float, required=True, help="the target τ")
        parser.add_argument("--true-recall", "--true-value", dest="true_value", type=float, required=True,
                            help="the metric's true value in the simulated population")
        parser.add_argument("--alpha", type=float, default=0.05)
        parser.add_argument("--power", type=float, default=0.9)
        parser.add_argument("--runs", type=int, default=1000)
        parser.add_argument("--seed", type=int, default=None)
        parser.add_argument("--accuracy", type=float, default=1.0, help="each worker's accuracy (majority of 3)")
        parser.add_argument("--peek", action="store_true", help="also run the naive look-after-every-batch protocol")
        parser.add_argument("--monitor", action="store_true",
                            help="also run the monitored protocol (anytime-valid confidence sequence, stops early)")
        parser.add_argument("--looks", type=int, default=10, help="batches for --peek and --monitor")
        parser.add_argument("--plan", choices=("pilot", "truth"), default="pilot",
                            help="size the sample from a simulated pilot (default) or from the true population")
        parser.add_argument("--pair-planner", choices=("calibrated", "delta"), default="calibrated",
                            help="pair recall only: the service's calibrated sizes (slow: about a second per "
                                 "distinct pilot) or the normal-approximation sizes")
        parser.add_argument("--pilot-size", type=int, default=None,
                            help="pilot documents per region (pair) or in total (uniform)")
        parser.add_argument("--fixed-size", default=None, help="skip the plan: N documents, or A12=N,B2=N")
        parser.add_argument("--delta1-high", type=float, default=1.0,
                            help="pair recall: the upper end of the declared dependence band; the verdict is "
                                 "decided at the least favourable δ1 (the product's default band ends at 1.25; "
                                 "1 assumes independence)")
        parser.add_argument("--format", choices=("text", "json"), default="text")

    def handle(self, *args, **options):
        metric = METRICS[options["metric"]]
        if options["runs"] < 1 or options["runs"] > 1_000_000:
            raise CommandError("--runs must be between 1 and 1,000,000.")
        if options["looks"] < 1:
            raise CommandError("--looks must be at least 1.")
        try:
            result = simulate_certification(
                metric=metric, target=options["target"], true_value=options["true_value"],
                alpha=options["alpha"], power=options["power"], runs=options["runs"], seed=options["seed"],
                accuracy=options["accuracy"], peek=options["peek"], looks=options["looks"],
                pilot_size=options["pilot_size"], fixed_size=_fixed_size(options["fixed_size"]),
                plan_at_truth=options["plan"] == "truth", monitor=options["monitor"],
                pair_planner=delta_method_pair_planner if options["pair_planner"] == "delta" else None,
                delta1_high=options["delta1_high"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        data = result.as_dict()
        if options["format"] == "json":
            self.stdout.write(json.dumps(data, indent=2, sort_keys=True))
            return
        self.stdout.write(self._text(data))

    @staticmethod
    def _text(d: dict) -> str:
        lines = [
            f"Certification protocol, metric {d['metric']}: target {d['target']:g}, true value {d['true_value']:g}, "
            f"alpha {d['alpha']:g}, power {d['power']:g}, worker accuracy {d['accuracy']:g} "
            f"(majority wrong {d['majority_error']:.3f})",
            f"runs: {d['runs']}  seed: {d['seed']}  elapsed: {d['elapsed_seconds']:.1f} s",
            f"pilot documents per run: {d['pilot_judged']:.0f}; plans feasible: {d['planned_rate']:.1%}",
            f"locked protocol pass rate: {d['pass_rate']:.4f} ± {d['pass_rate_se']:.4f} (MC s.e.)"
            + ("" if d["pass_rate_given_planned"] is None else
               f"; among feasible plans {d['pass_rate_given_planned']:.4f}"),
            f"mean certification documents judged: {d['mean_judged']:.1f} ({d['mean_judgments']:.0f} judgments)",
        ]
        if d["peek_pass_rate"] is not None:
            lines.append(f"naive protocol (looks after each of {d['looks']} batches) pass rate: "
                         f"{d['peek_pass_rate']:.4f} ± {d['peek_pass_rate_se']:.4f}; mean documents judged "
                         f"{d['peek_mean_judged']:.1f}")
        if d["monitor_pass_rate"] is not None:
            lines.append(f"monitored protocol (confidence sequence, stops at the first clearing look) pass rate: "
                         f"{d['monitor_pass_rate']:.4f} ± {d['monitor_pass_rate_se']:.4f}; mean documents judged "
                         f"{d['monitor_mean_judged']:.1f}")
        if d["true_value"] <= d["target"]:
            lines.append(f"(true value at or below the target: every pass is a false pass; nominal at most "
                         f"{d['alpha']:g})")
        return "\n".join(lines) + "\n"
