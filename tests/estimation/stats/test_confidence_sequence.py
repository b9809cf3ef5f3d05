"""Anytime-valid betting confidence sequences (Waudby-Smith & Ramdas), checked by simulation."""
import math

import numpy as np
import pytest
from scipy.stats import norm

from estimation.stats.confidence_sequence import (
    bernoulli_capital,
    bernoulli_confidence_sequence,
    pair_recall_lower_bound,
    uniform_f1_lower_bound,
    uniform_recall_lower_bound,
)


def _mc_limit(alpha, runs):
    """alpha plus three binomial standard errors: the most a valid method may show."""
    return alpha + 3 * math.sqrt(alpha * (1 - alpha) / runs)


@pytest.mark.parametrize("truth", [0.03, 0.3, 0.5, 0.9])
def test_capital_at_truth_ever_crossing_is_at_most_alpha(truth):
    # Ville: P(sup_t K_t(truth) >= 1/alpha) <= alpha over the whole sequence.
    alpha, runs, length = 0.05, 1_500, 1_000
    outcomes = np.random.default_rng(int(truth * 1000)).binomial(1, truth, size=(runs, length))
    capital = bernoulli_capital(outcomes=outcomes, mean=truth, alpha=alpha)
    ever_rejected = np.mean(capital.max(axis=1) >= 1 / alpha)
    assert ever_rejected <= _mc_limit(alpha, runs)


def test_reported_sequence_time_uniform_coverage():
    # The reported path (grid, outward rounding, running intersection) must
    # miss the truth at any time in at most alpha of the runs.
    alpha, runs, length, truth = 0.1, 300, 400, 0.2
    rng = np.random.default_rng(7)
    missed = 0
    for _ in range(runs):
        cs = bernoulli_confidence_sequence(outcomes=rng.binomial(1, truth, size=length),
                                           alpha=alpha, grid_size=200)
        missed += bool(np.any((cs.lower > truth) | (cs.upper < truth)))
    assert missed / runs <= _mc_limit(alpha, runs)


def test_one_sided_lower_time_uniform_coverage():
    alpha, runs, length, truth = 0.1, 300, 400, 0.7
    rng = np.random.default_rng(8)
    missed = 0
    for _ in range(runs):
        cs = bernoulli_confidence_sequence(outcomes=rng.binomial(1, truth, size=length),
                                           alpha=alpha, side="lower", grid_size=200)
        missed += bool(np.any(cs.lower > truth))
    assert missed / runs <= _mc_limit(alpha, runs)


def test_fixed_time_interval_fails_under_peeking_but_cs_does_not():
    # Why the product needs a CS: checking a 95% Wald interval after every
    # observation excludes the truth at some time far more often than 5%.
    alpha, runs, length, truth = 0.05, 400, 1_000, 0.5
    outcomes = np.random.default_rng(3).binomial(1, truth, size=(runs, length))
    steps = np.arange(1, length + 1)
    means = np.cumsum(outcomes, axis=1) / steps
    half = norm.ppf(0.975) * np.sqrt(np.maximum(means * (1 - means), 1e-12) / steps)
    wald_missed = np.mean(np.any((np.abs(means - truth) > half)[:, 20:], axis=1))
    assert wald_missed > 0.2
    capital = bernoulli_capital(outcomes=outcomes, mean=truth, alpha=alpha)
    assert np.mean(capital.max(axis=1) >= 1 / alpha) <= _mc_limit(alpha, runs)


def test_cs_shrinks_and_is_not_absurdly_wide():
    rng = np.random.default_rng(11)
    cs = bernoulli_confidence_sequence(outcomes=rng.binomial(1, 0.3, size=4_000), alpha=0.05)
    widths = cs.upper - cs.lower
    assert np.all(np.diff(widths) <= 1e-12)  # running intersection never widens
    # Within a factor 3 of a fixed-time 95% Wald interval at n = 4,000.
    wald = 2 * 1.96 * math.sqrt(0.3 * 0.7 / 4_000)
    assert widths[-1] < 3 * wald
    assert cs.lower[-1] < 0.3 < cs.upper[-1]


def test_extreme_sequences():
    low, high = bernoulli_confidence_sequence(outcomes=np.zeros(50)).final
    assert low == 0.0 and 0.0 < high < 0.3
    low, high = bernoulli_confidence_sequence(outcomes=np.ones(50)).final
    assert high == 1.0 and 0.7 < low < 1.0
    assert bernoulli_confidence_sequence(outcomes=[]).final == (0.0, 1.0)


def test_uniform_recall_lower_bound_coverage_and_sense():
    rng = np.random.default_rng(5)
    truth, runs = 0.8, 200
    bounds = [uniform_recall_lower_bound(found=rng.binomial(1, truth, size=150), alpha=0.05,
                                         grid_size=400) for _ in range(runs)]
    assert np.mean(np.array(bounds) > truth) <= _mc_limit(0.05, runs)
    assert np.median(bounds) > 0.6


def test_pair_recall_lower_bound_coverage():
    # Notes §2 worked example: |A12| = 5,000 (p12 = 0.9), |B2| = 20,000 (p_B2 = 0.1), r1 = 0.692.
    overlap, other, p12, pb2 = 5_000, 20_000, 0.9, 0.1
    truth = overlap * p12 / (overlap * p12 + other * pb2)
    assert truth == pytest.approx(0.692, abs=0.001)
    rng = np.random.default_rng(6)
    runs = 200
    bounds = np.array([
        pair_recall_lower_bound(overlap_size=overlap, overlap_outcomes=rng.binomial(1, p12, 400),
                                other_size=other, other_outcomes=rng.binomial(1, pb2, 800),
                                alpha=0.05, grid_size=200)
        for _ in range(runs)])
    assert np.mean(bounds > truth) <= _mc_limit(0.05, runs)
    assert np.median(bounds) > 0.5


def test_uniform_f1_lower_bound_time_uniform_coverage():
    # Population cells (tp, fp, fn, tn) = (0.07, 0.03, 0.018, 0.882): F1 = 0.745.
    # The F1 bound implied by the error-share sequence must stay below the
    # truth at every time in at least 95% of runs.
    cells = np.array([0.07, 0.03, 0.018, 0.882])
    truth = 2 * cells[0] / (2 * cells[0] + cells[1] + cells[2])
    rng = np.random.default_rng(21)
    runs = 300
    missed = 0
    for _ in range(runs):
        kinds = rng.choice(4, size=2_000, p=cells)
        errors = (kinds[kinds < 3] > 0).astype(int)  # true negatives skipped
        path = bernoulli_confidence_sequence(outcomes=errors, alpha=0.05, side="upper",
                                             grid_size=400).upper
        missed += bool(np.any(2 * (1 - path) / (2 - path) > truth))
    assert missed / runs <= _mc_limit(0.05, runs)
    final = uniform_f1_lower_bound(errors=errors, alpha=0.05)
    assert 0.5 < final < truth


def test_input_checks():
    with pytest.raises(ValueError):
        bernoulli_confidence_sequence(outcomes=[0, 2, 1])
    with pytest.raises(ValueError):
        bernoulli_confidence_sequence(outcomes=[0, 1], alpha=0.0)
    with pytest.raises(ValueError):
        bernoulli_confidence_sequence(outcomes=[0, 1], side="left")
    with pytest.raises(ValueError):
        pair_recall_lower_bound(overlap_size=0, overlap_outcomes=[1], other_size=1, other_outcomes=[0])
