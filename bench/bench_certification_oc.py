"""Benchmark: 1,000 runs of the certification protocol simulation (target: <= 60 s each on 2 cores).

    python bench/bench_certification_oc.py [--runs 1000] [--full]

Prints, per configuration, the elapsed time and the measured rates (so the figures
in docs/certification.md can be checked).  The first rows are the issue's command,
``certification_oc --metric M --target 0.75 --true-recall R --alpha 0.05 --power 0.9
--runs 1000 --seed 1``, for each metric at R = tau and R = 0.85 (pilot -> plan ->
fresh sample -> verdict).  ``--full`` adds the monitored protocol on pilot-planned
pair recall (a sample 4 x the plan, confidence sequence after every batch).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from estimation.stats.operating_characteristics import (
    delta_method_pair_planner,
    simulate_certification,
)

TAU = 0.75


def configurations(full: bool):
    for metric in ("pair_recall", "f1", "qbcb_recall"):
        for true_value in (TAU, 0.85):
            yield f"{metric}, pilot-planned, at {true_value}", dict(metric=metric, true_value=true_value)
    yield "f1, fixed 2000, at tau, peek, monitor", dict(metric="f1", true_value=TAU, fixed_size=2000, peek=True,
                                                         monitor=True)
    yield "qbcb, planned at truth, at 0.85, peek", dict(metric="qbcb_recall", true_value=0.85, plan_at_truth=True,
                                                       peek=True)
    yield "qbcb, fixed 3000, at tau, peek, monitor", dict(metric="qbcb_recall", true_value=TAU, fixed_size=3000,
                                                           peek=True, monitor=True)
    yield "pair, planned at truth, at 0.85, peek, monitor", dict(metric="pair_recall", true_value=0.85,
                                                                 plan_at_truth=True, peek=True, monitor=True)
    yield "pair, fixed A12=150 B2=300, at tau, peek, monitor", dict(metric="pair_recall", true_value=TAU,
                                                                    fixed_size={"A12": 150, "B2": 300}, peek=True,
                                                                    monitor=True)
    yield "pair, pilot-planned (delta sizes), at tau, peek", dict(metric="pair_recall", true_value=TAU, peek=True,
                                                                 pair_planner=delta_method_pair_planner)
    if full:
        yield "pair, pilot-planned, at tau, monitor", dict(metric="pair_recall", true_value=TAU, monitor=True)
        yield "pair, pilot-planned, at 0.85, monitor", dict(metric="pair_recall", true_value=0.85, monitor=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--full", action="store_true")
    args = parser.parse_args()
    print(f"certification protocol simulation, {args.runs} runs, tau = {TAU}, alpha = 0.05, power = 0.9, seed 1")
    for name, options in configurations(args.full):
        started = time.perf_counter()
        result = simulate_certification(target=TAU, alpha=0.05, power=0.9, runs=args.runs, seed=1, **options)
        elapsed = time.perf_counter() - started
        peek = "" if result.peek_pass_rate is None else (
            f"  peek {result.peek_pass_rate:.4f}±{result.peek_pass_rate_se:.4f} (judged {result.peek_mean_judged:.0f})")
        if result.monitor_pass_rate is not None:
            peek += (f"  monitor {result.monitor_pass_rate:.4f}±{result.monitor_pass_rate_se:.4f} "
                     f"(judged {result.monitor_mean_judged:.0f})")
        print(f"{name:52s} {elapsed:7.1f} s  pass {result.pass_rate:.4f}±{result.pass_rate_se:.4f}  "
              f"feasible {result.planned_rate:.3f}  judged {result.mean_judged:.0f}{peek}", flush=True)


if __name__ == "__main__":
    main()
