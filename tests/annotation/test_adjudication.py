"""Adjudication through the analyst page (issue 27): a split or tied document is in the queue, an analyst records
its final answer with a reason, it leaves the queue, and the report counts it with that answer (as certain).
Non-analysts get 403; a repeated POST changes nothing; a recompute is scheduled through LabelsCompleted."""
from __future__ import annotations

import re
from unittest import mock

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Adjudication, Document, Label
from annotation.services.crowd.adjudication import AdjudicationRefused, document_adjudicate
from estimation.services.recompute import topic_snapshot_create
from tests.factories import disputed_world, user_with_role

pytestmark = pytest.mark.django_db


def _client(role: str) -> Client:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user_with_role(f"adj-{role}", role))
    return client


def _csrf(page: str) -> str:
    match = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert match, "the page has no CSRF token"
    return match.group(1)


def _in_queue(page: str, doc_id: int) -> bool:
    return f'id="doc-{doc_id}"' in page


def test_a_split_document_is_adjudicated_on_the_page_and_the_report_uses_its_answer(django_capture_on_commit_callbacks):
    world, tied, split, region = disputed_world()
    topic = world.topic
    before = topic_snapshot_create(topic_id=topic.pk)
    assert "adjudicated" not in before.inputs
    client = _client("analyst")
    url = reverse("analyst:adjudication", args=[topic.pk])
    page = client.get(url).content.decode()
    assert _in_queue(page, tied) and _in_queue(page, split)

    record = reverse("analyst:adjudication_record", args=[topic.pk])
    with mock.patch("estimation.receivers.topic_recompute_schedule") as schedule:
        with django_capture_on_commit_callbacks(execute=True):
            for doc_id in (tied, split):
                response = client.post(record, {"document": doc_id, "label": "yes", "reason": "Mentions wheat exports.",
                                                "csrfmiddlewaretoken": _csrf(page)})
                assert response.status_code == 302
    # One recompute scheduled (events of one transaction are delivered once per topic).
    assert schedule.called and schedule.call_args.kwargs == {"topic_id": topic.pk}
    assert Adjudication.objects.filter(topic=topic).count() == 2

    page = client.get(url).content.decode()
    assert not _in_queue(page, tied) and not _in_queue(page, split)
    assert "Mentions wheat exports." in page  # listed as adjudicated, with its reason

    after = topic_snapshot_create(topic_id=topic.pk)
    assert after.version > before.version
    assert after.inputs["adjudicated"] == 2 and after.report["adjudicated"] == 2  # the report says how many
    # The tied document (in no estimate before) is judged now; the split one counts as relevant instead of not.
    assert after.report["judged_documents"] == before.report["judged_documents"] + 1
    sample_before, sample_after = before.inputs["samples"][region], after.inputs["samples"][region]
    index = sample_after["document_ids"].index(split)
    assert sample_before["labels"][sample_before["document_ids"].index(split)] == 0.0
    assert sample_after["labels"][index] == 1.0


def test_a_repeated_post_changes_nothing(django_capture_on_commit_callbacks):
    world, tied, _split, _region = disputed_world()
    topic = world.topic
    client = _client("analyst")
    page = client.get(reverse("analyst:adjudication", args=[topic.pk])).content.decode()
    body = {"document": tied, "label": "no", "reason": "Off topic: a recipe.", "csrfmiddlewaretoken": _csrf(page)}
    record = reverse("analyst:adjudication_record", args=[topic.pk])
    with mock.patch("estimation.receivers.topic_recompute_schedule") as schedule:
        with django_capture_on_commit_callbacks(execute=True):
            assert client.post(record, body).status_code == 302
        first = Adjudication.objects.get(topic=topic, document_id=tied)
        with django_capture_on_commit_callbacks(execute=True):
            assert client.post(record, body).status_code == 302
    again = Adjudication.objects.get(topic=topic, document_id=tied)
    assert Adjudication.objects.filter(topic=topic).count() == 1
    assert (again.relevant, again.reason, again.updated_at) == (first.relevant, first.reason, first.updated_at)
    assert schedule.call_count == 1  # the second, identical POST scheduled nothing


def test_non_analysts_get_403_and_the_post_needs_its_csrf_token():
    world, tied, _split, _region = disputed_world()
    topic = world.topic
    for role in ("manager", "annotator"):
        client = _client(role)
        assert client.get(reverse("analyst:adjudication", args=[topic.pk])).status_code == 403
        client = Client()
        client.force_login(user_with_role(f"adj2-{role}", role))
        response = client.post(reverse("analyst:adjudication_record", args=[topic.pk]),
                               {"document": tied, "label": "yes", "reason": "x"})
        assert response.status_code == 403
    no_token = _client("analyst").post(reverse("analyst:adjudication_record", args=[topic.pk]),
                                       {"document": tied, "label": "yes", "reason": "x"})
    assert no_token.status_code == 403
    assert not Adjudication.objects.exists()


def test_refused_without_a_reason_for_gold_or_incomplete_documents():
    world, tied, _split, _region = disputed_world()
    topic = world.topic
    user = user_with_role("adj-service", "analyst")
    document = Document.objects.get(pk=tied)
    with pytest.raises(AdjudicationRefused):
        document_adjudicate(topic=topic, document=document, label=True, reason="  ", user=user)
    unjudged = Document.objects.filter(corpus=topic.corpus).exclude(
        pk__in=Label.objects.filter(topic=topic).values("document_id")).first()
    with pytest.raises(AdjudicationRefused):
        document_adjudicate(topic=topic, document=unjudged, label=True, reason="why", user=user)
    Label.objects.filter(topic=topic, document_id=tied).update(gold=True)
    with pytest.raises(AdjudicationRefused):
        document_adjudicate(topic=topic, document=document, label=True, reason="why", user=user)
    assert not Adjudication.objects.exists()
