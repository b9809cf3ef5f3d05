"""Seeded simulations of the corpus truth for the stratified PPI++ recall (estimation/stats/ppi.py).

A corpus split into A12, B1, B2 and U with fixed relevant counts; per study the judge reads a simple random
sample of each region (1,500 of A12, B1, B2 and 15,000 of U), humans judge a simple random subsample of it
(150 of each pair region, 1,500 of U), the judge's class is right with probability ``accuracy`` on every
document whatever its class.  The interval must hold the corpus recall r1 = (T12 + T_B1)/N."""
import numpy as np
import pytest

from estimation.stats.ppi import JudgedStratum, ppi_pair_recall

DESIGN = {"A12": (4_000, 0.8, 150, 1_500), "B1": (15_000, 0.3, 150, 1_500), "B2": (15_000, 0.25, 150, 1_500),
          "U": (500_000, 0.004, 1_500, 15_000)}
STUDIES = 400


def _study(rng, accuracy):
    strata, truth = [], {}
    for region, (size, share, n, m) in DESIGN.items():
        relevant = round(size * share)
        truth[region] = relevant
        in_sample = rng.hypergeometric(relevant, size - relevant, m)
        y = np.zeros(m)
        y[:in_sample] = 1
        rng.shuffle(y)
        f = np.where(rng.random(m) < accuracy, y, 1 - y)
        strata.append(JudgedStratum(region=region, size=size, human=y[:n], judge_on_human=f[:n], judge_only=f[n:]))
    return strata, (truth["A12"] + truth["B1"]) / sum(truth.values())


def _run(accuracy, seed):
    rng = np.random.default_rng(seed)
    covered = covered_human = 0
    width = width_human = 0.0
    for i in range(STUDIES):
        strata, r1 = _study(rng, accuracy)
        res = ppi_pair_recall(strata, draws=4_000, seed=i)
        covered += res.r1.low <= r1 <= res.r1.high
        covered_human += res.r1_human.low <= r1 <= res.r1_human.high
        width += res.r1.half_width
        width_human += res.r1_human.half_width
    return covered / STUDIES, covered_human / STUDIES, width / width_human


@pytest.mark.slow
@pytest.mark.parametrize("accuracy", [0.6, 0.8, 0.9, 0.97])
def test_coverage_of_the_corpus_recall_at_any_judge_accuracy(accuracy):
    coverage, coverage_human, ratio = _run(accuracy, seed=int(accuracy * 1000))
    assert coverage >= 0.93, (coverage, coverage_human)
    # The judge never makes the interval wider than the human-only one from the same labels (5% slack).
    assert ratio <= 1.05


@pytest.mark.slow
def test_a_judge_at_chance_costs_at_most_five_percent_of_width():
    coverage, _, ratio = _run(0.5, seed=500)
    assert ratio <= 1.05
    assert coverage >= 0.93


@pytest.mark.slow
def test_a_good_judge_narrows_the_interval():
    _, _, ratio = _run(0.97, seed=970)
    assert ratio < 0.9
