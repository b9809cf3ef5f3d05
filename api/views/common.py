"""Shared pieces of the API views: object lookups, raw request bodies, schema snippets."""
from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path, PurePath
from typing import Any

from django.db import transaction
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse
from rest_framework import exceptions, serializers
from rest_framework.parsers import BaseParser
from rest_framework.request import Request
from rest_framework.response import Response

from annotation.models import Classifier, Corpus, Topic
from api.serializers import ProblemSerializer
from api.services import idempotency_begin, idempotency_finish, request_fingerprint

CHUNK = 1 << 20

PROBLEMS = {
    400: OpenApiResponse(ProblemSerializer, description="Invalid input (problem details with field messages)"),
    401: OpenApiResponse(ProblemSerializer, description="No or an invalid token"),
    403: OpenApiResponse(ProblemSerializer, description="The account lacks the role"),
    404: OpenApiResponse(ProblemSerializer, description="No such object"),
    429: OpenApiResponse(ProblemSerializer, description="Too many calls with this token (see Retry-After)"),
}
CONFLICT = {409: OpenApiResponse(ProblemSerializer, description="Conflicts with the current state")}
TOO_LARGE = {413: OpenApiResponse(ProblemSerializer, description="The file passes CORPUS_UPLOAD_MAX_BYTES "
                                                                  "(`max_bytes`); nothing was kept")}
TOO_LARGE_RETRIEVED = {413: OpenApiResponse(ProblemSerializer, description="The file passes "
                                                                           "RETRIEVED_UPLOAD_MAX_BYTES (`max_bytes`); "
                                                                           "nothing was kept")}


class RawBodyParser(BaseParser):
    """Leaves the body unread, for views that stream it to disk themselves (request.stream)."""

    media_type = "*/*"

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        return None


class JsonLinesParser(RawBodyParser):
    media_type = "application/x-ndjson"


class PlainTextParser(RawBodyParser):
    media_type = "text/plain"


class CsvParser(RawBodyParser):
    media_type = "text/csv"


MAX_ID = 2**63 - 1


def id_param(value: str | None) -> int | None:
    """A query parameter naming a row id: None unless it is a whole number a database id can be."""
    if value is None or not value.isdigit() or len(value) > 19:
        return None
    number = int(value)
    return number if number <= MAX_ID else None


def validated(serializer_class: type[serializers.Serializer], data: Any) -> dict[str, Any]:
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


def idempotent_post(*, request: Request, serializer_class: type[serializers.Serializer], status: int,
                    run: Callable[[dict[str, Any]], dict[str, Any]]) -> Response:
    """A POST that an Idempotency-Key makes safe to retry: the first answer is stored and replayed.

    The key is required; the validated body is fingerprinted (a reused key with another body is refused by
    idempotency_begin); `run(data)` and the record of its answer share one transaction.
    """
    key = request.headers.get("Idempotency-Key", "")
    if not key.strip():
        raise exceptions.ValidationError({"Idempotency-Key": ["Send an Idempotency-Key header (a new key per launch)."]})
    data = validated(serializer_class, request.data)
    body = json.dumps({k: str(v) for k, v in sorted(data.items())}).encode()
    with transaction.atomic():
        replay = idempotency_begin(user=request.user, key=key, endpoint=f"POST {request.path}",
                                   request_hash=request_fingerprint(body=body))
        if replay is not None:
            assert replay.status_code is not None  # idempotency_begin returns finished records only
            return Response(replay.response, status=replay.status_code, headers={"Idempotent-Replayed": "true"})
        result = run(data)
        idempotency_finish(user=request.user, key=key, status_code=status, response=result)
    return Response(result, status=status)


def body_chunks(request: Request) -> Iterator[bytes]:
    """The raw request body, CHUNK bytes at a time (never whole in memory)."""
    stream = request.stream
    if stream is None:
        return
    while True:
        chunk = stream.read(CHUNK)
        if not chunk:
            return
        yield chunk


def media_type(request: Request) -> str:
    return (request.content_type or "").split(";", 1)[0].strip().lower()


def unsupported(request: Request) -> exceptions.UnsupportedMediaType:
    return exceptions.UnsupportedMediaType(media_type(request) or "none")


@contextmanager
def spooled(chunks: Iterator[bytes], *, name: str) -> Iterator[Path]:
    """Write chunks to a file called `name` in a private temporary directory; removed afterwards."""
    safe = PurePath(name).name.replace(" ", "_")[-120:] or "upload"
    with tempfile.TemporaryDirectory(prefix="api-upload-") as directory:
        path = Path(directory) / safe
        with path.open("wb") as out:
            for chunk in chunks:
                out.write(chunk)
        yield path


def corpus_or_404(corpus_id: int) -> Corpus:
    return get_object_or_404(Corpus.objects.defer("documents_bitmap"), pk=corpus_id)


def topic_or_404(topic_id: int) -> Topic:
    return get_object_or_404(
        Topic.objects.select_related("corpus", "pair__c1", "pair__c2").defer(
            "corpus__documents_bitmap", "pair__c1__retrieved_bitmap", "pair__c2__retrieved_bitmap"),
        pk=topic_id)


def classifier_or_404(classifier_id: int) -> Classifier:
    return get_object_or_404(Classifier.objects.select_related("corpus").defer("retrieved_bitmap",
                                                                              "corpus__documents_bitmap"),
                             pk=classifier_id)
