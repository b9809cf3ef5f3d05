"""Corpora: list, read, import a file (multipart upload or a streamed JSON Lines body) as a pollable job."""
from __future__ import annotations

from pathlib import PurePath

from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import Corpus, CorpusUpload
from annotation.services.corpora.corpus_uploads import corpus_upload_create, corpus_upload_file_check
from api.permissions import Configure
from api.serializers import CorpusFileSerializer, CorpusSerializer, ImportOptionsSerializer, UploadSerializer
from api.views.common import (
    PROBLEMS,
    TOO_LARGE,
    JsonLinesParser,
    body_chunks,
    corpus_or_404,
    media_type,
    unsupported,
    validated,
)
from core.errors import ApplicationError

IMPORT_PARAMETERS = [
    OpenApiParameter("corpus_name", str, description="JSON Lines body: the corpus to create or add to"),
    OpenApiParameter("id_field", str, description="the field holding each document's id (default id)"),
    OpenApiParameter("text_fields", str, description="comma-separated (default title,body)"),
]
IMPORT_REQUEST = {"multipart/form-data": CorpusFileSerializer, "application/x-ndjson": OpenApiTypes.BINARY}


class UploadError(ApplicationError):
    pass


class CorpusList(generics.ListAPIView):
    """Corpora, by name; `?name=` filters by exact name."""

    permission_classes = [Configure]
    serializer_class = CorpusSerializer

    def get_queryset(self):
        queryset = Corpus.objects.defer("documents_bitmap").order_by("name")
        name = self.request.query_params.get("name")
        return queryset.filter(name=name) if name else queryset

    @extend_schema(parameters=[OpenApiParameter("name", str)], responses={200: CorpusSerializer(many=True),
                                                                            **PROBLEMS}, tags=["corpora"])
    def get(self, request: Request, *args: object, **kwargs: object) -> Response:
        return super().get(request, *args, **kwargs)


def _start_import(request: Request, *, corpus_name: str | None) -> Response:
    """Stream the file to disk and queue its import: 202 with the job (poll its `url`)."""
    kind = media_type(request)
    if kind == "multipart/form-data":
        form = validated(CorpusFileSerializer, request.data)
        options = validated(ImportOptionsSerializer, {k: v for k, v in form.items() if k != "file"})
        upload = form["file"]
        original = PurePath(upload.name or "corpus").name
        corpus_upload_file_check(name=original, size=upload.size)
        chunks = upload.chunks()
    elif kind == JsonLinesParser.media_type:
        options = validated(ImportOptionsSerializer, request.query_params)
        original = "api-import.jsonl"
        chunks = body_chunks(request)
    else:
        raise unsupported(request)
    name = corpus_name or options.get("corpus_name")
    if not name:
        raise UploadError("Name the corpus (corpus_name).")
    job = corpus_upload_create(corpus_name=name, original_name=original, chunks=chunks,
                               id_field=options["id_field"], text_fields=options["text_fields"], user=request.user)
    job.refresh_from_db()
    url = reverse("api:import", args=[job.pk])
    return Response(UploadSerializer(job).data, status=202, headers={"Location": url})


class CorpusCreate(CorpusList):
    parser_classes = [MultiPartParser, JsonLinesParser]

    @extend_schema(request=IMPORT_REQUEST, parameters=IMPORT_PARAMETERS,
                   responses={202: UploadSerializer, **PROBLEMS, **TOO_LARGE}, tags=["corpora"],
                   description="Create a corpus (or add to one of that name) from a file: multipart `file` or a "
                               "JSON Lines body (`Content-Type: application/x-ndjson`). Answered 202 with the "
                               "import job; poll `GET /api/v1/imports/{id}/`.")
    def post(self, request: Request) -> Response:
        return _start_import(request, corpus_name=None)


class CorpusDetail(APIView):
    permission_classes = [Configure]

    @extend_schema(responses={200: CorpusSerializer, **PROBLEMS}, tags=["corpora"])
    def get(self, request: Request, corpus_id: int) -> Response:
        return Response(CorpusSerializer(corpus_or_404(corpus_id)).data)


class CorpusImport(APIView):
    permission_classes = [Configure]
    parser_classes = [MultiPartParser, JsonLinesParser]

    @extend_schema(request=IMPORT_REQUEST, parameters=IMPORT_PARAMETERS[1:],
                   responses={202: UploadSerializer, **PROBLEMS, **TOO_LARGE}, tags=["corpora"],
                   description="Add a file's documents to this corpus (same rules as manage.py import_corpus).")
    def post(self, request: Request, corpus_id: int) -> Response:
        return _start_import(request, corpus_name=corpus_or_404(corpus_id).name)


class ImportDetail(APIView):
    """An import job: status (pending, running, done, failed), records read so far, the summary or the error."""

    permission_classes = [Configure]

    @extend_schema(responses={200: UploadSerializer, **PROBLEMS}, tags=["corpora"])
    def get(self, request: Request, upload_id: int) -> Response:
        return Response(UploadSerializer(get_object_or_404(CorpusUpload, pk=upload_id)).data)
