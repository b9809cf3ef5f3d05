"""Operating characteristics of the certification protocol, by simulation.

Seed 004 (Bagdouri, Webber, Lewis, Oard, CIKM 2013) makes a certification
valid by fixing the test-set size before the test set is drawn and testing
once.  This module measures what that buys: it simulates the whole protocol
many times on a generated population whose true value is known —

1. a pilot sample is drawn and judged (the labels the topic already has);
2. the plan sizes a fresh certification sample from the pilot (seed 004
   Alg. 2 for F1, its pair-recall equivalent per region, or a QBCB size);
3. the fresh sample is drawn from the documents the pilot did not use;
4. every document is judged by three workers of a chosen accuracy and
   labelled by majority vote;
5. the verdict is computed once: pass iff the one-sided 1 − α lower bound
   reaches the target τ —

and reports how often it passes.  At a true value equal to τ that is the
false-pass rate (should be ≤ α); above τ it is the power.  With ``peek`` the
same samples are also judged by the naive protocol that looks after every
batch and passes as soon as the fixed-sample bound clears τ (the
sequential-testing bias of seed 004, Sec. 6); with ``monitor`` they are
judged by an anytime-valid confidence sequence, which may stop early and
keeps its guarantee.

Everything random is vectorised over runs (sample counts are drawn as
hypergeometric counts, label noise as binomial flips).  The statistics
themselves — the plan sizes, the lower bounds, QBCB's threshold — are the
functions of ``certification``, ``pair_recall`` and ``planning``; this module
only calls them, once per run and look (with a cache for repeated inputs).

Label noise.  A three-worker majority with per-worker accuracy a is wrong
with probability e = 1 − a³ − 3a²(1 − a), symmetrically for relevant and
non-relevant documents.  The *true value* every rate is judged against is
the metric under the true labels; with a < 1 the majority labels are biased
(relevant documents are lost, non-relevant ones gained) and the pass rate is
no longer the false-pass rate of the method.  Use accuracy 1 to measure α.
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable
from functools import lru_cache
from dataclasses import asdict, dataclass, field

import numpy as np
from scipy.stats import beta, betabinom, binom, norm, qmc

from . import certification as cert
from . import confidence_sequence as cs
from . import planning
from .pair_recall import stratified_pair_recall_low

__all__ = [
    "METRICS",
    "PairPopulation",
    "ConfusionPopulation",
    "OperatingCharacteristics",
    "pair_population",
    "f1_population",
    "recall_population",
    "majority_error_rate",
    "qbcb_power",
    "pair_recall_fixed_lower_bound",
    "pair_recall_verdict_power",
    "pair_recall_calibrated_size",
    "delta_method_pair_planner",
    "qbcb_certification_size",
    "simulate_certification",
]

METRICS = ("pair_recall", "f1", "qbcb_recall")

# Monte Carlo draws of stratified_pair_recall's bound inside the simulation;
# the service uses the function's default.  1,000 draws put the bound's own
# Monte Carlo error at about ±0.003 on recall, far below its sampling error.
SIM_BOUND_DRAWS = 1_000
# A monitored plan's sample, as a multiple of the fixed-sample size (a ceiling: the
# confidence sequence is about twice as wide as a fixed-sample bound, so about four
# times the documents keep a similar power; a heuristic, measured with ``monitor``).
MONITORING_SIZE_FACTOR = 4
# Grid of the confidence sequences inside the simulation (service: 1,000).  A coarser
# grid only widens the sequence (bounds are rounded outward), so rates stay valid.
SIM_CS_GRID = 200
# Alg. 1 simulations per candidate size inside the simulation (service: 10,000).
SIM_PLAN_SIMULATIONS = 2_000


# =========================================================================== populations


@dataclass(frozen=True)
class PairPopulation:
    """A corpus seen through two classifiers C1, C2, by disjoint regions.

    ``*_size`` documents per region, ``*_relevant`` of them relevant.
    ``outside`` is U ∖ (A1 ∪ A2).  The certified quantity is the recall of
    C1, r1 = T12 / (T12 + T_B2) — equal to its recall over all relevant
    documents when C1 and C2 are conditionally independent on relevant
    documents (seed 000, Assumption 1), which the generator guarantees.
    """

    a12_size: int
    a12_relevant: int
    b1_size: int
    b1_relevant: int
    b2_size: int
    b2_relevant: int
    outside_size: int
    outside_relevant: int

    @property
    def true_recall(self) -> float:
        return self.a12_relevant / (self.a12_relevant + self.b2_relevant)

    @property
    def corpus_recall(self) -> float:
        total = self.a12_relevant + self.b1_relevant + self.b2_relevant + self.outside_relevant
        return (self.a12_relevant + self.b1_relevant) / total

    def as_dict(self) -> dict:
        return {**asdict(self), "true_recall": self.true_recall, "corpus_recall": self.corpus_recall}


def pair_population(*, true_recall: float, c2_relevant: int = 10_000, recall2: float = 0.6,
                    precision_a12: float = 0.9, precision_b1: float = 0.5, precision_b2: float = 0.3,
                    outside_size: int = 1_000_000) -> PairPopulation:
    """Population with C1's recall equal to ``true_recall`` (to 1/c2_relevant).

    C2 retrieves ``c2_relevant`` relevant documents; C1 finds ``true_recall``
    of them (A12) and the same fraction of those C2 misses, so the pair is
    conditionally independent on relevant documents.  Non-relevant documents
    are added to each region so that its precision is the one given.

    Default: |A12| ≈ 6,700 at r1 = 0.6, |B2| ≈ 13,300, p12 = 0.9,
    p_B1 = 0.5, p_B2 = 0.3, C2's recall 0.6, one million other documents.
    """
    cert._check_level("true_recall", true_recall)
    a12_rel = int(round(true_recall * c2_relevant))
    b2_rel = c2_relevant - a12_rel
    relevant_total = c2_relevant / recall2
    b1_rel = int(round(relevant_total * true_recall * (1.0 - recall2)))
    outside_rel = int(round(relevant_total * (1.0 - true_recall) * (1.0 - recall2)))

    def size(relevant: int, precision: float) -> int:
        return max(relevant, int(round(relevant / precision)))

    return PairPopulation(
        a12_size=size(a12_rel, precision_a12), a12_relevant=a12_rel,
        b1_size=size(b1_rel, precision_b1), b1_relevant=b1_rel,
        b2_size=size(b2_rel, precision_b2), b2_relevant=b2_rel,
        outside_size=outside_size + outside_rel, outside_relevant=outside_rel,
    )


@dataclass(frozen=True)
class ConfusionPopulation:
    """A corpus seen through one classifier: its full confusion matrix."""

    tp: int
    fp: int
    fn: int
    tn: int

    @property
    def size(self) -> int:
        return self.tp + self.fp + self.fn + self.tn

    @property
    def true_f1(self) -> float:
        return 2 * self.tp / (2 * self.tp + self.fp + self.fn)

    @property
    def true_recall(self) -> float:
        return self.tp / (self.tp + self.fn)

    @property
    def retrieved_fraction(self) -> float:
        return (self.tp + self.fp) / self.size

    def as_dict(self) -> dict:
        return {**asdict(self), "true_f1": self.true_f1, "true_recall": self.true_recall,
                "prevalence": (self.tp + self.fn) / self.size}


def f1_population(*, true_f1: float, relevant: int = 10_000, corpus_size: int = 200_000) -> ConfusionPopulation:
    """A classifier with precision = recall = ``true_f1`` (so F1 = true_f1) at 5% prevalence by default."""
    cert._check_level("true_f1", true_f1)
    tp = int(round(true_f1 * relevant))
    fn = relevant - tp
    fp = fn  # precision = recall
    return ConfusionPopulation(tp=tp, fp=fp, fn=fn, tn=corpus_size - tp - fp - fn)


def recall_population(*, true_recall: float, relevant: int = 10_000, precision: float = 0.5,
                      corpus_size: int = 200_000) -> ConfusionPopulation:
    """A classifier with recall ``true_recall`` and the given precision (QBCB's setting)."""
    cert._check_level("true_recall", true_recall)
    tp = int(round(true_recall * relevant))
    fp = int(round(tp * (1.0 - precision) / precision))
    return ConfusionPopulation(tp=tp, fp=fp, fn=relevant - tp, tn=corpus_size - relevant - fp)


def majority_error_rate(accuracy: float) -> float:
    """P(a majority of three independent workers, each right w.p. ``accuracy``, is wrong).

    1 − a³ − 3a²(1 − a); notes §3: a = 0.8 → 0.104, a = 0.9 → 0.028.
    """
    if not 0.5 <= accuracy <= 1.0:
        raise ValueError(f"worker accuracy must lie in [0.5, 1] (got {accuracy!r})")
    return 1.0 - accuracy**3 - 3.0 * accuracy**2 * (1.0 - accuracy)


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
    """P(QBCB passes) on a uniform sample of ``size`` documents.

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
                                  draws: int = SIM_BOUND_DRAWS, seed: int | None = 0) -> float:
    """The certification bound of pair recall: one-sided 1 − α lower bound of r1 (or r2).

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
                              draws: int = SIM_BOUND_DRAWS, seed: int | None = 0,
                              pilot: dict | None = None) -> float:
    """P(the pair-recall verdict passes) with n_a12 and n_other documents judged.

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
    high = int(min(n_other, np.searchsorted(other_cdf, 1.0 - _POWER_TAIL, side="left")))
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
    """Refuse when even an unlimited sample could not give the power (cf. part B's Alg. 2 check).

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
                                alpha: float = 0.05, power: float = 0.9, which: str = "r1",
                                draws: int = SIM_BOUND_DRAWS, seed: int | None = 0,
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
        candidate = math.sqrt(low * high) if bisecting else guess * (1.0 + tolerance / 3.0)
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
    return high, high_value


# =========================================================================== protocol machinery

def _noisy(rng: np.random.Generator, relevant: np.ndarray, total: np.ndarray, error: float) -> np.ndarray:
    """Majority labels: how many of ``total`` judged documents are *labelled* relevant."""
    if error <= 0.0:
        return relevant.copy()
    return rng.binomial(relevant, 1.0 - error) + rng.binomial(total - relevant, error)


def _draw(rng: np.random.Generator, good: np.ndarray, bad: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Relevant documents among n drawn without replacement (vectorised over runs)."""
    good = np.asarray(good, dtype=np.int64)
    bad = np.asarray(bad, dtype=np.int64)
    n = np.minimum(np.asarray(n, dtype=np.int64), good + bad)
    return rng.hypergeometric(np.broadcast_to(good, n.shape), np.broadcast_to(bad, n.shape), n)


def _uniform_cells(rng, remaining: dict[str, np.ndarray], n: np.ndarray) -> dict[str, np.ndarray]:
    """Split a uniform draw of n documents among the cells, removing them from ``remaining``."""
    left = sum(remaining.values())
    n = np.minimum(n, left)
    drawn = {}
    keys = list(remaining)
    for key in keys[:-1]:
        left = left - remaining[key]
        count = rng.hypergeometric(remaining[key], left, n)
        drawn[key] = count
        n = n - count
    drawn[keys[-1]] = n
    for key in keys:
        remaining[key] = remaining[key] - drawn[key]
    return drawn


class _Cache:
    """Memoises a scalar function of integer inputs (runs often repeat the same counts)."""

    def __init__(self, function: Callable[..., object]):
        self.function = function
        self.values: dict[tuple, object] = {}

    def __call__(self, *key: int) -> object:
        if key not in self.values:
            self.values[key] = self.function(*key)
        return self.values[key]


# =========================================================================== the metrics

class _Metric:
    """How one metric is piloted, planned, sampled and decided in the simulation."""

    name: str
    strata: tuple[str, ...]

    def pilot(self, rng, runs: int) -> dict[str, np.ndarray]:  # observed pilot inputs per run
        raise NotImplementedError

    def plan(self, pilot: dict[str, np.ndarray]) -> np.ndarray:  # sizes per run and stratum; 0 = impossible
        raise NotImplementedError

    def sample(self, rng, sizes: np.ndarray) -> dict[str, np.ndarray]:  # true counts of the next batch
        raise NotImplementedError

    def passes(self, observed: dict[str, np.ndarray]) -> np.ndarray:
        raise NotImplementedError

    def truth(self) -> dict[str, np.ndarray]:  # the population itself, as a one-run "pilot"
        raise NotImplementedError


class _PairRecallMetric(_Metric):
    """C1's recall from the disjoint regions A12 and B2 (r1 = T12 / (T12 + T_B2))."""

    name = "pair_recall"
    strata = ("A12", "B2")

    def __init__(self, *, population: PairPopulation, target: float, alpha: float, power: float,
                 pilot_size: int, error: float, planner: Callable | None, seed_base: int):
        self.population, self.target, self.alpha, self.power = population, target, alpha, power
        self.pilot_size, self.error = pilot_size, error
        self.planner = planner or _default_pair_planner
        self.sizes = {"A12": population.a12_size, "B2": population.b2_size, "B1": population.b1_size}
        self.relevant = {"A12": population.a12_relevant, "B2": population.b2_relevant,
                         "B1": population.b1_relevant}
        self.seed_base = seed_base
        self._bound = _Cache(self._lower_bound)

    def pilot(self, rng, runs):
        observed = {}
        self.remaining_good, self.remaining_bad, self.region_size = {}, {}, {}
        for key in ("A12", "B1", "B2"):
            n = np.full(runs, min(self.pilot_size, self.sizes[key]), dtype=np.int64)
            true = _draw(rng, self.relevant[key], self.sizes[key] - self.relevant[key], n)
            observed[key] = (_noisy(rng, true, n, self.error), n)
            self.remaining_good[key] = self.relevant[key] - true
            self.remaining_bad[key] = self.sizes[key] - self.relevant[key] - (n - true)
            # The certification sample is drawn from the region minus the pilot's documents.
            self.region_size[key] = self.sizes[key] - n
        return observed

    def truth(self):
        return {key: (np.array([self.relevant[key]]), np.array([self.sizes[key]])) for key in ("A12", "B1", "B2")}

    def plan(self, pilot):
        runs = pilot["A12"][0].size
        sizes = np.zeros((runs, len(self.strata)), dtype=np.int64)
        # B1 plays no part in r1, so the plan depends on the A12 and B2 pilots only.  Distinct
        # pilots are planned in sorted order, each search starting from its neighbour's factor.
        keys = [tuple(int(v[i]) for name in ("A12", "B2") for v in pilot[name]) for i in range(runs)]
        plans: dict[tuple, dict | None] = {}
        hint = None
        for key in sorted(set(keys)):
            planned = self.planner(
                regions={"A12": (self.sizes["A12"], key[1], key[0]), "B2": (self.sizes["B2"], key[3], key[2]),
                         "B1": (self.sizes["B1"], 0, 0)},
                target=self.target, alpha=self.alpha, power=self.power, factor_hint=hint)
            plans[key] = planned
            if planned is not None and planned.get("factor"):
                hint = planned["factor"]
        for i, key in enumerate(keys):
            if plans[key] is not None:
                sizes[i] = [plans[key].get(stratum, 0) for stratum in self.strata]
        return sizes

    def sample(self, rng, sizes):
        drawn = {}
        for j, key in enumerate(self.strata):
            n = np.minimum(sizes[:, j], self.remaining_good[key] + self.remaining_bad[key])
            true = _draw(rng, self.remaining_good[key], self.remaining_bad[key], n)
            self.remaining_good[key] = self.remaining_good[key] - true
            self.remaining_bad[key] = self.remaining_bad[key] - (n - true)
            drawn[key] = (_noisy(rng, true, n, self.error), n)
        return drawn

    def snapshot(self):
        return dict(self.remaining_good), dict(self.remaining_bad)

    def restore(self, state) -> None:
        self.remaining_good, self.remaining_bad = dict(state[0]), dict(state[1])

    def sequence_parts(self, increment):
        return {key: (increment[key][0], increment[key][1] - increment[key][0]) for key in self.strata}

    def sequence_bound(self, state: dict, run: int, batches: dict[str, np.ndarray]) -> float:
        # The run's running CSs (lower on p12, upper on p_B2), made at its first look.
        if "bound" not in state:
            if self.region_size["A12"][run] <= 0:  # no A12 document to judge: never passes
                return 0.0
            state["bound"] = cs.RunningPairRecallBound(
                overlap_size=int(self.region_size["A12"][run]), other_size=int(self.region_size["B2"][run]),
                alpha=self.alpha, grid_size=SIM_CS_GRID)
        bound = state["bound"]
        bound.extend(overlap_outcomes=batches["A12"], other_outcomes=batches["B2"])
        return float(bound.lower_bound) if bound.overlap.count else 0.0

    def _lower_bound(self, a12_size, a12_judged, a12_rel, b2_size, b2_judged, b2_rel) -> float:
        return pair_recall_fixed_lower_bound(a12=(a12_size, a12_judged, a12_rel), other=(b2_size, b2_judged, b2_rel),
                                             alpha=self.alpha, seed=self.seed_base)

    def passes(self, observed):
        rel12, n12 = observed["A12"]
        relb2, nb2 = observed["B2"]
        out = np.zeros(rel12.size, dtype=bool)
        for i in range(rel12.size):
            if n12[i] == 0 or nb2[i] == 0:
                continue
            out[i] = self._bound(int(self.region_size["A12"][i]), int(n12[i]), int(rel12[i]),
                                 int(self.region_size["B2"][i]), int(nb2[i]), int(relb2[i])) >= self.target
        return out


def _default_pair_planner(*, regions: dict, target: float, alpha: float, power: float,
                          factor_hint: float | None = None) -> dict | None:
    """Per-region sizes as the service plans them (:func:`pair_recall_calibrated_size`); None when impossible.

    ``regions`` maps A12, B1, B2 to (size, judged, relevant) of the pilot;
    precisions are the pilot's Jeffreys posterior means
    (``planning.precision_guess_from_pilot``), as in the service.
    """
    guess = {key: planning.precision_guess_from_pilot(relevant=regions[key][2], judged=regions[key][1])
             for key in ("A12", "B2")}
    try:
        plan = pair_recall_calibrated_size(size_a12=regions["A12"][0], size_other=regions["B2"][0],
                                           p12=guess["A12"], p_other=guess["B2"], target=target, alpha=alpha,
                                           power=power, factor_hint=factor_hint,
                                           pilot={"A12": regions["A12"][1:], "other": regions["B2"][1:]})
    except cert.CertificationImpossible:
        return None
    return {"A12": plan["A12"], "B2": plan["B2"], "factor": plan["factor"]}


def delta_method_pair_planner(*, regions: dict, target: float, alpha: float, power: float,
                              factor_hint: float | None = None) -> dict | None:
    """Part A's sizes as they are (``planning.pair_recall_certification_size``), for comparison."""
    guess = {key: planning.precision_guess_from_pilot(relevant=regions[key][2], judged=regions[key][1])
             for key in ("A12", "B2")}
    try:
        plan = planning.pair_recall_certification_size(
            size_a12=regions["A12"][0], size_other=regions["B2"][0], p12=guess["A12"], p_other=guess["B2"],
            tau=target, alpha=alpha, power=power, target="r1")
    except ValueError:
        return None
    return {key: int(n) for key, n in plan.judgments.items()}


class _UniformMetric(_Metric):
    """A uniform sample of the corpus split among the classifier's confusion cells."""

    strata = ("n",)
    cells = ("tp", "fp", "fn", "tn")
    running_bound: type  # the metric's running confidence-sequence bound (confidence_sequence.Running*Bound)

    def __init__(self, *, population: ConfusionPopulation, target: float, alpha: float, power: float,
                 pilot_size: int, error: float, seed_base: int, plan_simulations: int):
        self.population, self.target, self.alpha, self.power = population, target, alpha, power
        self.pilot_size, self.error, self.seed_base = pilot_size, error, seed_base
        self.plan_simulations = plan_simulations

    def _observe(self, rng, true: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Majority labels: relevant documents may be labelled not relevant and vice versa."""
        if self.error <= 0.0:
            return dict(true)
        out = {}
        for relevant, other in (("tp", "fp"), ("fn", "tn")):
            kept = rng.binomial(true[relevant], 1.0 - self.error)
            gained = rng.binomial(true[other], self.error)
            out[relevant] = kept + gained
            out[other] = true[relevant] + true[other] - out[relevant]
        return out

    def pilot(self, rng, runs):
        self.remaining = {cell: np.full(runs, getattr(self.population, cell), dtype=np.int64) for cell in self.cells}
        true = _uniform_cells(rng, self.remaining, np.full(runs, self.pilot_size, dtype=np.int64))
        return self._observe(rng, true)

    def truth(self):
        return {cell: np.array([getattr(self.population, cell)]) for cell in self.cells}

    def plan(self, pilot):
        runs = pilot["tp"].size
        sizes = np.zeros((runs, 1), dtype=np.int64)
        cache = _Cache(self._plan_one)
        for i in range(runs):
            sizes[i, 0] = cache(*self._plan_key(*(int(pilot[cell][i]) for cell in self.cells)))
        return sizes

    def _plan_key(self, tp, fp, fn, tn) -> tuple[int, ...]:
        return tp, fp, fn, tn

    def sample(self, rng, sizes):
        return self._observe(rng, _uniform_cells(rng, self.remaining, sizes[:, 0].astype(np.int64)))

    def sequence_bound(self, state: dict, run: int, batches: dict[str, np.ndarray]) -> float:
        """The metric's anytime-valid bound after this look (one running sequence per run, in ``state``)."""
        if "bound" not in state:
            state["bound"] = self.running_bound(alpha=self.alpha, grid_size=SIM_CS_GRID)
        bound = state["bound"]
        (outcomes,) = batches.values()  # one sequence per uniform metric (see sequence_parts)
        bound.extend(outcomes)
        return float(bound.lower_bound) if bound.count else 0.0

    def snapshot(self):
        return dict(self.remaining)

    def restore(self, state) -> None:
        self.remaining = dict(state)


class _F1Metric(_UniformMetric):
    name = "f1"
    running_bound = cs.RunningUniformF1Bound

    def _plan_one(self, tp, fp, fn, tn) -> int:
        try:
            return cert.certification_test_size(
                tp=tp, fp=fp, fn=fn, tn=tn, target=self.target, alpha=self.alpha, power=self.power,
                seed=self.seed_base, simulations=self.plan_simulations,
                retrieved_fraction=self.population.retrieved_fraction)
        except cert.CertificationImpossible:
            return 0

    def sequence_parts(self, increment):
        # Among relevant-or-retrieved documents: 1 for an error (FP or FN), 0 for a TP.
        return {"errors": (increment["fp"] + increment["fn"], increment["tp"])}

    def passes(self, observed):
        tp, fp, fn, tn = (observed[c] for c in self.cells)
        cache = _Cache(lambda *c: cert.certification_passes(tp=c[0], fp=c[1], fn=c[2], tn=c[3],
                                                            target=self.target, alpha=self.alpha))
        judged = tp + fp + fn + tn
        return np.array([bool(judged[i]) and bool(cache(int(tp[i]), int(fp[i]), int(fn[i]), int(tn[i])))
                         for i in range(tp.size)], dtype=bool)


class _QbcbMetric(_UniformMetric):
    name = "qbcb_recall"
    running_bound = cs.RunningUniformRecallBound

    def _plan_key(self, tp, fp, fn, tn) -> tuple[int, ...]:
        return tp + fn, tp, tp + fp + fn + tn  # QBCB's pilot is (relevant, found, judged)

    def _plan_one(self, relevant, found, judged) -> int:
        try:
            return qbcb_certification_size(relevant=relevant, found=found, judged=judged,
                                           target_recall=self.target, confidence=1.0 - self.alpha,
                                           power=self.power, seed=self.seed_base)
        except cert.CertificationImpossible:
            return 0

    def sequence_parts(self, increment):
        # Among relevant documents: 1 if the classifier found it.
        return {"found": (increment["tp"], increment["fn"])}

    def passes(self, observed):
        tp, fn = observed["tp"], observed["fn"]
        cache = _Cache(lambda found, relevant: cert.qbcb_passes(
            relevant=relevant, found=found, target_recall=self.target, confidence=1.0 - self.alpha))
        return np.array([bool(cache(int(tp[i]), int(tp[i] + fn[i]))) for i in range(tp.size)], dtype=bool)


# =========================================================================== results


@dataclass(frozen=True)
class OperatingCharacteristics:
    """What :func:`simulate_certification` measured.  Rates carry Monte Carlo standard errors."""

    metric: str
    target: float
    true_value: float
    alpha: float
    power: float
    accuracy: float
    majority_error: float
    runs: int
    seed: int | None
    pilot_judged: float
    planned_rate: float
    pass_rate: float
    pass_rate_se: float
    pass_rate_given_planned: float | None
    mean_judged: float
    mean_judgments: float
    looks: int
    peek_pass_rate: float | None = None
    peek_pass_rate_se: float | None = None
    peek_mean_judged: float | None = None
    monitor_pass_rate: float | None = None
    monitor_pass_rate_se: float | None = None
    monitor_mean_judged: float | None = None
    fixed_size: dict | None = None
    plan_at_truth: bool = False
    population: dict = field(default_factory=dict)
    elapsed_seconds: float = 0.0

    def as_dict(self) -> dict:
        return asdict(self)


def _se(rate: float, runs: int) -> float:
    return math.sqrt(max(rate * (1.0 - rate), 0.0) / runs) if runs else math.nan


def simulate_certification(*, metric: str, target: float, true_value: float, alpha: float = 0.05,
                           power: float = 0.9, runs: int = 1_000, seed: int | None = None,
                           accuracy: float = 1.0, peek: bool = False, looks: int = 10,
                           pilot_size: int | None = None, fixed_size: dict | int | None = None,
                           plan_at_truth: bool = False, monitor: bool = False,
                           population: PairPopulation | ConfusionPopulation | None = None,
                           pair_planner: Callable | None = None,
                           plan_simulations: int = SIM_PLAN_SIMULATIONS) -> OperatingCharacteristics:
    """Run the certification protocol ``runs`` times; return pass rates and judgments used.

    ``metric``: "pair_recall" (C1's recall from regions A12 and B2, verdict
    by ``stratified_pair_recall``'s one-sided lower bound), "f1" (uniform
    test set, seed 004 Alg. 2, verdict by ``certification.certification_passes``'s
    exact bound) or "qbcb_recall" (uniform
    sample, QBCB).  ``true_value`` is the metric's value under the true
    labels of the generated population (``pair_population``,
    ``f1_population``, ``recall_population`` unless ``population`` is given).

    ``pilot_size``: pilot documents per region (pair) or in total (uniform).
    ``fixed_size``: skip the plan and use this size (per region for pair
    recall) in every run — to measure α of the test alone.
    ``monitor``: also run the monitored protocol: a separate sample of
    ``MONITORING_SIZE_FACTOR`` × the planned size, drawn in ``looks`` batches,
    passing at the first look whose anytime-valid confidence sequence
    (``confidence_sequence``) clears the target (slower: sequences per run).
    ``plan_at_truth``: size the sample from the population itself instead of
    the pilot (the power analysis at the true effect, without pilot error).
    ``peek``: also run the naive protocol on the same samples: look after
    each of ``looks`` equal batches and pass at the first look whose
    fixed-sample bound clears the target.
    """
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS} (got {metric!r})")
    for name, value in (("target", target), ("true_value", true_value), ("alpha", alpha), ("power", power)):
        cert._check_level(name, value)
    if runs < 1 or looks < 1:
        raise ValueError("runs and looks must be at least 1")
    error = majority_error_rate(accuracy)
    started = time.perf_counter()
    root = np.random.SeedSequence(seed)
    pilot_seq, sample_seq, stat_seq = root.spawn(3)
    rng_pilot, rng_sample = np.random.default_rng(pilot_seq), np.random.default_rng(sample_seq)
    seed_base = int(stat_seq.generate_state(1)[0])

    if metric == "pair_recall":
        population = population or pair_population(true_recall=true_value)
        model: _Metric = _PairRecallMetric(population=population, target=target, alpha=alpha, power=power,
                                           pilot_size=pilot_size or 100, error=error, planner=pair_planner,
                                           seed_base=seed_base)
    elif metric == "f1":
        population = population or f1_population(true_f1=true_value)
        model = _F1Metric(population=population, target=target, alpha=alpha, power=power,
                          pilot_size=pilot_size or 2000, error=error, seed_base=seed_base,
                          plan_simulations=plan_simulations)
    else:
        population = population or recall_population(true_recall=true_value)
        model = _QbcbMetric(population=population, target=target, alpha=alpha, power=power,
                            pilot_size=pilot_size or 2000, error=error, seed_base=seed_base,
                            plan_simulations=plan_simulations)

    pilot = model.pilot(rng_pilot, runs)
    pilot_judged = float(sum(np.mean(v[1] if isinstance(v, tuple) else v) for v in pilot.values()))
    if fixed_size is not None:
        fixed = fixed_size if isinstance(fixed_size, dict) else {model.strata[0]: int(fixed_size)}
        sizes = np.tile(np.array([int(fixed.get(s, 0)) for s in model.strata], dtype=np.int64), (runs, 1))
    elif plan_at_truth:
        sizes = np.tile(model.plan(model.truth()), (runs, 1))
    else:
        sizes = model.plan(pilot)
    planned = sizes.sum(axis=1) > 0

    monitored = None
    if monitor:
        state = model.snapshot()
        monitored = _monitor(model, rng=np.random.default_rng(root.spawn(1)[0]), sizes=sizes, planned=planned,
                             looks=looks)
        model.restore(state)

    # Draw the certification sample in ``looks`` batches (the locked protocol
    # only ever sees their sum); cumulative boundaries are ceil(k/looks * size).
    batches = looks if peek else 1
    observed: dict | None = None
    peek_passed = np.zeros(runs, dtype=bool)
    peek_judged = np.zeros(runs, dtype=np.int64)
    done = np.zeros_like(sizes)
    for k in range(1, batches + 1):
        boundary = -(-sizes * k // batches)
        increment = model.sample(rng_sample, boundary - done)
        done = boundary
        observed = increment if observed is None else {
            key: (tuple(a + b for a, b in zip(observed[key], value)) if isinstance(value, tuple)
                  else observed[key] + value) for key, value in increment.items()}
        if peek:
            active = planned & ~peek_passed
            now = np.zeros(runs, dtype=bool)
            if active.any():
                now[active] = model.passes(_subset(observed, active))
            peek_judged = np.where(active, done.sum(axis=1), peek_judged)
            peek_passed |= now
    passed = np.zeros(runs, dtype=bool)
    if planned.any():
        passed[planned] = model.passes(_subset(observed, planned))

    judged = np.where(planned, sizes.sum(axis=1), 0)
    pass_rate = float(passed.mean())
    given = float(passed[planned].mean()) if planned.any() else None
    result = OperatingCharacteristics(
        metric=metric, target=target, true_value=true_value, alpha=alpha, power=power, accuracy=accuracy,
        majority_error=error, runs=runs, seed=seed, pilot_judged=pilot_judged,
        planned_rate=float(planned.mean()), pass_rate=pass_rate, pass_rate_se=_se(pass_rate, runs),
        pass_rate_given_planned=given, mean_judged=float(judged.mean()),
        mean_judgments=float(3 * judged.mean()), looks=batches,
        peek_pass_rate=float(peek_passed.mean()) if peek else None,
        peek_pass_rate_se=_se(float(peek_passed.mean()), runs) if peek else None,
        peek_mean_judged=float(peek_judged.mean()) if peek else None,
        monitor_pass_rate=None if monitored is None else float(monitored[0].mean()),
        monitor_pass_rate_se=None if monitored is None else _se(float(monitored[0].mean()), runs),
        monitor_mean_judged=None if monitored is None else float(monitored[1].mean()),
        fixed_size=(fixed if fixed_size is not None else None), plan_at_truth=plan_at_truth,
        population=population.as_dict(),
        elapsed_seconds=time.perf_counter() - started,
    )
    return result


def _subset(observed: dict, mask: np.ndarray) -> dict:
    return {key: (tuple(a[mask] for a in value) if isinstance(value, tuple) else value[mask])
            for key, value in observed.items()}


def _monitor(model: _Metric, *, rng: np.random.Generator, sizes: np.ndarray, planned: np.ndarray,
             looks: int) -> tuple[np.ndarray, np.ndarray]:
    """The monitored protocol: pass at the first look whose confidence sequence clears the target.

    Within a batch the judged documents come in random order (a uniform sample is
    exchangeable), so each batch's labels are shuffled and appended to the run's
    sequences.  Each run keeps running confidence sequences (``state``, fed one
    batch per look: work per look in proportion to the batch, not to all judged so
    far); the bound after each look equals the one computed from the whole
    sequence.  Returns (passed, documents judged) per run.
    """
    runs = sizes.shape[0]
    big = MONITORING_SIZE_FACTOR * sizes
    passed = np.zeros(runs, dtype=bool)
    judged = np.zeros(runs, dtype=np.int64)
    states: list[dict] = [{} for _ in range(runs)]
    done = np.zeros_like(big)
    for k in range(1, looks + 1):
        boundary = -(-big * k // looks)
        parts = model.sequence_parts(model.sample(rng, boundary - done))
        done = boundary
        for i in np.flatnonzero(planned & ~passed):
            batches = {}
            for name, (ones, zeros) in parts.items():
                batch = np.concatenate([np.ones(int(ones[i])), np.zeros(int(zeros[i]))])
                rng.shuffle(batch)
                batches[name] = batch
            judged[i] = done[i].sum()
            if model.sequence_bound(states[i], i, batches) >= model.target:
                passed[i] = True
    return passed, judged
