"""Classifiers: keyword filters, uploaded retrieved ids, uploaded scores with a threshold; counts and fingerprint."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import PurePath
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics
from rest_framework.parsers import JSONParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import Classifier, ClassifierBuild
from annotation.services.classifiers.classifier import (
    ClassifierError,
    ClassifierResult,
    classifier_create_from_ids,
    classifier_create_from_scores,
    classifier_create_keywords,
    classifier_set_threshold,
)
from annotation.services.classifiers.retrieved_upload import (
    classifier_retrieved_upload_result,
    classifier_retrieved_upload_start,
    retrieved_upload_max_bytes,
    retrieved_upload_too_large,
)
from api.permissions import Configure
from api.serializers import (
    ClassifierBuildSerializer,
    ClassifierResultSerializer,
    ClassifierSerializer,
    IdsFileSerializer,
    KeywordsCreateSerializer,
    NameSerializer,
    RetrievedFileSerializer,
    ScoresFileSerializer,
    ScoresQuerySerializer,
    ThresholdSerializer,
)
from api.views.common import (
    CONFLICT,
    PROBLEMS,
    TOO_LARGE_RETRIEVED,
    CsvParser,
    PlainTextParser,
    body_chunks,
    classifier_or_404,
    corpus_or_404,
    media_type,
    spooled,
    unsupported,
    validated,
)

IN_REQUEST = (" Built in the request: for corpora up to about a million documents; "
              "`POST /corpora/{id}/classifier-builds/` builds by a task (202, then poll).")


def _result(result: ClassifierResult) -> Response:
    data = {"classifier": result.classifier, "read": result.read, "unknown_count": result.unknown_count,
            "unknown_examples": result.unknown_examples}
    return Response(ClassifierResultSerializer(data).data, status=201)


class ClassifierList(generics.ListAPIView):
    """A corpus's classifiers (`?name=` exact, `?kind=`); archived ones only with `?archived=1`."""

    permission_classes = [Configure]
    serializer_class = ClassifierSerializer

    def get_queryset(self):
        corpus = corpus_or_404(self.kwargs["corpus_id"])
        queryset = Classifier.objects.filter(corpus=corpus).select_related("corpus").defer(
            "retrieved_bitmap", "corpus__documents_bitmap").order_by("name")
        params = self.request.query_params
        if params.get("name"):
            queryset = queryset.filter(name=params["name"])
        if params.get("kind"):
            queryset = queryset.filter(kind=params["kind"])
        if params.get("archived") != "1":
            queryset = queryset.filter(archived_at__isnull=True)
        return queryset

    @extend_schema(parameters=[OpenApiParameter("name", str), OpenApiParameter("kind", str, enum=Classifier.Kind.values),
                               OpenApiParameter("archived", str, enum=["0", "1"])],
                   responses={200: ClassifierSerializer(many=True), **PROBLEMS}, tags=["classifiers"])
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)


class KeywordsCreate(APIView):
    permission_classes = [Configure]

    @extend_schema(request=KeywordsCreateSerializer, responses={201: ClassifierSerializer, **PROBLEMS},
                   tags=["classifiers"], description="A keyword classifier (one pass over the text for all terms)."
                   + IN_REQUEST)
    def post(self, request: Request, corpus_id: int) -> Response:
        corpus = corpus_or_404(corpus_id)
        data = validated(KeywordsCreateSerializer, request.data)
        if not data.get("fields"):  # no default: a keyword filter reads only the fields it names
            raise ClassifierError("Give `fields`, where to look for the terms: [\"title\"], [\"text\"] or both; "
                                  "none is read by default.")
        classifier = classifier_create_keywords(corpus=corpus, name=data["name"], terms=data["terms"],
                                                fields=data["fields"])
        return Response(ClassifierSerializer(classifier_or_404(classifier.pk)).data, status=201)


def _json_ids(request: Request) -> Iterator[bytes]:
    ids = request.data
    if not isinstance(ids, list) or not all(isinstance(i, (str, int)) and not isinstance(i, bool) for i in ids):
        raise ClassifierError("A JSON body must be a list of ids (strings or integers).")
    text = "\n".join(str(i).replace("\n", " ").replace("\r", " ") for i in ids)
    yield (text + "\n").encode()


class IdsCreate(APIView):
    permission_classes = [Configure]
    parser_classes = [PlainTextParser, JSONParser, MultiPartParser]

    @extend_schema(
        request={"text/plain": OpenApiTypes.BINARY, "application/json": {"type": "array", "items": {"type": "string"}},
                 "multipart/form-data": IdsFileSerializer},
        parameters=[OpenApiParameter("name", str, description="the new classifier's name (text/plain and JSON)")],
        responses={201: ClassifierResultSerializer, **PROBLEMS}, tags=["classifiers"],
        description="A classifier whose retrieved set is the listed documents: one external id per line "
                    "(`text/plain`, streamed), a JSON list, or a multipart `file`. Unknown ids are counted." + IN_REQUEST)
    def post(self, request: Request, corpus_id: int) -> Response:
        corpus = corpus_or_404(corpus_id)
        kind = media_type(request)
        if kind == "multipart/form-data":
            form = validated(IdsFileSerializer, request.data)
            name, source, chunks = form["name"], PurePath(form["file"].name or "ids.txt").name, form["file"].chunks()
        elif kind in ("text/plain", "application/json"):
            name = validated(NameSerializer, request.query_params)["name"]
            if kind == "text/plain":
                source, chunks = "ids.txt", body_chunks(request)
            else:
                source, chunks = "ids.json", _json_ids(request)
        else:
            raise unsupported(request)
        with spooled(chunks, name=source) as path:
            return _result(classifier_create_from_ids(corpus=corpus, name=name, path=path))


class ScoresCreate(APIView):
    permission_classes = [Configure]
    parser_classes = [CsvParser, MultiPartParser]

    @extend_schema(
        request={"text/csv": OpenApiTypes.BINARY, "multipart/form-data": ScoresFileSerializer},
        parameters=[OpenApiParameter("name", str), OpenApiParameter("threshold", float)],
        responses={201: ClassifierResultSerializer, **PROBLEMS}, tags=["classifiers"],
        description="Scores as CSV `id,score` (header optional); retrieved = score ≥ threshold. The scores are "
                    "kept, so the threshold can move later (PATCH the classifier)." + IN_REQUEST)
    def post(self, request: Request, corpus_id: int) -> Response:
        corpus = corpus_or_404(corpus_id)
        kind = media_type(request)
        if kind == "multipart/form-data":
            form = validated(ScoresFileSerializer, request.data)
            source, chunks = PurePath(form["file"].name or "scores.csv").name, form["file"].chunks()
        elif kind == "text/csv":
            form = validated(ScoresQuerySerializer, request.query_params)
            source, chunks = "scores.csv", body_chunks(request)
        else:
            raise unsupported(request)
        with spooled(chunks, name=source) as path:
            return _result(classifier_create_from_scores(corpus=corpus, name=form["name"], path=path,
                                                         threshold=form["threshold"]))


# What a multipart body adds around the file (boundaries, part headers, the other fields).
MULTIPART_SLACK = 64 * 1024


class RetrievedCreate(APIView):
    permission_classes = [Configure]
    parser_classes = [MultiPartParser]

    @extend_schema(
        request={"multipart/form-data": RetrievedFileSerializer},
        responses={201: ClassifierResultSerializer, 202: ClassifierBuildSerializer, **PROBLEMS, **TOO_LARGE_RETRIEVED},
        tags=["classifiers"],
        description="A classifier whose retrieved set was computed by your own engine (Spark, Dask, Ray, pandas): "
                    "a multipart `file` holding a serialized 32-bit Roaring bitmap whose values are the corpus's "
                    "integer external ids, or a Parquet file with a `column` of external ids (strings or integers). "
                    "Unknown ids are counted; more than 1 % unknown refuses the file. A corrupt file, a Parquet "
                    "file without the column, or a file past RETRIEVED_UPLOAD_MAX_BYTES (413, `max_bytes`) "
                    "creates nothing. The file is stored and its ids resolved by a task: 202 with the build "
                    "(poll `Location`, /api/v1/classifier-builds/{id}/; a bad file fails it with the reason). "
                    "Without a task broker it is resolved before the answer: 201 with the classifier, or 400.")
    def post(self, request: Request, corpus_id: int) -> Response:
        corpus = corpus_or_404(corpus_id)
        if media_type(request) != "multipart/form-data":
            raise unsupported(request)
        limit = retrieved_upload_max_bytes()
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
        if declared > limit + MULTIPART_SLACK:  # refused before the body is read
            raise retrieved_upload_too_large(size=declared, name="the request body")
        form = validated(RetrievedFileSerializer, request.data)
        build = classifier_retrieved_upload_start(
            corpus=corpus, name=form["name"], original_name=PurePath(form["file"].name or "retrieved").name,
            chunks=form["file"].chunks(), file_format=form["format"], column=form["column"], user=request.user)
        result = classifier_retrieved_upload_result(build=build)
        if result is not None:  # no broker: resolved before the answer, as it always was
            return _result(result)
        if build.status == ClassifierBuild.Status.FAILED:
            raise ClassifierError(build.error)
        data = ClassifierBuildSerializer(build).data
        return Response(data, status=202, headers={"Location": data["url"]})


class ClassifierDetail(APIView):
    permission_classes = [Configure]

    @extend_schema(responses={200: ClassifierSerializer, **PROBLEMS}, tags=["classifiers"],
                   description="Kind, definition, retrieved and corpus counts, and the fingerprint reports cite.")
    def get(self, request: Request, classifier_id: int) -> Response:
        return Response(ClassifierSerializer(classifier_or_404(classifier_id)).data)

    @extend_schema(request=ThresholdSerializer, responses={200: ClassifierSerializer, **PROBLEMS, **CONFLICT},
                   tags=["classifiers"], description="Move the threshold of a scores classifier (refused once "
                                                     "samples were drawn with it).")
    def patch(self, request: Request, classifier_id: int) -> Response:
        classifier = classifier_or_404(classifier_id)
        data = validated(ThresholdSerializer, request.data)
        classifier_set_threshold(classifier=classifier, threshold=data["threshold"])
        return Response(ClassifierSerializer(classifier_or_404(classifier_id)).data)
