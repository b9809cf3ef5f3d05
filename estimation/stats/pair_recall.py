"""Recall of a classifier from precision samples of a conditionally independent pair.

Seed 000 (Bommannavar, Kolcz, Rajaraman, KDD 2014).  Notation: A1, A2 the sets
two classifiers C1, C2 retrieve, A12 = A1 ∩ A2, p a set's precision, r a
classifier's recall, |U| the corpus size.

* :func:`pair_recall_eq1` — Eq. 1, r1 ≈ p12|A12| / (p2|A2|).
* :func:`pair_recall_eq2` — Eq. 2, the same without the joint precision.
* :func:`estimated_relevant_total`, :func:`recall_from_total` — Sec. 6,
  n̂ = p1|A1|/r̂1 and r̂_C = p_C|A_C|/n̂ for any other classifier C.
* :func:`lincoln_petersen`, :func:`chapman` — n̂ as capture–recapture.
* :func:`stratified_pair_recall` — the product's design (ESTIMATION-NOTES §2):
  judge samples of the disjoint regions A12, B1 = A1∖A2, B2 = A2∖A1, from
  which r1, r2, p1, p2, p12, n̂ and both equations follow, with Monte Carlo
  intervals, a delta-method cross-check, a δ1 sensitivity band and
  diagnostics.
* :func:`paper_design_pair_recall` — the paper's design: independent precision
  samples of A1, A2 and A12.

How the intervals are made (and why they are not the plain posterior
percentiles): each region's relevant count is drawn from its posterior
predictive, relevant_judged + Binomial(|h| − n_h, p_h), which carries the
finite-population correction exactly (a fully judged region has no
uncertainty).  With p_h from the Jeffreys posterior the percentile interval
of r1 under-covered in simulation (0.91 at nominal 0.95 for |A12|=2,000,
|B2|=100,000, p12=0.95, p_B2=0.05, n=100 per region: the Jeffreys interval's
own coverage dips near p=0.05 and 0.95 add up across two regions).  So every
quantity that is monotone in the region counts (r1, r2, p1, p2, p12, Eq. 1)
takes its lower bound from draws in which each region's precision comes from
the Clopper–Pearson confidence distribution that pushes the quantity down
(Beta(k, n−k+1) for a count that raises it, Beta(k+1, n−k) for one that
lowers it), and its upper bound symmetrically.  Over a grid of 54 cells
(|A12|/|B2| = 500/5,000, 60/200, 2,000/100,000; p12, p_B2 ∈ {0.05, 0.5,
0.95}; n = 30 and 100 per region; 400 runs each) the minimum coverage was
0.958 and the mean 0.979, against a Jeffreys minimum of 0.91 on the same
grid.  The price is width: about 4% wider than the delta method at
n ≈ 700.  Quantities that are not monotone in the counts (n̂, Eq. 2) use the
Jeffreys percentile interval.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from .proportions import jsonable, validate_counts

DEFAULT_DRAWS = 20_000
DEFAULT_DELTA1_GRID = (0.8, 0.9, 1.0, 1.1, 1.25)
FEW_RELEVANT = 5
_NORMAL_REMAINDER = 20  # unjudged/judged ratio above which the binomial remainder is drawn as normal


# =========================================================================== closed forms


def _check_precision(value: float, name: str) -> None:
    if not 0.0 <= value <= 1.0 or not math.isfinite(value):
        raise ValueError(f"{name} must be a precision in [0, 1], got {value!r}")


def _check_size(value: float, name: str) -> None:
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a non-negative set size, got {value!r}")


def pair_recall_eq1(*, p12: float, a12: float, p2: float, a2: float) -> float:
    """Seed 000, Eq. 1: recall of C1, r1 ≈ p12·|A12| / (p2·|A2|).

    Needs only Assumption 1 (C1, C2 independent on relevant documents).
    For the recall of C2 swap the roles: ``pair_recall_eq1(p12=…, a12=…, p2=p1, a2=|A1|)``.
    Example (Table 3, Apple, C1 = seed filter): 0.774·420 / (0.247·10217) = 0.129.
    """
    _check_precision(p12, "p12")
    _check_precision(p2, "p2")
    _check_size(a12, "a12")
    _check_size(a2, "a2")
    if a12 > a2:
        raise ValueError(f"a12 ({a12}) cannot exceed a2 ({a2}): A12 is a subset of A2")
    if p2 * a2 == 0:
        raise ValueError("p2·|A2| is 0: C2 retrieved no relevant document, recall of C1 is undefined")
    return p12 * a12 / (p2 * a2)


def pair_recall_eq2(*, p1: float, p2: float, a1: float, a2: float, a12: float, u: float) -> float:
    """Seed 000, Eq. 2: recall of C1 without the joint precision.

    r1 ≈ |A12|/(p2|A2|) · [1 − (1−p1)(1−p2)|A1||A2| / (|U||A12|)].
    Adds Assumption 2 (independence on non-relevant documents) and 3
    (sparsity, relevant documents ≪ |U|).  Swap 1 and 2 for the recall of C2.
    Example (Table 3, Apple, |U| = 800,000): 0.166.
    """
    _check_precision(p1, "p1")
    _check_precision(p2, "p2")
    for value, name in ((a1, "a1"), (a2, "a2"), (a12, "a12"), (u, "u")):
        _check_size(value, name)
    if a12 > min(a1, a2):
        raise ValueError(f"a12 ({a12}) cannot exceed a1 ({a1}) or a2 ({a2})")
    if max(a1, a2) > u:
        raise ValueError(f"the corpus size u ({u}) must be at least |A1| and |A2|")
    if a12 == 0:
        raise ValueError("a12 is 0: Eq. 2 divides by |A12|")
    if p2 * a2 == 0:
        raise ValueError("p2·|A2| is 0: recall of C1 is undefined")
    off_topic_overlap = (1.0 - p1) * (1.0 - p2) * a1 * a2 / (u * a12)
    return a12 / (p2 * a2) * (1.0 - off_topic_overlap)


def estimated_relevant_total(*, p1: float, a1: float, r1: float) -> float:
    """Seed 000, Sec. 6: n̂ = p1·|A1| / r̂1, the estimated number of relevant documents."""
    _check_precision(p1, "p1")
    _check_size(a1, "a1")
    if not 0.0 < r1 <= 1.0:
        raise ValueError(f"r1 must be in (0, 1], got {r1!r}")
    return p1 * a1 / r1


def recall_from_total(*, precision: float, retrieved: float, n_hat: float) -> float:
    """Seed 000, Sec. 6: recall of any other classifier C, r̂_C = p_C·|A_C| / n̂.

    A result above 1 means n̂ is below what C found: evidence that the pair's n̂ is too small (δ1 > 1), not a
    recall.  The report does not floor its way out of it: when n̂'s interval lies below what was found it
    withholds the figure (``StratifiedPairRecall.contradicts_found``).
    """
    _check_precision(precision, "precision")
    _check_size(retrieved, "retrieved")
    if not n_hat > 0:
        raise ValueError(f"n_hat must be > 0, got {n_hat!r}")
    return precision * retrieved / n_hat


def lincoln_petersen(*, t1: float, t2: float, t12: float) -> float:
    """n̂ = T1·T2/T12 with T the relevant documents of a set (ESTIMATION-NOTES §1).

    Identical to Sec. 6's p1|A1|/r̂1 with r̂1 from Eq. 1.
    """
    _check_captures(t1=t1, t2=t2, t12=t12)
    if t12 == 0:
        raise ValueError("t12 is 0: the Lincoln–Petersen estimate is infinite; use chapman()")
    return t1 * t2 / t12


def chapman(*, t1: float, t2: float, t12: float) -> float:
    """Chapman's bias-corrected form, (T1+1)(T2+1)/(T12+1) − 1 (ESTIMATION-NOTES §1)."""
    _check_captures(t1=t1, t2=t2, t12=t12)
    return (t1 + 1.0) * (t2 + 1.0) / (t12 + 1.0) - 1.0


def _check_captures(*, t1: float, t2: float, t12: float) -> None:
    for value, name in ((t1, "t1"), (t2, "t2"), (t12, "t12")):
        _check_size(value, name)
    if t12 > min(t1, t2):
        raise ValueError(f"t12 ({t12}) cannot exceed t1 ({t1}) or t2 ({t2})")


# =========================================================================== inputs


@dataclass(frozen=True)
class RegionSample:
    """A judged simple random sample (without replacement) of one set.

    size: documents in the set (|h|); judged: documents judged (n_h);
    relevant: how many of them were relevant — may be fractional (soft
    labels, e.g. the sum of Dawid–Skene posterior probabilities).
    """

    size: int
    judged: int
    relevant: float

    def as_dict(self) -> dict:
        return jsonable(self)


RegionLike = RegionSample | Mapping | Sequence


def as_region(value: RegionLike, *, name: str) -> RegionSample:
    """Accept a RegionSample, a mapping {size, judged, relevant} or a tuple (size, judged, relevant)."""
    if isinstance(value, RegionSample):
        region = value
    elif isinstance(value, Mapping):
        missing = {"size", "judged", "relevant"} - set(value)
        if missing:
            raise ValueError(f"region {name}: missing keys {sorted(missing)}")
        region = RegionSample(size=value["size"], judged=value["judged"], relevant=value["relevant"])
    elif isinstance(value, Sequence) and len(value) == 3:
        region = RegionSample(size=value[0], judged=value[1], relevant=value[2])
    else:
        raise ValueError(f"region {name}: expected RegionSample, mapping or (size, judged, relevant), got {value!r}")
    for label, count in (("size", region.size), ("judged", region.judged)):
        if float(count) != int(count):
            raise ValueError(f"region {name}: {label} must be a whole number, got {count!r}")
    validate_counts(relevant=float(region.relevant), judged=float(region.judged), size=float(region.size), name=f"region {name}")
    return RegionSample(size=int(region.size), judged=int(region.judged), relevant=float(region.relevant))


# =========================================================================== results


@dataclass(frozen=True)
class Estimate:
    """A point estimate with an interval.  None means "not available" (e.g. a region was not judged)."""

    point: float | None
    low: float | None
    high: float | None
    method: str

    def as_dict(self) -> dict:
        return jsonable(self)


@dataclass(frozen=True)
class DeltaCheck:
    """Delta-method standard error and normal interval, a cross-check of the Monte Carlo interval."""

    se: float | None
    low: float | None
    high: float | None

    def as_dict(self) -> dict:
        return jsonable(self)


@dataclass(frozen=True)
class SensitivityPoint:
    """Recall if the dependence ratio δ1 (seed 000, Assumption 1) had this value.

    Eq. 1 estimates δ1·r1, so r1 = estimate/δ1 (capped at 1); n̂ scales with δ1.
    """

    delta1: float
    r1: float | None
    r1_low: float | None
    r1_high: float | None
    r2: float | None
    r2_low: float | None
    r2_high: float | None
    n_hat: float | None

    def as_dict(self) -> dict:
        return jsonable(self)


@dataclass(frozen=True)
class Diagnostic:
    """A finding a manager can read: ``message`` is a plain sentence, ``code`` is stable for machines."""

    code: str
    severity: str  # "info" | "warning" | "error"
    message: str

    def as_dict(self) -> dict:
        return jsonable(self)


@dataclass(frozen=True)
class StratifiedPairRecall:
    """Result of :func:`stratified_pair_recall`.  ``as_dict()`` is JSON-serialisable."""

    confidence: float
    draws: int
    seed: int | None
    regions: dict
    r1: Estimate
    r2: Estimate
    p1: Estimate
    p2: Estimate
    p12: Estimate
    n_hat: Estimate
    n_hat_chapman: float | None
    eq1_r1: Estimate
    eq1_r2: Estimate
    eq2_r1: Estimate | None
    eq2_r2: Estimate | None
    delta_r1: DeltaCheck
    delta_r2: DeltaCheck
    sensitivity: tuple[SensitivityPoint, ...]
    other_recalls: dict
    diagnostics: tuple[Diagnostic, ...]
    r1_draws: tuple[float, ...] | None = None
    r2_draws: tuple[float, ...] | None = None
    # Totals respect what was found (issue 11, notes §8): n̂ ≥ max(T12 + T_B1 + T_B2, T_C of every
    # other classifier C).  ``bound_binding`` is True when the Lincoln–Petersen point estimate is
    # below that floor — evidence that δ1 > 1 (n̂ = N/δ1), not a recall above 1;
    # ``bound_binding_share`` is the share of Monte Carlo draws in which the floor bound.
    bound_binding: bool = False
    bound_binding_share: float | None = None
    n_hat_unconstrained: Estimate | None = None
    n_hat_floor: float | None = None
    # The pair's model contradicts what was found ("Every figure honest" item 4): the interval of
    # n̂_LP − floor lies below zero (n̂_LP < floor in at least (1 + confidence)/2 of the draws), evidence
    # of δ1 > 1.  A figure read through the model (r1, r2, another classifier's p_C|A_C|/n̂) is then too
    # high by an unknown factor; the report withholds it instead of printing the floored figure.
    contradicts_found: bool = False
    # Eq. 1 against Eq. 2 (``eq_disagree``): None without the corpus size.
    off_topic: OffTopicDependence | None = None
    # Label noise propagated into the intervals (``label_probabilities``); None when the labels are certain.
    label_noise: LabelNoise | None = None

    def as_dict(self) -> dict:
        return jsonable(self)

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(d.code for d in self.diagnostics)


@dataclass(frozen=True)
class PaperDesignPairRecall:
    """Result of :func:`paper_design_pair_recall`."""

    confidence: float
    draws: int
    seed: int | None
    p1: Estimate
    p2: Estimate
    p12: Estimate
    eq1_r1: Estimate
    eq1_r2: Estimate
    eq2_r1: Estimate | None
    eq2_r2: Estimate | None
    n_hat: Estimate
    diagnostics: tuple[Diagnostic, ...]
    bound_binding: bool = False
    bound_binding_share: float | None = None
    contradicts_found: bool = False  # as StratifiedPairRecall.contradicts_found

    def as_dict(self) -> dict:
        return jsonable(self)

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(d.code for d in self.diagnostics)


# =========================================================================== Monte Carlo machinery

# Prior pseudo-counts (a, b) added to (relevant, not relevant).  Jeffreys for
# the central draws; the two Clopper–Pearson confidence distributions for the
# conservative bounds (see the module docstring).
_JEFFREYS = (0.5, 0.5)
_CP_LOW = (0.0, 1.0)  # quantiles are Clopper–Pearson lower bounds
_CP_HIGH = (1.0, 0.0)  # quantiles are Clopper–Pearson upper bounds


def _count_draws(region: RegionSample, *, prior: tuple[float, float], rng: np.random.Generator, draws: int) -> np.ndarray:
    """Draws of the number of relevant documents in a region.

    relevant_judged + Binomial(|h| − n_h, p) with p from Beta(a + k, b + n − k):
    the posterior predictive of the whole region's count, so a fully judged
    region is known exactly (this is the finite-population correction).
    NaN when the region has documents but none were judged.
    """
    return _count_draws_one(size=region.size, judged=region.judged, relevant=float(region.relevant), prior=prior,
                            rng=rng, draws=draws)


def _count_draws_one(
    *, size: int, judged: int, relevant: float, prior: tuple[float, float], rng: np.random.Generator, draws: int
) -> np.ndarray:
    """:func:`_count_draws_array` for one relevant count: the same draws from the same stream, with less overhead.

    Size calibration evaluates the verdict's bound tens of thousands of times,
    so this scalar path matters; ``test_scalar_count_draws_match_the_array_path``
    holds it to the array version bit for bit.
    """
    if size == 0:
        return np.zeros(draws)
    if judged == 0:
        return np.full(draws, np.nan)
    remainder = size - judged
    if remainder <= 0:
        return np.full(draws, relevant)
    a = prior[0] + relevant
    b = prior[1] + judged - relevant
    # Beta(0, ·) and Beta(·, 0) are point masses at 0 and 1 (Clopper–Pearson distributions at k = 0 or
    # k = n): the unjudged count is then exactly 0 or all of them, with no draw at all.
    if a <= 0:
        return np.full(draws, relevant)
    if b <= 0:
        return np.full(draws, relevant + remainder)
    p = rng.beta(a, b, size=draws)
    return relevant + _unjudged_draws(remainder=remainder, judged=judged, p=p, rng=rng)


# Binomial(m, p) with m·p·(1 − p) at least this is drawn as a rounded normal (``_unjudged_draws``).
_NORMAL_BINOMIAL_VARIANCE = 50.0


def _unjudged_draws(*, remainder: int, judged: int, p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Binomial(|h| − n, p) per draw of p: the relevant documents among the unjudged ones.

    Where |h| − n ≥ 20·n (``_NORMAL_REMAINDER``) the whole draw is the normal N(m·p, m·p·(1 − p)) clipped to
    [0, m] (the binomial then carries at most ~1/20 of the count's variance, ratio ≈ n/(N − n)).  Otherwise
    each draw whose variance m·p·(1 − p) is at least 50 (``_NORMAL_BINOMIAL_VARIANCE``) is the rounded
    normal ⌊m·p + √(m·p·(1 − p))·Z + ½⌋ clipped to [0, m] (the continuity-corrected normal approximation),
    and the others — small counts, p near 0 or 1 — stay exact binomial draws.  Accuracy: the Kolmogorov
    distance between Binomial(m, p) and the rounded normal is at most 0.4748/√(m·p·(1 − p)) ≤ 0.067 at
    variance ≥ 50 (Berry–Esseen with Shevtsova's constant: I. Shevtsova, "On the absolute constants in the
    Berry–Esseen type inequalities for identically distributed summands", arXiv:1111.6554, 2011), and
    measured over m = 60 … 20,000, p on a 0.0005 grid it is at most 0.0091 (largest at m = 5,000, p ≈ 0.01);
    that error is on the conditional binomial noise only, which the Beta spread of p dominates
    (m²·Var(p) against m·E[p(1 − p)]).  tests/estimation/stats/test_speed_equivalence.py holds the report's
    interval ends to the exact-binomial reference within Monte Carlo error.  A rounded normal draw costs
    about a seventh of numpy's binomial with a different p per draw (BTPE set-up per call), which made the
    count draws nearly all of the stratified report's time."""
    m = remainder
    if m >= _NORMAL_REMAINDER * judged:
        sd = np.sqrt(m * p * (1.0 - p))
        return np.clip(m * p + sd * rng.standard_normal(p.shape), 0.0, m)
    variance = m * p * (1.0 - p)
    big = variance >= _NORMAL_BINOMIAL_VARIANCE
    if not big.any():
        return rng.binomial(m, p).astype(float)
    out = np.floor(m * p + np.sqrt(variance) * rng.standard_normal(p.shape) + 0.5)
    np.clip(out, 0.0, m, out=out)
    small = ~big
    if small.any():
        out[small] = rng.binomial(m, p[small])
    return out


def _count_draws_array(
    *, size: int, judged: int, relevant: np.ndarray, prior: tuple[float, float], rng: np.random.Generator, draws: int
) -> np.ndarray:
    """:func:`_count_draws` for an array of relevant counts (one per run): shape relevant.shape + (draws,).

    relevant + Binomial(|h| − n, p), p ~ Beta(a + k, b + n − k); the binomial as :func:`_unjudged_draws`
    (a normal approximation where accurate, exact on small counts)."""
    relevant = np.asarray(relevant, dtype=float)
    if relevant.ndim == 0:
        return _count_draws_one(size=size, judged=judged, relevant=float(relevant), prior=prior, rng=rng, draws=draws)
    shape = relevant.shape + (draws,)
    if size == 0:
        return np.zeros(shape)
    if judged == 0:
        return np.full(shape, np.nan)
    remainder = size - judged
    if remainder <= 0:
        return np.broadcast_to(relevant[..., None], shape).copy()
    a = (prior[0] + relevant)[..., None]
    b = (prior[1] + judged - relevant)[..., None]
    # Beta(0, ·) and Beta(·, 0) are point masses at 0 and 1 (Clopper–Pearson
    # distributions at k = 0 or k = n); numpy's beta needs positive shapes.
    p = rng.beta(np.broadcast_to(np.maximum(a, 1e-12), shape), np.broadcast_to(np.maximum(b, 1e-12), shape))
    p = np.where(a <= 0, 0.0, np.where(b <= 0, 1.0, p))
    return relevant[..., None] + _unjudged_draws(remainder=remainder, judged=judged, p=p, rng=rng)


def pair_recall_interval(
    *,
    size_a12: int,
    judged_a12: int,
    relevant_a12: float | np.ndarray,
    size_other: int,
    judged_other: int,
    relevant_other: float | np.ndarray,
    confidence: float = 0.95,
    draws: int = DEFAULT_DRAWS,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Point estimate and conservative Monte Carlo interval of r = T12/(T12 + T_other).

    "other" is B2 = A2∖A1 for the recall of C1 and B1 = A1∖A2 for C2
    (ESTIMATION-NOTES §2).  The relevant counts may be arrays — one entry per
    simulated sample — so the coverage tests run the exact code that
    :func:`stratified_pair_recall` uses, vectorised.  Returns arrays
    (point, low, high) of the shape of the relevant counts.

    Lower bound: (1−c)/2 quantile of r with T12 drawn under the
    Clopper–Pearson lower distribution Beta(k, n−k+1) and T_other under the
    upper one Beta(k+1, n−k) — both push r down; the upper bound mirrors it.
    """
    _check_mc(confidence=confidence, draws=draws)
    alpha = 1.0 - confidence
    rel12 = np.asarray(relevant_a12, dtype=float)
    rel_other = np.asarray(relevant_other, dtype=float)

    def draws_of_r(prior12, prior_other):
        t12 = _count_draws_array(size=size_a12, judged=judged_a12, relevant=rel12, prior=prior12, rng=rng, draws=draws)
        t_other = _count_draws_array(size=size_other, judged=judged_other, relevant=rel_other, prior=prior_other, rng=rng, draws=draws)
        return _ratio(t12, t12 + t_other)

    lows = draws_of_r(_CP_LOW, _CP_HIGH)
    highs = draws_of_r(_CP_HIGH, _CP_LOW)
    unknown = np.isnan(lows).all(axis=-1) | np.isnan(highs).all(axis=-1)
    # A 0/0 draw (no relevant document drawn in either region) is least favourable for the bound.
    low = np.quantile(np.nan_to_num(lows, nan=0.0), alpha / 2.0, axis=-1)
    high = np.quantile(np.nan_to_num(highs, nan=1.0), 1.0 - alpha / 2.0, axis=-1)
    low, high = np.where(unknown, np.nan, low), np.where(unknown, np.nan, high)
    t12_point = size_a12 * rel12 / judged_a12 if judged_a12 else np.full(rel12.shape, np.nan if size_a12 else 0.0)
    t_other_point = (
        size_other * rel_other / judged_other if judged_other else np.full(rel_other.shape, np.nan if size_other else 0.0)
    )
    point = _ratio(t12_point, t12_point + t_other_point)
    return point, low, high


def _point_count(region: RegionSample) -> float:
    if region.size == 0:
        return 0.0
    if region.judged == 0:
        return math.nan
    return region.size * region.relevant / region.judged


def _quantiles(values: np.ndarray, *, confidence: float) -> tuple[float, float]:
    """Equal-tailed percentile interval of posterior draws.

    All-NaN means a needed region was not judged.  Isolated NaN draws are 0/0
    (no relevant document drawn anywhere in a ratio) and are left out; +inf
    draws (n̂ with no relevant document in A12) are kept, so the upper bound
    can be infinite (None in as_dict).
    """
    alpha = 1.0 - confidence
    if np.isnan(values).all():
        return math.nan, math.nan
    with np.errstate(invalid="ignore"):
        low, high = np.nanquantile(values, [alpha / 2.0, 1.0 - alpha / 2.0])
    return float(low), float(high)


def _monotone_bounds(lows: np.ndarray, highs: np.ndarray, *, alpha: float) -> tuple[float, float]:
    """Lower bound from the pushed-down draws, upper bound from the pushed-up ones.

    A draw is NaN where the ratio is 0/0 (e.g. no relevant document drawn in
    either region); for a bound that is the least favourable value (0 for the
    lower, 1 for the upper).  All-NaN means a needed region was not judged.
    """
    if np.isnan(lows).all() or np.isnan(highs).all():
        return math.nan, math.nan
    lows = np.nan_to_num(lows, nan=0.0)
    highs = np.nan_to_num(highs, nan=1.0)
    return float(np.quantile(lows, alpha / 2.0)), float(np.quantile(highs, 1.0 - alpha / 2.0))


def _ratio(num, den):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def _check_mc(*, confidence: float, draws: int) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    if int(draws) != draws or draws < 100:
        raise ValueError(f"draws must be an integer ≥ 100, got {draws!r}")


def _nan_to_none(value: float) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def _estimate(point: float, bounds: tuple[float, float], method: str) -> Estimate:
    return Estimate(point=_nan_to_none(point), low=_nan_to_none(bounds[0]), high=_nan_to_none(bounds[1]), method=method)


# =========================================================================== stratified design


@dataclass(frozen=True)
class _Counts:
    """Relevant counts T of the three regions (scalars for the point, arrays for draws)."""

    t12: np.ndarray | float
    tb1: np.ndarray | float
    tb2: np.ndarray | float


class _PairAlgebra:
    """Every quantity of notes §2 as a function of the region counts T12, T_B1, T_B2."""

    def __init__(self, *, a12: int, b1: int, b2: int, corpus_size: int | None):
        self.a12, self.b1, self.b2 = a12, b1, b2
        self.a1, self.a2 = a12 + b1, a12 + b2
        self.u = corpus_size

    def r1(self, c: _Counts):
        return _ratio(c.t12, c.t12 + c.tb2)

    def r2(self, c: _Counts):
        return _ratio(c.t12, c.t12 + c.tb1)

    def p1(self, c: _Counts):
        return _ratio(c.t12 + c.tb1, np.float64(self.a1))

    def p2(self, c: _Counts):
        return _ratio(c.t12 + c.tb2, np.float64(self.a2))

    def p12(self, c: _Counts):
        return _ratio(c.t12, np.float64(self.a12))

    def n_hat(self, c: _Counts):
        # Lincoln–Petersen: T1·T2/T12 = p1|A1|/r̂1 (seed 000 Sec. 6).
        with np.errstate(divide="ignore", invalid="ignore"):
            # No relevant document in A12: the estimate is infinite, not missing.
            return np.where(c.t12 > 0, (c.t12 + c.tb1) * (c.t12 + c.tb2) / c.t12, np.inf)

    def eq2(self, c: _Counts, *, which: int):
        """Seed 000 Eq. 2 with p1, p2 from the regions (no use of p12)."""
        t1, t2 = c.t12 + c.tb1, c.t12 + c.tb2
        own_total, other_total = (self.a1, self.a2) if which == 1 else (self.a2, self.a1)
        own_t, other_t = (t1, t2) if which == 1 else (t2, t1)
        assert self.u is not None, "Eq. 2 needs the corpus size; callers check it first"
        # (1−p_own)|A_own| is the number of non-relevant documents of the set.
        off_topic = (own_total - own_t) * (other_total - other_t) / (self.u * self.a12)
        return _ratio(self.a12 * (1.0 - off_topic), other_t)


def stratified_pair_recall(
    *,
    a12: RegionLike,
    b1: RegionLike,
    b2: RegionLike,
    corpus_size: int | None = None,
    confidence: float = 0.95,
    draws: int = DEFAULT_DRAWS,
    seed: int | None = None,
    delta1_grid: Sequence[float] = DEFAULT_DELTA1_GRID,
    other_classifiers: Mapping[str, RegionLike] | None = None,
    return_draws: bool = False,
    min_precision: float = 0.1,
    label_probabilities: Mapping[str, Sequence[float]] | None = None,
    certain_relevant: Mapping[str, float] | None = None,
    judged_count_draws: Mapping[str, ArrayLike] | None = None,
) -> StratifiedPairRecall:
    """Recall of C1 and C2 from judged samples of the disjoint regions (ESTIMATION-NOTES §2).

    Regions: ``a12`` = A1 ∩ A2, ``b1`` = A1 ∖ A2, ``b2`` = A2 ∖ A1, each a
    :class:`RegionSample` / mapping {size, judged, relevant} / tuple.  With
    T_h = |h|·p_h:

        r1 = T12/(T12 + T_B2)   (= seed 000 Eq. 1, p12|A12|/(p2|A2|))
        r2 = T12/(T12 + T_B1)
        p1 = (T12 + T_B1)/|A1|,  p2 = (T12 + T_B2)/|A2|,  p12 = T12/|A12|
        n̂  = T1·T2/T12           (seed 000 Sec. 6, Lincoln–Petersen)

    and, when ``corpus_size`` (|U|) is given, Eq. 2 from the same p1, p2.
    Point estimates plug in p̂_h = relevant/judged.  Intervals: Monte Carlo
    over each region's posterior (``draws`` draws, ``seed`` for a numpy
    Generator); see the module docstring for the conservative bounds.  The
    delta method (with finite-population correction) is reported as a
    cross-check.  ``delta1_grid`` gives the sensitivity band: Eq. 1 estimates
    δ1·r1, so r1 = estimate/δ1.  ``other_classifiers`` maps a name to a
    precision sample of another classifier C; its recall is p_C|A_C|/n̂
    (Sec. 6).  ``return_draws`` adds the Jeffreys posterior draws of r1, r2.

    ``label_probabilities`` (notes §3, issue 11): per region key ("A12", "B1",
    "B2"), P(relevant) of each judged document — Dawid–Skene posteriors, or
    :func:`vote_label_probabilities` for majority labels.  A region whose
    probabilities are not all 0 or 1 then has its relevant count taken as their
    sum, and in every Monte Carlo draw the judged documents' true count is first
    drawn from them (Poisson-binomial) before the Beta draw: the intervals carry
    the label noise (:class:`LabelNoise`).  Without it, or with every
    probability 0 or 1, the result is bit for bit the same as before.

    The floor (notes §8, "totals must respect what was found"; :func:`found_floor`)
    counts only documents whose relevant label is certain enough: a noisy
    positive is not a document found, and counting it lifts n̂ above the truth
    (Reuters `gold`: n̂ 156 (144–187) against 135).  ``certain_relevant`` maps a
    region key ("A12", "B1", "B2") or another classifier's name to how many of
    its judged documents are certainly relevant (the report's rule:
    ``estimation.services.reports``; :data:`CERTAIN_PROBABILITY`).  A region
    missing from it counts its documents with P(relevant) ≥
    :data:`CERTAIN_PROBABILITY` when ``label_probabilities`` has it, else its
    ``relevant`` count (labels taken as certain).  When the model contradicts
    the floor (``contradicts_found``: n̂ − floor's interval lies below zero) the
    ``total_below_found`` warning says the pair's figures are withheld.

    ``judged_count_draws`` (issue 24 item 5): per region key with uncertain ``label_probabilities``, draws of
    the judged documents' relevant count from a joint posterior of the labels — the Bayesian Dawid–Skene
    chain's latent labels (``aggregation.dawid_skene_count_draws``), which move with its draws of the
    workers' accuracies.  They replace the Poisson-binomial of the fixed probabilities, cycled to ``draws``
    in the same order for every region (draw d of each region comes from the same chain draw, so errors that
    a wrong accuracy makes in several regions stay together): each Monte Carlo draw is one imputation of the
    labels, and the percentile interval is the mixture of the imputations' posteriors (Zhou & Reiter 2010).

    Example (notes §2): |A12| = 5,000 with p12 = 0.9, |B2| = 20,000 with
    p_B2 = 0.1 → r1 = 4,500/6,500 = 0.692.
    """
    _check_mc(confidence=confidence, draws=draws)
    regions = {"A12": as_region(a12, name="A12"), "B1": as_region(b1, name="B1"), "B2": as_region(b2, name="B2")}
    if corpus_size is not None:
        total = regions["A12"].size + regions["B1"].size + regions["B2"].size
        if int(corpus_size) != corpus_size or corpus_size < total:
            raise ValueError(f"corpus_size must be a whole number ≥ |A1 ∪ A2| = {total}, got {corpus_size!r}")
    if any(d <= 0 for d in delta1_grid):
        raise ValueError(f"delta1_grid values must be > 0, got {list(delta1_grid)!r}")
    others = {name: as_region(sample, name=name) for name, sample in (other_classifiers or {}).items()}

    algebra = _PairAlgebra(
        a12=regions["A12"].size, b1=regions["B1"].size, b2=regions["B2"].size, corpus_size=corpus_size
    )
    noisy = _uncertain_labels(label_probabilities, regions)
    noise_summary = None
    if noisy:
        regions = {k: RegionSample(size=r.size, judged=r.judged, relevant=float(np.sum(noisy[k]))) if k in noisy else r
                   for k, r in regions.items()}
        noise_summary = _label_noise_summary(noisy, regions)
    rng = np.random.default_rng(seed)
    point = _Counts(*(np.float64(_point_count(regions[k])) for k in ("A12", "B1", "B2")))
    # The judged documents' true counts, drawn once per region and shared by every prior's draws
    # (common random numbers: each quantity's draws keep their distribution, at a tenth of the cost).
    label_counts = {k: _label_count_draws(p, rng=rng, draws=draws) for k, p in noisy.items()
                    if k not in (judged_count_draws or {})}
    for key, values in (judged_count_draws or {}).items():
        if key not in regions:
            raise ValueError(f"judged_count_draws: unknown region {key!r}")
        counts = np.asarray(values, dtype=float)
        if counts.ndim != 1 or counts.size == 0 or counts.min() < 0 or counts.max() > regions[key].judged:
            raise ValueError(f"judged_count_draws[{key!r}] must be counts between 0 and {regions[key].judged}")
        if key in noisy:
            label_counts[key] = np.resize(counts, draws)

    def region_draws(key: str, prior: tuple[float, float]) -> np.ndarray:
        if key in noisy:
            return _count_draws_label_noise(regions[key], judged_counts=label_counts[key], prior=prior, rng=rng,
                                            draws=draws)
        return _count_draws(regions[key], prior=prior, rng=rng, draws=draws)

    def draw(prior_by_region: dict[str, tuple[float, float]]) -> _Counts:
        return _Counts(*(region_draws(k, prior_by_region[k]) for k in ("A12", "B1", "B2")))

    central = draw(dict.fromkeys(regions, _JEFFREYS))
    # Conservative bounds: which prior pushes a quantity down depends on the
    # sign of its dependence on each count (see module docstring).
    up = dict.fromkeys(regions, _CP_HIGH)
    down = dict.fromkeys(regions, _CP_LOW)
    alpha = 1.0 - confidence

    def monotone(fn, lower_priors, upper_priors) -> tuple[float, float]:
        return _monotone_bounds(fn(draw(lower_priors)), fn(draw(upper_priors)), alpha=alpha)

    def recall_bounds(other: str) -> tuple[float, float]:
        if noisy:
            # pair_recall_interval's rule (T12 pushed down, the other region up, and back) with noisy labels.
            def ratio(prior12, prior_other):
                t12 = region_draws("A12", prior12)
                return _ratio(t12, t12 + region_draws(other, prior_other))
            return _monotone_bounds(ratio(_CP_LOW, _CP_HIGH), ratio(_CP_HIGH, _CP_LOW), alpha=alpha)
        _, low, high = pair_recall_interval(
            size_a12=regions["A12"].size, judged_a12=regions["A12"].judged, relevant_a12=regions["A12"].relevant,
            size_other=regions[other].size, judged_other=regions[other].judged, relevant_other=regions[other].relevant,
            confidence=confidence, draws=draws, rng=rng,
        )
        return float(low), float(high)

    r1_bounds = recall_bounds("B2")
    r2_bounds = recall_bounds("B1")
    method_cp = "monte-carlo (Clopper–Pearson confidence distributions, conservative)"
    method_jeffreys = "monte-carlo (Jeffreys posterior percentiles)"

    r1 = _estimate(float(algebra.r1(point)), r1_bounds, method_cp)
    r2 = _estimate(float(algebra.r2(point)), r2_bounds, method_cp)
    p1 = _estimate(float(algebra.p1(point)), monotone(algebra.p1, down, up), method_cp)
    p2 = _estimate(float(algebra.p2(point)), monotone(algebra.p2, down, up), method_cp)
    p12 = _estimate(float(algebra.p12(point)), monotone(algebra.p12, down, up), method_cp)
    lp_draws = algebra.n_hat(central)
    lp_point = float(algebra.n_hat(point))
    n_hat_unconstrained = _estimate(lp_point, _quantiles(lp_draws, confidence=confidence), method_jeffreys)
    # The other classifiers' counts are drawn where _other_recall used to draw them, so the stream
    # (and every number before this point) is unchanged.
    other_points = {name: _point_count(sample) for name, sample in others.items()}
    other_draws = {name: _count_draws(sample, prior=_JEFFREYS, rng=rng, draws=draws) for name, sample in others.items()}
    certain = _certain_counts(certain_relevant, regions=regions, others=others, noisy=noisy)
    if certain is None:  # every label certain: the floor is what was found, from the same draws
        floor_point = float(found_floor(union=float(point.t12 + point.tb1 + point.tb2),
                                        others=tuple(other_points.values())))
        floor_draws = found_floor(union=central.t12 + central.tb1 + central.tb2, others=tuple(other_draws.values()))
    else:
        floor_point, floor_draws = _certain_floor(certain, regions=regions, others=others, seed=seed, draws=draws)
    n_hat_draws = _floored(lp_draws, floor_draws)
    n_hat_point = float(_floored(np.float64(lp_point), np.float64(floor_point)))
    binding = bool(math.isfinite(lp_point) and math.isfinite(floor_point) and lp_point < floor_point)
    comparable = ~(np.isnan(lp_draws) | np.isnan(floor_draws))
    binding_share = float(np.mean(lp_draws[comparable] < floor_draws[comparable])) if comparable.any() else None
    contradicts = bool(binding and binding_share is not None and binding_share >= (1.0 + confidence) / 2.0)
    n_hat = _estimate(n_hat_point, _quantiles(n_hat_draws, confidence=confidence),
                      method_jeffreys + ", floored per draw at the relevant documents found")

    eq2_r1 = eq2_r2 = None
    eq2_raw: dict[int, float] = {}
    eq2_cap: dict[int, float] = {}
    if corpus_size is not None and regions["A12"].size > 0:
        def eq2(which: int) -> Estimate:
            # Seed 000's Eq. 2 is kept as the seed prints it (the Table 3 reproduction and the Eq. 1/Eq. 2
            # disagreement check depend on it) but clamped per draw to [0, 1]: a recall outside it is no
            # recall.  Its implied total T_own/Eq.2 below what was found is reported (eq2_below_found).
            raw_point = float(algebra.eq2(point, which=which))
            eq2_raw[which] = raw_point
            own_point = float(point.t12 + (point.tb1 if which == 1 else point.tb2))
            eq2_cap[which] = float(_ratio(np.float64(own_point), np.float64(floor_point)))
            return _estimate(float(_clamp_recall(np.float64(raw_point), np.float64(1.0))),
                             _quantiles(_clamp_recall(algebra.eq2(central, which=which), np.float64(1.0)), confidence=confidence),
                             method_jeffreys + ", clamped per draw to [0, 1]")

        eq2_r1, eq2_r2 = eq2(1), eq2(2)

    delta_r1 = _delta_check(regions=regions, own="B2", point=point, confidence=confidence)
    delta_r2 = _delta_check(regions=regions, own="B1", point=point, confidence=confidence)
    sensitivity = tuple(_sensitivity_point(d, r1=r1, r2=r2, n_hat=n_hat.point, n_hat_lp=lp_point, floor=floor_point)
                        for d in delta1_grid)
    other_recalls = {
        name: _other_recall_from(t_point=other_points[name], t_draws=other_draws[name], n_hat_point=n_hat.point,
                                 n_hat_draws=n_hat_draws, confidence=confidence)
        for name in others
    }
    t12, t1, t2 = (float(t) for t in (point.t12, point.t12 + point.tb1, point.t12 + point.tb2))
    n_hat_chapman = chapman(t1=t1, t2=t2, t12=t12) if all(map(math.isfinite, (t12, t1, t2))) else None
    off_topic = None
    if eq2_r1 is not None and corpus_size is not None:
        effects = [abs(eq2_raw[w] - e.point) for w, e in ((1, r1), (2, r2))
                   if e.point is not None and math.isfinite(eq2_raw.get(w, math.nan))]
        t1_draws, t2_draws = central.t12 + central.tb1, central.t12 + central.tb2
        off_topic = _off_topic_dependence(
            f1=algebra.a1 - t1_draws, f2=algebra.a2 - t2_draws, f12=algebra.a12 - central.t12,
            nonrelevant=corpus_size - n_hat_draws,
            point=(algebra.a1 - t1, algebra.a2 - t2, algebra.a12 - t12, corpus_size - n_hat_point),
            effect=max(effects) if effects else None, confidence=confidence, rng=rng)
    diagnostics = _diagnose(
        regions=regions, r1=r1, r2=r2, p1=p1, p2=p2, eq2_r1=eq2_r1, eq2_r2=eq2_r2,
        n_hat=n_hat, corpus_size=corpus_size, min_precision=min_precision,
        eq2_raw=eq2_raw, eq2_cap=eq2_cap, off_topic=off_topic,
    )
    if binding:
        diagnostics.append(_binding_diagnostic(lp_point=lp_point, floor_point=floor_point, share=binding_share,
                                               contradicts=contradicts))
    region_summary = {
        name: {**region.as_dict(), "precision": _nan_to_none(region.relevant / region.judged) if region.judged else None}
        for name, region in regions.items()
    }
    return StratifiedPairRecall(
        confidence=confidence, draws=int(draws), seed=seed, regions=region_summary,
        r1=r1, r2=r2, p1=p1, p2=p2, p12=p12, n_hat=n_hat, n_hat_chapman=n_hat_chapman,
        eq1_r1=r1, eq1_r2=r2, eq2_r1=eq2_r1, eq2_r2=eq2_r2,
        delta_r1=delta_r1, delta_r2=delta_r2, sensitivity=sensitivity,
        other_recalls=other_recalls, diagnostics=tuple(diagnostics),
        r1_draws=tuple(algebra.r1(central).tolist()) if return_draws else None,
        r2_draws=tuple(algebra.r2(central).tolist()) if return_draws else None,
        bound_binding=binding, bound_binding_share=binding_share,
        n_hat_unconstrained=n_hat_unconstrained, n_hat_floor=_nan_to_none(floor_point),
        contradicts_found=contradicts, off_topic=off_topic, label_noise=noise_summary,
    )


def stratified_pair_recall_low(
    *,
    a12: RegionLike,
    b1: RegionLike,
    b2: RegionLike,
    which: str = "r1",
    confidence: float = 0.95,
    draws: int = DEFAULT_DRAWS,
    seed: int | None = None,
) -> float:
    """``stratified_pair_recall(...).r1.low`` (or ``.r2.low``) alone, the same number for the same seed.

    The certification verdict's bound, for callers that need it thousands of
    times (size calibration, simulations).  It consumes the random stream
    exactly as :func:`stratified_pair_recall` does up to that bound — the
    Jeffreys draws of all three regions, then r1's interval (then r2's) — and
    skips the rest of the report (about five times fewer draws).  NaN when
    the bound is undefined (a needed region not judged).
    """
    if which not in ("r1", "r2"):
        raise ValueError(f"which must be 'r1' or 'r2', got {which!r}")
    _check_mc(confidence=confidence, draws=draws)
    regions = {"A12": as_region(a12, name="A12"), "B1": as_region(b1, name="B1"), "B2": as_region(b2, name="B2")}
    rng = np.random.default_rng(seed)
    for key in ("A12", "B1", "B2"):  # the report's central draws, only to advance the stream
        _count_draws(regions[key], prior=_JEFFREYS, rng=rng, draws=draws)
    alpha = 1.0 - confidence
    a12_region = regions["A12"]

    def region_draws(region: RegionSample, prior) -> np.ndarray:
        return _count_draws_one(size=region.size, judged=region.judged, relevant=float(region.relevant),
                                prior=prior, rng=rng, draws=draws)

    def ratio_draws(other: RegionSample, prior12, prior_other) -> np.ndarray:
        t12 = region_draws(a12_region, prior12)
        t_other = region_draws(other, prior_other)
        return _ratio(t12, t12 + t_other)

    other = regions["B2"] if which == "r1" else regions["B1"]
    if which == "r2":  # r1's interval comes first in the report
        ratio_draws(regions["B2"], _CP_LOW, _CP_HIGH)
        ratio_draws(regions["B2"], _CP_HIGH, _CP_LOW)
    lows = ratio_draws(other, _CP_LOW, _CP_HIGH)
    if np.isnan(lows).all():
        return math.nan
    low = float(np.quantile(np.nan_to_num(lows, nan=0.0), alpha / 2.0))
    # The report's interval is also NaN when the high side's draws are all NaN,
    # which needs no relevant document in A12, hence a low of 0: only then are
    # they drawn (they come next in the stream).
    if low == 0.0 and np.isnan(ratio_draws(other, _CP_HIGH, _CP_LOW)).all():
        return math.nan
    return low


def _delta_check(*, regions: dict, own: str, point: _Counts, confidence: float) -> DeltaCheck:
    """Delta method for r = T12/(T12 + T_other) with Var(T̂_h) = |h|²·p_h q_h/n_h·(1 − n_h/|h|).

    Equivalent to notes §2: Var(r̂1) ≈ r1²(1−r1)²·[q12/(p12 n12) + q_B2/(p_B2 n_B2)]
    with the finite-population factors.
    """
    t12 = float(point.t12)
    t_other = float(point.tb2 if own == "B2" else point.tb1)
    total = t12 + t_other
    if not math.isfinite(total) or total <= 0:
        return DeltaCheck(None, None, None)

    def count_variance(region: RegionSample) -> float:
        if region.size == 0 or region.judged == 0:
            return 0.0 if region.size == 0 else math.nan
        p = region.relevant / region.judged
        fpc = 1.0 - region.judged / region.size
        return region.size**2 * p * (1.0 - p) / region.judged * fpc

    variance = (t_other**2 * count_variance(regions["A12"]) + t12**2 * count_variance(regions[own])) / total**4
    if not math.isfinite(variance):
        return DeltaCheck(None, None, None)
    se = math.sqrt(variance)
    z = float(stats.norm.ppf(0.5 + confidence / 2.0))
    r = t12 / total
    return DeltaCheck(se=se, low=max(0.0, r - z * se), high=min(1.0, r + z * se))


def recall_under_delta1(value: float | None, *, delta1: float) -> float | None:
    """The pair's recall figure re-read under dependence δ1: r1 = r1*/δ1, capped at 1 (seed 000, Assumption 1).

    Eq. 1 estimates r1* = T12/(T12 + T_B2) = δ1·r1 with δ1 = T12·N/(T1·T2)
    (the same δ for C2: r2* = δ1·r2).  This is the sensitivity band's rule
    (``StratifiedPairRecall.sensitivity``) and the least-favourable-δ1
    certification bound's (``certification.pair_recall_least_favourable_bound``).
    Example (notes §8, Reuters `earn`): a bound 0.775 read at δ1 = 1.25 is 0.62.
    """
    if delta1 <= 0:
        raise ValueError(f"delta1 must be > 0, got {delta1!r}")
    return None if value is None else min(1.0, value / delta1)


def _sensitivity_point(delta1: float, *, r1: Estimate, r2: Estimate, n_hat: float | None,
                       n_hat_lp: float | None = None, floor: float | None = None) -> SensitivityPoint:
    def scale(value):
        return recall_under_delta1(value, delta1=delta1)

    if n_hat is None:
        total = None
    elif n_hat_lp is not None and math.isfinite(n_hat_lp) and floor is not None and math.isfinite(floor):
        total = max(n_hat_lp * delta1, floor)  # N = δ1·(T1T2/T12), never below what was found
    else:
        total = n_hat * delta1
    return SensitivityPoint(
        delta1=float(delta1),
        r1=scale(r1.point), r1_low=scale(r1.low), r1_high=scale(r1.high),
        r2=scale(r2.point), r2_low=scale(r2.low), r2_high=scale(r2.high),
        n_hat=total,
    )


def found_floor(*, union, others: Sequence = ()):
    """The fewest relevant documents the corpus can hold: max(T12 + T_B1 + T_B2, T_C for every other C).

    Notes §8 ("totals must respect what was found"): n̂ cannot be below the
    relevant documents any one classifier retrieved (p_C·|A_C|), nor below
    the union's finds.  Scalars or arrays of draws (elementwise); NaN where
    a count is unknown.  Give it counts of documents certainly relevant
    (``certain_relevant`` of :func:`stratified_pair_recall`): a floor of
    noisy positives exceeds the truth.
    """
    floor = np.asarray(union, dtype=float)
    for other in others:
        floor = np.fmax(floor, np.asarray(other, dtype=float)) if np.ndim(other) or np.ndim(floor) else max(floor, other)
    return floor


def _floored(n_hat, floor):
    """max(n̂, floor) per draw; a NaN floor leaves n̂ alone, an infinite n̂ stays infinite."""
    return np.where(np.isnan(floor), n_hat, np.fmax(n_hat, floor))


def _clamp_recall(values, cap):
    """Clip recall draws to [0, cap] with cap ≤ 1 (cap NaN → 1); NaN draws stay NaN."""
    cap = np.where(np.isnan(cap), 1.0, np.minimum(cap, 1.0))
    return np.where(np.isnan(values), np.nan, np.clip(values, 0.0, cap))


def _binding_diagnostic(*, lp_point: float, floor_point: float, share: float | None,
                        contradicts: bool = False) -> Diagnostic:
    share_text = "" if share is None else f" (in {share:.0%} of the Monte Carlo draws)"
    consequence = (
        "The pair's recall figures are withheld: judge a sample of documents neither classifier retrieved to "
        "measure recall without that assumption." if contradicts else
        "The total is raised to what was found, so no recall exceeds 1.")
    return Diagnostic("total_below_found", "warning",
        f"The pair estimates {lp_point:,.0f} relevant documents in all, fewer than the {floor_point:,.0f} the "
        f"classifiers already found{share_text}. That is evidence that the pair's estimate of the total is too small: "
        f"the two classifiers tend to find the same relevant documents (they are positively dependent, δ1 > 1), so "
        f"the pair's recall figures are probably too high. {consequence}")


# A relevant label counts toward the floor of what was found only when P(relevant) is at least this (a gold
# answer is 1; a Dawid–Skene posterior or the one-coin probability of a document's votes otherwise).
CERTAIN_PROBABILITY = 0.9
# The floor's draws come from their own stream (seeded from ``seed`` and this tag) so that every other
# figure of the result keeps the random numbers it had before the floor counted certain labels only.
_FLOOR_STREAM = 0xF100


def _certain_counts(certain_relevant: Mapping[str, float] | None, *, regions: Mapping[str, RegionSample],
                    others: Mapping[str, RegionSample], noisy: Mapping[str, np.ndarray]) -> dict[str, float] | None:
    """Certainly relevant judged documents per region and other classifier; None when they equal the counts."""
    given = dict(certain_relevant or {})
    out: dict[str, float] = {}
    for key, region in (*regions.items(), *others.items()):
        if key in given:
            value = float(given[key])
            if not 0.0 <= value <= region.judged:
                raise ValueError(f"certain_relevant[{key!r}] must lie in [0, {region.judged}], got {value!r}")
        elif key in noisy:
            value = float(np.sum(noisy[key] >= CERTAIN_PROBABILITY))
        else:
            value = float(region.relevant)
        out[key] = value
    counts = {**{k: float(r.relevant) for k, r in regions.items()}, **{k: float(r.relevant) for k, r in others.items()}}
    return None if all(abs(out[k] - counts[k]) < 1e-12 for k in out) else out


def _certain_floor(certain: Mapping[str, float], *, regions: Mapping[str, RegionSample],
                   others: Mapping[str, RegionSample], seed: int | None, draws: int) -> tuple[float, np.ndarray]:
    """The floor (point, Jeffreys draws) from the certainly relevant documents of each region and classifier."""
    rng = np.random.default_rng(None if seed is None else [int(seed), _FLOOR_STREAM])

    def point_and_draws(key: str, region: RegionSample) -> tuple[float, np.ndarray]:
        sample = RegionSample(size=region.size, judged=region.judged, relevant=certain[key])
        return _point_count(sample), _count_draws(sample, prior=_JEFFREYS, rng=rng, draws=draws)

    pair = {k: point_and_draws(k, regions[k]) for k in ("A12", "B1", "B2")}
    other = {k: point_and_draws(k, r) for k, r in others.items()}
    point = found_floor(union=float(sum(p for p, _ in pair.values())), others=tuple(p for p, _ in other.values()))
    floor_draws = found_floor(union=sum(d for _, d in pair.values()), others=tuple(d for _, d in other.values()))
    return float(point), floor_draws


def _other_recall_from(*, t_point: float, t_draws: np.ndarray, n_hat_point, n_hat_draws, confidence) -> Estimate:
    """Seed 000 Sec. 6: r_C = p_C|A_C|/n̂ with n̂ floored at T_C per draw, so r_C ≤ 1."""
    # n̂ is floored at the certainly relevant documents found, which can be fewer than T_C's estimate: clamp.
    point = min(1.0, t_point / n_hat_point) if (n_hat_point and math.isfinite(t_point)) else math.nan
    return _estimate(point, _quantiles(_clamp_recall(_ratio(t_draws, n_hat_draws), np.float64(1.0)), confidence=confidence),
                     "monte-carlo (Jeffreys posterior percentiles), n̂ floored per draw at the relevant documents found")


# =========================================================================== diagnostics

_REGION_TEXT = {"A12": "A12 (retrieved by both)", "B1": "B1 (C1 only)", "B2": "B2 (C2 only)"}


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _diagnose(*, regions, r1, r2, p1, p2, eq2_r1, eq2_r2, n_hat, corpus_size, min_precision,
              eq2_raw: Mapping[int, float] | None = None, eq2_cap: Mapping[int, float] | None = None,
              off_topic: OffTopicDependence | None = None) -> list[Diagnostic]:
    """Plain-sentence findings about the stratified estimate.

    No diagnostic fires on every topic: the δ1 sensitivity band is a table of the report
    (``sensitivity``), not a finding, and ``eq_disagree`` fires only on evidence of
    off-topic dependence (:func:`off_topic_dependence`).
    """
    out: list[Diagnostic] = []
    for name, region in regions.items():
        if region.size > 0 and region.judged == 0:
            out.append(Diagnostic("unjudged_region", "error",
                f"No document of region {_REGION_TEXT[name]} has been judged yet; the estimates that need it are not available."))
        elif region.judged > 0 and region.relevant < FEW_RELEVANT and region.size > region.judged:
            out.append(Diagnostic("few_relevant", "warning",
                f"Only {region.relevant:g} of the {region.judged} judged documents in region {_REGION_TEXT[name]} were relevant "
                f"(fewer than {FEW_RELEVANT}); the intervals that depend on it are wide and sensitive to single labels. Judge more documents there."))
    if regions["A12"].judged > 0 and regions["A12"].relevant == 0:
        out.append(Diagnostic("no_joint_relevant", "error",
            "No judged document retrieved by both classifiers was relevant, so recall is estimated as 0 and the number of relevant documents cannot be estimated."))
    for label, precision, recall_name in (("p2", p2, "C1"), ("p1", p1, "C2")):
        unstable = precision.point is not None and precision.point < min_precision
        if unstable:
            out.append(Diagnostic(f"{label}_small", "warning",
                f"The precision {label} = {_fmt(precision.point)} is below {min_precision:g}: the recall of {recall_name} divides by it, "
                f"so small errors in the judgments move the estimate a lot."))
    for label, estimate in (("C1", r1), ("C2", r2)):
        if estimate.low is not None and estimate.high - estimate.low > 0.2:
            out.append(Diagnostic("wide_interval", "info",
                f"The recall of {label} is only known to lie between {_fmt(estimate.low)} and {_fmt(estimate.high)}; judge more documents to narrow it."))
    if corpus_size is None:
        out.append(Diagnostic("eq2_unavailable", "info",
            "The corpus size was not given, so Eq. 2 (the cross-check without the joint precision) was not computed."))
    else:
        raw = dict(eq2_raw or {})
        for which, (label, eq2) in enumerate((("C1", eq2_r1), ("C2", eq2_r2)), start=1):
            raw_point = raw.get(which)
            if eq2 is not None and raw_point is not None and math.isfinite(raw_point) and raw_point > 1.0:
                out.append(Diagnostic("eq2_above_one", "warning",
                    f"Eq. 2 gives a recall above 1 for {label} ({_fmt(raw_point)}), a sign that its assumptions fail here; "
                    f"it is shown clamped to what the documents found allow ({_fmt(eq2.point)})."))
            cap = dict(eq2_cap or {}).get(which)
            if (raw_point is not None and cap is not None and math.isfinite(raw_point) and math.isfinite(cap)
                    and cap < raw_point <= 1.0 + 1e-12 and raw_point - cap > 1e-6):
                out.append(Diagnostic("eq2_below_found", "info",
                    f"Eq. 2 gives {label} a recall of {_fmt(raw_point)}, which would mean fewer relevant documents than "
                    f"the classifiers found (at most {_fmt(cap)} is possible); read Eq. 2 as a cross-check only."))
        if off_topic is not None and off_topic.disagree:
            out.append(_eq_disagree_diagnostic(off_topic, r1=r1, r2=r2, eq2_raw=raw))
        if n_hat.point is not None and n_hat.point / corpus_size > 0.05:
            out.append(Diagnostic("not_sparse", "warning",
                f"About {n_hat.point / corpus_size:.1%} of the corpus is relevant; Eq. 2 assumes the topic is rare, so treat it with caution."))
    return out


# =========================================================================== label noise (issue 11, notes §3)

# The Poisson-binomial count of a region's judged documents is drawn exactly as a sum of binomials, one
# per distinct probability, when there are at most this many (votes give a few per stratum); otherwise
# (e.g. Dawid–Skene posteriors) from its normal approximation with the same mean and variance.
_EXACT_LABEL_VALUES = 64


@dataclass(frozen=True)
class LabelNoise:
    """What the label noise did: per region, the judged documents, the expected relevant count (Σ P)
    that replaced the label count, and the standard deviation of the true count among the judged."""

    regions: dict
    method: str

    def as_dict(self) -> dict:
        return jsonable(self)


def _uncertain_labels(label_probabilities: Mapping[str, Sequence[float]] | None,
                      regions: Mapping[str, RegionSample]) -> dict[str, np.ndarray]:
    """The regions whose label probabilities are not all 0 or 1, as arrays (validated against ``judged``)."""
    out: dict[str, np.ndarray] = {}
    for key, values in (label_probabilities or {}).items():
        if key not in regions:
            raise ValueError(f"label_probabilities: unknown region {key!r}")
        probabilities = np.asarray(values, dtype=float)
        if probabilities.shape != (regions[key].judged,):
            raise ValueError(f"label_probabilities[{key!r}] needs one value per judged document "
                             f"({regions[key].judged}), got {probabilities.shape}")
        if probabilities.size and (not np.isfinite(probabilities).all() or probabilities.min() < 0 or probabilities.max() > 1):
            raise ValueError(f"label_probabilities[{key!r}] must lie in [0, 1]")
        if ((probabilities > 0.0) & (probabilities < 1.0)).any():
            out[key] = probabilities
    return out


def _label_noise_summary(noisy: Mapping[str, np.ndarray], regions: Mapping[str, RegionSample]) -> LabelNoise:
    return LabelNoise(
        regions={k: {"judged": regions[k].judged, "relevant_expected": float(np.sum(p)),
                     "sd": float(math.sqrt(float(np.sum(p * (1.0 - p)))))} for k, p in noisy.items()},
        method="per draw, the judged documents' relevant count is drawn from their label probabilities "
               "(Poisson-binomial) before the region's Beta draw",
    )


def _label_count_draws(probabilities: np.ndarray, *, rng: np.random.Generator, draws: int) -> np.ndarray:
    """Draws of the relevant count among judged documents of these label probabilities (Poisson-binomial).

    Exact as a sum of binomials, one per distinct probability (votes give a handful per stratum);
    beyond _EXACT_LABEL_VALUES distinct values (e.g. Dawid–Skene posteriors) the normal
    approximation with the same mean and variance, clipped to the possible range.
    """
    uncertain = probabilities[(probabilities > 0.0) & (probabilities < 1.0)]
    certain = float(np.sum(probabilities[probabilities >= 1.0]))
    values, counts = np.unique(uncertain, return_counts=True)
    if values.size <= _EXACT_LABEL_VALUES:
        k = np.full(draws, certain)
        for value, count in zip(values, counts):
            k = k + rng.binomial(int(count), float(value), size=draws)
        return k
    mean, sd = float(np.sum(uncertain)), math.sqrt(float(np.sum(uncertain * (1.0 - uncertain))))
    return np.clip(certain + mean + sd * rng.standard_normal(draws), certain, certain + uncertain.size)


def _count_draws_label_noise(region: RegionSample, *, judged_counts: np.ndarray, prior: tuple[float, float],
                             rng: np.random.Generator, draws: int) -> np.ndarray:
    """:func:`_count_draws` with the judged documents' relevant count k itself uncertain.

    Per draw: k from ``judged_counts`` (:func:`_label_count_draws`), p ~ Beta(a + k, b + n − k),
    region count = k + Binomial(|h| − n, p).  The propagated label posterior of notes §3: a wrong
    majority label moves the count, not only the Beta draw.
    """
    if region.size == 0:
        return np.zeros(draws)
    n = region.judged
    k = judged_counts
    a, b = prior[0] + k, prior[1] + n - k
    p = rng.beta(np.maximum(a, 1e-12), np.maximum(b, 1e-12))
    p = np.where(a <= 0, 0.0, np.where(b <= 0, 1.0, p))
    remainder = region.size - n
    if remainder <= 0:
        return k.copy()
    if remainder >= _NORMAL_REMAINDER * n:
        sd_u = np.sqrt(remainder * p * (1.0 - p))
        unjudged: np.ndarray = np.clip(remainder * p + sd_u * rng.standard_normal(draws), 0.0, remainder)
    else:
        unjudged = rng.binomial(remainder, p)
    return k + unjudged


@dataclass(frozen=True)
class VoteLabelProbabilities:
    """Result of :func:`vote_label_probabilities`: P(relevant) per document from its votes."""

    probabilities: tuple[float, ...]
    worker_accuracy: float | None  # None: no document had two votes
    stratum_prevalence: dict
    method: str

    def as_dict(self) -> dict:
        return jsonable(self)


def worker_accuracy_from_agreement(*, votes: Sequence[tuple[int, int]]) -> float | None:
    """One-coin worker accuracy a from how often two votes on the same document agree.

    Two votes of symmetric workers of accuracy a agree with probability a² + (1 − a)², whatever
    the document's class, so a = (1 + √(2A − 1))/2 with A the share of agreeing vote pairs
    (A ≤ ½ gives ½: the votes carry no information).  ``votes`` = (relevant votes, total votes)
    per document; documents with fewer than two votes are skipped.  None without any pair.
    Example: three votes per document, workers 80% accurate → A = 0.68, a = 0.8.
    """
    agree = pairs = 0.0
    for relevant, total in votes:
        if total < 2:
            continue
        agree += relevant * (relevant - 1) / 2.0 + (total - relevant) * (total - relevant - 1) / 2.0
        pairs += total * (total - 1) / 2.0
    if pairs == 0:
        return None
    share = agree / pairs
    return 0.5 + 0.5 * math.sqrt(max(0.0, 2.0 * share - 1.0))


def vote_label_probabilities(*, votes: Sequence[tuple[int, int]], strata: Sequence[str],
                             accuracy: float | None = None, iterations: int = 100) -> VoteLabelProbabilities:
    """P(relevant | votes) per document under the one-coin model with a prior per stratum (notes §3, §8).

    P = π_h·a^v(1−a)^(t−v) / (π_h·a^v(1−a)^(t−v) + (1−π_h)·(1−a)^v·a^(t−v)) for v relevant votes of t,
    a the worker accuracy (:func:`worker_accuracy_from_agreement` unless given) and π_h the share of
    relevant documents in the document's stratum, fitted by EM per stratum (one prior across A12 and
    B1/B2 biases each region toward the average, notes §8).  With a = 1 every probability is 0 or 1
    (the majority), so estimators given them behave exactly as with majority labels.
    Example: a = 0.8, π = ½, a 2–1 vote → 0.8; 3–0 → 0.985.
    """
    if len(votes) != len(strata):
        raise ValueError(f"votes ({len(votes)}) and strata ({len(strata)}) must have the same length")
    a = worker_accuracy_from_agreement(votes=votes) if accuracy is None else float(accuracy)
    if a is not None and not 0.5 <= a <= 1.0:
        raise ValueError(f"accuracy must be in [0.5, 1], got {a!r}")
    v = np.array([r for r, _ in votes], dtype=float)
    t = np.array([n for _, n in votes], dtype=float)
    if a is None or a >= 1.0:
        majority = tuple(float(2 * r > n) for r, n in votes)
        return VoteLabelProbabilities(probabilities=majority, worker_accuracy=a, stratum_prevalence={},
                                      method="majority (the votes agree: no label noise)")
    # Log-likelihood ratio of relevant against not relevant for each document.
    llr = (2.0 * v - t) * math.log(a / (1.0 - a))
    keys = np.asarray(list(strata), dtype=object)
    probabilities = np.empty(len(votes))
    prevalence: dict[str, float] = {}
    for key in dict.fromkeys(strata):
        mask = keys == key
        pi = float(np.clip(np.mean(2.0 * v[mask] > t[mask]), 0.01, 0.99))
        for _ in range(iterations):
            posterior = 1.0 / (1.0 + np.exp(-(llr[mask] + math.log(pi / (1.0 - pi)))))
            updated = float(np.clip(np.mean(posterior), 1e-3, 1.0 - 1e-3))
            if abs(updated - pi) < 1e-9:
                break
            pi = updated
        probabilities[mask] = 1.0 / (1.0 + np.exp(-(llr[mask] + math.log(pi / (1.0 - pi)))))
        prevalence[str(key)] = pi
    return VoteLabelProbabilities(probabilities=tuple(float(x) for x in probabilities), worker_accuracy=a,
                                  stratum_prevalence=prevalence,
                                  method="one-coin model: worker accuracy from vote agreement, EM prior per stratum")


# =========================================================================== Eq. 1 against Eq. 2

# A difference between Eq. 1 and Eq. 2 smaller than this (in recall) changes no decision, so it is not
# reported even when it is statistically clear (large, fully judged regions).
EQ_DISAGREE_MIN_EFFECT = 0.02


@dataclass(frozen=True)
class OffTopicDependence:
    """Do the pair's non-relevant documents overlap more (or less) than independence allows?

    Eq. 1 and Eq. 2 differ by exactly (F12 − F1·F2/|U|)/T_other, with F the non-relevant documents
    of A1, A2, A12 (seed 000, Assumption 2).  Under Assumption 2 the overlap F12 is hypergeometric
    around F1·F2/(|U| − N), with standard deviation ≈ √(F1·F2/(|U| − N)) — model noise that no number
    of judgments removes.  ``observed`` = F̂12, ``expected`` = F̂1·F̂2/(|U| − N̂); ``excess_low`` /
    ``excess_high`` bound F12 − expected with both the sampling error of the counts and that model
    noise; ``rejected`` when they exclude 0.  ``effect`` is the largest |Eq. 2 − Eq. 1| of the two
    recalls (points, Eq. 2 unclamped); ``disagree`` = rejected and effect ≥ EQ_DISAGREE_MIN_EFFECT.

    False-alarm rate: a two-sided test at α = 1 − confidence (5% for the report's 0.95).  Measured
    (tests/estimation/stats/test_pair_recall_warning_rates.py, 1,000 simulated independent pairs,
    100 judged per region): it fired on 5.2%.  Power there: 26% when the pair depends at δ = 0.6 on
    every document, 15% at δ = 1.3; dependence among relevant documents alone (δ1) does not move
    Eq. 1 − Eq. 2 and is not detected (3.9% and 6.1%): that takes a sample of N (the design basis).
    ``alpha`` records the rate the test was run at.
    """

    observed: float | None
    expected: float | None
    excess_low: float | None
    excess_high: float | None
    rejected: bool
    effect: float | None
    disagree: bool
    alpha: float | None = None

    def as_dict(self) -> dict:
        return jsonable(self)


def _off_topic_dependence(*, f1, f2, f12, nonrelevant, point: tuple[float, float, float, float], effect: float | None,
                          confidence: float, rng: np.random.Generator) -> OffTopicDependence:
    """:class:`OffTopicDependence` from draws of F1, F2, F12 and |U| − N (arrays of one shape) and their points.

    Per draw: excess = F12 − F1·F2/M − ε with M = |U| − N and ε the hypergeometric noise of the overlap
    under independence (normal, variance F1F2(M − F1)(M − F2)/(M²(M − 1))); the equal-tailed interval of
    the excess at ``confidence`` either contains 0 or it does not.  Drawn last, so the caller's other
    draws are unchanged.  Why not compare the two recall intervals: with large judged regions both
    shrink to points while Eq. 2 keeps its model noise, so they stopped overlapping on pairs whose
    every assumption held (fully judged regions: 20 of 20 simulated independent pairs flagged).
    """
    f1, f2, f12, m = (np.asarray(v, dtype=float) for v in (f1, f2, f12, nonrelevant))
    with np.errstate(divide="ignore", invalid="ignore"):
        m = np.where(np.isfinite(m) & (m > 1.0), np.maximum(m, np.fmax(f1, f2)), np.nan)
        expected = f1 * f2 / m
        variance = f1 * f2 * (m - f1) * (m - f2) / (m * m * (m - 1.0))
    noise = np.sqrt(np.clip(np.nan_to_num(variance, nan=0.0), 0.0, None)) * rng.standard_normal(np.shape(expected))
    excess = f12 - expected - noise
    low, high = _quantiles(excess, confidence=confidence)
    p1, p2, p12, pm = point
    expected_point = p1 * p2 / pm if (math.isfinite(pm) and pm > 1.0) else math.nan
    rejected = bool(math.isfinite(low) and math.isfinite(high) and (low > 0.0 or high < 0.0))
    disagree = rejected and effect is not None and math.isfinite(effect) and effect >= EQ_DISAGREE_MIN_EFFECT
    return OffTopicDependence(observed=_nan_to_none(p12), expected=_nan_to_none(expected_point),
                              excess_low=_nan_to_none(low), excess_high=_nan_to_none(high), rejected=rejected,
                              effect=None if effect is None else _nan_to_none(effect), disagree=disagree,
                              alpha=1.0 - confidence)


def _eq_disagree_diagnostic(off_topic: OffTopicDependence, *, r1: Estimate, r2: Estimate,
                            eq2_raw: Mapping[int, float]) -> Diagnostic:
    more = off_topic.excess_low is not None and off_topic.excess_low > 0
    observed = "n/a" if off_topic.observed is None else f"{off_topic.observed:,.0f}"
    expected = "n/a" if off_topic.expected is None else f"{off_topic.expected:,.0f}"
    rate = "5%" if off_topic.alpha is None else f"{off_topic.alpha:.0%}"
    return Diagnostic("eq_disagree", "warning",
        f"Eq. 1 and Eq. 2 disagree (C1: Eq. 1 {_fmt(r1.point)}, Eq. 2 {_fmt(eq2_raw.get(1))}; C2: Eq. 1 {_fmt(r2.point)}, "
        f"Eq. 2 {_fmt(eq2_raw.get(2))}) by more than chance allows: the two classifiers share about {observed} "
        f"non-relevant documents where independence would give about {expected}, so they are "
        f"{'positively' if more else 'negatively'} dependent on non-relevant documents. Trust Eq. 1, which does not "
        f"need that assumption. This is a test at a {rate} false-alarm rate: on independent classifiers the "
        f"warning appears for about {rate} of pairs by chance.")


# =========================================================================== paper's design


def paper_design_pair_recall(
    *,
    a1: RegionLike,
    a2: RegionLike,
    a12: RegionLike,
    corpus_size: int | None = None,
    confidence: float = 0.95,
    draws: int = DEFAULT_DRAWS,
    seed: int | None = None,
) -> PaperDesignPairRecall:
    """Seed 000 Eq. 1 and Eq. 2 from the paper's design: separate samples of A1, A2 and A12.

    Each argument is a sample of the whole set (size = |A|, judged, relevant).
    The three precisions get independent posteriors (the samples are drawn
    independently even though A12 lies inside A1 and A2 — that is the
    design's waste, notes §2).  Eq. 1 intervals use the conservative
    Clopper–Pearson draws (Eq. 1 is monotone in each precision); Eq. 2 and n̂
    use Jeffreys percentiles.

    Example (Table 3, Obama): |A_seed| = 851, |A_kw| = 7,400, |A_joint| = 513,
    p = 0.984, 0.116, 0.994 → Eq. 1 recall of the seed filter 0.596.
    """
    _check_mc(confidence=confidence, draws=draws)
    s1, s2, s12 = as_region(a1, name="A1"), as_region(a2, name="A2"), as_region(a12, name="A12")
    if s12.size > min(s1.size, s2.size):
        raise ValueError(f"|A12| ({s12.size}) cannot exceed |A1| ({s1.size}) or |A2| ({s2.size})")
    if corpus_size is not None and corpus_size < s1.size + s2.size - s12.size:
        raise ValueError(f"corpus_size ({corpus_size}) is smaller than |A1 ∪ A2|")
    rng = np.random.default_rng(seed)
    alpha = 1.0 - confidence
    samples = {"A1": s1, "A2": s2, "A12": s12}

    def counts(priors: dict[str, tuple[float, float]]):
        return {k: _count_draws(samples[k], prior=priors[k], rng=rng, draws=draws) for k in samples}

    point = {k: np.float64(_point_count(v)) for k, v in samples.items()}

    def eq1_raw(c, own_other: str):
        return _ratio(c["A12"], c[own_other])  # p12|A12| / (p_other|A_other|)

    def eq1(c, own_other: str):
        # Separate samples can put more relevant documents in A12 than in A1 ⊇ A12: clamp to [0, 1].
        return _clamp_recall(eq1_raw(c, own_other), np.float64(1.0))

    def bounds(fn, low_priors, high_priors):
        return _monotone_bounds(fn(counts(low_priors)), fn(counts(high_priors)), alpha=alpha)

    method_cp = "monte-carlo (Clopper–Pearson confidence distributions, conservative)"
    method_j = "monte-carlo (Jeffreys posterior percentiles)"
    lo_r1 = {"A12": _CP_LOW, "A2": _CP_HIGH, "A1": _JEFFREYS}
    hi_r1 = {"A12": _CP_HIGH, "A2": _CP_LOW, "A1": _JEFFREYS}
    lo_r2 = {"A12": _CP_LOW, "A1": _CP_HIGH, "A2": _JEFFREYS}
    hi_r2 = {"A12": _CP_HIGH, "A1": _CP_LOW, "A2": _JEFFREYS}
    eq1_r1 = _estimate(float(eq1(point, "A2")), bounds(lambda c: eq1(c, "A2"), lo_r1, hi_r1), method_cp)
    eq1_r2 = _estimate(float(eq1(point, "A1")), bounds(lambda c: eq1(c, "A1"), lo_r2, hi_r2), method_cp)

    def precision(name):
        s = samples[name]
        fn = lambda c: _ratio(c[name], np.float64(s.size))  # noqa: E731
        down = dict.fromkeys(samples, _CP_LOW)
        up = dict.fromkeys(samples, _CP_HIGH)
        return _estimate(float(fn(point)), bounds(fn, down, up), method_cp)

    central = counts(dict.fromkeys(samples, _JEFFREYS))
    n_hat_fn = lambda c: _ratio(c["A1"] * c["A2"], c["A12"])  # noqa: E731

    def floor_fn(c):
        # Notes §8: n̂ ≥ max(T1, T2) and ≥ the union T1 + T2 − T12 (T12 cannot exceed T1 or T2).
        t12 = np.fmin(c["A12"], np.fmin(c["A1"], c["A2"]))
        return found_floor(union=c["A1"] + c["A2"] - t12, others=(c["A1"], c["A2"]))

    lp_point, floor_point = float(n_hat_fn(point)), float(floor_fn(point))
    lp_draws, floor_draws = n_hat_fn(central), floor_fn(central)
    n_hat_draws_floored = _floored(lp_draws, floor_draws)
    n_hat = _estimate(float(_floored(np.float64(lp_point), np.float64(floor_point))),
                      _quantiles(n_hat_draws_floored, confidence=confidence),
                      method_j + ", floored per draw at the relevant documents found")
    binding = bool(math.isfinite(lp_point) and math.isfinite(floor_point) and lp_point < floor_point)
    comparable = ~(np.isnan(lp_draws) | np.isnan(floor_draws))
    binding_share = float(np.mean(lp_draws[comparable] < floor_draws[comparable])) if comparable.any() else None
    contradicts = bool(binding and binding_share is not None and binding_share >= (1.0 + confidence) / 2.0)

    eq2_r1 = eq2_r2 = None
    if corpus_size is not None and s12.size > 0:
        def eq2(c, which):
            own, other = ("A1", "A2") if which == 1 else ("A2", "A1")
            off = (samples[own].size - c[own]) * (samples[other].size - c[other]) / (corpus_size * s12.size)
            return _clamp_recall(_ratio(s12.size * (1.0 - off), c[other]), np.float64(1.0))

        eq2_r1 = _estimate(float(eq2(point, 1)), _quantiles(eq2(central, 1), confidence=confidence), method_j)
        eq2_r2 = _estimate(float(eq2(point, 2)), _quantiles(eq2(central, 2), confidence=confidence), method_j)

    diagnostics: list[Diagnostic] = []
    for name, s in samples.items():
        if s.size > 0 and s.judged == 0:
            diagnostics.append(Diagnostic("unjudged_region", "error", f"No document of {name} has been judged yet."))
        elif s.judged > 0 and s.relevant < FEW_RELEVANT and s.size > s.judged:
            diagnostics.append(Diagnostic("few_relevant", "warning",
                f"Only {s.relevant:g} of the {s.judged} judged documents of {name} were relevant (fewer than {FEW_RELEVANT})."))
    for label, other_name in (("C1", "A2"), ("C2", "A1")):
        raw = float(eq1_raw(point, other_name))
        if math.isfinite(raw) and raw > 1.0:
            diagnostics.append(Diagnostic("recall_above_one", "warning",
                f"Eq. 1 gives a recall above 1 for {label} ({raw:.3f}; shown as 1): the separate samples disagree; "
                f"the stratified design cannot do this."))
    if binding:
        diagnostics.append(_binding_diagnostic(lp_point=lp_point, floor_point=floor_point, share=binding_share,
                                               contradicts=contradicts))
    # The precisions draw before the off-topic test below, as they did before it existed.
    p1_e, p2_e, p12_e = precision("A1"), precision("A2"), precision("A12")
    if eq2_r1 is not None and eq2_r2 is not None and corpus_size is not None:
        # Eq. 1 against Eq. 2 on evidence of off-topic dependence (as in the stratified design).
        raw_eq2 = {}
        off = (s1.size - point["A1"]) * (s2.size - point["A2"]) / (corpus_size * s12.size)
        for which, other in ((1, "A2"), (2, "A1")):
            raw_eq2[which] = float(_ratio(np.float64(s12.size * (1.0 - off)), point[other]))
        effects = [abs(raw_eq2[w] - e.point) for w, e in ((1, eq1_r1), (2, eq1_r2))
                   if e.point is not None and math.isfinite(raw_eq2[w])]
        off_topic = _off_topic_dependence(
            f1=s1.size - central["A1"], f2=s2.size - central["A2"], f12=s12.size - central["A12"],
            nonrelevant=corpus_size - n_hat_draws_floored,
            point=(s1.size - float(point["A1"]), s2.size - float(point["A2"]), s12.size - float(point["A12"]),
                   corpus_size - float(n_hat.point) if n_hat.point is not None else math.nan),
            effect=max(effects) if effects else None, confidence=confidence, rng=rng)
        if off_topic.disagree:
            diagnostics.append(_eq_disagree_diagnostic(off_topic, r1=eq1_r1, r2=eq1_r2, eq2_raw=raw_eq2))
    return PaperDesignPairRecall(
        confidence=confidence, draws=int(draws), seed=seed,
        p1=p1_e, p2=p2_e, p12=p12_e,
        eq1_r1=eq1_r1, eq1_r2=eq1_r2, eq2_r1=eq2_r1, eq2_r2=eq2_r2, n_hat=n_hat,
        diagnostics=tuple(diagnostics), bound_binding=binding, bound_binding_share=binding_share, contradicts_found=contradicts,
    )


# =========================================================================== design checks (issue 11)


@dataclass(frozen=True)
class PairDesignCheck:
    """Result of :func:`pair_design_problems`: coded problems; ``refused`` when any is an error."""

    problems: tuple[Diagnostic, ...]
    refused: bool

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(d.code for d in self.problems)

    def as_dict(self) -> dict:
        return jsonable(self)


def pair_design_problems(
    *,
    size_a12: int,
    size_b1: int,
    size_b2: int,
    precision_a12: float | None = None,
    precision_b1: float | None = None,
    precision_b2: float | None = None,
    judged_a12: int | None = None,
    judged_b1: int | None = None,
    judged_b2: int | None = None,
    min_region_size: int = 10,
    min_expected_relevant: float = FEW_RELEVANT,
) -> PairDesignCheck:
    """Can this pair measure recall at all?  A pure check of the Venn regions (notes §2, §8).

    Errors (refuse the pair):

    * ``nested_b2_empty`` — A2 ⊆ A1 (B2 = A2∖A1 empty): r1* = T12/(T12 + T_B2) = 1 by construction.
    * ``nested_b1_empty`` — A1 ⊆ A2 (B1 empty): r2* = 1 by construction, and r1* = T1/T2 is C1's
      recall relative to C2 (δ1 = 1/r2, maximal dependence).  Notes §8 words this case as "B1 empty
      makes r1* = 1"; with r1* = T12/(T12 + T_B2) it is B2 empty that does, and either nesting is refused.
    * ``identical_sets`` — both empty; ``disjoint_pair`` — A12 empty (r1* = r2* = 0 by construction).

    Warnings: ``a12_small`` / ``region_small`` — a non-empty region under ``min_region_size``
    documents; ``few_relevant_expected`` — a region expected to hold fewer than
    ``min_expected_relevant`` relevant documents (|h|·p_h), or a planned sample of it expected to
    find fewer (n_h·p_h), when the precisions are given.  Example (notes §8, Reuters `earn`): a
    partner containing the classifier is refused instead of certifying with r* = 1.
    """
    sizes = {"A12": size_a12, "B1": size_b1, "B2": size_b2}
    for name, size in sizes.items():
        _check_size(size, f"size_{name.lower()}")
    precisions = {"A12": precision_a12, "B1": precision_b1, "B2": precision_b2}
    judged = {"A12": judged_a12, "B1": judged_b1, "B2": judged_b2}
    problems: list[Diagnostic] = []
    if size_a12 == 0:
        problems.append(Diagnostic("disjoint_pair", "error",
            "The two classifiers retrieved no document in common, so the pair measures a recall of 0 by construction. Choose another partner."))
    if size_b1 == 0 and size_b2 == 0:
        problems.append(Diagnostic("identical_sets", "error",
            "The two classifiers retrieved exactly the same documents, so each measures the other's recall as 1 by construction. Choose another partner."))
    elif size_b2 == 0:
        problems.append(Diagnostic("nested_b2_empty", "error",
            "Every document C2 retrieved was also retrieved by C1 (B2 is empty), so the pair gives C1 a recall of 1 by construction. Choose a partner that finds documents C1 misses."))
    elif size_b1 == 0:
        problems.append(Diagnostic("nested_b1_empty", "error",
            "Every document C1 retrieved was also retrieved by C2 (B1 is empty), so the pair gives C2 a recall of 1 by construction and C1's figure is only its recall relative to C2. Choose a partner that does not contain C1."))
    for name, size in sizes.items():
        if 0 < size < min_region_size:
            code = "a12_small" if name == "A12" else "region_small"
            problems.append(Diagnostic(code, "warning",
                f"Region {_REGION_TEXT[name]} holds only {size} documents (fewer than {min_region_size}); the pair's figures rest on very few documents."))
        precision = precisions[name]
        if precision is None or size == 0:
            continue
        _check_precision(precision, f"precision_{name.lower()}")
        expected_region = size * precision
        n = judged[name]
        expected_sample = None if n is None else min(n, size) * precision
        if expected_region < min_expected_relevant or (expected_sample is not None and expected_sample < min_expected_relevant):
            where = (f"{expected_region:.1f} in the region" if expected_region < min_expected_relevant
                     else f"{expected_sample:.1f} in a sample of {n}")
            problems.append(Diagnostic("few_relevant_expected", "warning",
                f"Region {_REGION_TEXT[name]} is expected to hold few relevant documents ({where}, fewer than {min_expected_relevant:g}); "
                f"its share is too uncertain to measure recall well."))
    return PairDesignCheck(problems=tuple(problems), refused=any(d.severity == "error" for d in problems))


# =========================================================================== near-nesting on evidence (issue 24 #3)

# A one-only region (B1 or B2) that holds, at confidence 1 − α, less than this share of the relevant
# documents the pair found (T12 + T_B1 + T_B2) makes the pair nearly nested: the pair model then measures
# one classifier's recall relative to the other (δ1 ≈ 1/r_partner), far outside any declared band.
NEAR_NESTING_SHARE = 0.05


def nesting_share_bounds(*, sizes: Mapping[str, int], judged: Mapping[str, int | np.ndarray],
                         relevant: Mapping[str, float | np.ndarray],
                         confidence: float = 0.95) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """One-sided 1 − α (low, high) bounds of each region's share of the pair's relevant documents.

    share_h = T_h/(T12 + T_B1 + T_B2) for h in A12, B1, B2.  Vectorised: ``judged`` / ``relevant`` may be
    arrays (one simulated study per element).  Conservative: for the low bound T_h at its one-sided
    Clopper–Pearson lower bound and the two other regions at their upper bounds (the high bound the other
    way round), each at α/3 (Bonferroni over the three regions, so each bound holds at 1 − α).  A region
    judged whole is exact; an unjudged non-empty region may hold anything from none to all relevant.
    """
    alpha = (1.0 - confidence) / 3.0
    keys = ("A12", "B1", "B2")
    n = {k: np.asarray(judged[k], dtype=float) for k in keys}
    found = {k: np.asarray(relevant[k], dtype=float) for k in keys}
    size = {k: float(sizes[k]) for k in keys}
    upper, lower = {}, {}
    with np.errstate(divide="ignore", invalid="ignore"):
        for key in keys:
            whole = n[key] >= size[key]
            exact = np.where(n[key] > 0, found[key] / np.maximum(n[key], 1.0), 0.0)
            hi = np.where(found[key] >= n[key], 1.0, stats.beta.ppf(1.0 - alpha, found[key] + 1.0, n[key] - found[key]))
            lo = np.where(found[key] <= 0, 0.0, stats.beta.ppf(alpha, found[key], n[key] - found[key] + 1.0))
            upper[key] = size[key] * np.where(whole, exact, np.where(n[key] > 0, hi, 1.0))
            lower[key] = size[key] * np.where(whole, exact, np.where(n[key] > 0, lo, 0.0))
        out = {}
        for key in keys:
            others = [o for o in keys if o != key]
            low_total = lower[key] + sum(upper[o] for o in others)
            high_total = upper[key] + sum(lower[o] for o in others)
            low = np.where(low_total > 0, lower[key] / np.where(low_total > 0, low_total, 1.0), 0.0)
            high = np.where(high_total > 0, upper[key] / np.where(high_total > 0, high_total, 1.0), 1.0)
            out[key] = (low, high)
    return out


@dataclass(frozen=True)
class NestingEvidence:
    """Result of :func:`pair_nesting_evidence`: can the samples show the pair is not nearly nested or disjoint?

    ``size_share`` — each region's share of the union's documents |A1 ∪ A2| (exact); ``relevant_share`` —
    per region (A12, B1, B2) the one-sided (low, high) 1 − α bounds of its share of the pair's relevant
    documents (:func:`nesting_share_bounds`).  ``refused`` when a non-empty region's low bound is below
    ``max_share``; ``problems`` say why in words.
    """

    size_share: dict
    relevant_share: dict
    max_share: float
    confidence: float
    refused: bool
    problems: tuple[Diagnostic, ...]

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(d.code for d in self.problems)

    def as_dict(self) -> dict:
        return jsonable(self)


def pair_nesting_evidence(*, a12: RegionLike, b1: RegionLike, b2: RegionLike, confidence: float = 0.95,
                          max_share: float = NEAR_NESTING_SHARE) -> NestingEvidence:
    """Near-nesting and near-disjointness judged on evidence: region sizes and the judged samples (issue 24 #3).

    The exact refusals of :func:`pair_design_problems` catch B1, B2 or A12 *empty*; one changed keyword gets
    past them.  Here the pair-model basis is allowed only when the samples show, at ``confidence``, that each
    of B1, B2 and A12 holds at least ``max_share`` of the relevant documents the pair found: a test of
    H0 "nearly nested (or nearly disjoint)" at α = 1 − confidence, so a pair that is nearly nested by this
    definition is let through in at most a share α of studies.  A nearly nested pair's r* is ≈ 1, or one
    classifier's recall relative to the other (δ1 ≈ 1/r_partner, far outside any declared band); a nearly
    disjoint pair's is ≈ 0.  An unjudged region shows nothing: judge a pilot of it first.

    Example (Reuters `earn`, notes §8): title keywords beside a body partner leaving 38 documents in B1
    against ≈ 1,700 relevant in A12: B1's share is at most 38/1,700 ≈ 2% < 5%, refused.  Measured
    (tests/estimation/test_pair_validity_near_nesting.py, 2,000 studies, recall 0.573 against τ = 0.70,
    band 0.8–1.25): the pair-model verdict passed 100% without this check, 0% with it.  The check does not
    make the band true: a pair just outside the definition (B1 holding 6% or 10%) with a weak partner still
    passes wrongly (measured ≈ 100%); only the design basis (a sample of N) assumes nothing.
    """
    regions = {"A12": as_region(a12, name="A12"), "B1": as_region(b1, name="B1"), "B2": as_region(b2, name="B2")}
    union = sum(r.size for r in regions.values())
    size_share = {k: (r.size / union if union else None) for k, r in regions.items()}
    sizes = {k: r.size for k, r in regions.items()}
    bounds = nesting_share_bounds(sizes=sizes, judged={k: r.judged for k, r in regions.items()},
                                  relevant={k: r.relevant for k, r in regions.items()}, confidence=confidence)
    share = {k: (float(low), float(high)) for k, (low, high) in bounds.items()}
    problems: list[Diagnostic] = []
    text = {"B1": ("B1 (C1 only)", "C1", "C2"), "B2": ("B2 (C2 only)", "C2", "C1")}
    for key in ("B1", "B2"):
        low, high = share[key]
        if sizes[key] == 0 or low >= max_share:
            continue
        region, inside, outer = text[key]
        unjudged = regions[key].judged == 0
        evidence = ("none of its documents has been judged, so nothing shows it holds relevant documents"
                    if unjudged else f"the judged samples put the share of the pair's relevant documents there "
                                     f"between {low:.1%} and {high:.1%}")
        problems.append(Diagnostic(f"nearly_nested_{key.lower()}", "error",
            f"Region {region} holds {sizes[key]:,} documents and {evidence}: nothing shows it holds at least "
            f"{max_share:.0%} ({confidence:.0%} confidence). If {inside} finds almost nothing {outer} misses, the "
            f"two are nearly nested and the pair's model measures one's recall relative to the other, not over "
            f"the corpus. The pair cannot certify recall on its model: certify with a dependence check (a sample "
            f"of the documents neither retrieved), or choose a partner that finds documents on its own"
            + (", or judge a pilot of the region first." if unjudged else ".")))
    low, high = share["A12"]
    if sizes["A12"] > 0 and low < max_share:
        problems.append(Diagnostic("nearly_disjoint", "error",
            f"Nothing shows that the documents both classifiers retrieved hold at least {max_share:.0%} of the "
            f"relevant documents the pair found (the samples put it between {low:.1%} and {high:.1%}, "
            f"{confidence:.0%} confidence): if the pair is nearly disjoint its model gives recalls near 0 by "
            f"construction. Choose another partner, or certify with a dependence check."))
    return NestingEvidence(size_share=size_share, relevant_share=share, max_share=float(max_share),
                           confidence=float(confidence), refused=bool(problems), problems=tuple(problems))
