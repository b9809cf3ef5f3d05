"""Judgments the stratified pair design needs versus uniform sampling (ESTIMATION-NOTES §2).

Prints, for ±0.05 at 95%:
  * the notes' worked example (|A12| = 5,000, |B2| = 20,000, p12 = 0.9, p_B2 = 0.1);
  * two Reuters-21578 topics with C1 = keyword filter on the title and
    C2 = keyword filter on the body; region sizes and precisions are exact
    because the topics are labelled.
Target: the stratified design reaches ±0.05 at 95% with at most 1/20 of the
judgments uniform sampling needs at prevalence 0.01 (38,415 → ≤ 1,921).

Also times stratified_pair_recall with 20,000 draws.

Run: cd /work/main && python bench/bench_planning.py [path/to/reuters21578.jsonl.gz]
"""
from __future__ import annotations

import gzip
import json
import pathlib
import re
import statistics
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import numpy as np

from estimation.stats.pair_recall import pair_recall_eq2, pair_recall_interval, stratified_pair_recall
from estimation.stats.planning import plan_pair_sample, uniform_sample_size

DEFAULT_DATA = pathlib.Path(__file__).resolve().parents[2] / "shared" / "data" / "reuters21578.jsonl.gz"
HALF_WIDTH, CONFIDENCE = 0.05, 0.95
TARGET_RATIO = 1 / 20

# Topic → (title keywords for C1, body keywords for C2).  The body filter uses
# different words from the title filter where possible, to keep C1 and C2 as
# independent as keyword filters on one document can be.
TOPICS = {
    "coffee": ({"coffee"}, {"coffee", "arabica", "robusta", "ico"}),
    "gold": ({"gold"}, {"gold", "bullion", "ounce", "ounces"}),
}

WORD = re.compile(r"[a-z]+")


def words(text: str) -> set[str]:
    return set(WORD.findall(text.lower()))


def load(path: pathlib.Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def print_plan(label: str, plan, *, extra: str = "", corpus_corrected: bool = False) -> None:
    worst_001 = uniform_sample_size(prevalence=0.01, half_width=HALF_WIDTH, confidence=CONFIDENCE)
    ratio_001 = plan.stratified_total / worst_001
    print(f"  {label}")
    print(f"    stratified (Neyman) : {plan.stratified_total:>7,}  {plan.stratified}")
    print(f"    paper's design      : {plan.paper_design_total:>7,}  {plan.paper_design}")
    if plan.uniform_total:
        print(f"    uniform at π={plan.uniform_prevalence:.4f}: {plan.uniform_total:>7,}"
              f"{' (finite-population corrected: the corpus is small)' if corpus_corrected else ''}"
              f"  → stratified/uniform = {plan.ratio_to_uniform:.4f} (1/{1 / plan.ratio_to_uniform:.0f})")
    verdict = "meets" if ratio_001 <= TARGET_RATIO else "MISSES"
    print(f"    vs uniform worst case at π=0.01 ({worst_001:,}): ratio {ratio_001:.4f} "
          f"(1/{1 / ratio_001:.0f}) — {verdict} the 1/20 target{extra}")


def simulate_plan(*, size12: int, k12: int, size_b: int, k_b: int, n12: int, n_b: int, runs: int = 400) -> str:
    """Draw the planned samples from the finite population and measure the interval actually reported.

    Planning uses the delta-method variance; the library reports the
    conservative Monte Carlo interval, which is a little wider.
    """
    rng = np.random.default_rng(0)
    truth = k12 / (k12 + k_b)
    x12 = rng.hypergeometric(k12, size12 - k12, n12, size=runs)
    x_b = rng.hypergeometric(k_b, size_b - k_b, n_b, size=runs) if n_b else np.zeros(runs)
    _, low, high = pair_recall_interval(size_a12=size12, judged_a12=n12, relevant_a12=x12, size_other=size_b,
                                        judged_other=n_b, relevant_other=x_b, confidence=CONFIDENCE,
                                        draws=4000, rng=rng)
    half = (high - low) / 2
    covered = np.mean((low <= truth) & (truth <= high))
    return (f"simulated ({runs} samples of the plan): mean half-width {half.mean():.3f}, "
            f"90th percentile {np.quantile(half, 0.9):.3f}, coverage {covered:.3f}")


def worked_example() -> None:
    print("Notes §2 worked example (infinite regions, as in the notes):")
    plan = plan_pair_sample(size_a12=5000, size_b2=20000, p12=0.9, p_b2=0.1, prevalence=0.01,
                            finite_population=False, half_width=HALF_WIDTH, confidence=CONFIDENCE)
    print_plan("r1 ±0.05 at 95%", plan, extra="  (notes: 775 / 3,006 / 32,732)")
    print("    " + simulate_plan(size12=5000, k12=4500, size_b=20000, k_b=2000,
                               n12=plan.stratified["A12"], n_b=plan.stratified["B2"]))
    plan = plan_pair_sample(size_a12=5000, size_b2=20000, p12=0.9, p_b2=0.1, prevalence=0.01,
                            half_width=HALF_WIDTH, confidence=CONFIDENCE)
    print_plan("same with finite-population correction", plan)


def reuters_topic(docs: list[dict], topic: str, title_words: set[str], body_words: set[str]) -> None:
    n = len(docs)
    relevant = np.array([topic in d["topics"] for d in docs])
    c1 = np.array([bool(words(d["title"]) & title_words) for d in docs])
    c2 = np.array([bool(words(d["body"]) & body_words) for d in docs])
    regions = {"A12": c1 & c2, "B1": c1 & ~c2, "B2": c2 & ~c1}
    size = {k: int(v.sum()) for k, v in regions.items()}
    rel = {k: int((v & relevant).sum()) for k, v in regions.items()}
    prec = {k: rel[k] / size[k] if size[k] else float("nan") for k in regions}
    t = int(relevant.sum())
    r1_true, r2_true = (c1 & relevant).sum() / t, (c2 & relevant).sum() / t
    p1, p2 = (c1 & relevant).sum() / c1.sum(), (c2 & relevant).sum() / c2.sum()
    print(f"\nReuters-21578 topic {topic!r}: |U| = {n:,}, relevant {t} (π = {t / n:.4f}); "
          f"C1 = title ∋ {sorted(title_words)}, C2 = body ∋ {sorted(body_words)}")
    for k in regions:
        print(f"  {k:>3}: size {size[k]:>5}, relevant {rel[k]:>4}, precision {prec[k]:.3f}")
    # Exact precisions, i.e. every region judged in full: the estimator's bias alone.
    census = {k: (size[k], size[k], rel[k]) for k in regions}
    exact = stratified_pair_recall(a12=census["A12"], b1=census["B1"], b2=census["B2"], corpus_size=n, draws=1000, seed=0)
    eq2 = pair_recall_eq2(p1=p1, p2=p2, a1=int(c1.sum()), a2=int(c2.sum()), a12=size["A12"], u=n)
    print(f"  true recall r1 = {r1_true:.3f}, r2 = {r2_true:.3f};  Eq. 1 (exact precisions) r1 = {exact.r1.point:.3f}, "
          f"r2 = {exact.r2.point:.3f};  Eq. 2 r1 = {eq2:.3f};  diagnostics: {', '.join(exact.codes)}")
    for target in ("r1", "both"):
        plan = plan_pair_sample(
            size_a12=size["A12"], size_b1=size["B1"], size_b2=size["B2"],
            p12=prec["A12"], p_b1=prec["B1"], p_b2=prec["B2"], target=target,
            prevalence=t / n, corpus_size=n, half_width=HALF_WIDTH, confidence=CONFIDENCE,
        )
        print_plan(f"target {target} ±0.05 at 95%", plan, corpus_corrected=True)
        if target == "r1":
            print("    " + simulate_plan(size12=size["A12"], k12=rel["A12"], size_b=size["B2"], k_b=rel["B2"],
                                       n12=plan.stratified["A12"], n_b=plan.stratified["B2"]))


def timing() -> None:
    times = []
    for seed in range(20):
        start = time.perf_counter()
        stratified_pair_recall(a12=(5000, 200, 180), b1=(3000, 200, 40), b2=(20000, 700, 70),
                               corpus_size=650_000, seed=seed, draws=20_000)
        times.append(time.perf_counter() - start)
    print(f"\nstratified_pair_recall, 20,000 draws: median {statistics.median(times) * 1000:.0f} ms, "
          f"max {max(times) * 1000:.0f} ms over {len(times)} calls")


def main() -> None:
    path = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_DATA
    worked_example()
    if path.exists():
        docs = load(path)
        for topic, (title_words, body_words) in TOPICS.items():
            reuters_topic(docs, topic, title_words, body_words)
    else:
        print(f"\n(Reuters data not found at {path}; skipped)")
    timing()


if __name__ == "__main__":
    main()
