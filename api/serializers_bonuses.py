"""Serializers of the bonus API (issue 27): the quote, the grant and the topic's bonuses."""
from __future__ import annotations

from decimal import Decimal

from rest_framework import serializers

from annotation.models import WorkerBonus
from annotation.services.crowd.bonuses import AMOUNT_MAX, REASON_MAX_CHARS
from annotation.services.crowd.workers import worker_public_id


class BonusQuoteRequestSerializer(serializers.Serializer):
    rule = serializers.ChoiceField(choices=WorkerBonus.Rule.values,
                                   help_text="per_worker: `amount` to each worker; per_judgment: `amount` × the "
                                             "worker's judgments on the topic (submitted or approved assignments).")
    amount = serializers.DecimalField(max_digits=8, decimal_places=2, min_value=Decimal("0.01"), max_value=AMOUNT_MAX)
    workers = serializers.ListField(child=serializers.CharField(max_length=64), required=False, allow_empty=False,
                                    max_length=10000,
                                    help_text="Only these workers (public ids, as on the worker-quality page and in "
                                              "the judgments export); absent: every worker with a counted judgment.")


class BonusGrantRequestSerializer(BonusQuoteRequestSerializer):
    reason = serializers.CharField(max_length=REASON_MAX_CHARS, help_text="Shown to the workers.")
    confirm_total = serializers.DecimalField(max_digits=12, decimal_places=2,
                                             help_text="The quote's `total`: refused (409, with the fresh quote) "
                                                       "when it differs.")


class BonusLineSerializer(serializers.Serializer):
    worker = serializers.CharField(help_text="The worker's public id.")
    judgments = serializers.IntegerField()
    amount = serializers.DecimalField(max_digits=10, decimal_places=2)
    fee = serializers.DecimalField(max_digits=10, decimal_places=2)
    total = serializers.DecimalField(max_digits=10, decimal_places=2)


class BonusQuoteSerializer(serializers.Serializer):
    topic = serializers.IntegerField(source="topic_id")
    platform = serializers.CharField()
    rule = serializers.CharField()
    rate = serializers.DecimalField(max_digits=8, decimal_places=2)
    lines = BonusLineSerializer(many=True)
    amount = serializers.DecimalField(max_digits=12, decimal_places=2)
    fees = serializers.DecimalField(max_digits=12, decimal_places=2)
    total = serializers.DecimalField(max_digits=12, decimal_places=2,
                                     help_text="Send it as `confirm_total` to grant.")
    paid_through_platform = serializers.BooleanField(
        help_text="False for the built-in crowd: recorded as granted, paid through your payroll.")


class WorkerBonusSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    worker = serializers.SerializerMethodField(help_text="The worker's public id.")
    rule = serializers.CharField()
    rate = serializers.DecimalField(max_digits=8, decimal_places=2)
    amount = serializers.DecimalField(max_digits=10, decimal_places=2)
    fee = serializers.DecimalField(max_digits=10, decimal_places=2)
    judgments = serializers.IntegerField()
    reason = serializers.CharField()
    status = serializers.ChoiceField(choices=WorkerBonus.Status.values)
    platform = serializers.CharField()
    error = serializers.CharField()
    created_at = serializers.DateTimeField()
    paid_at = serializers.DateTimeField(allow_null=True)

    def get_worker(self, bonus: WorkerBonus) -> str:
        return worker_public_id(worker_id=bonus.worker_id, external_id=bonus.worker.external_id)


class BonusGrantSerializer(serializers.Serializer):
    created = serializers.BooleanField(help_text="False: this batch was already granted (same topic and key); "
                                                 "nothing was written or paid again.")
    quote = BonusQuoteSerializer()
    bonuses = WorkerBonusSerializer(many=True)
