"""Certification of a classifier without sequential-testing bias.

Seed 004 (Bagdouri, Webber, Lewis, Oard, CIKM 2013): fix the size of a fresh
certification test set by power analysis (Alg. 1 and 2) from a pilot
confusion matrix, draw it once, and pass iff the one-sided lower confidence
bound on F1 is at least the target. Also the quantile-based recall
certification of Lewis, Yang & Frieder (QBCB, CIKM 2021; notes §6).

Which F1 bound.  Seed 004 tests with the normal approximation of Appendix A
(``f1_interval``).  Simulated at a true F1 equal to the target it passes
6.1% ± 0.2% of the time at α = 5% on 2,000 uniform documents (about 200
relevant or retrieved ones; 20,000 test sets), 5.1% at 10,000: a
certification that can be challenged.  The verdict (``certification_passes``) and the Alg. 1
simulation that sizes it therefore use an exact bound instead
(``f1_exact_lower_bound``): in a uniform sample, given the m documents that
are relevant or retrieved, the errors (FP + FN) among them are
Binomial(m, e) with e = (FP + FN)/(TP + FP + FN), and F1 = 2(1 − e)/(2 − e)
decreases in e, so the one-sided Clopper–Pearson upper limit on e maps to
a lower limit on F1 with coverage ≥ 1 − α for every m.  ``f1_interval``
stays Appendix A, for reports and comparison.

Conventions: ``tp`` and ``fp`` are relevant / not relevant documents among
the sampled *retrieved* ones, ``fn`` and ``tn`` among the sampled
*unretrieved* ones. F1 = 2TP / (2TP + FP + FN).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import (
    betaincinv,
    ndtri,  # normal quantile; much cheaper per call than norm.ppf
)
from scipy.stats import binom

from .pair_recall import recall_under_delta1, stratified_pair_recall_low

__all__ = [
    "CertificationImpossible",
    "F1Interval",
    "f1_interval",
    "certification_theta_star",
    "certification_test_size",
    "certification_test_size_closed_form",
    "certification_passes",
    "f1_exact_lower_bound",
    "qbcb_min_found",
    "qbcb_passes",
    "qbcb_min_relevant",
    "qbcb_min_sample_size",
    "LeastFavourableBound",
    "pair_recall_least_favourable_bound",
    "least_favourable_lows",
    "FamilywiseFalsePass",
    "familywise_false_pass_bound",
    "AttemptAlpha",
    "alpha_per_attempt",
]

_DEFAULT_SIMULATIONS = 10_000
_DEFAULT_MAX_SIZE = 50_000_000


class CertificationImpossible(ValueError):
    """No certification test set of any affordable size can give the power asked for.

    ``reason`` holds a sentence suitable for showing to a user.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class F1Interval:
    """Normal-approximation confidence interval on F1 (seed 004, Appendix A)."""

    estimate: float
    sd: float
    low: float
    high: float
    confidence: float
    one_sided: bool


# --------------------------------------------------------------------------
# Appendix A: the F1 estimate and its standard error (vectorised internals)
# --------------------------------------------------------------------------

def _smoothed(relevant: np.ndarray, size: np.ndarray) -> np.ndarray:
    """Proportion for a variance term; Jeffreys-smoothed when the plug-in is 0 or 1.

    A stratum sample with no (or only) relevant documents has zero plug-in
    variance, so that stratum's uncertainty would vanish from the interval
    (common for the unretrieved stratum at low prevalence). Only such
    degenerate terms are smoothed, to (r + 0.5)/(n + 1); every other case is
    exactly Appendix A.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        plain = np.where(size > 0, relevant / np.maximum(size, 1), 0.5)
    degenerate = (relevant <= 0) | (relevant >= size)
    return np.where(degenerate, (relevant + 0.5) / (size + 1.0), plain)


def _stratified_estimate_sd(*, tp, fp, fn, tn, retrieved_size, unretrieved_size):
    """F1 estimate and sd from a sample stratified by retrieved / unretrieved.

    Seed 004, Appendix A: R1 = N1 r1/n1, R0 = N0 r0/n0, F1 = 2R1/(R1+R0+N1),
    and Eq. 4 (propagation of error, independent strata, no finite-population
    correction). Eq. 4 already contains the sample sizes, so there is no
    further division by (n - 1) as Eq. 5 prints (notes §6).
    """
    n1, n0 = tp + fp, fn + tn
    p1 = np.where(n1 > 0, tp / np.maximum(n1, 1), 0.0)
    p0 = np.where(n0 > 0, fn / np.maximum(n0, 1), 0.0)
    r1, r0 = retrieved_size * p1, unretrieved_size * p0
    total = r1 + r0 + retrieved_size
    estimate = 2.0 * r1 / total
    q1, q0 = _smoothed(tp, n1), _smoothed(fn, n0)
    var_r1 = retrieved_size**2 * q1 * (1.0 - q1) / np.maximum(n1, 1)
    var_r0 = unretrieved_size**2 * q0 * (1.0 - q0) / np.maximum(n0, 1)
    var_r0 = np.where(n0 > 0, var_r0, 0.0)  # an unsampled empty stratum adds nothing
    # The partial derivatives of Appendix A, Eqs. 2-3, taken at the smoothed point
    # so that the variance does not vanish when r1 = 0.
    r1_var = retrieved_size * q1
    total_var = r1_var + unretrieved_size * q0 + retrieved_size
    variance = 4.0 / total_var**4 * ((unretrieved_size * q0 + retrieved_size) ** 2 * var_r1
                                     + r1_var**2 * var_r0)
    return estimate, np.sqrt(variance)


def _uniform_estimate_sd(*, tp, fp, fn):
    """F1 estimate and sd from a simple random sample of the whole population.

    Propagation of error (Appendix A, Eq. 1) applied to the multinomial cell
    proportions gives Var(F1) = F(1-F)(2-F) / D with D = 2TP + FP + FN
    (notes §6) — the unconditional variance, which also accounts for the
    random split of the sample into retrieved and unretrieved documents.
    """
    denominator = 2.0 * tp + fp + fn
    safe = np.maximum(denominator, 1.0)
    estimate = np.where(denominator > 0, 2.0 * tp / safe, 0.0)
    variance = estimate * (1.0 - estimate) * (2.0 - estimate) / safe
    return estimate, np.sqrt(np.maximum(variance, 0.0))


def _f1_from_error_share(error_share):
    """F1 as a function of e = (FP + FN) / (TP + FP + FN): F1 = 2(1 - e) / (2 - e), decreasing."""
    return 2.0 * (1.0 - error_share) / (2.0 - error_share)


def _uniform_limits(*, tp, fp, fn, tail: float, one_sided: bool):
    """Confidence limits on F1 from a uniform sample, vectorised.

    Interior samples: the normal approximation of Appendix A with the
    variance above. When the sample holds no errors (FP + FN = 0, F1 = 1) or
    no true positives (F1 = 0) that variance is zero and the Wald interval
    collapses to a point — five perfect documents would "certify" any
    target. There F1 is bounded exactly instead: given m = TP + FP + FN the
    number of errors is Binomial(m, e) and F1 decreases in e, so the
    Clopper-Pearson limit on e for 0 (or m) errors, 1 - tail^(1/m) (or
    tail^(1/m)), maps to a valid limit on F1.
    """
    estimate, sd = _uniform_estimate_sd(tp=tp, fp=fp, fn=fn)
    z = ndtri(1.0 - tail)
    low = np.clip(estimate - z * sd, 0.0, 1.0)
    high = np.ones_like(estimate) if one_sided else np.clip(estimate + z * sd, 0.0, 1.0)
    m = np.maximum(tp + fp + fn, 1.0)
    no_errors = (fp + fn <= 0) & (tp > 0)
    no_hits = (tp <= 0) & (fp + fn > 0)
    low = np.where(no_errors, _f1_from_error_share(1.0 - tail ** (1.0 / m)), low)
    low = np.where(tp <= 0, 0.0, low)
    if not one_sided:
        high = np.where(no_hits, _f1_from_error_share(tail ** (1.0 / m)), high)
        high = np.where(tp + fp + fn <= 0, 1.0, high)
    return estimate, sd, low, high


def _check_counts(**counts: int | None) -> None:
    for name, value in counts.items():
        if value is not None and (value < 0 or value != int(value)):
            raise ValueError(f"{name} must be a non-negative integer (got {value!r})")


def _check_level(name: str, value: float) -> None:
    if not 0.0 < value < 1.0:
        raise ValueError(f"{name} must lie strictly between 0 and 1 (got {value!r})")


def f1_interval(*, tp: int, fp: int, fn: int, tn: int | None = None,
                retrieved_size: int | None = None, unretrieved_size: int | None = None,
                confidence: float = 0.95, one_sided: bool = False) -> F1Interval:
    """Normal-approximation confidence interval on F1 — seed 004, Appendix A.

    Two designs:

    * stratified (``retrieved_size`` N1 and ``unretrieved_size`` N0 given):
      a sample of n1 = tp + fp of the N1 retrieved documents and of
      n0 = fn + tn of the N0 unretrieved ones; variance by Eq. 4.
    * uniform (sizes omitted): a simple random sample of the population;
      Var = F(1-F)(2-F) / (2TP + FP + FN), Eq. 1 on the multinomial cells.
      A sample with F1 = 1 or 0 gets an exact (Clopper-Pearson) limit
      instead of a zero-width interval.

    ``one_sided=True`` gives the lower one-sided interval [low, 1] used for
    certification (seed 004, Sec. 5.3); otherwise a two-sided interval.
    The interval is clipped to [0, 1].

    Example (notes §6): N1 = 10,000 retrieved with 280 relevant in a sample
    of 400, N0 = 90,000 with 40 relevant in 2,000: F1 = 0.7447, sd = 0.0189,
    one-sided 95% lower bound 0.7135.
    """
    _check_counts(tp=tp, fp=fp, fn=fn, tn=tn)
    _check_level("confidence", confidence)
    if (retrieved_size is None) != (unretrieved_size is None):
        raise ValueError("give both retrieved_size and unretrieved_size, or neither")
    if retrieved_size is not None:
        assert unretrieved_size is not None  # both or neither, checked above
        if tn is None:
            raise ValueError("a stratified sample needs tn (the unretrieved sample's non-relevant count)")
        if retrieved_size < tp + fp or unretrieved_size < fn + tn:
            raise ValueError("a stratum's sample is larger than the stratum")
        if tp + fp == 0:
            raise ValueError("the retrieved stratum was not sampled (tp + fp = 0)")
        if fn + tn == 0 and unretrieved_size > 0:
            # Treating an unsampled stratum as free of relevant documents would
            # silently overstate recall and F1.
            raise ValueError("the unretrieved stratum was not sampled (fn + tn = 0)")
        estimate, sd = _stratified_estimate_sd(
            tp=np.float64(tp), fp=np.float64(fp), fn=np.float64(fn), tn=np.float64(tn),
            retrieved_size=float(retrieved_size), unretrieved_size=float(unretrieved_size))
        estimate, sd = float(estimate), float(sd)
        z = ndtri(confidence if one_sided else 0.5 + confidence / 2.0)
        low = max(0.0, estimate - z * sd)
        high = 1.0 if one_sided else min(1.0, estimate + z * sd)
    else:
        tail = 1.0 - confidence if one_sided else (1.0 - confidence) / 2.0
        limits = _uniform_limits(tp=np.float64(tp), fp=np.float64(fp), fn=np.float64(fn),
                                 tail=tail, one_sided=one_sided)
        estimate, sd, low, high = (float(value) for value in limits)
    return F1Interval(estimate, sd, float(low), float(high), confidence, one_sided)


def f1_exact_lower_bound(*, tp: int, fp: int, fn: int, confidence: float = 0.95) -> float:
    """One-sided exact lower confidence limit on F1 from a uniform random sample.

    Given m = TP + FP + FN, the errors FP + FN are Binomial(m, e) (the m
    documents are a uniform sample of those relevant or retrieved); the
    Clopper–Pearson upper limit u on e at ``confidence`` gives
    F1 ≥ 2(1 − u)/(2 − u) (F1 = 2TP/(2TP + FP + FN) = 2(1 − e)/(2 − e),
    decreasing in e).  Coverage ≥ confidence for every m, so also overall.
    0 when m = 0 or TP = 0.  Example: TP = 170, FP + FN = 60 (F1 0.850) at
    95%: u = 0.313, bound 0.815 (Appendix A's normal bound: 0.819).
    """
    _check_counts(tp=tp, fp=fp, fn=fn)
    _check_level("confidence", confidence)
    return float(_exact_uniform_low(tp=np.float64(tp), fp=np.float64(fp), fn=np.float64(fn),
                                    tail=1.0 - confidence))


def _exact_uniform_low(*, tp, fp, fn, tail: float):
    """:func:`f1_exact_lower_bound` vectorised (``tail`` = 1 − confidence)."""
    errors = fp + fn
    # Clopper–Pearson upper limit on e: the (1 − tail) quantile of Beta(errors + 1, m − errors) with
    # m − errors = tp; 1 when all are errors.
    upper = np.where(tp > 0, betaincinv(errors + 1.0, np.maximum(tp, 1e-300), 1.0 - tail), 1.0)
    return np.where(tp > 0, _f1_from_error_share(upper), 0.0)


def certification_passes(*, tp: int, fp: int, fn: int, tn: int | None = None, target: float,
                         alpha: float = 0.05) -> bool:
    """The certification test of seed 004, Sec. 5.3, on a fresh uniform test set.

    Pass iff the one-sided 1 − alpha lower confidence bound on F1 is at least
    ``target`` — the exact bound :func:`f1_exact_lower_bound`, not Appendix
    A's normal one (see the module docstring for why).  The test set must
    have been sized before it was drawn (``certification_test_size``) and
    judged in full before this is called.
    """
    _check_counts(tp=tp, fp=fp, fn=fn, tn=tn)
    return f1_exact_lower_bound(tp=tp, fp=fp, fn=fn, confidence=1.0 - alpha) >= target


# --------------------------------------------------------------------------
# Alg. 1 and Alg. 2: certification test-set size by simulation
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class _PopulationDraws:
    """Draws from the pilot posterior over infinite-population confusion matrices.

    Seed 004, Sec. 4.3: Jeffreys Beta posteriors on the fraction relevant in
    the retrieved and unretrieved segments; the retrieved fraction is taken
    as known.
    """

    retrieved_fraction: float
    retrieved_precision: np.ndarray
    unretrieved_rate: np.ndarray

    def f1(self) -> np.ndarray:
        tp = self.retrieved_fraction * self.retrieved_precision
        fn = (1.0 - self.retrieved_fraction) * self.unretrieved_rate
        return 2.0 * tp / (tp + self.retrieved_fraction + fn)


def _posterior_draws(*, tp: int, fp: int, fn: int, tn: int, simulations: int,
                     rng: np.random.Generator, retrieved_fraction: float | None) -> _PopulationDraws:
    if tp + fp + fn + tn == 0:
        raise ValueError("the pilot holds no judged documents")
    if simulations < 100:
        raise ValueError(f"simulations must be at least 100 (got {simulations!r})")
    if retrieved_fraction is None:
        # Seed 004, footnote 6: the proportion retrieved in the sample.
        retrieved_fraction = (tp + fp) / (tp + fp + fn + tn)
    if not 0.0 < retrieved_fraction <= 1.0:
        raise ValueError(f"retrieved_fraction must lie in (0, 1] (got {retrieved_fraction!r})")
    return _PopulationDraws(
        retrieved_fraction=float(retrieved_fraction),
        retrieved_precision=rng.beta(0.5 + tp, 0.5 + fp, size=simulations),
        unretrieved_rate=rng.beta(0.5 + fn, 0.5 + tn, size=simulations),
    )


def _simulated_lower_bounds(population: _PopulationDraws, *, size: int, alpha: float,
                            rng: np.random.Generator) -> np.ndarray:
    """One uniform test set of ``size`` per population draw; its 1 - alpha lower bound.

    Seed 004, Alg. 1, lines 3-5, vectorised over the draws.
    """
    count = population.retrieved_precision.size
    retrieved = rng.binomial(size, population.retrieved_fraction, size=count)
    tp = rng.binomial(retrieved, population.retrieved_precision)
    fn = rng.binomial(size - retrieved, population.unretrieved_rate)
    # Exactly the bound certification_passes computes on the real test set.
    return _exact_uniform_low(tp=tp.astype(float), fp=(retrieved - tp).astype(float), fn=fn.astype(float),
                              tail=alpha)


def _theta_star(population: _PopulationDraws, *, size: int, alpha: float, power: float,
                seed: np.random.SeedSequence) -> float:
    """Seed 004, Alg. 1: the (1 - power) quantile of simulated lower bounds.

    The same random stream is used for every size (common random numbers),
    which makes theta*(size) nearly monotone and the binary search stable.
    """
    rng = np.random.default_rng(seed)
    bounds = _simulated_lower_bounds(population, size=size, alpha=alpha, rng=rng)
    return float(np.quantile(bounds, 1.0 - power))


def _check_pilot(*, tp: int, fp: int, fn: int, tn: int, target: float, alpha: float,
                 power: float) -> float:
    _check_counts(tp=tp, fp=fp, fn=fn, tn=tn)
    _check_level("target", target)
    _check_level("alpha", alpha)
    _check_level("power", power)
    denominator = 2 * tp + fp + fn
    pilot_f1 = 2 * tp / denominator if denominator else 0.0
    if pilot_f1 <= target:
        raise CertificationImpossible(
            f"the pilot F1 {pilot_f1:.3f} is not above the target {target:.3f}: no test set "
            "of any size would certify it with the required power (seed 004, Alg. 2, line 1).")
    return pilot_f1


def certification_theta_star(*, tp: int, fp: int, fn: int, tn: int, size: int,
                             alpha: float = 0.05, power: float = 0.93, seed: int | None = None,
                             simulations: int = _DEFAULT_SIMULATIONS,
                             retrieved_fraction: float | None = None) -> float:
    """Seed 004, Alg. 1 (EstimateThetaStar) from pilot confusion counts.

    The highest target that a uniform test set of ``size`` documents would
    certify (one-sided 1 - alpha lower bound >= target) with probability
    ``power``, averaging over the Jeffreys posterior of the pilot (Sec. 4.3).
    """
    _check_counts(tp=tp, fp=fp, fn=fn, tn=tn)
    if size < 1:
        raise ValueError(f"size must be at least 1 (got {size!r})")
    root = np.random.SeedSequence(seed)
    posterior_seed, sampling_seed = root.spawn(2)
    population = _posterior_draws(tp=tp, fp=fp, fn=fn, tn=tn, simulations=simulations,
                                  rng=np.random.default_rng(posterior_seed),
                                  retrieved_fraction=retrieved_fraction)
    return _theta_star(population, size=size, alpha=alpha, power=power, seed=sampling_seed)


def certification_test_size(*, tp: int, fp: int, fn: int, tn: int, target: float,
                            alpha: float = 0.05, power: float = 0.93, seed: int | None = None,
                            simulations: int = _DEFAULT_SIMULATIONS,
                            retrieved_fraction: float | None = None,
                            relative_tolerance: float = 0.005,
                            max_size: int = _DEFAULT_MAX_SIZE) -> int:
    """Number of documents to sample uniformly for the certification test.

    Seed 004, Alg. 2 (with Alg. 1 inside and the Sec. 4.3 Jeffreys posterior
    over the retrieved and unretrieved segments): the smallest size whose
    simulated one-sided 1 - alpha lower bounds on F1 reach ``target`` with
    probability ``power``. Sizes are doubled (or halved) from the closed-form
    size until theta* crosses the target, then found by binary search to
    ``relative_tolerance``. (The seed doubles from 1 and stops at any size
    with target <= theta* <= 1.01 target, which can overshoot the smallest
    size; this searches for the smallest.)

    ``tp, fp, fn, tn`` are the pilot counts (e.g. summed cross-validation
    confusion matrices, seed 004 Sec. 4.4); ``retrieved_fraction`` is the
    population's fraction retrieved if known (default: the pilot's).

    Raises CertificationImpossible when the pilot F1 is not above the target,
    when the pilot leaves so much doubt that even an unlimited test set would
    pass less often than ``power``, or when the size would exceed ``max_size``.

    Example: pilot tp=300, fp=60, fn=90, tn=2550 (F1 0.80), target 0.75,
    alpha 0.05, power 0.93 -> about 6,000 documents (about 3,700 from a
    pilot ten times larger; the closed form of notes §6, which ignores the
    pilot's own uncertainty and uses the normal bound, gives 2,992).
    """
    _check_pilot(tp=tp, fp=fp, fn=fn, tn=tn, target=target, alpha=alpha, power=power)
    root = np.random.SeedSequence(seed)
    posterior_seed, sampling_seed = root.spawn(2)
    population = _posterior_draws(tp=tp, fp=fp, fn=fn, tn=tn, simulations=simulations,
                                  rng=np.random.default_rng(posterior_seed),
                                  retrieved_fraction=retrieved_fraction)
    # As the test set grows, theta* tends to the (1 - power) quantile of the
    # posterior F1; if that is below the target no size can do it.
    ceiling = float(np.quantile(population.f1(), 1.0 - power))
    if ceiling < target:
        raise CertificationImpossible(
            f"the pilot sample is too small or too uncertain: with probability above "
            f"{1.0 - power:.0%} the true F1 is below the target {target:.3f} "
            f"({1.0 - power:.0%} posterior quantile {ceiling:.3f}), so no test set of any size "
            "gives the required power. Judge more pilot documents or improve the classifier.")

    def theta_star(size: int) -> float:
        return _theta_star(population, size=size, alpha=alpha, power=power, seed=sampling_seed)

    # The closed form (which ignores the pilot's uncertainty) is a good first
    # guess; bracketing from it instead of from 1 (seed 004 doubles from 1)
    # halves the number of Alg. 1 calls without changing what is searched for.
    guess = min(max_size, _closed_form_size(tp=tp, fp=fp, fn=fn, tn=tn, target=target,
                                            alpha=alpha, power=power))
    lower, upper = _bracket(theta_star, target=target, start=guess, max_size=max_size)
    while upper - lower > max(1, int(relative_tolerance * upper)):
        middle = (lower + upper) // 2
        if theta_star(middle) >= target:
            upper = middle
        else:
            lower = middle
    return upper


def _bracket(theta_star, *, target: float, start: int, max_size: int) -> tuple[int, int]:
    """Sizes (lower, upper) with theta*(lower) < target <= theta*(upper), by halving or doubling.

    Seed 004, Alg. 2, lines 4-6 (lower = 0 stands for "no smaller size tried").
    """
    size = max(1, start)
    if theta_star(size) >= target:
        while size > 1 and theta_star(size // 2) >= target:
            size //= 2
        return size // 2, size
    while True:
        if size >= max_size:
            raise CertificationImpossible(
                f"the certification test set would need more than {max_size:,} documents.")
        previous, size = size, min(2 * size, max_size)
        if theta_star(size) >= target:
            return previous, size


def certification_test_size_closed_form(*, tp: int, fp: int, fn: int, tn: int, target: float,
                                        alpha: float = 0.05, power: float = 0.93) -> int:
    """Closed-form cross-check of Alg. 2 (notes §6), ignoring the pilot's uncertainty.

    With Var(F1) ~ F(1-F)(2-F)/D, the expected D = 2TP + FP + FN of the test
    set must reach D = (z_{1-alpha} + z_{power})^2 F(1-F)(2-F)/(F - target)^2
    for the pilot F1 = F; dividing by the expected D per document gives the
    number of documents.
    """
    _check_pilot(tp=tp, fp=fp, fn=fn, tn=tn, target=target, alpha=alpha, power=power)
    return _closed_form_size(tp=tp, fp=fp, fn=fn, tn=tn, target=target, alpha=alpha, power=power)


def _closed_form_size(*, tp: int, fp: int, fn: int, tn: int, target: float, alpha: float,
                      power: float) -> int:
    f1 = 2 * tp / (2 * tp + fp + fn)
    z = ndtri(1.0 - alpha) + ndtri(power)
    needed = z**2 * f1 * (1.0 - f1) * (2.0 - f1) / (f1 - target) ** 2
    per_document = (2 * tp + fp + fn) / (tp + fp + fn + tn)
    return max(1, math.ceil(needed / per_document))


# --------------------------------------------------------------------------
# QBCB: quantile-based recall certification (notes §6)
# --------------------------------------------------------------------------

def qbcb_min_found(*, r: int, target_recall: float, confidence: float = 0.95) -> int:
    """Relevant documents the review must have found among ``r`` sampled relevant ones.

    QBCB (Lewis, Yang & Frieder, CIKM 2021; notes §6):
    j = 1 + argmax_k [binom.cdf(k; r, target_recall) >= confidence], k = 0..r.
    If the review found at least j of the r, recall >= target_recall is
    certified at ``confidence``. When r is too small, j = r + 1 (impossible).
    Example: target 0.8 at 95%: r = 14 -> 14, r = 50 -> 45, r = 150 -> 129.
    """
    if r < 0 or r != int(r):
        raise ValueError(f"r must be a non-negative integer (got {r!r})")
    _check_level("target_recall", target_recall)
    _check_level("confidence", confidence)
    cdf = binom.cdf(np.arange(int(r) + 1), int(r), target_recall)
    # cdf[r] == 1 >= confidence, so argmax always finds a True entry.
    return 1 + int(np.argmax(cdf >= confidence))


def qbcb_passes(*, relevant: int, found: int, target_recall: float,
                confidence: float = 0.95) -> bool:
    """QBCB verdict on a uniform sample holding ``relevant`` relevant documents,
    ``found`` of which the review (classifier) found: pass iff found >= j."""
    if not 0 <= found <= relevant:
        raise ValueError(f"found must lie in [0, relevant] (got found={found!r}, relevant={relevant!r})")
    return found >= qbcb_min_found(r=relevant, target_recall=target_recall, confidence=confidence)


def qbcb_min_relevant(*, target_recall: float, confidence: float = 0.95) -> int:
    """Fewest relevant documents a uniform sample must hold for QBCB to be able to pass.

    QBCB can pass only if j <= r, i.e. binom.cdf(r - 1; r, t) = 1 - t^r >= confidence,
    so r >= log(1 - confidence) / log(t). Example: t = 0.8 at 95% -> 14.
    """
    _check_level("target_recall", target_recall)
    _check_level("confidence", confidence)
    r = max(1, math.ceil(math.log1p(-confidence) / math.log(target_recall) - 1e-12))
    while qbcb_min_found(r=r, target_recall=target_recall, confidence=confidence) > r:
        r += 1  # guards the floating-point edge of the closed form
    return r


def qbcb_min_sample_size(*, target_recall: float, prevalence: float,
                         confidence: float = 0.95) -> int:
    """Smallest uniform sample (documents) expected to hold enough relevant ones for QBCB.

    ceil(qbcb_min_relevant / prevalence): at this size the *expected* number
    of relevant documents reaches the minimum; about half of such samples
    fall short, so plan larger in practice.
    """
    if not 0.0 < prevalence <= 1.0:
        raise ValueError(f"prevalence must lie in (0, 1] (got {prevalence!r})")
    needed = qbcb_min_relevant(target_recall=target_recall, confidence=confidence)
    return math.ceil(needed / prevalence - 1e-9)


# --------------------------------------------------------------------------
# Pair recall at the least favourable dependence; retries (issue 11, notes §8)
# --------------------------------------------------------------------------

DEFAULT_DELTA1_BAND = (0.8, 0.9, 1.0, 1.1, 1.25)


@dataclass(frozen=True)
class LeastFavourableBound:
    """Result of :func:`pair_recall_least_favourable_bound`.

    ``lower_bound`` = min over ``by_delta1`` (δ1, bound under that δ1);
    ``pair_lower_bound`` is the pair's own bound (δ1 = 1, what ignoring
    dependence would certify).  None when a needed region was not judged.
    """

    which: str
    alpha: float
    lower_bound: float | None
    least_favourable_delta1: float | None
    pair_lower_bound: float | None
    by_delta1: tuple[tuple[float, float | None], ...]

    def passes(self, *, target: float) -> bool:
        """Pass iff the least favourable bound reaches the target (False when it is unavailable)."""
        return self.lower_bound is not None and self.lower_bound >= target


def least_favourable_lows(lows, *, delta1_grid: Sequence[float] = DEFAULT_DELTA1_BAND):
    """min over the grid of min(1, low/δ1) — :func:`pair_recall.recall_under_delta1` — elementwise.

    For arrays of pair bounds (one per simulated study); NaN stays NaN.
    """
    grid = np.asarray(tuple(delta1_grid), dtype=float)
    if grid.size == 0 or (grid <= 0).any():
        raise ValueError(f"delta1_grid must hold values > 0, got {list(delta1_grid)!r}")
    lows = np.asarray(lows, dtype=float)
    return np.min(np.minimum(1.0, lows[..., None] / grid), axis=-1)


def pair_recall_least_favourable_bound(*, a12, b1, b2, which: str = "r1", alpha: float = 0.05,
                                       delta1_grid: Sequence[float] = DEFAULT_DELTA1_BAND,
                                       draws: int = 20_000, seed: int | None = None) -> LeastFavourableBound:
    """One-sided 1 − alpha lower bound of a pair's recall at the least favourable δ1 of a declared band.

    The pair measures r1* = δ1·r1 (seed 000, Assumption 1; notes §8), so
    under δ1 the bound on r1 is the pair's bound / δ1, capped at 1 — the
    sensitivity band of ``pair_recall.stratified_pair_recall``
    (``recall_under_delta1``).  This takes the minimum over ``delta1_grid``
    (default 0.8–1.25).  The pair's bound is
    ``stratified_pair_recall_low(confidence=1 − 2·alpha)``: the lower end of
    the two-sided conservative interval, as the certification service's
    verdict uses it.  Regions as for ``stratified_pair_recall``
    ((size, judged, relevant)).

    Measured (``test_certification.py``, 2,000 studies per δ1, seed 11,
    true r1 = target 0.7, r2 = 0.6, 200 judged in A12 and in B2, α = 0.05):
    false-pass rate 0.000 at δ1 = 0.8 and 1, 0.0535 at 1.25 (the band's
    edge, ≈ α; limit α + 3 s.e. = 0.0646).  Outside the band, at δ1 = 1.35,
    1.000: the band is a declaration, not a guarantee — the design-based
    conservative bound (``design_based``) kept 0.030 there.  Notes §8,
    Reuters `earn`: bounds 0.75–0.79 at δ1 = 1 read ≈ 0.62 at 1.25.
    """
    _check_level("alpha", alpha)
    if not alpha < 0.5:
        raise ValueError(f"alpha must be below 0.5 (got {alpha!r})")
    grid = tuple(float(d) for d in delta1_grid)
    least_favourable_lows(np.zeros(1), delta1_grid=grid)  # validates the grid
    low = stratified_pair_recall_low(a12=a12, b1=b1, b2=b2, which=which, confidence=1.0 - 2.0 * alpha,
                                     draws=draws, seed=seed)
    if not math.isfinite(low):
        return LeastFavourableBound(which, alpha, None, None, None, tuple((d, None) for d in grid))
    by_delta = tuple((d, recall_under_delta1(low, delta1=d)) for d in grid)
    worst_delta, worst = min(by_delta, key=lambda item: (item[1], -item[0]))
    return LeastFavourableBound(which=which, alpha=alpha, lower_bound=worst, least_favourable_delta1=worst_delta,
                                pair_lower_bound=low, by_delta1=by_delta)


@dataclass(frozen=True)
class FamilywiseFalsePass:
    """Chance that at least one of k attempts passes falsely.

    ``independent_attempts`` = 1 − Π(1 − α_i), exact when each attempt is a
    fresh, independent test set at false-pass α_i; ``bonferroni`` =
    min(1, Σ α_i), valid whatever the attempts share.
    """

    attempts: int
    independent_attempts: float
    bonferroni: float


def familywise_false_pass_bound(*, alphas: Sequence[float]) -> FamilywiseFalsePass:
    """Familywise false-pass bound over every certification attempt on the record (notes §8 "Retries").

    1 − Π(1 − α_i) for independent attempts (Šidák), and Bonferroni's Σ α_i
    for any dependence.  Example (notes §8): five attempts at 0.04 →
    1 − 0.96⁵ = 0.185 (Bonferroni 0.20).
    """
    values = [float(a) for a in alphas]
    for a in values:
        if not 0.0 <= a <= 1.0:
            raise ValueError(f"each alpha must lie in [0, 1] (got {a!r})")
    survive = float(np.prod([1.0 - a for a in values])) if values else 1.0
    return FamilywiseFalsePass(attempts=len(values), independent_attempts=1.0 - survive,
                               bonferroni=min(1.0, float(sum(values))))


@dataclass(frozen=True)
class AttemptAlpha:
    """Per-attempt false-pass level that keeps k attempts at ``family_alpha``: Šidák and Bonferroni."""

    family_alpha: float
    attempts: int
    sidak: float
    bonferroni: float


def alpha_per_attempt(*, alpha: float, attempts: int) -> AttemptAlpha:
    """Split a familywise alpha over k planned attempts: Šidák 1 − (1 − α)^(1/k) (independent
    attempts; slightly larger, so slightly cheaper), Bonferroni α/k (any dependence).

    Example: α = 0.05 over 5 attempts → Šidák 0.01021, Bonferroni 0.01;
    ``familywise_false_pass_bound(alphas=[0.01021] * 5)`` gives back 0.05.
    """
    _check_level("alpha", alpha)
    if attempts < 1 or attempts != int(attempts):
        raise ValueError(f"attempts must be a positive integer (got {attempts!r})")
    k = int(attempts)
    return AttemptAlpha(family_alpha=alpha, attempts=k, sidak=-math.expm1(math.log1p(-alpha) / k),
                        bonferroni=alpha / k)
