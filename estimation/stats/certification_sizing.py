"""Certification sample sizes by power analysis: QBCB on a uniform sample, pair recall by region (seed 004).

Seed 004 (Bagdouri, Webber, Lewis, Oard, CIKM 2013) sizes a certification
test set before drawing it, so that the one-shot test passes with a chosen
power when the classifier is as good as the pilot says (Alg. 2; the assurance
over the pilot's posterior, Sec. 4.3).  ``certification.certification_test_size``
does it for F1; this module does it for

* recall by QBCB on a uniform sample (Lewis, Yang & Frieder 2021):
  :func:`qbcb_power` (exact sum over the relevant count) and
  :func:`qbcb_certification_size` (search over the size);
* pair recall with a dependence check (notes §8: a sample of the complement N
  as well, decided on ``design_based``'s conservative bound, no independence
  assumption), N one sample or split by a scorer's score strata:
  :func:`design_basis_certification_plan` over N's prior, each size by
  :func:`stratified_certification_size` (what the service uses; one simulated
  power search per plan); :func:`design_based_certification_size` is the
  earlier doubling-and-bisection search, kept as the reference the bench
  (bench/bench_certification_stratified.py) compares with;
* pair recall (seed 000 Eq. 1, r1 = T12/(T12 + T_B2)) on a stratified sample
  of A12 and the other classifier's region: :func:`pair_recall_fixed_lower_bound`
  (the verdict's bound), :func:`pair_recall_verdict_power` (exact sum over the
  outcomes) and :func:`pair_recall_calibrated_size` (the smallest common
  scaling of the delta-method sizes that reaches the power).

Pure numpy/scipy: the certification service sizes plans with these functions,
and ``operating_characteristics`` measures the whole protocol with them.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

import numpy as np
from scipy.stats import beta, betabinom, binom, norm, qmc

from . import certification as cert
from . import planning
from .design_based import REGIONS as DESIGN_REGIONS
from .design_based import (
    LabelError,
    _conservative_priors,
    _draw,
    _effective,
    _quantile,
    _recall,
    _unknown,
    design_based_recall_arrays,
    label_error_from_vote_patterns,
)
from .pair_recall import stratified_pair_recall_low
from .proportions import jsonable
from .stratified import Stratum, StratumGuess, _group

__all__ = [
    "BOUND_DRAWS",
    "DesignBasisPlan",
    "StratifiedCertificationSize",
    "design_based_certification_size",
    "design_basis_certification_plan",
    "spread_prevalence",
    "stratified_conservative_bounds",
    "stratified_certification_size",
    "qbcb_power",
    "qbcb_certification_size",
    "pair_recall_fixed_lower_bound",
    "pair_recall_verdict_power",
    "pair_recall_calibrated_size",
]

# Monte Carlo draws of stratified_pair_recall's bound while sizing: 1,000 put the
# bound's own Monte Carlo error at about ±0.003 on recall, far below its sampling error.
BOUND_DRAWS = 1_000


# =========================================================================== QBCB sizing

def _qbcb_thresholds(r: np.ndarray, target_recall: float, confidence: float) -> np.ndarray:
    """``certification.qbcb_min_found`` for many r at once (from a table grown as needed).

    1 + the smallest k with binom.cdf(k; r, t) >= confidence is
    1 + binom.ppf(confidence, r, t); computed that way (vectorised) and
    checked against ``qbcb_min_found`` at both ends of each new stretch, so a
    floating-point disagreement cannot pass silently.
    """
    key = (float(target_recall), float(confidence))
    table = _QBCB_TABLES.get(key, np.zeros(0, dtype=np.int64))
    top = int(np.max(r)) if r.size else 0
    if top >= table.size:
        extra = np.arange(table.size, max(top + 1, 2 * table.size))
        j = 1 + binom.ppf(confidence, extra, target_recall).astype(np.int64)
        for index in {0, extra.size - 1}:
            expected = _qbcb_threshold(int(extra[index]), target_recall, confidence)
            if j[index] != expected:
                j = np.array([_qbcb_threshold(int(k), target_recall, confidence) for k in extra])
                break
        table = np.concatenate([table, j])
        _QBCB_TABLES[key] = table
    return table[r]


_QBCB_TABLES: dict[tuple[float, float], np.ndarray] = {}


@lru_cache(maxsize=4_096)
def _qbcb_threshold(r: int, target_recall: float, confidence: float) -> int:
    return cert.qbcb_min_found(r=r, target_recall=target_recall, confidence=confidence)


def qbcb_power(*, size: int, prevalence: float | np.ndarray, recall: float | np.ndarray, target_recall: float,
               confidence: float = 0.95) -> float | np.ndarray:
    """P(QBCB passes) on a uniform sample of ``size`` documents (QBCB: Lewis, Yang & Frieder 2021, Eq. 3).

    The sample holds r ~ Binomial(size, prevalence) relevant documents, of
    which the classifier found X ~ Binomial(r, recall); QBCB passes iff
    X ≥ j(r) = ``certification.qbcb_min_found(r)``.  Exact sum over r (no
    simulation), over each prevalence's central range (all but 2·10⁻⁹ of
    its mass); ``prevalence`` and ``recall`` may be equal-length arrays.
    """
    prevalences = np.atleast_1d(np.asarray(prevalence, dtype=float))
    recalls = np.broadcast_to(np.atleast_1d(np.asarray(recall, dtype=float)), prevalences.shape)
    lows = binom.ppf(1e-9, size, prevalences).astype(np.int64)
    highs = binom.isf(1e-9, size, prevalences).astype(np.int64)
    # One flat array of (draw, r) pairs: each draw only over its own range of r.
    lengths = highs - lows + 1
    draw = np.repeat(np.arange(prevalences.size), lengths)
    r = lows[draw] + (np.arange(draw.size) - np.repeat(np.cumsum(lengths) - lengths, lengths))
    j = _qbcb_thresholds(r, target_recall, confidence)
    weights = binom.pmf(r, size, prevalences[draw])
    # P(X >= j | r) is the survival function at j - 1; zero when j > r.
    passing = np.where(j <= r, binom.sf(j - 1, r, recalls[draw]), 0.0)
    result = np.bincount(draw, weights=weights * passing, minlength=prevalences.size)
    return float(result[0]) if np.ndim(prevalence) == 0 and np.ndim(recall) == 0 else result


def qbcb_certification_size(*, relevant: int, found: int, judged: int, target_recall: float,
                            confidence: float = 0.95, power: float = 0.9, max_size: int = 1_000_000,
                            posterior_draws: int = 64, seed: int | None = None) -> int:
    """Uniform sample size at which QBCB passes with probability ``power``.

    Like seed 004's Alg. 2 for F1: the pilot (``judged`` uniform documents,
    ``relevant`` of them relevant, ``found`` of those retrieved) gives
    Jeffreys posteriors on prevalence and recall; the power of a size is
    averaged over ``posterior_draws`` points of that posterior (quasi-random:
    scrambled Sobol points, so a power of 2, through the Beta quantiles).
    The search starts at
    the normal-approximation size for the pilot's point estimates, steps by
    ×1.5 until the power is bracketed, then bisects to 1%.  Raises
    ``certification.CertificationImpossible`` when the pilot recall is not
    above the target or no size reaches the power.
    """
    if not 0 <= found <= relevant <= judged:
        raise ValueError("need 0 <= found <= relevant <= judged")
    pilot_recall = found / relevant if relevant else 0.0
    if pilot_recall <= target_recall:
        raise cert.CertificationImpossible(
            f"the pilot recall {pilot_recall:.3f} ({found} of {relevant} relevant documents found) is not "
            f"above the target {target_recall:.3f}: no sample of any size would certify it with the "
            "required power.")
    # Posterior points from a scrambled Sobol sequence through the Beta quantiles: the average over
    # them is a far more even estimate of the assurance than as many random draws (measured in the
    # simulation at recall 0.85: pass rate among feasible plans 0.884 with 64 random draws, 0.898 with
    # 256, against the 0.9 planned).
    points = qmc.Sobol(d=2, scramble=True, seed=np.random.default_rng(seed)).random(posterior_draws)
    prevalences = beta.ppf(points[:, 0], 0.5 + relevant, 0.5 + judged - relevant)
    recalls = beta.ppf(points[:, 1], 0.5 + found, 0.5 + relevant - found)
    if np.quantile(recalls, 1.0 - power) <= target_recall:
        raise cert.CertificationImpossible(
            f"the pilot holds only {relevant} relevant documents: with probability above {1.0 - power:.0%} "
            f"the classifier's recall is below the target {target_recall:.3f}, so no sample of any size "
            "gives the required power. Judge more pilot documents.")

    def assurance(size: int) -> float:
        return float(np.mean(qbcb_power(size=size, prevalence=prevalences, recall=recalls,
                                        target_recall=target_recall, confidence=confidence)))

    # Relevant documents a one-sided binomial test needs at these point estimates, over the prevalence.
    z_alpha, z_beta = norm.ppf(confidence), norm.ppf(power)
    spread = z_alpha * math.sqrt(target_recall * (1 - target_recall)) + z_beta * math.sqrt(
        pilot_recall * (1 - pilot_recall))
    prevalence = (relevant + 0.5) / (judged + 1.0)
    start = int(min(max_size, max(16, (spread / (pilot_recall - target_recall)) ** 2 / prevalence)))
    if assurance(start) >= power:
        upper, lower = start, max(1, int(start / 1.5))
        while lower > 16 and assurance(lower) >= power:
            upper, lower = lower, max(16, int(lower / 1.5))
    else:
        lower, upper = start, start
        while True:
            if upper >= max_size:
                raise cert.CertificationImpossible(f"the QBCB sample would need more than {max_size:,} documents.")
            lower, upper = upper, min(max_size, math.ceil(upper * 1.5))
            if assurance(upper) >= power:
                break
    while upper - lower > max(1, upper // 100):
        middle = (lower + upper) // 2
        if assurance(middle) >= power:
            upper = middle
        else:
            lower = middle
    return upper


# =========================================================================== pair-recall sizing


def pair_recall_fixed_lower_bound(*, a12: tuple, other: tuple, which: str = "r1", alpha: float = 0.05,
                                  draws: int = BOUND_DRAWS, seed: int | None = 0) -> float:
    """The certification bound of pair recall: one-sided 1 − α lower bound of r1 (or r2), seed 000 Eq. 1.

    ``a12`` and ``other`` are (region size, judged, relevant) of A12 and of
    B2 (for r1) or B1 (for r2).  It is the lower end of
    ``pair_recall.stratified_pair_recall``'s two-sided 1 − 2α interval (its
    conservative Clopper–Pearson Monte Carlo bound); 0 when undefined.
    """
    key = (tuple(a12), tuple(other), which, float(alpha), int(draws))
    if seed is None:  # a fresh random stream each call: nothing to reuse
        return _fixed_lower_bound(*key, None)
    return _cached_fixed_lower_bound(*key, int(seed))


def _fixed_lower_bound(a12: tuple, other: tuple, which: str, alpha: float, draws: int, seed: int | None) -> float:
    # The same number as the verdict's full stratified_pair_recall report for this
    # seed (same random stream), without the rest of the report.
    empty = (0, 0, 0)
    b1, b2 = (empty, other) if which == "r1" else (other, empty)
    low = stratified_pair_recall_low(a12=a12, b1=b1, b2=b2, which=which, confidence=1.0 - 2.0 * alpha, draws=draws,
                                     seed=seed)
    return 0.0 if math.isnan(low) else float(low)


# The bound is a pure function of its counts for a fixed seed, and size searches and
# simulated pilots ask for the same counts again and again.
_cached_fixed_lower_bound = lru_cache(maxsize=2**18)(_fixed_lower_bound)


def pair_recall_verdict_power(*, n_a12: int, n_other: int, size_a12: int, size_other: int, p12: float,
                              p_other: float, target: float, alpha: float = 0.05, which: str = "r1",
                              draws: int = BOUND_DRAWS, seed: int | None = 0,
                              pilot: dict | None = None) -> float:
    """P(the pair-recall verdict passes) with n_a12 and n_other judged: the power of seed 004 Alg. 2 for seed 000 Eq. 1.

    A sum over the outcomes, not a simulation: the verdict's bound rises with
    the relevant count k12 of A12 and falls with that of the other region, so
    for each k12 it passes iff k_other ≤ t(k12), and with binomial counts
    (p12, p_other) power = Σ P(k12)·P(k_other ≤ t(k12)).

    With ``pilot`` = {"A12": (judged, relevant), "other": (judged, relevant)}
    the precisions are not taken as known but averaged over the pilot's
    Jeffreys posteriors, as seed 004 Sec. 4.3 does for F1: the counts are
    then beta-binomial, Beta(½ + k, ½ + n − k), and the sum is the exact
    assurance (no posterior sampling).

    How t is found (each step one evaluation of the verdict's bound):

    * up to ``_WALK_LIMIT`` values of k12, t is searched up from the previous
      k12's (t is non-decreasing), starting from the recent slope: one or two
      evaluations per k12;
    * beyond that (large samples, wide pilot posteriors: a walk would cost
      thousands of evaluations) t is found exactly at ``_KNOTS`` evenly spaced
      k12 and a quadratic through them gives t in between.  t is a smooth
      curve plus a jitter of the bound's Monte Carlo noise that no curve
      follows; the fit is kept only if it moves P(k_other ≤ t) at the knots
      by less than ``_FIT_TOLERANCE`` on average (weighted by P(k12)),
      otherwise the walk is done after all.

    Outcomes in the outer 10⁻⁶ of either count's distribution are not
    visited.  Because of the jitter t(k12) is non-decreasing only roughly; the
    tests hold both ways to a brute-force sum over every outcome.
    """
    if n_a12 <= 0 or n_other <= 0:
        return 0.0
    k12 = np.arange(n_a12 + 1)
    k_other = np.arange(n_other + 1)
    if pilot is None:
        pmf = binom.pmf(k12, n_a12, p12)
        other_pmf = binom.pmf(k_other, n_other, p_other)
    else:
        (j12, r12), (j_other, r_other) = pilot["A12"], pilot["other"]
        pmf = betabinom.pmf(k12, n_a12, 0.5 + r12, 0.5 + j12 - r12)
        other_pmf = betabinom.pmf(k_other, n_other, 0.5 + r_other, 0.5 + j_other - r_other)
    cdf12 = np.cumsum(pmf)
    first = int(np.searchsorted(cdf12, _POWER_TAIL))
    last = int(min(n_a12, np.searchsorted(cdf12, cdf12[-1] - _POWER_TAIL)))
    other_cdf = np.minimum(np.cumsum(other_pmf), 1.0)
    # t is only located within k_other's central range [low, high]; low − 1 stands for "below it".
    low = int(np.searchsorted(other_cdf, _POWER_TAIL, side="right"))
    high = int(min(n_other, int(np.searchsorted(other_cdf, 1.0 - _POWER_TAIL, side="left"))))
    passing_cdf = np.concatenate([[0.0], other_cdf])  # passing_cdf[t + 1] = P(k_other ≤ t), t ≥ −1

    def passes(k: int, k_other: int) -> bool:
        bound = pair_recall_fixed_lower_bound(a12=(size_a12, n_a12, k), other=(size_other, n_other, k_other),
                                              which=which, alpha=alpha, draws=draws, seed=seed)
        return bound >= target

    def power_of(thresholds: np.ndarray, counts: np.ndarray) -> float:
        chance = np.where(thresholds >= low, passing_cdf[np.clip(thresholds, -1, n_other) + 1], 0.0)
        return float(min(1.0, np.sum(pmf[counts] * chance)))

    counts = np.arange(first, last + 1)
    if counts.size > _WALK_LIMIT:
        knots = np.unique(np.linspace(first, last, _KNOTS).round().astype(np.int64))
        exact = _thresholds_at(knots, passes=passes, low=low, high=high)
        fitted = _fitted_thresholds(knots, exact, counts, low=low, high=high)
        if fitted is not None:
            at_knots = fitted[np.searchsorted(counts, knots)]
            gap = np.abs(passing_cdf[np.clip(at_knots, -1, n_other) + 1] - passing_cdf[np.clip(exact, -1, n_other) + 1])
            if float(np.average(gap, weights=pmf[knots] + 1e-300)) <= _FIT_TOLERANCE:
                return power_of(fitted, counts)
    return power_of(_walked_thresholds(counts, passes=passes, low=low, high=high), counts)


def _walked_thresholds(counts: np.ndarray, *, passes: Callable[[int, int], bool], low: int, high: int) -> np.ndarray:
    """t(k) for consecutive k, each searched up from the previous (clipped to [low − 1, high]).

    The first guess is the previous t plus the recent slope, so a k usually
    costs two evaluations however steep t is.
    """
    thresholds = np.zeros(counts.size, dtype=np.int64)
    for i, k in enumerate(counts.tolist()):
        if i == 0:
            thresholds[0] = _largest_passing(k, passes=passes, known=low - 1, fail=high + 1, guess=(low + high) // 2)
            continue
        previous = int(thresholds[i - 1])
        if previous >= high:  # every larger k passes at the top of the range too
            thresholds[i:] = high
            break
        back = min(i - 1, 8)  # the slope over up to 8 earlier counts (none yet at i = 1)
        guess = previous + int(round((previous - int(thresholds[i - 1 - back])) / back)) if back else previous + 1
        thresholds[i] = _largest_passing(k, passes=passes, known=previous, fail=high + 1, guess=guess)
    return thresholds


def _thresholds_at(knots: np.ndarray, *, passes: Callable[[int, int], bool], low: int, high: int) -> np.ndarray:
    """t at each knot, searched from a linear extrapolation of the previous two knots."""
    found: list[int] = []
    for i, k in enumerate(knots.tolist()):
        if i >= 2:
            slope = (found[-1] - found[-2]) / (knots[i - 1] - knots[i - 2])
            guess = int(round(found[-1] + slope * (k - knots[i - 1])))
        else:
            guess = found[-1] if found else (low + high) // 2
        known = found[-1] if found else low - 1  # t is non-decreasing (up to Monte Carlo jitter)
        if known >= low and not passes(k, known):
            known = low - 1  # the jitter stepped back: search the whole range
        found.append(_largest_passing(k, passes=passes, known=known, fail=high + 1, guess=guess))
    return np.array(found, dtype=np.int64)


def _fitted_thresholds(knots: np.ndarray, exact: np.ndarray, counts: np.ndarray, *, low: int,
                       high: int) -> np.ndarray | None:
    """t at every count from a quadratic through the knots inside [low, high); None if too few."""
    inside = (exact >= low) & (exact < high)
    if np.count_nonzero(inside) < 6:
        return None
    curve = np.polynomial.Polynomial.fit(knots[inside], exact[inside], deg=2)
    fitted = np.floor(curve(counts) + 0.5).astype(np.int64)
    # Outside the knots that lie inside the range, t is clipped like its nearest knot.
    below = knots[exact < low]
    above = knots[exact >= high]
    if below.size:
        fitted[counts <= below.max()] = low - 1
    if above.size:
        fitted[counts >= above.min()] = high
    return np.clip(fitted, low - 1, high)


def _largest_passing(k: int, *, passes: Callable[[int, int], bool], known: int, fail: int, guess: int) -> int:
    """Largest x < ``fail`` with passes(k, x), given passes(k, known) (known may be a "below" marker).

    Checks ``guess`` first, then gallops away from it (steps 1, 2, 4, …) until
    the answer is bracketed, then bisects: two evaluations when the guess is right.
    """
    if fail - known <= 1:
        return known
    probe = min(max(guess, known + 1), fail - 1)
    step = 1
    if passes(k, probe):
        known = probe
        while fail - known > 1:
            probe = min(known + step, fail - 1)
            if not passes(k, probe):
                fail = probe
                break
            known, step = probe, 2 * step
    else:
        fail = probe
        while fail - known > 1:
            probe = max(fail - step, known + 1)
            if passes(k, probe):
                known = probe
                break
            fail, step = probe, 2 * step
    while fail - known > 1:
        middle = (known + fail) // 2
        if passes(k, middle):
            known = middle
        else:
            fail = middle
    return known


# pair_recall_verdict_power skips this much probability in each tail of either count.
_POWER_TAIL = 1e-6
# Beyond this many values of k12 pair_recall_verdict_power fits t through _KNOTS knots instead of
# walking every k12, if the fit stays within _FIT_TOLERANCE of the knots' P(k_other ≤ t).
_WALK_LIMIT = 60
_KNOTS = 41
_FIT_TOLERANCE = 0.003


def _check_posterior_ceiling(*, pilot: dict, size_a12: int, size_other: int, target: float, power: float) -> None:
    """Refuse when even an unlimited sample could not give the power (cf. seed 004 Alg. 2, line 1).

    As the sample grows the assurance tends to the posterior probability that
    the recall exceeds the target; if that is below ``power`` no size will do.
    """
    rng = np.random.default_rng(0)
    (j12, r12), (j_other, r_other) = pilot["A12"], pilot["other"]
    t12 = size_a12 * rng.beta(0.5 + r12, 0.5 + j12 - r12, size=20_000)
    t_other = size_other * rng.beta(0.5 + r_other, 0.5 + j_other - r_other, size=20_000)
    chance = float(np.mean(t12 / (t12 + t_other) > target))
    if chance < power:
        raise cert.CertificationImpossible(
            f"the pilot leaves too much doubt: the recall exceeds the target {target:.3f} with posterior "
            f"probability {chance:.2f} only, below the power {power:.2f}, so no sample of any size gives the "
            "required power. Judge more pilot documents or improve the classifier.")


def pair_recall_calibrated_size(*, size_a12: int, size_other: int, p12: float, p_other: float, target: float,
                                alpha: float = 0.05, power: float = 0.9, which: Literal["r1", "r2"] = "r1",
                                draws: int = BOUND_DRAWS, seed: int | None = 0,
                                relative_tolerance: float = 0.05, factor_hint: float | None = None,
                                pilot: dict | None = None) -> dict:
    """Per-region sizes at which the pair-recall verdict reaches ``power`` (seed 004's Alg. 2 idea for recall).

    Starts from ``planning.pair_recall_certification_size`` (delta-method
    standard error, Neyman allocation), whose sizes are too small at small
    samples for the conservative verdict bound (measured: power 0.61 against
    0.90 planned at r1 = 0.85, τ = 0.75); scales both regions by a common
    factor ≥ 1, doubling (or stepping by 15% from ``factor_hint``) then
    bisecting to ``relative_tolerance``, until :func:`pair_recall_verdict_power`
    reaches ``power``.  Precisions are the planning guesses ``p12``,
    ``p_other`` (their delta-method start), and with ``pilot`` (judged,
    relevant per region) the power is the assurance over the pilot's
    posteriors (seed 004 Sec. 4.3; see :func:`pair_recall_verdict_power`).  Returns {"A12": n, other: n, "delta_method": {...},
    "power": achieved}.  Raises ``certification.CertificationImpossible``
    when the guessed recall is not above the target or even judging both
    regions in full does not reach the power.
    """
    other_name = "B2" if which == "r1" else "B1"
    if pilot is not None:
        _check_posterior_ceiling(pilot=pilot, size_a12=size_a12, size_other=size_other, target=target,
                                 power=power)
    try:
        base = planning.pair_recall_certification_size(
            size_a12=size_a12, size_other=size_other, p12=p12, p_other=p_other, tau=target, alpha=alpha,
            power=power, target=which)
    except ValueError as exc:
        raise cert.CertificationImpossible(str(exc)) from exc
    start = {"A12": max(1, base.judgments.get("A12", 0)), other_name: max(1, base.judgments.get(other_name, 0))}

    def sizes(factor: float) -> dict:
        return {"A12": min(size_a12, math.ceil(start["A12"] * factor)),
                other_name: min(size_other, math.ceil(start[other_name] * factor))}

    def achieved(factor: float) -> float:
        n = sizes(factor)
        return pair_recall_verdict_power(n_a12=n["A12"], n_other=n[other_name], size_a12=size_a12,
                                         size_other=size_other, p12=p12, p_other=p_other, target=target,
                                         alpha=alpha, which=which, draws=draws, seed=seed, pilot=pilot)

    full = {"A12": size_a12, other_name: size_other}

    def refuse(value: float) -> None:
        raise cert.CertificationImpossible(
            f"even judging all of A12 and {other_name} would pass with probability {value:.2f} "
            f"only, below the power {power:.2f} asked for.")

    # A hint (a neighbouring pilot's factor, in simulations) is usually close: step from it by 15%.
    factor, value = _smallest_factor(achieved, power=power, start=max(1.0, factor_hint or 1.0),
                                     first_step=1.15 if factor_hint else 2.0, tolerance=relative_tolerance,
                                     is_full=lambda f: sizes(f) == full, refuse=refuse)
    return {**sizes(factor), "power": value, "delta_method": dict(base.judgments), "factor": factor}


def _smallest_factor(achieved: Callable[[float], float], *, power: float, start: float, first_step: float,
                     tolerance: float, is_full: Callable[[float], bool], refuse: Callable[[float], None]) -> tuple[float, float]:
    """Smallest factor ≥ 1 with achieved(factor) ≥ power, to a relative ``tolerance``; (factor, its power).

    The power rises smoothly with the sample, and its probit is close to
    linear in log(factor), so each new factor is the secant's prediction on
    that scale (the first step ``first_step``, then steps clamped to ×1.1–×4
    while bracketing).  Once bracketed,
    it aims just above the prediction and then checks ``tolerance`` below:
    two evaluations end the search when the prediction is good.  About half
    the evaluations of doubling and bisection (measured in the simulation).
    """
    goal = float(norm.ppf(power))
    probits: dict[float, float] = {}

    def evaluate(factor: float) -> float:
        value = achieved(factor)
        probits[factor] = float(norm.ppf(min(max(value, 1e-6), 1.0 - 1e-6)))
        return value

    def predicted(a: float, b: float) -> float | None:
        """Where the line through (log a, probit a) and (log b, probit b) reaches the goal."""
        za, zb = probits[a], probits[b]
        if za == zb:
            return None
        return math.exp(math.log(a) + (goal - za) * (math.log(b) - math.log(a)) / (zb - za))

    factor = max(1.0, start)
    value = evaluate(factor)
    low, high, high_value = (None, factor, value) if value >= power else (factor, None, None)
    previous = None  # the factor evaluated before the current end, for the secant
    while high is None:  # step up until the power is reached
        assert low is not None  # exactly one end of the bracket is unknown
        if is_full(low):
            refuse(value)
        guess = predicted(previous, low) if previous is not None else None
        step = min(4.0, max(1.1, guess / low)) if guess else first_step
        candidate = low * step * (1.0 + tolerance / 3.0)
        value = evaluate(candidate)
        if value >= power:
            high, high_value = candidate, value
        else:
            previous, low = low, candidate
    while low is None:  # step down until the power is missed, or factor 1 is reached
        if high <= 1.0:
            assert high_value is not None  # set with every high
            return 1.0, high_value
        guess = predicted(previous, high) if previous is not None else None
        step = min(4.0, max(1.1, high / guess)) if guess else first_step
        candidate = max(1.0, high / step / (1.0 + tolerance / 3.0))
        value = evaluate(candidate)
        if value >= power:
            previous, high, high_value = high, candidate, value
        else:
            low = candidate
    # Safeguard as in Dekker/Brent root finding: regula falsi can creep along one end of the
    # bracket, so a step that did not at least halve the bracket (on the log scale) is followed
    # by a bisection; at most twice the evaluations of plain bisection, whatever the curve.
    bisect_next = False
    while high - low > tolerance * high:
        span = math.log(high / low)
        guess = None if bisect_next else predicted(low, high)
        bisecting = guess is None
        candidate = math.sqrt(low * high) if guess is None else guess * (1.0 + tolerance / 3.0)
        candidate = min(max(candidate, low * math.exp(0.1 * span)), low * math.exp(0.9 * span))
        value = evaluate(candidate)
        if value < power:
            low = candidate
        else:
            high, high_value = candidate, value
            # Aimed just above the prediction: if it was right, the point tolerance below falls short.
            check = max(1.0, high * (1.0 - tolerance))
            if not bisecting and check > low and high - low > tolerance * high:
                value = evaluate(check)
                if value >= power:
                    high, high_value = check, value
                else:
                    low = check
        bisect_next = not bisecting and math.log(high / low) > span / 2.0
    assert high_value is not None  # set with every high
    return high, high_value


# --------------------------------------------------------------------------
# Pair recall with a dependence check: the design-based bound (notes §8)
# --------------------------------------------------------------------------

def design_based_certification_size(*, sizes: dict, precisions: dict, target: float, alpha: float = 0.05,
                                     power: float = 0.9, which: Literal["r1", "r2"] = "r1", seed: int = 0,
                                     studies: int = 300, draws: int = 600, min_per_region: int = 30,
                                     relative_tolerance: float = 0.02) -> dict:
    """Judged documents in A12, B1, B2 and the complement U (region N) for the design-based verdict's power.

    The verdict of a plan with a dependence check is ``design_based``'s conservative one-sided 1 − α bound on
    r = (T12 + T_own)/(T12 + T_B1 + T_B2 + T_U) (notes §8; no independence assumption).  Shape: the Neyman
    allocation of ``design_based.design_based_sample_plan`` (n_h ∝ |∂r/∂T_h|·|h|·√(p_h(1 − p_h)), at least
    ``min_per_region``, at most |h|).  Scale: the smallest total at which the bound reaches ``target`` in a
    share ``power`` of ``studies`` simulated samples at the planning shares (hypergeometric counts, common
    random numbers from ``seed``), by bisection to ``relative_tolerance`` (seed 004 Alg. 2's idea).
    ``sizes`` and ``precisions`` map "A12", "B1", "B2", "U" to |h| and the planning share of relevant documents.

    Raises ``certification.CertificationImpossible`` when the planned recall is not above the target or even
    judging every document passes less often than ``power``.  Returns {region: n, "power": achieved,
    "truth": planned recall}.
    """
    sizes = {h: int(sizes[h]) for h in DESIGN_REGIONS}
    precisions = {h: float(precisions[h]) for h in DESIGN_REGIONS}
    own, other = ("B1", "B2") if which == "r1" else ("B2", "B1")
    relevant = {h: int(round(sizes[h] * precisions[h])) for h in DESIGN_REGIONS}
    total = sum(relevant.values())
    if total == 0:
        raise cert.CertificationImpossible("the planning guesses expect no relevant document at all.")
    truth = (relevant["A12"] + relevant[own]) / total
    if truth <= target:
        raise cert.CertificationImpossible(
            f"the planned recall without any independence assumption ({truth:.3f}, from the pilot's shares and "
            f"the complement's guessed prevalence) is not above the target {target:.3f}.")
    slope = {"A12": 1.0 - truth, own: 1.0 - truth, other: truth, "U": truth}
    weight = {h: slope[h] * sizes[h] * math.sqrt(max(precisions[h] * (1.0 - precisions[h]), 1e-6))
              for h in DESIGN_REGIONS}
    weight_sum = sum(weight.values()) or 1.0

    def allocation(scale: float) -> dict[str, int]:
        return {h: 0 if sizes[h] == 0 else min(sizes[h], max(min_per_region, math.ceil(scale * weight[h] / weight_sum)))
                for h in DESIGN_REGIONS}

    def achieved(scale: float) -> float:
        judged = allocation(scale)
        rng = np.random.default_rng(seed)
        found = {h: (np.full(studies, float(relevant[h])) if judged[h] >= sizes[h] else
                     rng.hypergeometric(relevant[h], sizes[h] - relevant[h], judged[h], size=studies).astype(float))
                 if judged[h] > 0 else np.zeros(studies) for h in DESIGN_REGIONS}
        bounds = design_based_recall_arrays(sizes=sizes, judged=judged, relevant=found, which=which,
                                            confidence=1.0 - alpha, draws=draws, rng=rng).conservative_lower_bound
        return float(np.mean(np.nan_to_num(bounds, nan=0.0) >= target))

    full = float(sum(sizes.values()))
    low, high = 0.0, min(full, 1_000.0)
    while (value := achieved(high)) < power:  # double from 1,000 documents (seed 004 Alg. 2, lines 4-6)
        if high >= full:
            raise cert.CertificationImpossible(
                f"even judging every document of A12, B1, B2 and the complement would pass with probability "
                f"{value:.2f} only, below the power {power:.2f} asked for.")
        low, high = high, min(full, 2.0 * high)
    while high - low > max(1.0, relative_tolerance * high):
        middle = (low + high) / 2.0
        if achieved(middle) >= power:
            high = middle
        else:
            low = middle
    return {**allocation(high), "power": achieved(high), "truth": truth}


# --------------------------------------------------------------------------
# The design basis on score strata: size by power analysis, fast (issue 23, issue 25)
# --------------------------------------------------------------------------


# Simulated studies per power evaluation, and bound draws per study, while sizing a design-basis plan: the power's
# Monte Carlo s.e. is √(0.9·0.1/200) ≈ 0.021 (common random numbers across sizes keep the search's curve smooth),
# the bound's α quantile of 500 draws moves it by ≈ ±0.005 on recall; tests check the power on fresh studies.
SIZING_STUDIES = 200
SIZING_DRAWS = 500


@dataclass(frozen=True)
class StratifiedCertificationSize:
    """Result of :func:`stratified_certification_size`: judged documents per stratum (in the order given) and
    per region, the power the simulation measured at that size, the recall planned for, and the cost of the
    search (``evaluations`` power simulations; ``analytic_total``: the normal-approximation total it started
    from, which the conservative bound needs more than)."""

    judged: tuple[int, ...]
    regions: dict
    total: int
    power: float
    truth: float
    evaluations: int
    analytic_total: int

    def as_dict(self) -> dict:
        return jsonable(self)


def stratified_conservative_bounds(*, strata: Sequence[Stratum], which: str, confidence: float, draws: int,
                                   rng: np.random.Generator, label_error: LabelError | None = None) -> np.ndarray:
    """The verdict's bound alone: ``stratified.stratified_design_recall_arrays(...).conservative_lower_bound``
    (the same Monte Carlo of ``design_based``: each stratum's Clopper–Pearson confidence distribution pushed
    the way that lowers the recall, the α quantile of the recall's draws), without the report's interval and
    δ1 that a size search does not look at — half the draws and none of the NaN-aware quantiles.  Equal in
    distribution, not draw for draw (the random stream skips the report's draws).  ``label_error``: as there
    (Rogan–Gladen per draw; None or perfect: the labels as they are)."""
    grouped = _group(strata)
    pushed = _draw(strata=grouped, priors=_conservative_priors(which), rng=rng, draws=draws,
                   label_error=_effective(label_error))
    bounds = _quantile(_recall(pushed, which), 1.0 - confidence, fill=0.0)
    return np.full(np.shape(bounds), np.nan) if _unknown(grouped) else bounds


def _design_slopes(region: np.ndarray, which: str, truth: float) -> np.ndarray:
    """|∂r/∂T_h|·T for each stratum's region (notes §2 generalised to four regions): 1 − r for A12 and the
    classifier's own region, r for the other region and U."""
    own = "B1" if which == "r1" else "B2"
    return np.array([1.0 - truth if h in ("A12", own) else truth for h in region])


def stratified_certification_size(*, strata: Sequence[StratumGuess], target: float, alpha: float = 0.05,
                                  power: float = 0.9, which: Literal["r1", "r2"] = "r1", seed: int = 0,
                                  studies: int = SIZING_STUDIES, draws: int = SIZING_DRAWS,
                                  min_per_stratum: int = 10, relative_tolerance: float = 0.04, iterations: int = 4,
                                  accuracy: float | None = None, votes: int = 3,
                                  analytic_only: bool = False) -> StratifiedCertificationSize:
    """Judged documents per score stratum at which the design-basis verdict passes with probability ``power``.

    The verdict is ``stratified.stratified_design_recall``'s conservative one-sided 1 − α bound on r1 (or r2)
    (notes §8, no independence assumption; Cochran 1977 ch. 5 for the stratified counts).  Every region
    A12, B1, B2, U is one or more strata (``StratumGuess``: size and the prevalence planned for; one stratum
    per region is the unstratified design).  Seed 004 Alg. 2's idea, made fast:

    * shape — Neyman allocation for the certified recall alone, n_s ∝ g_h·|s|·σ_s (g_h as in
      :func:`_design_slopes`, σ_s the sd of the stratum's Jeffreys posterior at its typical outcome, U's
      prior ½ split over its strata by size as the bound's own; ``iterations`` fixed-point steps), at least
      ``min_per_stratum`` per stratum (all of a smaller one), at most |s|;
    * a start — the smallest total at which the normal approximation (delta method over those posterior
      variances, finite-population corrected) gives truth − (z₁₋α + z_power)·sd ≥ target: no simulation;
    * the scale — simulated power: ``studies`` samples (hypergeometric counts per stratum at the planned
      prevalences, common random numbers from ``seed``), the bound by
      ``stratified.stratified_design_recall_arrays`` with ``draws`` draws, searched from 0.7× the start by
      :func:`_smallest_factor` (secant on probit(power) against log(total), safeguarded) to
      ``relative_tolerance``: 3–6 simulations where doubling and bisection took 10–13.

    ``accuracy``: the crowd's one-coin worker accuracy (e.g. ``pair_recall.worker_accuracy_from_agreement`` on
    the pilot's votes); each simulated study then has ``votes`` votes per document, majority labels, and the
    verdict's label-error correction estimated from that study's vote patterns
    (``design_based.label_error_from_vote_patterns``) — the correction widens the bound, most where
    prevalence is low (measured: a plan sized for perfect labels had power 0.07 with workers at 0.85).
    None: perfect labels.
    ``analytic_only``: stop after the start (no simulation; ``power`` NaN, ``evaluations`` 0) — how
    :func:`design_basis_certification_plan` finds which prior prevalence needs the largest plan.
    Raises ``certification.CertificationImpossible`` when the planned recall is not above the target, or
    judging every document passes less often than ``power``.
    """
    if not strata:
        raise ValueError("strata must not be empty")
    region = np.array([g.region for g in strata])
    if set(region) - set(DESIGN_REGIONS):
        raise ValueError(f"a stratum's region must be one of {DESIGN_REGIONS}")
    size = np.array([int(g.size) for g in strata], dtype=float)
    prevalence = np.clip(np.array([float(g.prevalence) for g in strata]), 0.0, 1.0)
    relevant = np.round(size * prevalence).astype(np.int64)
    totals = {h: int(relevant[region == h].sum()) for h in DESIGN_REGIONS}
    everything = sum(totals.values())
    if everything == 0:
        raise cert.CertificationImpossible("the planning guesses expect no relevant document at all.")
    own = "B1" if which == "r1" else "B2"
    truth = (totals["A12"] + totals[own]) / everything
    if truth <= target:
        raise cert.CertificationImpossible(
            f"the planned recall without any independence assumption ({truth:.3f}, from the pilot's shares and "
            f"the complement's prior prevalence) is not above the target {target:.3f}.")
    slope = _design_slopes(region, which, truth)
    u_size = float(size[region == "U"].sum())
    several_u = int((region == "U").sum()) > 1
    prior = np.where((region == "U") & several_u, 0.5 * size / max(u_size, 1.0), 0.5)
    floor = np.minimum(size, float(min_per_stratum))
    # the typical outcome's share: never exactly 0 or 1, so an empty stratum still costs what proving it
    # nearly empty costs (its posterior's spread at k = n·p)
    share = np.clip(prevalence, 1e-9, 1.0 - 1e-9)

    def allocation(budget: float) -> np.ndarray:
        n = floor.copy()
        for _ in range(iterations):
            k = n * share
            a, b = prior + k, prior + n - k
            weight = size * slope * np.sqrt(a * b) / (a + b)
            total_weight = float(weight.sum())
            n = np.minimum(size, np.maximum(floor, np.ceil(budget * weight / total_weight)))
        return n

    z = float(norm.ppf(1.0 - alpha) + norm.ppf(power))

    def analytic_passes(budget: float) -> bool:
        n = allocation(budget)
        k = n * share
        a, b = prior + k, prior + n - k
        per_document = a * b / ((a + b) ** 2 * (a + b + 1.0))  # the posterior variance of the share
        fpc = np.where(n > 0, np.maximum(size - n, 0.0) / np.maximum(size, 1.0), 0.0)
        var = size ** 2 * per_document * fpc
        sd = math.sqrt(float(np.sum(slope ** 2 * var))) / everything
        return truth - z * sd >= target

    full = float(size.sum())
    low_b, high_b = float(floor.sum()), full
    if analytic_passes(low_b):
        high_b = low_b
    while high_b - low_b > max(1.0, 0.005 * high_b):
        middle = (low_b + high_b) / 2.0
        if analytic_passes(middle):
            high_b = middle
        else:
            low_b = middle
    analytic_total = int(allocation(high_b).sum())
    if analytic_only:
        n0 = allocation(high_b).astype(int)
        return StratifiedCertificationSize(
            judged=tuple(int(x) for x in n0), regions={h: int(n0[region == h].sum()) for h in DESIGN_REGIONS},
            total=analytic_total, power=math.nan, truth=float(truth), evaluations=0, analytic_total=analytic_total)
    base = max(float(floor.sum()), 0.7 * high_b)
    # P(j relevant votes of ``votes``) for a relevant document (reversed: an irrelevant one)
    vote_pmf = (None if accuracy is None or accuracy >= 1.0 else
                np.array([math.comb(votes, j) * accuracy ** j * (1 - accuracy) ** (votes - j) for j in range(votes + 1)]))
    evaluations = 0
    rng_seed = int(seed) % (2**32)

    def judged_at(factor: float) -> np.ndarray:
        return allocation(base * factor)

    def achieved(factor: float) -> float:
        nonlocal evaluations
        evaluations += 1
        n = judged_at(factor).astype(np.int64)
        rng = np.random.default_rng(rng_seed)
        found = [np.full(studies, float(relevant[i])) if n[i] >= size[i] else
                 (rng.hypergeometric(relevant[i], int(size[i]) - relevant[i], n[i], size=studies).astype(float)
                  if n[i] > 0 and relevant[i] > 0 else np.zeros(studies))
                 for i in range(len(strata))]
        error = None
        if vote_pmf is not None:
            patterns = np.zeros((studies, votes + 1))
            for i in range(len(strata)):
                if n[i] > 0:
                    k = found[i].astype(np.int64)
                    pattern = rng.multinomial(k, vote_pmf) + rng.multinomial(n[i] - k, vote_pmf)[:, ::-1]
                    patterns += pattern
                    found[i] = pattern[:, votes // 2 + 1:].sum(axis=1).astype(float)
            error = label_error_from_vote_patterns(patterns={(r, votes): patterns[:, r] for r in range(votes + 1)},
                                                   votes=votes, draws=draws, rng=rng)
        design = [Stratum(g.region, int(g.size), int(n[i]), found[i], g.key or f"s{i}")
                  for i, g in enumerate(strata)]
        bounds = stratified_conservative_bounds(strata=design, which=which, confidence=1.0 - alpha, draws=draws,
                                                rng=rng, label_error=error)
        return float(np.mean(np.nan_to_num(bounds, nan=0.0) >= target))

    def refuse(value: float) -> None:
        crowd = ("" if vote_pmf is None else
                 f" The crowd's workers agree as if {accuracy:.0%} accurate, so the majority of {votes} votes is wrong "
                 f"on about {1.0 - float(vote_pmf[votes // 2 + 1:].sum()):.1%} of documents; correcting for that "
                 "error where relevant documents are rare widens the bound more than any sample narrows it. "
                 "More votes per document or better workers would.")
        raise cert.CertificationImpossible(
            f"even judging every document of A12, B1, B2 and the complement would pass with probability "
            f"{value:.2f} only, below the power {power:.2f} asked for." + crowd)

    factor, value = _smallest_factor(achieved, power=power, start=1.0, first_step=1.6, tolerance=relative_tolerance,
                                     is_full=lambda f: bool(np.all(judged_at(f) >= size)), refuse=refuse)
    n = judged_at(factor).astype(int)
    return StratifiedCertificationSize(
        judged=tuple(int(x) for x in n), regions={h: int(n[region == h].sum()) for h in DESIGN_REGIONS},
        total=int(n.sum()), power=float(value), truth=float(truth), evaluations=evaluations,
        analytic_total=analytic_total)


@dataclass(frozen=True)
class DesignBasisPlan:
    """Result of :func:`design_basis_certification_plan`: the plan kept (the largest over N's prior), the
    prevalence of N it was sized at, every passable prevalence's total, and the refused ones with why."""

    sized: StratifiedCertificationSize | None
    prevalence_u: float | None
    per_prevalence: tuple[tuple[float, int, float], ...]  # (prevalence of U, total judged, recall planned for)
    refused: tuple[tuple[float, str], ...]

    def as_dict(self) -> dict:
        return jsonable(self)


def spread_prevalence(*, prevalence: float, sizes: Sequence[int], weights: Sequence[float] | None) -> tuple[float, ...]:
    """U's prior prevalence ``prevalence`` over its strata: the same in each (``weights`` None: no scorer, or
    nothing known of where the scorer puts U's relevant documents), or T_U = prevalence·|U| shared in
    proportion to ``weights``·|s| (a stratum's relative prevalence, e.g. each stratum's pilot share or a
    binormal scorer's), a stratum full at 1 passing its excess on to the others (T_U kept).  The prior fixes how many relevant documents U holds; the weights
    only where: they move the power, never the verdict's validity (the design carries the inference)."""
    size = np.asarray(sizes, dtype=float)
    if weights is None or size.sum() == 0:
        return tuple(float(prevalence) for _ in sizes)
    w = np.maximum(np.asarray(weights, dtype=float), 0.0)
    mass = float(np.sum(w * size))
    if mass <= 0:
        return tuple(float(prevalence) for _ in sizes)
    # water-filling: a stratum full at share 1 passes its excess to the others in proportion to w·|s|, so the
    # prior's T_U is kept (capping alone lost it, and the recall planned for rose above the prior's)
    wanted = prevalence * float(size.sum())
    share = np.zeros(size.shape)
    full = np.zeros(size.shape, dtype=bool)
    for _ in range(size.size + 1):
        left = wanted - float(np.sum(size[full]))
        open_mass = float(np.sum((w * size)[~full]))
        if left <= 0 or open_mass <= 0:
            break
        share = np.where(full, 1.0, left * w / open_mass)
        over = (share > 1.0) & ~full
        if not over.any():
            break
        full |= over
    share = np.where(full, 1.0, np.minimum(share, 1.0))
    return tuple(float(x) for x in share)


def design_basis_certification_plan(*, pair: Mapping[str, tuple[int, float]], u_strata: Sequence[tuple[str, int]],
                                    prevalences: Sequence[float], target: float, alpha: float = 0.05,
                                    power: float = 0.9, which: Literal["r1", "r2"] = "r1", seed: int = 0,
                                    u_weights: Sequence[float] | None = None, studies: int = SIZING_STUDIES,
                                    draws: int = SIZING_DRAWS, accuracy: float | None = None) -> DesignBasisPlan:
    """The design-basis certification plan over N's prior (issue 23): the plan for the prior prevalence of U
    that needs the most documents among those under which the planned recall is above the target (power
    where passing is right; a prevalence under which the recall is not above the target is one where
    failing is right).

    Which prevalence needs the most is found by :func:`stratified_certification_size`'s normal-approximation
    start (no simulation: the plan grows as the recall planned for nears the target); only that one is sized
    by simulated power, so a plan costs one power search whatever the number of prior points.
    ``per_prevalence`` lists each passable prevalence with its total (the simulated one for the kept
    prevalence, the analytic start for the others) and its planned recall.

    ``pair``: region → (size, precision guess) for A12, B1, B2 (one stratum each); ``u_strata``: U's (key,
    size) — one entry without a scorer, its score strata with one; ``u_weights``: see :func:`spread_prevalence`;
    ``accuracy``: the crowd's, for the simulated verdict's label-error correction (None: perfect labels).
    """
    guesses = [StratumGuess(h, int(pair[h][0]), float(pair[h][1]), h) for h in ("A12", "B1", "B2")]
    sizes = [int(s) for _, s in u_strata]
    candidates: list[tuple[float, list[StratumGuess], StratifiedCertificationSize]] = []
    refused: list[tuple[float, str]] = []
    for prevalence in prevalences:
        u = [StratumGuess("U", s, p, key) for (key, s), p in
             zip(u_strata, spread_prevalence(prevalence=float(prevalence), sizes=sizes, weights=u_weights),
                 strict=True)]
        try:
            start = stratified_certification_size(strata=guesses + u, target=target, alpha=alpha, power=power,
                                                  which=which, seed=seed, analytic_only=True)
        except cert.CertificationImpossible as exc:
            refused.append((float(prevalence), str(exc.reason)))
            continue
        candidates.append((float(prevalence), guesses + u, start))
    if not candidates:
        return DesignBasisPlan(sized=None, prevalence_u=None, per_prevalence=(), refused=tuple(refused))
    prevalence, strata, _ = max(candidates, key=lambda c: (c[2].analytic_total, c[0]))
    try:
        sized = stratified_certification_size(strata=strata, target=target, alpha=alpha, power=power, which=which,
                                              seed=seed, studies=studies, draws=draws, accuracy=accuracy)
    except cert.CertificationImpossible as exc:  # the largest plan needed cannot reach the power: none can do
        return DesignBasisPlan(sized=None, prevalence_u=prevalence, per_prevalence=(),
                               refused=(*refused, (prevalence, str(exc.reason))))
    rows = tuple((p, sized.total if p == prevalence else start.analytic_total, start.truth)
                 for p, _, start in candidates)
    return DesignBasisPlan(sized=sized, prevalence_u=prevalence, per_prevalence=rows, refused=tuple(refused))
