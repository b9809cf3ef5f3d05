"""Adjudication through the API (issue 27): the same service as the page, analysts only, idempotent."""
from __future__ import annotations

from unittest import mock

import pytest

from annotation.models import Adjudication
from estimation.services.recompute import topic_snapshot_create
from tests.factories import disputed_world

pytestmark = pytest.mark.django_db


def _url(topic_id: int) -> str:
    return f"/api/v1/topics/{topic_id}/adjudication/"


def test_queue_adjudicate_and_the_report_counts_it(analyst, django_capture_on_commit_callbacks):
    world, tied, split, region = disputed_world()
    topic = world.topic
    before = topic_snapshot_create(topic_id=topic.pk)
    queue = analyst.client.get(_url(topic.pk))
    assert queue.status_code == 200
    items = {item["document_id"]: item for item in queue.json()}
    assert {tied, split} <= set(items)
    assert items[tied]["why"] == "tie" and items[split]["why"] == "split"

    with mock.patch("estimation.receivers.topic_recompute_schedule") as schedule:
        with django_capture_on_commit_callbacks(execute=True):
            response = analyst.client.post(_url(topic.pk), {"document_id": split, "label": True,
                                                            "reason": "Names wheat in the title."}, format="json")
        assert response.status_code == 201, response.content
        assert response.json()["changed"] is True and response.json()["label"] is True
        assert schedule.call_count == 1
        with django_capture_on_commit_callbacks(execute=True):
            again = analyst.client.post(_url(topic.pk), {"document_id": split, "label": True,
                                                         "reason": "Names wheat in the title."}, format="json")
        assert again.status_code == 200 and again.json()["changed"] is False
        assert again.json()["updated_at"] == response.json()["updated_at"]
        assert schedule.call_count == 1  # nothing new to recompute
    assert Adjudication.objects.filter(topic=topic).count() == 1

    assert split not in {item["document_id"] for item in analyst.client.get(_url(topic.pk)).json()}
    after = topic_snapshot_create(topic_id=topic.pk)
    assert after.inputs["adjudicated"] == 1
    sample = after.inputs["samples"][region]
    assert sample["labels"][sample["document_ids"].index(split)] == 1.0
    assert sample["relevant"] == before.inputs["samples"][region]["relevant"] + 1


def test_non_analysts_get_403(callers):
    world, tied, _split, _region = disputed_world()
    topic = world.topic
    for role in ("manager", "annotator", None):
        client = callers[role].client
        assert client.get(_url(topic.pk)).status_code == 403, role
        response = client.post(_url(topic.pk), {"document_id": tied, "label": True, "reason": "x"}, format="json")
        assert response.status_code == 403, role
    assert not Adjudication.objects.exists()


def test_refusals_are_400_problems(analyst):
    world, tied, _split, _region = disputed_world()
    topic = world.topic
    response = analyst.client.post(_url(topic.pk), {"document_id": tied, "label": True, "reason": " "},
                                   format="json")
    assert response.status_code == 400
    assert not Adjudication.objects.exists()
