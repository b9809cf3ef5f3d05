"""Certification verdicts: decide a locked plan exactly once (seed 004).

``certification_decide`` computes the verdict once, when every certification
document has its label (or, for a monitored plan, as soon as the anytime-valid
confidence sequence clears the target), and stores it with all its inputs and
a checksum.  The verdict table refuses UPDATE and DELETE (migration 0002).

Locks: the evaluation (a 20,000-draw Monte Carlo bound for pair recall) is
computed from a plain read of the plan and its documents.  The plan's row lock is
then held only to check that nothing moved — still locked, still no verdict, the
same documents, labels and classifier (a checksum of the inputs used) — and to
write.  If something moved, the evaluation is done once more, under the lock.

Statistics come from ``estimation.stats``; this module gathers counts and
stores results.
"""
from __future__ import annotations

import hashlib
import json
import logging
import math
from typing import Any

import numpy as np
from django.db import transaction
from pyroaring import BitMap

from annotation.models import Classifier, Hit, Label, Region
from annotation.services.corpora.retrieved_sets import classifier_bitmap
from annotation.services.sampling.draws import region_bitmap
from core.events import event_send_on_commit
from estimation.events import CertificationDecided
from estimation.models import CertificationPlan, CertificationVerdict
from estimation.selectors import certification_sampled_documents, certification_shortfall
from estimation.services.certification_plans import (
    CertificationError,
    certification_stratum_draw_key,
    certification_stratum_key,
    json_safe,
)
from estimation.services.recompute import topic_recompute_schedule
from estimation.services.reports import code_version_get
from estimation.stats import certification as cert_stats
from estimation.stats import confidence_sequence as cs
from estimation.stats.design_based import design_based_recall, label_error_from_votes
from estimation.stats.pair_recall import stratified_pair_recall
from estimation.stats.proportions import clopper_pearson_interval
from estimation.stats.stratified import Stratum, stratified_design_recall

logger = logging.getLogger(__name__)

Metric = CertificationPlan.Metric
Status = CertificationPlan.Status

# Monte Carlo settings of the verdict's bound (recorded in the verdict inputs).
VERDICT_DRAWS = 20_000
VERDICT_SCHEMA = 1


# =========================================================================== the sample


def _certification_documents(*, plan: CertificationPlan) -> list[dict[str, Any]]:
    """The locked sample: per document its region, the population it was drawn from, and its label."""
    rows = list(certification_sampled_documents(plan=plan)
                .values_list("document_id", "region", "inclusion_probability", "draw__stratum_key")
                .order_by("document_id"))
    retrieved = classifier_bitmap(classifier=plan.classifier)
    found = list(Label.objects.filter(topic_id=plan.topic_id, document_id__in=[r[0] for r in rows])
                 .values_list("document_id", "majority", "gold", "votes_total", "votes_relevant", "votes_unsure"))
    labels = {doc_id: _verdict_label(majority=majority, gold=gold, votes_total=total, retrieved=doc_id in retrieved)
              for doc_id, majority, gold, total, _, _ in found}
    # Sure votes of crowd-judged documents (gold answers are known): the label error of the design bound.
    votes = {doc_id: (int(relevant), int(total) - int(unsure)) for doc_id, majority, gold, total, relevant, unsure
             in found if gold is None and majority is not None}
    # Each draw's stratum is its own simple random sample: a region's, or one score stratum of N's (a plan
    # sized by score strata draws N stratum by stratum, "certification-plan:<id>/s<k>").
    drawn_by_stratum: dict[tuple[str, str], int] = {}
    for _, region, _, key in rows:
        drawn_by_stratum[(region, key)] = drawn_by_stratum.get((region, key), 0) + 1
    documents = []
    for doc_id, region, probability, key in rows:
        label, undecided = labels.get(doc_id, (None, False))
        documents.append({"id": doc_id, "region": region, "label": label, "undecided": undecided,
                          "population": int(round(drawn_by_stratum[(region, key)] / probability)),
                          "stratum": key, "votes": votes.get(doc_id)})
    return documents


def _verdict_label(*, majority: bool | None, gold: bool | None, votes_total: int,
                   retrieved: bool) -> tuple[bool | None, bool]:
    """(label, undecided) of a certification document; label None while its judgments are still coming.

    A complete label without a majority (all workers unsure, or a tie among the sure votes) takes the value
    least favourable to a pass: not relevant when the certified classifier retrieved it (it would have been a
    hit), relevant when it did not (a miss).  That holds for recall, precision and F1 alike, so an undecided
    document can only pull a bound down: it never stalls a plan and never helps it pass.
    """
    if majority is not None:
        return bool(majority), False
    if gold is not None:
        return bool(gold), False
    if votes_total >= Hit.ASSIGNMENTS_PER_HIT:
        return (not retrieved), True
    return None, False


def _locked_seed(plan: CertificationPlan) -> int:
    """The plan's seed: set when the plan is locked, and only locked plans are evaluated."""
    assert plan.seed is not None
    return plan.seed


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


# =========================================================================== evaluation


def _delta1_grid(plan: CertificationPlan) -> tuple[float, ...]:
    """The plan's declared band as a grid: its ends, 1, and the default grid's points inside it."""
    low, high = float(plan.delta1_low), float(plan.delta1_high)
    inside = {d for d in cert_stats.DEFAULT_DELTA1_BAND if low <= d <= high}
    return tuple(sorted(inside | {low, 1.0, high}))


def _whole_region_counts(*, plan: CertificationPlan) -> dict[str, tuple[int, int, int]] | None:
    """(size, judged, relevant) of each whole pair region, pilot labels included; None until every document of an
    enumerated region has its label (only then is its count exact).  Only for plans with an enumerated region."""
    topic = plan.topic
    retrieved = classifier_bitmap(classifier=plan.classifier)
    labels = [(doc_id, _verdict_label(majority=majority, gold=gold, votes_total=total, retrieved=doc_id in retrieved)[0])
              for doc_id, majority, gold, total in
              Label.objects.filter(topic_id=plan.topic_id).values_list("document_id", "majority", "gold", "votes_total")]
    counts = {}
    for region in _plan_regions(plan):
        bitmap = region_bitmap(topic=topic, region=region)
        known = [bool(label) for doc_id, label in labels if label is not None and doc_id in bitmap]
        counts[region] = (len(bitmap), len(known), sum(known))
        if region in plan.pilot.get("enumerated", []) and len(known) < len(bitmap):
            return None
    return counts


def _plan_regions(plan: CertificationPlan) -> list[str]:
    """The regions of a pair plan: A12 and the other classifier's region, or all four with a dependence check."""
    if plan.dependence_check:
        return ["A12", "B1", "B2", Region.NEITHER]
    return ["A12", plan.pilot["other_region"]]


def _region_triples(*, plan: CertificationPlan, documents: list[dict],
                    whole: dict[str, tuple[int, int, int]] | None) -> dict[str, tuple[int, int, int]]:
    regions: dict[str, tuple[int, int, int]] = {}
    for region in _plan_regions(plan):
        if whole is not None:
            regions[region] = whole[region]
            continue
        judged = [d for d in documents if d["region"] == region]
        population = judged[0]["population"] if judged else 0
        regions[region] = (population, len(judged), sum(d["label"] for d in judged))
    return regions


def _n_strata_counts(*, plan: CertificationPlan, documents: list[dict]) -> list[dict[str, Any]] | None:
    """Per score stratum of N of a plan sized by strata (``pilot["n_plan"]``): its key, its population (the
    stratum's fresh documents, from the draw's inclusion probability), judged and relevant; None otherwise."""
    n_plan = plan.pilot.get("n_plan") or []
    if not n_plan:
        return None
    plan_key = certification_stratum_key(plan_id=plan.pk)
    counts = []
    for position, row in enumerate(n_plan, start=1):
        key = certification_stratum_draw_key(plan_key=plan_key, position=position)
        judged = [d for d in documents if d["region"] == Region.NEITHER and d.get("stratum") == key]
        population = judged[0]["population"] if judged else int(row.get("fresh", row["size"]))
        counts.append({"key": row["key"], "population": population, "judged": len(judged),
                       "relevant": sum(bool(d["label"]) for d in judged)})
    return counts


def _dependence_evaluation(*, plan: CertificationPlan, documents: list[dict],
                           whole: dict[str, tuple[int, int, int]] | None) -> dict[str, Any]:
    """Pair recall with a dependence check: ``design_based``'s conservative bound (notes §8), no δ1 assumed."""
    which = plan.pilot["which"]
    regions = _region_triples(plan=plan, documents=documents, whole=whole)
    seed = int(_locked_seed(plan)) % (2**32)
    # Label error from the votes' agreement (notes §3): the crowd's majority errs, and at N's low prevalence
    # its false positives would otherwise pass for missed relevant documents (or hide them).  Perfect
    # agreement (or no document with two sure votes) leaves the bound as it was.
    label_error = label_error_from_votes(votes=[d["votes"] for d in documents if d.get("votes") and d["votes"][1] >= 2],
                                         draws=VERDICT_DRAWS, seed=seed + 1)
    n_strata = _n_strata_counts(plan=plan, documents=documents)
    if n_strata is not None:
        # N decided by its score strata (stratified.stratified_design_recall; the pair's regions one stratum each)
        strata = [Stratum(region=r, size=regions[r][0], judged=regions[r][1], relevant=regions[r][2], key=r)
                  for r in ("A12", "B1", "B2")]
        strata += [Stratum(region="U", size=c["population"], judged=c["judged"], relevant=c["relevant"],
                           key=c["key"]) for c in n_strata]
        result = stratified_design_recall(strata=strata, confidence=1.0 - plan.alpha, draws=VERDICT_DRAWS,
                                          seed=seed, label_error=label_error)
        regions[Region.NEITHER] = (sum(c["population"] for c in n_strata), sum(c["judged"] for c in n_strata),
                                   sum(c["relevant"] for c in n_strata))
    else:
        result = design_based_recall(a12=regions["A12"], b1=regions["B1"], b2=regions["B2"],
                                     u=regions[Region.NEITHER], confidence=1.0 - plan.alpha, draws=VERDICT_DRAWS,
                                     seed=seed, label_error=label_error)
    recall = result.r1 if which == "r1" else result.r2
    low = recall.conservative_lower_bound
    delta1 = result.delta1
    enumerated = sorted(plan.pilot.get("enumerated") or [])
    assumes = ("Nothing about how the two classifiers depend on each other: the sample of the documents neither "
               "retrieved (N) measures what both missed, so the recall is measured over the whole corpus.")
    if delta1.point is not None and delta1.low is not None and delta1.high is not None:
        assumes += (f" Their dependence measured from it: δ1 = {delta1.point:.2f} [{delta1.low:.2f}, "
                    f"{delta1.high:.2f}]" + (" — independence is rejected." if result.independence_rejected
                                              else "."))
    if n_strata is not None:
        assumes += (f" N was sampled by the scorer's {len(n_strata)} score strata, each a simple random sample "
                    "weighed by its own size: the scores only chose where to look, so a poor scorer costs "
                    "documents, never the verdict's validity.")
    if label_error is not None and not label_error.perfect:
        assumes += (f" The crowd's majority labels err: every region's share is corrected for the error rates "
                    f"measured from the votes' agreement (Rogan–Gladen, {len(documents)} certification documents; "
                    f"false positives {float(label_error.fp_point):.2%}, false negatives "
                    f"{float(label_error.fn_point):.2%}), with their uncertainty.")
    else:
        assumes += (" It takes the crowd's majority labels as right (the workers' votes showed no disagreement to "
                    "correct for).")
    return {"method": ("design-based conservative one-sided bound with a complement sample drawn by score strata "
                       "(stratified_design_recall: Clopper–Pearson confidence distributions per stratum); no "
                       "independence assumption" if n_strata is not None else
                       "design-based conservative one-sided bound with a complement sample (design_based_recall: "
                       "Clopper–Pearson confidence distributions, exact on the complement); no independence "
                       "assumption"),
            "counts": {r: {"population": v[0], "judged": v[1], "relevant": v[2]} for r, v in regions.items()},
            "estimate": recall.point if recall.point is not None else math.nan,
            "lower_bound": 0.0 if low is None else float(low),
            "passed": low is not None and low >= plan.target,
            "pair_estimand": recall.pair_estimand, "delta1_estimate": delta1.as_dict(),
            "elusion": result.elusion.as_dict(), "independence_rejected": result.independence_rejected,
            "dependence_check": True, "enumerated": enumerated, "whole_regions": whole is not None,
            "n_strata": n_strata,
            "label_error": None if label_error is None else {
                "false_positive": float(label_error.fp_point),
                "false_negative": float(label_error.fn_point), "perfect": bool(label_error.perfect)},
            "assumes": assumes}


def _pair_evaluation(*, plan: CertificationPlan, documents: list[dict],
                     whole: dict[str, tuple[int, int, int]] | None) -> dict[str, Any]:
    """Pair recall decided at the least favourable δ1 of the plan's declared band (notes §8).

    Regions are the fresh certification sample of each region (the sub-population the pilot did not use)
    or, when the plan enumerates a region, every region whole with the pilot's labels counted: an
    enumerated region then has judged = size, an exact count.
    """
    pilot = plan.pilot
    other, which = pilot["other_region"], pilot["which"]
    regions = _region_triples(plan=plan, documents=documents, whole=whole)
    empty = (0, 0, 0)
    a12 = regions["A12"]
    b1 = regions[other] if which == "r2" else empty
    b2 = regions[other] if which == "r1" else empty
    seed = int(_locked_seed(plan)) % (2**32)
    grid = _delta1_grid(plan)
    result = stratified_pair_recall(a12=a12, b1=b1, b2=b2, confidence=1.0 - 2.0 * plan.alpha, draws=VERDICT_DRAWS,
                                    seed=seed, delta1_grid=grid)
    estimate = result.r1 if which == "r1" else result.r2
    bound = cert_stats.pair_recall_least_favourable_bound(a12=a12, b1=b1, b2=b2, which=which, alpha=plan.alpha,
                                                          delta1_grid=grid, draws=VERDICT_DRAWS, seed=seed)
    low = 0.0 if bound.lower_bound is None else float(bound.lower_bound)
    band = [{"delta1": p.delta1, "lower_bound": getattr(p, f"{which}_low"),
             "passes": (getattr(p, f"{which}_low") or 0.0) >= plan.target} for p in result.sensitivity]
    enumerated = sorted(pilot.get("enumerated") or [])
    assumes = (f"The two classifiers may depend on each other on relevant documents anywhere from δ1 = "
               f"{plan.delta1_low:g} to {plan.delta1_high:g} (1 = independent); the verdict uses the least "
               f"favourable value, δ1 = {bound.least_favourable_delta1:g}." if bound.least_favourable_delta1
               else "No bound: a needed region has no judged document.")
    if enumerated:
        assumes += (f" Region{'s' if len(enumerated) > 1 else ''} {', '.join(enumerated)} "
                    f"{'were' if len(enumerated) > 1 else 'was'} judged whole (pilot included): "
                    "no sampling error there.")
    return {"method": "least favourable δ1 of the declared band: stratified_pair_recall's one-sided lower bound "
                      f"(lower end of the two-sided {1 - 2 * plan.alpha:.0%} conservative Monte Carlo interval) "
                      "divided by δ1, minimum over the band (certification.pair_recall_least_favourable_bound)",
            "counts": {r: {"population": v[0], "judged": v[1], "relevant": v[2]} for r, v in regions.items()},
            "estimate": float(estimate.point) if estimate.point is not None else math.nan,
            "lower_bound": low, "passed": bound.passes(target=plan.target), "sensitivity": band,
            "pair_lower_bound": bound.pair_lower_bound, "by_delta1": [list(p) for p in bound.by_delta1],
            "least_favourable_delta1": bound.least_favourable_delta1,
            "delta1_band": [plan.delta1_low, plan.delta1_high], "enumerated": enumerated,
            "whole_regions": whole is not None, "assumes": assumes}


def _fixed_evaluation(*, plan: CertificationPlan, documents: list[dict], retrieved: BitMap,
                      whole: dict[str, tuple[int, int, int]] | None = None) -> dict[str, Any]:
    """The one-shot test on the whole judged sample: estimate, one-sided lower bound, pass."""
    if plan.metric == Metric.PAIR_RECALL and plan.dependence_check:
        return _dependence_evaluation(plan=plan, documents=documents, whole=whole)
    if plan.metric == Metric.PAIR_RECALL:
        return _pair_evaluation(plan=plan, documents=documents, whole=whole)
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


def _finite(value: float) -> float:
    return value if isinstance(value, (int, float)) and math.isfinite(value) else 0.0


def _sample_checksum(*, documents: list[dict], fingerprint: str,
                     whole: dict[str, tuple[int, int, int]] | None = None) -> str:
    """What a verdict is computed from, besides the frozen plan: the sample, its labels, the classifier
    (and, for a plan with an enumerated region, the whole regions' counts, pilot labels included)."""
    rows = [[d["id"], d["region"], d["label"], d["population"]] for d in documents]
    canonical = json.dumps([fingerprint, rows] + ([sorted(whole.items())] if whole is not None else []),
                           separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def _needs_whole_regions(plan: CertificationPlan) -> bool:
    return plan.metric == Metric.PAIR_RECALL and not plan.monitoring and bool(plan.pilot.get("enumerated"))


def _evaluate(*, plan: CertificationPlan, documents: list[dict],
              whole: dict[str, tuple[int, int, int]] | None = None) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """(evaluation, verdict inputs) of a locked plan, or None while its sample is not ready (no writes).

    ``whole``: the whole regions' counts of a plan with an enumerated region (``_whole_region_counts``);
    None there means an enumerated region is not fully labelled yet.
    """
    if plan.pilot.get("classifier_fingerprint") != plan.classifier.fingerprint:
        raise CertificationError(
            f"Classifier {plan.classifier.name!r} changed after plan {plan.pk} was locked: the locked sample "
            "certifies the classifier as it was, so no verdict is computed. Plan a new certification.")
    retrieved = classifier_bitmap(classifier=plan.classifier)
    complete = all(d["label"] is not None for d in documents)
    early_stop = None
    used = documents
    if plan.monitoring:
        ordered = _monitoring_order(documents, _locked_seed(plan))
        prefix = _judged_prefix(ordered)
        bound = _sequence_bound(plan=plan, prefix=prefix, retrieved=retrieved)
        sequence_extra: dict[str, Any] = {}
        if plan.metric == Metric.PAIR_RECALL:
            # The sequence bounds what the pair measures (δ1·r): read at the band's least favourable δ1 too.
            sequence_extra = {"pair_sequence_bound": bound, "sequence_delta1": max(1.0, plan.delta1_high)}
            bound = min(1.0, bound / max(1.0, plan.delta1_high))
        if bound < plan.target and not complete:
            return None
        evaluation = _fixed_evaluation(plan=plan, documents=prefix, retrieved=retrieved) if prefix else {}
        evaluation = {**evaluation, **sequence_extra, "fixed_sample_lower_bound": evaluation.get("lower_bound"),
                      "lower_bound": bound, "passed": bound >= plan.target,
                      "method": "anytime-valid confidence sequence (Waudby-Smith & Ramdas betting), "
                                "read on the judged prefix of the seeded order"}
        used = prefix
        if not complete:
            early_stop = {"judged": len(prefix), "planned": len(documents),
                          "reason": "the confidence sequence cleared the target before the sample was "
                                    "fully judged"}
    else:
        if not complete or (_needs_whole_regions(plan) and whole is None):
            return None
        evaluation = _fixed_evaluation(plan=plan, documents=documents, retrieved=retrieved, whole=whole)
    undecided = sum(1 for d in used if d.get("undecided"))
    if undecided:
        evaluation = {**evaluation, "undecided_least_favourable": undecided}
    inputs = {
        "schema": VERDICT_SCHEMA,
        "plan": {"id": plan.pk, "topic": plan.topic_id, "classifier": plan.classifier_id,
                 "classifier_fingerprint": plan.classifier.fingerprint, "metric": plan.metric,
                 "target": plan.target, "alpha": plan.alpha, "power": plan.power,
                 "monitoring": plan.monitoring, "seed": plan.seed, "sample_size": plan.sample_size},
        "documents": [[d["id"], d["region"], int(d["label"]), int(d["id"] in retrieved)] for d in used],
        "populations": {d["region"]: d["population"] for d in documents},
        "whole_regions": ({r: {"size": v[0], "judged": v[1], "relevant": v[2]} for r, v in whole.items()}
                          if whole is not None else None),
        "delta1_band": ([plan.delta1_low, plan.delta1_high]
                        if plan.metric == Metric.PAIR_RECALL and not plan.dependence_check else None),
        "dependence_check": plan.dependence_check,
        "attempts": plan.attempts, "family_alpha": plan.family_alpha,
        "evaluation": json_safe(evaluation),
        "early_stop": early_stop,
        "verdict_draws": VERDICT_DRAWS if plan.metric == Metric.PAIR_RECALL else None,
    }
    return evaluation, json_safe(inputs)


# =========================================================================== services


def _plans():
    return CertificationPlan.objects.select_related("topic", "classifier")


def certification_decide(*, plan_id: int) -> CertificationVerdict | None:
    """The verdict of a locked plan, computed once; None while its sample is not fully judged.

    Called again, it returns the stored verdict unchanged.  A monitored plan is
    also decided (passed) as soon as its confidence sequence clears the target
    on the judged prefix of its seeded order; the stop is recorded in the inputs.
    The evaluation runs outside the plan's row lock (module docstring).
    """
    plan = _plans().get(pk=plan_id)
    existing = CertificationVerdict.objects.filter(plan=plan).first()
    if existing is not None or plan.status != Status.LOCKED:
        return existing
    shortfall = certification_shortfall(plan=plan)
    if shortfall is not None:
        # A plan locked before the lock checked its draws: its sample is not the one planned, so no verdict
        # (pass or fail) would have the planned error rates.  Nothing is recorded; the pages say why.
        logger.info("certification plan %s not decided: %s", plan.pk, shortfall)
        return None
    documents = _certification_documents(plan=plan)
    if not documents and not _needs_whole_regions(plan):
        return None
    whole = _whole_region_counts(plan=plan) if _needs_whole_regions(plan) else None
    outcome = _evaluate(plan=plan, documents=documents, whole=whole)
    if outcome is None:
        return None
    checksum = _sample_checksum(documents=documents, fingerprint=plan.classifier.fingerprint, whole=whole)

    with transaction.atomic():
        plan = _plans().select_for_update(of=("self",)).get(pk=plan_id)
        existing = CertificationVerdict.objects.filter(plan=plan).first()
        if existing is not None or plan.status != Status.LOCKED:
            return existing  # decided meanwhile: the stored verdict stands
        current = _certification_documents(plan=plan)
        current_whole = _whole_region_counts(plan=plan) if _needs_whole_regions(plan) else None
        fingerprint = Classifier.objects.values_list("fingerprint", flat=True).get(pk=plan.classifier_id)
        if _sample_checksum(documents=current, fingerprint=fingerprint, whole=current_whole) != checksum:
            # Labels (or the classifier) moved while the bound was computed: evaluate what is committed now.
            plan.classifier.fingerprint = fingerprint
            outcome = (_evaluate(plan=plan, documents=current, whole=current_whole)
                       if current or current_whole else None)
            if outcome is None:
                return None
        evaluation, inputs = outcome
        code_version = code_version_get()
        verdict = CertificationVerdict.objects.create(
            plan=plan, passed=bool(evaluation["passed"]), estimate=_finite(evaluation.get("estimate", math.nan)),
            lower_bound=_finite(evaluation["lower_bound"]), inputs=inputs, code_version=code_version,
            checksum=verdict_checksum(inputs=inputs, code_version=code_version))
        CertificationPlan.objects.filter(pk=plan.pk).update(status=Status.DECIDED)
        # Announced after commit (webhooks: certification.decided); a rollback forgets it.
        event_send_on_commit(event=CertificationDecided(
            topic_id=plan.topic_id, plan_id=plan.pk, verdict_id=verdict.pk))
        # The verdict is part of the topic's report: store a snapshot that shows it.
        topic_recompute_schedule(topic_id=plan.topic_id)
        return verdict


def certifications_decide_ready() -> list[int]:
    """Decide every locked plan whose sample is ready; returns the ids of the plans decided now."""
    decided = []
    for plan_id in CertificationPlan.objects.filter(status=Status.LOCKED).values_list("pk", flat=True):
        try:
            if certification_decide(plan_id=plan_id) is not None:
                decided.append(plan_id)
        except Exception:  # one broken plan must not stop the sweep
            logger.exception("certification_decide failed for plan %s", plan_id)
    return decided


def certifications_decide_schedule(*, topic_id: int) -> None:
    """After the current transaction commits, try to decide the topic's locked plans (label hook)."""
    plan_ids = list(CertificationPlan.objects.filter(topic_id=topic_id, status=Status.LOCKED)
                    .values_list("pk", flat=True))
    if not plan_ids:
        return
    from estimation.tasks import certification_decide_task  # noqa: PLC0415 — a task module imports this service

    for plan_id in plan_ids:
        def decide(plan_id: int = plan_id) -> None:
            certification_decide_task.delay(plan_id=plan_id)

        transaction.on_commit(decide, robust=True)
