"""Issue 26 item 1: a keyword filter or a keyword router reads only the fields the caller names.

Before: `POST …/classifiers/keywords/` without `fields` searched title and text, and a router rule without
`fields` searched every text field, silently. Now both answer 400 with the reason, and the router page
ticks no field in advance.
"""
from __future__ import annotations

import re

import pytest

from annotation.models import Classifier
from tests.factories import CorpusFactory, make_documents, user_with_role

pytestmark = pytest.mark.django_db

TEXTS = ["The wheat harvest was large."] * 10 + ["A football match ended late."] * 10


@pytest.fixture
def corpus():
    corpus = CorpusFactory(name="news")
    make_documents(corpus, 20, texts=TEXTS)
    return corpus


@pytest.fixture
def topic_set(analyst, corpus):
    body = {"corpus": corpus.pk, "name": "grain and games", "classes": [{"name": "Wheat"}, {"name": "Sport"}],
            "instructions": "Pick the one topic.", "hit_size": 5, "reward_per_hit": "0.50", "budget": "20.00"}
    response = analyst.client.post("/api/v1/topic-sets/", body, format="json")
    assert response.status_code == 201, response.content
    return response.json()["id"]


def test_keyword_filter_without_fields_is_refused_with_the_reason(analyst, corpus):
    response = analyst.client.post(f"/api/v1/corpora/{corpus.pk}/classifiers/keywords/",
                                   {"name": "kw", "terms": ["wheat"]}, format="json")
    assert response.status_code == 400, response.content
    assert response["Content-Type"].startswith("application/problem+json")
    assert "fields" in response.json()["detail"] and "none is read by default" in response.json()["detail"]
    assert not Classifier.objects.filter(name="kw").exists()
    named = analyst.client.post(f"/api/v1/corpora/{corpus.pk}/classifiers/keywords/",
                                {"name": "kw", "terms": ["wheat"], "fields": ["title"]}, format="json")
    assert named.status_code == 201, named.content
    assert Classifier.objects.get(name="kw").definition["fields"] == ["title"]


def test_router_rule_without_fields_is_refused_with_the_reason(analyst, topic_set):
    url = f"/api/v1/topic-sets/{topic_set}/routers/keywords/"
    response = analyst.client.post(url, {"name": "kw", "rules": [{"class": 1, "terms": ["wheat"]}]}, format="json")
    assert response.status_code == 400, response.content
    assert "rule 1" in response.json()["detail"] and "none is read by default" in response.json()["detail"]
    named = analyst.client.post(url, {"name": "kw", "rules": [{"class": 1, "terms": ["wheat"], "fields": ["text"]}]},
                                format="json")
    assert named.status_code == 202, named.content


def test_router_keyword_page_ticks_no_field_in_advance(client, topic_set):
    client.force_login(user_with_role("ana2", "analyst"))
    html = client.get(f"/analyst/topic-sets/{topic_set}/routers/keywords/").content.decode()
    boxes = re.findall(r'<input[^>]*name="rule-\d+-fields"[^>]*>', html)
    assert boxes, "the page shows the field choices"
    assert not [box for box in boxes if "checked" in box]
