"""Reads behind the manager pages: latest snapshots, history and per-topic progress.

Pages never recompute a report on a view: they read the latest EstimateSnapshot.
Only a topic that has none gets one computed, once, through the recompute service.
"""
from __future__ import annotations

import logging
from decimal import Decimal

from django.db.models import Count, Sum

from annotation.models import Assignment, Hit, Judgment, Topic
from estimation.models import CertificationPlan, EstimateSnapshot

logger = logging.getLogger(__name__)

HISTORY_POINTS = 200


def snapshot_latest(*, topic: Topic, create: bool = True) -> EstimateSnapshot | None:
    snapshot = (EstimateSnapshot.objects.filter(topic=topic).order_by("-version")
                .only("id", "topic_id", "version", "created_at", "judgments", "report", "code_version").first())
    if snapshot is None and create:
        from estimation.services.recompute import topic_snapshot_create

        snapshot = topic_snapshot_create(topic_id=topic.pk)
    return snapshot


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


def topic_progress(*, topic: Topic) -> dict:
    """Judgments done and outstanding, spend against budget: a few indexed aggregates."""
    hit_rows = (Hit.objects.filter(topic=topic).exclude(status=Hit.Status.CANCELLED)
                .annotate(n_items=Count("items")).values_list("n_items", "max_assignments"))
    planned = sum(items * slots for items, slots in hit_rows)
    done = Judgment.objects.filter(topic=topic).count()
    spent_rewards = (Assignment.objects.filter(hit__topic=topic, status__in=(Assignment.Status.SUBMITTED,
                                                                           Assignment.Status.APPROVED))
                     .aggregate(total=Sum("hit__reward"))["total"]) or Decimal("0")
    return {"hits": len(hit_rows), "judgments_done": done, "judgments_planned": planned, "judgments_outstanding": max(0, planned - done),
            "rewards_paid": spent_rewards, "budget": topic.budget}


def certification_state(*, topic: Topic) -> dict:
    plan = (CertificationPlan.objects.filter(topic=topic).select_related("verdict", "classifier")
            .order_by("-created_at").first())
    if plan is None:
        return {"state": "none", "label": "Not planned"}
    verdict = getattr(plan, "verdict", None) if hasattr(plan, "verdict") else None
    if verdict is not None:
        return {"state": "pass" if verdict.passed else "fail", "label": "Passed" if verdict.passed else "Failed",
                "plan": plan, "verdict": verdict}
    return {"state": plan.status, "label": plan.get_status_display(), "plan": plan}
