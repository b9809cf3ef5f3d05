"""Judgments needed against prevalence: seed 000 Fig. 1 (Sec. 4.3) and the cost analysis of Sec. 7.4.

Seed 000 Fig. 1 plots the cost of estimating recall by uniform sampling of the
corpus against the prevalence π of the topic: n = z²·s²/(h²·π) documents
(Sec. 4.3: 384 on-topic documents for ±0.05 at 95%, "approximately 3840" at
π = 0.1 and ten times that at π = 0.01).  Sec. 7.4 sets against it the cost of
the pair design (precision samples of A1, A2 and A12).  :func:`cost_against_prevalence`
draws both, and the product's stratified design, over a grid of prevalences
for the same interval half-width; every point is priced by the existing
planning functions (:func:`~estimation.stats.planning.plan_pair_sample`), none
is reimplemented here.

What changes with the prevalence (the cost model).  The classifiers keep
their behaviour: each region h of the pair (A12, B1 = A1∖A2, B2 = A2∖A1)
catches the same share t_h of the relevant documents and the same share g_h of
the off-topic documents as in the topic measured.  With T = π·|U| relevant
documents, region h then holds t_h·T + g_h·(|U| − T) documents with precision
t_h·T / (t_h·T + g_h·(|U| − T)).  The topic's own shares come from its region
sizes and precision guesses, T being n̂ = T1·T2/T12 (seed 000 Sec. 6, the
Lincoln–Petersen total, never below the relevant documents found).  At the
topic's own prevalence the model gives back the topic's regions exactly, so the
topic's mark lies on the curve.  The recall (t12/(t12 + t_B2) for C1) is the
same at every prevalence, so only the cost moves.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .planning import Target, plan_pair_sample, uniform_sample_size
from .proportions import jsonable
from .stratified import StratumGuess, scored_pair_strata, stratified_sample_plan

DEFAULT_LOW = 1e-4
DEFAULT_HIGH = 0.5
DEFAULT_POINTS = 41


@dataclass(frozen=True)
class CostPoint:
    """Judgments at one prevalence, per design (documents judged; each is judged by the crowd's workers)."""

    prevalence: float
    uniform: int  # uniform sample of U at the pair's recall guess (seed 000 Fig. 1)
    uniform_worst_case: int  # the same at recall 0.5, the paper's s² = 0.25
    paper_design: int  # separate samples of A12 and A2 (and A1), seed 000 Sec. 7.4
    stratified: int  # the product's design: the disjoint regions with Neyman allocation (notes §2)


@dataclass(frozen=True)
class CostCurve:
    """Result of :func:`cost_against_prevalence`."""

    target: str
    half_width: float
    confidence: float
    recall: float  # the recall guess the curve is drawn for (C1's, or the harder of the two for "both")
    topic_prevalence: float
    topic: CostPoint  # the topic's own prevalence: its mark on the curve
    points: list[CostPoint]  # the grid, in increasing prevalence
    summary: str

    def as_dict(self) -> dict:
        return jsonable(self)


def _check_unit(value: float | None, name: str) -> float:
    if value is None or not 0.0 < value < 1.0:
        raise ValueError(f"{name} must be a precision guess strictly between 0 and 1, got {value!r}")
    return float(value)


def cost_against_prevalence(
    *,
    size_a12: int,
    size_b1: int,
    size_b2: int,
    p12: float,
    p_b1: float,
    p_b2: float,
    corpus_size: int,
    half_width: float = 0.05,
    confidence: float = 0.95,
    target: Target = "r1",
    prevalences: list[float] | None = None,
    finite_population: bool = True,
    min_per_region: int = 30,
) -> CostCurve:
    """Seed 000 Fig. 1 / Sec. 7.4: judgments for recall ± ``half_width`` against prevalence, per design.

    ``size_*`` and ``p*`` describe the topic's pair (precision guesses strictly
    between 0 and 1: from a pilot use
    :func:`~estimation.stats.planning.precision_guess_from_pilot`).
    ``prevalences`` defaults to 41 points spaced evenly on a log scale from
    10⁻⁴ to 0.5.  Each point is :func:`~estimation.stats.planning.plan_pair_sample`
    on the regions the cost model (module docstring) gives at that prevalence;
    the uniform cost is its ``uniform_total`` (n = z²·r(1−r)/(h²·π), with the
    finite-population correction when ``finite_population``) and the worst case
    :func:`~estimation.stats.planning.uniform_sample_size` at recall 0.5.
    """
    sizes = {"A12": int(size_a12), "B1": int(size_b1), "B2": int(size_b2)}
    for name, value in sizes.items():
        if value < 0:
            raise ValueError(f"size of {name} must be ≥ 0, got {value!r}")
    if sizes["A12"] == 0:
        raise ValueError("size_a12 is 0: with no overlap the pair says nothing about recall")
    precision = {"A12": _check_unit(p12, "p12"),
                 "B1": _check_unit(p_b1, "p_b1") if sizes["B1"] else 0.5,
                 "B2": _check_unit(p_b2, "p_b2") if sizes["B2"] else 0.5}
    universe = int(corpus_size)
    relevant = {h: sizes[h] * precision[h] for h in sizes}
    off_topic = {h: sizes[h] * (1.0 - precision[h]) for h in sizes}
    retrieved = sum(sizes.values())
    if universe <= retrieved:
        raise ValueError(f"corpus_size {corpus_size!r} must exceed the documents the pair retrieves ({retrieved:,})")
    t12, t1, t2 = relevant["A12"], relevant["A12"] + relevant["B1"], relevant["A12"] + relevant["B2"]
    found = sum(relevant.values())
    # n̂ = T1·T2/T12 (seed 000 Sec. 6), never below what the pair found, never the whole corpus.
    total = min(max(t1 * t2 / t12, found), universe - sum(off_topic.values()))
    share_relevant = {h: relevant[h] / total for h in sizes}
    share_off = {h: off_topic[h] / (universe - total) for h in sizes}
    topic_prevalence = total / universe

    grid = sorted(float(p) for p in (prevalences if prevalences is not None
                                     else np.geomspace(DEFAULT_LOW, DEFAULT_HIGH, DEFAULT_POINTS)))
    for p in grid:
        if not 0.0 < p < 1.0:
            raise ValueError(f"every prevalence must be strictly between 0 and 1, got {p!r}")

    def point(prevalence: float, exact: bool) -> tuple[CostPoint, float]:
        t = prevalence * universe
        if exact:  # the topic itself: its own regions, not their reconstruction
            size_at, p_at = sizes, precision
        else:
            raw = {h: share_relevant[h] * t + share_off[h] * (universe - t) for h in sizes}
            size_at = {h: max(1, round(raw[h])) if sizes[h] else 0 for h in sizes}
            # Clipped away from 0 and 1 only against floating-point rounding at the ends of the grid.
            p_at = {h: min(1 - 1e-9, max(1e-9, share_relevant[h] * t / raw[h])) if sizes[h] else 0.5 for h in sizes}
        plan = plan_pair_sample(
            size_a12=size_at["A12"], size_b1=size_at["B1"], size_b2=size_at["B2"],
            p12=p_at["A12"], p_b1=p_at["B1"] if size_at["B1"] else None, p_b2=p_at["B2"] if size_at["B2"] else None,
            half_width=half_width, confidence=confidence, target=target, prevalence=prevalence,
            corpus_size=universe, finite_population=finite_population, min_per_region=min_per_region,
        )
        worst = uniform_sample_size(recall=0.5, prevalence=prevalence, half_width=half_width, confidence=confidence,
                                    corpus_size=universe if finite_population else None)
        recalls = [r for r in plan.recall.values() if r is not None]
        hardest = max(recalls, key=lambda r: r * (1 - r))
        assert plan.uniform_total is not None  # prevalence is given
        return CostPoint(prevalence=prevalence, uniform=plan.uniform_total, uniform_worst_case=worst,
                         paper_design=plan.paper_design_total, stratified=plan.stratified_total), hardest

    topic, recall = point(topic_prevalence, True)
    points = [point(p, False)[0] for p in grid]
    return CostCurve(target=target, half_width=half_width, confidence=confidence, recall=recall,
                     topic_prevalence=topic_prevalence, topic=topic, points=points,
                     summary=_summary(topic=topic, half_width=half_width, confidence=confidence))


def _summary(*, topic: CostPoint, half_width: float, confidence: float) -> str:
    share = topic.prevalence
    one_in = f"about 1 document in {1 / share:,.0f}" if share < 0.5 else f"{share:.0%} of the documents"
    text = (f"This topic is {one_in} of the corpus. To know recall within ±{half_width:g} at {confidence:.0%} "
            f"confidence, a uniform sample of the corpus needs {topic.uniform:,} judged documents; "
            f"the two classifiers' samples need {topic.stratified:,} "
            f"(the paper's separate samples {topic.paper_design:,}).")
    if topic.stratified and topic.uniform > topic.stratified:
        text += (f" Uniform sampling would cost {topic.uniform / topic.stratified:,.0f} times as much, "
                 "and the rarer the topic, the larger that gap.")
    elif topic.stratified:
        text += " At this prevalence the pair saves nothing over uniform sampling."
    return text



# =========================================================================== the design-based (complement) designs


@dataclass(frozen=True)
class DesignBasedCostPoint:
    """Judged documents at one prevalence for ±half_width on BOTH recalls, assumption-free (notes §8–§9):
    ``unstratified`` samples A12, B1, B2 and U (N) each at random; ``score_stratified`` splits every region
    into a scorer's strata (``stratified.scored_pair_strata``, binormal scorer of the curve's AUC).  Both are
    ``stratified.stratified_sample_plan`` at the cost model's true shares (the expected cost, no pilot noise)."""

    prevalence: float
    unstratified: int
    score_stratified: int | None


def design_based_cost_against_prevalence(
    *,
    size_a12: int,
    size_b1: int,
    size_b2: int,
    p12: float,
    p_b1: float,
    p_b2: float,
    corpus_size: int,
    prevalences: list[float],
    half_width: float = 0.05,
    confidence: float = 0.95,
    scorer_auc: float | None = 0.95,
    strata_per_region: int = 5,
    seed: int = 0,
) -> list[DesignBasedCostPoint]:
    """The stratified (complement) design's curve beside :func:`cost_against_prevalence`'s: judged documents for
    ±``half_width`` on r1 AND r2 with no independence assumption, unstratified and score-stratified.

    Same cost model as :func:`cost_against_prevalence` (each region keeps its shares t_h of the relevant and
    g_h of the off-topic documents); U is the rest of the corpus and holds the relevant documents the pair
    misses, T_U = T − Σ_h t_h·T, with T the Lincoln–Petersen total at the topic's own prevalence (so the pair's
    union recall is the same at every prevalence).  ``scorer_auc`` None: the unstratified curve only.
    Example (tests/estimation/stats/test_stratified_plan.py): notes §2's worked pair at ρ ≈ 0.87%.
    """
    sizes = {"A12": int(size_a12), "B1": int(size_b1), "B2": int(size_b2)}
    precision = {"A12": _check_unit(p12, "p12"), "B1": _check_unit(p_b1, "p_b1") if sizes["B1"] else 0.5,
                 "B2": _check_unit(p_b2, "p_b2") if sizes["B2"] else 0.5}
    universe = int(corpus_size)
    relevant = {h: sizes[h] * precision[h] for h in sizes}
    off_topic = {h: sizes[h] * (1.0 - precision[h]) for h in sizes}
    t12, t1, t2 = relevant["A12"], relevant["A12"] + relevant["B1"], relevant["A12"] + relevant["B2"]
    found = sum(relevant.values())
    total = min(max(t1 * t2 / t12, found), universe - sum(off_topic.values()))
    share_relevant = {h: relevant[h] / total for h in sizes}
    share_off = {h: off_topic[h] / (universe - total) for h in sizes}
    out = []
    for prevalence in sorted(float(p) for p in prevalences):
        if not 0.0 < prevalence < 1.0:
            raise ValueError(f"every prevalence must be strictly between 0 and 1, got {prevalence!r}")
        t = prevalence * universe
        rel = {h: int(round(share_relevant[h] * t)) for h in sizes}
        size = {h: max(rel[h], int(round(share_relevant[h] * t + share_off[h] * (universe - t)))) for h in sizes}
        size["U"] = universe - sum(size.values())
        rel["U"] = max(0, min(size["U"], int(round(t)) - sum(rel.values())))

        kw = {"sizes": size, "relevant": rel, "strata_per_region": strata_per_region, "seed": seed,
              "half_width": half_width, "confidence": confidence}
        out.append(DesignBasedCostPoint(prevalence=prevalence, unstratified=_truth_plan_total(auc=None, **kw),
                                        score_stratified=None if scorer_auc is None else
                                        _truth_plan_total(auc=scorer_auc, **kw)))
    return out


def _truth_plan_total(*, sizes, relevant, auc, strata_per_region, seed, half_width, confidence) -> int:
    strata = scored_pair_strata(sizes=sizes, relevant=relevant, auc=auc, strata_per_region=strata_per_region, seed=seed)
    return stratified_sample_plan(
        strata=[StratumGuess(s.region, s.size, s.relevant_true / s.size if s.size else 0.0, s.key) for s in strata],
        half_width=half_width, confidence=confidence).total
