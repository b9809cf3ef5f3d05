"""Design-based recall of a pair with a complement (elusion) sample — no independence assumption.

ESTIMATION-NOTES §8 ("testing the assumption costs a complement sample"),
seed 000's notation.  Split the corpus into four disjoint regions,

    A12 = A1 ∩ A2,  B1 = A1∖A2,  B2 = A2∖A1,  U = retrieved by neither,

with T_h the relevant documents of region h and N = T12 + T_B1 + T_B2 + T_U.
Then, without any assumption on how the classifiers depend on each other,

    r1 = (T12 + T_B1) / N,    r2 = (T12 + T_B2) / N.

The pair design (``pair_recall.stratified_pair_recall``) measures instead
r1* = T12/(T12 + T_B2), which replaces T_U by T_B1·T_B2/T12 (independence).

The dependence factor.  Seed 000's Assumption 1 is P(A1 | A2, relevant) =
P(A1 | relevant).  Define, as the sensitivity band of ``pair_recall`` does
("Eq. 1 estimates δ1·r1, so r1 = estimate/δ1"),

    δ1 = r1*/r1 = T12·N / (T1·T2)      (T1 = T12 + T_B1, T2 = T12 + T_B2),

which is symmetric (δ1 = r2*/r2 as well), equals ``capture_recapture``'s
delta12 = P[A1∩A2|T]/(P[A1|T]·P[A2|T]), and makes Lincoln–Petersen's
n̂ = T1·T2/T12 = N/δ1.  δ1 > 1 (positive dependence, e.g. title and body
keyword filters) makes the pair's recall too high.

Two lower bounds, for two uses:

* Reports — Monte Carlo over each region's Jeffreys posterior, Beta(½ + k,
  ½ + n − k), turned into the region's count by the finite-population
  posterior predictive k + Binomial(|h| − n, p) (``pair_recall._count_draws``):
  a region whose every document was judged (an exhausted region, notes §8)
  is exact.  Point = plug-in, two-sided equal-tailed percentile interval,
  one-sided lower bound = the (1 − confidence) percentile.
* Certification — ``conservative_lower_bound``: the same Monte Carlo but each
  region drawn from the Clopper–Pearson confidence distribution that pushes
  the recall down (Beta(k, n − k + 1) for T12 and the own region, Beta(k + 1,
  n − k) for the other region and U).  For U alone this distribution's
  (1 − α) quantile *is* the exact one-sided Clopper–Pearson upper bound on
  the elusion rate (zero found in m → 1 − α^(1/m) ≈ 3/m at 95%), so when
  A12, B1, B2 are enumerated the bound is exactly r1 at T_U's exact upper
  bound (``t_u.upper_bound``, also reported); otherwise the other regions'
  uncertainty is folded in as in ``pair_recall``'s conservative intervals.

Measured (``tests/estimation/stats/test_design_based.py``, 800 seeded
studies per δ1, 5,000 relevant in 500,000 documents, r1 = 0.7, r2 = 0.6,
200 judged in each of A12, B1, B2 and 2,000 in U): two-sided 95% Jeffreys
coverage of the corpus recall 0.941–0.975 for δ1 ∈ {0.8, 1, 1.25, 1.35};
δ1's interval covered the true δ1 0.943–0.968; the conservative 95% bound
exceeded the truth in at most 2.9% of studies (the one-sided Jeffreys
bound in up to 7.4%, at δ1 = 1 — so it is not used for certification).
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from scipy.special import betaincinv
from scipy.stats import binom

from .pair_recall import (
    _CP_HIGH,
    _CP_LOW,
    _JEFFREYS,
    Diagnostic,
    RegionLike,
    RegionSample,
    _check_mc,
    _count_draws_array,
    _nan_to_none,
    as_region,
)
from .proportions import jsonable

REGIONS = ("A12", "B1", "B2", "U")
DEFAULT_DRAWS = 20_000
_CORRECTED_NOTE = "; every region's share corrected for label error (Rogan–Gladen, per draw)"

__all__ = [
    "LabelError",
    "label_error_from_accuracy",
    "label_error_from_votes",
    "label_error_from_vote_patterns",
    "ComplementNoiseFloor",
    "complement_noise_floor",
    "complement_prevalence_upper_bound",
    "majority_false_positive_rate",
    "REGIONS",
    "COMPLEMENT_PRIOR_SHARES",
    "ComplementPriorSize",
    "ComplementSampleSize",
    "complement_prior_prevalences",
    "complement_sample_size_prior",
    "DesignBasedArrays",
    "DesignBasedPlan",
    "DesignBasedRecall",
    "DependenceEstimate",
    "DesignRecall",
    "ElusionEstimate",
    "PairCorpus",
    "RelevantInComplement",
    "complement_sample_size",
    "dependent_pair_corpus",
    "design_based_recall",
    "design_based_recall_arrays",
    "design_based_sample_plan",
]


# =========================================================================== results


@dataclass(frozen=True)
class DesignRecall:
    """Recall of one classifier, r = T_own/N, assuming nothing about dependence.

    ``low``/``high``: two-sided Jeffreys Monte Carlo interval at the result's
    confidence (reports).  ``lower_bound``: one-sided Jeffreys bound at that
    confidence.  ``conservative_lower_bound``: one-sided bound from the
    Clopper–Pearson confidence distributions (certification).
    ``pair_estimand``: r* = T12/(T12 + T_other), what the pair design measures.
    """

    point: float | None
    low: float | None
    high: float | None
    lower_bound: float | None
    conservative_lower_bound: float | None
    pair_estimand: float | None
    method: str

    def as_dict(self) -> dict:
        return jsonable(self)


@dataclass(frozen=True)
class ElusionEstimate:
    """Share of relevant documents in U (the elusion rate): point, two-sided Jeffreys interval,
    exact one-sided Clopper–Pearson upper bound; ``found`` of ``judged`` sampled from U."""

    point: float | None
    low: float | None
    high: float | None
    upper_bound: float | None
    found: float
    judged: int

    def as_dict(self) -> dict:
        return jsonable(self)


@dataclass(frozen=True)
class RelevantInComplement:
    """T_U, the relevant documents nobody retrieved; ``upper_bound`` = found + (|U| − m)·CP upper bound."""

    point: float | None
    low: float | None
    high: float | None
    upper_bound: float | None

    def as_dict(self) -> dict:
        return jsonable(self)


@dataclass(frozen=True)
class DependenceEstimate:
    """δ1 = T12·N/(T1·T2) (= r1*/r1 = r2*/r2), two-sided Jeffreys Monte Carlo interval."""

    point: float | None
    low: float | None
    high: float | None
    independence_rejected: bool

    def as_dict(self) -> dict:
        return jsonable(self)


@dataclass(frozen=True)
class DesignBasedRecall:
    """Result of :func:`design_based_recall`.  ``as_dict()`` is JSON-serialisable."""

    confidence: float
    draws: int
    seed: int | None
    regions: dict
    r1: DesignRecall
    r2: DesignRecall
    elusion: ElusionEstimate
    t_u: RelevantInComplement
    relevant_total: DesignRecall  # N: point and interval (lower_bound fields are N's one-sided bounds)
    delta1: DependenceEstimate
    independence_rejected: bool
    diagnostics: tuple[Diagnostic, ...]

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(d.code for d in self.diagnostics)

    def as_dict(self) -> dict:
        return jsonable(self)


@dataclass(frozen=True)
class DesignBasedArrays:
    """:func:`design_based_recall_arrays`: one entry per simulated study (arrays of the counts' shape)."""

    point: np.ndarray
    low: np.ndarray
    high: np.ndarray
    lower_bound: np.ndarray
    conservative_lower_bound: np.ndarray
    delta1_point: np.ndarray
    delta1_low: np.ndarray
    delta1_high: np.ndarray


# =========================================================================== label error (Rogan & Gladen 1978)


@dataclass(frozen=True)
class LabelError:
    """Misclassification rates of the (majority) labels, as Monte Carlo draws — notes §3.

    ``false_positive`` = fp = 1 − sp = P(labelled relevant | not relevant), ``false_negative`` = fn = 1 − se =
    P(labelled not relevant | relevant): arrays of draws from their posterior, of shape (draws,) or, for
    simulations, (studies, draws) matching the relevant counts' shape + (draws,).  ``fp_point``/``fn_point``
    are the plug-in rates used for the point estimate.  All zero is perfect labels (the plain estimate).
    """

    false_positive: np.ndarray
    false_negative: np.ndarray
    fp_point: float | np.ndarray
    fn_point: float | np.ndarray
    accuracy_point: float | np.ndarray | None = None
    source: str = ""

    @property
    def perfect(self) -> bool:
        return bool(np.all(self.false_positive == 0.0) and np.all(self.false_negative == 0.0)
                    and np.all(np.asarray(self.fp_point) == 0.0) and np.all(np.asarray(self.fn_point) == 0.0))


def _majority_error(accuracy: np.ndarray, votes: int) -> np.ndarray:
    """:func:`majority_false_positive_rate` for an array of accuracies (one-coin: fp = fn): the binomial tail
    summed term by term (``votes`` is a handful; scipy's binom.sf takes ~70 ms on 10,000 draws)."""
    wrong = 1.0 - np.clip(np.asarray(accuracy, dtype=float), 0.0, 1.0)
    out = np.zeros(wrong.shape)
    for j in range(votes // 2 + 1, votes + 1):
        out = out + math.comb(votes, j) * wrong ** j * (1.0 - wrong) ** (votes - j)
    return out


def label_error_from_accuracy(*, accuracy_draws: np.ndarray, accuracy_point: float | np.ndarray,
                              votes: int = 3) -> LabelError:
    """The majority-of-``votes`` label error of symmetric (one-coin) workers, from draws of their accuracy."""
    if votes < 1:
        raise ValueError(f"votes must be at least 1 (got {votes!r})")
    a = np.asarray(accuracy_draws, dtype=float)
    if np.any((a < 0.0) | (a > 1.0)):
        raise ValueError("accuracy draws must lie in [0, 1]")
    err = _majority_error(a, votes)
    point = _majority_error(np.asarray(accuracy_point, dtype=float), votes)
    point_out: float | np.ndarray = float(point) if point.ndim == 0 else point
    acc_out: float | np.ndarray = float(accuracy_point) if np.ndim(accuracy_point) == 0 else np.asarray(accuracy_point)
    return LabelError(false_positive=err, false_negative=err, fp_point=point_out, fn_point=point_out,
                      accuracy_point=acc_out, source=f"majority of {votes}, one-coin accuracy draws")


def _accuracy_from_share(share: np.ndarray) -> np.ndarray:
    """a = (1 + √(2A − 1))/2 from the share A of agreeing vote pairs (½ when A ≤ ½), as
    ``pair_recall.worker_accuracy_from_agreement``."""
    return 0.5 + 0.5 * np.sqrt(np.clip(2.0 * share - 1.0, 0.0, None))


def label_error_from_vote_patterns(*, patterns: Mapping[tuple[int, int], float | np.ndarray], votes: int,
                                   draws: int, rng: np.random.Generator) -> LabelError | None:
    """Label error of the majority of ``votes`` from how often two votes on one document agree, with its uncertainty.

    ``patterns`` maps (relevant votes, total votes) to how many documents had that pattern (scalars, or arrays
    of one shape: one entry per simulated study).  Point: ``pair_recall.worker_accuracy_from_agreement``
    (a = (1 + √(2A − 1))/2, A the share of agreeing vote pairs).  Uncertainty: the Bayesian bootstrap over
    documents — documents of one pattern share one Gamma(count) weight, so A per draw is
    Σ G_p·agree_p / Σ G_p·pairs_p — turned into accuracy draws and then into fp = fn = P(the majority is
    wrong) (:func:`majority_false_positive_rate`).  None when no document has two votes.
    Example: three votes on each of 1,000 documents, 618 unanimous (workers at 0.85) → a ≈ 0.85 ± 0.007.
    """
    usable = [(r, t, np.asarray(c, dtype=float)) for (r, t), c in patterns.items() if t >= 2]
    if not usable:
        return None
    shape = np.broadcast_shapes(*(c.shape for _, _, c in usable))
    agree_sum = np.zeros(shape + (draws,))
    pair_sum = np.zeros(shape + (draws,))
    agree_pt = np.zeros(shape)
    pair_pt = np.zeros(shape)
    for r, t, count in usable:
        agree = r * (r - 1) / 2.0 + (t - r) * (t - r - 1) / 2.0
        pairs = t * (t - 1) / 2.0
        c = np.broadcast_to(count, shape)
        weight = rng.gamma(np.broadcast_to(np.maximum(c, 1e-12)[..., None], shape + (draws,)))
        weight = np.where(c[..., None] > 0, weight, 0.0)
        agree_sum += weight * agree
        pair_sum += weight * pairs
        agree_pt = agree_pt + c * agree
        pair_pt = pair_pt + c * pairs
    if np.any(pair_pt <= 0):
        return None
    accuracy = _accuracy_from_share(agree_sum / np.where(pair_sum > 0, pair_sum, 1.0))
    point = _accuracy_from_share(agree_pt / pair_pt)
    out = label_error_from_accuracy(accuracy_draws=accuracy, accuracy_point=point, votes=votes)
    return LabelError(out.false_positive, out.false_negative, out.fp_point, out.fn_point, out.accuracy_point,
                      source=f"majority of {votes}: one-coin accuracy from vote agreement, Bayesian bootstrap")


def label_error_from_votes(*, votes: list[tuple[int, int]] | tuple[tuple[int, int], ...], draws: int,
                           seed: int | None = None, majority_of: int | None = None) -> LabelError | None:
    """:func:`label_error_from_vote_patterns` from (relevant votes, total votes) per document.

    ``majority_of``: the number of votes whose majority made the labels (default: the largest total).
    None without two votes on any document.
    """
    patterns: dict[tuple[int, int], float] = {}
    for r, t in votes:
        patterns[(int(r), int(t))] = patterns.get((int(r), int(t)), 0.0) + 1.0
    totals = [t for _, t in patterns]
    if not totals:
        return None
    rng = np.random.default_rng(seed)
    return label_error_from_vote_patterns(patterns=patterns, votes=majority_of or max(totals), draws=draws, rng=rng)


def _rogan_gladen(q, fp, fn, *, truncate: bool = True):
    """π = (q + sp − 1)/(se + sp − 1) = (q − fp)/(1 − fp − fn), truncated to [0, 1] (Rogan & Gladen 1978).

    Where 1 − fp − fn ≤ 0 the labels carry no information on π; such a draw keeps q (no correction).
    ``truncate`` False: the linear estimate, for strata whose region total is truncated instead (``_draw``).
    """
    den = 1.0 - fp - fn
    with np.errstate(divide="ignore", invalid="ignore"):
        pi = np.where(den > 0, (q - fp) / np.where(den > 0, den, 1.0), q)
    return np.clip(pi, 0.0, 1.0) if truncate else pi


def _noisy_count_draws(*, size: int, judged: int, relevant: np.ndarray, prior: tuple[float, float],
                       rng: np.random.Generator, draws: int, error: LabelError, truncate: bool = True) -> np.ndarray:
    """T_h draws when the labels err: the label share q from its Beta posterior (as ``_count_draws_array``),
    π = Rogan–Gladen(q) per draw with that draw's (fp, fn), then T_h = |h|·π plus the finite-population noise
    of the documents' true labels, drawn as one normal (clipped to [0, |h|]): for the n judged ones, each
    labelled relevant is relevant with probability π·se/q and each labelled not relevant with π·fn/(1 − q)
    (mean n·π at q = k/n), and the |h| − n unjudged ones are Binomial(|h| − n, π).  One normal draw instead of
    three binomials keeps the report's recompute within its time (notes: ≤ 20% more)."""
    relevant = np.asarray(relevant, dtype=float)
    shape = relevant.shape + (draws,)
    if size == 0:
        return np.zeros(shape)
    if judged == 0:
        return np.full(shape, np.nan)
    a = (prior[0] + relevant)[..., None]
    b = (prior[1] + judged - relevant)[..., None]
    q = rng.beta(np.broadcast_to(np.maximum(a, 1e-12), shape), np.broadcast_to(np.maximum(b, 1e-12), shape))
    q = np.where(a <= 0, 0.0, np.where(b <= 0, 1.0, q))
    fn = error.false_negative
    pi = _rogan_gladen(q, error.false_positive, fn)
    k = relevant[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        ppv = np.clip(np.where(q > 0, pi * (1.0 - fn) / np.where(q > 0, q, 1.0), 0.0), 0.0, 1.0)
        miss = np.clip(np.where(q < 1, pi * fn / np.where(q < 1, 1.0 - q, 1.0), 0.0), 0.0, 1.0)
    variance = (k * ppv * (1.0 - ppv) + (judged - k) * miss * (1.0 - miss)
                + (size - judged) * pi * (1.0 - pi))
    if not truncate:  # a stratum of several: the linear Rogan–Gladen count; its region's sum is truncated
        linear = _rogan_gladen(q, error.false_positive, fn, truncate=False)
        raw: np.ndarray = size * linear + np.sqrt(variance) * rng.standard_normal(shape)
        return raw
    out: np.ndarray = np.clip(size * pi + np.sqrt(variance) * rng.standard_normal(shape), 0.0, float(size))
    return out


# =========================================================================== Monte Carlo core


def _ratio(num, den):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


# A region is a tuple of strata, each a simple random sample (size, judged, relevant) of its own; today's
# unstratified design is one stratum per region (:func:`_one_stratum`).  A region's count T_h is the sum of
# its strata's finite-population count draws (``stratified.stratified_design_recall``).
StratumCounts = tuple[int, int, "float | np.ndarray"]


def _one_stratum(sizes, judged, relevant) -> dict[str, tuple[StratumCounts, ...]]:
    return {h: ((int(sizes[h]), int(judged[h]), relevant[h]),) for h in REGIONS}


def _strata_shape(strata) -> tuple[int, ...]:
    shapes = [np.shape(rel) for h in REGIONS for _, _, rel in strata[h]]
    return np.broadcast_shapes(*shapes) if shapes else ()


# Where the region's Jeffreys prior is split over its strata (``_draw``): U, nearly empty, where S full priors
# add S half-documents of relevance; in A12, B1 and B2 (precisions 0.1–0.9) a tail stratum with a few per cent
# relevant and none found keeps the full prior (split, coverage of r2 at AUC 0.97, δ1 = 0.35 was 0.915).
_SPLIT_PRIOR_REGIONS = ("U",)


def _draw(*, strata, priors, rng, draws, label_error: LabelError | None = None,
          split_prior: bool = False, regions: tuple[str, ...] = REGIONS) -> dict[str, np.ndarray]:
    """Each region's count draws: the sum of its strata's (``priors[h]`` for every stratum of region h).

    ``split_prior`` (the Jeffreys posterior): in U (``_SPLIT_PRIOR_REGIONS``) the region's Beta(½, ½) prior is
    split over its strata in proportion to their sizes, Beta(½·w_s, ½·w_s) with w_s = |s|/|h|, so stratifying
    adds no prior mass:
    S strata each with a full Jeffreys prior put S half-documents' worth of relevance into every nearly
    empty stratum, which pushed T_U up and the recall's interval below the truth (coverage 0.78–0.86 at
    δ1 = 0.35, tests/estimation/stats/test_stratified_coverage.py).  One stratum: w = 1, today's prior.
    Confidence distributions (Clopper–Pearson) are exact per stratum and never split.  ``regions``: draw
    only these (the conservative bounds of r1 and r2 share A12's and U's draws, ``_design_recall``)."""
    shape = _strata_shape(strata)
    out = {}
    for h in regions:
        total = np.zeros(shape + (draws,))
        region_size = sum(int(st[0]) for st in strata[h])
        for size, judged, rel in strata[h]:
            prior = priors[h]
            if split_prior and h in _SPLIT_PRIOR_REGIONS and len(strata[h]) > 1 and region_size > 0:
                w = size / region_size
                prior = (prior[0] * w, prior[1] * w)
            if label_error is not None:
                total = total + _noisy_count_draws(size=int(size), judged=int(judged), relevant=rel,
                                                   prior=prior, rng=rng, draws=draws, error=label_error,
                                                   truncate=len(strata[h]) == 1)
            else:
                total = total + _count_draws_array(size=int(size), judged=int(judged), relevant=rel,
                                                   prior=prior, rng=rng, draws=draws)
        if label_error is not None and len(strata[h]) > 1:
            # Rogan–Gladen is linear: truncating each stratum at 0 would add S positive biases where U is nearly
            # empty (coverage 0.63–0.76 at δ1 = 0.35 with workers at 0.85); the region's total is truncated once
            total = np.clip(total, 0.0, float(region_size))
        out[h] = total
    return out


def _own(which: str) -> tuple[str, str]:
    """(own region, other region) of a classifier: r1 counts B1 as found and B2 as missed."""
    return ("B1", "B2") if which == "r1" else ("B2", "B1")


def _recall(c: Mapping[str, np.ndarray], which: str):
    own, other = _own(which)
    found = c["A12"] + c[own]
    return _ratio(found, found + c[other] + c["U"])


def _delta1(c: Mapping[str, np.ndarray]):
    t1, t2 = c["A12"] + c["B1"], c["A12"] + c["B2"]
    total = t1 + c["B2"] + c["U"]
    return _ratio(c["A12"] * total, t1 * t2)


def _conservative_priors(which: str) -> dict[str, tuple[float, float]]:
    own, other = _own(which)
    return {"A12": _CP_LOW, own: _CP_LOW, other: _CP_HIGH, "U": _CP_HIGH}


def _point_counts(*, strata, label_error: LabelError | None = None) -> dict[str, np.ndarray]:
    """Plug-in T_h: Σ over the region's strata of |h_s|·k_s/n_s (Horvitz–Thompson; Rogan–Gladen-corrected shares)."""
    shape = _strata_shape(strata)
    out = {}
    for h in REGIONS:
        total = np.zeros(shape)
        for size, judged, rel in strata[h]:
            k = np.asarray(rel, dtype=float)
            if size == 0:
                part = np.zeros(k.shape)
            elif judged == 0:
                part = np.full(k.shape, np.nan)
            elif label_error is not None:
                part = size * _rogan_gladen(k / judged, np.asarray(label_error.fp_point),
                                            np.asarray(label_error.fn_point), truncate=len(strata[h]) == 1)
            else:
                part = size * k / judged
            total = total + part
        if label_error is not None and len(strata[h]) > 1:
            total = np.clip(total, 0.0, float(sum(st[0] for st in strata[h])))
        out[h] = total
    return out


def _effective(label_error: LabelError | None) -> LabelError | None:
    """None for no correction: no label error given, or perfect labels (the plain estimate, draw for draw)."""
    return None if label_error is None or label_error.perfect else label_error


def _quantile(values: np.ndarray, q, *, fill: float | None = None) -> np.ndarray:
    """Quantile over the last axis; NaN draws (0/0) become ``fill`` (least favourable) or are skipped.

    ``q`` may be a sequence (one partition for all of them; the quantiles lead the result's axes).  Without
    NaN draws ``np.quantile`` gives what ``np.nanquantile`` would, without its per-row loop."""
    if fill is not None:
        return np.quantile(np.nan_to_num(values, nan=fill), q, axis=-1)
    if not np.isnan(values).any():
        return np.quantile(values, q, axis=-1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows (a region not judged) give NaN
        return np.nanquantile(values, q, axis=-1)


def _unknown(strata) -> bool:
    """A stratum with documents and none judged: its count, hence its region's, is unknown."""
    return any(size > 0 and judged == 0 for h in REGIONS for size, judged, _ in strata[h])


def design_based_recall_arrays(
    *,
    sizes: Mapping[str, int],
    judged: Mapping[str, int],
    relevant: Mapping[str, float | np.ndarray],
    which: str = "r1",
    confidence: float = 0.95,
    draws: int = 2_000,
    rng: np.random.Generator,
    label_error: LabelError | None = None,
) -> DesignBasedArrays:
    """Vectorised core of :func:`design_based_recall` for simulations and size searches.

    ``sizes``/``judged`` map each of "A12", "B1", "B2", "U" to |h| and n_h;
    ``relevant`` to the relevant counts found, scalars or arrays (one entry
    per simulated study, all of one shape).  Exactly the Monte Carlo of
    :func:`design_based_recall` (module docstring): Jeffreys percentiles for
    the interval, the one-sided bound and δ1; Clopper–Pearson confidence
    distributions for the conservative bound.  NaN where a region with
    documents has none judged.  ``label_error``: as in
    :func:`design_based_recall` (its draws of shape (draws,) or
    relevant.shape + (draws,), one accuracy posterior per study).
    """
    _check_mc(confidence=confidence, draws=draws)
    missing = set(REGIONS) - set(sizes) | set(REGIONS) - set(judged) | set(REGIONS) - set(relevant)
    if missing:
        raise ValueError(f"sizes, judged and relevant need the regions {REGIONS}; missing {sorted(missing)}")
    rel = {h: np.asarray(relevant[h], dtype=float) for h in REGIONS}
    return _recall_arrays(strata=_one_stratum(sizes, judged, rel), which=which, confidence=confidence, draws=draws,
                          rng=rng, label_error=label_error)


def _recall_arrays(*, strata, which: str, confidence: float, draws: int, rng: np.random.Generator,
                   label_error: LabelError | None) -> DesignBasedArrays:
    """The one Monte Carlo of :func:`design_based_recall_arrays` and ``stratified_design_recall_arrays``."""
    if which not in ("r1", "r2"):
        raise ValueError(f"which must be 'r1' or 'r2', got {which!r}")
    _check_mc(confidence=confidence, draws=draws)
    alpha = 1.0 - confidence
    error = _effective(label_error)
    point_counts = _point_counts(strata=strata, label_error=error)
    point = _recall(point_counts, which)
    delta_point = _delta1(point_counts)
    central = _draw(strata=strata, priors=dict.fromkeys(REGIONS, _JEFFREYS), rng=rng, draws=draws, label_error=error,
                    split_prior=True)
    r = _recall(central, which)
    low, high, lower_bound = _quantile(r, [alpha / 2.0, 1.0 - alpha / 2.0, alpha])
    delta = _delta1(central)
    delta_low, delta_high = _quantile(delta, [alpha / 2.0, 1.0 - alpha / 2.0])
    pushed = _draw(strata=strata, priors=_conservative_priors(which), rng=rng, draws=draws, label_error=error)
    conservative = _quantile(_recall(pushed, which), alpha, fill=0.0)
    if _unknown(strata):
        nan = np.full(np.shape(point), np.nan)
        return DesignBasedArrays(nan, nan, nan, nan, nan, nan, nan, nan)
    return DesignBasedArrays(point=point, low=low, high=high, lower_bound=lower_bound,
                             conservative_lower_bound=conservative, delta1_point=delta_point,
                             delta1_low=delta_low, delta1_high=delta_high)


def _cp_upper(*, found: float, judged: int, confidence: float) -> float:
    """Exact one-sided Clopper–Pearson upper bound on a proportion: Beta(k + 1, n − k) quantile; 1 if k = n."""
    if judged == 0:
        return math.nan
    if found >= judged:
        return 1.0
    return float(betaincinv(found + 1.0, judged - found, confidence))


# =========================================================================== the report


def _f(value) -> float | None:
    return _nan_to_none(float(value)) if value is not None else None


def design_based_recall(
    *,
    a12: RegionLike,
    b1: RegionLike,
    b2: RegionLike,
    u: RegionLike,
    confidence: float = 0.95,
    draws: int = DEFAULT_DRAWS,
    seed: int | None = None,
    label_error: LabelError | None = None,
) -> DesignBasedRecall:
    """Recall of C1 and C2 from samples of A12, B1, B2 and the complement U (ESTIMATION-NOTES §8).

    Each region is a simple random sample (size, judged, relevant) —
    :class:`pair_recall.RegionSample`, mapping or tuple; judged == size is a
    fully enumerated (exact) region.  r1 = (T12 + T_B1)/N, r2 = (T12 + T_B2)/N
    with N = T12 + T_B1 + T_B2 + T_U: no independence assumption.

    Returns per classifier the plug-in point, the two-sided Jeffreys Monte
    Carlo interval and one-sided lower bound (reports), and the conservative
    Clopper–Pearson lower bound (certification); the elusion rate T_U/|U|
    with the exact one-sided Clopper–Pearson upper bound (zero found in m →
    1 − (1 − c)^(1/m), about 3/m at 95%) and T_U's bound found + (|U| − m)·that;
    δ1 = T12·N/(T1·T2) (the sensitivity band's factor: pair estimate r1* =
    δ1·r1) with its interval; ``independence_rejected`` when δ1's interval
    excludes 1.

    Example (notes §2 worked example with a complement): |A12| = 5,000 with
    4,500 relevant, |B1| = 3,000 with 1,500, |B2| = 20,000 with 2,000, all
    enumerated, and 0 relevant in 3,000 judged of |U| = 972,000: r1 = 0.75
    (the pair's r1* = 0.692, δ1 = 0.923); T_U ≤ 969,000·0.000998 ≈ 967 at
    95%, so the conservative bound is 6,000/(8,000 + 967) = 0.669.

    ``label_error`` (notes §3): the relevant counts are labels that err (a majority of a few crowd workers);
    :class:`LabelError` holds draws of their false-positive rate fp = 1 − sp and false-negative rate
    fn = 1 − se (:func:`label_error_from_votes`: from the votes' agreement, with its uncertainty).  Every
    region's share is then corrected for misclassification by Rogan & Gladen (1978),
    π = (q + sp − 1)/(se + sp − 1), per Monte Carlo draw — q from the region's Beta posterior (Jeffreys, or
    the Clopper–Pearson distributions for the conservative bound), (fp, fn) from the label-error draws —
    and truncated to [0, 1]: at N's low prevalence a majority's false positives (0.061 of irrelevant documents
    for three workers at 0.85) outnumber the relevant documents, and uncorrected they pull recall to ≈ 0.13
    for a truth of 0.5 (tests/estimation/stats/test_design_based_coverage.py).  The point uses the plug-in
    (fp, fn); T_U's exact upper bound becomes |U|·CP(q)/(1 − fn) with fn at its ``confidence`` quantile
    (whatever fp, as :func:`complement_prevalence_upper_bound`).  Perfect labels (fp = fn = 0, accuracy 1)
    or None: today's estimate exactly, draw for draw.
    """
    _check_mc(confidence=confidence, draws=draws)
    regions = {"A12": as_region(a12, name="A12"), "B1": as_region(b1, name="B1"), "B2": as_region(b2, name="B2"),
               "U": as_region(u, name="U")}
    strata = {h: ((r.size, r.judged, np.float64(r.relevant)),) for h, r in regions.items()}
    summary = {h: {**r.as_dict(), "share": (r.relevant / r.judged) if r.judged else None} for h, r in regions.items()}
    return _design_recall(strata=strata, summary=summary, confidence=confidence, draws=draws, seed=seed,
                          label_error=label_error)


def _t_u_upper_draws(*, strata_u, confidence: float, rng: np.random.Generator, draws: int,
                     error: LabelError | None) -> float:
    """One-sided upper bound on T_U from several strata: the ``confidence`` quantile of
    Σ_s [k_s + (|s| − n_s)·q_s] with q_s ~ Beta(k_s + 1, n_s − k_s), each stratum's Clopper–Pearson upper
    confidence distribution (with label error: Σ_s |s|·min(1, q_s/(1 − fn)), fn per draw, whatever fp).
    With one stratum it is the exact bound that :func:`_design_recall` computes in closed form."""
    total = np.zeros(draws)
    fn = None if error is None else np.asarray(error.false_negative, dtype=float).reshape(-1)[:draws]
    for size, judged, rel in strata_u:
        if size == 0:
            continue
        k = float(rel)
        if k >= judged:
            q = np.ones(draws)
        else:
            q = rng.beta(k + 1.0, judged - k, size=draws)
        if fn is None:
            total = total + k + (size - judged) * q
        else:
            total = total + size * np.where(fn < 1.0, np.minimum(1.0, q / np.where(fn < 1.0, 1.0 - fn, 1.0)), 1.0)
    return float(np.quantile(total, confidence))


def _design_recall(*, strata, summary: dict, confidence: float, draws: int, seed: int | None,
                   label_error: LabelError | None) -> DesignBasedRecall:
    """The one report of :func:`design_based_recall` (one stratum per region) and
    ``stratified.stratified_design_recall`` (several): each region's T_h is the sum of its strata's draws."""
    _check_mc(confidence=confidence, draws=draws)
    regions = {h: RegionSample(size=int(sum(st[0] for st in strata[h])), judged=int(sum(st[1] for st in strata[h])),
                               relevant=float(sum(float(st[2]) for st in strata[h]))) for h in REGIONS}
    rng = np.random.default_rng(seed)
    alpha = 1.0 - confidence
    unknown = _unknown(strata)
    error = _effective(label_error)
    if error is not None and (np.shape(error.false_positive)[-1:] != (draws,)
                              or np.shape(error.false_negative)[-1:] != (draws,)):
        raise ValueError(f"label_error needs {draws} draws of fp and fn")

    point_counts = _point_counts(strata=strata, label_error=error)
    central = _draw(strata=strata, priors=dict.fromkeys(REGIONS, _JEFFREYS), rng=rng, draws=draws, label_error=error,
                    split_prior=True)

    # The conservative bounds of r1 and r2 push A12 down and U up alike (``_conservative_priors``): one draw
    # of those two regions serves both bounds (each bound's draws keep their distribution; only B1 and B2
    # differ between them).
    shared = _draw(strata=strata, priors=_conservative_priors("r1"), rng=rng, draws=draws, label_error=error,
                   regions=("A12", "U"))

    def recall(which: str) -> DesignRecall:
        own, other = _own(which)
        r = _recall(central, which)
        pushed = {**shared, **_draw(strata=strata, priors=_conservative_priors(which), rng=rng, draws=draws,
                                    label_error=error, regions=("B1", "B2"))}
        pair = _ratio(point_counts["A12"], point_counts["A12"] + point_counts[other])
        if unknown:
            return DesignRecall(None, None, None, None, None, _f(pair), "not available: a region was not judged")
        low, high, lower_bound = _quantile(r, [alpha / 2.0, 1.0 - alpha / 2.0, alpha])
        return DesignRecall(
            point=_f(_recall(point_counts, which)),
            low=_f(low), high=_f(high),
            lower_bound=_f(lower_bound),
            conservative_lower_bound=_f(_quantile(_recall(pushed, which), alpha, fill=0.0)),
            pair_estimand=_f(pair),
            method="design-based: Jeffreys posterior Monte Carlo (interval, lower_bound); Clopper–Pearson "
                   "confidence distributions, exact on T_U (conservative_lower_bound)" + _CORRECTED_NOTE * (error is not None),
        )

    r1, r2 = recall("r1"), recall("r2")

    su = regions["U"]
    strata_u = [st for st in strata["U"] if st[0] > 0]
    u_unknown = any(judged == 0 for _, judged, _ in strata_u)
    total_draws = central["A12"] + central["B1"] + central["B2"] + central["U"]
    total_point = sum(point_counts[h] for h in REGIONS)
    relevant_total = DesignRecall(
        point=_f(total_point), **dict(zip(("low", "high", "lower_bound"),
                                          map(_f, _quantile(total_draws, [alpha / 2.0, 1 - alpha / 2.0, alpha])),
                                          strict=True)),
        conservative_lower_bound=None, pair_estimand=None,
        method="design-based: Jeffreys posterior Monte Carlo of T12 + T_B1 + T_B2 + T_U" + _CORRECTED_NOTE * (error is not None),
    ) if not unknown else DesignRecall(None, None, None, None, None, None, "not available: a region was not judged")

    if su.size == 0:
        elusion = ElusionEstimate(None, None, None, None, 0.0, 0)
        t_u = RelevantInComplement(0.0, 0.0, 0.0, 0.0)
    elif su.judged == 0 or u_unknown:
        elusion = ElusionEstimate(None, None, None, None, float(su.relevant), su.judged)
        t_u = RelevantInComplement(None, None, None, None)
    else:
        share_draws = central["U"] / su.size
        single = len(strata_u) == 1
        if not single:
            t_u_upper = _t_u_upper_draws(strata_u=strata_u, confidence=confidence, rng=rng, draws=draws, error=error)
        elif error is None:
            cp = _cp_upper(found=su.relevant, judged=su.judged, confidence=confidence)
            t_u_upper = su.relevant + (su.size - su.judged) * cp
        else:  # the labels of the judged documents err too: the bound covers all of U
            cp = _cp_upper(found=su.relevant, judged=su.judged, confidence=confidence)
            fn_high = float(np.quantile(error.false_negative, confidence))
            t_u_upper = su.size * min(1.0, cp / (1.0 - fn_high)) if fn_high < 1.0 else float(su.size)
        elusion = ElusionEstimate(
            point=_f(point_counts["U"] / su.size) if (error is not None or not single) else su.relevant / su.judged,
            low=_f(_quantile(share_draws, alpha / 2.0)),
            high=_f(_quantile(share_draws, 1.0 - alpha / 2.0)), upper_bound=_f(t_u_upper / su.size),
            found=float(su.relevant), judged=su.judged,
        )
        t_u = RelevantInComplement(
            point=_f(point_counts["U"]), low=_f(_quantile(central["U"], alpha / 2.0)),
            high=_f(_quantile(central["U"], 1.0 - alpha / 2.0)), upper_bound=_f(t_u_upper),
        )

    delta_draws = _delta1(central)
    d_low, d_high = map(_f, _quantile(delta_draws, [alpha / 2.0, 1.0 - alpha / 2.0]))
    rejected = (not unknown) and d_low is not None and d_high is not None and (d_low > 1.0 or d_high < 1.0)
    delta1 = DependenceEstimate(point=None if unknown else _f(_delta1(point_counts)), low=None if unknown else d_low,
                                high=None if unknown else d_high, independence_rejected=bool(rejected))

    diagnostics = _diagnose(regions=regions, r1=r1, r2=r2, delta1=delta1, elusion=elusion, t_u=t_u,
                            confidence=confidence, strata=strata)
    return DesignBasedRecall(confidence=confidence, draws=int(draws), seed=seed, regions=summary, r1=r1, r2=r2,
                             elusion=elusion, t_u=t_u, relevant_total=relevant_total, delta1=delta1,
                             independence_rejected=bool(rejected), diagnostics=tuple(diagnostics))


_TEXT = {"A12": "A12 (retrieved by both)", "B1": "B1 (C1 only)", "B2": "B2 (C2 only)", "U": "U (retrieved by neither)"}


def _diagnose(*, regions, r1, r2, delta1, elusion, t_u, confidence, strata) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for name, region in regions.items():
        if region.size > 0 and region.judged == 0:
            out.append(Diagnostic("unjudged_region", "error",
                f"No document of region {_TEXT[name]} has been judged yet; the design-based recall needs a sample of every region."))
        elif any(size > 0 and judged == 0 for size, judged, _ in strata[name]):
            out.append(Diagnostic("unjudged_stratum", "error",
                f"A score stratum of region {_TEXT[name]} has documents but none judged yet; the design-based recall "
                f"needs a sample of every stratum."))
    if delta1.independence_rejected:
        direction = "too high" if delta1.low > 1.0 else "too low"
        out.append(Diagnostic("independence_rejected", "warning",
            f"The complement sample shows that the classifiers are not independent: δ1 = {delta1.point:.2f} "
            f"[{delta1.low:.2f}, {delta1.high:.2f}] excludes 1, so the pair's recall figures are {direction}. "
            f"Use the design-based recall."))
    if elusion.judged > 0 and elusion.found == 0 and t_u.upper_bound is not None:
        out.append(Diagnostic("none_found_in_complement", "info",
            f"None of the {elusion.judged} judged documents that neither classifier retrieved was relevant; at "
            f"{confidence:.0%} confidence up to {t_u.upper_bound:,.0f} relevant documents may still be there "
            + (f"(the exact bound, about {-math.log(1.0 - confidence):.1f}/{elusion.judged} of the region)."
               if sum(1 for st in strata["U"] if st[0] > 0) <= 1 else
               "(each score stratum's Clopper–Pearson upper confidence distribution, summed).")))
    return out


# =========================================================================== planning


@dataclass(frozen=True)
class PairCorpus:
    """A corpus seen through a pair with a known dependence: region sizes and relevant counts."""

    sizes: dict
    relevant: dict
    recall1: float
    recall2: float
    delta1: float

    @property
    def prevalence_u(self) -> float:
        return self.relevant["U"] / self.sizes["U"] if self.sizes["U"] else 0.0

    def as_dict(self) -> dict:
        return jsonable(self)


def dependent_pair_corpus(
    *,
    relevant: int,
    recall1: float,
    recall2: float,
    delta1: float,
    corpus_size: int,
    precision_a12: float = 0.9,
    precision_b1: float = 0.5,
    precision_b2: float = 0.5,
) -> PairCorpus:
    """A population with recalls r1, r2 and dependence δ1 (= T12·N/(T1·T2)): T12 = δ1·r1·r2·N.

    T_B1 = r1·N − T12, T_B2 = r2·N − T12, T_U = N − T1 − T2 + T12; each
    retrieved region padded with non-relevant documents to its precision,
    U is the rest of the corpus.  Example: N = 10,000, r1 = r2 = 0.7, δ1 = 1
    → T12 = 4,900, T_B1 = T_B2 = 2,100, T_U = 900 (the union finds 91%).
    """
    n = int(relevant)
    t12 = int(round(delta1 * recall1 * recall2 * n))
    tb1, tb2 = int(round(recall1 * n)) - t12, int(round(recall2 * n)) - t12
    tu = n - t12 - tb1 - tb2
    if min(t12, tb1, tb2, tu) < 0:
        raise ValueError(f"no corpus has r1 = {recall1}, r2 = {recall2}, δ1 = {delta1}: a region count is negative")

    def size(count: int, precision: float) -> int:
        return max(count, int(round(count / precision))) if count else 0

    sizes = {"A12": size(t12, precision_a12), "B1": size(tb1, precision_b1), "B2": size(tb2, precision_b2)}
    sizes["U"] = int(corpus_size) - sum(sizes.values())
    if sizes["U"] < tu:
        raise ValueError("corpus_size is too small for these regions")
    counts = {"A12": t12, "B1": tb1, "B2": tb2, "U": tu}
    return PairCorpus(sizes=sizes, relevant=counts, recall1=(t12 + tb1) / n, recall2=(t12 + tb2) / n,
                      delta1=t12 * n / ((t12 + tb1) * (t12 + tb2)))


@dataclass(frozen=True)
class ComplementSampleSize:
    """Result of :func:`complement_sample_size`."""

    judged_u: int | None
    feasible: bool
    truth: float
    planned_lower_bound: float | None
    margin: float
    expected_found_in_u: float | None
    reason: str

    def as_dict(self) -> dict:
        return jsonable(self)


@dataclass(frozen=True)
class DesignBasedPlan:
    """Result of :func:`design_based_sample_plan`: judged documents per region."""

    judged: dict
    total: int
    truth: float
    planned_lower_bound: float
    margin: float

    def as_dict(self) -> dict:
        return jsonable(self)


def _planned_bound(*, sizes, precisions, judged, which, confidence, draws, seed) -> float:
    """The conservative lower bound a sample of typical outcome gets: relevant = n_h·p_h (fractional)."""
    relevant = {h: np.float64(min(judged[h], sizes[h]) * precisions[h]) for h in REGIONS}
    result = design_based_recall_arrays(sizes=sizes, judged={h: min(judged[h], sizes[h]) for h in REGIONS},
                                        relevant=relevant, which=which, confidence=confidence, draws=draws,
                                        rng=np.random.default_rng(seed))
    return float(result.conservative_lower_bound)


def _check_plan(*, sizes, precisions, margin) -> float:
    for h in REGIONS:
        if sizes[h] < 0 or int(sizes[h]) != sizes[h]:
            raise ValueError(f"size of {h} must be a whole number ≥ 0, got {sizes[h]!r}")
        if not 0.0 <= precisions[h] <= 1.0:
            raise ValueError(f"the relevant share of {h} must be in [0, 1], got {precisions[h]!r}")
    if not 0.0 < margin < 1.0:
        raise ValueError(f"margin must be in (0, 1), got {margin!r}")
    return float(sum(sizes[h] * precisions[h] for h in REGIONS))


def complement_sample_size(
    *,
    size_a12: int, precision_a12: float, judged_a12: int,
    size_b1: int, precision_b1: float, judged_b1: int,
    size_b2: int, precision_b2: float, judged_b2: int,
    size_u: int, prevalence_u: float,
    which: str = "r1",
    margin: float = 0.10,
    confidence: float = 0.95,
    draws: int = 4_000,
    seed: int = 0,
    max_judged_u: int | None = None,
) -> ComplementSampleSize:
    """How many documents of U to judge so the design-based bound is within ``margin`` of the truth.

    At the planned shares (precisions of A12, B1, B2 and the prevalence in
    U) and the planned samples of A12, B1, B2, the smallest m such that the
    conservative one-sided lower bound of a typical sample (relevant = n·p
    in every region) is at least truth − margin; found by bisection with
    common random numbers (``seed``).  At low prevalence the exact bound on
    T_U dominates: with zero expected found the bound is about 3|U|/m.
    Infeasible (``feasible`` False) when even judging all of U would not do:
    the other regions' samples are then too small.  The margin used (and
    returned) is never wider than half the planned recall: a bound of zero
    would otherwise "reach" it at a low recall (notes §9's 6 documents).

    Size U from a conservative prior, not from the pair's own figures (notes
    §9): :func:`complement_prior_prevalences` and :func:`complement_sample_size_prior`.

    Example (bench_design_based.py): notes §2's pair (|A12| = 5,000, p 0.9,
    |B2| = 20,000, p 0.1) with |B1| = 3,000 at 0.5 and |U| = 972,000 at
    prevalence 0.000686, A12/B1/B2 judged 86/86/774: m = 3,276 (2.25
    relevant expected among them; planned bound 0.592 against r1 = 0.692).
    """
    sizes = {"A12": size_a12, "B1": size_b1, "B2": size_b2, "U": size_u}
    precisions = {"A12": precision_a12, "B1": precision_b1, "B2": precision_b2, "U": prevalence_u}
    total = _check_plan(sizes=sizes, precisions=precisions, margin=margin)
    if which not in ("r1", "r2"):
        raise ValueError(f"which must be 'r1' or 'r2', got {which!r}")
    own, _ = _own(which)
    truth = (sizes["A12"] * precisions["A12"] + sizes[own] * precisions[own]) / total if total else math.nan
    fixed = {"A12": judged_a12, "B1": judged_b1, "B2": judged_b2}

    def bound(m: int) -> float:
        return _planned_bound(sizes=sizes, precisions=precisions, judged={**fixed, "U": m}, which=which,
                              confidence=confidence, draws=draws, seed=seed)

    top = size_u if max_judged_u is None else min(size_u, max_judged_u)
    if not math.isnan(truth):
        # A margin wider than half the recall is met by a bound near 0 (6 documents of 21,115 "reached" it
        # at a planned recall of 0.05, notes §9): the bound must keep at least half the recall.
        margin = min(margin, truth / 2.0) if truth > 0 else margin
    if size_u == 0:
        b = bound(0)
        ok = truth - b <= margin
        return ComplementSampleSize(0, ok, truth, b, margin, 0.0, "U is empty: nothing to judge")
    best = bound(top)
    if truth - best > margin:
        return ComplementSampleSize(None, False, truth, best, margin, None,
            f"even {top:,} judged documents of U leave the bound {best:.3f} more than {margin:g} below the planned "
            f"recall {truth:.3f}: judge more of A12, B1 and B2")
    lo, hi = 0, top  # bound(lo) fails (or lo = 0), bound(hi) succeeds
    while hi - lo > max(1, hi // 200):
        mid = (lo + hi) // 2
        if mid > 0 and truth - bound(mid) <= margin:
            hi = mid
        else:
            lo = mid
    return ComplementSampleSize(hi, True, truth, bound(hi), margin, hi * prevalence_u,
                                "smallest m (to 0.5%) whose typical conservative bound is within the margin")


# The prior on what N (= U) may hold, as shares x = T_U/T_P of the relevant documents the pair found in
# A12, B1 and B2 together (T_P).  Notes §9: size N "from a conservative prior on what U may hold, never from
# the pair's own recall".  x up to 1 (U holding as many relevant documents as the pair found: the union's
# recall as low as 0.5, below every pair of notes §8–§9, where the δ1 = 0.35 pair's own recall was a third
# of the truth); 1/3 because the delta-method standard error of r from U's sample,
# sd(r̂) ∝ √x/(1 + x)² · 1/√m at fixed T_P and |U|, is largest there (d/dx = 0 at x = 1/3), so the largest
# of x's plans is the size that reaches the margin whatever U holds in [0.1·T_P, T_P]; 0.1 for the exact
# bound of a nearly empty U (about 3|U|/m, notes §8).
COMPLEMENT_PRIOR_SHARES = (0.1, 1.0 / 3.0, 1.0)


def complement_prior_prevalences(*, pair_relevant: float, size_u: int,
                                 shares: tuple[float, ...] = COMPLEMENT_PRIOR_SHARES) -> tuple[float, ...]:
    """N's prevalences to plan for before N has a pilot: x·T_P/|U| for x in ``shares`` (capped at 1).

    ``pair_relevant`` = T_P = T12 + T_B1 + T_B2, the relevant documents the pair's regions hold (from their
    precision guesses: no recall and no dependence enters).  See ``COMPLEMENT_PRIOR_SHARES`` for why these
    shares.  Example: T_P = 1,000 in the pair, |U| = 20,000 → (0.005, 0.0167, 0.05).
    """
    if size_u <= 0 or pair_relevant <= 0:
        return (0.0,)
    return tuple(min(1.0, x * pair_relevant / size_u) for x in shares)


@dataclass(frozen=True)
class ComplementPriorSize:
    """Result of :func:`complement_sample_size_prior`: the largest plan over the prevalences considered."""

    judged_u: int | None
    feasible: bool
    prevalence_u: float  # the prevalence whose plan is the largest (or the first infeasible one)
    sized: ComplementSampleSize  # that plan
    per_prevalence: tuple[tuple[float, int | None], ...]  # (prevalence, judged_u) for every prevalence

    def as_dict(self) -> dict:
        return jsonable(self)


def complement_sample_size_prior(*, prevalences: tuple[float, ...], **plan) -> ComplementPriorSize:
    """:func:`complement_sample_size` at each prevalence of U in ``prevalences``; the largest m is the plan.

    Notes §9: the size of U must not rest on the figure it checks.  ``prevalences`` is a prior range
    (:func:`complement_prior_prevalences` for a first stage; for top-ups, the range N's own judged pilot
    allows).  Infeasible when any prevalence of the range is: no size of U reaches the margin there.
    Example (bench_design_based.py): notes §2's worked pair with |B1| = 3,000 at 0.5 and |U| = 972,000,
    T_P = 6,000 (x = 0.1, 1/3, 1), A12/B1/B2 judged 300/300/400: see the bench's output.
    """
    if not prevalences:
        raise ValueError("prevalences must name at least one prevalence of U")
    results = [(p, complement_sample_size(prevalence_u=float(p), **plan)) for p in prevalences]
    per = tuple((float(p), r.judged_u) for p, r in results)
    infeasible = [(p, r) for p, r in results if not r.feasible or r.judged_u is None]
    if infeasible:
        p, r = infeasible[0]
        return ComplementPriorSize(None, False, float(p), r, per)
    p, r = max(results, key=lambda pr: (pr[1].judged_u or 0, pr[0]))
    return ComplementPriorSize(r.judged_u, True, float(p), r, per)


def design_based_sample_plan(
    *,
    size_a12: int, precision_a12: float,
    size_b1: int, precision_b1: float,
    size_b2: int, precision_b2: float,
    size_u: int, prevalence_u: float,
    which: str = "r1",
    margin: float = 0.10,
    confidence: float = 0.95,
    draws: int = 4_000,
    seed: int = 0,
    min_per_region: int = 30,
) -> DesignBasedPlan:
    """Judged documents in all four regions for a design-based bound within ``margin`` of the truth.

    Shape: Neyman allocation for the delta-method variance of r = T_own/N,
    n_h ∝ |∂r/∂T_h|·|h|·√(p_h(1 − p_h)) with ∂r/∂T_h = (1 − r)/N for A12 and
    the own region and −r/N for the other region and U (notes §2's rule
    generalised to four regions), at least ``min_per_region`` per non-empty
    region, at most |h|.  Scale: the smallest total whose typical
    conservative bound (as in :func:`complement_sample_size`) is within the
    margin, by bisection.  Example (bench_design_based.py, ρ = 1% of
    1,000,000, r1 = r2 = 0.7, union finding 91%): A12 72, B1 93, B2 216,
    U 3,054 — 3,435 documents in all, 0.69 × 50/ρ (uniform: ~400/ρ = 40,000).
    The plan is for the typical outcome: in 400 simulated studies at it the
    bound was within the margin 57% of the time (median shortfall 0.093).
    """
    sizes = {"A12": size_a12, "B1": size_b1, "B2": size_b2, "U": size_u}
    precisions = {"A12": precision_a12, "B1": precision_b1, "B2": precision_b2, "U": prevalence_u}
    total = _check_plan(sizes=sizes, precisions=precisions, margin=margin)
    if which not in ("r1", "r2"):
        raise ValueError(f"which must be 'r1' or 'r2', got {which!r}")
    own, other = _own(which)
    truth = (sizes["A12"] * precisions["A12"] + sizes[own] * precisions[own]) / total
    slope = {"A12": 1.0 - truth, own: 1.0 - truth, other: truth, "U": truth}
    weight = {h: slope[h] * sizes[h] * math.sqrt(precisions[h] * (1.0 - precisions[h])) for h in REGIONS}
    weight_sum = sum(weight.values()) or 1.0

    def allocation(scale: float) -> dict[str, int]:
        return {h: 0 if sizes[h] == 0 else min(sizes[h], max(min_per_region, math.ceil(scale * weight[h] / weight_sum)))
                for h in REGIONS}

    def bound(scale: float) -> float:
        return _planned_bound(sizes=sizes, precisions=precisions, judged=allocation(scale), which=which,
                              confidence=confidence, draws=draws, seed=seed)

    hi = float(sum(sizes.values()))
    if truth - bound(hi) > margin:
        raise ValueError("even judging every document does not reach the margin (check the inputs)")
    lo = 0.0
    while hi - lo > max(1.0, 0.005 * hi):
        mid = (lo + hi) / 2.0
        if truth - bound(mid) <= margin:
            hi = mid
        else:
            lo = mid
    judged = allocation(hi)
    return DesignBasedPlan(judged=judged, total=int(sum(judged.values())), truth=truth,
                           planned_lower_bound=bound(hi), margin=margin)



# --------------------------------------------------------------------------
# Label noise in the complement (notes §3: at low prevalence the crowd's errors exceed the effect)
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class ComplementNoiseFloor:
    """Can the complement sample's relevant count be told apart from judging errors, and what does it bound?
    See :func:`complement_noise_floor`."""

    judged: int
    majority_relevant: int
    worker_accuracy: float
    false_positive_rate: float  # P(a majority of the votes says relevant | the document is not relevant)
    expected_false_positives: float  # judged × false_positive_rate: what errors alone would produce
    p_value: float  # P(Binomial(judged, false_positive_rate) ≥ majority_relevant); 1 when nothing was found
    noise_limited: bool  # something was found and it is within what judging errors alone produce
    false_negative_rate: float = 0.0  # P(a majority says not relevant | the document is relevant)
    confidence: float = 0.95
    found_none: bool = False  # no judged document was majority-relevant: the sample is a bound, not noise
    prevalence_upper_bound: float | None = None  # one-sided upper bound on N's share of relevant documents
    relevant_upper_bound: float | None = None  # size × prevalence_upper_bound (None without the size of N)
    size: int | None = None  # |N|, when given

    def as_dict(self) -> dict:
        return jsonable(self)


def majority_false_positive_rate(*, accuracy: float, votes: int = 3) -> float:
    """P(a strict majority of ``votes`` independent workers of accuracy ``accuracy`` says relevant | not relevant).

    Notes §3: three workers at 0.8 → 0.104, at 0.9 → 0.028.  Symmetric (one-coin) workers: the same number is
    the majority's false-negative rate, P(a majority says not relevant | relevant).
    """
    if not 0.0 <= accuracy <= 1.0:
        raise ValueError(f"accuracy must lie in [0, 1] (got {accuracy!r})")
    if votes < 1:
        raise ValueError(f"votes must be at least 1 (got {votes!r})")

    need = votes // 2 + 1
    return float(binom.sf(need - 1, votes, 1.0 - accuracy))


def complement_prevalence_upper_bound(*, judged: int, majority_relevant: int, false_negative_rate: float,
                                      confidence: float = 0.95) -> float:
    """Exact one-sided upper bound on N's prevalence π from majority labels that miss relevant documents.

    The majority-relevant rate observed is q = π(1 − fn) + (1 − π)fp ≥ π(1 − fn), so with q_upper the
    Clopper–Pearson one-sided upper bound on q (k of m → Beta(k + 1, m − k) quantile; 0 of m →
    1 − (1 − c)^(1/m) ≈ 3/m at 95%), π ≤ q_upper/(1 − fn) at confidence c, whatever fp (dropping the
    false positives only widens it).  Perfect workers (fn = 0): the plain Clopper–Pearson bound.
    Example: 0 of 3,998 at accuracy 1 → 0.000749 (≈ 2.996/3,998); at 0.85 (fn = 0.061) → 0.000798.
    """
    if judged <= 0 or not 0 <= majority_relevant <= judged:
        raise ValueError(f"need 0 ≤ majority_relevant ≤ judged and judged > 0 (got {majority_relevant!r} of {judged!r})")
    if not 0.0 <= false_negative_rate < 1.0:
        raise ValueError(f"false_negative_rate must lie in [0, 1) (got {false_negative_rate!r})")
    q_upper = _cp_upper(found=majority_relevant, judged=judged, confidence=confidence)
    return min(1.0, q_upper / (1.0 - false_negative_rate))


def complement_noise_floor(*, judged: int, majority_relevant: int, worker_accuracy: float, votes: int = 3,
                           alpha: float = 0.05, size: int | None = None) -> ComplementNoiseFloor:
    """Is the complement sample's count of majority-relevant documents above what judging errors produce,
    and how many relevant documents can N hold at most?

    Notes §3, §8 and §9.  N, the documents neither classifier retrieved, holds few relevant documents, so
    a crowd's false positives (0.028 of irrelevant documents for three workers at 0.9) can be as many
    as the relevant documents themselves.  The test: if no document of the sample were relevant, the
    majority-relevant count would be Binomial(judged, fp) with fp = :func:`majority_false_positive_rate`;
    ``noise_limited`` when something was found (majority_relevant > 0) and the count is not significantly
    above that (one-sided p > alpha).  Then the sample cannot say how many relevant documents the
    classifiers missed: its elusion rate, design-based recall and dependence test must not be read as
    evidence (the report says so).

    Zero found is evidence (notes §9): errors cannot explain a count of nothing, so ``noise_limited`` is
    False and ``found_none`` True; the sample bounds N.  ``prevalence_upper_bound`` is
    :func:`complement_prevalence_upper_bound` at confidence 1 − alpha with fn the majority's false-negative
    rate at ``worker_accuracy`` (the crowd missing relevant documents widens it); ``relevant_upper_bound``
    = ``size`` × that when |N| is given.  Both are also given when something was found.

    Example (the demo topic, issue 11 review): 13 of 400 majority-relevant at accuracy 0.894
    → fp = 0.0315, 12.6 expected from errors alone, p = 0.50: noise-limited (the truth was 16 relevant
    among 19,758, about 0.3 expected in the sample).  Reuters sugar: 0 of 3,998 of |N| = 21,115 with
    perfect workers → not noise-limited; at most 0.000749·21,115 ≈ 15.8 relevant documents in N (95%).
    """
    if judged < 0 or not 0 <= majority_relevant <= judged:
        raise ValueError(f"need 0 ≤ majority_relevant ≤ judged (got {majority_relevant!r} of {judged!r})")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie in (0, 1) (got {alpha!r})")
    if size is not None and size < judged:
        raise ValueError(f"size of N ({size!r}) is below the judged documents ({judged!r})")

    fp = majority_false_positive_rate(accuracy=worker_accuracy, votes=votes)
    fn = fp  # symmetric (one-coin) workers
    p_value = float(binom.sf(majority_relevant - 1, judged, fp)) if majority_relevant > 0 else 1.0
    found_none = judged > 0 and majority_relevant == 0
    upper = (complement_prevalence_upper_bound(judged=judged, majority_relevant=majority_relevant,
                                               false_negative_rate=fn, confidence=1.0 - alpha)
             if judged > 0 and fn < 1.0 else None)
    return ComplementNoiseFloor(judged=int(judged), majority_relevant=int(majority_relevant),
                                worker_accuracy=float(worker_accuracy), false_positive_rate=fp,
                                expected_false_positives=judged * fp, p_value=p_value,
                                noise_limited=majority_relevant > 0 and p_value > alpha,
                                false_negative_rate=fn, confidence=1.0 - alpha, found_none=found_none,
                                prevalence_upper_bound=upper,
                                relevant_upper_bound=None if upper is None or size is None else upper * size,
                                size=None if size is None else int(size))
