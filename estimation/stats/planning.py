"""How many judgments a pair-recall estimate needs (ESTIMATION-NOTES §2, seed 000 Sec. 4.3).

Three designs are compared for the same target half-width of the recall
interval:

* stratified (the product's design): samples of the disjoint regions A12,
  B1 = A1∖A2, B2 = A2∖A1 with Neyman allocation, n_h ∝ √(q_h/p_h);
* the paper's design: separate samples of A12 and A2 (and A1 for r2);
* uniform sampling of the corpus at prevalence π (seed 000 Fig. 1):
  n = z²·r(1−r)/(h²·π).

All three use the delta-method variance of notes §2.  Notes' worked example:
|A12| = 5,000, |B2| = 20,000, p12 = 0.9, p_B2 = 0.1, ±0.05 at 95% →
stratified 775, paper 3,006, uniform 32,732 at π = 0.01 (worst case 38,415).
Those figures are for infinite regions; ``finite_population=True`` (the
default) applies 1 − n_h/|h| and needs fewer (750 for the stratified design).
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from scipy import stats

from .proportions import jsonable

Target = Literal["r1", "r2", "both"]
_TARGETS = ("r1", "r2", "both")


@dataclass(frozen=True)
class PairSamplePlan:
    """Result of :func:`plan_pair_sample`.  Judgment counts are whole documents."""

    target: str
    half_width: float
    confidence: float
    finite_population: bool
    recall: dict  # {"r1": guess or None, "r2": guess or None}
    stratified: dict  # judgments per region {"A12", "B1", "B2"}
    stratified_total: int
    stratified_additional: int  # minus the judgments already made (pilot)
    stratified_half_width: dict  # half-width the rounded allocation reaches, per recall
    paper_design: dict  # judgments per set {"A12", "A1", "A2"}
    paper_design_total: int
    uniform_prevalence: float | None
    uniform_total: int | None
    uniform_worst_case_total: int | None  # r = 0.5 at the same prevalence
    ratio_to_uniform: float | None  # stratified_total / uniform_total
    costs: dict | None
    summary: str

    def as_dict(self) -> dict:
        return jsonable(self)


@dataclass(frozen=True)
class CertificationPlan:
    """Result of :func:`pair_recall_certification_size`."""

    target: str
    tau: float
    alpha: float
    power: float
    recall_guess: float
    required_se: float
    judgments: dict
    total: int
    summary: str

    def as_dict(self) -> dict:
        return jsonable(self)


# =========================================================================== validation


def _z_two_sided(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    return float(stats.norm.ppf(0.5 + confidence / 2.0))


def _check_precision_guess(value: float | None, name: str, *, required: bool) -> None:
    if value is None:
        if required:
            raise ValueError(f"{name} is needed for this target")
        return
    if not 0.0 < value < 1.0:
        raise ValueError(
            f"{name} must be a precision guess strictly between 0 and 1, got {value!r} "
            "(0 or 1 would mean a region needs no judgments; use a pilot estimate such as (k+0.5)/(n+1))"
        )


def _check_size(value: int, name: str) -> None:
    if int(value) != value or value < 0:
        raise ValueError(f"{name} must be a non-negative whole number, got {value!r}")


def precision_guess_from_pilot(*, relevant: float, judged: int) -> float:
    """A planning guess of a region's precision from a pilot sample: the Jeffreys posterior mean.

    (k + ½)/(n + 1) never returns exactly 0 or 1, which would make the
    Neyman allocation give the region no judgments at all.
    """
    if judged < 0 or relevant < 0 or relevant > judged:
        raise ValueError(f"need 0 ≤ relevant ≤ judged, got relevant={relevant!r}, judged={judged!r}")
    return (relevant + 0.5) / (judged + 1.0)


# =========================================================================== allocation


def neyman_allocation(
    *, unit_sd: Mapping[str, float], sizes: Mapping[str, int], variance: float, finite_population: bool = True
) -> dict[str, float]:
    """Smallest total sample with Σ S_h²/n_h·(1 − n_h/N_h) ≤ variance (unrounded).

    Neyman allocation n_h ∝ S_h (Cochran, Sampling Techniques, 5.25 with the
    FPC).  A region whose share would exceed its size is judged in full (it
    then contributes no variance) and the rest is re-allocated.
    """
    if variance <= 0:
        raise ValueError(f"variance target must be > 0, got {variance!r}")
    free = {h for h, s in unit_sd.items() if s > 0 and sizes[h] > 0}
    allocation = dict.fromkeys(unit_sd, 0.0)
    census: set[str] = set()
    while free:
        total_sd = sum(unit_sd[h] for h in free)
        fpc_term = sum(unit_sd[h] ** 2 / sizes[h] for h in free) if finite_population else 0.0
        scale = total_sd / (variance + fpc_term)
        over = {h for h in free if unit_sd[h] * scale >= sizes[h]}
        if not over:
            for h in free:
                allocation[h] = unit_sd[h] * scale
            break
        census |= over
        free -= over
    for h in census:
        allocation[h] = float(sizes[h])
    return allocation


def _round_up(allocation: Mapping[str, float], sizes: Mapping[str, int]) -> dict[str, int]:
    # Round each region up (never below the variance target) but not past its size.
    return {h: min(int(sizes[h]), math.ceil(n - 1e-9)) for h, n in allocation.items()}


def _achieved_half_width(*, unit_sd, sizes, judgments, z, finite_population) -> float:
    variance = 0.0
    for h, s in unit_sd.items():
        n, size = judgments.get(h, 0), sizes[h]
        if s == 0 or size == 0:
            continue
        if n == 0:
            return math.inf
        fpc = (1.0 - n / size) if finite_population else 1.0
        variance += s**2 / n * fpc
    return z * math.sqrt(variance)


def _stratified_unit_sd(*, size_a12, size_other, p12, p_other) -> tuple[float, dict[str, float]]:
    """Recall r = T12/(T12 + T_other) and its per-region S_h (notes §2).

    Var(r̂) ≈ r²(1−r)²·Σ q_h/(p_h n_h), so S_h = r(1−r)·√(q_h/p_h).
    """
    t12, t_other = size_a12 * p12, size_other * p_other
    r = t12 / (t12 + t_other)
    base = r * (1.0 - r)
    return r, {"A12": base * math.sqrt((1 - p12) / p12), "other": base * math.sqrt((1 - p_other) / p_other) if size_other else 0.0}


def _paper_unit_sd(*, size_a12, size_other, p12, p_other) -> tuple[float, dict[str, float]]:
    """The paper's design: Var(r̂1) ≈ r1²·[q12/(n12 p12) + q2/(n2 p2)] (notes §2).

    ``size_other``/``p_other`` describe the region B (A2∖A1 for r1); the
    whole set A2 = A12 ∪ B is what the paper samples.
    """
    t12, t_other = size_a12 * p12, size_other * p_other
    p_set = (t12 + t_other) / (size_a12 + size_other)
    r = t12 / (t12 + t_other)
    return r, {"A12": r * math.sqrt((1 - p12) / p12), "set": r * math.sqrt((1 - p_set) / p_set)}


# =========================================================================== plan


def plan_pair_sample(
    *,
    size_a12: int,
    size_b1: int = 0,
    size_b2: int = 0,
    p12: float,
    p_b1: float | None = None,
    p_b2: float | None = None,
    half_width: float = 0.05,
    confidence: float = 0.95,
    target: Target = "r1",
    prevalence: float | None = None,
    corpus_size: int | None = None,
    already_judged: Mapping[str, int] | None = None,
    cost_per_judgment: float | None = None,
    finite_population: bool = True,
    min_per_region: int = 30,
) -> PairSamplePlan:
    """Judgments needed for recall ± ``half_width`` at ``confidence`` (ESTIMATION-NOTES §2).

    Precisions are planning guesses (from a pilot use
    :func:`precision_guess_from_pilot`).  ``target``: "r1" (needs A12, B2),
    "r2" (A12, B1) or "both" — each recall planned separately and the larger
    need taken per region, so both reach the half-width (feasible; within
    about 2% of the joint optimum found by a constrained solver in the cases
    we tried, which is not worth its complexity).  Uniform sampling is priced at ``prevalence`` π, or,
    with ``corpus_size`` and all three precisions, at π = n̂/|U| with
    n̂ = T1·T2/T12 (seed 000 Sec. 6).  ``already_judged`` {"A12", "B1", "B2"}
    counts pilot judgments toward the plan.  ``min_per_region`` (default 30,
    capped at the region size) is a floor: the delta-method variance behind
    Neyman allocation is unreliable for a handful of judgments, and a small
    recall can otherwise come out "known to ±0.05" from 3 documents.

    The half-width planned is the delta method's.  The interval
    :func:`~estimation.stats.pair_recall.stratified_pair_recall` reports is
    conservative and about 4% wider (simulated on the example below: mean
    0.052 for a planned 0.05); plan for 0.95·h to be sure of ±h.

    Example (notes §2): size_a12=5000, size_b2=20000, p12=0.9, p_b2=0.1,
    prevalence=0.01, finite_population=False → stratified 775, paper 3,006,
    uniform 32,732, worst case 38,415.
    """
    if target not in _TARGETS:
        raise ValueError(f"target must be one of {_TARGETS}, got {target!r}")
    if not 0.0 < half_width < 0.5:
        raise ValueError(f"half_width must be in (0, 0.5), got {half_width!r}")
    z = _z_two_sided(confidence)
    for value, name in ((size_a12, "size_a12"), (size_b1, "size_b1"), (size_b2, "size_b2")):
        _check_size(value, name)
    if size_a12 == 0:
        raise ValueError("size_a12 is 0: with no overlap the pair says nothing about recall")
    need_r1, need_r2 = target in ("r1", "both"), target in ("r2", "both")
    _check_precision_guess(p12, "p12", required=True)
    _check_precision_guess(p_b2, "p_b2", required=need_r1 and size_b2 > 0)
    _check_precision_guess(p_b1, "p_b1", required=need_r2 and size_b1 > 0)
    if prevalence is not None and not 0.0 < prevalence <= 1.0:
        raise ValueError(f"prevalence must be in (0, 1], got {prevalence!r}")
    if int(min_per_region) != min_per_region or min_per_region < 0:
        raise ValueError(f"min_per_region must be a whole number ≥ 0, got {min_per_region!r}")
    if cost_per_judgment is not None and cost_per_judgment < 0:
        raise ValueError(f"cost_per_judgment must be ≥ 0, got {cost_per_judgment!r}")
    judged_before = dict(already_judged or {})
    if set(judged_before) - {"A12", "B1", "B2"}:
        raise ValueError(f"already_judged keys must be among A12, B1, B2, got {sorted(judged_before)}")

    variance = (half_width / z) ** 2
    sizes = {"A12": int(size_a12), "B1": int(size_b1), "B2": int(size_b2)}
    p_guess = {"A12": p12, "B1": p_b1 or 0.5, "B2": p_b2 or 0.5}
    stratified = {"A12": 0, "B1": 0, "B2": 0}
    paper = {"A12": 0, "A1": 0, "A2": 0}
    recall: dict[str, float | None] = {"r1": None, "r2": None}
    achieved: dict[str, float] = {}
    plans = []
    if need_r1:
        plans.append(("r1", "B2", "A2"))
    if need_r2:
        plans.append(("r2", "B1", "A1"))
    for name, region, whole_set in plans:
        r, sd = _stratified_unit_sd(size_a12=size_a12, size_other=sizes[region], p12=p12, p_other=p_guess[region])
        recall[name] = r
        unit_sd = {"A12": sd["A12"], region: sd["other"]}
        region_sizes = {"A12": sizes["A12"], region: sizes[region]}
        alloc = _round_up(
            neyman_allocation(unit_sd=unit_sd, sizes=region_sizes, variance=variance, finite_population=finite_population),
            region_sizes,
        )
        for h, n in alloc.items():
            stratified[h] = max(stratified[h], n, min(min_per_region, sizes[h]))
        if sizes[region] > 0:
            _, psd = _paper_unit_sd(size_a12=size_a12, size_other=sizes[region], p12=p12, p_other=p_guess[region])
            paper_sizes = {"A12": sizes["A12"], whole_set: sizes["A12"] + sizes[region]}
            palloc = _round_up(
                neyman_allocation(unit_sd={"A12": psd["A12"], whole_set: psd["set"]}, sizes=paper_sizes,
                                  variance=variance, finite_population=finite_population),
                paper_sizes,
            )
            for h, n in palloc.items():
                paper[h] = max(paper[h], n, min(min_per_region, paper_sizes[h]))
    for name, region, _ in plans:
        _, sd = _stratified_unit_sd(size_a12=size_a12, size_other=sizes[region], p12=p12, p_other=p_guess[region])
        achieved[name] = _achieved_half_width(
            unit_sd={"A12": sd["A12"], region: sd["other"]}, sizes=sizes, judgments=stratified, z=z,
            finite_population=finite_population,
        )

    stratified_total = sum(stratified.values())
    additional = sum(max(0, n - int(judged_before.get(h, 0))) for h, n in stratified.items())
    paper_total = sum(paper.values())

    pi = prevalence
    if pi is None and corpus_size is not None and p_b1 is not None and p_b2 is not None:
        t12, t1, t2 = size_a12 * p12, size_a12 * p12 + size_b1 * p_b1, size_a12 * p12 + size_b2 * p_b2
        pi = min(1.0, t1 * t2 / t12 / corpus_size)
    uniform = worst = None
    if pi is not None:
        hardest = max(r * (1 - r) for r in recall.values() if r is not None)
        uniform = _uniform_size(spread=hardest, z=z, half_width=half_width, prevalence=pi,
                                corpus_size=corpus_size if finite_population else None)
        worst = _uniform_size(spread=0.25, z=z, half_width=half_width, prevalence=pi,
                              corpus_size=corpus_size if finite_population else None)
    ratio = stratified_total / uniform if uniform else None
    costs = None
    if cost_per_judgment is not None:
        costs = {
            "per_judgment": float(cost_per_judgment),
            "stratified": stratified_total * cost_per_judgment,
            "stratified_additional": additional * cost_per_judgment,
            "paper_design": paper_total * cost_per_judgment,
            "uniform": None if uniform is None else uniform * cost_per_judgment,
        }
    summary = _plan_summary(target=target, half_width=half_width, confidence=confidence,
                            stratified_total=stratified_total, paper_total=paper_total,
                            uniform=uniform, prevalence=pi, ratio=ratio)
    return PairSamplePlan(
        target=target, half_width=half_width, confidence=confidence, finite_population=finite_population,
        recall=recall, stratified=stratified, stratified_total=stratified_total,
        stratified_additional=additional, stratified_half_width=achieved,
        paper_design=paper, paper_design_total=paper_total,
        uniform_prevalence=pi, uniform_total=uniform, uniform_worst_case_total=worst,
        ratio_to_uniform=ratio, costs=costs, summary=summary,
    )


def uniform_sample_size(
    *, recall: float = 0.5, prevalence: float, half_width: float = 0.05, confidence: float = 0.95,
    corpus_size: int | None = None,
) -> int:
    """Seed 000 Sec. 4.3 / Fig. 1: documents to judge from a uniform sample of U.

    n = z²·r(1−r)/(h²·π): about n·π relevant documents are found, and recall is
    a proportion among them.  recall=0.5 gives the worst case, 38,415 at
    π = 0.01 for ±0.05 at 95% (the paper's "~38,400").
    """
    if not 0.0 <= recall <= 1.0:
        raise ValueError(f"recall must be in [0, 1], got {recall!r}")
    if not 0.0 < prevalence <= 1.0:
        raise ValueError(f"prevalence must be in (0, 1], got {prevalence!r}")
    if not 0.0 < half_width < 0.5:
        raise ValueError(f"half_width must be in (0, 0.5), got {half_width!r}")
    return _uniform_size(spread=recall * (1 - recall), z=_z_two_sided(confidence), half_width=half_width,
                         prevalence=prevalence, corpus_size=corpus_size)


def _uniform_size(*, spread: float, z: float, half_width: float, prevalence: float, corpus_size: int | None) -> int:
    n = z**2 * spread / (half_width**2 * prevalence)
    if corpus_size:
        n = n / (1.0 + n / corpus_size)  # finite-population correction for a sample of U
    return math.ceil(n - 1e-9)


def _plan_summary(*, target, half_width, confidence, stratified_total, paper_total, uniform, prevalence, ratio) -> str:
    which = {"r1": "the recall of C1", "r2": "the recall of C2", "both": "the recall of both classifiers"}[target]
    text = (f"To know {which} within ±{half_width:g} at {confidence:.0%} confidence, judge {stratified_total:,} documents "
            f"from the three regions (the paper's separate samples would need {paper_total:,})")
    if uniform and ratio:
        text += (f"; a uniform sample of the corpus at prevalence {prevalence:g} would need {uniform:,}, "
                 f"so this costs 1/{1 / ratio:.0f} of uniform sampling")
    return text + "."


# =========================================================================== certification power


def pair_recall_certification_size(
    *,
    size_a12: int,
    size_other: int,
    p12: float,
    p_other: float,
    tau: float,
    alpha: float = 0.05,
    power: float = 0.8,
    target: Literal["r1", "r2"] = "r1",
    finite_population: bool = True,
) -> CertificationPlan:
    """Judgments per region so that a one-sided level-α test of recall > τ has the given power.

    For r1, ``size_other``/``p_other`` describe B2 = A2∖A1; for r2, B1.
    With the delta-method SE of notes §2 and a normal lower bound
    r̂ − z_{1−α}·SE, the test passes with probability 1−β when the true recall
    r exceeds τ by (z_{1−α} + z_{1−β})·SE; so SE ≤ (r − τ)/(z_{1−α} + z_{1−β}),
    reached with the Neyman allocation.  (Same logic as seed 004 Alg. 1–2,
    applied to recall.)  The library's Monte Carlo bounds are a little more
    conservative than the normal bound, so treat the power as approximate.
    """
    if target not in ("r1", "r2"):
        raise ValueError(f"target must be 'r1' or 'r2', got {target!r}")
    if not 0.0 < alpha < 0.5:
        raise ValueError(f"alpha must be in (0, 0.5), got {alpha!r}")
    if not 0.5 <= power < 1.0:
        raise ValueError(f"power must be in [0.5, 1), got {power!r}")
    if not 0.0 < tau < 1.0:
        raise ValueError(f"tau must be in (0, 1), got {tau!r}")
    _check_size(size_a12, "size_a12")
    _check_size(size_other, "size_other")
    if size_a12 == 0:
        raise ValueError("size_a12 is 0: with no overlap the pair says nothing about recall")
    _check_precision_guess(p12, "p12", required=True)
    _check_precision_guess(p_other, "p_other", required=size_other > 0)
    r, sd = _stratified_unit_sd(size_a12=size_a12, size_other=size_other, p12=p12, p_other=p_other)
    if r <= tau:
        raise ValueError(f"the guessed recall {r:.3f} is not above τ = {tau}: no sample size gives power to certify it")
    z_sum = float(stats.norm.ppf(1 - alpha) + stats.norm.ppf(power))
    required_se = (r - tau) / z_sum
    region = "B2" if target == "r1" else "B1"
    sizes = {"A12": int(size_a12), region: int(size_other)}
    alloc = _round_up(
        neyman_allocation(unit_sd={"A12": sd["A12"], region: sd["other"]}, sizes=sizes,
                          variance=required_se**2, finite_population=finite_population),
        sizes,
    )
    total = sum(alloc.values())
    summary = (f"Judge {total:,} documents ({', '.join(f'{h}: {n:,}' for h, n in alloc.items())}) to show, with "
               f"{power:.0%} power at one-sided level {alpha:g}, that a recall of about {r:.3f} exceeds {tau:g}.")
    return CertificationPlan(target=target, tau=tau, alpha=alpha, power=power, recall_guess=r,
                             required_se=required_se, judgments=alloc, total=total, summary=summary)
