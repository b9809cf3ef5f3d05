"""Certification of a classifier: plan, lock, draw fresh, decide once (seed 004).

The protocol (docs/certification.md):

1. ``certification_plan_create`` sizes a certification sample from the labels
   the topic already has (the *pilot*) by power analysis: seed 004 Alg. 2 for
   F1, per-region sizes for pair-based recall, a QBCB size for recall on a
   uniform sample.  A pilot at or below the target cannot be certified; the
   plan then stores why (``pilot["reason"]``) instead of a size.
2. ``certification_plan_lock`` freezes the plan (the database refuses any later
   change: migration 0002) and draws the sample fresh — never a document the
   topic sampled before, never a gold document — with the plan's own seed, and
   publishes it as HITs like any other sample.
3. ``certification_decide`` computes the verdict exactly once, when every
   certification document has its label (or, for a monitored plan, as soon as
   the anytime-valid confidence sequence clears the target), and stores it with
   all its inputs and a checksum.  The verdict table refuses UPDATE and DELETE.

Statistics come from ``estimation.stats``; this module gathers counts and
stores results.
"""
from __future__ import annotations

from core.errors import ApplicationError
import hashlib
import json
import logging
import math
import secrets
from decimal import Decimal
from typing import Any

import numpy as np
from django.db import transaction
from django.utils import timezone
from pyroaring import BitMap

from annotation.models import (
    Classifier,
    ClassifierPair,
    Label,
    Region,
    SampledDocument,
    SampleDraw,
    Topic,
)
from annotation.services.retrieved_sets import bitmap_from_ids, classifier_bitmap, corpus_bitmap, pair_regions
from estimation.models import CertificationPlan, CertificationVerdict
from estimation.stats import certification as cert_stats
from estimation.stats import operating_characteristics as oc
from estimation.stats import planning
from estimation.stats.proportions import clopper_pearson_interval

logger = logging.getLogger(__name__)

Metric = CertificationPlan.Metric
Status = CertificationPlan.Status

# Judgments per document (three workers, majority vote).
JUDGMENTS_PER_DOCUMENT = 3
# Fields that define the test; frozen once the plan is locked (service and database).
FROZEN_FIELDS = ("metric", "target", "alpha", "power", "monitoring", "sample_size", "seed", "classifier", "topic")
# Monte Carlo settings of the verdict's bound (recorded in the verdict inputs).
VERDICT_DRAWS = 20_000
# Alg. 1 simulations per candidate size when planning F1.
PLAN_SIMULATIONS = 10_000
# Bound draws used while calibrating pair-recall sizes (see operating_characteristics).
PLAN_BOUND_DRAWS = 1_000
VERDICT_SCHEMA = 1
# A monitored plan's sample is this multiple of the fixed-sample size (a ceiling: it may
# stop far earlier); shared with the simulation so `certification_oc --monitor` measures it.
MONITORING_SIZE_FACTOR = oc.MONITORING_SIZE_FACTOR


class CertificationError(ApplicationError):
    """The request cannot be carried out; the message says why, in words a manager can act on."""


# =========================================================================== pilot


def _pilot_labels(*, topic: Topic) -> dict[int, bool]:
    """Majority labels of the topic's non-gold documents (one per document)."""
    rows = Label.objects.filter(topic=topic, gold__isnull=True, majority__isnull=False).values_list(
        "document_id", "majority")
    return {doc_id: bool(majority) for doc_id, majority in rows}


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
    labels = _pilot_labels(topic=topic)
    regions = {}
    for region in ("A12", other):
        ids = set(SampledDocument.objects.filter(topic=topic, region=region, draw__purpose=SampleDraw.Purpose.PAIR)
                  .values_list("document_id", flat=True))
        judged = [labels[d] for d in ids if d in labels]
        regions[region] = {"size": sizes[region], "judged": len(judged), "relevant": int(sum(judged))}
    t12 = regions["A12"]["size"] * _ratio(regions["A12"]["relevant"], regions["A12"]["judged"])
    t_other = regions[other]["size"] * _ratio(regions[other]["relevant"], regions[other]["judged"])
    estimate = t12 / (t12 + t_other) if (t12 + t_other) > 0 else None
    return {"source": "pair regions", "which": which, "other_region": other, "regions": regions,
            "estimate": estimate}


def _ratio(k: int, n: int) -> float:
    return k / n if n else math.nan


def _uniform_pilot(*, topic: Topic, classifier: Classifier) -> dict[str, Any]:
    labels = _pilot_labels(topic=topic)
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
            sizes = oc.pair_recall_calibrated_size(
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
        size = oc.qbcb_certification_size(relevant=relevant, found=counts["tp"], judged=judged, target_recall=target,
                                          confidence=1.0 - alpha, power=power, seed=seed)
    except cert_stats.CertificationImpossible as exc:
        return {}, estimate, exc.reason
    if monitoring:
        size = min(pilot["corpus_size"], MONITORING_SIZE_FACTOR * size)
    return {Region.UNIFORM: int(size)}, estimate, None


def _cost(*, topic: Topic, documents: int) -> Decimal:
    """Reward and crowd fees of judging ``documents`` three times, in HITs of the topic's size."""
    try:
        from annotation.services.crowds import crowd_cost_per_assignment

        per_assignment = Decimal(crowd_cost_per_assignment(topic))
    except Exception:  # noqa: BLE001 - an unconfigured crowd: price the reward alone
        per_assignment = Decimal(topic.reward_per_hit)
    hits = math.ceil(documents / max(1, topic.hit_size))
    return (per_assignment * JUDGMENTS_PER_DOCUMENT * hits).quantize(Decimal("0.01"))


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
    """Compute the pilot, the sizes and the cost of a draft plan (in memory)."""
    if plan.metric == Metric.PAIR_RECALL:
        pilot = _pair_pilot(topic=plan.topic, classifier=plan.classifier)
    else:
        pilot = _uniform_pilot(topic=plan.topic, classifier=plan.classifier)
    planning_seed = int(plan.pilot.get("planning_seed") or secrets.randbits(31))
    sizes, estimate, reason = _plan_sizes(metric=plan.metric, pilot=pilot, target=plan.target, alpha=plan.alpha,
                                          power=plan.power, seed=planning_seed, monitoring=plan.monitoring)
    total = sum(sizes.values())
    plan.pilot = _json_safe({**pilot, "estimate": estimate, "feasible": reason is None, "reason": reason,
                             "planning_seed": planning_seed, "classifier_fingerprint": plan.classifier.fingerprint,
                             "planned_at": timezone.now().isoformat()})
    plan.sample_size = {**sizes, "total": total} if reason is None else {}
    plan.estimated_cost = _cost(topic=plan.topic, documents=total) if reason is None else None


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


def certification_plan_update(*, plan_id: int, metric: str | None = None, target: float | None = None,
                              alpha: float | None = None, power: float | None = None,
                              monitoring: bool | None = None, classifier: Classifier | None = None,
                              user=None) -> CertificationPlan:
    """Change a draft plan and re-plan it from the current pilot.  Locked and decided plans are refused."""
    with transaction.atomic():
        plan = CertificationPlan.objects.select_for_update().select_related("topic", "classifier").get(pk=plan_id)
        if plan.status != Status.DRAFT:
            raise CertificationError(f"Plan {plan.pk} is {plan.get_status_display().lower()}: a locked plan cannot "
                                     "change. Create a new plan (and a new sample) instead.")
        for name, value in (("metric", metric), ("target", target), ("alpha", alpha), ("power", power),
                            ("monitoring", monitoring), ("classifier", classifier)):
            if value is not None:
                setattr(plan, name, value)
        _check_parameters(topic=plan.topic, classifier=plan.classifier, metric=plan.metric, target=plan.target,
                          alpha=plan.alpha, power=plan.power, monitoring=plan.monitoring)
        plan.pilot = {"planning_seed": (plan.pilot or {}).get("planning_seed")}
        _fill(plan)
        plan.save()
        return plan


def _excluded_documents(*, topic: Topic) -> BitMap:
    """Every document the topic sampled or labelled before (the pilot) and every gold document."""
    sampled = SampledDocument.objects.filter(topic=topic).values_list("document_id", flat=True)
    labelled = Label.objects.filter(topic=topic).values_list("document_id", flat=True)
    return bitmap_from_ids(sampled) | bitmap_from_ids(labelled)


def _region_seed(seed: int, index: int) -> int:
    state = np.random.SeedSequence([int(seed), index]).generate_state(2, dtype=np.uint32)
    return int((int(state[0]) << 30) ^ int(state[1])) & (2**62 - 1)


def certification_plan_lock(*, plan_id: int, user, seed: int | None = None,
                            publish: bool = True) -> CertificationPlan:
    """Lock a draft plan, choose its seed, draw the fresh certification sample and publish its HITs.

    One transaction: if the budget refuses the HITs, the plan stays a draft.
    """
    from annotation.services.hits import hits_create_for_draws, hits_publish
    from annotation.services.sampling import region_bitmap, region_sample_draw

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
        draws = []
        for index, (region, k) in enumerate(sorted((r, n) for r, n in plan.sample_size.items() if r != "total")):
            if k <= 0:
                continue
            draws.append(region_sample_draw(
                topic=topic, region=region, bitmap=region_bitmap(topic=topic, region=region), k=int(k),
                seed=_region_seed(plan.seed, index), purpose=SampleDraw.Purpose.CERTIFICATION,
                certification_plan=plan, exclude=exclude))
        if sum(d.drawn for d in draws) == 0:
            raise CertificationError("Every document of the sampled regions was used by the pilot: nothing is left "
                                     "to certify on.")
        hits = hits_create_for_draws(topic=topic, draws=draws)
        Topic.objects.filter(pk=topic.pk, status=Topic.Status.DRAFT).update(status=Topic.Status.ACTIVE)
        if publish:
            hits_publish(hits=hits)
    return plan


# =========================================================================== decision


def _certification_documents(*, plan: CertificationPlan) -> list[dict[str, Any]]:
    """The locked sample: per document its region, the population it was drawn from, and its label."""
    rows = list(SampledDocument.objects.filter(draw__certification_plan=plan)
                .values_list("document_id", "region", "inclusion_probability").order_by("document_id"))
    labels = dict(Label.objects.filter(topic_id=plan.topic_id, document_id__in=[r[0] for r in rows])
                  .values_list("document_id", "majority"))
    drawn_by_region: dict[str, int] = {}
    for _, region, _ in rows:
        drawn_by_region[region] = drawn_by_region.get(region, 0) + 1
    documents = []
    for doc_id, region, probability in rows:
        label = labels.get(doc_id)
        documents.append({"id": doc_id, "region": region, "label": None if label is None else bool(label),
                          "population": int(round(drawn_by_region[region] / probability))})
    return documents


def _monitoring_order(documents: list[dict], seed: int) -> list[dict]:
    """A seeded random order of the sample (fixed at lock time, independent of the labels).

    The confidence sequence needs observations in an order that does not depend
    on their values; the order in which labels arrive might (relevant documents
    may take longer), so the sequence reads this order's longest judged prefix.
    """
    order = np.random.default_rng(int(seed) % (2**63)).permutation(len(documents))
    return [documents[i] for i in order]


def _judged_prefix(documents: list[dict]) -> list[dict]:
    prefix = []
    for document in documents:
        if document["label"] is None:
            break
        prefix.append(document)
    return prefix


def _fixed_evaluation(*, plan: CertificationPlan, documents: list[dict], retrieved: BitMap) -> dict[str, Any]:
    """The one-shot test on the whole judged sample: estimate, one-sided lower bound, pass."""
    if plan.metric == Metric.PAIR_RECALL:
        pilot = plan.pilot
        other, which = pilot["other_region"], pilot["which"]
        regions = {}
        for region in ("A12", other):
            judged = [d for d in documents if d["region"] == region]
            population = judged[0]["population"] if judged else 0
            regions[region] = (population, len(judged), sum(d["label"] for d in judged))
        from estimation.stats.pair_recall import stratified_pair_recall

        empty = (0, 0, 0)
        result = stratified_pair_recall(
            a12=regions["A12"], b1=regions[other] if which == "r2" else empty,
            b2=regions[other] if which == "r1" else empty, confidence=1.0 - 2.0 * plan.alpha,
            draws=VERDICT_DRAWS, seed=int(plan.seed) % (2**32), delta1_grid=(0.8, 0.9, 1.0, 1.1, 1.25))
        estimate = result.r1 if which == "r1" else result.r2
        low = 0.0 if estimate.low is None or math.isnan(estimate.low) else float(estimate.low)
        band = [{"delta1": p.delta1, "lower_bound": getattr(p, f"{which}_low"),
                 "passes": (getattr(p, f"{which}_low") or 0.0) >= plan.target} for p in result.sensitivity]
        return {"method": "stratified_pair_recall: one-sided lower bound = lower end of the two-sided "
                          f"{1 - 2 * plan.alpha:.0%} conservative Monte Carlo interval",
                "counts": {r: {"population": v[0], "judged": v[1], "relevant": v[2]} for r, v in regions.items()},
                "estimate": float(estimate.point) if estimate.point is not None else math.nan,
                "lower_bound": low, "passed": low >= plan.target, "sensitivity": band}
    counts = {"tp": 0, "fp": 0, "fn": 0, "tn": 0}
    for d in documents:
        hit = d["id"] in retrieved
        counts["tp" if hit and d["label"] else "fp" if hit else "fn" if d["label"] else "tn"] += 1
    if plan.metric == Metric.F1:
        interval = cert_stats.f1_interval(**counts, confidence=1.0 - plan.alpha, one_sided=True)
        low = cert_stats.f1_exact_lower_bound(tp=counts["tp"], fp=counts["fp"], fn=counts["fn"],
                                              confidence=1.0 - plan.alpha)
        return {"method": "exact one-sided bound: Clopper-Pearson upper limit on the error share "
                          "e = (FP + FN)/(TP + FP + FN), mapped through F1 = 2(1 - e)/(2 - e)",
                "counts": counts, "estimate": interval.estimate, "lower_bound": low,
                "appendix_a_lower_bound": interval.low,
                "passed": cert_stats.certification_passes(**counts, target=plan.target, alpha=plan.alpha)}
    relevant, found = counts["tp"] + counts["fn"], counts["tp"]
    passed = relevant > 0 and cert_stats.qbcb_passes(relevant=relevant, found=found, target_recall=plan.target,
                                                     confidence=1.0 - plan.alpha)
    low = (clopper_pearson_interval(relevant=found, judged=relevant, confidence=1.0 - plan.alpha, side="lower").low
           if relevant else 0.0)
    return {"method": "QBCB (Lewis, Yang & Frieder 2021): pass iff found >= j(r); bound = one-sided "
                      "Clopper-Pearson", "counts": counts,
            "required_found": (cert_stats.qbcb_min_found(r=relevant, target_recall=plan.target,
                                                         confidence=1.0 - plan.alpha) if relevant else None),
            "estimate": found / relevant if relevant else math.nan, "lower_bound": float(low), "passed": passed}


def _sequence_bound(*, plan: CertificationPlan, prefix: list[dict], retrieved: BitMap) -> float:
    """Anytime-valid lower bound (confidence sequence) from the judged prefix of the monitoring order."""
    from estimation.stats import confidence_sequence as cs

    if plan.metric == Metric.PAIR_RECALL:
        other = plan.pilot["other_region"]
        overlap = [int(d["label"]) for d in prefix if d["region"] == "A12"]
        others = [int(d["label"]) for d in prefix if d["region"] == other]
        sizes = {d["region"]: d["population"] for d in prefix}
        if not overlap:
            return 0.0
        return float(cs.pair_recall_lower_bound(overlap_size=sizes["A12"], overlap_outcomes=overlap,
                                                other_size=sizes.get(other, 0), other_outcomes=others,
                                                alpha=plan.alpha))
    if plan.metric == Metric.F1:
        # Documents that are relevant or retrieved: 1 for an error (FP or FN), 0 for a TP.
        errors = [int(d["label"] != (d["id"] in retrieved)) for d in prefix if d["label"] or d["id"] in retrieved]
        return float(cs.uniform_f1_lower_bound(errors=errors, alpha=plan.alpha)) if errors else 0.0
    found = [int(d["id"] in retrieved) for d in prefix if d["label"]]
    return float(cs.uniform_recall_lower_bound(found=found, alpha=plan.alpha)) if found else 0.0


def verdict_checksum(*, inputs: dict[str, Any], code_version: str) -> str:
    """sha256 of the canonical JSON of the inputs followed by the code version."""
    canonical = json.dumps(inputs, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=str)
    return hashlib.sha256((canonical + "\n" + code_version).encode()).hexdigest()


def _code_version() -> str:
    try:
        from estimation.services.reports import code_version_get

        return code_version_get()
    except Exception:  # noqa: BLE001
        return "unknown"


def _json_safe(value: Any) -> Any:
    """Plain JSON types with NaN/inf as None (PostgreSQL's jsonb refuses NaN)."""
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    return value if value is None or isinstance(value, str) else str(value)


def _finite(value: float) -> float:
    return value if isinstance(value, (int, float)) and math.isfinite(value) else 0.0


def certification_decide(*, plan_id: int) -> CertificationVerdict | None:
    """The verdict of a locked plan, computed once; None while its sample is not fully judged.

    Called again, it returns the stored verdict unchanged.  A monitored plan is
    also decided (passed) as soon as its confidence sequence clears the target
    on the judged prefix of its seeded order; the stop is recorded in the inputs.
    """
    with transaction.atomic():
        plan = (CertificationPlan.objects.select_for_update().select_related("topic", "classifier")
                .get(pk=plan_id))
        existing = CertificationVerdict.objects.filter(plan=plan).first()
        if existing is not None:
            return existing
        if plan.status != Status.LOCKED:
            return None
        documents = _certification_documents(plan=plan)
        if not documents:
            return None
        if plan.pilot.get("classifier_fingerprint") != plan.classifier.fingerprint:
            raise CertificationError(
                f"Classifier {plan.classifier.name!r} changed after plan {plan.pk} was locked: the locked sample "
                "certifies the classifier as it was, so no verdict is computed. Plan a new certification.")
        retrieved = classifier_bitmap(classifier=plan.classifier)
        complete = all(d["label"] is not None for d in documents)
        early_stop = None
        used = documents
        if plan.monitoring:
            ordered = _monitoring_order(documents, plan.seed)
            prefix = _judged_prefix(ordered)
            bound = _sequence_bound(plan=plan, prefix=prefix, retrieved=retrieved)
            if bound < plan.target and not complete:
                return None
            evaluation = _fixed_evaluation(plan=plan, documents=prefix, retrieved=retrieved) if prefix else {}
            evaluation = {**evaluation, "fixed_sample_lower_bound": evaluation.get("lower_bound"),
                          "lower_bound": bound, "passed": bound >= plan.target,
                          "method": "anytime-valid confidence sequence (Waudby-Smith & Ramdas betting), "
                                    "read on the judged prefix of the seeded order"}
            used = prefix
            if not complete:
                early_stop = {"judged": len(prefix), "planned": len(documents),
                              "reason": "the confidence sequence cleared the target before the sample was "
                                        "fully judged"}
        else:
            if not complete:
                return None
            evaluation = _fixed_evaluation(plan=plan, documents=documents, retrieved=retrieved)

        code_version = _code_version()
        inputs = {
            "schema": VERDICT_SCHEMA,
            "plan": {"id": plan.pk, "topic": plan.topic_id, "classifier": plan.classifier_id,
                     "classifier_fingerprint": plan.classifier.fingerprint, "metric": plan.metric,
                     "target": plan.target, "alpha": plan.alpha, "power": plan.power,
                     "monitoring": plan.monitoring, "seed": plan.seed, "sample_size": plan.sample_size},
            "documents": [[d["id"], d["region"], int(d["label"]), int(d["id"] in retrieved)] for d in used],
            "populations": {d["region"]: d["population"] for d in documents},
            "evaluation": _json_safe(evaluation),
            "early_stop": early_stop,
            "verdict_draws": VERDICT_DRAWS if plan.metric == Metric.PAIR_RECALL else None,
        }
        inputs = _json_safe(inputs)
        verdict = CertificationVerdict.objects.create(
            plan=plan, passed=bool(evaluation["passed"]), estimate=_finite(evaluation.get("estimate", math.nan)),
            lower_bound=_finite(evaluation["lower_bound"]), inputs=inputs, code_version=code_version,
            checksum=verdict_checksum(inputs=inputs, code_version=code_version))
        CertificationPlan.objects.filter(pk=plan.pk).update(status=Status.DECIDED)
        # The verdict is part of the topic's report: store a snapshot that shows it.
        from estimation.services.recompute import topic_recompute_schedule

        topic_recompute_schedule(topic_id=plan.topic_id)
        return verdict


def certifications_decide_ready() -> list[int]:
    """Decide every locked plan whose sample is ready; returns the ids of the plans decided now."""
    decided = []
    for plan_id in CertificationPlan.objects.filter(status=Status.LOCKED).values_list("pk", flat=True):
        try:
            if certification_decide(plan_id=plan_id) is not None:
                decided.append(plan_id)
        except Exception:  # noqa: BLE001 - one broken plan must not stop the sweep
            logger.exception("certification_decide failed for plan %s", plan_id)
    return decided


def certifications_decide_schedule(*, topic_id: int) -> None:
    """After the current transaction commits, try to decide the topic's locked plans (label hook)."""
    plan_ids = list(CertificationPlan.objects.filter(topic_id=topic_id, status=Status.LOCKED)
                    .values_list("pk", flat=True))
    if not plan_ids:
        return
    from estimation.tasks_certification import certification_decide_task

    for plan_id in plan_ids:
        transaction.on_commit(lambda plan_id=plan_id: certification_decide_task.delay(plan_id), robust=True)


# =========================================================================== reading


def _plan_state(plan: CertificationPlan, verdict: CertificationVerdict | None) -> str:
    if verdict is not None:
        return "pass" if verdict.passed else "fail"
    if plan.status == Status.LOCKED:
        return "pending"
    return "draft" if plan.pilot.get("feasible") else "infeasible"


def certification_plan_describe(*, plan: CertificationPlan) -> dict[str, Any]:
    """A plain, JSON-able description of a plan and its verdict, for reports and pages."""
    verdict = CertificationVerdict.objects.filter(plan=plan).first()
    state = _plan_state(plan, verdict)
    data: dict[str, Any] = {
        "plan_id": plan.pk, "classifier": plan.classifier.name, "classifier_id": plan.classifier_id,
        "metric": plan.metric, "metric_label": plan.get_metric_display(), "target": plan.target,
        "alpha": plan.alpha, "confidence": 1.0 - plan.alpha, "power": plan.power, "monitoring": plan.monitoring,
        "status": plan.status, "state": state, "sample_size": plan.sample_size,
        "estimated_cost": None if plan.estimated_cost is None else str(plan.estimated_cost),
        "pilot_estimate": plan.pilot.get("estimate"), "reason": plan.pilot.get("reason"),
        "locked_at": plan.locked_at.isoformat() if plan.locked_at else None,
    }
    if plan.status != Status.DRAFT:
        documents = SampledDocument.objects.filter(draw__certification_plan=plan)
        total = documents.count()
        judged = Label.objects.filter(topic_id=plan.topic_id, majority__isnull=False,
                                      document_id__in=documents.values("document_id")).count()
        data["progress"] = {"judged": judged, "documents": total}
    if verdict is not None:
        data["verdict"] = {"passed": verdict.passed, "estimate": verdict.estimate,
                           "lower_bound": verdict.lower_bound, "checksum": verdict.checksum,
                           "code_version": verdict.code_version, "created_at": verdict.created_at.isoformat(),
                           "early_stop": (verdict.inputs or {}).get("early_stop")}
    elif state == "pending":
        data["note"] = ("Pending: the certification sample is not fully judged. Estimates shown before the "
                        "verdict do not certify anything.")
    elif state == "infeasible":
        data["note"] = plan.pilot.get("reason")
    return data


def certification_summary(*, topic: Topic) -> dict[str, Any]:
    """The report's certification block: the latest plan's state, then every plan of the topic."""
    plans = list(CertificationPlan.objects.filter(topic=topic).select_related("classifier")
                 .order_by("-created_at", "-pk")[:20])
    if not plans:
        return {"state": "none"}
    described = [certification_plan_describe(plan=plan) for plan in plans]
    latest = described[0]
    return {"state": latest["state"], "latest": latest, "plans": described}
