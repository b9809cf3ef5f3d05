"""Seed 003 pooled recall: simulation truth on a synthetic 3-system population.

Expected values are the population's true recalls, hand algebra in comments,
or independent scipy computations — never numbers the estimator produced.
"""
import json

import numpy as np
import pytest
from scipy import stats

from estimation.stats.pooled_recall import CorpusSample, SystemSample, pooled_recall, product_se

NAMES = ("A", "B", "C")


def synthetic_population(seed=0):
    """50,000 documents, 1,000 relevant; systems A and B share a latent "easy" factor, C does not.

    That correlation is what biases naive pooled recall (seed 003, Fig. 3):
    sampling A and B separately over-represents A ∩ B, so C looks worse.
    """
    rng = np.random.default_rng(seed)
    n_docs, n_relevant = 50_000, 1000
    relevant = np.zeros(n_docs, dtype=bool)
    relevant[:n_relevant] = True
    easy, other = rng.random(n_docs), rng.random(n_docs)
    a, b, c = (np.zeros(n_docs, dtype=bool) for _ in range(3))
    r = slice(0, n_relevant)
    a[r] = easy[r] < 0.6
    b[r] = (easy[r] < 0.5) | (rng.random(n_relevant) < 0.1)
    c[r] = other[r] < 0.4
    noise = slice(n_relevant, n_docs)
    n_noise = n_docs - n_relevant
    a[noise] = rng.random(n_noise) < 0.01
    b[noise] = (rng.random(n_noise) < 0.008) | (a[noise] & (rng.random(n_noise) < 0.5))
    c[noise] = rng.random(n_noise) < 0.012
    return relevant, np.stack([a, b, c], axis=1)


def draw_inputs(rng, relevant, membership, *, per_system=100, corpus=3000):
    holders = {}
    systems = []
    for j, name in enumerate(NAMES):
        output = np.flatnonzero(membership[:, j])
        sample = rng.choice(output, per_system, replace=True)
        retrieved_by = []
        for doc in sample:
            if doc not in holders:
                holders[doc] = [NAMES[k] for k in range(len(NAMES)) if membership[doc, k]]
            retrieved_by.append(holders[doc])
        systems.append(SystemSample(name=name, retrieved=output.size, relevant=relevant[sample].astype(float),
                                    retrieved_by=retrieved_by))
    corpus_ids = rng.choice(relevant.size, corpus, replace=False)
    pool = membership.any(axis=1)
    return systems, CorpusSample(relevant=relevant[corpus_ids].astype(float), in_pool=pool[corpus_ids])


@pytest.mark.slow
def test_true_recall_is_nearly_unbiased_and_intervals_cover():
    """300 simulated evaluations, 100 judged documents per system, 3,000 judged from the corpus.

    Bias tolerance 0.02: the estimator is a product of ratio estimators, biased
    at order 1/n (about 0.01 here by a second-order expansion of ν̂ with n = 300
    sampled documents in total and of θ̂ with ~60 relevant documents), and the
    Monte Carlo error of the mean over 300 runs is ≈ 0.004.  Coverage of the
    nominal 90% interval must be ≥ 0.85 (Monte Carlo SE ≈ 0.017).  The naive,
    unweighted pooled recall must be visibly biased for A (correlated with B).
    """
    relevant, membership = synthetic_population()
    truth = membership[relevant].mean(axis=0)
    theta = membership.any(axis=1)[relevant].mean()
    rng = np.random.default_rng(1)
    estimates, naive, covered = [], [], []
    for run in range(300):
        systems, corpus = draw_inputs(rng, relevant, membership)
        result = pooled_recall(systems=systems, corpus_sample=corpus, confidence=0.9, draws=1000, seed=run)
        estimates.append([s.true_recall for s in result.systems])
        naive.append([s.naive_pooled_recall * theta for s in result.systems])
        covered.append([s.true_recall_low <= t <= s.true_recall_high for s, t in zip(result.systems, truth)])
    bias = np.mean(estimates, axis=0) - truth
    assert np.abs(bias).max() < 0.02, bias
    assert np.mean(covered, axis=0).min() >= 0.85, np.mean(covered, axis=0)
    naive_bias = np.mean(naive, axis=0) - truth
    assert naive_bias[0] > 0.04 and abs(naive_bias[0]) > 3 * abs(bias[0])


def test_ninety_percent_interval_is_5th_to_95th_percentile():
    # Notes §7: a 90% interval of θ must be the 5th–95th percentiles of its posterior,
    # here Jeffreys Beta(30.5, 10.5) for 30 of 40 relevant documents in the pool.
    systems = [SystemSample(name="A", retrieved=100, relevant=[1.0] * 10, retrieved_by=[["A"]] * 10)]
    corpus = CorpusSample(relevant=[1.0] * 40 + [0.0] * 60, in_pool=[True] * 30 + [False] * 70)
    result = pooled_recall(systems=systems, corpus_sample=corpus, confidence=0.9, draws=200_000, seed=0)
    assert result.pool_recall == pytest.approx(0.75)
    assert result.pool_recall_low == pytest.approx(stats.beta.ppf(0.05, 30.5, 10.5), abs=0.002)
    assert result.pool_recall_high == pytest.approx(stats.beta.ppf(0.95, 30.5, 10.5), abs=0.002)


def test_disjoint_systems_by_hand():
    # Disjoint outputs, everything relevant: each sampled document has q = w_j/|S_j|, so
    # system j's weighted sum is |S_j| and ν_i = |S_i|/Σ|S_j| = 100/400 and 300/400.
    systems = [
        {"name": "X", "retrieved": 100, "relevant": [1.0] * 20, "retrieved_by": [["X"]] * 20},
        {"name": "Y", "retrieved": 300, "relevant": [1.0] * 50, "retrieved_by": [["Y"]] * 50},
    ]
    result = pooled_recall(systems=systems, draws=200, seed=0)
    assert result.system("X").pooled_recall == pytest.approx(0.25)
    assert result.system("Y").pooled_recall == pytest.approx(0.75)
    assert result.pool_relevant_total == pytest.approx(400.0)
    assert result.system("X").true_recall is None  # no corpus sample, no θ
    json.dumps(result.as_dict())


def test_identical_systems_have_pooled_recall_one():
    systems = [
        {"name": n, "retrieved": 50, "relevant": [1, 0, 1, 1], "retrieved_by": [["P", "Q"]] * 4} for n in ("P", "Q")
    ]
    result = pooled_recall(systems=systems, draws=200, seed=0)
    assert [s.pooled_recall for s in result.systems] == pytest.approx([1.0, 1.0])


def test_product_se_includes_the_squares():
    # Hand: 0.8²·0.1² + 0.5²·0.05² + 0.05²·0.1² = 0.0064 + 0.000625 + 0.000025 = 0.00705.
    assert product_se(mean_a=0.8, se_a=0.05, mean_b=0.5, se_b=0.1) == pytest.approx(np.sqrt(0.00705))
    # And it is the exact SD of a product of independent variables (simulation).
    rng = np.random.default_rng(0)
    draws = rng.normal(0.8, 0.05, 1_000_000) * rng.normal(0.5, 0.1, 1_000_000)
    assert draws.std() == pytest.approx(np.sqrt(0.00705), rel=0.01)


@pytest.mark.parametrize(
    "systems",
    [
        [{"name": "A", "retrieved": 10, "relevant": [1, 0], "retrieved_by": [["A"]]}],  # lengths differ
        [{"name": "A", "retrieved": 10, "relevant": [1], "retrieved_by": [["Z"]]}],  # unknown system
        [{"name": "A", "retrieved": 10, "relevant": [2], "retrieved_by": [["A"]]}],  # label outside [0, 1]
        [{"name": "A", "retrieved": 10, "relevant": [1], "retrieved_by": [["A"]]}] * 2,  # duplicate names
        [{"name": "A", "retrieved": -1, "relevant": [], "retrieved_by": []}],
        [],
    ],
)
def test_invalid_input_raises(systems):
    with pytest.raises(ValueError):
        pooled_recall(systems=systems)


# --------------------------------------------------------------------------- the pair design's stratified samples
# Issue 11 item 6: with the default stratified design the pair's classifiers have no sample of their own.

from estimation.stats.pooled_recall import PoolNotSampled, StratumSample  # noqa: E402

PAIR_NAMES = ("C1", "C2", "C3")


def pair_population(seed=0):
    """100,000 documents, 1,000 relevant (ρ = 1%).  C1 and C3 share a latent "easy" factor, C2 is independent.

    Truth (computed from the population in the tests): C1 ≈ 0.47, C2 ≈ 0.84, C3 ≈ 0.34, pool ≈ 0.92.
    C3 finds mostly documents C1 finds too, so C3's sample alone says C1 finds almost everything.
    """
    rng = np.random.default_rng(seed)
    n_docs, n_relevant = 100_000, 1_000
    relevant = np.zeros(n_docs, dtype=bool)
    relevant[:n_relevant] = True
    easy, other = rng.random(n_docs), rng.random(n_docs)
    c1 = np.where(relevant, easy < 0.5, rng.random(n_docs) < 0.01)
    c2 = np.where(relevant, other < 0.85, rng.random(n_docs) < 0.015)
    c3 = np.where(relevant, (easy < 0.35) | (rng.random(n_docs) < 0.03), rng.random(n_docs) < 0.008)
    return relevant, np.stack([c1, c2, c3], axis=1)


def pair_design_inputs(rng, relevant, membership, *, per_region=100, corpus=3000):
    """What the product's default design judges: A12, B1, B2 (100 each), C3's output (100), the corpus (3,000)."""
    c1, c2, c3 = membership.T

    def holders(doc):
        return [PAIR_NAMES[k] for k in range(3) if membership[doc, k]]

    strata = []
    for name, mask, inside, outside in (("A12", c1 & c2, ("C1", "C2"), ()), ("B1", c1 & ~c2, ("C1",), ("C2",)),
                                        ("B2", c2 & ~c1, ("C2",), ("C1",))):
        ids = rng.choice(np.flatnonzero(mask), per_region, replace=False)
        strata.append(StratumSample(name=name, size=int(mask.sum()), inside=inside, outside=outside,
                                    relevant=relevant[ids].astype(float), retrieved_by=[holders(d) for d in ids]))
    ids = rng.choice(np.flatnonzero(c3), per_region, replace=False)
    systems = [
        SystemSample(name="C1", retrieved=int(c1.sum()), relevant=[], retrieved_by=[]),
        SystemSample(name="C2", retrieved=int(c2.sum()), relevant=[], retrieved_by=[]),
        SystemSample(name="C3", retrieved=int(c3.sum()), relevant=relevant[ids].astype(float),
                     retrieved_by=[holders(d) for d in ids]),
    ]
    corpus_ids = rng.choice(relevant.size, corpus, replace=False)
    return systems, strata, CorpusSample(relevant=relevant[corpus_ids].astype(float),
                                         in_pool=membership[corpus_ids].any(axis=1))


def test_pair_without_samples_of_its_own_is_refused_not_overstated():
    """The issue's case (C1 "true recall" 0.880 [0.757, 0.950] against 0.506), rebuilt with a known truth.

    The old report passed C1 and C2 with empty samples, so only C3's sample was seen: every
    sampled document has the same q, and C1's pooled recall is the share of C3's relevant
    documents that C1 holds.  Recomputed by hand here: far above the truth.  Now refused.
    """
    relevant, membership = pair_population()
    truth_c1 = membership[relevant, 0].mean()
    systems, _, corpus = pair_design_inputs(np.random.default_rng(3), relevant, membership)
    c3 = systems[2]
    in_c1 = np.array(["C1" in holders for holders in c3.retrieved_by])
    labels = np.asarray(c3.relevant)
    old_nu = (labels * in_c1).sum() / labels.sum()
    old_theta = (np.asarray(corpus.relevant) * np.asarray(corpus.in_pool)).sum() / np.sum(corpus.relevant)
    assert truth_c1 == pytest.approx(0.47, abs=0.03)
    assert old_nu * old_theta > truth_c1 + 0.25  # the defect: 0.91 × 0.84 = 0.77 against 0.47
    with pytest.raises(PoolNotSampled, match="C1, C2"):
        pooled_recall(systems=systems, corpus_sample=corpus, draws=200, seed=0)


@pytest.mark.slow
def test_stratified_pair_samples_give_true_recall_within_its_interval():
    """200 simulated studies of the default design (seed 4): bias < 0.02 and 95% coverage ≥ 0.9 for every classifier.

    Bias tolerance as in the test above (ratio estimators, order 1/n, plus Monte Carlo error
    ≈ 0.003); coverage Monte Carlo SE ≈ 0.015.  Measured: bias ≤ 0.005, coverage 0.93–0.97.
    """
    relevant, membership = pair_population()
    truth = membership[relevant].mean(axis=0)
    rng = np.random.default_rng(4)
    estimates, covered = [], []
    for run in range(200):
        systems, strata, corpus = pair_design_inputs(rng, relevant, membership)
        result = pooled_recall(systems=systems, strata=strata, corpus_sample=corpus, confidence=0.95, draws=1000,
                               seed=run)
        estimates.append([s.true_recall for s in result.systems])
        covered.append([s.true_recall_low <= t <= s.true_recall_high for s, t in zip(result.systems, truth)])
    bias = np.mean(estimates, axis=0) - truth
    assert np.abs(bias).max() < 0.02, bias
    assert np.mean(covered, axis=0).min() >= 0.9, np.mean(covered, axis=0)


def test_region_samples_by_hand():
    # Everything relevant; regions XY (|100|), X only (200), Y only (300), sampled 10/20/5.  With the
    # balance heuristic each region's documents sum to |region|: Σ = 600, ν_X = 300/600, ν_Y = 400/600.
    strata = [
        StratumSample(name="XY", size=100, inside=("X", "Y"), outside=(), relevant=[1.0] * 10,
                      retrieved_by=[["X", "Y"]] * 10),
        {"name": "Xo", "size": 200, "inside": ["X"], "outside": ["Y"], "relevant": [1.0] * 20,
         "retrieved_by": [["X"]] * 20},
        {"name": "Yo", "size": 300, "inside": ["Y"], "outside": ["X"], "relevant": [1.0] * 5,
         "retrieved_by": [["Y"]] * 5},
    ]
    systems = [{"name": "X", "retrieved": 300, "relevant": [], "retrieved_by": []},
               {"name": "Y", "retrieved": 400, "relevant": [], "retrieved_by": []}]
    result = pooled_recall(systems=systems, strata=strata, draws=200, seed=0)
    assert result.pool_relevant_total == pytest.approx(600.0)
    assert result.system("X").pooled_recall == pytest.approx(0.5)
    assert result.system("Y").pooled_recall == pytest.approx(400 / 600)
    assert result.weights == pytest.approx({"X": 0.0, "Y": 0.0, "XY": 10 / 35, "Xo": 20 / 35, "Yo": 5 / 35})
    json.dumps(result.as_dict())


@pytest.mark.parametrize(
    "stratum",
    [
        {"name": "B", "size": 10, "inside": ["A"], "outside": ["B"], "relevant": [1], "retrieved_by": [["A"]]},  # name taken
        {"name": "S", "size": 10, "inside": ["A"], "outside": ["B"], "relevant": [1], "retrieved_by": [["A", "B"]]},  # outside
        {"name": "S", "size": 10, "inside": [], "outside": [], "relevant": [1], "retrieved_by": [["A"]]},  # no inside
        {"name": "S", "size": 10, "inside": ["A"], "outside": ["A"], "relevant": [1], "retrieved_by": [["A"]]},
        {"name": "S", "size": 0, "inside": ["A"], "outside": [], "relevant": [1], "retrieved_by": [["A"]]},
        {"name": "S", "size": 10, "inside": ["Z"], "outside": [], "relevant": [1], "retrieved_by": [["A"]]},
    ],
)
def test_invalid_stratum_raises(stratum):
    systems = [{"name": "A", "retrieved": 10, "relevant": [1], "retrieved_by": [["A"]]},
               {"name": "B", "retrieved": 10, "relevant": [1], "retrieved_by": [["B"]]}]
    with pytest.raises(ValueError):
        pooled_recall(systems=systems, strata=[stratum], draws=200)
