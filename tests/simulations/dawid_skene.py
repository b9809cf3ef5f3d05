"""Coverage of Dawid–Skene recall intervals, simulated against the truth (issue 24 item 5); the set-up and
measured figures are in tests/estimation/stats/test_dawid_skene_intervals.py."""
from __future__ import annotations

import numpy as np

from estimation.stats.aggregation import dawid_skene, dawid_skene_draws

A, N = 1_000, 20_000
TRUTH = A * 0.85 / (A * 0.85 + N * 0.02)
STUDIES = 100
DRAWS = 300


def simulate(rng: np.random.Generator, *, accuracy: float, judged_a: int = 200, judged_n: int = 400,
             workers: int = 40):
    relevant = np.concatenate([rng.random(judged_a) < 0.85, rng.random(judged_n) < 0.02])
    strata = np.r_[np.zeros(judged_a, int), np.ones(judged_n, int)]
    n = relevant.size
    items = np.repeat(np.arange(n), 3)
    who = np.argsort(rng.random((n, workers)), axis=1)[:, :3].ravel()
    skill = np.clip(rng.normal(accuracy, 0.05, workers), 0.55, 0.99)
    labels = np.where(rng.random(3 * n) < skill[who], relevant[items], ~relevant[items]).astype(int)
    return strata, items, who, labels


def recall_interval(true_labels: np.ndarray, strata: np.ndarray, rng: np.random.Generator) -> tuple[float, float]:
    weights = rng.exponential(size=true_labels.shape)
    shares = [(weights * true_labels)[:, strata == g].sum(axis=1) / weights[:, strata == g].sum(axis=1) for g in (0, 1)]
    recall = A * shares[0] / (A * shares[0] + N * shares[1])
    low, high = np.quantile(recall, [0.025, 0.975])
    return float(low), float(high)


def coverage(accuracy: float, *, seed: int = 2024, studies: int = STUDIES) -> tuple[float, float]:
    """(EM plug-in coverage, Bayesian Dawid–Skene coverage) of the true recall."""
    rng = np.random.default_rng(seed)
    plug_in = bayes = 0
    for study in range(studies):
        strata, items, who, labels = simulate(rng, accuracy=accuracy)
        em = dawid_skene(items=items, workers=who, labels=labels, strata=strata)
        p = em.posterior[:, 1]
        low, high = recall_interval((rng.random((DRAWS, p.size)) < p).astype(float), strata, rng)
        plug_in += low <= TRUTH <= high
        fit = dawid_skene_draws(items=items, workers=who, labels=labels, strata=strata, draws=DRAWS, burn_in=100,
                                seed=study)
        low, high = recall_interval(fit.labels.astype(float), strata, rng)
        bayes += low <= TRUTH <= high
    return plug_in / studies, bayes / studies
