"""The model judge (issue 28): quote, launch (cost confirmed, idempotent), a run, the topic's runs, the block.

The same services as the analyst's page (annotation/services/crowd/model_judge.py) and the same report block as
the report (estimation/services/report_judge.py)."""
from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.shortcuts import get_object_or_404
from django.urls import path
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import ModelJudgeRun
from annotation.services.crowd.model_judge import (
    JudgeCostChanged,
    model_judge_launch,
    model_judge_quote,
    model_judge_run_summary,
)
from api.errors import ProblemError
from api.permissions import Configure, ReadReports
from api.serializers_judge import (
    JudgeLaunchSerializer,
    JudgePlanFields,
    JudgeQuoteSerializer,
    JudgeReportSerializer,
    JudgeRunSerializer,
    judge_plan,
)
from api.views.common import CONFLICT, PROBLEMS, idempotent_post, topic_or_404, validated
from estimation.services.report_judge import topic_judge_report

IDEMPOTENCY_HEADER = OpenApiParameter(
    "Idempotency-Key", str, location=OpenApiParameter.HEADER, required=True,
    description="A key of your choice, new for each run: a retry with the same key and body gets the first answer.")


class JudgeQuote(APIView):
    permission_classes = [Configure]

    @extend_schema(parameters=[JudgePlanFields], responses={200: JudgeQuoteSerializer, **PROBLEMS, **CONFLICT},
                   tags=["model judge"], description="The documents a judge run would read per region and what it "
                                                     "costs (tokens × price); send its `cost` as `confirm_cost`.")
    def get(self, request: Request, topic_id: int) -> Response:
        topic = topic_or_404(topic_id)
        query = validated(JudgePlanFields, request.query_params)
        quote = model_judge_quote(topic=topic, plan=judge_plan(query), kind=query["kind"],
                                  classifier_id=query.get("classifier"))
        return Response(quote.summary())


class JudgeRuns(APIView):
    permission_classes = [Configure | ReadReports]

    @extend_schema(responses={200: JudgeRunSerializer(many=True), **PROBLEMS}, tags=["model judge"],
                   description="The topic's judge runs, newest first.")
    def get(self, request: Request, topic_id: int) -> Response:
        topic = topic_or_404(topic_id)
        return Response([model_judge_run_summary(run=r) for r in ModelJudgeRun.objects.filter(topic=topic)])

    @extend_schema(request=JudgeLaunchSerializer, parameters=[IDEMPOTENCY_HEADER],
                   responses={202: JudgeRunSerializer, **PROBLEMS, **CONFLICT}, tags=["model judge"],
                   description="Start a judge run. Refused (409, with the current quote) unless `confirm_cost` "
                               "equals the quote's cost. The run is a task; poll `/judge-runs/{id}/`.")
    def post(self, request: Request, topic_id: int) -> Response:
        if not Configure().has_permission(request, self):
            self.permission_denied(request)
        topic = topic_or_404(topic_id)
        return idempotent_post(request=request, serializer_class=JudgeLaunchSerializer, status=202,
                               run=lambda data: _launch(topic.pk, data, request.user))


def _launch(topic_id: int, data: dict[str, Any], user: Any) -> dict[str, Any]:
    try:
        run = model_judge_launch(topic_id=topic_id, plan=judge_plan(data), kind=data["kind"],
                                 classifier_id=data.get("classifier"), confirm_cost=Decimal(data["confirm_cost"]),
                                 user=user)
    except JudgeCostChanged as exc:
        raise ProblemError(status_code=409, slug=exc.code, extra={"quote": exc.quote.summary()},
                           detail=exc.message) from exc
    return model_judge_run_summary(run=run)


class JudgeRunDetail(APIView):
    permission_classes = [Configure | ReadReports]

    @extend_schema(responses={200: JudgeRunSerializer, **PROBLEMS}, tags=["model judge"],
                   description="A judge run: progress, answers and failures by reason, tokens and money spent.")
    def get(self, request: Request, run_id: int) -> Response:
        return Response(model_judge_run_summary(run=get_object_or_404(ModelJudgeRun, pk=run_id)))


class JudgeReport(APIView):
    permission_classes = [Configure | ReadReports]

    @extend_schema(responses={200: JudgeReportSerializer, **PROBLEMS}, tags=["model judge"],
                   description="Recall with the judge (stratified PPI++) beside human-only, the judge's agreement "
                               "with the human majority per region, and the human judgments it saved; 404 before "
                               "a run has finished.")
    def get(self, request: Request, topic_id: int) -> Response:
        block = topic_judge_report(topic=topic_or_404(topic_id))
        if block is None:
            raise ProblemError(status_code=404, slug="not-found", detail="No judge run of this topic has finished.")
        return Response(block)


# Included in api/urls.py's v1 by one line: path("", include("api.views.model_judge")).
urlpatterns = [
    path("topics/<int:topic_id>/judge/quote/", JudgeQuote.as_view(), name="judge_quote"),
    path("topics/<int:topic_id>/judge/runs/", JudgeRuns.as_view(), name="judge_runs"),
    path("topics/<int:topic_id>/judge/report/", JudgeReport.as_view(), name="judge_report"),
    path("judge-runs/<int:run_id>/", JudgeRunDetail.as_view(), name="judge_run"),
]
