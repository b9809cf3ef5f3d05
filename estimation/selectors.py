"""Reads of stored estimates and certification records, for pages, reports and commands.

Nothing here writes: a topic without a snapshot gets its first one from the
recompute service (``topic_snapshot_latest_or_create``), never from a read.
"""
from __future__ import annotations

import math
from typing import Any

from django.db.models import Count, QuerySet

from annotation.models import Hit, Label, SampledDocument, Topic
from core.jobs import LIVE, JobStatus
from estimation.models import CertificationPlan, CertificationSizing, CertificationVerdict, EstimateSnapshot
from estimation.stats.certification import familywise_false_pass_bound

HISTORY_POINTS = 200

Status = CertificationPlan.Status


# =========================================================================== snapshots


def topic_snapshot_latest(*, topic: Topic | int) -> EstimateSnapshot | None:
    """The topic's latest snapshot, None before the first (its stored inputs are loaded only if read)."""
    topic_id = topic if isinstance(topic, int) else topic.pk
    return EstimateSnapshot.objects.filter(topic_id=topic_id).order_by("-version").defer("inputs").first()


def topic_report_latest(*, topic: Topic) -> dict[str, Any] | None:
    """The report of the latest snapshot, with a `snapshot` key (version, created_at, checksum); None before the first."""
    snapshot = topic_snapshot_latest(topic=topic)
    if snapshot is None:
        return None
    return {
        **snapshot.report,
        "snapshot": {
            "version": snapshot.version,
            "created_at": snapshot.created_at.isoformat(),
            "inputs_checksum": snapshot.inputs_checksum,
            "code_version": snapshot.code_version,
        },
    }


def recall_history(*, topic: Topic) -> dict[str, list[dict]]:
    """{classifier name: [{"judgments", "estimate", "low", "high"}, ...]} over the topic's snapshots.

    "judgments" is the estimation sample's count (report schema ≥ 2: certification samples
    are counted apart, issue 11); older snapshots only stored the topic's total.  A snapshot
    that moved nothing but certification (same count, same figures) adds no point.  Only a few
    keys of each stored report are read (JSON key lookups in the database), and at most
    HISTORY_POINTS snapshots, evenly thinned.  Estimates are clipped to [0, 1] (old snapshots
    could hold a recall above 1).
    """
    rows = list(EstimateSnapshot.objects.filter(topic=topic).order_by("version")
                .values_list("judgments", "report__schema", "report__judgments", "report__classifiers"))
    if len(rows) > HISTORY_POINTS:
        step = len(rows) / HISTORY_POINTS
        rows = [rows[int(i * step)] for i in range(HISTORY_POINTS - 1)] + [rows[-1]]
    series: dict[str, list[dict]] = {}
    for total, schema, estimation, classifiers in rows:
        judgments = estimation if isinstance(schema, int) and schema >= 2 and isinstance(estimation, int) else total
        for row in classifiers or []:
            if not isinstance(row, dict):
                continue
            if row.get("role") not in (None, "c1", "c2", "C1", "C2", "pair"):
                continue
            recall = row.get("recall") or {}
            if recall.get("estimate") is None:
                continue
            point = {"judgments": judgments, **{key: _unit(recall.get(key)) for key in ("estimate", "low", "high")}}
            points = series.setdefault(str(row.get("name", "")), [])
            if points and points[-1] == point:
                continue
            points.append(point)
    return series


def _unit(value: object) -> float | None:
    """A recall value clipped to [0, 1]; None when missing or not a number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return min(1.0, max(0.0, float(value)))


# =========================================================================== certification


def certification_sampled_documents(*, plan: CertificationPlan) -> QuerySet[SampledDocument]:
    """The SampledDocument rows of the plan's certification sample (its linked draws)."""
    return SampledDocument.objects.filter(draw__certification_link__plan=plan)


def certification_state(*, topic: Topic) -> dict:
    """The state of the topic's latest plan, for the overview and the report header."""
    plan = (CertificationPlan.objects.filter(topic=topic).select_related("verdict", "classifier")
            .order_by("-created_at").first())
    if plan is None:
        return {"state": "none", "label": "Not planned"}
    verdict = getattr(plan, "verdict", None) if hasattr(plan, "verdict") else None
    if verdict is not None:
        return {"state": "pass" if verdict.passed else "fail", "label": "Passed" if verdict.passed else "Failed",
                "plan": plan, "verdict": verdict}
    if plan.status == Status.LOCKED and certification_shortfall(plan=plan):
        return {"state": "undecidable", "label": "Cannot be decided (drawn short of its plan)", "plan": plan}
    return {"state": plan.status, "label": plan.get_status_display(), "plan": plan}


def certification_drawn_planned(*, plan: CertificationPlan) -> dict[str, dict[str, int]]:
    """{region: {"drawn", "planned"}} for every region the plan planned or drew (drawn is 0 before the lock)."""
    planned = {region: int(n) for region, n in (plan.sample_size or {}).items() if region != "total"}
    drawn: dict[str, int] = {}
    if plan.status != Status.DRAFT:
        drawn = dict(certification_sampled_documents(plan=plan).order_by().values("region")
                     .annotate(n=Count("id")).values_list("region", "n"))
    return {region: {"drawn": int(drawn.get(region, 0)), "planned": planned.get(region, 0)}
            for region in sorted(set(planned) | set(drawn))}


def certification_shortfall(*, plan: CertificationPlan) -> str | None:
    """Why a locked plan cannot be decided: its drawn sample differs from its plan (plans locked before the
    lock checked its draws); None when the sample is as planned (or the plan is a draft)."""
    if plan.status == Status.DRAFT:
        return None
    counts = certification_drawn_planned(plan=plan)
    if all(c["drawn"] == c["planned"] for c in counts.values()):
        return None
    drawn = sum(c["drawn"] for c in counts.values())
    planned = sum(c["planned"] for c in counts.values())
    regions = ", ".join(f"{r} {c['drawn']} of {c['planned']}" for r, c in counts.items())
    return (f"This plan cannot be decided: drawn {drawn} of {planned} planned (region {regions}). A verdict "
            "from a sample other than the one planned would not have the planned error rates; plan a new "
            "certification.")


def certification_lock_preview(*, plan: CertificationPlan) -> dict[str, Any]:
    """What locking the plan will draw and cost: documents per region, HITs, judgments, crowd and cost."""
    regions = {region: int(n) for region, n in (plan.sample_size or {}).items() if region != "total"}
    documents = sum(regions.values())
    topic = plan.topic
    hits = math.ceil(documents / max(1, topic.hit_size))
    return {"regions": regions, "documents": documents, "hits": hits,
            "judgments": documents * Hit.ASSIGNMENTS_PER_HIT, "assignments_per_hit": Hit.ASSIGNMENTS_PER_HIT,
            "crowd": topic.get_crowd_display(), "reward_per_hit": str(topic.reward_per_hit),
            "cost": None if plan.estimated_cost is None else str(plan.estimated_cost),
            "enumerated": list((plan.pilot or {}).get("enumerated") or [])}


def _plan_state(plan: CertificationPlan, verdict: CertificationVerdict | None, shortfall: str | None,
                sizing: CertificationSizing | None = None) -> str:
    if verdict is not None:
        return "pass" if verdict.passed else "fail"
    if plan.status == Status.LOCKED:
        return "undecidable" if shortfall else "pending"
    if sizing is not None and sizing.status != JobStatus.DONE:  # its sizing job (certification_plans)
        return "sizing" if sizing.status in LIVE else "sizing_failed"
    return "draft" if plan.pilot.get("feasible") else "infeasible"


# A plan's state in the words the pages show (the codes stay in the JSON as "state").
PLAN_STATE_WORDS = {
    "draft": "Draft", "infeasible": "Cannot be planned", "sizing": "Sizing…", "sizing_failed": "Sizing failed",
    "pending": "Waiting for labels", "undecidable": "Cannot be decided", "pass": "Passed", "fail": "Failed",
}


def _sizing_describe(sizing: CertificationSizing | None) -> dict[str, Any] | None:
    """The plan's latest sizing job: {status, percent, message} (None for a plan sized before sizing was a job)."""
    if sizing is None:
        return None
    return {"status": sizing.status, "percent": sizing.job_percent, "message": sizing.error or None}


def certification_plan_describe(*, plan: CertificationPlan) -> dict[str, Any]:
    """A plain, JSON-able description of a plan and its verdict, for reports and pages."""
    verdict = CertificationVerdict.objects.filter(plan=plan).first()
    shortfall = certification_shortfall(plan=plan) if verdict is None else None
    sizing = (CertificationSizing.objects.filter(plan_id=plan.pk).order_by("-pk").first()
              if plan.status == Status.DRAFT else None)
    state = _plan_state(plan, verdict, shortfall, sizing)
    pilot = plan.pilot or {}
    data: dict[str, Any] = {
        "plan_id": plan.pk, "classifier": plan.classifier.name, "classifier_id": plan.classifier_id,
        "metric": plan.metric, "metric_label": plan.get_metric_display(), "target": plan.target,
        "alpha": plan.alpha, "confidence": 1.0 - plan.alpha, "power": plan.power, "monitoring": plan.monitoring,
        "status": plan.status, "state": state, "state_label": PLAN_STATE_WORDS.get(state, state),
        "sample_size": plan.sample_size,
        "estimated_cost": None if plan.estimated_cost is None else str(plan.estimated_cost),
        "pilot_estimate": pilot.get("estimate"), "reason": pilot.get("reason"),
        "locked_at": plan.locked_at.isoformat() if plan.locked_at else None,
        "drawn_planned": certification_drawn_planned(plan=plan),
        "fresh": pilot.get("fresh"), "enumerated": list(pilot.get("enumerated") or []),
        "delta1_band": ([plan.delta1_low, plan.delta1_high]
                        if plan.metric == CertificationPlan.Metric.PAIR_RECALL and not plan.dependence_check
                        else None),
        "attempts": plan.attempts, "family_alpha": plan.family_alpha, "dependence_check": plan.dependence_check,
        "design_warnings": list(pilot.get("design_warnings") or []),
        "sizing": _sizing_describe(sizing),
    }
    if plan.status != Status.DRAFT:
        documents = certification_sampled_documents(plan=plan)
        total = documents.count()
        judged = Label.objects.filter(topic_id=plan.topic_id, majority__isnull=False,
                                      document_id__in=documents.values("document_id")).count()
        data["progress"] = {"judged": judged, "documents": total}
    if verdict is not None:
        evaluation = (verdict.inputs or {}).get("evaluation") or {}
        data["verdict"] = {"passed": verdict.passed, "estimate": verdict.estimate,
                           "lower_bound": verdict.lower_bound, "checksum": verdict.checksum,
                           "code_version": verdict.code_version, "created_at": verdict.created_at.isoformat(),
                           "early_stop": (verdict.inputs or {}).get("early_stop"),
                           "pair_lower_bound": evaluation.get("pair_lower_bound"),
                           "least_favourable_delta1": evaluation.get("least_favourable_delta1"),
                           "assumes": evaluation.get("assumes")}
    elif state == "undecidable":
        data["note"] = shortfall
    elif state == "pending":
        data["note"] = ("Pending: the certification sample is not fully judged. Estimates shown before the "
                        "verdict do not certify anything.")
        if data["enumerated"] and not plan.monitoring:
            several = len(data["enumerated"]) > 1
            data["note"] += (f" Region{'s' if several else ''} {', '.join(data['enumerated'])} "
                             f"{'are' if several else 'is'} judged whole: the verdict also waits until every "
                             "earlier-sampled document there has its label.")
    elif state == "infeasible":
        data["note"] = pilot.get("reason")
    elif state == "sizing":
        data["note"] = "Sizing: the sample size and cost are being computed; this plan cannot be locked until then."
    elif state == "sizing_failed" and sizing is not None:
        data["note"] = sizing.error
    return data


def certification_attempt_family(*, classifier_id: int, metric: str,
                                 exclude_plan_id: int | None = None) -> list[CertificationPlan]:
    """The attempts already made in a family: every locked or decided plan of this classifier and metric, on any
    topic and at any target (notes §8 "Retries": a new target or a new topic is not a fresh start), oldest
    lock first."""
    plans = (CertificationPlan.objects.filter(classifier_id=classifier_id, metric=metric)
             .exclude(status=Status.DRAFT).select_related("classifier", "topic").order_by("locked_at", "pk"))
    if exclude_plan_id is not None:
        plans = plans.exclude(pk=exclude_plan_id)
    return list(plans)


def certification_family_declaration(*, family: list[CertificationPlan]) -> tuple[int, float] | None:
    """(attempts, family false-pass rate) the family declared with its first locked attempt; None if none yet."""
    if not family:
        return None
    first = family[0]
    return int(first.attempts), float(first.family_alpha if first.family_alpha is not None else first.alpha)


def _attempt_families(described: list[dict[str, Any]], plans: list[CertificationPlan]) -> list[dict[str, Any]]:
    """Group the attempts (locked or decided plans) by (classifier, metric) — whatever the target and the topic,
    including this classifier's attempts on other topics — oldest lock first, and attach to each plan that passed
    after an earlier attempt the family-wise false-pass bound over the attempts made (notes §8 "Retries": k
    attempts at α each pass by luck with probability up to 1 − Π(1 − α_i))."""
    info_by_pk = {plan.pk: info for plan, info in zip(plans, described, strict=True)}
    keys = sorted({(p.classifier_id, p.metric) for p in plans if p.status != Status.DRAFT})
    families = []
    for classifier_id, metric in keys:
        family = certification_attempt_family(classifier_id=classifier_id, metric=metric)
        members = [(plan, info_by_pk.get(plan.pk) or certification_plan_describe(plan=plan)) for plan in family]
        declaration = certification_family_declaration(family=family)
        for index, (plan, info) in enumerate(members):
            if info["state"] != "pass" or index == 0 or plan.pk not in info_by_pk:
                continue
            made = [p for p, _ in members[: index + 1]]
            bound = familywise_false_pass_bound(alphas=[p.alpha for p in made]).independent_attempts
            fails = sum(1 for _, i in members[:index] if i["state"] == "fail")
            info["family"] = {
                "attempts": len(made), "earlier_fails": fails, "familywise_false_pass": bound,
                "bonferroni": familywise_false_pass_bound(alphas=[p.alpha for p in made]).bonferroni,
                "plans": [p.pk for p in made],
                "note": (f"{len(made)} attempts: the chance that at least one passes by luck is up to "
                         f"{bound:.0%} (not the {plan.alpha:.0%} of one attempt). Every attempt on this "
                         "classifier and metric, at any target and on any topic, is part of the record."),
            }
        last = members[-1][1]
        bound = familywise_false_pass_bound(alphas=[p.alpha for p, _ in members]).independent_attempts
        families.append({"classifier": last["classifier"], "classifier_id": classifier_id,
                         "metric": metric, "target": members[-1][0].target,
                         "targets": [p.target for p, _ in members], "topics": [p.topic_id for p, _ in members],
                         "attempts": len(members), "declared": declaration[0] if declaration else None,
                         "plans": [p.pk for p, _ in members], "states": [i["state"] for _, i in members],
                         "familywise_false_pass": bound,
                         "note": (last.get("family") or {}).get("note") or (
                             f"{len(members)} attempt{'s' if len(members) > 1 else ''} of "
                             f"{declaration[0] if declaration else len(members)} declared: the chance that at least "
                             f"one passes by luck is up to {bound:.0%}.")})
    return families


def certification_summary(*, topic: Topic) -> dict[str, Any]:
    """The report's certification block: the latest plan's state, then every plan of the topic (no truncation),
    and the attempts grouped by (classifier, metric), whatever the target and the topic, with their family-wise
    false-pass bound."""
    plans = list(CertificationPlan.objects.filter(topic=topic).select_related("classifier", "topic")
                 .order_by("-created_at", "-pk"))
    if not plans:
        return {"state": "none"}
    described = [certification_plan_describe(plan=plan) for plan in plans]
    families = _attempt_families(described, plans)
    latest = described[0]
    return {"state": latest["state"], "latest": latest, "plans": described, "families": families}
