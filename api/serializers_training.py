"""Serializers of the training-stop advice (seed 004 Sec. 3): the learning curve and the parameters, the advice."""
from __future__ import annotations

from rest_framework import serializers

from estimation import limits as plan_limits
from estimation.services import training_advice as service


class LearningPointSerializer(serializers.Serializer):
    size = serializers.IntegerField(min_value=1, max_value=service.MAX_TRAINING_SIZE,
                                    help_text="Training documents (r_j).")
    f1 = serializers.FloatField(min_value=0.0, max_value=1.0, help_text="Their cross-validated F1.")
    cv_documents = serializers.IntegerField(
        required=False, allow_null=True, default=None, min_value=1, max_value=service.MAX_TRAINING_SIZE,
        help_text="Documents the cross-validation tested, summed over the folds (default: `size`).")


class TrainingAdviceSerializer(serializers.Serializer):
    points = LearningPointSerializer(many=True, allow_empty=False, max_length=service.MAX_POINTS)
    target = serializers.FloatField(min_value=plan_limits.TARGET[0], max_value=plan_limits.TARGET[1],
                                    help_text="The F1 the certification must show (τ).")
    prevalence = serializers.FloatField(min_value=service.PREVALENCE[0], max_value=service.PREVALENCE[1],
                                        help_text="Share of the documents that are relevant.")
    retrieved_fraction = serializers.FloatField(
        required=False, allow_null=True, default=None, min_value=service.PREVALENCE[0], max_value=0.99,
        help_text="Share the classifier retrieves (default: the prevalence).")
    alpha = serializers.FloatField(default=0.05, min_value=plan_limits.ALPHA[0], max_value=plan_limits.ALPHA[1])
    power = serializers.FloatField(default=0.93, min_value=plan_limits.POWER[0], max_value=plan_limits.POWER[1])
    margin_confidence = serializers.FloatField(
        default=0.95, min_value=service.MARGIN_CONFIDENCE[0], max_value=service.MARGIN_CONFIDENCE[1],
        help_text="Sizes are computed on this one-sided lower bound of each estimate (0.5: on the estimate).")
    budget = serializers.IntegerField(required=False, allow_null=True, default=None, min_value=1,
                                      max_value=service.MAX_BUDGET,
                                      help_text="Training + certification documents allowed.")
    cost_per_annotation = serializers.FloatField(required=False, allow_null=True, default=None, min_value=0.0,
                                                 max_value=service.MAX_COST_PER_ANNOTATION)


class ProjectionRowSerializer(serializers.Serializer):
    size = serializers.IntegerField()
    estimate = serializers.FloatField(help_text="F1 on the fitted curve.")
    test_size = serializers.IntegerField(allow_null=True)
    total = serializers.IntegerField(allow_null=True)


class CurveFitSerializer(serializers.Serializer):
    a = serializers.FloatField(help_text="F(r) = a − b·r^(−c): the level the curve tends to.")
    b = serializers.FloatField()
    c = serializers.FloatField()
    rmse = serializers.FloatField()
    projection = ProjectionRowSerializer(many=True)
    minimum_size = serializers.IntegerField(allow_null=True)
    minimum_test_size = serializers.IntegerField(allow_null=True)
    minimum_total = serializers.IntegerField(allow_null=True)
    certifiable_from = serializers.IntegerField(allow_null=True)
    minimum_at_horizon = serializers.BooleanField()


class PointSizingSerializer(serializers.Serializer):
    size = serializers.IntegerField()
    estimate = serializers.FloatField()
    cv_documents = serializers.IntegerField()
    lower_bound = serializers.FloatField()
    test_size_at_estimate = serializers.IntegerField(allow_null=True)
    test_size = serializers.IntegerField(allow_null=True, help_text="Sized on `lower_bound` (s_j).")
    total = serializers.IntegerField(allow_null=True, help_text="size + test_size (c_j).")
    total_cost = serializers.FloatField(allow_null=True)
    within_budget = serializers.BooleanField(allow_null=True)
    unsized = serializers.CharField(allow_null=True)


class TrainingAdviceResultSerializer(serializers.Serializer):
    action = serializers.ChoiceField(choices=["continue", "stop", "not_reachable"])
    test_size = serializers.IntegerField(allow_null=True, help_text="Documents to certify with when `stop`.")
    reason = serializers.CharField()
    notes = serializers.ListField(child=serializers.CharField())
    caveat = serializers.CharField(help_text="The sequential-bias warning (seed 004 Sec. 6).")
    points = PointSizingSerializer(many=True)
    fit = CurveFitSerializer(allow_null=True)
    target = serializers.FloatField()
    alpha = serializers.FloatField()
    power = serializers.FloatField()
    margin_confidence = serializers.FloatField()
    prevalence = serializers.FloatField()
    retrieved_fraction = serializers.FloatField()
    budget = serializers.IntegerField(allow_null=True)
    cost_per_annotation = serializers.FloatField(allow_null=True)
