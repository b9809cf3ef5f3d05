"""Each event fires a delivery, after commit, to the endpoints that subscribed to it (topic or global)."""
from __future__ import annotations

import json

import pytest
from django.db import transaction

from annotation.events import ImportFinished, LabelsCompleted
from annotation.models import CorpusUpload, Label, SampleDraw
from core.events import event_send_on_commit
from estimation.models import CertificationPlan
from estimation.services.certification_locks import certification_plan_lock
from estimation.services.certification_plans import certification_plan_create
from estimation.services.certification_verdicts import certification_decide
from estimation.services.recompute import topic_snapshot_create
from tests.factories import (
    TopicFactory,
    UserFactory,
    build_topic,
    c1,
    certification_ids,
    judge,
    make_draw,
    make_label,
    make_pair_world,
    pilot,
)
from webhooks.models import WebhookDelivery, WebhookEvent, WebhookSampleCompletion
from webhooks.services.endpoints import webhook_endpoint_create

pytestmark = pytest.mark.django_db
E = WebhookEvent
Status = WebhookDelivery.Status


def _bodies(receiver, event: str) -> list[dict]:
    return [json.loads(r.body) for r in receiver.requests if r.headers["X-Recall-Event"] == event]


def test_a_stored_report_snapshot_fires_report_updated(receiver, django_capture_on_commit_callbacks):
    built = build_topic()
    other = TopicFactory.create(corpus=built.topic.corpus)
    mine = webhook_endpoint_create(url=receiver.url("/mine"), events=[E.REPORT_UPDATED], topic=built.topic)
    every = webhook_endpoint_create(url=receiver.url("/all"), events=[E.REPORT_UPDATED, E.IMPORT_FINISHED])
    elsewhere = webhook_endpoint_create(url=receiver.url("/other"), events=[E.REPORT_UPDATED], topic=other)
    deaf = webhook_endpoint_create(url=receiver.url("/deaf"), events=[E.SAMPLE_COMPLETED], topic=built.topic)
    with django_capture_on_commit_callbacks(execute=True):
        snapshot = topic_snapshot_create(topic_id=built.topic.pk, draws=2000)
        assert not WebhookDelivery.objects.exists()  # nothing before the commit
    assert sorted(WebhookDelivery.objects.values_list("endpoint_id", flat=True)) == sorted([mine.pk, every.pk])
    assert not WebhookDelivery.objects.filter(endpoint__in=[elsewhere, deaf]).exists()
    assert set(WebhookDelivery.objects.values_list("status", flat=True)) == {Status.SUCCEEDED}
    assert sorted(r.path for r in receiver.requests) == ["/all", "/mine"]
    body = _bodies(receiver, "report.updated")[0]
    assert body["data"]["topic"]["id"] == built.topic.pk and body["data"]["version"] == snapshot.version == 1
    assert body["data"]["report_path"] == f"/reports/topics/{built.topic.pk}/report.json"

    # Unchanged inputs store no new snapshot, so nothing is announced.
    with django_capture_on_commit_callbacks(execute=True):
        topic_snapshot_create(topic_id=built.topic.pk, draws=2000)
    assert WebhookDelivery.objects.count() == 2


def test_a_stored_verdict_fires_certification_decided(receiver, django_capture_on_commit_callbacks):
    world = make_pair_world(n=4000, prevalence=0.2, recall1=0.85, recall2=0.6, noise=0.01, seed=5)
    pilot(world)
    plan = certification_plan_create(topic=world.topic, classifier=c1(world),
                                     metric=CertificationPlan.Metric.PAIR_RECALL, target=0.6)
    plan = certification_plan_lock(plan_id=plan.pk, user=UserFactory.create(username="boss"), seed=1234)
    judge(world, certification_ids(plan))
    endpoint = webhook_endpoint_create(url=receiver.url(), events=[E.CERTIFICATION_DECIDED], topic=world.topic)
    with django_capture_on_commit_callbacks(execute=True):
        verdict = certification_decide(plan_id=plan.pk)
    assert verdict is not None
    [delivery] = WebhookDelivery.objects.filter(endpoint=endpoint)
    assert delivery.event == "certification.decided" and delivery.status == Status.SUCCEEDED
    [body] = _bodies(receiver, "certification.decided")
    assert body["data"]["plan"]["id"] == plan.pk and body["data"]["passed"] is verdict.passed is True
    assert body["data"]["lower_bound"] == pytest.approx(verdict.lower_bound)
    # Deciding again returns the stored verdict and announces nothing.
    with django_capture_on_commit_callbacks(execute=True):
        certification_decide(plan_id=plan.pk)
    assert WebhookDelivery.objects.filter(endpoint=endpoint).count() == 1


def test_a_finished_import_fires_import_finished_to_global_endpoints_only(receiver,
                                                                          django_capture_on_commit_callbacks):
    topic = TopicFactory.create()
    upload = CorpusUpload.objects.create(corpus_name="news", original_name="news.jsonl", file_path="x",
                                         status=CorpusUpload.Status.DONE, corpus=topic.corpus, progress=12)
    every = webhook_endpoint_create(url=receiver.url(), events=[E.IMPORT_FINISHED])
    scoped = webhook_endpoint_create(url=receiver.url("/scoped"), events=[E.IMPORT_FINISHED], topic=topic)
    with django_capture_on_commit_callbacks(execute=True):
        event_send_on_commit(event=ImportFinished(upload_id=upload.pk, corpus_id=topic.corpus_id, succeeded=True))
    assert list(WebhookDelivery.objects.values_list("endpoint_id", flat=True)) == [every.pk]
    assert not WebhookDelivery.objects.filter(endpoint=scoped).exists()
    [body] = _bodies(receiver, "import.finished")
    assert body["data"] == {**body["data"], "upload_id": upload.pk, "corpus_id": topic.corpus_id,
                            "succeeded": True, "corpus_name": "news", "status": "done", "records": 12}


@pytest.mark.django_db(transaction=True)  # real commits: the same event is announced by three transactions
def test_a_draw_whose_documents_all_have_labels_fires_sample_completed_once(receiver):
    built = build_topic(with_labels=False)
    topic, docs = built.topic, built.docs
    draw = make_draw(topic, SampleDraw.Purpose.PAIR, "A12", [20, 21, 22], docs)
    unfinished = make_draw(topic, SampleDraw.Purpose.PAIR, "B1", [0, 1], docs)
    endpoint = webhook_endpoint_create(url=receiver.url(), events=[E.SAMPLE_COMPLETED], topic=topic)
    make_label(topic, docs[20], relevant=True)
    make_label(topic, docs[21], relevant=False)
    make_label(topic, docs[22])  # two votes short
    make_label(topic, docs[0], relevant=True)

    def labels_completed() -> None:
        with transaction.atomic():
            event_send_on_commit(event=LabelsCompleted(topic_id=topic.pk))

    labels_completed()
    assert not WebhookDelivery.objects.filter(event=E.SAMPLE_COMPLETED).exists()

    Label.objects.filter(topic=topic, document_id=docs[22]).update(votes_total=3, votes_relevant=3, majority=True)
    labels_completed()
    [delivery] = WebhookDelivery.objects.filter(event=E.SAMPLE_COMPLETED)
    assert delivery.endpoint_id == endpoint.pk and delivery.status == Status.SUCCEEDED
    [body] = _bodies(receiver, "sample.completed")
    assert body["data"]["draw"]["id"] == draw.pk and body["data"]["draw"]["documents"] == 3
    assert body["data"]["draw"]["region"] == "A12"

    labels_completed()  # nothing new: the draw is announced once
    assert WebhookDelivery.objects.filter(event=E.SAMPLE_COMPLETED).count() == 1
    assert list(WebhookSampleCompletion.objects.values_list("draw_id", flat=True)) == [draw.pk]
    assert unfinished.pk not in WebhookSampleCompletion.objects.values_list("draw_id", flat=True)


@pytest.mark.django_db(transaction=True)  # the upload service commits, then its task imports and announces
def test_an_upload_imported_by_the_upload_service_fires_import_finished(receiver):
    from annotation.services.corpora.corpus_uploads import corpus_upload_create

    webhook_endpoint_create(url=receiver.url(), events=[E.IMPORT_FINISHED])
    lines = b"".join(json.dumps({"id": f"d{i}", "title": f"T{i}", "body": "x"}).encode() + b"\n" for i in range(5))
    with transaction.atomic():
        upload = corpus_upload_create(corpus_name="tonight", original_name="tonight.jsonl", chunks=[lines],
                                      id_field="id", text_fields=["title", "body"])
    upload.refresh_from_db()
    assert upload.status == CorpusUpload.Status.DONE
    [body] = _bodies(receiver, "import.finished")
    assert body["data"]["upload_id"] == upload.pk and body["data"]["succeeded"] is True
    assert body["data"]["corpus_id"] == upload.corpus_id and body["data"]["records"] == 5


def test_draws_complete_before_the_install_are_not_announced(receiver):
    """Migration 0002 records the draws complete at install time as announced (no burst of old news)."""
    import importlib

    from django.apps import apps

    built = build_topic(with_labels=False)
    topic, docs = built.topic, built.docs
    done = make_draw(topic, SampleDraw.Purpose.PAIR, "A12", [20, 21], docs)
    open_draw = make_draw(topic, SampleDraw.Purpose.PAIR, "B1", [0, 1], docs)
    for position in (20, 21, 0):
        make_label(topic, docs[position], relevant=True)
    migration = importlib.import_module("webhooks.migrations.0002_existing_complete_draws")
    migration.record_complete_draws(apps, None)
    assert list(WebhookSampleCompletion.objects.values_list("draw_id", flat=True)) == [done.pk]
    webhook_endpoint_create(url=receiver.url(), events=[E.SAMPLE_COMPLETED])
    make_label(topic, docs[1], relevant=False)
    from webhooks.services.events import webhook_samples_completed

    [delivery] = webhook_samples_completed(topic_id=topic.pk)
    assert delivery.payload["data"]["draw"]["id"] == open_draw.pk
