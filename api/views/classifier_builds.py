"""Classifiers built by tasks through the API (issue 15: creation never runs in a request).

`POST /corpora/{id}/classifier-builds/` validates what it can at once (a mistake is a 400 and starts nothing),
stores an uploaded file, queues the build and answers 202 with the build; `GET /classifier-builds/{id}/` is
its progress and, once done, the classifier. The same services as the analyst pages
(annotation.services.classifiers.classifier_builds). The older `/classifiers/keywords|ids|scores/` endpoints create in
the request and remain for small corpora and existing clients.
"""
from __future__ import annotations

from pathlib import PurePath

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema
from rest_framework.parsers import JSONParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import Classifier, ClassifierBuild
from annotation.services.classifiers.classifier import ClassifierFileError
from annotation.services.classifiers.classifier_builds import classifier_build_file_save, classifier_build_start
from api.permissions import Configure
from api.serializers import ClassifierBuildFileSerializer, KeywordsCreateSerializer
from api.serializers_trained import TrainedBuildCreateSerializer, TrainedClassifierBuildSerializer
from api.views.common import PROBLEMS, corpus_or_404, media_type, unsupported, validated

BUILD_STARTED = (
    "Answered **202** with the build (`Location` = its `url`): poll `GET /api/v1/classifier-builds/{id}/` until "
    "`status` is `done` (then `classifier_id`) or `failed` (`error`). Without a task broker the build runs before "
    "the answer and the 202 already says done or failed. Mistakes found in the request (a name taken or being "
    "built, no usable term, an unknown field, a file in the wrong format, with its line) are 400 and start nothing."
)


JSON_BUILD = PolymorphicProxySerializer(
    component_name="ClassifierBuildJsonRequest", serializers=[KeywordsCreateSerializer, TrainedBuildCreateSerializer],
    resource_type_field_name=None)


def _accepted(build: ClassifierBuild) -> Response:
    data = TrainedClassifierBuildSerializer(ClassifierBuild.objects.get(pk=build.pk)).data
    return Response(data, status=202, headers={"Location": data["url"]})


class ClassifierBuildCreate(APIView):
    permission_classes = [Configure]
    parser_classes = [JSONParser, MultiPartParser]

    @extend_schema(
        request={"application/json": JSON_BUILD, "multipart/form-data": ClassifierBuildFileSerializer},
        responses={202: TrainedClassifierBuildSerializer, **PROBLEMS}, tags=["classifiers"],
        description="Build a classifier by a task: keywords as JSON `{name, terms, fields}` (one pass over the "
                    "corpus, in id-range shards across the workers); a classifier trained on another view as JSON "
                    "`{name, kind: \"trained\", fields, topic_id | labels_classifier_id, partner_id, seed, threshold "
                    "| target_precision}` (fitted in the task, weighted by the judged documents' inclusion "
                    "probabilities, then the corpus scored in shards; once done, `trained` gives its precision and "
                    "recall on the corpus with their interval); or a multipart `file` with `kind` `ids` (one "
                    "external id per line) or `scores` (CSV `id,score`, with `threshold`). " + BUILD_STARTED)
    def post(self, request: Request, corpus_id: int) -> Response:
        corpus = corpus_or_404(corpus_id)
        kind = media_type(request)
        if kind == "application/json" and isinstance(request.data, dict) and request.data.get("kind") == "trained":
            data = validated(TrainedBuildCreateSerializer, request.data)
            build = classifier_build_start(corpus=corpus, name=data["name"], kind=Classifier.Kind.TRAINED,
                                           definition=TrainedBuildCreateSerializer.definition(data), user=request.user)
        elif kind == "application/json":
            data = validated(KeywordsCreateSerializer, request.data)
            definition = {"terms": data["terms"], **({"fields": data["fields"]} if data.get("fields") else {})}
            build = classifier_build_start(corpus=corpus, name=data["name"], kind=Classifier.Kind.KEYWORDS,
                                           definition=definition, user=request.user)
        elif kind == "multipart/form-data":
            form = validated(ClassifierBuildFileSerializer, request.data)
            source = PurePath(form["file"].name or f"{form['kind']}.txt").name
            # Streamed under MEDIA_ROOT; the build task reads it, then removes it (a refused file is removed too).
            relative = classifier_build_file_save(original_name=source, chunks=form["file"].chunks())
            try:
                build = classifier_build_start(
                    corpus=corpus, name=form["name"], kind=form["kind"], user=request.user,
                    definition={"file": relative, "source": source, "threshold": form.get("threshold")})
            except ClassifierFileError as exc:  # the file's problem, by the name the client sent it under
                exc.message = exc.named(source)
                raise
        else:
            raise unsupported(request)
        return _accepted(build)


class ClassifierBuildDetail(APIView):
    permission_classes = [Configure]

    @extend_schema(responses={200: TrainedClassifierBuildSerializer, **PROBLEMS}, tags=["classifiers"],
                   description="A classifier build: `status` (pending, running, done, failed), `processed` of "
                               "`total`, and once done the `classifier_id`; once failed the `error`.")
    def get(self, request: Request, build_id: int) -> Response:
        return Response(TrainedClassifierBuildSerializer(get_object_or_404(ClassifierBuild, pk=build_id)).data)
