"""Bonuses through the API (issue 27): quote, grant (confirmed total, Idempotency-Key), list.

Analysts only. The same service as the page (annotation/services/crowd/bonuses.py): `POST …/bonuses/quote/`
says who gets what with the fees; `POST …/bonuses/` grants it when `confirm_total` equals a fresh quote's total
(else 409 `cost-changed` with the fresh quote) and queues the payment; the Idempotency-Key header is also the
grant's key in the database, so a retry never pays twice. `GET …/bonuses/` lists the topic's bonuses.
"""
from __future__ import annotations

from typing import Any

from django.urls import path
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import exceptions, generics
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import Topic, WorkerBonus
from annotation.services.crowd.bonuses import (
    KEY_MAX_CHARS,
    BonusCostChanged,
    BonusQuote,
    bonus_grant,
    bonus_quote,
)
from api.errors import ProblemError
from api.permissions import Configure
from api.serializers_bonuses import (
    BonusGrantRequestSerializer,
    BonusGrantSerializer,
    BonusQuoteRequestSerializer,
    BonusQuoteSerializer,
    WorkerBonusSerializer,
)
from api.views.common import CONFLICT, PROBLEMS, idempotent_post, topic_or_404, validated

IDEMPOTENCY_HEADER = OpenApiParameter(
    "Idempotency-Key", str, location=OpenApiParameter.HEADER, required=True,
    description=f"A key of your choice (1 to {KEY_MAX_CHARS} characters), new for each bonus: a retry with the same "
                "key gets the first answer again and never pays twice.")


def _quote_data(quote: BonusQuote) -> dict[str, Any]:
    return dict(BonusQuoteSerializer(quote).data)


def _bonus_data(bonus: WorkerBonus) -> dict[str, Any]:
    return dict(WorkerBonusSerializer(bonus).data)


class TopicBonusQuote(APIView):
    permission_classes = [Configure]

    @extend_schema(request=BonusQuoteRequestSerializer, responses={200: BonusQuoteSerializer, **PROBLEMS},
                   tags=["topics"], description="Who would get what: each worker (by public id) with a counted "
                                                "judgment on the topic, the bonus, the platform's fee (Mechanical "
                                                "Turk: 20%, at least $0.01; the built-in crowd: none) and the total. "
                                                "Nothing is written; send `total` as `confirm_total` to grant.")
    def post(self, request: Request, topic_id: int) -> Response:
        topic = topic_or_404(topic_id)
        data = validated(BonusQuoteRequestSerializer, request.data)
        return Response(_quote_data(bonus_quote(topic=topic, rule=data["rule"], amount=data["amount"],
                                                workers=data.get("workers"))))


class TopicBonuses(generics.ListAPIView):
    """The topic's bonuses, newest first (`?status=`); POST grants a quoted batch."""

    permission_classes = [Configure]
    serializer_class = WorkerBonusSerializer

    def get_queryset(self):
        topic = topic_or_404(self.kwargs["topic_id"])
        status = self.request.query_params.get("status") or None
        if status is not None and status not in WorkerBonus.Status.values:
            raise exceptions.ValidationError({"status": [f"One of {', '.join(WorkerBonus.Status.values)}."]})
        queryset = WorkerBonus.objects.filter(topic=topic).select_related("worker").order_by("-id")
        return queryset.filter(status=status) if status else queryset

    @extend_schema(parameters=[OpenApiParameter("status", str, enum=WorkerBonus.Status.values)],
                   responses={200: WorkerBonusSerializer(many=True), **PROBLEMS}, tags=["topics"],
                   description="The topic's bonuses, newest first, with their status: pending (being paid), paid, "
                               "granted (the built-in crowd: pay through your payroll) or failed (with MTurk's "
                               "message).")
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(request=BonusGrantRequestSerializer, parameters=[IDEMPOTENCY_HEADER],
                   responses={201: BonusGrantSerializer, **PROBLEMS, **CONFLICT}, tags=["topics"],
                   description="Grant the quoted bonuses: refused (409 `cost-changed`, with the fresh `quote`) "
                               "unless `confirm_total` equals a fresh quote's total. One bonus per worker, recorded "
                               "in one transaction; Mechanical Turk bonuses are then paid by a task (SendBonus with "
                               "a UniqueRequestToken per bonus), the built-in crowd's are recorded as granted.")
    def post(self, request: Request, topic_id: int) -> Response:
        topic = topic_or_404(topic_id)
        key = request.headers.get("Idempotency-Key", "")
        return idempotent_post(request=request, serializer_class=BonusGrantRequestSerializer, status=201,
                               run=lambda data: _grant(topic, data, key=key, user=request.user))


def _grant(topic: Topic, data: dict[str, Any], *, key: str, user: Any) -> dict[str, Any]:
    try:
        grant = bonus_grant(topic=topic, rule=data["rule"], amount=data["amount"], reason=data["reason"],
                            confirm_total=data["confirm_total"], idempotency_key=key, user=user,
                            workers=data.get("workers"))
    except BonusCostChanged as exc:
        raise ProblemError(status_code=409, slug=exc.code, extra={"quote": _quote_data(exc.quote)},
                           detail=exc.message) from exc
    return {"created": grant.created, "quote": _quote_data(grant.quote),
            "bonuses": [_bonus_data(b) for b in grant.bonuses]}


# Included in api/urls.py by one line: *bonuses.urlpatterns.
urlpatterns = [
    path("topics/<int:topic_id>/bonuses/quote/", TopicBonusQuote.as_view(), name="topic_bonus_quote"),
    path("topics/<int:topic_id>/bonuses/", TopicBonuses.as_view(), name="topic_bonuses"),
]
