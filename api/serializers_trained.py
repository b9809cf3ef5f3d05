"""API serializers of trained classifier builds (issues 23 and 24 item 2): the request, and the build's answer
with the corpus figures. Separate from api/serializers.py (owned elsewhere); the rules live in the services
(annotation/services/classifiers/trained.py): these only parse and present."""
from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from annotation.models import ClassifierBuild
from api.serializers import ClassifierBuildSerializer


class TrainedBuildCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    kind = serializers.ChoiceField(choices=["trained"], help_text="`trained`: a logistic regression on hashed "
                                                                 "character 4-grams of the chosen fields.")
    fields = serializers.ListField(child=serializers.CharField(max_length=200), min_length=1, max_length=50,
                                   help_text="What it reads (its view): `title`, `text` or metadata keys. Fields the "
                                             "partner classifier reads are refused.")
    topic_id = serializers.IntegerField(required=False, allow_null=True,
                                        help_text="Train on this topic's judged documents (weighted by 1/their "
                                                  "inclusion probability).")
    labels_classifier_id = serializers.IntegerField(
        required=False, allow_null=True,
        help_text="Or: take this classifier's output as noisy labels (retrieved = relevant).")
    partner_id = serializers.IntegerField(required=False, allow_null=True,
                                          help_text="The classifier it will be paired with (its fields are refused).")
    seed = serializers.IntegerField(default=1, min_value=0, max_value=2**31 - 1)
    threshold = serializers.FloatField(required=False, allow_null=True,
                                       help_text="Retrieved = score ≥ threshold; 0.5 when neither it nor a target "
                                                 "precision is given.")
    target_precision = serializers.FloatField(
        required=False, allow_null=True,
        help_text="Instead of a threshold: the lowest threshold whose corpus precision is at least this with 95% "
                  "confidence. A target the labels cannot support fails the build with the reason.")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if (attrs.get("topic_id") is None) == (attrs.get("labels_classifier_id") is None):
            raise serializers.ValidationError("give the training labels: topic_id or labels_classifier_id, not both")
        if attrs.get("threshold") is not None and attrs.get("target_precision") is not None:
            raise serializers.ValidationError("give a threshold or a target precision, not both")
        return attrs

    @staticmethod
    def definition(data: dict[str, Any]) -> dict[str, Any]:
        """The definition the trained kind's definition_clean takes (the same as the analyst page's)."""
        labels_from = (f"topic:{data['topic_id']}" if data.get("topic_id") is not None
                       else f"classifier:{data['labels_classifier_id']}")
        target = data.get("target_precision")
        threshold = data.get("threshold")
        return {"fields": data["fields"], "labels_from": labels_from, "partner_id": data.get("partner_id"),
                "seed": data["seed"], "threshold": 0.5 if threshold is None and target is None else threshold,
                "target_precision": target}


class IntervalSerializer(serializers.Serializer):
    point = serializers.FloatField(allow_null=True, help_text="Null when retrieved documents lie in a region "
                                                              "with no judged sample.")
    low = serializers.FloatField()
    high = serializers.FloatField()


class TrainedFiguresSerializer(serializers.Serializer):
    threshold = serializers.FloatField(allow_null=True)
    target_precision = serializers.FloatField(allow_null=True)
    corpus_precision = IntervalSerializer(allow_null=True, help_text="Precision on the corpus at the threshold, 95% "
                                                                      "interval (null without a sampling design).")
    corpus_recall = IntervalSerializer(allow_null=True)
    weighted_auc = serializers.FloatField(allow_null=True)
    relevant_share_in_top = IntervalSerializer(allow_null=True, help_text="Share of relevant documents among the "
                                                                          "top 5% of the corpus's scores.")
    cv_precision = serializers.FloatField(allow_null=True, help_text="Agreement with the training labels (not the "
                                                                     "corpus precision).")
    cv_recall = serializers.FloatField(allow_null=True)


class TrainedClassifierBuildSerializer(ClassifierBuildSerializer):
    """A build with, for kind `trained`, its figures once done (`trained`)."""

    trained = serializers.SerializerMethodField(help_text="Kind `trained`, once done: the threshold and the "
                                                          "classifier's figures on the corpus.")

    class Meta(ClassifierBuildSerializer.Meta):
        fields = [*ClassifierBuildSerializer.Meta.fields, "trained"]
        read_only_fields = fields

    @extend_schema_field(TrainedFiguresSerializer(allow_null=True))
    def get_trained(self, build: ClassifierBuild) -> dict[str, Any] | None:
        details = build.details if isinstance(build.details, dict) else {}
        if build.kind != "trained" or build.status != ClassifierBuild.Status.DONE:
            return None
        return {key: details.get(key) for key in TrainedFiguresSerializer().fields}
