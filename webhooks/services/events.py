"""What each webhook event says (its ``data``), read from the database when the event fires.

Receivers (``webhooks/receivers.py``) call these; each returns the deliveries it created.
``sample.completed`` is derived: after new labels (``LabelsCompleted``) the task
``webhook_samples_completed_task`` looks at the topic's draws and announces, once each
(``WebhookSampleCompletion``), those whose documents now all have complete labels.
"""
from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef, Q
from django.urls import reverse

from annotation.models import CorpusUpload, Label, SampledDocument, SampleDraw, Topic
from estimation.models import CertificationVerdict, EstimateSnapshot
from webhooks.models import WebhookDelivery, WebhookEvent, WebhookSampleCompletion
from webhooks.services.deliveries import webhook_deliveries_create, webhook_endpoints_for


def _topic(topic: Topic) -> dict[str, Any]:
    return {"id": topic.pk, "name": topic.name}


def _recalls(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Per classifier: the pair model's ``recall`` (it assumes the two classifiers are independent) and, from
    report schema 3, the ``headline`` the report leads with {estimate, low, high, basis, judged, statement};
    null for an older snapshot."""
    rows = []
    for row in report.get("classifiers") or []:
        recall = row.get("recall") or {}
        headline = row.get("headline")
        rows.append({"name": row.get("name"), "role": row.get("role"),
                     "recall": {k: recall.get(k) for k in ("estimate", "low", "high")},
                     "headline": ({k: headline.get(k) for k in ("estimate", "low", "high", "basis", "judged",
                                                                "statement")}
                                  if isinstance(headline, dict) else None)})
    return rows


def webhook_report_updated(*, snapshot_id: int) -> list[WebhookDelivery]:
    snapshot = EstimateSnapshot.objects.select_related("topic").filter(pk=snapshot_id).first()
    if snapshot is None:
        return []
    data = {"topic": _topic(snapshot.topic), "version": snapshot.version, "judgments": snapshot.judgments,
            "snapshot_created_at": snapshot.created_at.isoformat(), "classifiers": _recalls(snapshot.report),
            "report_path": reverse("reports:topic_json", kwargs={"topic_id": snapshot.topic_id})}
    return webhook_deliveries_create(event=WebhookEvent.REPORT_UPDATED, topic_id=snapshot.topic_id, data=data)


def webhook_certification_decided(*, verdict_id: int) -> list[WebhookDelivery]:
    verdict = (CertificationVerdict.objects.select_related("plan__topic", "plan__classifier")
               .filter(pk=verdict_id).first())
    if verdict is None:
        return []
    plan = verdict.plan
    data = {"topic": _topic(plan.topic), "plan": {"id": plan.pk, "metric": plan.metric, "target": plan.target,
                                                  "alpha": plan.alpha},
            "classifier": {"id": plan.classifier_id, "name": plan.classifier.name},
            "passed": verdict.passed, "estimate": verdict.estimate, "lower_bound": verdict.lower_bound,
            "decided_at": verdict.created_at.isoformat()}
    return webhook_deliveries_create(event=WebhookEvent.CERTIFICATION_DECIDED, topic_id=plan.topic_id, data=data)


def webhook_import_finished(*, upload_id: int, corpus_id: int | None, succeeded: bool) -> list[WebhookDelivery]:
    upload = CorpusUpload.objects.select_related("corpus").filter(pk=upload_id).first()
    data: dict[str, Any] = {"upload_id": upload_id, "corpus_id": corpus_id, "succeeded": succeeded}
    if upload is not None:
        data.update(corpus_name=upload.corpus_name, status=upload.status, records=upload.progress,
                    error_line=upload.error_line, error=upload.error_problem or None,
                    finished_at=upload.finished_at.isoformat() if upload.finished_at else None)
    return webhook_deliveries_create(event=WebhookEvent.IMPORT_FINISHED, topic_id=None, data=data)


# --------------------------------------------------------------------------- sample.completed


def _complete_label() -> Q:
    return Q(majority__isnull=False) | Q(gold__isnull=False)


def sample_draws_newly_complete(*, topic_id: int) -> list[SampleDraw]:
    """The topic's draws, not yet announced, that have documents and whose documents all have complete labels."""
    labelled = Label.objects.filter(_complete_label(), topic_id=OuterRef("topic_id"),
                                    document_id=OuterRef("document_id"))
    incomplete = SampledDocument.objects.filter(draw=OuterRef("pk")).exclude(Exists(labelled))
    announced = WebhookSampleCompletion.objects.filter(draw=OuterRef("pk"))
    return list(SampleDraw.objects.filter(topic_id=topic_id)
                .filter(Exists(SampledDocument.objects.filter(draw=OuterRef("pk"))))
                .exclude(Exists(incomplete)).exclude(Exists(announced)).order_by("pk"))


def webhook_samples_completed(*, topic_id: int) -> list[WebhookDelivery]:
    """Announce each newly complete draw of the topic once (``sample.completed``), whoever listens now."""
    draws = sample_draws_newly_complete(topic_id=topic_id)
    if not draws:
        return []
    topic = Topic.objects.get(pk=topic_id)
    wanted = bool(webhook_endpoints_for(event=WebhookEvent.SAMPLE_COMPLETED, topic_id=topic_id))
    deliveries: list[WebhookDelivery] = []
    for draw in draws:
        try:
            with transaction.atomic():
                WebhookSampleCompletion.objects.create(draw=draw, topic_id=topic_id)
                if wanted:
                    documents = SampledDocument.objects.filter(draw=draw).count()
                    data = {"topic": _topic(topic), "draw": {
                        "id": draw.pk, "purpose": draw.purpose, "region": draw.region,
                        "stratum_key": draw.stratum_key, "classifier_id": draw.classifier_id,
                        "documents": documents, "drawn_at": draw.created_at.isoformat()}}
                    deliveries += webhook_deliveries_create(event=WebhookEvent.SAMPLE_COMPLETED, topic_id=topic_id,
                                                            data=data)
        except IntegrityError:
            continue  # announced meanwhile by a concurrent run
    return deliveries
