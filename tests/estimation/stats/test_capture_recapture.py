"""Log-linear capture–recapture for three classifiers (ESTIMATION-NOTES §1).

Checked against exact expected tables (closed form) and against the known
truth of simulated populations.
"""
import json

import numpy as np
import pytest

from estimation.stats.capture_recapture import HISTORIES, capture_recapture


def expected_counts(n, recalls):
    """Expected relevant documents per capture history for independent classifiers."""
    counts = {}
    for history in HISTORIES:
        probability = 1.0
        for bit, r in zip(history, recalls):
            probability *= r if bit == "1" else 1.0 - r
        counts[history] = n * probability
    return counts


def simulated_counts(rng, n, recalls, *, c2_given_c1=None):
    caught = rng.random((n, 3)) < np.asarray(recalls)
    if c2_given_c1 is not None:
        # C2 depends on C1: P(C2 | C1) and P(C2 | not C1).
        given, not_given = c2_given_c1
        caught[:, 1] = np.where(caught[:, 0], rng.random(n) < given, rng.random(n) < not_given)
    histories = ["".join("1" if v else "0" for v in row) for row in caught]
    counts = dict.fromkeys(HISTORIES, 0)
    for h in histories:
        if h != "000":
            counts[h] += 1
    both = caught[:, 0] & caught[:, 1]
    true_delta = both.mean() / (caught[:, 0].mean() * caught[:, 1].mean())
    return counts, true_delta


def test_expected_independent_table_is_fitted_exactly_by_mt():
    # Expected counts under independence: Mt must fit perfectly (deviance 0) and give N = 1000, δ = 1.
    result = capture_recapture(counts=expected_counts(1000, (0.5, 0.4, 0.3)))
    mt = result.model("Mt")
    assert mt.n_hat == pytest.approx(1000.0, rel=1e-6)
    assert mt.deviance == pytest.approx(0.0, abs=1e-6)
    assert mt.recall == pytest.approx((0.5, 0.4, 0.3), rel=1e-6)
    assert mt.delta12 == pytest.approx(1.0, rel=1e-6)
    json.dumps(result.as_dict())


def test_independent_classifiers_total_is_unbiased_in_simulation():
    rng = np.random.default_rng(0)
    estimates = []
    for _ in range(60):
        counts, _ = simulated_counts(rng, 2000, (0.5, 0.4, 0.3))
        estimates.append(capture_recapture(counts=counts, models=("Mt",)).model("Mt").n_hat)
    # SE of one estimate ≈ 37 (measured spread); the mean of 60 has SE ≈ 5: tolerance 1% of 2000.
    assert np.mean(estimates) == pytest.approx(2000, rel=0.01)


def test_dependent_pair_is_detected_and_delta_recovered():
    # C2 finds 80% of what C1 found but only 30% of the rest: δ1 ≈ 1.5, Eq. 1 would be biased.
    rng = np.random.default_rng(1)
    counts, true_delta = simulated_counts(rng, 2000, (0.5, 0.4, 0.3), c2_given_c1=(0.8, 0.3))
    result = capture_recapture(counts=counts)
    assert result.best == "Mt+12"
    best = result.model("Mt+12")
    assert best.delta12 == pytest.approx(true_delta, abs=0.1)
    assert best.n_hat == pytest.approx(2000, rel=0.06)
    # Independence underestimates the total badly (C1 and C2 overlap too much).
    assert result.model("Mt").n_hat < 0.9 * 2000
    assert "clearly worse" in result.summary


def test_invalid_counts_raise():
    with pytest.raises(ValueError):
        capture_recapture(counts={"1000": 3})
    with pytest.raises(ValueError):
        capture_recapture(counts={"100": -1})
    with pytest.raises(ValueError):
        capture_recapture(counts={})
