"""Corpora that stay in the team's engine (issue 29): register (the engine must read the files), read, check.

Parse, call annotation.services.corpora.backends.external (the pages and the command call the same), render."""
from __future__ import annotations

import dataclasses

from django.shortcuts import get_object_or_404
from django.urls import path
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import ExternalCorpusSource
from annotation.services.corpora.backends.external import external_corpus_check, external_corpus_register
from api.permissions import Configure
from api.serializers_external import ExternalCheckSerializer, ExternalCorpusRegisterSerializer, ExternalCorpusSerializer
from api.views.common import PROBLEMS, validated


def _source_or_404(corpus_id: int) -> ExternalCorpusSource:
    return get_object_or_404(ExternalCorpusSource.objects.select_related("corpus"), corpus_id=corpus_id)


class ExternalCorpusRegister(APIView):
    permission_classes = [Configure]

    @extend_schema(request=ExternalCorpusRegisterSerializer, responses={201: ExternalCorpusSerializer, **PROBLEMS},
                   summary="Register a corpus that stays in its engine (DuckDB or Spark over Parquet files)")
    def post(self, request: Request) -> Response:
        data = validated(ExternalCorpusRegisterSerializer, request.data)
        source = external_corpus_register(**data)
        return Response(ExternalCorpusSerializer(source).data, status=201)


class ExternalCorpusDetail(APIView):
    permission_classes = [Configure]

    @extend_schema(responses={200: ExternalCorpusSerializer, **PROBLEMS}, summary="An external corpus: size and snapshot")
    def get(self, request: Request, corpus_id: int) -> Response:
        return Response(ExternalCorpusSerializer(_source_or_404(corpus_id)).data)


class ExternalCorpusCheck(APIView):
    permission_classes = [Configure]

    @extend_schema(request=None, responses={200: ExternalCheckSerializer, **PROBLEMS},
                   summary="Test the connection: count the documents, take the snapshot, say what changed")
    def post(self, request: Request, corpus_id: int) -> Response:
        check = external_corpus_check(source=_source_or_404(corpus_id))
        return Response(ExternalCheckSerializer(dataclasses.asdict(check)).data)


# Included in api/urls.py (v1) by one line: path("", include("api.views.external_corpora")).
urlpatterns = [
    path("external-corpora/", ExternalCorpusRegister.as_view(), name="external_corpora"),
    path("external-corpora/<int:corpus_id>/", ExternalCorpusDetail.as_view(), name="external_corpus"),
    path("external-corpora/<int:corpus_id>/check/", ExternalCorpusCheck.as_view(), name="external_corpus_check"),
]
