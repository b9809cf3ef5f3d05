"""Extrapolated precision (seed 001: Dimm, "Information Retrieval Performance
Measurement Using Extrapolated Precision", 2015).

A single measured (recall, precision) point fixes one member of a family of
reference precision-recall curves X(R; rho, beta) (Eq. 11). Moving along that
curve to a common target recall makes systems measured at different recalls
comparable, and the extrapolated precision feeds the review-cost formula
n = rho N R / P (Eq. 2).
"""
from __future__ import annotations

import math
import numbers
from typing import overload

import numpy as np
from scipy.optimize import brentq

__all__ = [
    "ExtrapolationRefused",
    "model_probability",
    "model_precision",
    "fit_beta",
    "extrapolated_precision",
    "reference_curve",
    "review_cost",
]

# Within this distance of 1 many reference curves nearly coincide (seed 001,
# after Eq. 12), so a measured point there says almost nothing about beta.
_NEAR_ONE = 0.01
# Search interval for beta, in log space. Figure 3/5 of the seed use 2.4..833;
# the interval is much wider so that only truly degenerate points are refused.
_LOG_BETA_MIN = math.log(1e-6)
_LOG_BETA_MAX = math.log(1e9)


class ExtrapolationRefused(ValueError):
    """The measured point does not determine a meaningful reference curve.

    ``reason`` holds a sentence suitable for showing to a user.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _log_term(beta: float) -> float:
    """ln(1 + beta^2) / (2 beta atan(beta)), the constant of Eqs. 10-11."""
    return math.log1p(beta * beta) / (2.0 * beta * math.atan(beta))


@overload
def model_probability(*, recall: float, prevalence: float, beta: float) -> float: ...
@overload
def model_probability(*, recall: np.ndarray, prevalence: float, beta: float) -> float | np.ndarray: ...
def model_probability(*, recall: float | np.ndarray, prevalence: float,
                      beta: float) -> float | np.ndarray:
    """Model probability of relevance x(R; rho, beta) — seed 001, Eq. 10.

    It is the slope-related density from which the reference precision
    curve is built by Eq. 4; it satisfies the normalisation Eq. 5 with
    X(1) = rho.
    """
    r = np.asarray(recall, dtype=float)
    odds = (1.0 - prevalence) / prevalence
    numerator = 1.0 + beta**2 * (1.0 - r) ** 2
    extra = odds * beta / math.atan(beta) * (r + _log_term(beta))
    result = numerator / (numerator + extra)
    return float(result) if np.ndim(result) == 0 else result


@overload
def model_precision(*, recall: float, prevalence: float, beta: float) -> float: ...
@overload
def model_precision(*, recall: np.ndarray, prevalence: float, beta: float) -> float | np.ndarray: ...
def model_precision(*, recall: float | np.ndarray, prevalence: float,
                    beta: float) -> float | np.ndarray:
    """Reference precision curve X(R; rho, beta) — seed 001, Eq. 11.

    At R = 0 Eq. 11 is 0/0; its limit is X(0) = x(0) (precision equals the
    probability of relevance at zero recall), which is returned there.
    """
    r = np.asarray(recall, dtype=float)
    odds = (1.0 - prevalence) / prevalence
    log_term = _log_term(beta)
    atan_beta = math.atan(beta)
    braces = (1.0
              - np.arctan(beta * (1.0 - r)) / atan_beta * (1.0 + log_term)
              + np.log1p(beta**2 * (1.0 - r) ** 2) / (2.0 * beta * atan_beta))
    with np.errstate(invalid="ignore", divide="ignore"):
        result = r / (r + odds * braces)
    at_zero = model_probability(recall=0.0, prevalence=prevalence, beta=beta)
    result = np.where(r == 0.0, at_zero, result)
    return float(result) if np.ndim(result) == 0 else result


def _is_real(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


def _check_unit_open(name: str, value: float) -> None:
    if not (_is_real(value) and 0.0 < value < 1.0):
        raise ExtrapolationRefused(f"{name} must lie strictly between 0 and 1 (got {value!r}).")


def _check_point(*, precision: float, recall: float, prevalence: float) -> None:
    """Refuse points that carry no information about beta (notes §4)."""
    _check_unit_open("prevalence", prevalence)
    if not (_is_real(precision) and 0.0 < precision <= 1.0):
        raise ExtrapolationRefused(f"precision must lie in (0, 1] (got {precision!r}).")
    if not (_is_real(recall) and 0.0 < recall <= 1.0):
        raise ExtrapolationRefused(f"recall must lie in (0, 1] (got {recall!r}).")
    if precision >= 1.0 - _NEAR_ONE:
        raise ExtrapolationRefused(
            f"precision {precision:.3f} is within {_NEAR_ONE} of 1: reference curves "
            "nearly coincide there, so the point does not determine beta.")
    if recall >= 1.0 - _NEAR_ONE:
        raise ExtrapolationRefused(
            f"recall {recall:.3f} is within {_NEAR_ONE} of 1: reference curves "
            "nearly coincide there, so the point does not determine beta.")
    if precision <= prevalence:
        raise ExtrapolationRefused(
            f"precision {precision:.4f} is not above the prevalence {prevalence:.4f}: "
            "the system does no better than random selection and no reference "
            "curve passes through the point.")


def fit_beta(*, precision: float, recall: float, prevalence: float) -> float:
    """Solve P(R) = X(R; rho, beta) for beta — seed 001, Eq. 12.

    One-dimensional root finding in log(beta); X at fixed R increases with
    beta, so the root is unique when it exists. Raises ExtrapolationRefused
    outside the valid range (notes §4) or when no curve of the family
    passes through the point.
    """
    _check_point(precision=precision, recall=recall, prevalence=prevalence)

    def gap(log_beta: float) -> float:
        beta = math.exp(log_beta)
        return model_precision(recall=recall, prevalence=prevalence, beta=beta) - precision

    low, high = gap(_LOG_BETA_MIN), gap(_LOG_BETA_MAX)
    if low > 0.0:
        raise ExtrapolationRefused(
            f"precision {precision:.4f} at recall {recall:.3f} is below every reference "
            f"curve for prevalence {prevalence:.4f} (the flattest gives {low + precision:.4f}).")
    if high < 0.0:
        raise ExtrapolationRefused(
            f"precision {precision:.4f} at recall {recall:.3f} is above every reference "
            f"curve for prevalence {prevalence:.4f}.")
    log_beta = brentq(gap, _LOG_BETA_MIN, _LOG_BETA_MAX, xtol=1e-12, rtol=1e-12)
    return math.exp(log_beta)


def extrapolated_precision(*, precision: float, recall: float, prevalence: float,
                           target_recall: float) -> float:
    """Precision extrapolated along the reference curve to ``target_recall``.

    Seed 001: beta from Eq. 12, then X(R_T; rho, beta) by Eq. 11.
    Example (notes §4): rho = 0.03, P = 0.5 at R = 0.75 gives beta ~ 48.98;
    extrapolating to R_T = 0.75 returns 0.5, to R_T = 1 returns rho.
    """
    if not (_is_real(target_recall) and 0.0 < target_recall <= 1.0):
        raise ExtrapolationRefused(f"target_recall must lie in (0, 1] (got {target_recall!r}).")
    beta = fit_beta(precision=precision, recall=recall, prevalence=prevalence)
    return model_precision(recall=target_recall, prevalence=prevalence, beta=beta)


def reference_curve(*, precision: float, recall: float, prevalence: float,
                    points: int = 101) -> tuple[np.ndarray, np.ndarray]:
    """The reference curve (seed 001, Eq. 11) through one measured point.

    Returns (R, X) arrays on an even grid of ``points`` recall values from
    0 to 1, for plotting next to the measured point (seed 001, Figure 2).
    """
    if points < 2:
        raise ValueError("points must be at least 2")
    beta = fit_beta(precision=precision, recall=recall, prevalence=prevalence)
    grid = np.linspace(0.0, 1.0, points)
    return grid, np.asarray(model_precision(recall=grid, prevalence=prevalence, beta=beta))


def review_cost(*, prevalence: float, population: int, recall: float,
                precision: float) -> float:
    """Documents to review to reach ``recall``: n = rho N R / P — seed 001, Eq. 2.

    The numerator is the number of relevant documents found; dividing by
    the precision converts it to the number of documents retrieved.
    """
    if not 0.0 < prevalence <= 1.0:
        raise ValueError(f"prevalence must lie in (0, 1] (got {prevalence!r})")
    if population < 0:
        raise ValueError(f"population must be non-negative (got {population!r})")
    if not 0.0 <= recall <= 1.0:
        raise ValueError(f"recall must lie in [0, 1] (got {recall!r})")
    if not 0.0 < precision <= 1.0:
        raise ValueError(f"precision must lie in (0, 1] (got {precision!r})")
    return prevalence * population * recall / precision
