"""Certification plans: size from the pilot, update a draft, lock and draw fresh (seed 004).

The protocol (docs/certification.md):

1. ``certification_plan_create`` sizes a certification sample from the labels
   the topic already has (the *pilot*) by power analysis: seed 004 Alg. 2 for
   F1, per-region sizes for pair-based recall, a QBCB size for recall on a
   uniform sample.  A pilot at or below the target cannot be certified; the
   plan then stores why (``pilot["reason"]``) instead of a size.
2. ``certification_plan_lock`` freezes the plan (the database refuses any later
   change: migration 0002) and draws the sample fresh — never a document the
   topic sampled before, never a gold document — with the plan's own seed, and
   publishes it as HITs like any other sample.  The draws are a stratum of their
   own in annotation's sampling (``certification_stratum_key``), linked to the
   plan here (``CertificationPlanDraw``).
3. The verdict: ``estimation.services.certification_verdicts``.

Sizing is the slow part (seconds): ``certification_plan_update`` computes it
from a plain read of the plan and takes the plan's row lock only to check that
the draft is still a draft, unchanged, and to save.

Statistics come from ``estimation.stats``; this module gathers counts and
stores results.
"""
from __future__ import annotations

import math
import secrets
from decimal import Decimal
from typing import Any

import numpy as np
from django.db import transaction
from django.utils import timezone
from pyroaring import BitMap

from annotation.models import Classifier, ClassifierPair, Hit, Label, Region, SampledDocument, SampleDraw, Topic
from annotation.services.crowds import crowd_cost_per_assignment
from annotation.services.hits import hits_create_for_draws, hits_publish
from annotation.services.retrieved_sets import bitmap_from_ids, classifier_bitmap, corpus_bitmap, pair_regions
from annotation.services.sampling import (
    SampledRegion,
    draw_seed_derive,
    region_bitmap,
    region_sample_draw,
    region_sample_labels,
)
from core.errors import ApplicationError
from estimation.models import CertificationPlan, CertificationPlanDraw
from estimation.stats import certification as cert_stats
from estimation.stats import certification_sizing as sizing
from estimation.stats import operating_characteristics as oc
from estimation.stats import planning

Metric = CertificationPlan.Metric
Status = CertificationPlan.Status

# Fields that define the test; frozen once the plan is locked (service and database).
FROZEN_FIELDS = ("metric", "target", "alpha", "power", "monitoring", "sample_size", "seed", "classifier", "topic")
# Alg. 1 simulations per candidate size when planning F1.
PLAN_SIMULATIONS = 10_000
# Bound draws used while calibrating pair-recall sizes (see estimation.stats.certification_sizing).
PLAN_BOUND_DRAWS = 1_000
# A monitored plan's sample is this multiple of the fixed-sample size (a ceiling: it may
# stop far earlier); shared with the simulation so `certification_oc --monitor` measures it.
MONITORING_SIZE_FACTOR = oc.MONITORING_SIZE_FACTOR
# The per-region seeds of a lock: draw_seed_derive(seed, region index) folded with this shift.
# Part of the recorded derivation of every locked plan's draws: never change it.
LOCK_SEED_SHIFT = 30


class CertificationError(ApplicationError):
    """The request cannot be carried out; the message says why, in words a manager can act on."""


def certification_stratum_key(*, plan_id: int) -> str:
    """The opaque stratum key of a plan's certification draws in annotation's sampling."""
    return f"certification-plan:{plan_id}"


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
    counted: dict[str, SampledRegion] = region_sample_labels(topic=topic, regions=("A12", other))
    regions = {region: {"size": sizes[region], "judged": counted[region].judged,
                        "relevant": counted[region].relevant} for region in ("A12", other)}
    t12 = regions["A12"]["size"] * _ratio(regions["A12"]["relevant"], regions["A12"]["judged"])
    t_other = regions[other]["size"] * _ratio(regions[other]["relevant"], regions[other]["judged"])
    estimate = t12 / (t12 + t_other) if (t12 + t_other) > 0 else None
    return {"source": "pair regions", "which": which, "other_region": other, "regions": regions,
            "estimate": estimate}


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


# =========================================================================== plan computation


def _plan_sizes(*, metric: str, pilot: dict, target: float, alpha: float, power: float, seed: int,
                monitoring: bool) -> tuple[dict[str, int], float | None, str | None]:
    """(sample sizes by region, pilot estimate, reason when no size can reach the power)."""
    if metric == Metric.PAIR_RECALL:
        regions, other = pilot["regions"], pilot["other_region"]
        estimate = pilot["estimate"]
        for region in ("A12", other):
            if regions[region]["judged"] == 0:
                return {}, estimate, (f"No pilot labels in region {region} yet: judge a pilot sample of the pair's "
                                      "regions first, so the certification sample can be sized.")
        if estimate is not None and estimate <= target:
            return {}, estimate, (
                f"The pilot estimate of recall ({estimate:.3f}) is not above the target {target:.3f}: no "
                "certification sample of any size would pass with the required power (seed 004, Alg. 2, "
                "line 1). Improve the classifier, or judge more pilot documents if the pilot is small.")
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
            return {}, estimate, str(exc.reason)
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
                      power: float, monitoring: bool) -> None:
    if metric not in Metric.values:
        raise CertificationError(f"Unknown metric {metric!r}; choose one of {', '.join(Metric.values)}.")
    if not 0.0 < target < 1.0:
        raise CertificationError(f"The target must lie strictly between 0 and 1 (got {target!r}).")
    if not 0.0 < alpha < 0.5:
        raise CertificationError(f"α must lie strictly between 0 and 0.5 (got {alpha!r}).")
    if not 0.5 < power < 1.0:
        raise CertificationError(f"The power must lie strictly between 0.5 and 1 (got {power!r}).")
    if classifier.corpus_id != topic.corpus_id:
        raise CertificationError(f"Classifier {classifier.name!r} does not belong to the topic's corpus.")
    if metric == Metric.PAIR_RECALL:
        _pair_role(topic=topic, classifier=classifier)


def _fill(plan: CertificationPlan) -> None:
    """Compute the pilot, the sizes and the cost of a draft plan (in memory; no lock needed)."""
    if plan.metric == Metric.PAIR_RECALL:
        pilot = _pair_pilot(topic=plan.topic, classifier=plan.classifier)
    else:
        pilot = _uniform_pilot(topic=plan.topic, classifier=plan.classifier)
    planning_seed = int(plan.pilot.get("planning_seed") or secrets.randbits(31))
    sizes, estimate, reason = _plan_sizes(metric=plan.metric, pilot=pilot, target=plan.target, alpha=plan.alpha,
                                          power=plan.power, seed=planning_seed, monitoring=plan.monitoring)
    total = sum(sizes.values())
    plan.pilot = json_safe({**pilot, "estimate": estimate, "feasible": reason is None, "reason": reason,
                            "planning_seed": planning_seed, "classifier_fingerprint": plan.classifier.fingerprint,
                            "planned_at": timezone.now().isoformat()})
    plan.sample_size = {**sizes, "total": total} if reason is None else {}
    plan.estimated_cost = _cost(topic=plan.topic, documents=total) if reason is None else None


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
                              user=None) -> CertificationPlan:
    """A draft plan: the pilot, the certification sample size by power analysis, and its cost.

    When no size can reach the power (pilot at or below the target, no pilot,
    a pilot too uncertain), the plan is still stored, with ``pilot["feasible"]``
    false and the reason in ``pilot["reason"]``; it cannot be locked.
    """
    _check_parameters(topic=topic, classifier=classifier, metric=metric, target=target, alpha=alpha, power=power,
                      monitoring=monitoring)
    plan = CertificationPlan(topic=topic, classifier=classifier, metric=metric, target=float(target),
                             alpha=float(alpha), power=float(power), monitoring=bool(monitoring), created_by=user)
    _fill(plan)
    plan.save()
    return plan


# What certification_plan_update compares under the lock: the draft it sized must be the draft stored.
_DRAFT_FIELDS = ("status", "metric", "target", "alpha", "power", "monitoring", "classifier_id", "pilot",
                 "sample_size", "estimated_cost")


def _draft_state(plan: CertificationPlan) -> tuple:
    return tuple(getattr(plan, name) for name in _DRAFT_FIELDS)


def _refuse_unless_draft(plan: CertificationPlan) -> None:
    if plan.status != Status.DRAFT:
        raise CertificationError(f"Plan {plan.pk} is {plan.get_status_display().lower()}: a locked plan cannot "
                                 "change. Create a new plan (and a new sample) instead.")


def _replanned(plan: CertificationPlan, changes: dict[str, Any]) -> CertificationPlan:
    """The draft with ``changes`` applied, checked and re-sized from the current pilot (in memory)."""
    _refuse_unless_draft(plan)
    for name, value in changes.items():
        setattr(plan, name, value)
    _check_parameters(topic=plan.topic, classifier=plan.classifier, metric=plan.metric, target=plan.target,
                      alpha=plan.alpha, power=plan.power, monitoring=plan.monitoring)
    plan.pilot = {"planning_seed": (plan.pilot or {}).get("planning_seed")}
    _fill(plan)
    return plan


def certification_plan_update(*, plan_id: int, metric: str | None = None, target: float | None = None,
                              alpha: float | None = None, power: float | None = None,
                              monitoring: bool | None = None, classifier: Classifier | None = None,
                              user=None) -> CertificationPlan:
    """Change a draft plan and re-plan it from the current pilot.  Locked and decided plans are refused.

    The sizing runs on a plain read of the plan, outside any lock; the plan's row
    lock is held only to check that it is still the same draft and to save.  If
    the draft changed meanwhile (another update, a lock), the re-plan is done once
    more under the lock, so the result never rests on a stale draft.
    """
    changes = {name: value for name, value in (("metric", metric), ("target", target), ("alpha", alpha),
                                               ("power", power), ("monitoring", monitoring),
                                               ("classifier", classifier)) if value is not None}
    plans = CertificationPlan.objects.select_related("topic", "topic__corpus", "classifier")
    read = plans.get(pk=plan_id)
    before = _draft_state(read)
    plan = _replanned(read, changes)
    with transaction.atomic():
        current = plans.select_for_update(of=("self",)).get(pk=plan_id)
        if _draft_state(current) != before:
            plan = _replanned(current, changes)  # rare: sized again, on the draft as it is now
        plan.save()
        return plan


# =========================================================================== lock


def _excluded_documents(*, topic: Topic) -> BitMap:
    """Every document the topic sampled or labelled before (the pilot) and every gold document."""
    sampled = SampledDocument.objects.filter(topic=topic).values_list("document_id", flat=True)
    labelled = Label.objects.filter(topic=topic).values_list("document_id", flat=True)
    return bitmap_from_ids(sampled) | bitmap_from_ids(labelled)


def certification_plan_lock(*, plan_id: int, user, seed: int | None = None,
                            publish: bool = True) -> CertificationPlan:
    """Lock a draft plan, choose its seed, draw the fresh certification sample and publish its HITs.

    One transaction: if the budget refuses the HITs, the plan stays a draft.
    """
    with transaction.atomic():
        topic_id = CertificationPlan.objects.values_list("topic_id", flat=True).get(pk=plan_id)
        # Lock order: topic, then plan (the sampling services lock the topic first too).
        topic = Topic.objects.select_for_update().get(pk=topic_id)
        plan = CertificationPlan.objects.select_for_update().select_related("classifier").get(pk=plan_id)
        if plan.status != Status.DRAFT:
            raise CertificationError(f"Plan {plan.pk} is already {plan.get_status_display().lower()}.")
        if not plan.pilot.get("feasible") or not plan.sample_size.get("total"):
            raise CertificationError("This plan has no feasible sample size: " + (plan.pilot.get("reason") or
                                     "re-plan it first."))
        if plan.pilot.get("classifier_fingerprint") != plan.classifier.fingerprint:
            raise CertificationError("The classifier changed since the plan was made: update the plan first.")
        plan.seed = int(seed) if seed is not None else secrets.randbits(62)
        plan.status = Status.LOCKED
        plan.locked_at = timezone.now()
        plan.locked_by = user
        plan.save(update_fields=["seed", "status", "locked_at", "locked_by"])

        exclude = _excluded_documents(topic=topic)
        key = certification_stratum_key(plan_id=plan.pk)
        draws = []
        for index, (region, k) in enumerate(sorted((r, n) for r, n in plan.sample_size.items() if r != "total")):
            if k <= 0:
                continue
            draws.append(region_sample_draw(
                topic=topic, region=region, bitmap=region_bitmap(topic=topic, region=region), k=int(k),
                seed=draw_seed_derive(seed=plan.seed, stream=index, shift=LOCK_SEED_SHIFT),
                purpose=SampleDraw.Purpose.CERTIFICATION, stratum_key=key, exclude=exclude))
        CertificationPlanDraw.objects.bulk_create([CertificationPlanDraw(plan=plan, draw=draw) for draw in draws])
        if sum(d.drawn for d in draws) == 0:
            raise CertificationError("Every document of the sampled regions was used by the pilot: nothing is left "
                                     "to certify on.")
        hits = hits_create_for_draws(topic=topic, draws=draws)
        Topic.objects.filter(pk=topic.pk, status=Topic.Status.DRAFT).update(status=Topic.Status.ACTIVE)
        if publish:
            hits_publish(hits=hits)
    return plan
