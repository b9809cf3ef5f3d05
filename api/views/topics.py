"""Topics: create, settings, plan, quote and launch (cost confirmed, idempotent), pause/resume, progress;
samples, HITs and raw judgments (read)."""
from __future__ import annotations

from dataclasses import asdict, is_dataclass
from decimal import Decimal
from typing import Any

from django.db.models import Count, Prefetch
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import Hit, HitItem, Judgment, SampleDraw, Topic
from annotation.selectors import topic_progress
from annotation.services.sampling.complement import DEFAULT_COMPLEMENT_MARGIN, complement_default
from annotation.services.sampling.plan import topic_plan_describe
from annotation.services.sampling.quote import LaunchQuote, topic_launch_quote
from annotation.services.topics.launch import LaunchCostChanged, LaunchRefused, NothingToDraw, topic_launch
from annotation.services.topics.topic_settings import (
    TOPIC_SETTINGS,
    topic_create_with_settings,
    topic_pause,
    topic_resume,
    topic_settings_change,
)
from api.errors import ProblemError
from api.permissions import Configure, ReadReports
from api.serializers import (
    DrawSerializer,
    HitSerializer,
    JsonObjectSerializer,
    JudgmentSerializer,
    LaunchResultSerializer,
    LaunchSerializer,
    PlanQuerySerializer,
    ProgressSerializer,
    QuoteQuerySerializer,
    QuoteSerializer,
    TopicCreateSerializer,
    TopicSerializer,
    TopicSettingsSerializer,
)
from api.views.common import CONFLICT, PROBLEMS, id_param, idempotent_post, topic_or_404, validated
from estimation.selectors import topic_snapshot_latest


def _topics():
    return (Topic.objects.select_related("pair").prefetch_related("extra_classifiers")
            .order_by("name"))


def _topic_data(topic_id: int) -> dict[str, Any]:
    return TopicSerializer(_topics().get(pk=topic_id)).data


class TopicList(generics.ListAPIView):
    """Topics; filters `?name=` (exact), `?status=`, `?corpus=`; archived ones only with `?archived=1`."""

    permission_classes = [Configure]
    serializer_class = TopicSerializer

    def get_queryset(self):
        queryset = _topics()
        params = self.request.query_params
        if params.get("name"):
            queryset = queryset.filter(name=params["name"])
        if params.get("status"):
            queryset = queryset.filter(status=params["status"])
        if params.get("corpus") is not None:
            queryset = queryset.filter(corpus_id=id_param(params["corpus"]))
        if params.get("archived") != "1":
            queryset = queryset.filter(archived_at__isnull=True)
        return queryset

    @extend_schema(parameters=[OpenApiParameter("name", str), OpenApiParameter("status", str, enum=Topic.Status.values),
                               OpenApiParameter("corpus", int), OpenApiParameter("archived", str, enum=["0", "1"])],
                   responses={200: TopicSerializer(many=True), **PROBLEMS}, tags=["topics"])
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(request=TopicCreateSerializer, responses={201: TopicSerializer, **PROBLEMS}, tags=["topics"],
                   description="A draft topic with its classifier pair (c1, c2) and further classifiers; the pair "
                               "must be able to carry an estimate (not nested, identical or disjoint).")
    def post(self, request: Request) -> Response:
        data = validated(TopicCreateSerializer, request.data)
        topic = topic_create_with_settings(
            corpus=data["corpus"], name=data["name"], c1=data["c1"], c2=data["c2"],
            extra_classifiers=data.get("extra", []), instructions=data.get("instructions", ""),
            target_recall=data.get("target_recall", 0.8), seed_terms=data.get("seed_terms", ()),
            settings={name: data[name] for name in (*TOPIC_SETTINGS, "allow_unsure") if name in data},
            scorer=data.get("scorer"))
        return Response(_topic_data(topic.pk), status=201)


class TopicDetail(APIView):
    permission_classes = [Configure]

    @extend_schema(responses={200: TopicSerializer, **PROBLEMS}, tags=["topics"])
    def get(self, request: Request, topic_id: int) -> Response:
        return Response(_topic_data(topic_or_404(topic_id).pk))

    @extend_schema(request=TopicSettingsSerializer, responses={200: TopicSerializer, **PROBLEMS, **CONFLICT},
                   tags=["topics"], description="Change settings; absent fields keep their value. The crowd and "
                                                "the HIT size only while the topic is a draft.")
    def patch(self, request: Request, topic_id: int) -> Response:
        topic = topic_or_404(topic_id)
        topic_settings_change(topic=topic, changes=validated(TopicSettingsSerializer, request.data))
        return Response(_topic_data(topic.pk))


def _binary_only(topic: Topic) -> Topic:
    """A topic set has no classifier pair: its plan, quote and launch are under /topic-sets/."""
    if topic.is_multiclass:
        raise ProblemError(status_code=409, slug="topic-set",
                           detail=f"Topic {topic.name!r} is a topic set (several topics, a uniform sample): use "
                                  f"/api/v1/topic-sets/{topic.pk}/preview/ and …/launch/.")
    return topic


def _plain(value: Any) -> Any:
    """Dataclasses, Decimals and tuples as JSON (NaN and infinities as null)."""
    if is_dataclass(value) and not isinstance(value, type):
        return _plain(asdict(value))
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_plain(v) for v in value]
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None
    return value


class TopicPlan(APIView):
    permission_classes = [Configure]

    @extend_schema(parameters=[PlanQuerySerializer], responses={200: JsonObjectSerializer, **PROBLEMS},
                   tags=["topics"], description="The sample plan the topic page shows: region counts, the "
                                                "planned judgments per region, the dependence check, warnings.")
    def get(self, request: Request, topic_id: int) -> Response:
        topic = _binary_only(topic_or_404(topic_id))
        query = validated(PlanQuerySerializer, request.query_params)
        context = topic_plan_describe(topic=topic, half_width=query["half_width"],
                                     margin=query.get("margin") or DEFAULT_COMPLEMENT_MARGIN)
        return Response(_plain(context))


def _quote_data(quote: LaunchQuote) -> dict[str, Any]:
    return QuoteSerializer({
        "half_width": quote.half_width, "complement": quote.complement, "regions": quote.regions,
        "strata": quote.strata, "expected_half_width": quote.expected_half_width,
        "further": quote.further, "documents": quote.documents, "judgments": quote.judgments, "hits": quote.hits,
        "exact": quote.exact, "cost": quote.cost, "committed": quote.committed, "budget": quote.budget,
        "remaining": quote.remaining, "fingerprint": quote.fingerprint, "parts": quote.parts,
        "documents_text": quote.documents_text, "cost_text": quote.cost_text, "summary": quote.summary}).data


class TopicQuote(APIView):
    permission_classes = [Configure]

    @extend_schema(parameters=[QuoteQuerySerializer], responses={200: QuoteSerializer, **PROBLEMS, **CONFLICT},
                   tags=["topics"], description="What launching (or topping up) at this half-width would draw and "
                                                "cost; send its `cost` as `confirm_cost` to launch.")
    def get(self, request: Request, topic_id: int) -> Response:
        topic = _binary_only(topic_or_404(topic_id))
        query = validated(QuoteQuerySerializer, request.query_params)
        return Response(_quote_data(topic_launch_quote(topic=topic, half_width=query["half_width"],
                                                       complement=query.get("complement"))))


IDEMPOTENCY_HEADER = OpenApiParameter(
    "Idempotency-Key", str, location=OpenApiParameter.HEADER, required=True,
    description="A key of your choice, new for each launch: a retry with the same key and body gets the first "
                "answer again and never draws twice.")


class TopicLaunch(APIView):
    permission_classes = [Configure]

    @extend_schema(request=LaunchSerializer, parameters=[IDEMPOTENCY_HEADER],
                   responses={202: LaunchResultSerializer, **PROBLEMS, **CONFLICT}, tags=["topics"],
                   description="Launch (a draft or sampling topic: the first sample, or a top-up to a narrower "
                               "half-width). Refused (409, with the current quote) unless `confirm_cost` equals "
                               "the quote's cost. The draw runs in a task; poll `…/progress/`.")
    def post(self, request: Request, topic_id: int) -> Response:
        topic = _binary_only(topic_or_404(topic_id))
        return idempotent_post(request=request, serializer_class=LaunchSerializer, status=202,
                               run=lambda data: _launch(topic, data))


def _launch(topic: Topic, data: dict[str, Any]) -> dict[str, Any]:
    """The launch service's guard (annotation.services.topics.launch), then the task after commit."""
    complement = data.get("complement")
    if complement is None:  # absent: the plan's size, as GET …/quote/ without it
        complement = complement_default(topic=topic, half_width=data["half_width"])
    try:
        quote = topic_launch(topic_id=topic.pk, half_width=data["half_width"], complement=complement,
                             confirm_cost=data["confirm_cost"],
                             confirm_fingerprint=data.get("confirm_fingerprint") or None)
    except (NothingToDraw, LaunchCostChanged) as exc:
        assert exc.quote is not None
        raise ProblemError(status_code=409, slug=exc.code, extra={"quote": _quote_data(exc.quote)},
                           detail=exc.message) from exc
    except LaunchRefused as exc:  # archived, a status that takes no launch, an engine's corpus counting or changed
        raise ProblemError(status_code=409, slug=exc.code, detail=exc.message) from exc
    return {"topic": topic.pk, "status": "queued", "quote": _quote_data(quote)}


class TopicPause(APIView):
    permission_classes = [Configure]

    @extend_schema(request=None, responses={200: TopicSerializer, **PROBLEMS, **CONFLICT}, tags=["topics"],
                   description="Stop handing out HITs (a sampling topic); idempotent.")
    def post(self, request: Request, topic_id: int) -> Response:
        topic_pause(topic=topic_or_404(topic_id))
        return Response(_topic_data(topic_id))


class TopicResume(APIView):
    permission_classes = [Configure]

    @extend_schema(request=None, responses={200: TopicSerializer, **PROBLEMS, **CONFLICT}, tags=["topics"])
    def post(self, request: Request, topic_id: int) -> Response:
        topic_resume(topic=topic_or_404(topic_id))
        return Response(_topic_data(topic_id))


class TopicProgress(APIView):
    permission_classes = [Configure | ReadReports]

    @extend_schema(responses={200: ProgressSerializer, **PROBLEMS}, tags=["topics"])
    def get(self, request: Request, topic_id: int) -> Response:
        topic = topic_or_404(topic_id)
        progress = topic_progress(topic=topic)
        counts = dict(Hit.objects.filter(topic=topic).order_by().values_list("status").annotate(n=Count("id")))
        snapshot = topic_snapshot_latest(topic=topic)
        return Response(ProgressSerializer({
            **progress, "status": topic.status, "hits_open": counts.get(Hit.Status.OPEN, 0),
            "hits_complete": counts.get(Hit.Status.COMPLETE, 0),
            "latest_report_version": snapshot.version if snapshot else None}).data)


class TopicSamples(generics.ListAPIView):
    """The topic's sample draws (`?purpose=`, `?region=`): seed, region size, requested and drawn."""

    permission_classes = [Configure | ReadReports]
    serializer_class = DrawSerializer

    def get_queryset(self):
        topic = topic_or_404(self.kwargs["topic_id"])
        queryset = SampleDraw.objects.filter(topic=topic).defer("excluded_bitmap").order_by("id")
        params = self.request.query_params
        if params.get("purpose"):
            queryset = queryset.filter(purpose=params["purpose"])
        if params.get("region"):
            queryset = queryset.filter(region=params["region"])
        return queryset

    @extend_schema(parameters=[OpenApiParameter("purpose", str, enum=SampleDraw.Purpose.values),
                               OpenApiParameter("region", str)],
                   responses={200: DrawSerializer(many=True), **PROBLEMS}, tags=["samples"])
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)


class TopicHits(generics.ListAPIView):
    """The topic's HITs with their documents (`?status=`)."""

    permission_classes = [Configure | ReadReports]
    serializer_class = HitSerializer

    def get_queryset(self):
        topic = topic_or_404(self.kwargs["topic_id"])
        items = HitItem.objects.select_related("document").only(
            "hit_id", "document_id", "position", "is_gold", "document__external_id").order_by("position")
        queryset = Hit.objects.filter(topic=topic).prefetch_related(Prefetch("items", queryset=items)).order_by("id")
        if self.request.query_params.get("status"):
            queryset = queryset.filter(status=self.request.query_params["status"])
        return queryset

    @extend_schema(parameters=[OpenApiParameter("status", str, enum=Hit.Status.values)],
                   responses={200: HitSerializer(many=True), **PROBLEMS}, tags=["samples"])
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)


class TopicJudgments(generics.ListAPIView):
    """Raw judgments, one per worker and document (`?document=` external id, `?worker=` id, `?since=` id)."""

    permission_classes = [ReadReports]
    serializer_class = JudgmentSerializer

    def get_queryset(self):
        topic = topic_or_404(self.kwargs["topic_id"])
        queryset = (Judgment.objects.filter(topic=topic).select_related("assignment", "document", "worker")
                    .only("id", "assignment_id", "assignment__hit_id", "document_id", "document__external_id",
                          "worker_id", "worker__external_id", "relevant", "choice", "created_at").order_by("id"))
        params = self.request.query_params
        if params.get("document"):
            queryset = queryset.filter(document__external_id=params["document"])
        if params.get("worker") is not None:
            worker = id_param(params["worker"])  # not an id: no worker has it, so no judgments
            queryset = queryset.filter(worker_id=worker) if worker is not None else queryset.none()
        if params.get("since") is not None:
            since = id_param(params["since"])
            queryset = queryset.filter(id__gt=since) if since is not None else queryset.none()
        return queryset

    @extend_schema(parameters=[OpenApiParameter("document", str), OpenApiParameter("worker", int),
                               OpenApiParameter("since", int, description="only judgments with a larger id")],
                   responses={200: JudgmentSerializer(many=True), **PROBLEMS}, tags=["samples"])
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)
