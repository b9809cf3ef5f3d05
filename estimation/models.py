"""Stored results: versioned estimate snapshots and certification records.

The numbers come from `estimation.stats`; these models only keep them, with the
inputs that produced them, so any report can be reproduced.
"""
from django.conf import settings
from django.db import models
from django.db.models import Q

from core.jobs import Job, JobStatus


class EstimateSnapshot(models.Model):
    topic = models.ForeignKey("annotation.Topic", on_delete=models.CASCADE, related_name="snapshots")
    version = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)
    code_version = models.CharField(max_length=64)
    aggregator = models.CharField(max_length=16)
    # Sample ids, labels and parameters: everything the report was computed from.
    inputs = models.JSONField()
    inputs_checksum = models.CharField(max_length=64)
    report = models.JSONField()
    judgments = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["topic", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["topic", "version"], name="snapshot_version_unique"),
        ]


class CertificationPlan(models.Model):
    class Metric(models.TextChoices):
        PAIR_RECALL = "pair_recall", "Pair-based recall (seed 000)"
        F1 = "f1", "F1 on a uniform test set (seed 004)"
        QBCB_RECALL = "qbcb_recall", "Recall by QBCB on a uniform sample"

    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        LOCKED = "locked", "Locked"
        DECIDED = "decided", "Decided"

    topic = models.ForeignKey("annotation.Topic", on_delete=models.CASCADE, related_name="certification_plans")
    classifier = models.ForeignKey("annotation.Classifier", on_delete=models.PROTECT, related_name="+")
    metric = models.CharField(max_length=16, choices=Metric.choices)
    target = models.FloatField()
    alpha = models.FloatField(default=0.05)
    power = models.FloatField(default=0.9)
    monitoring = models.BooleanField(default=False, help_text="Anytime-valid confidence sequence")
    # The dependence band the verdict is decided at (pair recall): the least favourable δ1 in [low, high].
    delta1_low = models.FloatField(default=0.8)
    delta1_high = models.FloatField(default=1.25)
    # Attempts declared for this (classifier, metric, target): alpha is then the per-attempt level
    # (Šidák split of family_alpha); family_alpha is null for a single declared attempt.
    attempts = models.PositiveSmallIntegerField(default=1)
    family_alpha = models.FloatField(null=True, blank=True)
    # Pair recall with a complement sample (region N): decided on the design-based bound.
    dependence_check = models.BooleanField(default=False)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.DRAFT)
    pilot = models.JSONField(default=dict)
    sample_size = models.JSONField(default=dict)
    estimated_cost = models.DecimalField(max_digits=10, decimal_places=2, null=True, blank=True)
    seed = models.BigIntegerField(null=True, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    locked_at = models.DateTimeField(null=True, blank=True)
    locked_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        constraints = [
            models.CheckConstraint(condition=Q(target__gt=0) & Q(target__lt=1), name="plan_target_range"),
            models.CheckConstraint(condition=Q(alpha__gt=0) & Q(alpha__lt=0.5), name="plan_alpha_range"),
            models.CheckConstraint(condition=Q(power__gt=0.5) & Q(power__lt=1), name="plan_power_range"),
            models.CheckConstraint(
                condition=Q(status="draft") | Q(locked_at__isnull=False), name="plan_locked_has_time"
            ),
            models.CheckConstraint(
                condition=Q(delta1_low__gt=0) & Q(delta1_low__lte=1) & Q(delta1_high__gte=1),
                name="plan_delta1_band",
            ),
            models.CheckConstraint(condition=Q(attempts__gte=1), name="plan_attempts_positive"),
            models.CheckConstraint(
                condition=Q(family_alpha__isnull=True) | (Q(family_alpha__gt=0) & Q(family_alpha__lt=0.5)),
                name="plan_family_alpha_range",
            ),
        ]


class CertificationSizing(Job):
    """One sizing of a draft plan's certification sample, run by a task (core.jobs: status, progress, sweep).

    Creating or editing a plan stores it at once and queues a sizing; the plan's latest sizing is its state
    ("sizing" while live). ``parameters`` is the fingerprint of the plan's parameters it sizes
    (``certification_plans.plan_parameters_fingerprint``): a result is stored only if it is still the plan's
    latest sizing and the plan still has those parameters, so a late result for an older edit is discarded.
    Progress counts the steps of the sizing (pilot, power search, fresh documents). Plans sized before this
    job existed have no row: they are sized."""

    status = models.CharField(max_length=16, choices=JobStatus.choices, default=JobStatus.PENDING)
    plan = models.ForeignKey(CertificationPlan, on_delete=models.CASCADE, related_name="sizings")
    parameters = models.CharField(max_length=64)
    processed = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["plan", "-pk"]
        indexes = [models.Index(fields=["status"], name="cert_sizing_status")]


class CertificationVerdict(models.Model):
    """Computed once, when the locked sample is fully judged; never rewritten."""

    plan = models.OneToOneField(CertificationPlan, on_delete=models.PROTECT, related_name="verdict")
    passed = models.BooleanField()
    estimate = models.FloatField()
    lower_bound = models.FloatField()
    inputs = models.JSONField()
    code_version = models.CharField(max_length=64)
    checksum = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)


class CertificationPlanDraw(models.Model):
    """A draw of a plan's certification sample: the link lives here, annotation only keeps an opaque key.

    The draw's ``stratum_key`` is ``certification_stratum_key(plan)``, which keeps the plan's sample a
    stratum of its own in ``annotation.services.sampling.draws``; this row says which plan it belongs to.
    """

    plan = models.ForeignKey(CertificationPlan, on_delete=models.PROTECT, related_name="draw_links")
    draw = models.OneToOneField("annotation.SampleDraw", on_delete=models.CASCADE, related_name="certification_link")

    class Meta:
        ordering = ["plan", "draw"]
