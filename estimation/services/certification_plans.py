"""Certification plans: size from the pilot, update a draft, lock and draw fresh (seed 004).

The protocol (docs/certification.md):

1. ``certification_plan_create`` sizes a certification sample from the labels
   the topic already has (the *pilot*) by power analysis: seed 004 Alg. 2 for
   F1, per-region sizes for pair-based recall, a QBCB size for recall on a
   uniform sample.  A pilot at or below the target cannot be certified; the
   plan then stores why (``pilot["reason"]``) instead of a size.
   Pair recall is decided at the least favourable δ1 of the plan's declared band
   (``delta1_low``–``delta1_high``), so it is sized for the pair's bound to reach
   τ·δ1_high; a nested, identical or disjoint pair is refused
   (``pair_recall.pair_design_problems``), and so, on the pilot's evidence, is a nearly nested or
   nearly disjoint one (``pair_recall.pair_nesting_evidence``: the plan is then infeasible on the pair's
   model, and its reason says to certify with a dependence check).  The plan counts the *fresh*
   documents of each planned region (not sampled, labelled or gold before:
   ``_excluded_documents``) and stores them (``pilot["fresh"]``): a pair region
   whose planned size reaches its fresh documents is judged whole and marked
   *enumerated* (``pilot["enumerated"]``; its count is then exact, pilot
   included); a uniform sample larger than what remains is refused, naming the
   region and the shortfall.  With ``attempts`` > 1 the plan's ``alpha`` is the
   per-attempt (Šidák) share of ``family_alpha``.
2. ``certification_plan_lock`` (``estimation.services.certification_locks``) freezes the plan (the database refuses any later
   change: migrations 0002 and 0004) and draws the sample fresh — never a document the
   topic sampled before, never a gold document — with the plan's own seed, and
   publishes it as HITs like any other sample.  The draws are a stratum of their
   own in annotation's sampling (``certification_stratum_key``), linked to the
   plan here (``CertificationPlanDraw``).  A draw that comes back short of the
   plan rolls the lock back: the plan stays a draft.  Locking is a paid step:
   the page asks the manager to confirm the cost first (the view's job).
3. The verdict: ``estimation.services.certification_verdicts``.

An F1 plan can also be sized from a cross-validated confusion matrix the analyst
enters (seed 004 Sec. 4.4: the summed confusion matrices of n-fold
cross-validation stand in for the pilot): ``certification_plan_create_from_confusion``.
The counts are stored in ``pilot`` with their source and kept through updates;
everything after sizing (lock, fresh draw, verdict) is the same as for any plan.

Sizing is the slow part (seconds of power search by simulation), so no request does it: creating or
editing a plan checks its parameters and the refusals that need no sizing (``_refuse_before_sizing``),
stores the plan at once with its sizes cleared, and queues a sizing job (``CertificationSizing``, the
shared job base ``core.jobs``) after commit; without a broker it runs in-process. The task
(``estimation.tasks_sizing``) runs ``certification_sizing_run``: it stores the sizes only if its sizing is
still the plan's latest and the plan still has the parameters it was queued for (a result for an edited
plan is discarded). While a plan is being sized it cannot be locked (``CertificationPlanSizing``, code
``plan-sizing``, 409); the beat's "fail-stuck-certification-sizings" fails a sizing with no sign of life.

Statistics come from ``estimation.stats``; this module gathers counts and
stores results.
"""
from __future__ import annotations

import hashlib
import json
import math
import secrets
from collections.abc import Callable
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, ClassVar

import numpy as np
from django.conf import settings
from django.db import transaction
from django.utils import timezone
from pyroaring import BitMap
from scipy.stats import beta as beta_dist

from annotation.models import Classifier, ClassifierPair, Hit, Label, Region, SampledDocument, SampleDraw, Topic
from annotation.services.corpora.retrieved_sets import bitmap_from_ids, classifier_bitmap, corpus_bitmap, pair_regions
from annotation.services.crowd.crowds import crowd_cost_per_assignment
from annotation.services.sampling.draws import (
    PILOT_MIN_JUDGED,
    SampledRegion,
    region_bitmap,
    region_sample_labels,
)
from annotation.services.sampling.strata import region_score_strata, strata_pilot
from core.errors import ApplicationError
from core.jobs import (
    LIVE,
    JobStatus,
    job_begin,
    job_enqueue,
    job_enqueue_on_commit,
    job_fail,
    job_fail_exception,
    job_finish,
    job_progress_add,
    jobs_stuck_fail,
)
from estimation.models import CertificationPlan, CertificationSizing
from estimation.selectors import certification_attempt_family, certification_family_declaration
from estimation.stats import certification as cert_stats
from estimation.stats import certification_sizing as sizing
from estimation.stats import operating_characteristics as oc
from estimation.stats import planning
from estimation.stats.design_based import complement_prior_prevalences
from estimation.stats.pair_recall import pair_design_problems, pair_nesting_evidence, worker_accuracy_from_agreement

Metric = CertificationPlan.Metric
Status = CertificationPlan.Status

# Fields that define the test; frozen once the plan is locked (service and database).
FROZEN_FIELDS = ("metric", "target", "alpha", "power", "monitoring", "sample_size", "seed", "classifier", "topic",
                 "delta1_low", "delta1_high", "attempts", "family_alpha", "dependence_check")
# The regions a plan with a dependence check samples (N: retrieved by neither classifier).
DEPENDENCE_REGIONS = ("A12", "B1", "B2", Region.NEITHER)
# Pilot votes that agree as if workers were at least this accurate are planned for as perfect labels.
CROWD_PERFECT = 0.999
# The declared dependence band by default (notes §1: "a sensitivity band ... from 0.8 to 1.25").
DEFAULT_DELTA1_BAND = (0.8, 1.25)
# Alg. 1 simulations per candidate size when planning F1.
PLAN_SIMULATIONS = 10_000
# Bound draws used while calibrating pair-recall sizes (see estimation.stats.certification_sizing).
PLAN_BOUND_DRAWS = 1_000
# A monitored plan's sample is this multiple of the fixed-sample size (a ceiling: it may
# stop far earlier); shared with the simulation so `certification_oc --monitor` measures it.
MONITORING_SIZE_FACTOR = oc.MONITORING_SIZE_FACTOR


class CertificationError(ApplicationError):
    """The request cannot be carried out; the message says why, in words a manager can act on."""

    http_status: ClassVar[int] = 409
    code: ClassVar[str] = "conflict"


class CertificationPlanSizing(CertificationError):
    """The plan is being sized (its sizing task has not finished): it cannot be locked yet."""

    code: ClassVar[str] = "plan-sizing"


def certification_stratum_key(*, plan_id: int) -> str:
    """The opaque stratum key of a plan's certification draws in annotation's sampling."""
    return f"certification-plan:{plan_id}"


def certification_stratum_draw_key(*, plan_key: str, position: int) -> str:
    """The stratum key of the certification draw of N's score stratum at ``position`` (1-based) of the plan's
    ``pilot["n_plan"]``: "certification-plan:<id>/s<position>" (the score key itself is in the frozen plan; the
    column holds 64 characters)."""
    return f"{plan_key}/s{position}"


# =========================================================================== pilot


def _topic_pair(topic: Topic) -> ClassifierPair | None:
    return ClassifierPair.objects.select_related("c1", "c2").filter(topic=topic).first()


def _pair_role(*, topic: Topic, classifier: Classifier) -> tuple[ClassifierPair, str, str]:
    """(pair, "r1" | "r2", the region besides A12 that measures the classifier's recall)."""
    pair = _topic_pair(topic)
    if pair is None:
        raise CertificationError(f"Topic {topic.name!r} has no classifier pair: pair-based recall needs one.")
    if classifier.pk == pair.c1_id:
        return pair, "r1", "B2"
    if classifier.pk == pair.c2_id:
        return pair, "r2", "B1"
    raise CertificationError(
        f"Pair-based recall certifies one of the topic's pair ({pair.c1.name} or {pair.c2.name}); "
        f"use F1 or QBCB recall for {classifier.name}.")


def _pair_pilot(*, topic: Topic, classifier: Classifier) -> dict[str, Any]:
    pair, which, other = _pair_role(topic=topic, classifier=classifier)
    sizes = pair_regions(c1=pair.c1, c2=pair.c2).counts()
    counted: dict[str, SampledRegion] = region_sample_labels(topic=topic, regions=("A12", "B1", "B2"))
    regions = {region: {"size": sizes[region], "judged": counted[region].judged,
                        "relevant": counted[region].relevant} for region in ("A12", other)}
    t12 = regions["A12"]["size"] * _ratio(regions["A12"]["relevant"], regions["A12"]["judged"])
    t_other = regions[other]["size"] * _ratio(regions[other]["relevant"], regions[other]["judged"])
    estimate = t12 / (t12 + t_other) if (t12 + t_other) > 0 else None
    # Near-nesting on evidence (issue 24 #3): every region's size and pilot labels, the own region's too.
    triples = {region: (sizes[region], counted[region].judged, counted[region].relevant) for region in ("A12", "B1", "B2")}
    nesting = pair_nesting_evidence(a12=triples["A12"], b1=triples["B1"], b2=triples["B2"])
    return {"source": "pair regions", "which": which, "other_region": other, "regions": regions,
            "estimate": estimate, "nesting": nesting.as_dict()}


def _dependence_pilot(*, topic: Topic, classifier: Classifier) -> dict[str, Any]:
    """The pilot of a plan with a dependence check: all four regions A12, B1, B2 and N (retrieved by neither).

    With a scorer on the topic (``Topic.scorer``), N is planned, drawn and decided by its score strata
    (``annotation.services.sampling.strata``: the keys of the topic's dependence-check draws, or the cut
    points of ``estimation.stats.stratified``): ``n_strata`` holds each stratum's key, size and pilot."""
    pair, which, other = _pair_role(topic=topic, classifier=classifier)
    venn = pair_regions(c1=pair.c1, c2=pair.c2)
    neither = venn.by_code(Region.NEITHER)
    sizes = {**venn.counts(), Region.NEITHER: len(neither)}
    counted = region_sample_labels(topic=topic, regions=DEPENDENCE_REGIONS)
    regions = {region: {"size": sizes[region], "judged": counted[region].judged,
                        "relevant": counted[region].relevant} for region in DEPENDENCE_REGIONS}
    guesses = {r: planning.precision_guess_from_pilot(relevant=regions[r]["relevant"], judged=regions[r]["judged"])
               for r in ("A12", "B1", "B2")}
    n_strata = _n_strata(topic=topic, neither=neither)
    # The crowd's accuracy from the pilot's votes: the verdict corrects for label error, so the plan is sized
    # for the corrected bound (issue 23); unanimous votes (or none) plan for perfect labels.
    pilot_votes = [(int(r), int(t) - int(u)) for r, t, u in Label.objects.filter(
        topic=topic, gold__isnull=True, majority__isnull=False).values_list("votes_relevant", "votes_total",
                                                                             "votes_unsure")]
    accuracy = worker_accuracy_from_agreement(votes=pilot_votes)
    prevalences, source = _complement_prior(n_region=regions[Region.NEITHER], sizes=sizes, guesses=guesses,
                                            n_strata=n_strata)
    own = "B1" if which == "r1" else "B2"
    pair_relevant = sum(sizes[r] * guesses[r] for r in guesses)
    # The pilot's estimate at the prior's least prevalence (the most favourable N the prior allows): the
    # plan is sized at every prevalence of the prior under which the classifier can pass (_dependence_sizes).
    t_n = sizes[Region.NEITHER] * min(prevalences)
    total = pair_relevant + t_n
    estimate = (sizes["A12"] * guesses["A12"] + sizes[own] * guesses[own]) / total if total > 0 else None
    return {"source": "pair regions and the complement N", "which": which, "other_region": other,
            "regions": regions, "estimate": estimate, "guesses": guesses, "prevalences_n": list(prevalences),
            "prevalence_n_source": source, "n_strata": n_strata,
            "crowd_accuracy": accuracy if accuracy is not None and accuracy < CROWD_PERFECT else None,
            "scorer": ({"id": scorer.pk, "fingerprint": scorer.fingerprint, "name": scorer.name}
                       if n_strata and (scorer := topic.scorer) is not None else None)}


def _n_strata(*, topic: Topic, neither: BitMap) -> list[dict[str, Any]]:
    """N's score strata by the topic's scorer, each with its size and its pilot (judged, relevant) from the
    topic's dependence-check draws; [] without a scorer (N is then one simple random sample)."""
    strata = region_score_strata(topic=topic, region=Region.NEITHER, documents=neither)
    if not strata:
        return []
    pilot = strata_pilot(topic=topic, region=Region.NEITHER)
    return [{"key": s.key, "size": s.size, "judged": pilot[s.key].judged if s.key in pilot else 0,
             "relevant": pilot[s.key].relevant if s.key in pilot else 0} for s in strata]


def _complement_prior(*, n_region: dict, sizes: dict, guesses: dict,
                      n_strata: list[dict[str, Any]] | None = None) -> tuple[tuple[float, ...], str]:
    """The shares of relevant documents in N the plan is sized for, and what they rest on (issue 23, notes §9).

    Never the pair's own recall or a guessed δ1: before N has PILOT_MIN_JUDGED judged documents, the
    conservative prior ``design_based.complement_prior_prevalences`` (N holding 0.1, 1/3 or 1 times the
    relevant documents the pair's regions hold); after, N's own pilot: its Jeffreys mean and its one-sided
    95% Clopper–Pearson upper bound.  With score strata every one of them judged, N's pilot is weighed by
    stratum (Σ|s|·share_s/|N|; the upper bound the sum of each stratum's 95% upper bound: conservative).
    """
    size_n = int(n_region["size"])
    judged, relevant = int(n_region["judged"]), int(n_region["relevant"])
    if n_strata and all(s["judged"] > 0 for s in n_strata) and sum(s["judged"] for s in n_strata) >= PILOT_MIN_JUDGED:
        means = [planning.precision_guess_from_pilot(relevant=s["relevant"], judged=s["judged"]) for s in n_strata]
        uppers = [float(beta_dist.ppf(0.95, s["relevant"] + 1, s["judged"] - s["relevant"]))
                  if s["relevant"] < s["judged"] else 1.0 for s in n_strata]
        mean = sum(s["size"] * m for s, m in zip(n_strata, means, strict=True)) / max(size_n, 1)
        upper = min(1.0, sum(s["size"] * u for s, u in zip(n_strata, uppers, strict=True)) / max(size_n, 1))
        judged = sum(s["judged"] for s in n_strata)
        relevant = sum(s["relevant"] for s in n_strata)
        return (mean, upper), (f"N's own pilot by score stratum ({relevant} relevant of {judged} judged in "
                               f"{len(n_strata)} strata): its stratified Jeffreys mean {mean:.4%} and the sum of "
                               f"each stratum's 95% upper bound {upper:.4%}")
    # N's pilot as one simple random sample: only when no stratum has its own (a partly stratified pilot's
    # raw share over-weights the small top strata it samples hardest)
    if judged >= PILOT_MIN_JUDGED and not any(s["judged"] for s in n_strata or ()):
        mean = planning.precision_guess_from_pilot(relevant=relevant, judged=judged)
        upper = float(beta_dist.ppf(0.95, relevant + 1, judged - relevant)) if relevant < judged else 1.0
        return (mean, upper), (f"N's own pilot ({relevant} relevant of {judged} judged): its Jeffreys mean "
                               f"{mean:.4%} and its 95% upper bound {upper:.4%}")
    pair_relevant = sum(sizes[r] * guesses[r] for r in ("A12", "B1", "B2"))
    prevalences = complement_prior_prevalences(pair_relevant=pair_relevant, size_u=size_n)
    return prevalences, (f"a conservative prior on what N may hold, not the pair's figures: N holding "
                         f"{', '.join(f'{x:g}' for x in (0.1, 0.33, 1))} times the ≈ {pair_relevant:,.0f} relevant "
                         f"documents the pair's regions hold ({', '.join(f'{p:.4%}' for p in prevalences)} of N's "
                         f"{size_n:,} documents)")


def _ratio(k: int, n: int) -> float:
    return k / n if n else math.nan


def _uniform_pilot(*, topic: Topic, classifier: Classifier) -> dict[str, Any]:
    labels = {doc_id: bool(majority) for doc_id, majority in Label.objects.filter(
        topic=topic, gold__isnull=True, majority__isnull=False).values_list("document_id", "majority")}
    ids = set(SampledDocument.objects.filter(topic=topic, region=Region.UNIFORM,
                                             draw__purpose=SampleDraw.Purpose.UNIFORM)
              .values_list("document_id", flat=True))
    retrieved = classifier_bitmap(classifier=classifier)
    counts = {"tp": 0, "fp": 0, "fn": 0, "tn": 0}
    for doc_id in ids:
        if doc_id not in labels:
            continue
        hit, relevant = doc_id in retrieved, labels[doc_id]
        counts["tp" if hit and relevant else "fp" if hit else "fn" if relevant else "tn"] += 1
    corpus = len(corpus_bitmap(corpus=topic.corpus)) or topic.corpus.document_count
    return {"source": "uniform sample", "counts": counts, "corpus_size": corpus,
            "retrieved": len(retrieved), "retrieved_fraction": (len(retrieved) / corpus) if corpus else None}


# The pilot of an F1 plan sized from a cross-validated confusion matrix (seed 004 Sec. 4.4).
CONFUSION_SOURCE = "cross-validated confusion matrix"
CONFUSION_PILOT_KEYS = ("source", "counts", "folds")
# Enough data to size from: a matrix of fewer documents, or fewer relevant ones, leaves the posterior of seed 004
# Sec. 4.3 so wide that no size reaches the power (and cross-validation on so few documents understates F1 most).
CONFUSION_MIN_DOCUMENTS = 50
CONFUSION_MIN_RELEVANT = 10


def _from_confusion(pilot: dict | None) -> bool:
    return (pilot or {}).get("source") == CONFUSION_SOURCE


def confusion_counts_check(*, tp: Any, fp: Any, fn: Any, tn: Any) -> dict[str, int]:
    """The four counts of a cross-validated confusion matrix as whole numbers, or a CertificationError saying
    what is wrong (negative, not whole, too few documents or relevant documents, no true positive)."""
    counts: dict[str, int] = {}
    for name, value in (("tp", tp), ("fp", fp), ("fn", fn), ("tn", tn)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise CertificationError(f"{name.upper()} must be a whole number of documents, 0 or more (got {value!r}).")
        counts[name] = int(value)
    total, relevant = sum(counts.values()), counts["tp"] + counts["fn"]
    if total < CONFUSION_MIN_DOCUMENTS:
        raise CertificationError(f"The confusion matrix holds {total} documents: at least {CONFUSION_MIN_DOCUMENTS} "
                                 "are needed to size a certification from it.")
    if relevant < CONFUSION_MIN_RELEVANT:
        raise CertificationError(f"The confusion matrix holds {relevant} relevant documents (TP + FN): at least "
                                 f"{CONFUSION_MIN_RELEVANT} are needed to size a certification from it.")
    if counts["tp"] == 0:
        raise CertificationError("The confusion matrix has no true positive: its F1 is 0, and no certification "
                                 "sample of any size would pass.")
    return counts


def _confusion_pilot(*, plan: CertificationPlan) -> dict[str, Any]:
    """The entered counts as the pilot, with the corpus's own retrieved fraction (known exactly; the training
    data's may differ, e.g. a balanced training set)."""
    retrieved = classifier_bitmap(classifier=plan.classifier)
    corpus = len(corpus_bitmap(corpus=plan.topic.corpus)) or plan.topic.corpus.document_count
    return {"source": CONFUSION_SOURCE, "counts": dict(plan.pilot["counts"]), "folds": plan.pilot.get("folds"),
            "corpus_size": corpus, "retrieved": len(retrieved),
            "retrieved_fraction": (len(retrieved) / corpus) if corpus else None}


# =========================================================================== plan computation


def _figure(value: float) -> str:
    """A target or bound in words: two decimals at least (0.40), three when needed (0.599)."""
    text = f"{value:.3f}".rstrip("0")
    return text + "0" * max(0, 2 - len(text.partition(".")[2]))


def band_arithmetic(*, target: float, delta1_low: float, delta1_high: float) -> str:
    """Why the pair's bound must exceed τ: the declared band's arithmetic, in words."""
    high = max(1.0, delta1_high)
    return (f"the pair's bound must reach {_figure(target)} × {high:g} = {_figure(target * high)}, because the "
            f"verdict is decided at the least favourable dependence of the declared band {delta1_low:g}–{high:g}")


def pair_sizing_target(*, target: float, delta1_high: float) -> float:
    """The pair bound the verdict needs: at the least favourable δ1 of [low, high] (high ≥ 1) the bound
    on recall is min(1, pair bound / δ1_high), so the plan is sized for the pair bound to reach τ·δ1_high."""
    return target * max(1.0, delta1_high)


def _dependence_sizes(*, pilot: dict, target: float, alpha: float, power: float,
                      seed: int) -> tuple[dict[str, int], float | None, str | None]:
    """Sizes of A12, B1, B2 and N for the design-based verdict (no independence assumption).

    ``certification_sizing.design_basis_certification_plan``: at every prevalence of N's prior under which
    the recall is above the target, the largest plan (power where passing is right; a prevalence under which
    it is not is one where failing is right).  With score strata (``pilot["n_strata"]``) N is sized stratum
    by stratum, the prior's relevant documents of N spread over the strata as their pilot shares spread
    them (evenly before every stratum is judged); ``pilot["n_plan"]`` then holds each stratum's planned size.
    """
    regions, estimate = pilot["regions"], pilot["estimate"]
    for region in ("A12", "B1", "B2"):
        if regions[region]["judged"] == 0 and regions[region]["size"] > 0:
            return {}, estimate, (f"No pilot labels in region {region} yet: judge a pilot sample of the pair's "
                                  "regions first, so the certification sample can be sized.")
    n_strata = pilot.get("n_strata") or []
    if n_strata:
        u_strata = [(s["key"], int(s["size"])) for s in n_strata]
        weights = ([planning.precision_guess_from_pilot(relevant=s["relevant"], judged=s["judged"]) for s in n_strata]
                   if all(s["judged"] > 0 for s in n_strata) else None)
    else:
        u_strata, weights = [("N", int(regions[Region.NEITHER]["size"]))], None
    pair = {h: (int(regions[h]["size"]), float(pilot["guesses"][h])) for h in ("A12", "B1", "B2")}
    planned = sizing.design_basis_certification_plan(
        pair=pair, u_strata=u_strata, u_weights=weights, target=target, alpha=alpha, power=power,
        which=pilot["which"], seed=seed % (2**32), accuracy=pilot.get("crowd_accuracy"),
        prevalences=pilot.get("prevalences_n") or [pilot.get("prevalence_n", 0.0)])
    pilot["sized_for"] = [{"prevalence_n": p, "documents": documents, "truth": truth}
                          for p, documents, truth in planned.per_prevalence]
    if planned.sized is None:
        return {}, estimate, planned.refused[-1][1] if planned.refused else "N's prior gave no prevalence to plan for."
    sized = planned.sized
    pilot["prevalence_n"] = planned.prevalence_u
    pilot["sizing"] = {"power": sized.power, "simulations": sized.evaluations, "analytic_total": sized.analytic_total}
    if n_strata:
        pilot["n_plan"] = [{"key": key, "size": size, "planned": int(n)}
                           for (key, size), n in zip(u_strata, sized.judged[3:], strict=True)]
    return ({"A12": sized.regions["A12"], "B1": sized.regions["B1"], "B2": sized.regions["B2"],
             Region.NEITHER: sized.regions["U"]}, float(sized.truth), None)


def _plan_sizes(*, metric: str, pilot: dict, target: float, alpha: float, power: float, seed: int,
                monitoring: bool, delta1_high: float = 1.0, delta1_low: float = DEFAULT_DELTA1_BAND[0],
                dependence_check: bool = False) -> tuple[dict[str, int], float | None, str | None]:
    """(sample sizes by region, pilot estimate, reason when no size can reach the power)."""
    if metric == Metric.PAIR_RECALL and dependence_check:
        return _dependence_sizes(pilot=pilot, target=target, alpha=alpha, power=power, seed=seed)
    if metric == Metric.PAIR_RECALL:
        regions, other = pilot["regions"], pilot["other_region"]
        estimate = pilot["estimate"]
        nesting = pilot.get("nesting") or {}
        if nesting.get("refused"):
            return {}, estimate, " ".join(d["message"] for d in nesting.get("problems", ()))
        for region in ("A12", other):
            if regions[region]["judged"] == 0:
                return {}, estimate, (f"No pilot labels in region {region} yet: judge a pilot sample of the pair's "
                                      "regions first, so the certification sample can be sized.")
        if estimate is not None and estimate <= target:
            return {}, estimate, (
                f"The pilot estimate of recall ({estimate:.3f}) is not above the target {target:.3f}: no "
                "certification sample of any size would pass with the required power (seed 004, Alg. 2, "
                "line 1). Improve the classifier, or judge more pilot documents if the pilot is small.")
        needed = pair_sizing_target(target=target, delta1_high=delta1_high)
        why = band_arithmetic(target=target, delta1_low=delta1_low, delta1_high=delta1_high)
        if needed >= 1.0:
            return {}, estimate, (
                f"No sample can pass: {why}, and no bound can exceed 1. Lower the target, or narrow the band only "
                "if you can justify that the two classifiers are close to independent.")
        if estimate is not None and estimate <= needed:
            return {}, estimate, (
                f"The pilot estimate of recall ({estimate:.3f}) is above the target {_figure(target)} but not above "
                f"{_figure(needed)}: {why}. No certification sample of any size would pass with the required "
                "power. Improve the classifier, lower the target, or narrow the band only if you can justify that "
                "the two classifiers are close to independent.")
        band_note = (f" ({_figure(needed)} is not the target {_figure(target)}: {why}.)" if needed != target
                     else "")
        target = needed
        guess = {r: planning.precision_guess_from_pilot(relevant=regions[r]["relevant"], judged=regions[r]["judged"])
                 for r in ("A12", other)}
        try:
            sizes = sizing.pair_recall_calibrated_size(
                size_a12=regions["A12"]["size"], size_other=regions[other]["size"], p12=guess["A12"],
                p_other=guess[other], target=target, alpha=alpha, power=power, which=pilot["which"],
                draws=PLAN_BOUND_DRAWS, seed=seed % (2**32),
                pilot={"A12": (regions["A12"]["judged"], regions["A12"]["relevant"]),
                       "other": (regions[other]["judged"], regions[other]["relevant"])})
        except cert_stats.CertificationImpossible as exc:
            return {}, estimate, str(exc.reason) + band_note
        plan = {"A12": int(sizes["A12"]), other: int(sizes[other])}
        if monitoring:
            plan = {region: min(regions[region]["size"], MONITORING_SIZE_FACTOR * n) for region, n in plan.items()}
        return plan, estimate, None

    counts = pilot["counts"]
    judged = sum(counts.values())
    if judged == 0:
        return {}, None, ("No labelled uniform sample yet: draw and judge a uniform pilot sample of the corpus, "
                          "so the certification sample can be sized.")
    if metric == Metric.F1:
        denominator = 2 * counts["tp"] + counts["fp"] + counts["fn"]
        estimate = 2 * counts["tp"] / denominator if denominator else 0.0
        try:
            size = cert_stats.certification_test_size(
                **counts, target=target, alpha=alpha, power=power, seed=seed, simulations=PLAN_SIMULATIONS,
                retrieved_fraction=pilot["retrieved_fraction"])
        except cert_stats.CertificationImpossible as exc:
            return {}, estimate, exc.reason
        return {Region.UNIFORM: int(size)}, estimate, None
    relevant = counts["tp"] + counts["fn"]
    estimate = counts["tp"] / relevant if relevant else None
    try:
        size = sizing.qbcb_certification_size(relevant=relevant, found=counts["tp"], judged=judged,
                                              target_recall=target, confidence=1.0 - alpha, power=power, seed=seed)
    except cert_stats.CertificationImpossible as exc:
        return {}, estimate, exc.reason
    if monitoring:
        size = min(pilot["corpus_size"], MONITORING_SIZE_FACTOR * size)
    return {Region.UNIFORM: int(size)}, estimate, None


def _cost(*, topic: Topic, documents: int) -> Decimal:
    """Reward and crowd fees of judging ``documents`` by every assignment of a HIT, in HITs of the topic's size.

    An unknown crowd raises the crowd's ApplicationError: the manager is told, not shown a wrong price.
    """
    per_assignment = Decimal(crowd_cost_per_assignment(topic))
    hits = math.ceil(documents / max(1, topic.hit_size))
    return (per_assignment * Hit.ASSIGNMENTS_PER_HIT * hits).quantize(Decimal("0.01"))


def _check_parameters(*, topic: Topic, classifier: Classifier, metric: str, target: float, alpha: float,
                      power: float, monitoring: bool, delta1_low: float = DEFAULT_DELTA1_BAND[0],
                      delta1_high: float = DEFAULT_DELTA1_BAND[1], attempts: int = 1,
                      dependence_check: bool = False) -> None:
    if metric not in Metric.values:
        raise CertificationError(f"Unknown metric {metric!r}; choose one of {', '.join(Metric.values)}.")
    if not 0.0 < target < 1.0:
        raise CertificationError(f"The target must lie strictly between 0 and 1 (got {target!r}).")
    if not 0.0 < alpha < 0.5:
        raise CertificationError(f"α must lie strictly between 0 and 0.5 (got {alpha!r}).")
    if not 0.5 < power < 1.0:
        raise CertificationError(f"The power must lie strictly between 0.5 and 1 (got {power!r}).")
    if not 0.0 < delta1_low <= 1.0 <= delta1_high:
        raise CertificationError(
            f"The dependence band must contain δ1 = 1 (independence): 0 < low ≤ 1 ≤ high (got δ1 from "
            f"{delta1_low!r} to {delta1_high!r}).")
    if not 1 <= int(attempts) <= 100 or int(attempts) != attempts:
        raise CertificationError(f"The number of attempts must be a whole number from 1 to 100 (got {attempts!r}).")
    if classifier.corpus_id != topic.corpus_id:
        raise CertificationError(f"Classifier {classifier.name!r} does not belong to the topic's corpus.")
    if metric == Metric.PAIR_RECALL:
        pair, _, _ = _pair_role(topic=topic, classifier=classifier)
        _refuse_unmeasurable_pair(pair)
    if dependence_check and (metric != Metric.PAIR_RECALL or monitoring):
        raise CertificationError("A dependence check (a sample of the documents neither classifier retrieved) is "
                                 "part of pair-based recall certified in one test: choose pair-based recall "
                                 "without monitoring.")


def _refuse_unmeasurable_pair(pair: ClassifierPair) -> list[str]:
    """Refuse a pair whose Venn regions fix recall by construction (nested, identical, disjoint); else its warnings."""
    sizes = pair_regions(c1=pair.c1, c2=pair.c2).counts()
    check = pair_design_problems(size_a12=sizes["A12"], size_b1=sizes["B1"], size_b2=sizes["B2"])
    names = f"(C1 is {pair.c1.name}, C2 is {pair.c2.name})"
    if check.refused:
        reasons = " ".join(d.message for d in check.problems if d.severity == "error")
        raise CertificationError(f"This pair cannot certify recall {names}: {reasons}")
    return [f"{d.message} {names}" for d in check.problems]


def _family_attempts(*, classifier: Classifier, metric: str, alpha: float, attempts: int | None,
                     exclude_plan_id: int | None = None) -> tuple[float, int]:
    """(family α, declared attempts) of a plan: what the caller declared, or, when it declared no count and its
    family (this classifier and metric, any target, any topic) has a locked attempt, the family's declaration."""
    if attempts is not None:
        return float(alpha), int(attempts)
    declared = certification_family_declaration(family=certification_attempt_family(
        classifier_id=classifier.pk, metric=metric, exclude_plan_id=exclude_plan_id))
    if declared is None:
        return float(alpha), 1
    return declared[1], declared[0]


def _attempt_alpha(*, alpha: float, attempts: int) -> tuple[float, float | None]:
    """(per-attempt α, family α or None): α split over the declared attempts (Šidák, notes §8 "Retries")."""
    if attempts <= 1:
        return float(alpha), None
    return cert_stats.alpha_per_attempt(alpha=alpha, attempts=int(attempts)).sidak, float(alpha)


def _fresh_counts(*, topic: Topic, regions: list[str]) -> dict[str, int]:
    """Documents of each region that no earlier sample, label, gold or certification draw used."""
    excluded = _excluded_documents(topic=topic)
    return {region: len(region_bitmap(topic=topic, region=region) - excluded) for region in regions}


def _fit_to_fresh(*, metric: str, monitoring: bool, sizes: dict[str, int],
                  fresh: dict[str, int]) -> tuple[dict[str, int], list[str], str | None]:
    """(sizes that can be drawn, enumerated regions, reason when the plan cannot be carried out).

    A pair region whose plan reaches its fresh documents is taken whole: every document of the region is
    then judged (the pilot's and the new ones), so its relevant count is exact — at least as good as any
    sample of the planned size.  A monitored plan's size is a ceiling: it is cut to what remains.  A
    uniform sample larger than the fresh corpus cannot be drawn: refused, naming the shortfall.
    """
    fitted, enumerated, short = dict(sizes), [], []
    for region, n in sizes.items():
        if n < fresh[region]:
            continue
        if monitoring:
            fitted[region] = min(n, fresh[region])
        elif metric == Metric.PAIR_RECALL:
            fitted[region] = fresh[region]
            enumerated.append(region)
        elif n > fresh[region]:
            short.append(f"{region} needs {n} fresh documents, {fresh[region]} remain")
    if short:
        return {}, [], ("The certification sample cannot be drawn as planned: " + "; ".join(short) + " (the "
                        "others were sampled, labelled or used as gold before). Lower the target or the power "
                        "(a smaller sample), or certify on a topic with more unjudged documents.")
    if sum(fitted.values()) == 0:
        return {}, [], ("Every document of the planned regions was judged before (the pilot): nothing fresh is "
                        "left to certify on.")
    return fitted, sorted(enumerated), None


def n_stratum_populations(*, topic: Topic) -> dict[str, BitMap]:
    """N's documents by score stratum key (the topic's scorer; {} without one)."""
    neither = region_bitmap(topic=topic, region=Region.NEITHER)
    return {s.key: BitMap(s.documents) for s in region_score_strata(topic=topic, region=Region.NEITHER,
                                                                     documents=neither)}


def _fit_strata_to_fresh(*, topic: Topic, pilot: dict, sizes: dict[str, int]) -> dict[str, int]:
    """Each score stratum of N capped at its fresh documents (one whose plan reaches them is judged whole among
    them: its count over the fresh documents is then exact); N's size the strata's sum."""
    excluded = _excluded_documents(topic=topic)
    populations = n_stratum_populations(topic=topic)
    for row in pilot["n_plan"]:
        row["fresh"] = len(populations.get(row["key"], BitMap()) - excluded)
        row["planned"] = min(int(row["planned"]), row["fresh"])
    return {**sizes, Region.NEITHER: sum(int(row["planned"]) for row in pilot["n_plan"])}


def _refuse_before_sizing(plan: CertificationPlan) -> list[str]:
    """The refusals a plan gets at once, before any sizing (a pair that cannot measure recall, a confusion
    matrix for another metric): raises CertificationError; else the pair's design warnings."""
    if _from_confusion(plan.pilot) and plan.metric != Metric.F1:
        raise CertificationError("A cross-validated confusion matrix sizes F1 plans only (seed 004 Sec. 4.4): "
                                 "create a new plan from a labelled pilot for another metric.")
    if plan.metric != Metric.PAIR_RECALL:
        return []
    pair, _, _ = _pair_role(topic=plan.topic, classifier=plan.classifier)
    return _refuse_unmeasurable_pair(pair)


def _fill(plan: CertificationPlan, step: Callable[[], Any] | None = None) -> None:
    """Compute the pilot, the sizes and the cost of a draft plan (in memory; no lock needed). ``step`` is called
    after each of SIZING_STEPS steps (the sizing job's progress)."""
    step = step or (lambda: None)
    warnings = _refuse_before_sizing(plan)
    if plan.metric == Metric.PAIR_RECALL:
        pilot = (_dependence_pilot(topic=plan.topic, classifier=plan.classifier) if plan.dependence_check
                 else _pair_pilot(topic=plan.topic, classifier=plan.classifier))
    elif _from_confusion(plan.pilot):
        pilot = _confusion_pilot(plan=plan)
    else:
        pilot = _uniform_pilot(topic=plan.topic, classifier=plan.classifier)
    step()
    planning_seed = int(plan.pilot.get("planning_seed") or secrets.randbits(31))
    sizes, estimate, reason = _plan_sizes(metric=plan.metric, pilot=pilot, target=plan.target, alpha=plan.alpha,
                                          power=plan.power, seed=planning_seed, monitoring=plan.monitoring,
                                          delta1_high=plan.delta1_high, delta1_low=plan.delta1_low,
                                          dependence_check=plan.dependence_check)
    step()
    fresh = _fresh_counts(topic=plan.topic, regions=sorted(sizes)) if sizes else {}
    enumerated: list[str] = []
    if reason is None and pilot.get("n_plan"):
        sizes = _fit_strata_to_fresh(topic=plan.topic, pilot=pilot, sizes=sizes)
    if reason is None:
        sizes, enumerated, reason = _fit_to_fresh(metric=plan.metric, monitoring=plan.monitoring, sizes=sizes,
                                                  fresh=fresh)
        if pilot.get("n_plan"):  # N's strata are each drawn (or taken whole) on their own: never N as one region
            enumerated = [region for region in enumerated if region != Region.NEITHER]
    total = sum(sizes.values())
    sizing_target = (pair_sizing_target(target=plan.target, delta1_high=plan.delta1_high)
                     if plan.metric == Metric.PAIR_RECALL and not plan.dependence_check else plan.target)
    plan.pilot = json_safe({**pilot, "estimate": estimate, "feasible": reason is None, "reason": reason,
                            "planning_seed": planning_seed, "classifier_fingerprint": plan.classifier.fingerprint,
                            "planned_at": timezone.now().isoformat(), "fresh": fresh, "enumerated": enumerated,
                            "sizing_target": sizing_target, "design_warnings": warnings})
    plan.sample_size = {**sizes, "total": total} if reason is None else {}
    plan.estimated_cost = _cost(topic=plan.topic, documents=total) if reason is None else None
    step()


def json_safe(value: Any) -> Any:
    """Plain JSON types with NaN/inf as None (PostgreSQL's jsonb refuses NaN)."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    return value if value is None or isinstance(value, str) else str(value)


# =========================================================================== plan services


def certification_plan_create(*, topic: Topic, classifier: Classifier, metric: str, target: float,
                              alpha: float = 0.05, power: float = 0.9, monitoring: bool = False,
                              delta1_low: float = DEFAULT_DELTA1_BAND[0], delta1_high: float = DEFAULT_DELTA1_BAND[1],
                              attempts: int | None = None, dependence_check: bool = False,
                              user=None) -> CertificationPlan:
    """A draft plan: the pilot, the certification sample size by power analysis, and its cost.

    When no size can reach the power (pilot at or below the target, no pilot,
    a pilot too uncertain, too few fresh documents), the plan is still stored,
    with ``pilot["feasible"]`` false and the reason in ``pilot["reason"]``; it
    cannot be locked.  A pair that cannot measure recall (nested, identical,
    disjoint) is refused with a CertificationError.  With ``dependence_check`` the
    plan also samples region N (retrieved by neither) and is decided on the
    design-based bound instead of the δ1 band.  ``alpha`` is the family's
    false-pass rate: with ``attempts`` > 1 each attempt tests at its Šidák share.  ``attempts`` None means
    the family's declaration (the classifier and metric's first locked attempt, any target or topic), or 1.
    """
    alpha, attempts = _family_attempts(classifier=classifier, metric=metric, alpha=alpha, attempts=attempts)
    _check_parameters(topic=topic, classifier=classifier, metric=metric, target=target, alpha=alpha, power=power,
                      monitoring=monitoring, delta1_low=delta1_low, delta1_high=delta1_high, attempts=attempts,
                      dependence_check=dependence_check)
    per_attempt, family = _attempt_alpha(alpha=alpha, attempts=attempts)
    plan = CertificationPlan(topic=topic, classifier=classifier, metric=metric, target=float(target),
                             alpha=per_attempt, family_alpha=family, attempts=int(attempts), power=float(power),
                             monitoring=bool(monitoring), delta1_low=float(delta1_low),
                             delta1_high=float(delta1_high), dependence_check=bool(dependence_check),
                             created_by=user)
    _refuse_before_sizing(plan)
    with transaction.atomic():
        plan.save()
        _sizing_queue(plan)
    return plan


def certification_plan_create_from_confusion(*, topic: Topic, classifier: Classifier, target: float, tp: int,
                                             fp: int, fn: int, tn: int, alpha: float = 0.05, power: float = 0.9,
                                             attempts: int | None = None, folds: int | None = None,
                                             user=None) -> CertificationPlan:
    """A draft F1 plan sized from a cross-validated confusion matrix instead of a labelled pilot (seed 004 Sec. 4.4).

    ``tp, fp, fn, tn`` are the analyst's summed cross-validation counts (``folds`` the number of folds, for the
    record). They are stored in ``pilot`` with ``source`` = CONFUSION_SOURCE and size the plan exactly as a
    uniform pilot would (seed 004 Alg. 2, ``cert_stats.certification_test_size``, with the corpus's retrieved
    fraction); the plan rests on the training data's distribution, which the plan page says. Locking, the
    fresh draw and the verdict are those of any F1 plan: the counts never enter the verdict. Bad counts raise
    CertificationError; a matrix whose F1 is not above the target gives an infeasible plan with its reason.
    """
    counts = confusion_counts_check(tp=tp, fp=fp, fn=fn, tn=tn)
    if folds is not None and (isinstance(folds, bool) or int(folds) != folds or not 2 <= folds <= 1000):
        raise CertificationError(f"The number of folds must be a whole number from 2 to 1000 (got {folds!r}).")
    alpha, attempts = _family_attempts(classifier=classifier, metric=Metric.F1, alpha=alpha, attempts=attempts)
    _check_parameters(topic=topic, classifier=classifier, metric=Metric.F1, target=target, alpha=alpha,
                      power=power, monitoring=False, attempts=attempts)
    per_attempt, family = _attempt_alpha(alpha=alpha, attempts=attempts)
    plan = CertificationPlan(topic=topic, classifier=classifier, metric=Metric.F1, target=float(target),
                             alpha=per_attempt, family_alpha=family, attempts=int(attempts), power=float(power),
                             monitoring=False, created_by=user,
                             pilot={"source": CONFUSION_SOURCE, "counts": counts,
                                    "folds": None if folds is None else int(folds)})
    _refuse_before_sizing(plan)
    with transaction.atomic():
        plan.save()
        _sizing_queue(plan)
    return plan


def _refuse_unless_draft(plan: CertificationPlan) -> None:
    if plan.status != Status.DRAFT:
        raise CertificationError(f"Plan {plan.pk} is {plan.get_status_display().lower()}: a locked plan cannot "
                                 "change. Create a new plan (and a new sample) instead.")


def _replanned(plan: CertificationPlan, changes: dict[str, Any]) -> CertificationPlan:
    """The draft with ``changes`` applied and checked, its sizing cleared (in memory; the sizing job re-sizes
    it from the current pilot)."""
    _refuse_unless_draft(plan)
    changes = dict(changes)
    family = changes.pop("alpha", plan.family_alpha if plan.family_alpha is not None else plan.alpha)
    attempts = changes.pop("attempts", plan.attempts)
    for name, value in changes.items():
        setattr(plan, name, value)
    _check_parameters(topic=plan.topic, classifier=plan.classifier, metric=plan.metric, target=plan.target,
                      alpha=family, power=plan.power, monitoring=plan.monitoring, delta1_low=plan.delta1_low,
                      delta1_high=plan.delta1_high, attempts=attempts, dependence_check=plan.dependence_check)
    plan.alpha, plan.family_alpha = _attempt_alpha(alpha=family, attempts=attempts)
    plan.attempts = int(attempts)
    kept = ({key: plan.pilot[key] for key in CONFUSION_PILOT_KEYS if key in plan.pilot}
            if _from_confusion(plan.pilot) else {})  # entered counts are not re-read from labels: keep them
    plan.pilot = {"planning_seed": (plan.pilot or {}).get("planning_seed"), **kept}
    _refuse_before_sizing(plan)
    return plan


def certification_plan_update(*, plan_id: int, metric: str | None = None, target: float | None = None,
                              alpha: float | None = None, power: float | None = None,
                              monitoring: bool | None = None, classifier: Classifier | None = None,
                              delta1_low: float | None = None, delta1_high: float | None = None,
                              attempts: int | None = None, dependence_check: bool | None = None,
                              user=None) -> CertificationPlan:
    """Change a draft plan and re-size it from the current pilot (a sizing job, queued after commit): the plan is
    stored at once, its sizes cleared, as "sizing". Locked and decided plans are refused. A sizing still running
    for the plan's earlier parameters is superseded: its result is discarded (``certification_sizing_run``)."""
    changes = {name: value for name, value in (("metric", metric), ("target", target), ("alpha", alpha),
                                               ("power", power), ("monitoring", monitoring),
                                               ("classifier", classifier), ("delta1_low", delta1_low),
                                               ("delta1_high", delta1_high), ("attempts", attempts),
                                               ("dependence_check", dependence_check))
               if value is not None}
    plans = CertificationPlan.objects.select_related("topic", "topic__corpus", "classifier")
    with transaction.atomic():
        plan = _replanned(plans.select_for_update(of=("self",)).get(pk=plan_id), changes)
        plan.save()
        _sizing_queue(plan)
    return plan


# =========================================================================== the sizing job

# The sizing's steps (its progress): the pilot, the power search, the fresh documents and the cost.
SIZING_STEPS = 3
SIZING_QUEUE_DOWN = ("The sizing could not be queued (the task queue is unreachable): recompute the plan in a "
                     "moment to size it.")
SIZING_UNEXPECTED = ("The sizing stopped on an unexpected error (written to the server's log for the operator): "
                     "recompute the plan to try again.")
SIZING_SUPERSEDED = "Superseded: the plan was changed while this sizing ran; the latest sizing counts."
SIZING_STUCK = ("The sizing showed no sign of life for {minutes} minutes (its worker or the queue went away): "
                "recompute the plan to size it again.")
DEFAULT_SIZING_STUCK_SECONDS = 15 * 60
# The plan's columns a sizing is computed from (the confusion counts of a plan sized from them too).
_SIZING_PARAMETERS = ("metric", "target", "alpha", "power", "monitoring", "classifier_id", "delta1_low",
                      "delta1_high", "attempts", "family_alpha", "dependence_check")


def plan_parameters_fingerprint(plan: CertificationPlan) -> str:
    """A checksum of what a sizing of ``plan`` rests on: a result is stored only for the parameters it sized."""
    data: dict[str, Any] = {name: getattr(plan, name) for name in _SIZING_PARAMETERS}
    data["counts"] = (plan.pilot or {}).get("counts") if _from_confusion(plan.pilot) else None
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()


def certification_plan_sizing(*, plan_id: int) -> CertificationSizing | None:
    """The plan's latest sizing (its state); None for a plan sized before sizing was a job."""
    return CertificationSizing.objects.filter(plan_id=plan_id).order_by("-pk").first()


def certification_plan_refuse_while_sizing(*, plan_id: int) -> None:
    """Refuse (CertificationPlanSizing, code plan-sizing, 409) to lock a plan whose sizing has not finished."""
    sizing = certification_plan_sizing(plan_id=plan_id)
    if sizing is not None and sizing.status in LIVE:
        raise CertificationPlanSizing(f"Plan {plan_id} is still being sized ({sizing.job_percent}% done): its "
                                      "sample size and cost are not known yet. Lock it once the page shows them.")


def _sizing_queue(plan: CertificationPlan) -> CertificationSizing:
    """Supersede the plan's live sizings and queue a new one after commit (at once without a broker: then
    ``plan`` is refreshed with its sizes)."""
    for old in CertificationSizing.objects.filter(plan_id=plan.pk, status__in=LIVE).values_list("pk", flat=True):
        job_fail(model=CertificationSizing, job_id=old, message=SIZING_SUPERSEDED)
    plan.sample_size, plan.estimated_cost = {}, None
    plan.save(update_fields=["sample_size", "estimated_cost"])
    sizing = CertificationSizing.objects.create(plan=plan, parameters=plan_parameters_fingerprint(plan),
                                                total=SIZING_STEPS)
    job_enqueue_on_commit(job=sizing, enqueue=lambda: certification_sizing_enqueue(sizing_id=sizing.pk))
    if sizing.status != JobStatus.PENDING:  # run in-process (no broker): answer with the sized plan
        plan.refresh_from_db()
    return sizing


def certification_sizing_enqueue(*, sizing_id: int) -> bool:
    """Queue the sizing's task; with the queue down the sizing fails with the reason (recompute retries)."""
    from estimation.tasks_sizing import certification_sizing_task  # noqa: PLC0415 — the task imports this module

    return job_enqueue(model=CertificationSizing, job_id=sizing_id,
                       send=lambda: certification_sizing_task.delay(sizing_id=sizing_id),
                       queue_down=SIZING_QUEUE_DOWN, unexpected=SIZING_UNEXPECTED)


def _sizing_current(*, plan: CertificationPlan, sizing: CertificationSizing) -> bool:
    """The sizing is the plan's latest, the plan a draft with the parameters the sizing was queued for."""
    latest = certification_plan_sizing(plan_id=plan.pk)
    return (plan.status == Status.DRAFT and latest is not None and latest.pk == sizing.pk
            and plan_parameters_fingerprint(plan) == sizing.parameters)


def certification_sizing_run(*, sizing_id: int) -> CertificationSizing | None:
    """Size the plan (the task's work): pilot, power search, fresh documents, cost; store them on the plan.

    Safe twice: a sizing that is not waiting (started, done, failed, superseded) is left alone (None). The
    power search runs outside any lock; the result is stored under the plan's row lock only if the sizing is
    still running, still the plan's latest and the plan still has the parameters it was queued for, else it is
    discarded (the sizing is marked superseded). A CertificationError (a pair refused on the current pilot)
    or any other exception propagates: the task records it (``certification_sizing_fail``)."""
    if not job_begin(model=CertificationSizing, job_id=sizing_id):
        return None
    sizing = CertificationSizing.objects.get(pk=sizing_id)
    plans = CertificationPlan.objects.select_related("topic", "topic__corpus", "classifier")
    plan = plans.get(pk=sizing.plan_id)
    if not _sizing_current(plan=plan, sizing=sizing):
        job_fail(model=CertificationSizing, job_id=sizing_id, message=SIZING_SUPERSEDED)
        return None
    _fill(plan, step=lambda: job_progress_add(model=CertificationSizing, job_id=sizing_id, count=1))
    with transaction.atomic():
        current = plans.select_for_update(of=("self",)).get(pk=plan.pk)
        fresh = CertificationSizing.objects.select_for_update().get(pk=sizing_id)
        if fresh.status != JobStatus.RUNNING or not _sizing_current(plan=current, sizing=fresh):
            job_fail(model=CertificationSizing, job_id=sizing_id, message=SIZING_SUPERSEDED)
            return None
        current.pilot, current.sample_size, current.estimated_cost = plan.pilot, plan.sample_size, plan.estimated_cost
        current.save(update_fields=["pilot", "sample_size", "estimated_cost"])
        job_finish(job=fresh)
    return fresh


def certification_sizing_fail(*, sizing_id: int, exc: BaseException) -> bool:
    """Record why a sizing stopped: a CertificationError's message (words a manager can act on), else a pointer
    to the log."""
    return job_fail_exception(model=CertificationSizing, job_id=sizing_id, exc=exc, unexpected=SIZING_UNEXPECTED)


def certification_sizings_stuck_fail(*, now: datetime | None = None) -> int:
    """Fail sizings waiting or running with no sign of life for CERTIFICATION_SIZING_STUCK_SECONDS (default 15
    minutes; the beat's "fail-stuck-certification-sizings"); recomputing the plan sizes it again."""
    seconds = int(getattr(settings, "CERTIFICATION_SIZING_STUCK_SECONDS", DEFAULT_SIZING_STUCK_SECONDS))
    return len(jobs_stuck_fail(model=CertificationSizing, older_than=timedelta(seconds=seconds),
                               message=SIZING_STUCK.format(minutes=seconds // 60), now=now))


# =========================================================================== what a plan may draw


def _excluded_documents(*, topic: Topic) -> BitMap:
    """Every document the topic sampled or labelled before (the pilot) and every gold document."""
    sampled = SampledDocument.objects.filter(topic=topic).values_list("document_id", flat=True)
    labelled = Label.objects.filter(topic=topic).values_list("document_id", flat=True)
    return bitmap_from_ids(sampled) | bitmap_from_ids(labelled)
