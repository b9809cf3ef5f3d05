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
Scenarios 3–4 (issue 11 Targets): Reuters-21578 topics `coffee` and `gold`
read from ../shared/data/reuters21578.jsonl.gz when present (skipped with a
note otherwise; never copied into the repository), C1 = title keywords,
C2 = body keywords as in bench_planning.py / docs/benchmarks.md; region
sizes and true relevant counts from the labels.  The corpus has ~21,600
documents, so at ρ ≈ 0.6% uniform sampling's ~400/ρ exceeds the corpus:
the ratio to it is printed with that caveat.

Run: cd /work/main && .venv/bin/python bench/bench_design_based.py [path/to/reuters21578.jsonl.gz]
"""
from __future__ import annotations

import gzip
import json
import re
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from estimation.stats.design_based import (
    REGIONS,
    complement_prior_prevalences,
    complement_sample_size,
    complement_sample_size_prior,
    dependent_pair_corpus,
    design_based_recall_arrays,
    design_based_sample_plan,
)

MARGIN, CONFIDENCE, SEED, RUNS = 0.10, 0.95, 20261122, 400
DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "reuters21578.jsonl.gz"
# Topic → (title keywords for C1, body keywords for C2), as bench_planning.py.
REUTERS_TOPICS = {
    "coffee": ({"coffee"}, {"coffee", "arabica", "robusta", "ico"}),
    "gold": ({"gold"}, {"gold", "bullion", "ounce", "ounces"}),
}
WORD = re.compile(r"[a-z]+")


def check_by_simulation(*, sizes, relevant, judged, truth, seed):
    """Simulated studies at the plan: share within the margin, median shortfall, false-pass at target = truth."""
    rng = np.random.default_rng(seed)
    found = {h: rng.hypergeometric(relevant[h], sizes[h] - relevant[h], judged[h], size=RUNS) if sizes[h] else
             np.zeros(RUNS) for h in REGIONS}
    arrays = design_based_recall_arrays(sizes=sizes, judged=judged, relevant=found, which="r1",
                                        confidence=CONFIDENCE, draws=2000, rng=rng)
    shortfall = truth - arrays.conservative_lower_bound
    return float(np.mean(shortfall <= MARGIN)), float(np.median(shortfall)), float(np.mean(shortfall < 0))


def report(name, *, sizes, relevant, prevalence, smooth=False):
    """Plan, print and check by simulation.  smooth: plan at shares (T + ½)/(|h| + 1).

    design_based_sample_plan's Neyman weights are |h|·√(p(1 − p)): a region whose share is
    exactly 0 or 1 (on Reuters, U holds no relevant document at all) gets only the minimum of
    30 and the plan fails ("even judging every document does not reach the margin").  The
    smoothed shares keep that weight positive; the truth and the simulation use the real counts.
    """
    shares = {h: relevant[h] / sizes[h] if sizes[h] else 0.0 for h in REGIONS}
    if smooth:
        shares = {h: (relevant[h] + 0.5) / (sizes[h] + 1) if sizes[h] else 0.0 for h in REGIONS}
    truth = (relevant["A12"] + relevant["B1"]) / sum(relevant.values())
    start = time.perf_counter()
    plan = design_based_sample_plan(
        size_a12=sizes["A12"], precision_a12=shares["A12"], size_b1=sizes["B1"], precision_b1=shares["B1"],
        size_b2=sizes["B2"], precision_b2=shares["B2"], size_u=sizes["U"], prevalence_u=shares["U"],
        margin=MARGIN, confidence=CONFIDENCE, seed=SEED)
    elapsed = time.perf_counter() - start
    within, median, false_pass = check_by_simulation(sizes=sizes, relevant=relevant, judged=plan.judged,
                                                     truth=truth, seed=SEED)
    target = 50.0 / prevalence
    print(f"\n{name}")
    print("  regions: " + ", ".join(f"|{h}| = {sizes[h]:,} ({relevant[h]:,} relevant)" for h in REGIONS))
    if smooth:
        print(f"  planned at smoothed shares (T + ½)/(|h| + 1): planning r1 {plan.truth:.3f}")
    print(f"  true r1 = {truth:.3f}; union finds {1 - relevant['U'] / sum(relevant.values()):.1%}; "
          f"elusion rate in U = {relevant['U'] / sizes['U']:.6f}")
    print("  judged: " + ", ".join(f"{h} {plan.judged[h]:,}" for h in REGIONS) + f"; total {plan.total:,}")
    print(f"  planned conservative 95% bound {plan.planned_lower_bound:.3f} (planning truth − bound "
          f"{plan.truth - plan.planned_lower_bound:.3f} ≤ {MARGIN})")
    print(f"  total / (50/ρ = {target:,.0f}) = {plan.total / target:.2f}; uniform ~400/ρ = {400 / prevalence:,.0f} "
          f"(total / that = {plan.total * prevalence / 400:.3f})")
    print(f"  simulated {RUNS} studies at this plan: bound within {MARGIN} in {within:.1%}, median shortfall "
          f"{median:.3f}, bound above the truth (false pass at target = truth) {false_pass:.1%}")
    print(f"  planning time {elapsed:.1f} s")
    # The plan above is for the typical outcome (about half the studies land within the margin).
    # For an assured plan, shrink the planning margin until 90% of simulated studies are within 0.10.
    for planning_margin in (0.09, 0.08, 0.07, 0.06, 0.05, 0.04):
        assured = design_based_sample_plan(
            size_a12=sizes["A12"], precision_a12=shares["A12"], size_b1=sizes["B1"], precision_b1=shares["B1"],
            size_b2=sizes["B2"], precision_b2=shares["B2"], size_u=sizes["U"], prevalence_u=shares["U"],
            margin=planning_margin, confidence=CONFIDENCE, seed=SEED)
        share, _, _ = check_by_simulation(sizes=sizes, relevant=relevant, judged=assured.judged, truth=truth,
                                          seed=SEED + 1)
        if share >= 0.9:
            print(f"  assured (bound within {MARGIN} in {share:.1%} of {RUNS} studies; planned at margin "
                  f"{planning_margin}): total {assured.total:,} = {assured.total / target:.2f} × 50/ρ, "
                  f"{assured.total * prevalence / 400:.3f} × 400/ρ; " + ", ".join(f"{h} {assured.judged[h]:,}" for h in REGIONS))
            break
    else:
        print(f"  no planning margin down to 0.04 gave the bound within {MARGIN} in 90% of studies")
    return plan


def reuters_regions(docs: list[dict], topic: str, title_words: set[str], body_words: set[str]):
    """Region sizes and true relevant counts of the pair (title filter, body filter) on one topic."""
    def words(text: str) -> set[str]:
        return set(WORD.findall(text.lower()))

    relevant = np.array([topic in d["topics"] for d in docs])
    c1 = np.array([bool(words(d["title"]) & title_words) for d in docs])
    c2 = np.array([bool(words(d["body"]) & body_words) for d in docs])
    masks = {"A12": c1 & c2, "B1": c1 & ~c2, "B2": c2 & ~c1, "U": ~(c1 | c2)}
    sizes = {h: int(m.sum()) for h, m in masks.items()}
    counts = {h: int((m & relevant).sum()) for h, m in masks.items()}
    return sizes, counts, int(relevant.sum()) / len(docs)


def reuters(path: Path) -> None:
    if not path.exists():
        print(f"\n(Reuters-21578 not found at {path}: scenarios 3–4 skipped)")
        return
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        docs = [json.loads(line) for line in handle]
    for number, (topic, (title_words, body_words)) in enumerate(REUTERS_TOPICS.items(), start=3):
        sizes, counts, prevalence = reuters_regions(docs, topic, title_words, body_words)
        union = 1 - counts["U"] / sum(counts.values())
        name = (f"Scenario {number}: Reuters-21578 `{topic}`, |corpus| = {len(docs):,}, ρ = {prevalence:.4f}; "
                f"C1 = title ∋ {sorted(title_words)}, C2 = body ∋ {sorted(body_words)}")
        try:
            plan = report(name, sizes=sizes, relevant=counts, prevalence=prevalence, smooth=True)
        except ValueError as exc:
            print(f"\n{name}\n  no plan: {exc}")
            continue
        verdict = "≥ 90%: the target applies" if union >= 0.9 else "below 90%: outside the target's premise"
        print(f"  union finds {union:.1%} of the relevant documents ({verdict}); TARGET total ≤ 50/ρ = "
              f"{50 / prevalence:,.0f}: {'met' if plan.total <= 50 / prevalence else 'NOT met'}")
        print(f"  uniform sampling ~400/ρ = {400 / prevalence:,.0f} exceeds the corpus ({len(docs):,}): judging "
              f"everything is the uniform alternative here, and the plan is {plan.total / len(docs):.1%} of it")


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
    # Notes §9: size N from a conservative prior (N holding 10%, 33%, 100% of what the pair's regions hold).
    prior = complement_sample_size_prior(
        prevalences=complement_prior_prevalences(pair_relevant=8000, size_u=972_000),
        size_a12=5000, precision_a12=0.9, judged_a12=fixed["A12"], size_b1=3000, precision_b1=0.5,
        judged_b1=fixed["B1"], size_b2=20_000, precision_b2=0.1, judged_b2=fixed["B2"], size_u=972_000,
        margin=MARGIN, confidence=CONFIDENCE, seed=SEED)
    print(f"  complement_sample_size_prior (conservative prior, notes §9): m = {prior.judged_u:,} "
          f"(per prevalence: {', '.join(f'{p:.5f} → {m}' for p, m in prior.per_prevalence)})")
    reuters(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_DATA)


if __name__ == "__main__":
    main()
