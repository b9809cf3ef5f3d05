"""Serializers of the model judge's API (issue 28): the quote's query, the launch body, a run, the report block."""
from __future__ import annotations

from rest_framework import serializers

from annotation.models import ModelJudgeRun
from annotation.services.crowd.model_judge import JUDGE_REGIONS, MAX_PER_REGION


class JudgePlanFields(serializers.Serializer):
    """Documents the judge reads per region (absent: ten times the region's human sample, at least 500)."""

    kind = serializers.ChoiceField(choices=ModelJudgeRun.Kind.choices, default=ModelJudgeRun.Kind.ENDPOINT)
    classifier = serializers.IntegerField(required=False, min_value=1,
                                          help_text="The scores classifier used as judge (kind `classifier`).")
    a12 = serializers.IntegerField(required=False, min_value=0, max_value=MAX_PER_REGION)
    b1 = serializers.IntegerField(required=False, min_value=0, max_value=MAX_PER_REGION)
    b2 = serializers.IntegerField(required=False, min_value=0, max_value=MAX_PER_REGION)
    n = serializers.IntegerField(required=False, min_value=0, max_value=MAX_PER_REGION)


def judge_plan(data: dict) -> dict[str, int] | None:
    """The plan from the four region fields; None when none is given (the default plan)."""
    given = {h: data[h.lower()] for h in JUDGE_REGIONS if data.get(h.lower()) is not None}
    return given or None


class JudgeLaunchSerializer(JudgePlanFields):
    confirm_cost = serializers.DecimalField(max_digits=12, decimal_places=4, min_value=0,
                                            help_text="The quote's `cost`, confirmed.")


class JudgeQuoteSerializer(serializers.Serializer):
    kind = serializers.CharField()
    model = serializers.CharField()
    plan = serializers.DictField(child=serializers.IntegerField())
    seed = serializers.IntegerField()
    documents = serializers.DictField(child=serializers.IntegerField())
    total = serializers.IntegerField()
    human_sampled = serializers.DictField(child=serializers.IntegerField())
    tokens = serializers.IntegerField()
    price_per_1k_tokens = serializers.CharField()
    cost = serializers.CharField()
    fingerprint = serializers.CharField()


class JudgeRunSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.CharField()
    model = serializers.CharField()
    status = serializers.CharField()
    total = serializers.IntegerField()
    processed = serializers.IntegerField()
    answered = serializers.IntegerField()
    failed = serializers.IntegerField()
    pending = serializers.IntegerField()
    failure_reasons = serializers.DictField(child=serializers.IntegerField())
    plan = serializers.DictField(child=serializers.IntegerField())
    prompt_tokens = serializers.IntegerField()
    completion_tokens = serializers.IntegerField()
    tokens_quoted = serializers.IntegerField()
    cost_confirmed = serializers.CharField()
    cost_spent = serializers.CharField()
    error = serializers.CharField(allow_blank=True)
    created_at = serializers.CharField(allow_null=True)
    finished_at = serializers.CharField(allow_null=True)


class JudgeReportSerializer(serializers.Serializer):
    """The judge's report block (estimation/services/report_judge.py), as the report stores it."""

    available = serializers.BooleanField()
    reason = serializers.CharField(allow_blank=True)
    assumptions = serializers.CharField()
    run = JudgeRunSerializer()
    concordance = serializers.ListField(child=serializers.DictField(), required=False)
    r1 = serializers.DictField(required=False)
    r2 = serializers.DictField(required=False)
    r1_human = serializers.DictField(required=False)
    r2_human = serializers.DictField(required=False)
    strata = serializers.ListField(child=serializers.DictField(), required=False)
    human_documents = serializers.IntegerField(required=False)
    human_documents_equivalent = serializers.FloatField(required=False)
    human_documents_saved = serializers.FloatField(required=False)
    human_judgments_saved = serializers.FloatField(required=False)
    judge_documents = serializers.IntegerField(required=False)
