"""Corpus-level precision and recall of a retrieved set, from judged documents of a stratified sample.

The judged documents of a topic were drawn by simple random sampling (SRS) without replacement within
strata (the pair's regions, ESTIMATION-NOTES §2), not uniformly: a precision counted over them describes the
sample, not the corpus (a trained classifier showed 0.80 where the corpus precision was 0.012). Here each
stratum h is a frame of N_h documents of which m_h were judged (the judged part of an SRS is taken as an
SRS of it: judging order does not depend on relevance), and a retrieved set R of the corpus is known exactly
(|R| counted on the corpus scores). Then

    T_R = Σ_h N_h · k_h / m_h            (k_h: judged in h that are relevant and in R)

is the Horvitz–Thompson (1952) estimator of the relevant retrieved documents (inclusion probability
m_h/N_h within stratum h; Cochran, *Sampling Techniques*, 3rd ed., 1977, §5.2 stratified totals), and

    precision(R) = T_R / |R|,      recall(R) = T_R / (T_R + T_N)

with T_N the same estimator for relevant documents outside R. |R| is not estimated: it is counted.

**Intervals** (conservative): each stratum's count is drawn by Monte Carlo as k + Binomial(N_h − m_h, P)
(the finite-population predictive of its unjudged documents) with P from the Clopper–Pearson confidence
distribution that pushes the figure the bound's way — Beta(k, m − k + 1) towards fewer relevant,
Beta(k + 1, m − k) towards more — the construction of ``design_based.conservative`` bounds (ESTIMATION-NOTES
§8; Clopper & Pearson 1934). The two-sided interval is the α/2 quantile of the pushed-down sum and the
1 − α/2 quantile of the pushed-up sum. A stratum whose every document was judged is exact.

**Documents in no sampled stratum** (e.g. the pair's complement N when it was not sampled): their relevance
is unknown, so they enter the bounds at both extremes (none relevant, all relevant) and the point estimate is
None: nothing is assumed about documents nobody looked at.

Coverage of the corpus truth measured in ``tests/estimation/stats/test_weighted_validation.py`` (fixed seeds).
``weighted_auc`` is the area under the ROC curve with each judged document weighted by its inverse inclusion
probability (the Horvitz–Thompson form of the Mann–Whitney statistic; Lumley 2010, *Complex Surveys*, §5.5),
an estimate of the corpus AUC: the probability that a relevant document outscores a non-relevant one.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DRAWS = 4000


@dataclass(frozen=True)
class Interval:
    point: float | None  # None when a part of the corpus that matters has no judged sample
    low: float
    high: float


@dataclass(frozen=True)
class RetrievedSetEstimate:
    """Corpus-level figures of one retrieved set R (``retrieved_set_estimate``)."""

    retrieved: int  # |R|, counted on the corpus
    judged_retrieved: int  # judged documents of the sampled strata that are in R
    relevant_retrieved: Interval  # T_R, documents
    precision: Interval  # T_R / |R|
    recall: Interval  # T_R / (T_R + T_N)
    unsampled_retrieved: int  # documents of R in no sampled stratum (relevance unknown)
    confidence: float


def _counts(*, sizes: np.ndarray, judged: np.ndarray, hits: np.ndarray, push: str,
            rng: np.random.Generator, draws: int) -> np.ndarray:
    """Monte Carlo draws (draws,) of Σ_h [k_h + Binomial(N_h − m_h, P_h)], P_h pushed down or up."""
    total = np.zeros(draws)
    for size, m, k in zip(sizes.tolist(), judged.tolist(), hits.tolist(), strict=True):
        rest = size - m
        if rest <= 0:
            total += k
            continue
        if push == "down":
            p = np.zeros(draws) if k == 0 else rng.beta(k, m - k + 1, size=draws)
        else:
            p = np.ones(draws) if k == m else rng.beta(k + 1, m - k, size=draws)
        total += k + rng.binomial(rest, p)
    return total


def _validate(sizes: np.ndarray, judged: np.ndarray, *counts: np.ndarray) -> None:
    if sizes.shape != judged.shape or any(c.shape != sizes.shape for c in counts):
        raise ValueError("sizes, judged and counts need one entry per stratum")
    if np.any(judged < 1) or np.any(judged > sizes):
        raise ValueError("each stratum needs 1 ≤ judged ≤ size")
    for c in counts:
        if np.any(c < 0) or np.any(c > judged):
            raise ValueError("a stratum's count must lie between 0 and its judged documents")


def retrieved_set_estimate(
    *,
    sizes: np.ndarray | list[int],
    judged: np.ndarray | list[int],
    relevant_retrieved: np.ndarray | list[int],
    relevant_missed: np.ndarray | list[int],
    judged_retrieved: int,
    retrieved: int,
    unsampled_retrieved: int = 0,
    unsampled_other: int = 0,
    confidence: float = 0.95,
    draws: int = DRAWS,
    seed: int = 0,
) -> RetrievedSetEstimate:
    """Precision and recall on the corpus of a retrieved set R known exactly, from a stratified sample.

    Per sampled stratum h (arrays of one entry each): ``sizes`` N_h, ``judged`` m_h, ``relevant_retrieved``
    the judged relevant documents in R, ``relevant_missed`` the judged relevant documents not in R.
    ``judged_retrieved``: judged documents in R (all strata). ``retrieved``: |R| on the corpus.
    ``unsampled_retrieved`` / ``unsampled_other``: documents of R / not of R in no sampled stratum.
    See the module docstring for the estimator (Horvitz–Thompson by stratum) and the conservative interval.
    """
    sizes_a = np.asarray(sizes, dtype=np.int64)
    judged_a = np.asarray(judged, dtype=np.int64)
    hit_r = np.asarray(relevant_retrieved, dtype=np.int64)
    hit_n = np.asarray(relevant_missed, dtype=np.int64)
    _validate(sizes_a, judged_a, hit_r, hit_n)
    if np.any(hit_r + hit_n > judged_a):
        raise ValueError("a stratum has more judged relevant documents than judged documents")
    if not 0 < confidence < 1:
        raise ValueError("confidence is a probability strictly between 0 and 1")
    if retrieved < 0 or unsampled_retrieved < 0 or unsampled_other < 0 or unsampled_retrieved > retrieved:
        raise ValueError("retrieved and unsampled counts must be whole numbers with unsampled ≤ retrieved")
    alpha = 1 - confidence
    rng = np.random.default_rng(seed)
    share = np.divide(sizes_a, judged_a)
    point_r = float(np.sum(share * hit_r)) if len(sizes_a) else 0.0
    point_n = float(np.sum(share * hit_n)) if len(sizes_a) else 0.0
    unknown = unsampled_retrieved > 0 or unsampled_other > 0
    r_down = _counts(sizes=sizes_a, judged=judged_a, hits=hit_r, push="down", rng=rng, draws=draws)
    r_up = _counts(sizes=sizes_a, judged=judged_a, hits=hit_r, push="up", rng=rng, draws=draws) + unsampled_retrieved
    n_down = _counts(sizes=sizes_a, judged=judged_a, hits=hit_n, push="down", rng=rng, draws=draws)
    n_up = _counts(sizes=sizes_a, judged=judged_a, hits=hit_n, push="up", rng=rng, draws=draws) + unsampled_other
    r_low = float(np.quantile(r_down, alpha / 2))
    r_high = min(float(np.quantile(r_up, 1 - alpha / 2)), float(retrieved))
    relevant = Interval(point=None if unsampled_retrieved else min(point_r, float(retrieved)), low=r_low, high=r_high)
    if retrieved:
        precision = Interval(point=None if relevant.point is None else relevant.point / retrieved,
                             low=r_low / retrieved, high=r_high / retrieved)
    else:
        precision = Interval(point=None, low=0.0, high=1.0)

    def ratio(num: np.ndarray, other: np.ndarray) -> np.ndarray:
        den = num + other
        return np.divide(num, den, out=np.ones_like(num, dtype=float), where=den > 0)

    recall_low = float(np.quantile(ratio(r_down, n_up), alpha / 2))
    recall_high = float(np.quantile(ratio(r_up, n_down), 1 - alpha / 2))
    recall_point = None if unknown or point_r + point_n == 0 else point_r / (point_r + point_n)
    return RetrievedSetEstimate(
        retrieved=int(retrieved), judged_retrieved=int(judged_retrieved), relevant_retrieved=relevant,
        precision=precision, recall=Interval(point=recall_point, low=recall_low, high=recall_high),
        unsampled_retrieved=int(unsampled_retrieved), confidence=confidence)


def weighted_auc(*, scores: np.ndarray, relevant: np.ndarray, weights: np.ndarray) -> float | None:
    """Σ_{i relevant, j not} w_i w_j ([s_i > s_j] + ½[s_i = s_j]) / (Σ_relevant w · Σ_not w); None without both.

    The Horvitz–Thompson form of the Mann–Whitney statistic (module docstring): with w = 1/π it estimates
    the corpus AUC from a sample with unequal inclusion probabilities.
    """
    s = np.asarray(scores, dtype=float)
    y = np.asarray(relevant, dtype=bool)
    w = np.asarray(weights, dtype=float)
    if s.shape != y.shape or s.shape != w.shape or np.any(w < 0):
        raise ValueError("scores, relevant and weights need one non-negative entry per document")
    w_pos, w_neg = float(w[y].sum()), float(w[~y].sum())
    if w_pos <= 0 or w_neg <= 0:
        return None
    values, inverse = np.unique(s, return_inverse=True)
    pos = np.bincount(inverse, weights=w * y, minlength=len(values))
    neg = np.bincount(inverse, weights=w * ~y, minlength=len(values))
    below = np.concatenate([[0.0], np.cumsum(neg)[:-1]])  # negative weight strictly below each score
    return float(np.sum(pos * (below + 0.5 * neg)) / (w_pos * w_neg))
