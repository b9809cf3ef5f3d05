"""Intervals for a single proportion and Beta posteriors for a region's precision.

Every estimator in this package starts from "k of the n judged documents were
relevant".  This module turns that into intervals (Wilson, Clopper–Pearson,
Jeffreys; two-sided or one-sided) and into the Jeffreys Beta posterior that the
Monte Carlo intervals of ``pair_recall`` draw from.

Why three intervals (ESTIMATION-NOTES §2): the Wald interval p̂ ± z·se
under-covers badly at small n or extreme p (exact coverage at nominal 95%:
n=20, p=0.95 → 0.639).  Wilson is close to nominal on average but dips
(0.925 there); Clopper–Pearson never under-covers but is wide; Jeffreys sits
in between and is the posterior the rest of the library uses.

``relevant`` may be fractional everywhere: soft labels (posterior probabilities
from Dawid–Skene) are treated as fractional successes.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats

Side = Literal["two-sided", "lower", "upper"]
IntervalMethod = Literal["wilson", "clopper-pearson", "jeffreys", "wald"]

_SIDES = ("two-sided", "lower", "upper")


@dataclass(frozen=True)
class ProportionInterval:
    """A confidence interval for a proportion.

    ``low``/``high`` are 0/1 on the open side of a one-sided interval
    (side="lower" is a lower confidence bound, side="upper" an upper one).
    """

    estimate: float
    low: float
    high: float
    confidence: float
    side: str
    method: str
    relevant: float
    judged: float

    def as_dict(self) -> dict:
        return jsonable(self)


@dataclass(frozen=True)
class BetaPosterior:
    """Beta(alpha, beta) posterior of a precision.

    Built by :func:`precision_posterior`: Jeffreys prior Beta(0.5, 0.5) plus
    the (possibly fractional) relevant / not-relevant counts.
    """

    alpha: float
    beta: float

    @property
    def mean(self) -> float:
        return self.alpha / (self.alpha + self.beta)

    @property
    def variance(self) -> float:
        a, b = self.alpha, self.beta
        return a * b / ((a + b) ** 2 * (a + b + 1.0))

    def interval(self, *, confidence: float = 0.95, side: Side = "two-sided") -> tuple[float, float]:
        """Equal-tailed credible interval (or one-sided bound)."""
        lower_tail, upper_tail = _tails(confidence=confidence, side=side)
        dist = stats.beta(self.alpha, self.beta)
        low = 0.0 if lower_tail == 0.0 else float(dist.ppf(lower_tail))
        high = 1.0 if upper_tail == 1.0 else float(dist.ppf(upper_tail))
        return low, high

    def sample(self, *, rng: np.random.Generator, size: int) -> np.ndarray:
        return rng.beta(self.alpha, self.beta, size=size)

    def as_dict(self) -> dict:
        return {"alpha": float(self.alpha), "beta": float(self.beta), "mean": float(self.mean)}


# --------------------------------------------------------------------------- validation


def validate_counts(*, relevant: float, judged: float, size: float | None = None, name: str = "sample") -> None:
    """Raise ValueError unless 0 ≤ relevant ≤ judged (≤ size when given)."""
    for label, value in (("relevant", relevant), ("judged", judged), ("size", size)):
        if value is None:
            continue
        if not np.isfinite(value):
            raise ValueError(f"{name}: {label} must be a finite number, got {value!r}")
        if value < 0:
            raise ValueError(f"{name}: {label} must be ≥ 0, got {value!r}")
    # A tiny tolerance: soft labels summed in floating point can overshoot.
    if relevant > judged + 1e-9:
        raise ValueError(f"{name}: relevant ({relevant}) cannot exceed judged ({judged})")
    if size is not None and judged > size:
        raise ValueError(f"{name}: judged ({judged}) cannot exceed the set size ({size})")


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")


def _tails(*, confidence: float, side: Side) -> tuple[float, float]:
    """Lower and upper tail probabilities bounding the interval."""
    _check_confidence(confidence)
    if side not in _SIDES:
        raise ValueError(f"side must be one of {_SIDES}, got {side!r}")
    alpha = 1.0 - confidence
    if side == "two-sided":
        return alpha / 2.0, 1.0 - alpha / 2.0
    if side == "lower":
        return alpha, 1.0
    return 0.0, 1.0 - alpha


def _z(*, confidence: float, side: Side) -> float:
    _tails(confidence=confidence, side=side)  # validates both arguments
    alpha = 1.0 - confidence
    return float(stats.norm.ppf(1.0 - (alpha / 2.0 if side == "two-sided" else alpha)))


# --------------------------------------------------------------------------- finite population


def finite_population_correction(*, judged: float, size: float | None) -> float:
    """Variance factor 1 − n/N for sampling n of N without replacement.

    Returns 1.0 for an infinite (or unknown) population.  Multiply a variance
    by it (ESTIMATION-NOTES §2: "times 1−n_h/|h| for finite regions").
    """
    if size is None or math.isinf(size):
        return 1.0
    validate_counts(relevant=0.0, judged=judged, size=size, name="finite population")
    if size == 0:
        return 0.0
    return max(0.0, 1.0 - judged / size)


# --------------------------------------------------------------------------- intervals


def wilson_interval(
    *,
    relevant: float,
    judged: float,
    confidence: float = 0.95,
    side: Side = "two-sided",
    size: float | None = None,
) -> ProportionInterval:
    """Wilson score interval (Wilson 1927).

    With ``size`` (the set the sample was drawn from, without replacement)
    the finite-population correction enters through the effective sample size
    n / (1 − n/N), the usual way of carrying the FPC into a score interval.
    """
    validate_counts(relevant=relevant, judged=judged, size=size, name="wilson_interval")
    if judged == 0:
        raise ValueError("wilson_interval: judged must be > 0")
    z = _z(confidence=confidence, side=side)
    p_hat = relevant / judged
    fpc = finite_population_correction(judged=judged, size=size)
    if fpc == 0.0:
        # Everything was judged: the proportion is known exactly.
        return ProportionInterval(p_hat, p_hat, p_hat, confidence, side, "wilson", relevant, judged)
    n = judged / fpc
    denom = 1.0 + z * z / n
    centre = (p_hat + z * z / (2.0 * n)) / denom
    half = z * math.sqrt(p_hat * (1.0 - p_hat) / n + z * z / (4.0 * n * n)) / denom
    low, high = max(0.0, centre - half), min(1.0, centre + half)
    low, high = _apply_side(low=low, high=high, side=side)
    return ProportionInterval(p_hat, low, high, confidence, side, "wilson", relevant, judged)


def clopper_pearson_interval(
    *, relevant: float, judged: float, confidence: float = 0.95, side: Side = "two-sided"
) -> ProportionInterval:
    """Clopper–Pearson "exact" interval via Beta quantiles.

    Bounds: Beta(k, n−k+1) lower quantile and Beta(k+1, n−k) upper quantile;
    0 when k = 0 and 1 when k = n.  Guaranteed coverage ≥ nominal.
    """
    validate_counts(relevant=relevant, judged=judged, name="clopper_pearson_interval")
    if judged == 0:
        raise ValueError("clopper_pearson_interval: judged must be > 0")
    lower_tail, upper_tail = _tails(confidence=confidence, side=side)
    k, n = relevant, judged
    low = 0.0 if (k <= 0 or lower_tail == 0.0) else float(stats.beta.ppf(lower_tail, k, n - k + 1.0))
    high = 1.0 if (k >= n or upper_tail == 1.0) else float(stats.beta.ppf(upper_tail, k + 1.0, n - k))
    return ProportionInterval(k / n, low, high, confidence, side, "clopper-pearson", relevant, judged)


def jeffreys_interval(
    *, relevant: float, judged: float, confidence: float = 0.95, side: Side = "two-sided"
) -> ProportionInterval:
    """Jeffreys interval: quantiles of Beta(k + ½, n − k + ½).

    With the boundary modification of Brown, Cai & DasGupta (2001): the lower
    bound is 0 when k = 0 and the upper bound 1 when k = n, which removes the
    coverage collapse of the plain interval next to p = 0 and p = 1.
    """
    validate_counts(relevant=relevant, judged=judged, name="jeffreys_interval")
    if judged == 0:
        raise ValueError("jeffreys_interval: judged must be > 0")
    posterior = precision_posterior(relevant=relevant, judged=judged)
    low, high = posterior.interval(confidence=confidence, side=side)
    if relevant <= 0:
        low = 0.0
    if relevant >= judged:
        high = 1.0
    return ProportionInterval(relevant / judged, low, high, confidence, side, "jeffreys", relevant, judged)


def wald_interval(
    *, relevant: float, judged: float, confidence: float = 0.95, side: Side = "two-sided"
) -> ProportionInterval:
    """Wald interval p̂ ± z·√(p̂(1−p̂)/n).  Provided only as a bad example to compare against."""
    validate_counts(relevant=relevant, judged=judged, name="wald_interval")
    if judged == 0:
        raise ValueError("wald_interval: judged must be > 0")
    z = _z(confidence=confidence, side=side)
    p_hat = relevant / judged
    half = z * math.sqrt(p_hat * (1.0 - p_hat) / judged)
    low, high = _apply_side(low=p_hat - half, high=p_hat + half, side=side)
    return ProportionInterval(p_hat, low, high, confidence, side, "wald", relevant, judged)


_INTERVALS = {
    "wilson": wilson_interval,
    "clopper-pearson": clopper_pearson_interval,
    "jeffreys": jeffreys_interval,
    "wald": wald_interval,
}


def proportion_interval(
    *,
    relevant: float,
    judged: float,
    method: IntervalMethod = "jeffreys",
    confidence: float = 0.95,
    side: Side = "two-sided",
) -> ProportionInterval:
    """Dispatch to one of the interval functions by name."""
    if method not in _INTERVALS:
        raise ValueError(f"method must be one of {sorted(_INTERVALS)}, got {method!r}")
    return _INTERVALS[method](relevant=relevant, judged=judged, confidence=confidence, side=side)


def exact_coverage(
    *, method: IntervalMethod, judged: int, p: float, confidence: float = 0.95, side: Side = "two-sided"
) -> float:
    """Exact coverage probability of an interval method at true proportion p.

    Sums the Binomial(n, p) probabilities of every outcome k whose interval
    contains p — no simulation, so the figures are exact (ESTIMATION-NOTES §2).
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be in [0, 1], got {p!r}")
    if judged < 1 or int(judged) != judged:
        raise ValueError(f"judged must be a positive integer, got {judged!r}")
    ks = np.arange(int(judged) + 1)
    pmf = stats.binom.pmf(ks, int(judged), p)
    covered = 0.0
    for k, weight in zip(ks, pmf):
        interval = proportion_interval(
            relevant=float(k), judged=float(judged), method=method, confidence=confidence, side=side
        )
        if interval.low <= p <= interval.high:
            covered += float(weight)
    return covered


def _apply_side(*, low: float, high: float, side: Side) -> tuple[float, float]:
    low, high = max(0.0, low), min(1.0, high)
    if side == "lower":
        return low, 1.0
    if side == "upper":
        return 0.0, high
    return low, high


# --------------------------------------------------------------------------- posteriors


JEFFREYS_PRIOR = (0.5, 0.5)


def precision_posterior(
    *, relevant: float, judged: float, prior: tuple[float, float] = JEFFREYS_PRIOR
) -> BetaPosterior:
    """Beta posterior of a region's precision: Beta(a + relevant, b + judged − relevant).

    Default prior is Jeffreys, Beta(½, ½) (ESTIMATION-NOTES §2).  ``relevant``
    may be fractional (soft labels): the Beta-binomial update is then the
    usual "fractional pseudo-counts" approximation.
    """
    validate_counts(relevant=relevant, judged=judged, name="precision_posterior")
    a, b = prior
    if a <= 0 or b <= 0:
        raise ValueError(f"prior parameters must be > 0, got {prior!r}")
    not_relevant = max(0.0, judged - relevant)
    return BetaPosterior(alpha=a + relevant, beta=b + not_relevant)


# --------------------------------------------------------------------------- JSON helper


def jsonable(value):
    """Convert a result (dataclasses, numpy scalars/arrays, tuples) to plain JSON types.

    Shared by the ``as_dict()`` methods of this package's frozen result
    classes.  NaN and ±inf become None, because JSON has no spelling for them
    and a Django view should show "not available" rather than crash.
    """
    if hasattr(value, "__dataclass_fields__"):
        return {name: jsonable(getattr(value, name)) for name in value.__dataclass_fields__}
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return [jsonable(v) for v in value.tolist()]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        value = float(value)
        return value if math.isfinite(value) else None
    return value
