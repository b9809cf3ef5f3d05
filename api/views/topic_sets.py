"""Topic sets (issue 13 item 1, seed 002): create, read (classes, routers, sample progress), routers from an
uploaded CSV or keyword rules, the priced launch preview and the launch (cost confirmed, idempotent).

A topic set is a Topic of kind "multiclass"; its report is the topic's report (`/topics/{id}/report/`).
The views parse, call annotation.services.topics.topic_sets / routers, and answer; the rules live there."""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import PurePath
from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import generics
from rest_framework.parsers import JSONParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import Router, RouterBuild, Topic
from annotation.selectors import topic_progress, topic_set_sample_progress
from annotation.services.classifiers.router_builds import router_build_start
from annotation.services.classifiers.routers import (
    ROUTER_CSV_MAX_BYTES,
    RouterError,
    router_archive,
    router_delete,
    routers_for_topic,
)
from annotation.services.topics.launch import LaunchArchived, LaunchRefused, topic_set_launch_confirmed
from annotation.services.topics.topic_sets import (
    LaunchPreview,
    topic_set_class_names,
    topic_set_classes,
    topic_set_create,
    topic_set_launch_preview,
)
from api.errors import ProblemError
from api.permissions import Configure
from api.serializers import (
    NameSerializer,
    ProblemSerializer,
    RouterBuildSerializer,
    RouterCsvFileSerializer,
    RouterKeywordsSerializer,
    RouterSerializer,
    TopicSetCreateSerializer,
    TopicSetLaunchResultSerializer,
    TopicSetLaunchSerializer,
    TopicSetPreviewQuerySerializer,
    TopicSetPreviewSerializer,
    TopicSetSerializer,
)
from api.views.common import (
    CONFLICT,
    PROBLEMS,
    CsvParser,
    body_chunks,
    id_param,
    idempotent_post,
    media_type,
    unsupported,
    validated,
)
from api.views.topics import IDEMPOTENCY_HEADER

TOO_LARGE_CSV = {413: OpenApiResponse(ProblemSerializer, description=f"The CSV passes {ROUTER_CSV_MAX_BYTES:,} "
                                                                    "bytes (`max_bytes`); nothing was kept")}


def _topic_sets():
    return Topic.objects.filter(kind=Topic.Kind.MULTICLASS).select_related("corpus").defer("corpus__documents_bitmap")


def topic_set_or_404(topic_id: int) -> Topic:
    """The topic set; a binary topic is 404 here (it lives under /topics/)."""
    return get_object_or_404(_topic_sets(), pk=topic_id)


def _router_or_404(router_id: int) -> Router:
    return get_object_or_404(Router.objects.select_related("topic"), pk=router_id)


def _sample(topic: Topic) -> dict[str, Any]:
    """The uniform sample's progress, as the topic-set page counts it (annotation.selectors)."""
    sample = topic_set_sample_progress(topic=topic)
    progress = topic_progress(topic=topic)
    return {"drawn": sample.drawn, "judged": sample.judged, "decided": sample.decided,
            "hits": progress["hits"], "judgments_done": progress["judgments_done"],
            "judgments_planned": progress["judgments_planned"], "rewards_paid": progress["rewards_paid"]}


def _topic_set_data(topic: Topic) -> dict[str, Any]:
    classes = topic_set_classes(topic=topic)
    data = {
        "id": topic.pk, "name": topic.name, "kind": topic.kind, "corpus": topic.corpus_id, "status": topic.status,
        "instructions": topic.instructions, "allow_unsure": topic.allow_unsure, "aggregator": topic.aggregator,
        "crowd": topic.crowd, "hit_size": topic.hit_size, "reward_per_hit": topic.reward_per_hit,
        "budget": topic.budget, "class_names": topic_set_class_names(topic=topic),
        "classes": [{"position": c.position, "name": c.name, "description": c.description} for c in classes],
        "routers": routers_for_topic(topic=topic, include_archived=True),
        "sample": _sample(topic),
        "archived_at": topic.archived_at, "created_at": topic.created_at,
    }
    return dict(TopicSetSerializer(data).data)


class TopicSetList(generics.ListAPIView):
    """Topic sets (topics of kind `multiclass`), by name; `?name=` exact, `?corpus=`; archived ones only with
    `?archived=1`."""

    permission_classes = [Configure]
    serializer_class = TopicSetSerializer

    def get_queryset(self):
        queryset = _topic_sets().order_by("name", "pk")
        params = self.request.query_params
        if params.get("name"):
            queryset = queryset.filter(name=params["name"])
        if params.get("corpus") is not None:
            queryset = queryset.filter(corpus_id=id_param(params["corpus"]))
        if params.get("archived") != "1":
            queryset = queryset.filter(archived_at__isnull=True)
        return queryset

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        page = self.paginate_queryset(self.get_queryset()) or []
        return self.get_paginated_response([_topic_set_data(topic) for topic in page])

    @extend_schema(parameters=[OpenApiParameter("name", str), OpenApiParameter("corpus", int),
                               OpenApiParameter("archived", str, enum=["0", "1"])],
                   responses={200: TopicSetSerializer(many=True), **PROBLEMS}, tags=["topic sets"])
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    @extend_schema(request=TopicSetCreateSerializer, responses={201: TopicSetSerializer, **PROBLEMS},
                   tags=["topic sets"],
                   description="A draft topic set: M mutually exclusive topics (2 to 20) plus “None of these”, "
                               "judged on a uniform sample of the corpus by three annotators each.")
    def post(self, request: Request) -> Response:
        data = validated(TopicSetCreateSerializer, request.data)
        topic = topic_set_create(
            corpus=data["corpus"], name=data["name"],
            classes=[(entry["name"], entry.get("description", "")) for entry in data["classes"]],
            instructions=data.get("instructions", ""), allow_unsure=data.get("allow_unsure", False),
            aggregator=data.get("aggregator", Topic.Aggregator.MAJORITY), hit_size=data.get("hit_size", 5),
            reward_per_hit=data.get("reward_per_hit"), budget=data.get("budget"))
        return Response(_topic_set_data(topic_set_or_404(topic.pk)), status=201)


class TopicSetDetail(APIView):
    permission_classes = [Configure]

    @extend_schema(responses={200: TopicSetSerializer, **PROBLEMS}, tags=["topic sets"],
                   description="The topic set: settings, classes (positions 1..M; 0 is “None of these”), its "
                               "routers with their predicted counts per class, and the uniform sample's progress.")
    def get(self, request: Request, topic_id: int) -> Response:
        return Response(_topic_set_data(topic_set_or_404(topic_id)))


class TopicSetRouters(generics.ListAPIView):
    """The topic set's routers (`?archived=1` includes archived ones)."""

    permission_classes = [Configure]
    serializer_class = RouterSerializer

    def get_queryset(self):
        topic = topic_set_or_404(self.kwargs["topic_id"])
        queryset = Router.objects.filter(topic=topic).order_by("name", "pk")
        if self.request.query_params.get("archived") != "1":
            queryset = queryset.filter(archived_at__isnull=True)
        return queryset

    @extend_schema(parameters=[OpenApiParameter("archived", str, enum=["0", "1"])],
                   responses={200: RouterSerializer(many=True), **PROBLEMS}, tags=["topic sets"])
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)


def _limited(chunks: Iterable[bytes], *, limit: int) -> Iterator[bytes]:
    """The body's chunks, streamed on to the build's file; refused (413) past `limit` bytes (the partial file is
    removed by router_build_start)."""
    size = 0
    for chunk in chunks:
        size += len(chunk)
        if size > limit:
            raise ProblemError(status_code=413, slug="too-large", extra={"max_bytes": limit},
                               detail=f"The CSV is larger than {limit:,} bytes; nothing was kept.")
        yield chunk


def _build_answer(build: RouterBuild) -> Response:
    """202 with the build and `Location` of its status (it may already be done: tasks run in-process without a
    broker)."""
    build = RouterBuild.objects.select_related("router").get(pk=build.pk)
    data = RouterBuildSerializer(build).data
    return Response(data, status=202, headers={"Location": data["url"]})


BUILD_STARTED = ("Answered **202** with the build (`Location` = its `url`): poll `GET /api/v1/router-builds/{id}/` "
                 "until `status` is `done` (then `router` is the router) or `failed` (`error`, and `lines` for an "
                 "upload's bad lines). Without a task broker the build runs in the request and the 202 already "
                 "says done or failed; clients must still poll until it does. Mistakes found in the request (bad "
                 "header, bad rules, a name taken or being built) are 400 and start nothing. No Idempotency-Key: "
                 "the name is the key — a retried POST is refused (400) while a build or a router holds the name; "
                 "find the first build with `GET /topic-sets/{id}/router-builds/?name=`.")


class RouterCsvCreate(APIView):
    permission_classes = [Configure]
    parser_classes = [CsvParser, MultiPartParser]

    @extend_schema(
        request={"text/csv": OpenApiTypes.BINARY, "multipart/form-data": RouterCsvFileSerializer},
        parameters=[OpenApiParameter("name", str, description="the router's name (text/csv body)")],
        responses={202: RouterBuildSerializer, **PROBLEMS, **TOO_LARGE_CSV}, tags=["topic sets"],
        description="A router from its predictions: CSV with a header `id,class` (id = a document's external id; "
                    "class = a class name or position; 0, `none` or empty = none of these), as a `text/csv` body "
                    "with `?name=` or a multipart `file` + `name`, built by a task. A wrong header is a 400 "
                    "(`lines`); the other lines are checked by the build: all or nothing, a failed build lists "
                    "every bad line under `lines` (`line`, `problem`). " + BUILD_STARTED)
    def post(self, request: Request, topic_id: int) -> Response:
        topic = topic_set_or_404(topic_id)
        kind = media_type(request)
        limit = ROUTER_CSV_MAX_BYTES
        if int(request.META.get("CONTENT_LENGTH") or 0) > limit + 64 * 1024:
            raise ProblemError(status_code=413, slug="too-large", extra={"max_bytes": limit},
                               detail=f"The CSV is larger than {limit:,} bytes; nothing was kept.")
        if kind == "multipart/form-data":
            form = validated(RouterCsvFileSerializer, request.data)
            name, source = form["name"], PurePath(form["file"].name or "router.csv").name
            chunks = _limited(form["file"].chunks(), limit=limit)
        elif kind == "text/csv":
            name, source = validated(NameSerializer, request.query_params)["name"], "router.csv"
            chunks = _limited(body_chunks(request), limit=limit)
        else:
            raise unsupported(request)
        build = router_build_start(topic=topic, name=name, kind=Router.Kind.UPLOAD, data=chunks, source_name=source,
                                   user=request.user)
        return _build_answer(build)


def _rule(rule: dict[str, Any]) -> dict[str, Any]:
    raw = rule["class"].strip()
    out: dict[str, Any] = {"class": int(raw) if raw.isdigit() else raw, "terms": rule["terms"]}
    if rule.get("fields"):
        out["fields"] = rule["fields"]
    return out


class RouterKeywordsCreate(APIView):
    permission_classes = [Configure]
    parser_classes = [JSONParser]

    @extend_schema(request=RouterKeywordsSerializer, responses={202: RouterBuildSerializer, **PROBLEMS},
                   tags=["topic sets"],
                   description="A router from keyword rules `[{\"class\", \"terms\", \"fields\"}]` in precedence "
                               "order: each document goes to the class of the first rule that matches it (one pass "
                               "over the corpus, by a task), to none of these when no rule does. " + BUILD_STARTED)
    def post(self, request: Request, topic_id: int) -> Response:
        topic = topic_set_or_404(topic_id)
        data = validated(RouterKeywordsSerializer, request.data)
        build = router_build_start(topic=topic, name=data["name"], kind=Router.Kind.KEYWORDS,
                                   rules=[_rule(dict(rule)) for rule in data["rules"]], user=request.user)
        return _build_answer(build)


class TopicSetRouterBuilds(generics.ListAPIView):
    """The topic set's router builds, newest first (`?name=` exact, `?status=`)."""

    permission_classes = [Configure]
    serializer_class = RouterBuildSerializer

    def get_queryset(self):
        topic = topic_set_or_404(self.kwargs["topic_id"])
        queryset = RouterBuild.objects.filter(topic=topic).select_related("router").order_by("-created_at", "-pk")
        params = self.request.query_params
        if params.get("name"):
            queryset = queryset.filter(name=params["name"])
        if params.get("status"):
            queryset = queryset.filter(status=params["status"])
        return queryset

    @extend_schema(parameters=[OpenApiParameter("name", str),
                               OpenApiParameter("status", str, enum=list(RouterBuild.Status.values))],
                   responses={200: RouterBuildSerializer(many=True), **PROBLEMS}, tags=["topic sets"])
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)


class RouterBuildDetail(APIView):
    permission_classes = [Configure]

    @extend_schema(responses={200: RouterBuildSerializer, **PROBLEMS}, tags=["topic sets"],
                   description="A router build: `status` (pending, running, done, failed), `processed` of `total`, "
                               "and once done the `router`; once failed the `error` (and an upload's bad `lines`).")
    def get(self, request: Request, build_id: int) -> Response:
        build = get_object_or_404(RouterBuild.objects.select_related("router"), pk=build_id,
                                  topic__kind=Topic.Kind.MULTICLASS)
        return Response(RouterBuildSerializer(build).data)


class RouterDetail(APIView):
    permission_classes = [Configure]

    @extend_schema(responses={200: RouterSerializer, **PROBLEMS}, tags=["topic sets"])
    def get(self, request: Request, router_id: int) -> Response:
        return Response(RouterSerializer(_router_or_404(router_id)).data)

    @extend_schema(responses={204: None, **PROBLEMS, **CONFLICT}, tags=["topic sets"],
                   description="Delete a router; refused (409, with the reason) once the topic set has judged "
                               "labels — archive it instead.")
    def delete(self, request: Request, router_id: int) -> Response:
        router = _router_or_404(router_id)
        try:
            router_delete(router=router)
        except RouterError as exc:  # the topic set has judged labels: the router is part of what was measured
            raise ProblemError(status_code=409, slug="conflict", detail=exc.message) from exc
        return Response(status=204)


class RouterArchive(APIView):
    permission_classes = [Configure]

    @extend_schema(request=None, responses={200: RouterSerializer, **PROBLEMS}, tags=["topic sets"],
                   description="Archive a router: later reports leave it out; idempotent.")
    def post(self, request: Request, router_id: int) -> Response:
        router = router_archive(router=_router_or_404(router_id))
        return Response(RouterSerializer(router).data)


def _preview_data(preview: LaunchPreview, documents: int) -> dict[str, Any]:
    return dict(TopicSetPreviewSerializer({
        "documents": documents, "new_documents": preview.new_documents, "hits": preview.hits,
        "judgments": preview.judgments, "cost": preview.cost, "committed": preview.committed,
        "budget": preview.budget, "budget_left": preview.budget_left, "refused": preview.refused}).data)


class TopicSetPreview(APIView):
    permission_classes = [Configure]

    @extend_schema(parameters=[TopicSetPreviewQuerySerializer], responses={200: TopicSetPreviewSerializer, **PROBLEMS},
                   tags=["topic sets"],
                   description="What launching a uniform sample of `documents` in all would add (a repeat draws only "
                               "the difference) and cost; `refused` says why the budget would refuse it. Send its "
                               "`cost` as `confirm_cost` to launch.")
    def get(self, request: Request, topic_id: int) -> Response:
        topic = topic_set_or_404(topic_id)
        documents = validated(TopicSetPreviewQuerySerializer, request.query_params)["documents"]
        return Response(_preview_data(topic_set_launch_preview(topic=topic, documents=documents), documents))


class TopicSetLaunch(APIView):
    permission_classes = [Configure]

    @extend_schema(request=TopicSetLaunchSerializer, parameters=[IDEMPOTENCY_HEADER],
                   responses={201: TopicSetLaunchResultSerializer, **PROBLEMS, **CONFLICT}, tags=["topic sets"],
                   description="Draw the uniform sample up to `documents` in all and open its HITs. Refused (409 "
                               "`…/cost-changed`, with the current `preview`) unless `confirm_cost` equals the "
                               "preview's cost; 409 when the budget is short or nothing is left to draw. The "
                               "Idempotency-Key works as for the topics' launch: a retry gets the first answer.")
    def post(self, request: Request, topic_id: int) -> Response:
        topic = topic_set_or_404(topic_id)
        return idempotent_post(request=request, serializer_class=TopicSetLaunchSerializer, status=201,
                               run=lambda data: _launch(topic, data))


# The API's words where they differ from the service's (the page adds where an unarchived set comes back).
ARCHIVED_DETAIL = "The topic set is archived: it takes no new samples. Unarchive it first."


def _launch(topic: Topic, data: dict[str, Any]) -> dict[str, Any]:
    """The launch service's guard under the topic row lock (annotation.services.topics.launch), then the draw.

    The API's body has no fingerprint of the preview (only its cost): the cost is what is confirmed."""
    documents = data["documents"]
    try:
        launched = topic_set_launch_confirmed(topic_id=topic.pk, documents=documents,
                                              confirm_cost=data["confirm_cost"], confirm_fingerprint=None,
                                              seed=data.get("seed"))
    except LaunchArchived as exc:
        raise ProblemError(status_code=409, slug="conflict", detail=ARCHIVED_DETAIL) from exc
    except LaunchRefused as exc:
        extra = {"preview": _preview_data(exc.preview, documents)} if exc.preview is not None else None
        raise ProblemError(status_code=409, slug=exc.code, extra=extra, detail=exc.message) from exc
    shown = _preview_data(launched.preview, documents)
    return dict(TopicSetLaunchResultSerializer({
        "topic": topic.pk, "status": "launched", "drawn": launched.launch.documents, "hits": len(launched.launch.hits),
        "sample_size": topic_set_sample_progress(topic=topic).drawn, "preview": shown}).data)
