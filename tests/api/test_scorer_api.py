"""Issue 23: a topic's scorer through the API and the pages — set, cleared, and refused with clear 400s / form
errors (another corpus, a classifier without scores, an unknown id, a change once N is drawn), never a 500."""
from __future__ import annotations

import numpy as np
import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Classifier, ClassifierScore, Topic
from annotation.services.sampling.draws import samples_draw
from tests.factories import ClassifierFactory, CorpusFactory, make_pair_world, user_with_role

pytestmark = pytest.mark.django_db


def _problem(response, status: int) -> dict:
    assert response.status_code == status, response.content[:500]
    assert response["Content-Type"].startswith("application/problem+json")
    return response.json()


def _scorer(corpus, doc_ids, *, name: str = "model") -> Classifier:
    rng = np.random.default_rng(1)
    scorer = ClassifierFactory.create(corpus=corpus, name=name, kind=Classifier.Kind.SCORES, ids=doc_ids[:5],
                                      definition={"threshold": 0.99})
    ClassifierScore.objects.bulk_create([ClassifierScore(classifier=scorer, document_id=d, score=float(rng.random()))
                                         for d in doc_ids])
    return scorer


@pytest.fixture
def world():
    return make_pair_world(n=400, prevalence=0.2)


def _create(analyst, world, **extra):
    pair = world.topic.pair
    return analyst.client.post("/api/v1/topics/", {"corpus": world.topic.corpus_id, "name": "barley",
                                                   "c1": pair.c1_id, "c2": pair.c2_id, **extra}, format="json")


def test_a_topic_is_created_with_a_scorer_and_it_can_be_cleared(analyst, world):
    scorer = _scorer(world.topic.corpus, world.doc_ids)
    response = _create(analyst, world, scorer=scorer.pk)
    assert response.status_code == 201, response.content
    topic = response.json()
    assert topic["scorer"] == scorer.pk and Topic.objects.get(pk=topic["id"]).scorer_id == scorer.pk
    cleared = analyst.client.patch(f"/api/v1/topics/{topic['id']}/", {"scorer": None}, format="json")
    assert cleared.status_code == 200 and cleared.json()["scorer"] is None
    again = analyst.client.patch(f"/api/v1/topics/{topic['id']}/", {"scorer": scorer.pk}, format="json")
    assert again.status_code == 200 and again.json()["scorer"] == scorer.pk


def test_a_scorer_that_cannot_stratify_is_a_clear_400(analyst, world):
    pair = world.topic.pair
    body = _problem(_create(analyst, world, scorer=pair.c1_id), 400)  # an ids classifier: no scores
    assert "stores no scores" in body["detail"]
    other = CorpusFactory.create()
    foreign = ClassifierFactory.create(corpus=other, name="elsewhere", kind=Classifier.Kind.SCORES)
    body = _problem(_create(analyst, world, scorer=foreign.pk), 400)
    assert "another corpus" in body["detail"]
    empty = ClassifierFactory.create(corpus=world.topic.corpus, name="no-scores", kind=Classifier.Kind.SCORES)
    body = _problem(_create(analyst, world, scorer=empty.pk), 400)
    assert "no stored scores" in body["detail"]
    body = _problem(_create(analyst, world, scorer=999_999), 400)
    assert "scorer" in body["errors"]
    assert not Topic.objects.filter(name="barley").exists()
    body = _problem(analyst.client.patch(f"/api/v1/topics/{world.topic.pk}/", {"scorer": pair.c2_id},
                                         format="json"), 400)
    assert "stores no scores" in body["detail"]


def test_the_scorer_cannot_change_once_n_is_drawn(analyst, world):
    samples_draw(topic=world.topic, per_region=5, complement=10, seed=1)
    scorer = _scorer(world.topic.corpus, world.doc_ids)
    body = _problem(analyst.client.patch(f"/api/v1/topics/{world.topic.pk}/", {"scorer": scorer.pk},
                                         format="json"), 400)
    assert "cannot change once documents neither classifier retrieved have been drawn" in body["detail"]
    world.topic.refresh_from_db()
    assert world.topic.scorer_id is None


def test_the_settings_page_offers_only_scorers_of_the_corpus_and_says_why_it_refuses(world):
    scorer = _scorer(world.topic.corpus, world.doc_ids)
    client = Client()
    client.force_login(user_with_role("ana", "analyst"))
    url = reverse("analyst:topic_edit", args=[world.topic.pk])
    page = client.get(url).content.decode()
    assert f'value="{scorer.pk}"' in page and f'value="{world.topic.pair.c1_id}">' not in page.split('name="scorer"')[1]
    fields = {"instructions": "Wheat?", "target_recall": "0.8", "confidence": "0.95", "crowd": "local",
              "aggregator": "majority", "hit_size": "5", "reward_per_hit": "0.10", "budget": ""}
    refused = client.post(url, {**fields, "scorer": world.topic.pair.c1_id})
    assert refused.status_code == 200 and "Select a valid choice" in refused.content.decode()
    saved = client.post(url, {**fields, "scorer": scorer.pk})
    assert saved.status_code == 302
    world.topic.refresh_from_db()
    assert world.topic.scorer_id == scorer.pk
    samples_draw(topic=world.topic, per_region=5, complement=20, seed=2)
    refused = client.post(url, {**fields, "scorer": ""})
    assert refused.status_code == 200 and "cannot change once documents neither classifier" in refused.content.decode()
