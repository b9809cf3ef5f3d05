"""The dependence check's sample size: how many documents of region N (retrieved by neither classifier) to judge.

Split from ``annotation.services.sampling.draws``, which draws what this sizes (``samples_draw(complement=...)``).
The size comes from the pure ``estimation.stats.design_based.complement_sample_size``; the inputs —
the pair's region sizes, precision guesses and N's prevalence guess — from the topic's pilot.
"""
from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from annotation.models import Region, Topic
from annotation.services.corpora.retrieved_sets import pair_regions
from annotation.services.sampling.draws import (
    PILOT_MIN_JUDGED,
    SamplingError,
    region_precision_guesses,
    region_sample_labels,
    topic_pair,
)
from estimation.stats.design_based import ComplementSampleSize, complement_sample_size
from estimation.stats.planning import precision_guess_from_pilot

# Without a pilot of N, its prevalence guess is what the pair's own precision guesses imply if the
# classifiers were positively dependent at this δ1 (the upper end of the usual 0.8–1.25 band).
COMPLEMENT_DELTA1_GUESS = 1.25
# The design-based lower bound should fall at most this far below the recall (issue 11's target).
DEFAULT_COMPLEMENT_MARGIN = 0.10


@dataclass(frozen=True)
class ComplementPlan:
    """How many documents of region N (retrieved by neither classifier) the dependence check judges.

    `judged` is None when no size of N reaches the margin (`reason` says why) or N is empty.
    `planned_lower_bounds`/`planned_recalls` are per classifier ("r1", "r2"): the
    conservative design-based bound a typical sample of this plan gets, and the
    recall the guesses imply (estimation.stats.design_based.complement_sample_size).
    """

    size: int
    prevalence_guess: float
    guess_source: str
    judged: int | None
    feasible: bool
    margin: float
    planned_lower_bounds: dict[str, float | None]
    planned_recalls: dict[str, float]
    expected_relevant_found: float | None
    reason: str


def complement_prevalence_guess(
    *, topic: Topic, sizes: Mapping[str, int], guesses: Mapping[str, float]
) -> tuple[float, str]:
    """A planning guess of the share of relevant documents in N, and what it rests on (plain words).

    From the topic's own sample of N once PILOT_MIN_JUDGED of its documents are judged (the
    Jeffreys posterior mean); before that, the relevant documents N would hold if the pair
    were positively dependent at δ1 = COMPLEMENT_DELTA1_GUESS: with T_h = |h|·p_h,
    N_rel = δ1·T1·T2/T12 and T_N = N_rel − T12 − T_B1 − T_B2 (design_based's δ1 = T12·N/(T1·T2)).
    Independence (δ1 = 1) would give T_B1·T_B2/T12, fewer; the guess only sets the size.
    """
    counted = region_sample_labels(topic=topic, regions=(Region.NEITHER,))[Region.NEITHER]
    if counted.judged >= PILOT_MIN_JUDGED:
        guess = precision_guess_from_pilot(relevant=counted.relevant, judged=counted.judged)
        return guess, (f"the documents of N judged so far ({counted.relevant} relevant of {counted.judged}, "
                       "Jeffreys posterior mean)")
    size_n = int(sizes.get("N", 0))
    t12 = sizes["A12"] * guesses["A12"]
    t1, t2 = t12 + sizes["B1"] * guesses["B1"], t12 + sizes["B2"] * guesses["B2"]
    if size_n == 0 or t12 <= 0:
        return 0.0, "no guess needed: N is empty" if size_n == 0 else "no guess: the pair shares no document"
    t_n = max(0.0, COMPLEMENT_DELTA1_GUESS * t1 * t2 / t12 - t1 - t2 + t12)
    return min(1.0, t_n / size_n), (
        f"the precision guesses above, assuming the two classifiers tend to find the same relevant documents "
        f"(dependence δ1 = {COMPLEMENT_DELTA1_GUESS:g}, the upper end of the usual band): about {t_n:.0f} relevant "
        f"documents among the {size_n:,} of N. Once {PILOT_MIN_JUDGED} documents of N are judged, their share replaces it")


@functools.lru_cache(maxsize=256)
def _complement_sample_size_cached(**kwargs: Any) -> ComplementSampleSize:
    """``complement_sample_size`` memoised per process: it is seeded (deterministic) and costs ~0.1 s,
    and the topic page sizes the check on every view with the same inputs until labels arrive."""
    return complement_sample_size(**kwargs)


def complement_plan(
    *,
    topic: Topic,
    judged: Mapping[str, int],
    margin: float = DEFAULT_COMPLEMENT_MARGIN,
    sizes: Mapping[str, int] | None = None,
    guesses: Mapping[str, float] | None = None,
) -> ComplementPlan:
    """Size the dependence check: documents of N so both classifiers' design-based bounds are within `margin`.

    `judged` are the planned totals of A12, B1 and B2 (the pair's plan). Sized with
    ``estimation.stats.design_based.complement_sample_size`` for r1 and for r2 at the
    topic's confidence, at the pilot's (or prior) precision guesses and N's prevalence
    guess (``complement_prevalence_guess``); the larger m is the plan. About 0.1 s per
    classifier (4,000 Monte Carlo draws per bisection step).
    """
    if sizes is None:
        pair = topic_pair(topic=topic)
        sizes = pair_regions(c1=pair.c1, c2=pair.c2).counts()
    if guesses is None:
        guesses = region_precision_guesses(topic=topic)
    prevalence, source = complement_prevalence_guess(topic=topic, sizes=sizes, guesses=guesses)
    size_n = int(sizes["N"])
    results = {}
    for which in ("r1", "r2"):
        try:
            results[which] = _complement_sample_size_cached(
                size_a12=int(sizes["A12"]), precision_a12=float(guesses["A12"]), judged_a12=int(judged.get("A12", 0)),
                size_b1=int(sizes["B1"]), precision_b1=float(guesses["B1"]), judged_b1=int(judged.get("B1", 0)),
                size_b2=int(sizes["B2"]), precision_b2=float(guesses["B2"]), judged_b2=int(judged.get("B2", 0)),
                size_u=size_n, prevalence_u=float(prevalence), which=which, margin=float(margin),
                confidence=float(topic.confidence),
            )
        except ValueError as exc:
            raise SamplingError(f"Cannot size the dependence check of topic {topic.name!r}: {exc}") from exc
    bounds = {w: r.planned_lower_bound for w, r in results.items()}
    recalls = {w: r.truth for w, r in results.items()}
    if size_n == 0:
        return ComplementPlan(size=0, prevalence_guess=prevalence, guess_source=source, judged=None, feasible=False,
                              margin=margin, planned_lower_bounds=bounds, planned_recalls=recalls,
                              expected_relevant_found=None,
                              reason="Every document of the corpus was retrieved by one of the classifiers: "
                                     "there is nothing outside the pair to check.")
    infeasible = [r for r in results.values() if not r.feasible or r.judged_u is None]
    if infeasible:
        return ComplementPlan(size=size_n, prevalence_guess=prevalence, guess_source=source, judged=None,
                              feasible=False, margin=margin, planned_lower_bounds=bounds, planned_recalls=recalls,
                              expected_relevant_found=None,
                              reason=f"Even judging all of N would leave the bound more than {margin:g} below the "
                                     "recall: the planned samples of A12, B1 and B2 are too small for it. Choose a "
                                     "narrower interval above, or a wider margin.")
    m = max(int(r.judged_u or 0) for r in results.values())
    return ComplementPlan(size=size_n, prevalence_guess=prevalence, guess_source=source, judged=m, feasible=True,
                          margin=margin, planned_lower_bounds=bounds, planned_recalls=recalls,
                          expected_relevant_found=m * prevalence, reason=results["r1"].reason)


