"""Prediction-powered (rectified) recall of a pair: a model judge corrected by human labels, per stratum.

Sources.  Angelopoulos, Bates, Fannjiang, Jordan, Zrnic, "Prediction-powered inference", Science 382 (2023):
with a predictor f on many documents and human labels y on n of them, the rectified mean
θ̂ = mean(f over the unlabelled) + mean(y − f over the labelled) is unbiased whatever f is.  Angelopoulos,
Duchi, Zrnic, "PPI++: Efficient Prediction-Powered Inference" (2023, arXiv:2311.01453): weigh the
predictions by λ, θ̂_λ = λ·f̄_unlabelled + mean_n(y − λf), λ tuned from the data to minimise the variance
(λ = 0 is the human-only mean, so a useless judge costs nothing asymptotically; ``ppi_py``'s
``ppi_mean_ci`` clips λ to [0, 1] as done here).  Fisch, Maynez, Hofer, Dhingra, Globerson, Cohen,
"Stratified Prediction-Powered Inference for Hybrid Language Model Evaluation" (NeurIPS 2024): one
rectified mean, and one λ, per stratum, combined with the design's weights.

The design here.  Each stratum s (a pair region A12, B1, B2, U — the product's N — or a score stratum of
one) holds |s| documents.  The judge reads a simple random sample of m_s of them; the humans judge a simple
random subsample of n_s of those (the human sample drawn first is a subsample of the union of it and a
further draw from the rest: two-phase sampling).  Then θ_s, the stratum's share of relevant documents, is
estimated by the two-phase difference estimator (Cochran 1977, *Sampling Techniques*, §12.7; Särndal,
Swensson, Wretman 1992, §9.5; it is PPI++'s rectified mean with the labelled set inside the unlabelled one):

    θ̂_s(λ) = λ·f̄_m + (ȳ_n − λ·f̄_n),
    Var θ̂_s(λ) ≈ (1/m − 1/|s|)·S²_y + (1/n − 1/m)·S²_d,     d = y − λf,

where f̄_m is the judge's mean over all m documents it read and ȳ_n, f̄_n, S²_y, S²_d come from the n human
documents.  The first term does not depend on λ, so the variance is smallest at λ* = S_yf/S²_f (the
regression slope), clipped to [0, 1].  With λ = 0 it is the human-only variance (1/n − 1/|s|)·S²_y; the
saving is the factor ≈ (1 − ρ²) on the second term (ρ the judge–human correlation).  Nothing is assumed about
the judge: a wrong or biased judge only makes S²_d large, and λ̂ → 0.

Small counts (what the CLT cannot carry).  The normal interval of a rectified mean is only as good as the
CLT on d, which is mostly zeros when the judge is good: with no disagreement among the n judged documents S²_d
is 0 and the interval would collapse.  Four rules, each conservative:

1. *Variance floor*: S²_d is computed with one pseudo-observation of weight ¼ at each end of d's range
   (±1: y, f ∈ [0, 1], λ ∈ [0, 1]) — together the ½ pseudo-count of a Jeffreys prior, as Agresti & Coull
   (1998) add pseudo-successes and failures — so a stratum where the judge never disagreed still has
   S²_d ≈ 1/(2n), a disagreement rate of about one in 2n, instead of 0.
2. *Too few labels*: a stratum with fewer than ``min_labels`` (default 30) human labels, or no document read
   by the judge alone, uses the human-only count distribution of ``design_based`` (Jeffreys posterior
   predictive: k + Binomial(|s| − n, Beta(½ + k, ½ + n − k))), which has near-nominal coverage at small n
   (Brown, Cai, DasGupta 2001, "Interval estimation for a binomial proportion").
3. *Judge that does not help*: when the PPI++ interval (rule 4's quantile) would not narrow the stratum's by
   at least 10% of its variance (``min_gain`` 0.9) the stratum falls back to the same human-only distribution
   (so a judge at chance gives the human-only interval, not a noisier one).  An enumerated stratum (n = |s|)
   is exact.
4. *Few disagreements*: S²_d rests on the documents where judge and people differ; its degrees of freedom are
   taken as 2n/(κ − 1), κ = n·Σe⁴/(Σe²)² the kurtosis of d (about twice the disagreements when they are rare,
   n − 1 for normal data), combined with S²_y's n − 1 by Satterthwaite (1946), and the stratum's draws are
   Student t with those degrees of freedom (Welch's remedy for a variance estimated from few effective values).

Recall is T_own/N from the strata's counts, T_s = |s|·θ_s (``design_based``'s estimand, no independence
assumption): per Monte Carlo draw each PPI stratum's count is |s|·clip(θ̂_s + se_s·t_df, k_s/|s|,
1 − (n_s − k_s)/|s|) (never fewer relevant documents than the humans found, never more than those they did
not), each human-only stratum's count is the Jeffreys predictive draw; r1 = (T12 + T_B1)/N,
r2 = (T12 + T_B2)/N; equal-tailed percentile interval.  The human-only interval is computed from the same
draws' human-only distributions, so the two widths are comparable.

Measured (``bench/bench_ppi.py``, ``bench/results/ppi.txt``, 400 seeded studies per point, judge right with
probability a on every document): design "rare N" (A12 4,000 at 0.8, B1 15,000 at 0.3, B2 15,000 at 0.25, N
500,000 at 0.004; people 150/150/150/1,500, judge 10× that) — coverage of the corpus r1 0.963, 0.940, 0.948,
0.963, 0.970 at a = 0.5, 0.6, 0.8, 0.9, 0.97, half-width 1.00, 1.00, 0.95, 0.89, 0.83 × human-only; design
"pair regions" (N 30,000 at 0.05) — 0.943, 0.943, 0.968, 0.932 at a = 0.5, 0.8, 0.9, 0.97, width 1.00, 0.91,
0.77, 0.57 × human-only.  Same headline half-width with fewer people: 40% fewer at a = 0.9 and 60% at 0.97 in
"pair regions"; 20% and 30% in "rare N", where N's 0.4% prevalence caps the judge–people correlation (a symmetric
judge's false alarms outnumber the relevant documents there) and N falls back to the human labels.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.stats import norm
from scipy.stats import t as student_t

from .pair_recall import _JEFFREYS, _count_draws_array
from .proportions import jsonable

__all__ = [
    "PPI_REGIONS",
    "JudgedStratum",
    "StratumPPI",
    "PPIRecall",
    "RecallInterval",
    "Concordance",
    "judge_concordance",
    "ppi_stratum",
    "ppi_pair_recall",
]

PPI_REGIONS = ("A12", "B1", "B2", "U")
DEFAULT_DRAWS = 20_000
MIN_LABELS = 30
MIN_GAIN = 0.9
# Weight of each pseudo-observation at d = ±1 in S²_d (rule 1): ¼ + ¼, the half pseudo-count of a Jeffreys prior.
FLOOR_WEIGHT = 0.25
Z_975 = float(norm.ppf(0.975))


@dataclass(frozen=True, eq=False)
class JudgedStratum:
    """One stratum: ``size`` documents; ``human`` the n human labels (1/0 or P(relevant)) with ``judge_on_human``
    the judge's P(relevant) on the same documents, in the same order; ``judge_only`` the judge's P(relevant) on
    the other documents it read (a simple random sample of the stratum's rest).  ``key`` names the stratum
    within its region (e.g. "score:3").  A judge that answered a class only gives 1.0/0.0."""

    region: str  # "A12", "B1", "B2" or "U" (the product's N)
    size: int
    human: np.ndarray
    judge_on_human: np.ndarray
    judge_only: np.ndarray
    key: str = ""

    def __post_init__(self) -> None:
        if self.region not in PPI_REGIONS:
            raise ValueError(f"a stratum's region must be one of {PPI_REGIONS}, got {self.region!r}")
        y = np.asarray(self.human, dtype=float)
        f = np.asarray(self.judge_on_human, dtype=float)
        g = np.asarray(self.judge_only, dtype=float)
        object.__setattr__(self, "human", y)
        object.__setattr__(self, "judge_on_human", f)
        object.__setattr__(self, "judge_only", g)
        if y.shape != f.shape or y.ndim != 1:
            raise ValueError("human and judge_on_human must be 1-d arrays of the same length")
        for name, a in (("human", y), ("judge_on_human", f), ("judge_only", g)):
            if a.size and (np.any(np.isnan(a)) or a.min() < 0 or a.max() > 1):
                raise ValueError(f"stratum {self.region}/{self.key!r}: {name} must lie in [0, 1]")
        if int(self.size) != self.size or self.size < y.size + g.size:
            raise ValueError(
                f"stratum {self.region}/{self.key!r}: size {self.size} is below the documents read "
                f"({y.size} human + {g.size} judge only)")


@dataclass(frozen=True)
class StratumPPI:
    """Result of :func:`ppi_stratum`: the share θ_s of relevant documents in the stratum.

    ``method``: "ppi++" (rectified, normal), "human-only" (Jeffreys predictive; ``reason`` says why) or
    "enumerated" (exact).  ``variance`` is the PPI++ variance (floored) and ``human_variance`` the human-only
    one, both of θ̂_s; ``effective_labels`` = n·human_variance/variance is how many human labels alone would
    give the PPI width (n when human-only)."""

    region: str
    key: str
    size: int
    labelled: int  # n
    judged: int  # m (judge-read documents, labelled ones included)
    relevant: float  # Σ y
    point: float | None  # θ̂_s at the method used
    variance: float | None
    human_point: float | None
    human_variance: float | None
    lam: float | None
    correlation: float | None
    effective_labels: float
    df: float | None  # degrees of freedom of the PPI++ variance (Student t draws); None: not PPI++
    method: str
    reason: str

    def as_dict(self) -> dict:
        return jsonable(self)


@dataclass(frozen=True)
class RecallInterval:
    point: float | None
    low: float | None
    high: float | None
    lower_bound: float | None  # one-sided at the confidence

    @property
    def half_width(self) -> float | None:
        if self.low is None or self.high is None:
            return None
        return (self.high - self.low) / 2.0

    def as_dict(self) -> dict:
        return {**jsonable(self), "half_width": self.half_width}


@dataclass(frozen=True)
class PPIRecall:
    """Result of :func:`ppi_pair_recall`: r1 and r2 with the judge (PPI++) and without (human-only), per-stratum
    results, the human labels used and the human labels human-only sampling would need for the same
    per-stratum variances (``human_labels_equivalent``)."""

    confidence: float
    draws: int
    seed: int | None
    r1: RecallInterval
    r2: RecallInterval
    r1_human: RecallInterval
    r2_human: RecallInterval
    strata: tuple[StratumPPI, ...]
    human_labels: int
    human_labels_equivalent: float
    judge_documents: int

    @property
    def human_labels_saved(self) -> float:
        return max(0.0, self.human_labels_equivalent - self.human_labels)

    def as_dict(self) -> dict:
        out = jsonable(self)
        out["r1"] = self.r1.as_dict()
        out["r2"] = self.r2.as_dict()
        out["r1_human"] = self.r1_human.as_dict()
        out["r2_human"] = self.r2_human.as_dict()
        out["human_labels_saved"] = self.human_labels_saved
        return out


def _var(a: np.ndarray) -> float:
    return float(np.var(a, ddof=1)) if a.size > 1 else 0.0


def ppi_stratum(
    stratum: JudgedStratum, *, min_labels: int = MIN_LABELS, min_gain: float = MIN_GAIN, lam: float | None = None
) -> StratumPPI:
    """PPI++ share of relevant documents in one stratum (two-phase difference estimator, λ tuned; module
    docstring: Angelopoulos et al. 2023 PPI and PPI++, Cochran 1977 §12.7), with its small-count rules.

    ``lam`` fixes λ (tests); by default λ̂ = S_yf/S²_f clipped to [0, 1]."""
    s = stratum
    y, f, g = s.human, s.judge_on_human, s.judge_only
    n, size = int(y.size), int(s.size)
    m = n + int(g.size)
    k = float(y.sum())
    base: dict[str, Any] = dict(region=s.region, key=s.key, size=size, labelled=n, judged=m, relevant=k)
    if size == 0:
        return StratumPPI(**base, point=0.0, variance=0.0, human_point=0.0, human_variance=0.0, lam=None,
                          correlation=None, effective_labels=0.0, df=None, method="enumerated", reason="empty stratum")
    if n == size:
        share = k / size
        return StratumPPI(**base, point=share, variance=0.0, human_point=share, human_variance=0.0, lam=None,
                          correlation=None, effective_labels=float(n), df=None, method="enumerated",
                          reason="every document has human labels")
    if n == 0:
        return StratumPPI(**base, point=None, variance=None, human_point=None, human_variance=None, lam=None,
                          correlation=None, effective_labels=0.0, df=None, method="human-only", reason="no human labels")
    ybar = k / n
    s2y = _var(y)
    # Human-only variance with the same floor idea (½ pseudo-observation at 0 and at 1) so an all-0 sample does
    # not claim zero variance; used for the comparison and the fall-back decision only.
    s2y_floor = (s2y * (n - 1) + 0.5 * (ybar ** 2 + (1 - ybar) ** 2)) / n if n > 1 else 0.25
    human_var = (1.0 / n - 1.0 / size) * s2y_floor
    human: dict[str, Any] = dict(human_point=ybar, human_variance=human_var)
    if n < min_labels:
        return StratumPPI(**base, point=ybar, variance=human_var, **human, lam=None, correlation=None, df=None,
                          effective_labels=float(n), method="human-only",
                          reason=f"fewer than {min_labels} human labels")
    if m == n:
        return StratumPPI(**base, point=ybar, variance=human_var, **human, lam=None, correlation=None, df=None,
                          effective_labels=float(n), method="human-only", reason="the judge read no other document")
    s2f = _var(f)
    syf = float(np.cov(y, f, ddof=1)[0, 1]) if n > 1 else 0.0
    rho = syf / math.sqrt(s2y * s2f) if s2y > 0 and s2f > 0 else 0.0
    if lam is None:
        lam = min(1.0, max(0.0, syf / s2f)) if s2f > 0 else 0.0
    d = y - lam * f
    dbar = float(d.mean())
    # Variance floor (rule 1): weight-¼ pseudo-observations at d = +1 and d = −1.
    e = d - dbar
    ends = ((1 - dbar) ** 2, (1 + dbar) ** 2)
    sum2 = float((e ** 2).sum()) + FLOOR_WEIGHT * (ends[0] + ends[1])
    sum4 = float((e ** 4).sum()) + FLOOR_WEIGHT * (ends[0] ** 2 + ends[1] ** 2)
    s2d = sum2 / n
    fbar_m = (float(f.sum()) + float(g.sum())) / m
    point = lam * fbar_m + dbar
    v1 = max(0.0, 1.0 / m - 1.0 / size) * s2y_floor
    v2 = (1.0 / n - 1.0 / m) * s2d
    var = v1 + v2
    # Rule 4: degrees of freedom of the variance estimate (Satterthwaite 1946).  S²_d rests on the few documents
    # where judge and people differ: its kurtosis κ = n·Σe⁴/(Σe²)² gives df ≈ 2n/(κ − 1) (≈ twice the
    # disagreements when they are rare, n − 1 for normal data); S²_y has n − 1.
    kappa = n * sum4 / sum2 ** 2 if sum2 > 0 else 3.0
    df2 = min(n - 1.0, max(1.0, 2.0 * n / (kappa - 1.0))) if kappa > 1 else n - 1.0
    df = (v1 + v2) ** 2 / (v1 ** 2 / max(1.0, n - 1.0) + v2 ** 2 / df2) if var > 0 else float(n - 1)
    inflation = (float(student_t.ppf(0.975, df)) / Z_975) ** 2
    if var * inflation >= min_gain * human_var:
        return StratumPPI(**base, point=ybar, variance=human_var, **human, lam=0.0, correlation=rho, df=None,
                          effective_labels=float(n), method="human-only",
                          reason=f"the judge would narrow the interval by under {round(100 * (1 - min_gain))}% "
                                 "of its variance")
    eff = n * human_var / (var * inflation) if var > 0 else float(n)
    return StratumPPI(**base, point=point, variance=var, **human, lam=lam, correlation=rho, df=df,
                      effective_labels=eff, method="ppi++", reason="")


def _stratum_counts(r: StratumPPI, *, human_only: bool, rng: np.random.Generator, draws: int) -> np.ndarray:
    """Monte Carlo draws of the stratum's relevant count T_s (module docstring)."""
    if r.size == 0:
        return np.zeros(draws)
    if r.labelled == r.size:
        return np.full(draws, r.relevant)
    if r.labelled == 0:
        return np.full(draws, np.nan)
    if human_only or r.method != "ppi++":
        return _count_draws_array(size=r.size, judged=r.labelled, relevant=np.asarray(r.relevant),
                                  prior=_JEFFREYS, rng=rng, draws=draws)
    assert r.point is not None and r.variance is not None
    noise = rng.standard_t(r.df, draws) if r.df is not None and r.df < 1e6 else rng.standard_normal(draws)
    theta = r.point + math.sqrt(r.variance) * noise
    lo = r.relevant / r.size
    hi = 1.0 - (r.labelled - r.relevant) / r.size
    return r.size * np.clip(theta, lo, hi)


def _interval(r: np.ndarray, point: float | None, confidence: float) -> RecallInterval:
    r = r[np.isfinite(r)]
    if r.size == 0:
        return RecallInterval(point=point, low=None, high=None, lower_bound=None)
    a = (1.0 - confidence) / 2.0
    low, high, lb = np.quantile(r, [a, 1.0 - a, 1.0 - confidence])
    return RecallInterval(point=point, low=float(low), high=float(high), lower_bound=float(lb))


def ppi_pair_recall(
    strata: Sequence[JudgedStratum],
    *,
    confidence: float = 0.95,
    draws: int = DEFAULT_DRAWS,
    seed: int | None = 0,
    min_labels: int = MIN_LABELS,
    min_gain: float = MIN_GAIN,
) -> PPIRecall:
    """Design-based recall of a pair, r1 = (T12 + T_B1)/N and r2 = (T12 + T_B2)/N, from stratified PPI++ counts
    (Fisch et al. 2024 stratified PPI; per stratum :func:`ppi_stratum`), beside the human-only interval from the
    same labels.  Every region needs at least one stratum (an empty region: size 0, no labels)."""
    if not 0.5 < confidence < 1:
        raise ValueError("confidence must lie in (0.5, 1)")
    missing = [h for h in PPI_REGIONS if not any(s.region == h for s in strata)]
    if missing:
        raise ValueError(f"every region needs at least one stratum; missing {missing}")
    results = tuple(ppi_stratum(s, min_labels=min_labels, min_gain=min_gain) for s in strata)
    rng = np.random.default_rng(seed)
    totals = {h: np.zeros(draws) for h in PPI_REGIONS}
    totals_h = {h: np.zeros(draws) for h in PPI_REGIONS}
    point = dict.fromkeys(PPI_REGIONS, 0.0)
    point_h = dict.fromkeys(PPI_REGIONS, 0.0)
    for r in results:
        totals[r.region] = totals[r.region] + _stratum_counts(r, human_only=False, rng=rng, draws=draws)
        totals_h[r.region] = totals_h[r.region] + _stratum_counts(r, human_only=True, rng=rng, draws=draws)
        point[r.region] += r.size * r.point if r.point is not None else math.nan
        point_h[r.region] += r.size * r.human_point if r.human_point is not None else math.nan

    def recalls(t: dict, own: str) -> np.ndarray:
        n_all = t["A12"] + t["B1"] + t["B2"] + t["U"]
        with np.errstate(invalid="ignore", divide="ignore"):
            return (t["A12"] + t[own]) / n_all

    def point_recall(p: dict, own: str) -> float | None:
        total = p["A12"] + p["B1"] + p["B2"] + p["U"]
        value = (p["A12"] + p[own]) / total if total > 0 else math.nan
        return float(min(1.0, max(0.0, value))) if math.isfinite(value) else None

    return PPIRecall(
        confidence=confidence,
        draws=draws,
        seed=seed,
        r1=_interval(recalls(totals, "B1"), point_recall(point, "B1"), confidence),
        r2=_interval(recalls(totals, "B2"), point_recall(point, "B2"), confidence),
        r1_human=_interval(recalls(totals_h, "B1"), point_recall(point_h, "B1"), confidence),
        r2_human=_interval(recalls(totals_h, "B2"), point_recall(point_h, "B2"), confidence),
        strata=results,
        human_labels=sum(r.labelled for r in results),
        human_labels_equivalent=float(sum(r.effective_labels for r in results)),
        judge_documents=sum(r.judged for r in results),
    )


@dataclass(frozen=True)
class Concordance:
    """The judge's class against the human majority on documents both judged, in one region: counts
    ``both_relevant`` (judge yes, humans yes), ``judge_only`` (judge yes, humans no), ``human_only`` (judge no,
    humans yes), ``neither``; ``agreement`` = (both + neither)/total; Cohen's κ (Cohen 1960)."""

    region: str
    both_relevant: int
    judge_only: int
    human_only: int
    neither: int
    agreement: float | None = None
    kappa: float | None = None
    total: int = field(default=0)

    def as_dict(self) -> dict:
        return jsonable(self)


def judge_concordance(*, region: str, human: np.ndarray, judge: np.ndarray) -> Concordance:
    """2×2 table of the judge's class (P ≥ ½) against the human majority (label ≥ ½); agreement and Cohen's κ,
    κ = (p_o − p_e)/(1 − p_e) (Cohen 1960, "A coefficient of agreement for nominal scales")."""
    h = np.asarray(human, dtype=float) >= 0.5
    j = np.asarray(judge, dtype=float) >= 0.5
    if h.shape != j.shape:
        raise ValueError("human and judge must have the same length")
    a = int(np.sum(h & j))
    b = int(np.sum(~h & j))
    c = int(np.sum(h & ~j))
    d = int(np.sum(~h & ~j))
    total = a + b + c + d
    if total == 0:
        return Concordance(region=region, both_relevant=0, judge_only=0, human_only=0, neither=0, total=0)
    po = (a + d) / total
    pe = ((a + b) * (a + c) + (c + d) * (b + d)) / total ** 2
    kappa = (po - pe) / (1 - pe) if pe < 1 else None
    return Concordance(region=region, both_relevant=a, judge_only=b, human_only=c, neither=d, agreement=po,
                       kappa=kappa, total=total)
