"""Timings of the part-B statistics: certification test-set size (seed 004, Alg. 2),
the pair-recall and QBCB certification sizes as the service plans them, and the F1
posterior (seed 002) with 200,000 draws.

Run: cd /work/main && python bench/bench_certification.py
Target: certification_test_size <= 2 s per call on a 2-core machine.
"""
from __future__ import annotations

import functools
import pathlib
import statistics
import sys
import time
from collections.abc import Callable
from typing import TypeVar

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import numpy as np

from estimation.stats.certification import (
    certification_test_size,
    certification_test_size_closed_form,
)
from estimation.stats.certification_sizing import (
    _cached_fixed_lower_bound,
    pair_recall_calibrated_size,
    qbcb_certification_size,
)
from estimation.stats.f1_posterior import average_f1_posterior, binary_f1_posterior

PILOTS = [  # (label, pilot counts, target)
    ("F1 0.80 pilot 3,000, target 0.75", dict(tp=300, fp=60, fn=90, tn=2550), 0.75),
    ("F1 0.80 pilot 3,000, target 0.70", dict(tp=300, fp=60, fn=90, tn=2550), 0.70),
    ("F1 0.74 pilot 20,000, target 0.72 (large size)", dict(tp=1400, fp=600, fn=360, tn=17640), 0.72),
    ("F1 0.95 pilot 1,000, target 0.90", dict(tp=190, fp=10, fn=10, tn=790), 0.90),
    ("rare topic F1 0.71 pilot 10,000, target 0.60", dict(tp=30, fp=20, fn=5, tn=9945), 0.60),
]

PAIR_PILOTS = [  # (label, A12 (size, judged, relevant), B2 (size, judged, relevant), target)
    ("pilot r1 0.85, 40 per region, target 0.6", (3100, 40, 36), (1700, 40, 12), 0.6),
    ("pilot r1 0.85, 100 per region, target 0.75", (9444, 100, 90), (5000, 100, 30), 0.75),
    ("pilot r1 0.82, 100 per region, target 0.75", (8233, 100, 92), (8233, 100, 20), 0.75),
    ("pilot r1 0.80, 100 per region, target 0.75 (large)", (8233, 100, 93), (8233, 100, 24), 0.75),
    ("pilot r1 0.80, 300 per region, target 0.75", (8233, 300, 279), (8233, 300, 70), 0.75),
]
QBCB_PILOTS = [  # (label, relevant, found, judged, target)
    ("recall 0.90, 2,000 judged, 100 relevant, target 0.75", 100, 90, 2000, 0.75),
    ("recall 0.85, 2,000 judged, 100 relevant, target 0.75", 100, 85, 2000, 0.75),
]

_T = TypeVar("_T")

FIGURE_3 = [[145, 1, 2, 1, 0], [5, 256, 22, 9, 6], [5, 24, 234, 36, 19],
            [1, 18, 32, 243, 25], [1, 5, 9, 38, 254]]


def _time(function: Callable[[], _T], repeats: int = 3) -> tuple[float, _T]:
    times: list[float] = []
    results: list[_T] = []
    for _ in range(repeats):
        start = time.perf_counter()
        results.append(function())
        times.append(time.perf_counter() - start)
    return statistics.median(times), results[-1]


def main() -> None:
    print("certification_test_size (Alg. 2, 10,000 simulations per theta*), median of 3:")
    for label, pilot, target in PILOTS:
        seconds, size = _time(functools.partial(certification_test_size, **pilot, target=target, seed=1))
        closed = certification_test_size_closed_form(**pilot, target=target)
        print(f"  {label:50s} size {size:>8,d}  closed form {closed:>8,d}  {seconds:6.3f} s")

    print("pair_recall_calibrated_size as the service calls it (1,000 bound draws, pilot assurance), cold cache:")
    for label, a12, b2, target in PAIR_PILOTS:
        def plan(a12=a12, b2=b2, target=target):
            _cached_fixed_lower_bound.cache_clear()
            return pair_recall_calibrated_size(
                size_a12=a12[0], size_other=b2[0], p12=(a12[2] + 0.5) / (a12[1] + 1), p_other=(b2[2] + 0.5) / (b2[1] + 1),
                target=target, alpha=0.05, power=0.9, draws=1000, seed=1,
                pilot={"A12": a12[1:], "other": b2[1:]})
        try:
            seconds, sizes = _time(plan)
            print(f"  {label:50s} A12 {sizes['A12']:>6,d}  B2 {sizes['B2']:>6,d}  power {sizes['power']:.3f}  {seconds:6.3f} s")
        except ValueError as exc:  # CertificationImpossible
            print(f"  {label:50s} refused: {exc}")
    print("qbcb_certification_size (64 posterior draws), median of 3:")
    for label, relevant, found, judged, target in QBCB_PILOTS:
        seconds, size = _time(functools.partial(qbcb_certification_size, relevant=relevant, found=found,
                                                judged=judged, target_recall=target, seed=1))
        print(f"  {label:50s} size {size:>8,d}  {seconds:6.3f} s")

    print("F1 posterior, 200,000 draws, median of 3:")
    seconds, _ = _time(lambda: average_f1_posterior(confusion=FIGURE_3, draws=200_000, seed=1))
    print(f"  average_f1_posterior, seed 002 Figure 3 (K = 5)          {seconds:6.3f} s")
    matrix = np.random.default_rng(0).integers(0, 300, size=(10, 10)) + np.diag(np.full(10, 2000))
    seconds, _ = _time(lambda: average_f1_posterior(confusion=matrix, draws=200_000, seed=1))
    print(f"  average_f1_posterior, K = 10                             {seconds:6.3f} s")
    seconds, _ = _time(lambda: binary_f1_posterior(tp=80, fp=20, fn=30, tn=900, draws=200_000, seed=1))
    print(f"  binary_f1_posterior (tn given, K = 2 model)              {seconds:6.3f} s")


if __name__ == "__main__":
    main()
