"""Adjudication through the API (issue 27): the queue of a topic's disputed documents and a final answer.

`GET /topics/{id}/adjudication/` lists the documents still to adjudicate with each worker's vote (by the
worker's public id); `POST` records a final answer with a reason. Analysts only. The same service as the page
(annotation.services.crowd.adjudication.document_adjudicate): posting the same answer and reason again changes
nothing (200, `changed: false`); a new or changed answer is 201/200 with `changed: true` and schedules a recompute.
"""
from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import Document
from annotation.services.crowd.adjudication import document_adjudicate, topic_adjudication_queue
from api.permissions import Configure
from api.serializers_adjudication import AdjudicateSerializer, AdjudicationSerializer, QueueItemSerializer
from api.views.common import PROBLEMS, topic_or_404, validated


class TopicAdjudication(APIView):
    permission_classes = [Configure]

    @extend_schema(responses={200: QueueItemSerializer(many=True), **PROBLEMS}, tags=["topics"],
                   description="The topic's complete, non-gold documents whose workers did not agree (split sure "
                               "votes, no majority, or an unsure answer) and that no analyst adjudicated yet, with "
                               "each worker's vote. Empty for a topic set (adjudication is for single topics).")
    def get(self, request: Request, topic_id: int) -> Response:
        topic = topic_or_404(topic_id)
        return Response(QueueItemSerializer(topic_adjudication_queue(topic=topic), many=True).data)

    @extend_schema(request=AdjudicateSerializer, responses={200: AdjudicationSerializer, 201: AdjudicationSerializer,
                                                            **PROBLEMS}, tags=["topics"],
                   description="Record the final answer of a disputed document with a reason. The report counts "
                               "it with this answer, as certain, from its next recompute (scheduled on commit). "
                               "The same answer and reason again change nothing (`changed: false`). Refused (400): "
                               "a topic set, a gold document, a document without its three judgments.")
    def post(self, request: Request, topic_id: int) -> Response:
        topic = topic_or_404(topic_id)
        data = validated(AdjudicateSerializer, request.data)
        document = get_object_or_404(Document, pk=data["document_id"], corpus_id=topic.corpus_id)
        existed = document.adjudications.filter(topic=topic).exists()
        adjudication, changed = document_adjudicate(topic=topic, document=document, label=data["label"],
                                                    reason=data["reason"], user=request.user)
        body = AdjudicationSerializer({"document_id": document.pk, "relevant": adjudication.relevant,
                                       "reason": adjudication.reason, "changed": changed,
                                       "updated_at": adjudication.updated_at}).data
        return Response(body, status=201 if changed and not existed else 200)
