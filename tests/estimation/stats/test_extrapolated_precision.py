"""Seed 001 (Dimm 2015): reference curves, beta from one point, extrapolation."""
import math

import numpy as np
import pytest
from scipy.integrate import quad

from estimation.stats.extrapolated_precision import (
    ExtrapolationRefused,
    extrapolated_precision,
    fit_beta,
    model_precision,
    model_probability,
    reference_curve,
    review_cost,
)

RHO = 0.03


def test_beta_from_notes_example():
    # Notes §4: rho = 0.03, P = 0.5 measured at R = 0.75 -> beta ~ 48.98.
    beta = fit_beta(precision=0.5, recall=0.75, prevalence=RHO)
    assert beta == pytest.approx(48.98, abs=0.01)


def test_curve_passes_through_point_and_ends_at_prevalence():
    beta = fit_beta(precision=0.5, recall=0.75, prevalence=RHO)
    assert model_precision(recall=0.75, prevalence=RHO, beta=beta) == pytest.approx(0.5, abs=1e-9)
    # Normalisation (seed 001, Eq. 5 with X(1) = rho).
    assert model_precision(recall=1.0, prevalence=RHO, beta=beta) == pytest.approx(RHO, abs=1e-12)
    assert extrapolated_precision(precision=0.5, recall=0.75, prevalence=RHO,
                                  target_recall=0.75) == pytest.approx(0.5, abs=1e-9)
    assert extrapolated_precision(precision=0.5, recall=0.75, prevalence=RHO,
                                  target_recall=1.0) == pytest.approx(RHO, abs=1e-12)


@pytest.mark.parametrize("beta", [2.44, 16.0, 48.98, 526.0])
@pytest.mark.parametrize("prevalence", [0.005, 0.03, 0.255])
def test_eq11_equals_eq4_integral_of_eq10(beta, prevalence):
    # Eq. 4: P(R) = R / int_0^R dr / p(r) with the model p = x of Eq. 10.
    for recall in (0.05, 0.3, 0.75, 0.95, 1.0):
        integral, _ = quad(lambda r: 1.0 / model_probability(recall=r, prevalence=prevalence,
                                                             beta=beta),
                           0.0, recall, epsabs=1e-13, epsrel=1e-11, limit=200)
        assert model_precision(recall=recall, prevalence=prevalence, beta=beta) == \
            pytest.approx(recall / integral, rel=1e-7)


def test_normalisation_eq5():
    # int_0^1 dr / x(r) = 1 / X(1) = 1 / rho.
    integral, _ = quad(lambda r: 1.0 / model_probability(recall=r, prevalence=RHO, beta=10.0),
                       0.0, 1.0, epsrel=1e-11)
    assert integral == pytest.approx(1.0 / RHO, rel=1e-8)


def test_x_at_zero_recall_is_the_limit_of_eq11():
    beta = 20.0
    near_zero = model_precision(recall=1e-6, prevalence=RHO, beta=beta)
    assert model_precision(recall=0.0, prevalence=RHO, beta=beta) == pytest.approx(near_zero, rel=1e-5)


def test_higher_point_gives_higher_curve_everywhere():
    # Reference curves do not cross (seed 001, Sec. 2).
    _, low = reference_curve(precision=0.3, recall=0.75, prevalence=RHO, points=51)
    _, high = reference_curve(precision=0.6, recall=0.75, prevalence=RHO, points=51)
    assert np.all(high[:-1] > low[:-1])
    assert high[-1] == pytest.approx(low[-1])


def test_reference_curve_shape():
    recall, precision = reference_curve(precision=0.5, recall=0.75, prevalence=RHO, points=101)
    assert recall[0] == 0.0 and recall[-1] == 1.0 and len(precision) == 101
    assert np.all(np.diff(precision) < 0)  # monotone decreasing for this family
    assert precision[75] == pytest.approx(0.5, abs=1e-9)


def test_review_cost_eq2():
    # n = rho N R / P: 3% of 1,000,000 documents, recall 0.75 at precision 0.5.
    assert review_cost(prevalence=0.03, population=1_000_000, recall=0.75,
                       precision=0.5) == pytest.approx(45_000)


def test_review_cost_figure1_ratio():
    # Seed 001 Sec. 1: at equal recall, the cost ratio is the inverse precision ratio.
    left = review_cost(prevalence=0.01, population=100_000, recall=0.75, precision=0.65)
    right = review_cost(prevalence=0.01, population=100_000, recall=0.75, precision=0.10)
    assert left / right == pytest.approx(0.10 / 0.65)


@pytest.mark.parametrize("kwargs, phrase", [
    (dict(precision=0.995, recall=0.5), "within 0.01 of 1"),
    (dict(precision=0.5, recall=0.995), "within 0.01 of 1"),
    (dict(precision=0.03, recall=0.5), "not above the prevalence"),
    (dict(precision=0.02, recall=0.5), "not above the prevalence"),
    (dict(precision=0.031, recall=0.75), "below every reference curve"),
    (dict(precision=0.0, recall=0.5), "precision"),
    (dict(precision=0.5, recall=0.0), "recall"),
])
def test_refusals_carry_reason(kwargs, phrase):
    with pytest.raises(ExtrapolationRefused) as info:
        extrapolated_precision(prevalence=RHO, target_recall=0.75, **kwargs)
    assert phrase in info.value.reason


def test_bad_prevalence_and_target_refused():
    with pytest.raises(ExtrapolationRefused):
        extrapolated_precision(precision=0.5, recall=0.75, prevalence=0.0, target_recall=0.75)
    with pytest.raises(ExtrapolationRefused):
        extrapolated_precision(precision=0.5, recall=0.75, prevalence=RHO, target_recall=1.5)


def test_extrapolation_is_monotone_in_measured_precision():
    values = [extrapolated_precision(precision=p, recall=0.7, prevalence=RHO, target_recall=0.8)
              for p in (0.2, 0.4, 0.6, 0.8)]
    assert values == sorted(values)
    assert all(math.isfinite(v) for v in values)


def test_numpy_scalars_accepted():
    value = extrapolated_precision(precision=np.float32(0.5), recall=np.float64(0.75),
                                   prevalence=RHO, target_recall=np.float32(1.0))
    assert value == pytest.approx(RHO, rel=1e-6)
