"""The report as CSV over the API: the same bytes as the report page's "CSV" download
(estimation.services.report_csv), for a token rather than a session."""
from __future__ import annotations

import logging
from typing import Any

from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.utils.text import slugify
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions
from rest_framework.request import Request
from rest_framework.views import APIView

from api.errors import ProblemError
from api.permissions import ReadReports
from api.views.common import PROBLEMS, id_param, topic_or_404
from estimation.models import EstimateSnapshot
from estimation.services.recompute import topic_snapshot_latest_or_create
from estimation.services.report_csv import report_csv_metadata, topic_report_csv

logger = logging.getLogger(__name__)


class ReportCsv(APIView):
    permission_classes = [ReadReports]

    def perform_content_negotiation(self, request: Request, force: bool = False) -> Any:
        """`Accept: text/csv` is no 406: the CSV is written by the view, and a problem is JSON whatever is asked."""
        return super().perform_content_negotiation(request, force=True)

    @extend_schema(parameters=[OpenApiParameter("version", int, description="a stored version (default: the latest)")],
                   responses={(200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="The report CSV"),
                              **PROBLEMS},
                   tags=["reports"],
                   description="The report as CSV (docs/report.md): a `#key,value` metadata block, then one row per "
                               "classifier, headline and region; the same file as the report page's CSV download. "
                               "A topic without any snapshot gets its first one, as on the page.")
    def get(self, request: Request, topic_id: int) -> HttpResponse:
        topic = topic_or_404(topic_id)
        raw_version = request.query_params.get("version")
        if raw_version is not None:
            version = id_param(raw_version)
            if version is None:
                raise exceptions.ValidationError({"version": ["A version is a whole number."]})
            snapshot = get_object_or_404(EstimateSnapshot.objects.defer("inputs"), topic=topic, version=version)
        else:
            try:
                snapshot = topic_snapshot_latest_or_create(topic=topic)
            except Exception:  # as the report page: say the report is unavailable, log the cause
                logger.exception("no report for topic %s", topic.pk)
                raise ProblemError(status_code=503, slug="report-unavailable",
                                   detail="The report could not be computed now; the cause is in the server log.") \
                    from None
        metadata = report_csv_metadata(report=snapshot.report, snapshot_version=snapshot.version,
                                       snapshot_created_at=snapshot.created_at.isoformat(), corpus=topic.corpus.name,
                                       target_recall=topic.target_recall)
        response = HttpResponse(topic_report_csv(report=snapshot.report, metadata=metadata),
                                content_type="text/csv; charset=utf-8")
        filename = f"{slugify(topic.name) or 'topic'}-report-v{snapshot.version}.csv"
        response["Content-Disposition"] = f'attachment; filename="{filename}"'
        return response
