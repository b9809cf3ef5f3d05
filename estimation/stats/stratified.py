"""Score-stratified design-based recall of a pair: the headline without assumptions, made cheap.

ESTIMATION-NOTES §8 (the design-based recall of a pair with a complement sample) and §3 (label error), with
every region of ``design_based`` — A12, B1, B2 and U (the product's N, retrieved by neither) — split into
strata by a scorer's scores (any scores classifier or a trained model).  Each stratum s is a simple random
sample without replacement of n_s of its |s| documents, so its inclusion probability is n_s/|s| and the
region's count is the stratified (Horvitz–Thompson) sum

    T_h = Σ_{s ∈ h} T_s,      T̂_s = |s|·k_s/n_s                     (Cochran 1977, ch. 5),

and r1 = (T12 + T_B1)/N, r2 = (T12 + T_B2)/N as in ``design_based`` — no independence assumption, and none
on the scorer: a bad scorer makes the strata useless, never the interval wrong (the design, not the score,
carries the inference).  This is the plain stratified estimator, not a prediction-powered one: the scores
only draw the strata and the allocation, as in stratified prediction-powered inference (Fisch et al.
2024, "Stratified Prediction-Powered Inference for Hybrid Language Model Evaluation"), active statistical
inference (Zrnic & Candès 2024, whose optimal sampling rule for a binary label, ∝ √(p(1 − p)) of the
model's probability, is what Neyman allocation over score strata approximates) and importance-sampled
validation of rare categories (Poms et al. 2021, "Low-Shot Validation: Active Importance Sampling for
Estimating Classifier Performance on Rare Categories"): sampling U where the scorer puts the relevant
documents is what cuts the ~42/ρ cost of a uniform sample of U.

Intervals.  Never a normal approximation on small counts: each stratum has its own finite-population
count distribution, ``design_based``'s per region — the posterior predictive k_s + Binomial(|s| − n_s, p_s),
p_s ~ Beta(c_s + k_s, c_s + n_s − k_s) with c_s = ½ in A12, B1, B2 and c_s = ½·|s|/|U| in U (U's Jeffreys
prior split over its strata by size, so stratifying adds no prior mass: a full Jeffreys prior in each of S
nearly empty strata of U pushed T_U up and the interval below the truth, coverage 0.78–0.86 at δ1 = 0.35)
for the report's interval, and for the certification's conservative bound each stratum's Clopper–Pearson confidence distribution pushed the way
that lowers the classifier's recall (Beta(k, n − k + 1) in A12 and the own region, Beta(k + 1, n − k) in
the other region and U).  T_h per Monte Carlo draw is the sum of its strata's draws; an enumerated
stratum (n_s = |s|) is exact.  Zero found in a stratum is evidence: its confidence distribution bounds it
(≈ 3/n_s of it at 95%).  T_U's reported upper bound is, with one stratum, the exact Clopper–Pearson bound
of ``design_based``; with several, the ``confidence`` quantile of Σ_s [k_s + (|s| − n_s)·q_s] with
q_s ~ Beta(k_s + 1, n_s − k_s) (each stratum's upper confidence distribution).  Label error (notes §3):
Rogan–Gladen per stratum per draw, as ``design_based`` does per region, linear per stratum and truncated to
[0, |h|] once per region (truncating each stratum at 0 adds S positive biases in a nearly empty U: coverage
0.63–0.76 at δ1 = 0.35 with three workers at 0.85 before).  One Monte Carlo serves both
modules (``design_based._design_recall``): with one stratum per region this *is*
:func:`~estimation.stats.design_based.design_based_recall`, draw for draw.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from .design_based import (
    _SPLIT_PRIOR_REGIONS,
    DEFAULT_DRAWS,
    REGIONS,
    DesignBasedArrays,
    DesignBasedRecall,
    LabelError,
    _design_recall,
    _point_counts,
    _recall_arrays,
    label_error_from_vote_patterns,
)
from .proportions import jsonable

__all__ = [
    "SCORE_STRATA_METHODS",
    "Stratum",
    "StratumAllocation",
    "StratumGuess",
    "StratifiedPlan",
    "ScoredStratum",
    "StagedOutcome",
    "assign_score_strata",
    "binormal_shift",
    "scored_pair_strata",
    "simulate_staged_plan",
    "score_strata_bounds",
    "stratified_design_recall",
    "stratified_design_recall_arrays",
    "stratified_sample_plan",
]


@dataclass(frozen=True)
class Stratum:
    """One score stratum of one region: a simple random sample without replacement of ``judged`` of its
    ``size`` documents, ``relevant`` of them judged relevant (majority labels; may be fractional).
    ``judged == size``: the stratum is enumerated (exact).  ``key`` names it (e.g. "score:3"), unique
    within its region.  For :func:`stratified_design_recall_arrays` ``relevant`` may be an array (one
    entry per simulated study)."""

    region: str  # "A12", "B1", "B2" or "U"
    size: int  # documents in the stratum (>= 0)
    judged: int  # simple random sample without replacement from it (0..size; == size: enumerated)
    relevant: float | np.ndarray  # judged relevant (majority labels); an array only for the _arrays function
    key: str = ""  # the stratum's name, e.g. "score:3"; unique within a region

    def as_dict(self) -> dict:
        return jsonable(self)


def _group(strata: Sequence[Stratum]) -> dict[str, tuple[tuple[int, int, float | np.ndarray], ...]]:
    """Validate and group the strata by region (in REGIONS order, each region's strata in the order given)."""
    grouped: dict[str, list[tuple[int, int, float | np.ndarray]]] = {h: [] for h in REGIONS}
    keys: dict[str, set[str]] = {h: set() for h in REGIONS}
    for s in strata:
        if not isinstance(s, Stratum):
            raise TypeError(f"strata must be Stratum objects, got {type(s).__name__}")
        if s.region not in grouped:
            raise ValueError(f"a stratum's region must be one of {REGIONS}, got {s.region!r}")
        if int(s.size) != s.size or s.size < 0:
            raise ValueError(f"stratum {s.region}/{s.key!r}: size must be a whole number ≥ 0, got {s.size!r}")
        if int(s.judged) != s.judged or not 0 <= s.judged <= s.size:
            raise ValueError(f"stratum {s.region}/{s.key!r}: need 0 ≤ judged ≤ size (got {s.judged!r} of {s.size!r})")
        rel = np.asarray(s.relevant, dtype=float)
        if np.any(rel < 0) or np.any(rel > s.judged) or np.any(np.isnan(rel)):
            raise ValueError(f"stratum {s.region}/{s.key!r}: need 0 ≤ relevant ≤ judged (got {s.relevant!r} of {s.judged!r})")
        if s.key in keys[s.region]:
            raise ValueError(f"stratum key {s.key!r} appears twice in region {s.region}")
        keys[s.region].add(s.key)
        grouped[s.region].append((int(s.size), int(s.judged), rel if rel.ndim else np.float64(rel)))
    missing = [h for h in REGIONS if not grouped[h]]
    if missing:
        raise ValueError(f"every region needs at least one stratum (an empty region: one of size 0); missing {missing}")
    return {h: tuple(v) for h, v in grouped.items()}


def _summary(strata: Sequence[Stratum], grouped, label_error: LabelError | None) -> dict:
    """Per region: size, judged, relevant found, estimated share T̂_h/|h| (k/n with one stratum), its strata."""
    points = _point_counts(strata=grouped, label_error=None if label_error is None or label_error.perfect else label_error)
    out = {}
    for h in REGIONS:
        mine = [s for s in strata if s.region == h]
        size = sum(s.size for s in mine)
        judged = sum(s.judged for s in mine)
        relevant = float(sum(float(s.relevant) for s in mine))
        if len(mine) == 1:
            share = (relevant / judged) if judged else None
        else:
            share = float(points[h]) / size if size and np.isfinite(points[h]) else None
        out[h] = {"size": int(size), "judged": int(judged), "relevant": relevant, "share": share,
                  "strata": [{"key": s.key, "size": int(s.size), "judged": int(s.judged), "relevant": float(s.relevant),
                              "share": (float(s.relevant) / s.judged) if s.judged else None} for s in mine]}
    return out


def stratified_design_recall(*, strata: Sequence[Stratum], confidence: float = 0.95, draws: int = DEFAULT_DRAWS,
                             seed: int | None = None, label_error: LabelError | None = None) -> DesignBasedRecall:
    """Design-based recall of C1 and C2 from score-stratified samples of A12, B1, B2 and U (module docstring).

    ``strata``: every region's strata (at least one per region; an empty region is one stratum of size 0).
    Returns ``design_based.DesignBasedRecall`` with the same fields and meaning; ``regions[h]`` holds the
    region's totals, its estimated share and its ``strata``.  A stratum with documents and none judged
    makes the recall unknown (``unjudged_region`` or ``unjudged_stratum``), as an unjudged region does.

    Example: U of 990,000 split by a scorer into 940,000 documents scored low (0 relevant in 300 judged) and
    50,000 scored high (12 relevant in 600 judged), with A12, B1, B2 as in ``design_based_recall``'s
    example: T̂_U = 50,000·12/600 = 1,000 and the low stratum's zero bounds it (≈ 3·940,000/300 at 95%).
    With one stratum per region the result equals ``design_based_recall`` draw for draw (same seed).
    """
    grouped = _group(strata)
    return _design_recall(strata=grouped, summary=_summary(strata, grouped, label_error), confidence=confidence,
                          draws=draws, seed=seed, label_error=label_error)


def stratified_design_recall_arrays(*, strata: Sequence[Stratum], which: str = "r1", confidence: float = 0.95,
                                    draws: int = 2_000, rng: np.random.Generator,
                                    label_error: LabelError | None = None) -> DesignBasedArrays:
    """Vectorised :func:`stratified_design_recall` for simulations and size searches: each stratum's
    ``relevant`` an array (one entry per simulated study, all of one shape); the sizes and judged counts
    are the design's, common to all studies.  Exactly ``design_based_recall_arrays``'s Monte Carlo with
    each region's count the sum of its strata's draws (one stratum per region: equal, draw for draw).
    ``label_error``: draws of shape (draws,) or relevant.shape + (draws,)."""
    return _recall_arrays(strata=_group(strata), which=which, confidence=confidence, draws=draws, rng=rng,
                          label_error=label_error)


# =========================================================================== planning: strata from scores


SCORE_STRATA_METHODS = ("geometric", "cum_sqrt_f", "quantile")
# U is mostly irrelevant: its relevant documents sit in the top per cent of a good scorer's ranking, so its strata
# shrink geometrically toward the top; the retrieved regions (precision 0.1–0.9) are cut by Dalenius–Hodges.
# Chosen by bench/bench_stratified_cost.py (see bench/results/stratified_cost.txt).
DEFAULT_STRATA_METHOD = {"A12": "cum_sqrt_f", "B1": "cum_sqrt_f", "B2": "cum_sqrt_f", "U": "geometric"}


def score_strata_bounds(scores: np.ndarray | Sequence[float], *, strata: int = 5, method: str = "geometric",
                        bins: int = 400, ratio: float = 10.0) -> tuple[float, ...]:
    """Interior cut points (ascending, ``strata`` − 1 of them at most) splitting a region by a scorer's scores.

    ``method``: "cum_sqrt_f" — the cumulative √f rule of Dalenius & Hodges (1959): a histogram of the scores
    in ``bins`` equal-width bins, cut where Σ√f crosses equal steps (near-optimal strata for Neyman allocation
    when the score tracks the variable measured); "quantile" — equal-sized strata.  The scores are ranked
    first (cut points are scores, ties stay in one stratum), so duplicate cut points are dropped: a region
    whose scores are all equal is one stratum.  :func:`assign_score_strata` maps scores to stratum numbers.
    Example: scores 0, 1, …, 99 with strata=4, "quantile" → (24.5, 49.5, 74.5) (midpoints; 25 per stratum).
    """
    s = np.sort(np.asarray(scores, dtype=float))
    if strata < 1:
        raise ValueError(f"strata must be at least 1 (got {strata!r})")
    if method not in SCORE_STRATA_METHODS:
        raise ValueError(f"method must be one of {SCORE_STRATA_METHODS}, got {method!r}")
    if s.size == 0 or strata == 1 or s[0] == s[-1]:
        return ()
    if np.any(~np.isfinite(s)):
        raise ValueError("scores must be finite")
    if method == "quantile":
        positions = [int(round(s.size * j / strata)) for j in range(1, strata)]
    elif method == "geometric":
        # the top stratum smallest, each one down ``ratio`` times larger: rare relevant documents sit in the
        # top few per cent of a good scorer's ranking, where equal or √f strata are far too coarse
        weights = ratio ** np.arange(strata, dtype=float)  # bottom … top after reversal
        upper = np.cumsum(weights[::-1])[:-1] / weights.sum()  # shares of the bottom strata, cumulated
        positions = [int(round(s.size * x)) for x in upper]
    else:
        counts, edges = np.histogram(s, bins=bins)
        cum = np.cumsum(np.sqrt(counts))
        steps = cum[-1] * np.arange(1, strata) / strata
        cut_bins = np.searchsorted(cum, steps)  # first bin whose cumulative √f reaches the step
        cut_scores = edges[np.minimum(cut_bins + 1, bins)]
        positions = [int(np.searchsorted(s, c, side="left")) for c in cut_scores]
    cuts: list[float] = []
    for pos in positions:
        if 0 < pos < s.size and s[pos - 1] < s[pos]:
            cut = float((s[pos - 1] + s[pos]) / 2.0)
            if not cuts or cut > cuts[-1]:
                cuts.append(cut)
    return tuple(cuts)


def assign_score_strata(scores: np.ndarray | Sequence[float], bounds: Sequence[float]) -> np.ndarray:
    """Stratum number (0 = lowest scores … len(bounds)) of each score for cut points from :func:`score_strata_bounds`."""
    return np.searchsorted(np.asarray(bounds, dtype=float), np.asarray(scores, dtype=float), side="right")


# =========================================================================== planning: allocation and stages


@dataclass(frozen=True)
class StratumGuess:
    """A stratum to plan for: its size, a prevalence guess (a stated prior, e.g. the region's precision guess
    or ``design_based.complement_prior_prevalences`` for U), and what is already judged in it (a pilot)."""

    region: str
    size: int
    prevalence: float
    key: str = ""
    judged: int = 0
    relevant: float = 0.0


@dataclass(frozen=True)
class StratumAllocation:
    """One stratum of a :class:`StratifiedPlan`: ``planned`` judged documents in all, ``top_up`` still to judge."""

    region: str
    key: str
    size: int
    prevalence: float  # the prevalence planned for (guess, or the judged share's Jeffreys posterior mean)
    judged: int
    planned: int
    top_up: int

    def as_dict(self) -> dict:
        return jsonable(self)


@dataclass(frozen=True)
class StratifiedPlan:
    """Result of :func:`stratified_sample_plan`.

    ``total``: judged documents in all once the plan is done (those already judged included); ``top_up``:
    those still to judge.  ``expected_half_width``: (r1, r2) half-widths of the two-sided interval expected
    at the plan (``expected_half_width_method`` says how).  ``feasible`` False when judging every document
    would not reach the target (then the plan judges everything)."""

    strata: tuple[StratumAllocation, ...]
    total: int
    top_up: int
    target_half_width: float
    confidence: float
    expected_half_width: tuple[float, float]
    expected_half_width_method: str
    feasible: bool
    recall: tuple[float, float]  # (r1, r2) at the prevalences planned for

    def as_dict(self) -> dict:
        return jsonable(self)


def _planning_prevalence(g: StratumGuess) -> float:
    """The prevalence a stratum is planned at: the judged share's Jeffreys posterior mean (k + ½)/(n + 1) once
    something is judged (a pilot), else the stated guess."""
    if g.judged > 0:
        return (float(g.relevant) + 0.5) / (g.judged + 1.0)
    return float(g.prevalence)


def _count_variance(size: np.ndarray, n: np.ndarray, k: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """Var(T_s) of the posterior predictive k + Binomial(|s| − n, p), p ~ Beta(c + k, c + n − k) with c the
    stratum's share of the region's Jeffreys prior (½·|s|/|h|, as the report's Monte Carlo):
    (|s| − n)²·Var(p) + (|s| − n)·E[p(1 − p)]."""
    a, b = prior + k, prior + np.maximum(n - k, 0.0)
    ab = a + b
    var_p = a * b / (ab * ab * (ab + 1.0))
    e_pq = a * b / (ab * (ab + 1.0))
    rest = np.maximum(size - n, 0.0)
    return np.where(n >= size, 0.0, rest * rest * var_p + rest * e_pq)


def stratified_sample_plan(*, strata: Sequence[StratumGuess], half_width: float = 0.05, confidence: float = 0.95,
                           min_per_stratum: int = 10, iterations: int = 4) -> StratifiedPlan:
    """Judged documents per stratum so that BOTH classifiers' two-sided interval is expected within ±``half_width``.

    Shape — Neyman allocation (Neyman 1934; Cochran 1977 §5.5) for the sum of the two recalls' variances:
    n_s ∝ |s|·σ_s·√(g1_h² + g2_h²), with g_h = ∂r/∂T_h·N (1 − r for A12 and the classifier's own region, r for
    the other region and U, notes §2 generalised to four regions) and σ_s² the per-document variance of the
    stratum's count under the report's posterior (U's Jeffreys prior split over its strata by size)
    at the typical outcome k_s = n_s·p_s — so a stratum expected to hold nothing still costs what proving it
    nearly empty costs (≈ c/n_s², not p(1 − p) at p ≈ 0), solved
    by a few fixed-point ``iterations``.  This is the allocation Zrnic & Candès (2024)'s variance-optimal
    sampling rule reduces to on score strata.  Every stratum with documents gets at least
    ``min_per_stratum`` (capped at its size) and at least what is already judged.  Scale — the smallest
    total whose expected half-width, z·sd with sd from the delta method over those posterior variances, is
    at most the target for both r1 and r2 (bisection).  The half-width is a planning figure; the report's
    interval stays the Monte Carlo of :func:`stratified_design_recall`.

    Staged use: a pilot (e.g. the plan at the stated prior, or ``min_per_stratum`` per stratum), then call
    again with each stratum's ``judged``/``relevant`` — its prevalence becomes the Jeffreys posterior mean —
    and judge the ``top_up``; stop when the report's interval reaches the target.  One stratum per region
    (no scorer) is today's unstratified design with Neyman allocation across regions.
    """
    if not 0.0 < half_width < 1.0:
        raise ValueError(f"half_width must lie in (0, 1) (got {half_width!r})")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1) (got {confidence!r})")
    if not strata:
        raise ValueError("strata must not be empty")
    for g in strata:
        if g.region not in REGIONS:
            raise ValueError(f"a stratum's region must be one of {REGIONS}, got {g.region!r}")
        if g.size < 0 or not 0 <= g.judged <= g.size or not 0.0 <= g.relevant <= g.judged:
            raise ValueError(f"stratum {g.region}/{g.key!r}: need 0 ≤ relevant ≤ judged ≤ size")
        if not 0.0 <= g.prevalence <= 1.0:
            raise ValueError(f"stratum {g.region}/{g.key!r}: prevalence must lie in [0, 1] (got {g.prevalence!r})")
    z = float(norm.ppf(0.5 + confidence / 2.0))
    region = np.array([g.region for g in strata])
    size = np.array([g.size for g in strata], dtype=float)
    judged = np.array([g.judged for g in strata], dtype=float)
    found = np.array([g.relevant for g in strata], dtype=float)
    p = np.array([_planning_prevalence(g) for g in strata])
    counts = size * p
    t = {h: float(counts[region == h].sum()) for h in REGIONS}
    total_relevant = sum(t.values())
    r1 = (t["A12"] + t["B1"]) / total_relevant if total_relevant > 0 else float("nan")
    r2 = (t["A12"] + t["B2"]) / total_relevant if total_relevant > 0 else float("nan")
    g1 = np.array([{"A12": 1 - r1, "B1": 1 - r1, "B2": r1, "U": r1}[h] for h in region])
    g2 = np.array([{"A12": 1 - r2, "B1": r2, "B2": 1 - r2, "U": r2}[h] for h in region])
    slope = np.sqrt(g1 ** 2 + g2 ** 2)
    region_size = {h: float(size[region == h].sum()) for h in REGIONS}
    several = {h: h in _SPLIT_PRIOR_REGIONS and int((region == h).sum()) > 1 for h in REGIONS}
    prior = np.array([0.5 * (sz / region_size[h] if several[h] and region_size[h] > 0 else 1.0)
                      for h, sz in zip(region, size, strict=True)])
    floor = np.maximum(judged, np.minimum(size, float(min_per_stratum)))
    r1 = 0.0 if not np.isfinite(r1) else r1
    r2 = 0.0 if not np.isfinite(r2) else r2

    def expected_k(n: np.ndarray) -> np.ndarray:
        return found + np.maximum(n - judged, 0.0) * p

    def half_widths(n: np.ndarray) -> tuple[float, float]:
        if total_relevant <= 0:
            return float("nan"), float("nan")
        var = _count_variance(size, n, expected_k(n), prior)
        return (z * float(np.sqrt(np.sum(g1 ** 2 * var))) / total_relevant,
                z * float(np.sqrt(np.sum(g2 ** 2 * var))) / total_relevant)

    def allocation(budget: float) -> np.ndarray:
        n = floor.copy()
        for _ in range(iterations):
            k = expected_k(n)
            a, b = prior + k, prior + np.maximum(n - k, 0.0)
            sigma = np.sqrt(a * b) / (a + b)
            weight = size * sigma * slope
            wsum = float(weight.sum())
            share = weight / wsum if wsum > 0 else size / max(size.sum(), 1.0)
            n = np.minimum(size, np.maximum(floor, np.ceil(budget * share)))
        return n

    def worst(n: np.ndarray) -> float:
        h1, h2 = half_widths(n)
        return max(h1, h2)

    everything = size.copy()
    feasible = bool(worst(everything) <= half_width) if total_relevant > 0 else False
    if not feasible:
        n = everything
    elif worst(floor) <= half_width:
        n = floor
    else:
        lo, hi = float(floor.sum()), float(size.sum())
        while hi - lo > max(1.0, 0.002 * hi):
            mid = (lo + hi) / 2.0
            if worst(allocation(mid)) <= half_width:
                hi = mid
            else:
                lo = mid
        n = allocation(hi)
        if worst(n) > half_width:  # the caps bit: judge everything rather than miss the target
            n = everything
    n_int = n.astype(int)
    rows = tuple(StratumAllocation(region=g.region, key=g.key, size=int(g.size), prevalence=float(pp),
                                   judged=int(g.judged), planned=int(ni), top_up=int(ni - g.judged))
                 for g, pp, ni in zip(strata, p, n_int, strict=True))
    h1, h2 = half_widths(n)
    return StratifiedPlan(strata=rows, total=int(n_int.sum()), top_up=int((n_int - judged).sum()),
                          target_half_width=float(half_width), confidence=float(confidence),
                          expected_half_width=(h1, h2),
                          expected_half_width_method="z × delta-method sd over each stratum's Jeffreys posterior "
                                                     "predictive count variance at the typical outcome",
                          feasible=feasible, recall=(float(r1), float(r2)))


# =========================================================================== simulation: scored corpora and the staged plan


@dataclass(frozen=True)
class ScoredStratum:
    """A stratum of a simulated corpus: its size and its true count of relevant documents."""

    region: str
    key: str
    size: int
    relevant_true: int

    def as_dict(self) -> dict:
        return jsonable(self)


def binormal_shift(auc: float) -> float:
    """μ of the binormal scorer (irrelevant ~ N(0, 1), relevant ~ N(μ, 1)) whose AUC is ``auc``: Φ(μ/√2) = AUC."""
    if not 0.0 < auc < 1.0:
        raise ValueError(f"auc must lie in (0, 1) (got {auc!r})")
    return float(np.sqrt(2.0) * norm.ppf(auc))


def scored_pair_strata(*, sizes: dict, relevant: dict, auc: float | None, strata_per_region: int = 5,
                       method: str | Mapping[str, str] | None = None, seed: int = 0) -> tuple[ScoredStratum, ...]:
    """Strata of a simulated pair corpus (``design_based.dependent_pair_corpus``'s ``sizes``/``relevant``)
    cut by a binormal scorer of the given AUC (0.5: a useless scorer); ``auc`` None: no scorer, one stratum
    per region (today's design).  Each region's strata from :func:`score_strata_bounds` on its own scores,
    with ``method`` (one for all regions, or per region; default :data:`DEFAULT_STRATA_METHOD`)."""
    rng = np.random.default_rng(seed)
    out: list[ScoredStratum] = []
    for h in REGIONS:
        size, count = int(sizes[h]), int(relevant[h])
        if auc is None or size == 0:
            out.append(ScoredStratum(h, "all", size, count))
            continue
        truth = np.zeros(size, dtype=bool)
        truth[:count] = True
        scores = rng.standard_normal(size) + binormal_shift(auc) * truth
        how = DEFAULT_STRATA_METHOD[h] if method is None else (method if isinstance(method, str) else method[h])
        label = assign_score_strata(scores, score_strata_bounds(scores, strata=strata_per_region, method=how))
        for j in range(int(label.max()) + 1):
            mine = label == j
            out.append(ScoredStratum(h, f"score:{j}", int(mine.sum()), int(truth[mine].sum())))
    return tuple(out)


@dataclass(frozen=True)
class StagedOutcome:
    """One simulated study of the staged plan (:func:`simulate_staged_plan`)."""

    total: int  # judged documents in all, pilot included
    pilot: int
    stages: int  # top-up rounds after the pilot
    reached: bool
    half_width: tuple[float, float]  # (r1, r2) achieved: (high − low)/2 of the report's interval
    covered: tuple[bool, bool]  # did the report's interval hold the corpus recall
    judged: tuple[int, ...]  # per stratum, in the order given


def _judge_top_up(rng, *, size, true_count, judged, true_judged, top_up, accuracy, votes):
    """Judge ``top_up`` more documents of a stratum by simple random sampling without replacement from those
    not judged yet: (new true relevant, new majority-relevant, counts of relevant votes 0..votes)."""
    if top_up <= 0:
        return 0, 0, np.zeros(votes + 1, dtype=int)
    good = true_count - true_judged
    bad = (size - true_count) - (judged - true_judged)
    new_true = int(rng.hypergeometric(good, bad, top_up)) if good > 0 else 0
    if accuracy is None:
        return new_true, new_true, np.zeros(votes + 1, dtype=int)
    pmf = np.array([math.comb(votes, j) * accuracy ** j * (1 - accuracy) ** (votes - j) for j in range(votes + 1)])
    right_rel = rng.multinomial(new_true, pmf)  # j right votes = j relevant votes
    right_irr = rng.multinomial(top_up - new_true, pmf)  # j right votes = votes − j relevant votes
    pattern = right_rel + right_irr[::-1]
    return new_true, int(pattern[votes // 2 + 1:].sum()), pattern


def simulate_staged_plan(*, strata: Sequence[ScoredStratum], prior: Mapping[str, float], half_width: float = 0.05,
                         confidence: float = 0.95, pilot_fraction: float = 0.2, step_fraction: float = 0.5,
                         min_per_stratum: int = 10, max_stages: int = 12, accuracy: float | None = None, votes: int = 3, draws: int = 2_000,
                         seed: int = 0) -> StagedOutcome:
    """One study of the staged design, pilot → top-ups, on a simulated corpus (the procedure the product runs).

    Pilot: :func:`stratified_sample_plan` at the stated ``prior`` (a prevalence guess per region, shared by its
    strata), of which ``pilot_fraction`` is judged (at least ``min_per_stratum`` per stratum).  Then, until
    the report's interval (:func:`stratified_design_recall_arrays`, ``draws`` draws) of BOTH r1 and r2 has
    half-width ≤ ``half_width``: re-plan from what was judged (each stratum's Jeffreys posterior mean) and
    judge ``step_fraction`` of each stratum's top-up (all of it when ≤ 20); a stage whose plan asks for
    nothing more asks for 10% more of the current total.
    ``accuracy``: workers of that one-coin accuracy, majority of ``votes``; the label error is then estimated
    from the vote patterns (``design_based.label_error_from_vote_patterns``) and corrected (Rogan–Gladen).
    The pilot's documents count in the total.
    """
    rng = np.random.default_rng(seed)
    size = np.array([s.size for s in strata])
    n = np.zeros(len(strata), dtype=int)
    kt = np.zeros(len(strata), dtype=int)
    kl = np.zeros(len(strata), dtype=int)
    patterns = np.zeros(votes + 1, dtype=int)
    t = {h: sum(s.relevant_true for s in strata if s.region == h) for h in REGIONS}
    truth = ((t["A12"] + t["B1"]) / sum(t.values()), (t["A12"] + t["B2"]) / sum(t.values()))

    def judge(target: np.ndarray) -> None:
        nonlocal patterns
        for i, s in enumerate(strata):
            extra = int(min(s.size, target[i]) - n[i])
            new_true, new_label, pat = _judge_top_up(rng, size=s.size, true_count=s.relevant_true, judged=int(n[i]),
                                                     true_judged=int(kt[i]), top_up=extra, accuracy=accuracy, votes=votes)
            n[i] += max(extra, 0)
            kt[i] += new_true
            kl[i] += new_label
            patterns = patterns + pat

    guesses = [StratumGuess(s.region, s.size, float(prior[s.region]), s.key) for s in strata]
    first = stratified_sample_plan(strata=guesses, half_width=half_width, confidence=confidence,
                                   min_per_stratum=min_per_stratum)
    judge(np.maximum(np.minimum(size, min_per_stratum),
                     np.ceil(pilot_fraction * np.array([a.planned for a in first.strata])).astype(int)))
    pilot = int(n.sum())
    stages = 0
    while True:
        error = None
        if accuracy is not None:
            error = label_error_from_vote_patterns(patterns={(r, votes): float(patterns[r]) for r in range(votes + 1)},
                                                   votes=votes, draws=draws, rng=rng)
        design = [Stratum(s.region, s.size, int(n[i]), float(kl[i]), s.key) for i, s in enumerate(strata)]
        res = [stratified_design_recall_arrays(strata=design, which=w, confidence=confidence, draws=draws, rng=rng,
                                               label_error=error) for w in ("r1", "r2")]
        widths = tuple(float(r.high - r.low) / 2.0 for r in res)
        reached = all(np.isfinite(w) and w <= half_width for w in widths)
        if reached or stages >= max_stages or bool(np.all(n >= size)):
            covered = tuple(bool(r.low <= tr <= r.high) for r, tr in zip(res, truth, strict=True))
            return StagedOutcome(total=int(n.sum()), pilot=pilot, stages=stages, reached=bool(reached),
                                 half_width=(widths[0], widths[1]), covered=(covered[0], covered[1]),
                                 judged=tuple(int(x) for x in n))
        stages += 1
        guesses = [StratumGuess(s.region, s.size, float(prior[s.region]), s.key, int(n[i]), float(kl[i]))
                   for i, s in enumerate(strata)]
        plan = stratified_sample_plan(strata=guesses, half_width=half_width, confidence=confidence,
                                      min_per_stratum=min_per_stratum)
        target = np.array([a.planned for a in plan.strata])
        # judge only part of each top-up before looking again: the pilot's prevalences are rough (zero found
        # in 10 reads as ≈ 5% under Jeffreys) and what is judged cannot be unjudged
        target = np.where(target - n > 20, n + np.ceil(step_fraction * (target - n)).astype(int), target)
        if int((target - n).sum()) <= 0:
            shares = target / max(target.sum(), 1)
            target = np.minimum(size, n + np.ceil(0.1 * n.sum() * shares).astype(int) + 1)
        judge(target)
