"""Serializers of the adjudication API (issue 27): the queue of disputed documents and a final answer."""
from __future__ import annotations

from rest_framework import serializers

from annotation.services.crowd.adjudication import REASON_MAX_CHARS


class VoteSerializer(serializers.Serializer):
    worker = serializers.CharField(help_text="The worker's public id: the raw judgments export's WorkerId and the "
                                             "worker-quality page's id.")
    answer = serializers.ChoiceField(choices=["relevant", "not relevant", "unsure"])


class QueueItemSerializer(serializers.Serializer):
    document_id = serializers.IntegerField()
    external_id = serializers.CharField()
    title = serializers.CharField()
    votes_relevant = serializers.IntegerField()
    votes_total = serializers.IntegerField()
    votes_unsure = serializers.IntegerField()
    majority = serializers.BooleanField(allow_null=True)
    why = serializers.ChoiceField(choices=["split", "tie", "unsure"],
                                  help_text="split: the sure votes differ; tie: no majority; unsure: an unsure answer.")
    votes = VoteSerializer(many=True)


class AdjudicateSerializer(serializers.Serializer):
    document_id = serializers.IntegerField(min_value=1)
    label = serializers.BooleanField(help_text="The final answer: true = on topic.")
    reason = serializers.CharField(max_length=REASON_MAX_CHARS, help_text="Why this is the final answer.")


class AdjudicationSerializer(serializers.Serializer):
    document_id = serializers.IntegerField()
    label = serializers.BooleanField(source="relevant")
    reason = serializers.CharField()
    changed = serializers.BooleanField(help_text="False when the same answer and reason were already recorded.")
    updated_at = serializers.DateTimeField()
