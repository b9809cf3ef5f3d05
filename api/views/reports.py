"""Reports (the latest snapshot or a chosen version, as `manage.py topic_report --format json` prints them)
and certification plans (create, lock with the cost confirmed, verdict)."""
from __future__ import annotations

import logging
from typing import Any

from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.services.crowd.hits import BudgetExceeded
from api.errors import ProblemError
from api.permissions import ReadReports
from api.serializers import (
    CertificationPlanCreateSerializer,
    JsonObjectSerializer,
    LockSerializer,
    ReportVersionSerializer,
)
from api.views.common import CONFLICT, PROBLEMS, topic_or_404, validated
from estimation.models import CertificationPlan, EstimateSnapshot
from estimation.selectors import certification_plan_describe, topic_report_latest
from estimation.services.certification_locks import certification_plan_lock
from estimation.services.certification_plans import (
    certification_plan_create,
    certification_plan_refuse_while_sizing,
)
from estimation.services.recompute import topic_snapshot_latest_or_create

logger = logging.getLogger(__name__)


def _snapshot_json(snapshot: EstimateSnapshot) -> dict[str, Any]:
    """The shape of estimation.selectors.topic_report_latest, for any version."""
    return {**snapshot.report, "snapshot": {"version": snapshot.version, "created_at": snapshot.created_at.isoformat(),
                                            "inputs_checksum": snapshot.inputs_checksum,
                                            "code_version": snapshot.code_version}}


class ReportLatest(APIView):
    permission_classes = [ReadReports]

    @extend_schema(responses={200: JsonObjectSerializer, **PROBLEMS}, tags=["reports"],
                   description="The latest report snapshot: the JSON of `manage.py topic_report --format json` "
                               "(docs/report.md), with `snapshot` {version, created_at, inputs_checksum, "
                               "code_version}. A topic without any snapshot gets its first one, as on the page.")
    def get(self, request: Request, topic_id: int) -> Response:
        topic = topic_or_404(topic_id)
        try:
            topic_snapshot_latest_or_create(topic=topic)
        except Exception:  # as the report page: say the report is unavailable, log the cause
            logger.exception("no report for topic %s", topic.pk)
            raise ProblemError(status_code=503, slug="report-unavailable",
                               detail="The report could not be computed now; the cause is in the server log.") from None
        return Response(topic_report_latest(topic=topic))


class ReportVersions(generics.ListAPIView):
    """The topic's snapshots, newest first."""

    permission_classes = [ReadReports]
    serializer_class = ReportVersionSerializer

    def get_queryset(self):
        topic = topic_or_404(self.kwargs["topic_id"])
        return (EstimateSnapshot.objects.filter(topic=topic).order_by("-version")
                .only("version", "created_at", "judgments", "inputs_checksum"))

    @extend_schema(responses={200: ReportVersionSerializer(many=True), **PROBLEMS}, tags=["reports"])
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)


class ReportVersion(APIView):
    permission_classes = [ReadReports]

    @extend_schema(responses={200: JsonObjectSerializer, **PROBLEMS}, tags=["reports"],
                   description="One stored version of the report, in the same JSON as the latest.")
    def get(self, request: Request, topic_id: int, version: int) -> Response:
        topic = topic_or_404(topic_id)
        snapshot = get_object_or_404(EstimateSnapshot.objects.defer("inputs"), topic=topic, version=version)
        return Response(_snapshot_json(snapshot))


def _plan_or_404(plan_id: int) -> CertificationPlan:
    return get_object_or_404(CertificationPlan.objects.select_related("topic", "classifier"), pk=plan_id)


class CertificationPlans(APIView):
    permission_classes = [ReadReports]

    @extend_schema(parameters=[OpenApiParameter("status", str, enum=CertificationPlan.Status.values)],
                   responses={200: JsonObjectSerializer(many=True), **PROBLEMS}, tags=["certification"],
                   description="The topic's plans, newest first, each as the report describes it.")
    def get(self, request: Request, topic_id: int) -> Response:
        topic = topic_or_404(topic_id)
        plans = CertificationPlan.objects.filter(topic=topic).select_related("topic", "classifier")
        if request.query_params.get("status"):
            plans = plans.filter(status=request.query_params["status"])
        return Response([certification_plan_describe(plan=plan) for plan in plans.order_by("-created_at", "-pk")])

    @extend_schema(request=CertificationPlanCreateSerializer, responses={202: JsonObjectSerializer, **PROBLEMS,
                                                                         **CONFLICT},
                   tags=["certification"], description="A draft plan, stored at once (202, `Location` the plan): "
                                                       "its sizing (the pilot, the sample size by power analysis, "
                                                       "its cost) runs as a task; poll the plan until `state` is "
                                                       "no longer `sizing` (`sizing` gives status and percent). "
                                                       "An infeasible plan is stored with its reason (state "
                                                       "`infeasible`); a failed sizing has state "
                                                       "`sizing_failed` and its message in `note`.")
    def post(self, request: Request, topic_id: int) -> Response:
        topic = topic_or_404(topic_id)
        data = validated(CertificationPlanCreateSerializer, request.data)
        if data["classifier"].corpus_id != topic.corpus_id:
            raise ProblemError(status_code=400, slug="validation",
                               detail="classifier: it belongs to another corpus than the topic's.")
        plan = certification_plan_create(topic=topic, user=request.user, **data)
        return Response(certification_plan_describe(plan=_plan_or_404(plan.pk)), status=202,
                        headers={"Location": reverse("api:certification_plan", kwargs={"plan_id": plan.pk})})


class CertificationPlanDetail(APIView):
    permission_classes = [ReadReports]

    @extend_schema(responses={200: JsonObjectSerializer, **PROBLEMS}, tags=["certification"])
    def get(self, request: Request, plan_id: int) -> Response:
        return Response(certification_plan_describe(plan=_plan_or_404(plan_id)))


class CertificationPlanLock(APIView):
    permission_classes = [ReadReports]

    @extend_schema(request=LockSerializer, responses={200: JsonObjectSerializer, **PROBLEMS, **CONFLICT},
                   tags=["certification"],
                   description="Lock the draft: draws the fresh certification sample and publishes its paid HITs. "
                               "Refused (409) unless `confirm_cost` equals the plan's `estimated_cost`, and "
                               "(409 `plan-sizing`) while the plan is being sized.")
    def post(self, request: Request, plan_id: int) -> Response:
        plan = _plan_or_404(plan_id)
        data = validated(LockSerializer, request.data)
        certification_plan_refuse_while_sizing(plan_id=plan.pk)  # 409 plan-sizing
        if plan.status == CertificationPlan.Status.DRAFT and (plan.estimated_cost is None
                                                               or data["confirm_cost"] != plan.estimated_cost):
            raise ProblemError(status_code=409, slug="cost-changed",
                               extra={"estimated_cost": None if plan.estimated_cost is None
                                      else str(plan.estimated_cost)},
                               detail=f"Locking draws the certification sample and publishes paid HITs: confirm "
                                      f"the plan's cost (${plan.estimated_cost}). Nothing was drawn.")
        try:
            certification_plan_lock(plan_id=plan.pk, user=request.user)
        except BudgetExceeded as exc:
            raise ProblemError(status_code=409, slug="conflict", detail=exc.message) from exc
        return Response(certification_plan_describe(plan=_plan_or_404(plan_id)))


class CertificationVerdict(APIView):
    permission_classes = [ReadReports]

    @extend_schema(responses={200: JsonObjectSerializer, **PROBLEMS}, tags=["certification"],
                   description="The verdict {passed, estimate, lower_bound, checksum, …}; 404 until decided "
                               "(the plan's `state` and `note` say why).")
    def get(self, request: Request, plan_id: int) -> Response:
        described = certification_plan_describe(plan=_plan_or_404(plan_id))
        if "verdict" not in described:
            raise ProblemError(status_code=404, slug="not-decided", extra={"state": described["state"]},
                               detail=described.get("note") or "No verdict yet.")
        return Response({"plan_id": plan_id, "state": described["state"], **described["verdict"]})
