"""Webhook endpoints a manager registered, and every delivery made to them (issue 14).

Invariants live in the database: event names and statuses are check-constrained,
a delivery is ``succeeded`` exactly when it has ``delivered_at``, a pending
delivery always has its next attempt time, and a draw is announced as
``sample.completed`` once (``WebhookSampleCompletion.draw`` is unique).
"""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class WebhookEvent(models.TextChoices):
    REPORT_UPDATED = "report.updated", "A new report snapshot was stored"
    CERTIFICATION_DECIDED = "certification.decided", "A certification verdict was stored"
    SAMPLE_COMPLETED = "sample.completed", "Every document of a sample draw has its label"
    IMPORT_FINISHED = "import.finished", "A corpus upload finished importing (or failed)"


EVENT_NAMES = [value for value, _ in WebhookEvent.choices]


class WebhookEndpoint(models.Model):
    """A URL that receives signed POSTs for the chosen events of one topic (or of every topic when global)."""

    url = models.URLField(max_length=500)
    # Kept so the app can sign; shown once, on the page answering the registration, never again.
    secret = models.CharField(max_length=128)
    topic = models.ForeignKey("annotation.Topic", null=True, blank=True, on_delete=models.CASCADE,
                              related_name="+", help_text="Empty: every topic (global).")
    # A non-empty subset of EVENT_NAMES (checked by the form and the service; non-empty by the database).
    events = models.JSONField(default=list)
    active = models.BooleanField(default=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(url__startswith="http://") | Q(url__startswith="https://"),
                                   name="webhook_endpoint_url_http"),
            models.CheckConstraint(condition=~Q(secret=""), name="webhook_endpoint_secret_set"),
            models.CheckConstraint(condition=~Q(events=[]), name="webhook_endpoint_events_set"),
        ]

    def __str__(self) -> str:
        return self.url

    def subscribes(self, event: str) -> bool:
        return event in (self.events or [])


class WebhookDelivery(models.Model):
    """One event sent (or to be sent) to one endpoint; a replay is a new delivery of the same payload."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        SUCCEEDED = "succeeded", "Delivered"
        FAILED = "failed", "Failed"

    endpoint = models.ForeignKey(WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries")
    event = models.CharField(max_length=32, choices=WebhookEvent.choices)
    # The JSON body sent, byte for byte the same at every attempt and replay (webhooks.services.deliveries).
    payload = models.JSONField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    last_response_code = models.PositiveSmallIntegerField(null=True, blank=True)
    last_error = models.TextField(blank=True, default="")
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    replay_of = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="replays")
    created_at = models.DateTimeField(auto_now_add=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["status", "next_attempt_at"], name="webhook_delivery_due")]
        constraints = [
            models.CheckConstraint(condition=Q(status__in=["pending", "succeeded", "failed"]),
                                   name="webhook_delivery_status_valid"),
            models.CheckConstraint(condition=Q(event__in=EVENT_NAMES), name="webhook_delivery_event_valid"),
            models.CheckConstraint(
                condition=(Q(status="succeeded", delivered_at__isnull=False)
                           | (~Q(status="succeeded") & Q(delivered_at__isnull=True))),
                name="webhook_delivery_delivered_iff_succeeded"),
            models.CheckConstraint(condition=~Q(status="pending") | Q(next_attempt_at__isnull=False),
                                   name="webhook_delivery_pending_has_next_attempt"),
        ]

    def __str__(self) -> str:
        return f"{self.event} → {self.endpoint_id} ({self.status})"


class WebhookSampleCompletion(models.Model):
    """A sample draw whose documents all have complete labels, announced once as ``sample.completed``."""

    draw = models.OneToOneField("annotation.SampleDraw", on_delete=models.CASCADE, related_name="+")
    topic = models.ForeignKey("annotation.Topic", on_delete=models.CASCADE, related_name="+")
    completed_at = models.DateTimeField(auto_now_add=True)
