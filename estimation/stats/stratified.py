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
count distribution, exactly ``design_based``'s per region — the Jeffreys posterior predictive
k_s + Binomial(|s| − n_s, p_s), p_s ~ Beta(½ + k_s, ½ + n_s − k_s) for the report's interval, and for the
certification's conservative bound each stratum's Clopper–Pearson confidence distribution pushed the way
that lowers the classifier's recall (Beta(k, n − k + 1) in A12 and the own region, Beta(k + 1, n − k) in
the other region and U).  T_h per Monte Carlo draw is the sum of its strata's draws; an enumerated
stratum (n_s = |s|) is exact.  Zero found in a stratum is evidence: its confidence distribution bounds it
(≈ 3/n_s of it at 95%).  T_U's reported upper bound is, with one stratum, the exact Clopper–Pearson bound
of ``design_based``; with several, the ``confidence`` quantile of Σ_s [k_s + (|s| − n_s)·q_s] with
q_s ~ Beta(k_s + 1, n_s − k_s) (each stratum's upper confidence distribution).  Label error (notes §3):
Rogan–Gladen per stratum per draw, as ``design_based`` does per region.  One Monte Carlo serves both
modules (``design_based._design_recall``): with one stratum per region this *is*
:func:`~estimation.stats.design_based.design_based_recall`, draw for draw.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .design_based import (
    DEFAULT_DRAWS,
    REGIONS,
    DesignBasedArrays,
    DesignBasedRecall,
    LabelError,
    _design_recall,
    _point_counts,
    _recall_arrays,
)
from .proportions import jsonable

__all__ = [
    "Stratum",
    "stratified_design_recall",
    "stratified_design_recall_arrays",
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
    relevant: float  # judged relevant (majority labels)
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
