"""Hostile document text and names are escaped on every page that shows them.

The fixture's corpus, classifiers and topic names and the document titles and
texts all contain `<script>alert(1)</script>" onmouseover="alert(1)`.
"""
from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

RAW = ("<script>alert(1)</script>", '" onmouseover="alert(1)', "onmouseover=\"alert")
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"


def _check(html: str, where: str) -> None:
    for raw in RAW:
        assert raw not in html, f"{where}: unescaped {raw!r}"
    assert ESCAPED in html, f"{where}: the hostile text is not shown at all, so the check proves nothing"


@pytest.fixture
def clients(world):
    made = {}
    for role in ("analyst", "manager", "annotator"):
        client = Client()
        client.force_login(world["accounts"][role])
        made[role] = client
    return made


def test_analyst_pages_escape_names_and_document_text(world, clients):
    client, corpus, topic = clients["analyst"], world["corpus"], world["topic"]
    pages = {
        "topics": reverse("analyst:topics"),
        "topic": reverse("analyst:topic", args=[topic.pk]),
        "hit preview": reverse("analyst:topic_hit_preview", args=[topic.pk]),
        "corpora": reverse("analyst:corpora"),
        "corpus": reverse("analyst:corpus", args=[corpus.pk]),
        "classifier": reverse("analyst:classifier", args=[world["c1"].pk]),
        "keyword preview": reverse("analyst:keyword_preview", args=[corpus.pk]) + "?terms=oil&fields=title&fields=text",
    }
    for where, url in pages.items():
        response = client.get(url)
        assert response.status_code == 200, where
        _check(response.content.decode(), where)
    # The keyword page itself, with the preview rendered server-side (no JavaScript).
    response = client.post(reverse("analyst:classifier_keywords", args=[corpus.pk]),
                           {"name": "x", "terms": "oil", "fields": ["title", "text"], "preview": "1"})
    _check(response.content.decode(), "keyword page preview")
    assert "<mark>oil</mark>" in response.content.decode()


def test_terms_typed_by_the_analyst_are_escaped_too(world, clients):
    response = clients["analyst"].post(reverse("analyst:classifier_keywords", args=[world["corpus"].pk]),
                                       {"name": '<b onmouseover="x">', "terms": "<script>alert(1)</script>",
                                        "fields": ["title", "text"], "preview": "1"})
    html = response.content.decode()
    assert '<b onmouseover="x">' not in html and "<mark><script>" not in html
    assert "<mark>&lt;script&gt;alert(1)&lt;/script&gt;</mark>" in html


def test_manager_pages_escape_names(world, clients):
    client, topic = clients["manager"], world["topic"]
    for where, url in {"overview": reverse("reports:topics"), "report": reverse("reports:topic", args=[topic.pk]),
                       "print": reverse("reports:topic_print", args=[topic.pk])}.items():
        response = client.get(url)
        assert response.status_code == 200
        _check(response.content.decode(), where)


def test_annotator_page_escapes_document_text(world, clients):
    from annotation.services.crowd.assignments import assignment_claim
    from annotation.services.crowd.workers import worker_for_user
    from annotation.services.sampling.draws import samples_launch

    samples_launch(topic=world["topic"], per_region=7, seed=9)
    assignment = assignment_claim(worker=worker_for_user(user=world["accounts"]["annotator"]), topic=world["topic"])
    response = clients["annotator"].get(reverse("annotator:assignment", args=[assignment.pk]))
    assert response.status_code == 200
    _check(response.content.decode(), "annotator page")
