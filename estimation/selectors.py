"""Reads of stored estimates and certification records, for pages, reports and commands.

Nothing here writes: a topic without a snapshot gets its first one from the
recompute service (``topic_snapshot_latest_or_create``), never from a read.
"""
from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from annotation.models import Label, SampledDocument, Topic
from estimation.models import CertificationPlan, CertificationVerdict, EstimateSnapshot

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

    Only the classifiers key of each stored report is read (a JSON key lookup in the
    database), and at most HISTORY_POINTS snapshots, evenly thinned.
    """
    rows = list(EstimateSnapshot.objects.filter(topic=topic).order_by("version")
                .values_list("judgments", "report__classifiers"))
    if len(rows) > HISTORY_POINTS:
        step = len(rows) / HISTORY_POINTS
        rows = [rows[int(i * step)] for i in range(HISTORY_POINTS - 1)] + [rows[-1]]
    series: dict[str, list[dict]] = {}
    for judgments, classifiers in rows:
        for row in classifiers or []:
            if not isinstance(row, dict):
                continue
            if row.get("role") not in (None, "c1", "c2", "C1", "C2", "pair"):
                continue
            recall = row.get("recall") or {}
            if recall.get("estimate") is None:
                continue
            series.setdefault(str(row.get("name", "")), []).append(
                {"judgments": judgments, "estimate": recall.get("estimate"), "low": recall.get("low"),
                 "high": recall.get("high")})
    return series


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
    return {"state": plan.status, "label": plan.get_status_display(), "plan": plan}


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
        documents = certification_sampled_documents(plan=plan)
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
