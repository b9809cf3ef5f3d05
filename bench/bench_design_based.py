"""Judged documents for a design-based recall bound: `python bench/bench_design_based.py`.

Pure statistics (no database).  For a pair of classifiers plus a complement
sample of U (ESTIMATION-NOTES §8; estimation/stats/design_based.py), the
total judged documents in A12, B1, B2 and U needed for a 95% conservative
design-based lower bound on r1 within 0.10 of the truth, planned at the
typical outcome (relevant = n·p in every region), then checked by
simulating studies at that plan (share of studies whose bound is within the
margin; false-pass rate when the target equals the truth).

Scenario 1 (target): prevalence ρ = 1% of 1,000,000 documents, r1 = r2 =
0.7, δ1 = 1, so the pair's union finds 91% of the 10,000 relevant
documents; target total ≤ 50/ρ = 5,000 (uniform sampling needs ~400/ρ).
Scenario 2: notes §2's worked example (|A12| = 5,000 at 0.9, |B2| =
20,000 at 0.1) completed with |B1| = 3,000 at 0.5 and, at independence,
T_U = T_B1·T_B2/T12 = 667 relevant in |U| = 972,000 (corpus 1,000,000).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from estimation.stats.design_based import (  # noqa: E402
    REGIONS,
    complement_sample_size,
    dependent_pair_corpus,
    design_based_recall_arrays,
    design_based_sample_plan,
)

MARGIN, CONFIDENCE, SEED, RUNS = 0.10, 0.95, 20261122, 400


def check_by_simulation(*, sizes, relevant, judged, truth, seed):
    """Simulated studies at the plan: share within the margin, median shortfall, false-pass at target = truth."""
    rng = np.random.default_rng(seed)
    found = {h: rng.hypergeometric(relevant[h], sizes[h] - relevant[h], judged[h], size=RUNS) if sizes[h] else
             np.zeros(RUNS) for h in REGIONS}
    arrays = design_based_recall_arrays(sizes=sizes, judged=judged, relevant=found, which="r1",
                                        confidence=CONFIDENCE, draws=2000, rng=rng)
    shortfall = truth - arrays.conservative_lower_bound
    return float(np.mean(shortfall <= MARGIN)), float(np.median(shortfall)), float(np.mean(shortfall < 0))


def report(name, *, sizes, relevant, prevalence):
    shares = {h: relevant[h] / sizes[h] if sizes[h] else 0.0 for h in REGIONS}
    start = time.perf_counter()
    plan = design_based_sample_plan(
        size_a12=sizes["A12"], precision_a12=shares["A12"], size_b1=sizes["B1"], precision_b1=shares["B1"],
        size_b2=sizes["B2"], precision_b2=shares["B2"], size_u=sizes["U"], prevalence_u=shares["U"],
        margin=MARGIN, confidence=CONFIDENCE, seed=SEED)
    elapsed = time.perf_counter() - start
    within, median, false_pass = check_by_simulation(sizes=sizes, relevant=relevant, judged=plan.judged,
                                                     truth=plan.truth, seed=SEED)
    target = 50.0 / prevalence
    print(f"\n{name}")
    print("  regions: " + ", ".join(f"|{h}| = {sizes[h]:,} ({relevant[h]:,} relevant)" for h in REGIONS))
    print(f"  true r1 = {plan.truth:.3f}; union finds {1 - relevant['U'] / sum(relevant.values()):.1%}; "
          f"elusion rate in U = {shares['U']:.6f}")
    print("  judged: " + ", ".join(f"{h} {plan.judged[h]:,}" for h in REGIONS) + f"; total {plan.total:,}")
    print(f"  planned conservative 95% bound {plan.planned_lower_bound:.3f} (truth − bound "
          f"{plan.truth - plan.planned_lower_bound:.3f} ≤ {MARGIN})")
    print(f"  total / (50/ρ = {target:,.0f}) = {plan.total / target:.2f}; uniform ~400/ρ = {400 / prevalence:,.0f} "
          f"(total / that = {plan.total * prevalence / 400:.3f})")
    print(f"  simulated {RUNS} studies at this plan: bound within {MARGIN} in {within:.1%}, median shortfall "
          f"{median:.3f}, bound above the truth (false pass at target = truth) {false_pass:.1%}")
    print(f"  planning time {elapsed:.1f} s")
    return plan


def main() -> None:
    corpus = dependent_pair_corpus(relevant=10_000, recall1=0.7, recall2=0.7, delta1=1.0, corpus_size=1_000_000)
    plan = report("Scenario 1: ρ = 1%, |corpus| = 1,000,000, r1 = r2 = 0.7, δ1 = 1",
                  sizes=corpus.sizes, relevant=corpus.relevant, prevalence=0.01)
    print(f"  TARGET total ≤ 5,000: {'met' if plan.total <= 5000 else 'NOT met'}")

    sizes = {"A12": 5000, "B1": 3000, "B2": 20_000, "U": 972_000}
    relevant = {"A12": 4500, "B1": 1500, "B2": 2000, "U": 667}
    prevalence = sum(relevant.values()) / 1_000_000
    plan2 = report("Scenario 2: notes §2 worked example + |B1| = 3,000 (p 0.5), |U| = 972,000 with T_U = 667",
                   sizes=sizes, relevant=relevant, prevalence=prevalence)
    fixed = {h: plan2.judged[h] for h in ("A12", "B1", "B2")}
    sized = complement_sample_size(
        size_a12=5000, precision_a12=0.9, judged_a12=fixed["A12"], size_b1=3000, precision_b1=0.5,
        judged_b1=fixed["B1"], size_b2=20_000, precision_b2=0.1, judged_b2=fixed["B2"], size_u=972_000,
        prevalence_u=667 / 972_000, margin=MARGIN, confidence=CONFIDENCE, seed=SEED)
    print(f"  complement_sample_size with A12/B1/B2 judged {fixed['A12']}/{fixed['B1']}/{fixed['B2']}: "
          f"m = {sized.judged_u:,} (expected relevant found {sized.expected_found_in_u:.2f}, planned bound "
          f"{sized.planned_lower_bound:.3f})")


if __name__ == "__main__":
    main()
