"""The report page of a topic set (seed 002): renders, escapes class names, checks roles, answers its forms, exports."""
from __future__ import annotations

import csv
import io
import json
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.models import Assignment, Hit, Judgment
from estimation.services.report_csv import MULTICLASS_CSV_COLUMNS
from tests.factories import HOSTILE, HOSTILE_TEXT, make_worker, topic_set_judged_build, user_with_role

pytestmark = pytest.mark.django_db

CONFUSION = [[6, 2, 0, 1],
             [1, 9, 1, 0],
             [2, 1, 8, 1],
             [0, 0, 2, 9]]
CLASSES = ["sport " + HOSTILE, "=politics", "science"]


@pytest.fixture
def topic_set():
    return topic_set_judged_build(confusion=CONFUSION, classes=CLASSES, router_name="router " + HOSTILE,
                                  name="news set " + HOSTILE)


def _client(role: str | None) -> Client:
    client = Client()
    if role is not None:
        client.force_login(user_with_role(f"user-{role}", role))
    return client


def test_page_renders_every_block_and_escapes_names(topic_set):
    response = _client("manager").get(reverse("reports:topic", args=[topic_set.topic.pk]))
    assert response.status_code == 200
    page = response.content.decode()
    assert HOSTILE_TEXT not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    router = topic_set.router.pk
    for block in (f'id="f1-summary-{router}"', f'id="per-class-{router}"', 'class="cell"', 'class="density"',
                  'id="none-rule"', 'id="assumptions"', f'id="width-form-{router}"', "Topic set"):
        assert block in page, block
    # The heat map shades the whole matrix: (M + 1)^2 cells.
    assert page.count('class="cell"') == 16
    # "None of these" is in the per-class table, marked as not averaged.
    assert "(not averaged)" in page
    # The reference defaults to seed 002's 0.8.
    assert "P(F1 &gt; 0.8)" in page


def test_reference_is_a_validated_get_parameter(topic_set):
    url = reverse("reports:topic", args=[topic_set.topic.pk])
    client = _client("manager")
    page = client.get(url, {"reference": "0.5"}).content.decode()
    assert "P(F1 &gt; 0.5)" in page
    for bad in ("abc", "1.5", "-1"):
        response = client.get(url, {"reference": bad})
        assert response.status_code == 200
        page = response.content.decode()
        assert "P(F1 &gt; 0.8)" in page  # falls back to the default, with the form's error shown
        assert 'class="errorlist"' in page


def test_hdi_width_form_answers_with_a_sample_size(topic_set):
    url = reverse("reports:topic", args=[topic_set.topic.pk])
    client = _client("manager")
    router = topic_set.router.pk
    page = client.get(url, {"router": router, "average": "macro", "width": "0.1"}).content.decode()
    assert f'id="plan-{router}"' in page
    assert 'class="plan-n"' in page  # 45 documents give a much wider interval than 0.1: a larger n is proposed
    # Refusals are messages on the page, never a 500.
    for bad in ({"router": router, "average": "macro", "width": "7"},
                {"router": router, "average": "median", "width": "0.1"},
                {"router": "x", "average": "macro", "width": "0.1"}):
        response = client.get(url, bad)
        assert response.status_code == 200
    response = client.get(url, {"router": router + 999, "average": "macro", "width": "0.1"})
    assert response.status_code == 200
    assert f'id="plan-{router}"' not in response.content.decode()


@pytest.mark.parametrize("role, status", [("manager", 200), ("analyst", 200), ("annotator", 403), (None, 302)])
def test_roles(topic_set, role, status):
    url = reverse("reports:topic", args=[topic_set.topic.pk])
    response = _client(role).get(url)
    assert response.status_code == status
    if role is None:
        assert "login" in response["Location"]


def test_exports_download(topic_set):
    client = _client("manager")
    topic = topic_set.topic
    response = client.get(reverse("reports:topic_csv", args=[topic.pk]))
    assert response.status_code == 200
    assert "attachment" in response["Content-Disposition"]
    lines = [line for line in response.content.decode().splitlines() if not line.startswith("#")]
    rows = list(csv.DictReader(io.StringIO("\n".join(lines))))
    assert list(rows[0]) == MULTICLASS_CSV_COLUMNS
    averages = [r for r in rows if r["row_type"] == "average"]
    assert [r["average_or_class"] for r in averages] == ["micro-F1", "macro-F1"]
    classes = [r for r in rows if r["row_type"] == "class"]
    assert len(classes) == 4
    # A class name a spreadsheet would run as a formula is neutralised.
    assert "'=politics" in [r["average_or_class"] for r in classes]
    cells = [r for r in rows if r["row_type"] == "cell"]
    assert sum(float(r["count"]) for r in cells) == sum(map(sum, CONFUSION))

    data = json.loads(client.get(reverse("reports:topic_json", args=[topic.pk])).content)
    assert data["report"]["kind"] == "multiclass"
    assert data["report"]["routers"][0]["confusion"][0] == CONFUSION[0]

    # Raw judgments name the class chosen.
    worker = make_worker()
    hit = Hit.objects.create(topic=topic, reward="0.10")
    assignment = Assignment.objects.create(hit=hit, worker=worker, slot=1, status=Assignment.Status.SUBMITTED,
                                           deadline=timezone.now() + timedelta(hours=1))
    Judgment.objects.create(assignment=assignment, topic=topic, document_id=topic_set.docs[0], worker=worker,
                            choice=2)
    Judgment.objects.create(assignment=assignment, topic=topic, document_id=topic_set.docs[1], worker=worker)
    response = client.get(reverse("reports:topic_judgments_csv", args=[topic.pk]))
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert [r["Answer.relevance"] for r in rows] == ["'=politics", "unsure"]
    assert [r["Answer.class"] for r in rows] == ["2", ""]
    assert rows[0]["label_majority"] == "None of these"


def test_printable_page(topic_set):
    response = _client("manager").get(reverse("reports:topic_print", args=[topic_set.topic.pk]))
    assert response.status_code == 200
    page = response.content.decode()
    assert 'class="print"' in page and 'id="width-form-' not in page


def test_overview_lists_topic_sets_with_their_kind(topic_set):
    client = _client("manager")
    client.get(reverse("reports:topic", args=[topic_set.topic.pk]))  # the first snapshot
    page = client.get(reverse("reports:topics")).content.decode()
    assert 'id="topics-table"' in page
    assert "Topic set" in page
    assert "macro-F1" in page
    assert HOSTILE_TEXT not in page
