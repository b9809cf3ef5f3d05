"""Issue 27: a worker's id in the raw judgments export is the id the worker-quality page shows for them.

Before, the page showed the account's username (or the platform id) and the export a keyed hash, so the two could
not be matched for local workers.
"""
from __future__ import annotations

import html
import re

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Judgment
from estimation.services.exports import judgment_export_rows
from tests.factories import user_with_role

pytestmark = pytest.mark.django_db

ROW = re.compile(r'<tr id="worker-(\d+)"[^>]*>\s*<td><code>(.*?)</code>', re.S)


def _page_ids(topic, role: str = "analyst") -> dict[int, str]:
    client = Client()
    client.force_login(user_with_role(f"{role}-ids", role))
    response = client.get(reverse("analyst:workers", args=[topic.pk]))
    assert response.status_code == 200
    text = response.content.decode()
    return {int(pk): html.unescape(cell).strip() for pk, cell in ROW.findall(text)}


def test_the_quality_page_shows_each_worker_by_the_id_of_the_raw_judgments_export(judged):
    topic = judged["topic"]
    page = _page_ids(topic)
    worker_of = dict(Judgment.objects.filter(topic=topic).values_list("id", "worker_id"))
    exported: dict[int, set[str]] = {}
    for row in judgment_export_rows(topic=topic):
        exported.setdefault(worker_of[row["judgment_id"]], set()).add(row["WorkerId"])
    assert set(page) == set(exported) and len(page) == 3
    for worker_id, ids in exported.items():
        assert ids == {page[worker_id]}, f"worker {worker_id}: page {page[worker_id]!r}, export {ids}"
    assert page[judged["workers"][0].pk] == "A1MTURKWORKER"  # a platform worker keeps the platform's id
    # The id is never a username (the page may add a local account's name beside it, for staff).
    assert not any(user.username in ident for user in judged["users"] for ident in page.values())


def test_managers_see_the_same_ids(judged):
    topic = judged["topic"]
    assert _page_ids(topic, "manager") == _page_ids(topic, "analyst")
