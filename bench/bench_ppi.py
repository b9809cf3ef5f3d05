"""Stratified PPI++ recall with a model judge (estimation/stats/ppi.py): coverage, width, savings, speed.

`python bench/bench_ppi.py [--studies 400] [--savings-studies 80] [--quick]`

Targets (issue 28):
* coverage of the corpus recall >= 0.93 at judge accuracy 0.6, 0.8, 0.9, 0.97 (>= 200 studies each);
* a judge at chance: interval no more than 5% wider than human-only;
* at judge–human agreement >= 0.9: >= 40% fewer human-judged documents for the same headline half-width;
* report recompute with the rectified estimator <= 200 ms at 1,000,000 judge-read documents (stats part).

Designs (per region: size, share relevant, human labels, documents the judge reads):
* "rare N": A12 4,000 at 0.8, B1 15,000 at 0.3, B2 15,000 at 0.25, N 500,000 at 0.004; humans 150/150/150/1,500,
  judge 1,500/1,500/1,500/15,000 (tests/estimation/stats/test_ppi_coverage.py's design);
* "pair regions": the same without a hard N: N 30,000 at 0.05, humans 150 each and 300 in N, judge 1,500 each
  and 3,000 in N — where a judge at a symmetric accuracy can carry information in every region.
The judge is right with probability `accuracy` on each document whatever its class (a symmetric judge: in a
region at 0.4% prevalence an accuracy of 0.97 still means 3% false alarms, which makes it nearly useless
there, and the estimator then falls back to the human labels in that region).  The savings are also shown for a
judge that is right with probability `accuracy` on N's relevant documents but raises false alarms on only 1% of
its irrelevant ones (its agreement with people in N is then about 0.99; elsewhere it is `accuracy`).

Savings: humans scaled by a factor c in every region (the judge's documents unchanged); the smallest c on a grid
whose mean PPI half-width of r1 is at most the human-only mean half-width at c = 1; savings = 1 − c.
"""
from __future__ import annotations

import argparse
import datetime
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from estimation.stats.ppi import JudgedStratum, ppi_pair_recall

DESIGNS = {
    "rare N": {"A12": (4_000, 0.8, 150, 1_500), "B1": (15_000, 0.3, 150, 1_500), "B2": (15_000, 0.25, 150, 1_500),
               "U": (500_000, 0.004, 1_500, 15_000)},
    "pair regions": {"A12": (4_000, 0.8, 150, 1_500), "B1": (15_000, 0.3, 150, 1_500),
                     "B2": (15_000, 0.25, 150, 1_500), "U": (30_000, 0.05, 300, 3_000)},
}


def study(rng, design, accuracy, scale=1.0, n_false_alarms=None):
    strata, truth = [], {}
    for region, (size, share, n, m) in design.items():
        relevant = round(size * share)
        truth[region] = relevant
        n = max(2, int(round(n * scale)))
        k = rng.hypergeometric(relevant, size - relevant, m)
        y = np.zeros(m)
        y[:k] = 1
        rng.shuffle(y)
        if region == "U" and n_false_alarms is not None:  # sensitivity `accuracy`, false alarms at the given rate
            right = np.where(y == 1, rng.random(m) < accuracy, rng.random(m) >= n_false_alarms)
        else:
            right = rng.random(m) < accuracy
        f = np.where(right, y, 1 - y)
        strata.append(JudgedStratum(region=region, size=size, human=y[:n], judge_on_human=f[:n], judge_only=f[n:]))
    return strata, (truth["A12"] + truth["B1"]) / sum(truth.values())


def run(design, accuracy, studies, seed, scale=1.0, draws=4_000, n_false_alarms=None):
    rng = np.random.default_rng(seed)
    cov = cov_h = 0
    hw, hw_h, saved = [], [], []
    for i in range(studies):
        strata, r1 = study(rng, design, accuracy, scale, n_false_alarms)
        res = ppi_pair_recall(strata, draws=draws, seed=i)
        cov += res.r1.low <= r1 <= res.r1.high
        cov_h += res.r1_human.low <= r1 <= res.r1_human.high
        hw.append(res.r1.half_width)
        hw_h.append(res.r1_human.half_width)
        saved.append(res.human_labels_saved)
    return cov / studies, cov_h / studies, float(np.mean(hw)), float(np.mean(hw_h)), float(np.mean(saved))


def savings(design, accuracy, studies, seed, n_false_alarms=None):
    _, _, _, target, _ = run(design, accuracy, studies, seed, scale=1.0, n_false_alarms=n_false_alarms)
    best = 1.0
    for c in (0.9, 0.8, 0.7, 0.6, 0.5, 0.45, 0.4, 0.35, 0.3, 0.25, 0.2):
        _, _, width, _, _ = run(design, accuracy, studies, seed + 1, scale=c, n_false_alarms=n_false_alarms)
        if width <= target:
            best = c
        else:
            break
    return target, best


def speed(repeats=7):
    """1,000,000 judge-read documents in four regions, 2,100 human labels; 20,000 Monte Carlo draws."""
    rng = np.random.default_rng(0)
    layout = {"A12": (60_000, 0.8, 300, 60_000), "B1": (150_000, 0.3, 300, 150_000),
              "B2": (150_000, 0.25, 300, 150_000), "U": (5_000_000, 0.004, 1_200, 640_000)}
    strata = []
    for region, (size, share, n, m) in layout.items():
        y = (rng.random(m) < share).astype(float)
        f = np.where(rng.random(m) < 0.9, y, 1 - y)
        strata.append(JudgedStratum(region=region, size=size, human=y[:n], judge_on_human=f[:n], judge_only=f[n:]))
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        ppi_pair_recall(strata, draws=20_000, seed=0)
        times.append(time.perf_counter() - t0)
    return sum(len(s.judge_only) + len(s.human) for s in strata), float(np.median(times)), float(max(times))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--studies", type=int, default=400)
    parser.add_argument("--savings-studies", type=int, default=80)
    parser.add_argument("--quick", action="store_true", help="fewer studies (a smoke run, not the figures)")
    args = parser.parse_args()
    if args.quick:
        args.studies, args.savings_studies = 40, 10
    with open("/proc/loadavg") as fh:
        load = fh.read().split()[:3]
    print(f"# bench_ppi {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, load {' '.join(load)}")
    print(f"\n## coverage of the corpus r1 (design 'rare N', {args.studies} studies each, nominal 0.95)")
    print("accuracy  coverage  human-only  half-width  human-only  ratio  human docs saved (equivalent)")
    for accuracy in (0.5, 0.6, 0.8, 0.9, 0.97):
        c, ch, w, wh, sv = run(DESIGNS["rare N"], accuracy, args.studies, seed=int(accuracy * 1000))
        print(f"{accuracy:8.2f}  {c:8.3f}  {ch:10.3f}  {w:10.4f}  {wh:10.4f}  {w / wh:5.3f}  {sv:8.0f}")
    print(f"\n## coverage, design 'pair regions' ({args.studies} studies each)")
    for accuracy in (0.5, 0.8, 0.9, 0.97):
        c, ch, w, wh, sv = run(DESIGNS["pair regions"], accuracy, args.studies, seed=7 + int(accuracy * 1000))
        print(f"{accuracy:8.2f}  {c:8.3f}  {ch:10.3f}  {w:10.4f}  {wh:10.4f}  {w / wh:5.3f}  {sv:8.0f}")
    print(f"\n## human documents for the same headline half-width ({args.savings_studies} studies per point)")
    print("design         judge in N          accuracy  human-only half-width  human docs (c=1)  smallest c  saving")
    for name, design in DESIGNS.items():
        total = sum(v[2] for v in design.values())
        for label, alarms in (("symmetric", None), ("1% false alarms", 0.01)):
            for accuracy in (0.9, 0.97):
                target, c = savings(design, accuracy, args.savings_studies, seed=31, n_false_alarms=alarms)
                print(f"{name:13s}  {label:16s}  {accuracy:8.2f}  {target:21.4f}  {total:16d}  {c:10.2f}  {1 - c:6.0%}")
    documents, median, worst = speed()
    print(f"\n## recompute (stats part): {documents:,} judge-read documents, 20,000 draws: median {median * 1000:.0f} ms, "
          f"max {worst * 1000:.0f} ms of 7")


if __name__ == "__main__":
    main()
