"""Intervals for one proportion and Beta posteriors (ESTIMATION-NOTES §2).

Expected figures are the notes' exact coverages and textbook values, never
numbers produced by the code under test.
"""
import json

import numpy as np
import pytest

from estimation.stats.proportions import (
    clopper_pearson_interval,
    exact_coverage,
    finite_population_correction,
    jeffreys_interval,
    precision_posterior,
    wilson_interval,
)


@pytest.mark.parametrize(
    ("method", "judged", "p", "expected"),
    [
        # ESTIMATION-NOTES §2: exact coverage at nominal 95%.
        ("wald", 20, 0.95, 0.639),
        ("wilson", 20, 0.95, 0.925),
        ("clopper-pearson", 20, 0.95, 0.984),
        ("jeffreys", 20, 0.95, 0.984),
        ("wald", 100, 0.01, 0.633),
        ("wilson", 100, 0.01, 0.921),
    ],
)
def test_exact_coverage_matches_the_notes(method, judged, p, expected):
    assert exact_coverage(method=method, judged=judged, p=p, confidence=0.95) == pytest.approx(expected, abs=0.0015)


def test_exact_coverage_is_a_binomial_sum_not_a_simulation():
    # Clopper–Pearson never under-covers: a defining property, checked on a grid.
    for n in (5, 17, 40):
        for p in (0.02, 0.3, 0.5, 0.9):
            assert exact_coverage(method="clopper-pearson", judged=n, p=p) >= 0.95 - 1e-12


def test_wilson_textbook_value():
    # Newcombe (1998), Table I, example 81/263: Wilson 95% interval 0.2553 to 0.3662.
    interval = wilson_interval(relevant=81, judged=263)
    assert interval.low == pytest.approx(0.2553, abs=5e-4)
    assert interval.high == pytest.approx(0.3662, abs=5e-4)


def test_clopper_pearson_textbook_value():
    # Newcombe (1998), Table I, example 15/148: exact interval 0.0578 to 0.1617.
    interval = clopper_pearson_interval(relevant=15, judged=148)
    assert interval.low == pytest.approx(0.0578, abs=5e-4)
    assert interval.high == pytest.approx(0.1617, abs=5e-4)


def test_clopper_pearson_all_failures_upper_bound_is_rule_of_three_like():
    # 0 of n: the one-sided 95% upper bound is 1 − 0.05^(1/n) exactly.
    interval = clopper_pearson_interval(relevant=0, judged=30, side="upper")
    assert interval.low == 0.0
    assert interval.high == pytest.approx(1 - 0.05 ** (1 / 30), rel=1e-9)


def test_jeffreys_boundary_modification():
    interval = jeffreys_interval(relevant=0, judged=10)
    assert interval.low == 0.0
    interval = jeffreys_interval(relevant=10, judged=10)
    assert interval.high == 1.0


def test_one_sided_bounds_are_tighter_than_two_sided():
    two = jeffreys_interval(relevant=30, judged=50)
    lower = jeffreys_interval(relevant=30, judged=50, side="lower")
    assert lower.high == 1.0
    assert two.low < lower.low < 0.6


def test_finite_population_correction():
    assert finite_population_correction(judged=50, size=200) == pytest.approx(0.75)
    assert finite_population_correction(judged=50, size=None) == 1.0
    # Judging the whole set leaves no uncertainty.
    full = wilson_interval(relevant=7, judged=20, size=20)
    assert full.low == full.high == pytest.approx(0.35)


def test_beta_posterior_jeffreys_and_soft_counts():
    posterior = precision_posterior(relevant=2.6, judged=10)
    assert posterior.alpha == pytest.approx(3.1)
    assert posterior.beta == pytest.approx(7.9)
    assert posterior.mean == pytest.approx(3.1 / 11.0)
    draws = posterior.sample(rng=np.random.default_rng(0), size=200_000)
    assert draws.mean() == pytest.approx(3.1 / 11.0, abs=0.002)


def test_as_dict_is_json():
    json.dumps(wilson_interval(relevant=3, judged=10).as_dict())
    json.dumps(precision_posterior(relevant=3, judged=10).as_dict())


@pytest.mark.parametrize(
    "kwargs",
    [
        {"relevant": -1, "judged": 10},
        {"relevant": 11, "judged": 10},
        {"relevant": 1, "judged": 0},
        {"relevant": 1, "judged": 10, "confidence": 1.0},
        {"relevant": 1, "judged": 10, "side": "left"},
        {"relevant": 1, "judged": 10, "size": 5},
    ],
)
def test_invalid_input_raises(kwargs):
    with pytest.raises(ValueError):
        wilson_interval(**kwargs)
