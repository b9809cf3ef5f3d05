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


# --------------------------------------------------------------------------- intervals with sampling variance
# Issue 11 item 7 / notes §8: the seven counts are |region|·p̂ from judged samples, not exact Poisson counts.

from estimation.stats.capture_recapture import RegionCount, capture_recapture_interval  # noqa: E402

TRUE_TOTAL = 2000


def sampled_study(rng, *, recalls=(0.5, 0.4, 0.3), c2_given_c1=None, precision=0.5, judged=80):
    """One simulated study: 2,000 relevant documents caught by three classifiers (C2 optionally dependent on C1).

    Each of the seven regions holds its relevant documents plus as many non-relevant ones
    (precision 0.5); ``judged`` documents of each are drawn without replacement and judged.
    Returns the region samples and the population's realised δ12.
    """
    caught = rng.random((TRUE_TOTAL, 3)) < np.asarray(recalls)
    if c2_given_c1 is not None:
        given, not_given = c2_given_c1
        caught[:, 1] = np.where(caught[:, 0], rng.random(TRUE_TOTAL) < given, rng.random(TRUE_TOTAL) < not_given)
    code = caught @ np.array([4, 2, 1])
    regions = {}
    for history in HISTORIES:
        relevant = int(np.sum(code == int(history, 2)))
        size = int(round(relevant / precision))
        n = min(judged, size)
        regions[history] = RegionCount(size=size, judged=n,
                                       relevant=float(rng.hypergeometric(relevant, size - relevant, n)) if n else 0.0)
    delta = (caught[:, 0] & caught[:, 1]).mean() / (caught[:, 0].mean() * caught[:, 1].mean())
    return regions, delta


@pytest.mark.slow
def test_interval_covers_the_true_total_where_poisson_se_did_not():
    """200 studies (seed 11): the old N̂ ± 1.96·se on the scaled counts covers ~55% (notes §8); the bootstrap ≥ 0.9.

    Monte Carlo SE of a coverage near 0.95 over 200 studies ≈ 0.015.  Measured: old 0.385, new 0.965.
    """
    rng = np.random.default_rng(11)
    old, new = [], []
    for run in range(200):
        regions, _ = sampled_study(rng)
        result = capture_recapture_interval(regions=regions, confidence=0.95, draws=500, seed=run)
        old.append(result.naive_n_interval.low <= TRUE_TOTAL <= result.naive_n_interval.high)
        high = result.n_hat.high if result.n_hat.high is not None else np.inf
        new.append(result.n_hat.low <= TRUE_TOTAL <= high)
    assert np.mean(old) < 0.7, np.mean(old)  # the defect, reproduced
    assert np.mean(new) >= 0.9, np.mean(new)


@pytest.mark.slow
def test_dependence_evidence_fires_on_dependent_pairs_only():
    """δ1's interval excluding 1: independent classifiers ≤ 5% + 3 s.e. of 100 studies; δ1 ≈ 1.45 in ≥ 90% of 40."""
    rng = np.random.default_rng(12)
    false_alarms = [
        capture_recapture_interval(regions=sampled_study(rng)[0], draws=500, seed=run).dependence_evidence
        for run in range(100)
    ]
    assert np.mean(false_alarms) <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / 100), np.mean(false_alarms)
    detected, deltas = [], []
    for run in range(40):
        regions, delta = sampled_study(rng, c2_given_c1=(0.8, 0.3))
        result = capture_recapture_interval(regions=regions, draws=500, seed=run)
        detected.append(result.dependence_evidence and result.delta12.low > 1.0)
        deltas.append(delta)
    assert np.mean(deltas) == pytest.approx(1.45, abs=0.05)
    assert np.mean(detected) >= 0.9, np.mean(detected)
    assert "excludes 1" in result.summary


def test_fully_judged_regions_leave_only_the_model_variance():
    # Every region judged in full: no sampling variance, so the 95% interval of Mt is about
    # N̂ ± 1.96·√(n̂0 + n̂0²Var(û)) — the exact-count formula (a cross-check, within 15%).
    counts = expected_counts(2000, (0.5, 0.4, 0.3))
    regions = {h: RegionCount(size=round(2 * c), judged=round(2 * c), relevant=round(c)) for h, c in counts.items()}
    result = capture_recapture_interval(regions=regions, model="Mt", selection="fixed", draws=20_000, seed=0)
    mt = result.point.model("Mt")
    half_width = (result.n_hat.high - result.n_hat.low) / 2
    assert half_width == pytest.approx(1.96 * mt.se, rel=0.15)
    assert result.delta12.low == pytest.approx(1.0) and result.delta12.high == pytest.approx(1.0)  # Mt: δ ≡ 1
    assert not result.dependence_evidence
    json.dumps(result.as_dict())


def test_a_sampled_region_widens_the_interval():
    counts = expected_counts(2000, (0.5, 0.4, 0.3))
    exact = {h: (round(2 * c), round(2 * c), round(c)) for h, c in counts.items()}
    sampled = {**exact, "100": (exact["100"][0], 40, 20.0)}
    widths = []
    for regions in (exact, sampled):
        r = capture_recapture_interval(regions=regions, model="Mt", selection="fixed", draws=4000, seed=1)
        widths.append(r.n_hat.high - r.n_hat.low)
    assert widths[1] > 1.2 * widths[0]


def test_interval_inputs_are_checked():
    with pytest.raises(ValueError, match="001"):  # a region with documents but none judged
        capture_recapture_interval(regions={"100": (10, 5, 2), "001": (30, 0, 0)})
    with pytest.raises(ValueError):
        capture_recapture_interval(regions={"100": (10, 11, 2)})  # judged > size
    with pytest.raises(ValueError):
        capture_recapture_interval(regions={"100": (10, 5, 6)})  # relevant > judged
    with pytest.raises(ValueError):
        capture_recapture_interval(regions={"100": (10, 5, 2)}, selection="bic")
