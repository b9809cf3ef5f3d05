"""The dependence check's sample size: how many documents of region N (retrieved by neither classifier) to judge.

Split from ``annotation.services.sampling.draws``, which draws what this sizes (``samples_draw(complement=...)``).
The size comes from the pure ``estimation.stats.design_based.complement_sample_size_prior``: a first stage
sized from a conservative prior on what N may hold (never from the pair's own recall, notes §9), then top-ups
sized from N's own judged pilot once PILOT_MIN_JUDGED of its documents are judged.
"""
from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scipy.stats import beta

from annotation.models import Region, Topic
from annotation.services.sampling.draws import (
    PILOT_MIN_JUDGED,
    SamplingError,
    pair_sizes,
    planned_region_sizes,
    region_precision_guesses,
    region_sample_labels,
    topic_scored_plan,
)
from estimation.stats.design_based import (
    COMPLEMENT_PRIOR_SHARES,
    ComplementPriorSize,
    complement_prior_prevalences,
    complement_sample_size_prior,
)
from estimation.stats.planning import precision_guess_from_pilot

# complement_prevalence_guess (a point guess, used by certification's pilot estimate, not to size N): without
# a pilot of N, what the pair's precision guesses imply if the classifiers were positively dependent at this
# δ1 (the upper end of the usual 0.8–1.25 band).
COMPLEMENT_DELTA1_GUESS = 1.25
# Top-ups: N's prevalences allowed by its judged pilot, the Jeffreys interval at this two-sided level.
COMPLEMENT_PILOT_INTERVAL = 0.90
# The design-based lower bound should fall at most this far below the recall (issue 11's target).
DEFAULT_COMPLEMENT_MARGIN = 0.10


@dataclass(frozen=True)
class ComplementPlan:
    """How many documents of region N (retrieved by neither classifier) the dependence check judges.

    `judged` is None when no size of N reaches the margin (`reason` says why) or N is empty; otherwise
    the total of N's documents to judge (the stage's target, the documents judged so far included).
    `stage` is "first" (sized from the conservative prior) or "top-up" (from N's own judged pilot);
    `prevalences_considered` the shares of relevant documents in N planned for, `prevalence_guess` the
    one whose plan is the largest (it sets `judged`).
    `planned_lower_bounds`/`planned_recalls` are per classifier ("r1", "r2"), at that prevalence: the
    conservative design-based bound a typical sample of this plan gets, and the recall the guesses imply
    (estimation.stats.design_based.complement_sample_size).
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
    stage: str = "first"
    prevalences_considered: tuple[float, ...] = ()


def complement_prevalence_guess(
    *, topic: Topic, sizes: Mapping[str, int], guesses: Mapping[str, float]
) -> tuple[float, str]:
    """A planning guess of the share of relevant documents in N, and what it rests on (plain words).

    From the topic's own sample of N once PILOT_MIN_JUDGED of its documents are judged (the
    Jeffreys posterior mean); before that, the relevant documents N would hold if the pair
    were positively dependent at δ1 = COMPLEMENT_DELTA1_GUESS: with T_h = |h|·p_h,
    N_rel = δ1·T1·T2/T12 and T_N = N_rel − T12 − T_B1 − T_B2 (design_based's δ1 = T12·N/(T1·T2)).
    Independence (δ1 = 1) would give T_B1·T_B2/T12, fewer.  A point guess for certification's pilot
    estimate; ``complement_plan`` no longer sizes N from it (it rests on the pair's own figures, notes §9).
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
def _complement_size_cached(**kwargs: Any) -> ComplementPriorSize:
    """``complement_sample_size_prior`` memoised per process: it is seeded (deterministic) and costs ~0.1 s
    per prevalence, and the topic page sizes the check on every view with the same inputs until labels arrive."""
    return complement_sample_size_prior(**kwargs)


def complement_prevalences(
    *, topic: Topic, sizes: Mapping[str, int], guesses: Mapping[str, float]
) -> tuple[str, tuple[float, ...], str]:
    """The stage of the dependence check and the shares of relevant documents in N to plan it for.

    * "first" (fewer than PILOT_MIN_JUDGED documents of N judged): a conservative prior, not the pair's
      own recall (notes §9: at δ1 = 0.35 the pair-derived guess planned 6 documents of 21,115). N may hold
      up to as many relevant documents as the pair's regions together, T_P = Σ|h|·p_h over A12, B1, B2 at
      the precision guesses (the union's recall as low as 0.5), planned at 10%, 33% and 100% of T_P
      (``design_based.COMPLEMENT_PRIOR_SHARES``: the delta-method error of the recall is largest at 33%).
    * "top-up": N's own judged pilot, its Jeffreys interval (COMPLEMENT_PILOT_INTERVAL) and mean.
    """
    size_n = int(sizes.get("N", 0))
    counted = region_sample_labels(topic=topic, regions=(Region.NEITHER,))[Region.NEITHER]
    if size_n > 0 and counted.judged >= PILOT_MIN_JUDGED:
        k, n = float(counted.relevant), int(counted.judged)
        tail = (1.0 - COMPLEMENT_PILOT_INTERVAL) / 2.0
        low, high = (float(beta.ppf(q, k + 0.5, n - k + 0.5)) for q in (tail, 1.0 - tail))
        mean = precision_guess_from_pilot(relevant=k, judged=n)
        return "top-up", (low, mean, high), (
            f"the {n} documents of N judged so far ({counted.relevant:g} relevant): the plan holds for any share "
            f"from {low:.4f} to {high:.4f} (their {COMPLEMENT_PILOT_INTERVAL:.0%} Jeffreys interval)")
    pair_relevant = sum(sizes[h] * guesses[h] for h in ("A12", "B1", "B2"))
    prevalences = complement_prior_prevalences(pair_relevant=pair_relevant, size_u=size_n)
    if size_n == 0 or pair_relevant <= 0:
        return "first", prevalences, ("no guess needed: N is empty" if size_n == 0
                                      else "no guess: the pair's regions hold no relevant document by the guesses")
    shares = ", ".join(f"{x:.0%}" for x in COMPLEMENT_PRIOR_SHARES)
    return "first", prevalences, (
        f"a conservative prior, not the pair's own recall: N may hold up to as many relevant documents as the "
        f"pair's regions (about {pair_relevant:,.0f} by the precision guesses above), and the plan holds for N "
        f"holding {shares} of that. Once {PILOT_MIN_JUDGED} documents of N are judged, top-ups are sized from them")


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
    ``estimation.stats.design_based.complement_sample_size_prior`` for r1 and for r2 at the topic's
    confidence and the pilot's (or prior) precision guesses, over N's prevalences from
    ``complement_prevalences`` (a conservative prior first, then N's own pilot); the largest m is the
    plan. The margin is never wider than half a classifier's planned recall (a bound near 0 would
    otherwise reach it). About 0.1 s per classifier and prevalence (4,000 Monte Carlo draws per step).
    """
    if sizes is None:
        sizes = pair_sizes(topic=topic).counts  # the bitmaps, or a corpus in the team's engine's counts
    if guesses is None:
        guesses = region_precision_guesses(topic=topic)
    stage, prevalences, source = complement_prevalences(topic=topic, sizes=sizes, guesses=guesses)
    size_n = int(sizes["N"])
    results: dict[str, ComplementPriorSize] = {}
    for which in ("r1", "r2"):
        try:
            results[which] = _complement_size_cached(
                prevalences=tuple(float(p) for p in prevalences),
                size_a12=int(sizes["A12"]), precision_a12=float(guesses["A12"]), judged_a12=int(judged.get("A12", 0)),
                size_b1=int(sizes["B1"]), precision_b1=float(guesses["B1"]), judged_b1=int(judged.get("B1", 0)),
                size_b2=int(sizes["B2"]), precision_b2=float(guesses["B2"]), judged_b2=int(judged.get("B2", 0)),
                size_u=size_n, which=which, margin=float(margin), confidence=float(topic.confidence),
            )
        except ValueError as exc:
            raise SamplingError(f"Cannot size the dependence check of topic {topic.name!r}: {exc}") from exc
    # The prevalence that sets the plan: the largest (or first infeasible) over both classifiers.
    deciding = max(results.values(), key=lambda r: (not r.feasible, r.judged_u or 0))
    prevalence = deciding.prevalence_u
    considered = tuple(float(p) for p in prevalences)
    bounds = {w: r.sized.planned_lower_bound for w, r in results.items()}
    recalls = {w: r.sized.truth for w, r in results.items()}
    if size_n == 0:
        return ComplementPlan(size=0, prevalence_guess=prevalence, guess_source=source, judged=None, feasible=False,
                              margin=margin, planned_lower_bounds=bounds, planned_recalls=recalls,
                              expected_relevant_found=None,
                              reason="Every document of the corpus was retrieved by one of the classifiers: "
                                     "there is nothing outside the pair to check.", stage=stage, prevalences_considered=considered)
    if any(not r.feasible or r.judged_u is None for r in results.values()):
        return ComplementPlan(size=size_n, prevalence_guess=prevalence, guess_source=source, judged=None,
                              feasible=False, margin=margin, planned_lower_bounds=bounds, planned_recalls=recalls,
                              expected_relevant_found=None,
                              reason=f"Even judging all of N would leave the bound more than {margin:g} below the "
                                     "recall: the planned samples of A12, B1 and B2 are too small for it. Choose a "
                                     "narrower interval above, or a wider margin.", stage=stage, prevalences_considered=considered)
    m = max(int(r.judged_u or 0) for r in results.values())
    return ComplementPlan(size=size_n, prevalence_guess=prevalence, guess_source=source, judged=m, feasible=True,
                          margin=margin, planned_lower_bounds=bounds, planned_recalls=recalls,
                          expected_relevant_found=m * prevalence, reason=deciding.sized.reason, stage=stage, prevalences_considered=considered)


def complement_default(*, topic: Topic, half_width: float, margin: float = DEFAULT_COMPLEMENT_MARGIN) -> int:
    """The dependence check's total the plan includes by default: with a scorer, N's total in the joint plan of
    its score strata at `half_width` (when that plan is feasible); else ``complement_plan``'s size at the pair's
    plan, or 0 when none reaches the margin (or N is empty).

    The one rule for "no size given": the quote (``topic_launch_quote(complement=None)``), the plan page's launch,
    the confirmation and the API's quote and launch all resolve an absent size here, so they show one cost; an
    explicit 0 leaves the check out. With N in the default plan the report's headline can be design-based.
    """
    joint = topic_scored_plan(topic=topic, half_width=half_width)
    if joint is not None and joint.plan.feasible:
        # With a scorer: N's total in the joint plan of the score strata (annotation.services.sampling.strata).
        return joint.n_total
    plan = complement_plan(topic=topic, judged=planned_region_sizes(topic=topic, half_width=half_width), margin=margin)
    return int(plan.judged or 0) if plan.feasible else 0
