"""Every endpoint for every role: the pages' roles hold in the API (an annotator's token reads no report).

An allowed call is sent with an empty body, so it is refused by validation (400) or answered (200/404...),
never by the permission check; a refused call gets 403; a call without a token gets 401.
"""
from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from tests.factories import make_pair_world

ANALYST = {"analyst"}
READERS = {"analyst", "manager"}
EVERYONE = {"analyst", "manager", "annotator", None}

# (method, path template, roles allowed)
ENDPOINTS = [
    ("get", "/api/v1/me/", EVERYONE),
    ("get", "/api/v1/corpora/", ANALYST),
    ("post", "/api/v1/corpora/", ANALYST),
    ("get", "/api/v1/corpora/{corpus}/", ANALYST),
    ("post", "/api/v1/corpora/{corpus}/imports/", ANALYST),
    ("get", "/api/v1/imports/999999/", ANALYST),
    ("get", "/api/v1/corpora/{corpus}/classifiers/", ANALYST),
    ("post", "/api/v1/corpora/{corpus}/classifiers/keywords/", ANALYST),
    ("post", "/api/v1/corpora/{corpus}/classifiers/ids/", ANALYST),
    ("post", "/api/v1/corpora/{corpus}/classifiers/scores/", ANALYST),
    ("post", "/api/v1/corpora/{corpus}/classifiers/retrieved/", ANALYST),
    ("get", "/api/v1/classifiers/{classifier}/", ANALYST),
    ("post", "/api/v1/corpora/{corpus}/classifier-builds/", ANALYST),
    ("get", "/api/v1/classifier-builds/999999/", ANALYST),
    ("patch", "/api/v1/classifiers/{classifier}/", ANALYST),
    ("get", "/api/v1/topics/", ANALYST),
    ("post", "/api/v1/topics/", ANALYST),
    ("get", "/api/v1/topics/{topic}/", ANALYST),
    ("patch", "/api/v1/topics/{topic}/", ANALYST),
    ("get", "/api/v1/topics/{topic}/plan/", ANALYST),
    ("get", "/api/v1/topics/{topic}/quote/", ANALYST),
    ("post", "/api/v1/topics/{topic}/launch/", ANALYST),
    ("post", "/api/v1/topics/{topic}/pause/", ANALYST),
    ("post", "/api/v1/topics/{topic}/resume/", ANALYST),
    ("get", "/api/v1/topics/{topic}/progress/", READERS),
    ("get", "/api/v1/topics/{topic}/samples/", READERS),
    ("get", "/api/v1/topics/{topic}/hits/", READERS),
    ("get", "/api/v1/topics/{topic}/judgments/", READERS),
    ("get", "/api/v1/topic-sets/", ANALYST),
    ("post", "/api/v1/topic-sets/", ANALYST),
    ("get", "/api/v1/topic-sets/{topic_set}/", ANALYST),
    ("get", "/api/v1/topic-sets/{topic_set}/routers/", ANALYST),
    ("post", "/api/v1/topic-sets/{topic_set}/routers/csv/", ANALYST),
    ("post", "/api/v1/topic-sets/{topic_set}/routers/keywords/", ANALYST),
    ("get", "/api/v1/topic-sets/{topic_set}/preview/", ANALYST),
    ("post", "/api/v1/topic-sets/{topic_set}/launch/", ANALYST),
    ("get", "/api/v1/routers/999999/", ANALYST),
    ("delete", "/api/v1/routers/999999/", ANALYST),
    ("get", "/api/v1/topic-sets/{topic_set}/router-builds/", ANALYST),
    ("get", "/api/v1/router-builds/999999/", ANALYST),
    ("post", "/api/v1/routers/999999/archive/", ANALYST),
    ("get", "/api/v1/topics/{topic}/report/", READERS),
    ("get", "/api/v1/topics/{topic_set}/report/", READERS),
    ("get", "/api/v1/topics/{topic}/report/csv/", READERS),
    ("get", "/api/v1/topics/{topic}/report/versions/", READERS),
    ("get", "/api/v1/topics/{topic}/report/versions/1/", READERS),
    ("get", "/api/v1/topics/{topic}/certification-plans/", READERS),
    ("post", "/api/v1/topics/{topic}/certification-plans/", READERS),
    ("get", "/api/v1/certification-plans/999999/", READERS),
    ("post", "/api/v1/certification-plans/999999/lock/", READERS),
    ("get", "/api/v1/certification-plans/999999/verdict/", READERS),
    ("post", "/api/v1/training-advice/", READERS),  # when to stop training (seed 004 Sec. 3): a calculator
    # the model judge (issue 28): configuring and paying is the analyst's; reading is the report readers'
    ("get", "/api/v1/topics/{topic}/judge/quote/", ANALYST),
    ("get", "/api/v1/topics/{topic}/judge/runs/", READERS),
    ("post", "/api/v1/topics/{topic}/judge/runs/", ANALYST),
    ("get", "/api/v1/topics/{topic}/judge/report/", READERS),
    ("get", "/api/v1/judge-runs/999999/", READERS),
    # adjudication (issue 27): the analyst's
    ("get", "/api/v1/topics/{topic}/adjudication/", ANALYST),
    ("post", "/api/v1/topics/{topic}/adjudication/", ANALYST),
    # bonuses (issue 27): quoting and paying them is the analyst's
    ("post", "/api/v1/topics/{topic}/bonuses/quote/", ANALYST),
    ("get", "/api/v1/topics/{topic}/bonuses/", ANALYST),
    ("post", "/api/v1/topics/{topic}/bonuses/", ANALYST),
    # corpora that stay in the team's engine (issue 29)
    ("post", "/api/v1/external-corpora/", ANALYST),
    ("get", "/api/v1/external-corpora/{corpus}/", ANALYST),
    ("post", "/api/v1/external-corpora/{corpus}/check/", ANALYST),
]


@pytest.fixture
def objects(db):
    world = make_pair_world(n=120, prevalence=0.3)
    pair = world.topic.pair
    from annotation.services.topics.topic_sets import topic_set_create

    topic_set = topic_set_create(corpus=world.topic.corpus, name="roles topic set",
                                 classes=[("Wheat", ""), ("Corn", "")])
    return {"corpus": world.topic.corpus_id, "topic": world.topic.pk, "classifier": pair.c1_id,
            "topic_set": topic_set.pk}


def test_the_table_covers_every_v1_route():
    from django.urls import resolve

    from api.urls import v1

    covered = {resolve(template.format(corpus=1, topic=1, classifier=1, topic_set=1)).url_name for _, template, _ in ENDPOINTS}
    assert covered == {pattern.name for pattern in v1}


@pytest.mark.parametrize("role", ["analyst", "manager", "annotator", None], ids=str)
@pytest.mark.parametrize(("method", "template", "allowed"), ENDPOINTS, ids=[f"{m} {p}" for m, p, _ in ENDPOINTS])
def test_role(callers, objects, role, method, template, allowed):
    url = template.format(**objects)
    response = getattr(callers[role].client, method)(url, {}, format="json")
    if role in allowed:
        assert response.status_code not in (401, 403), (response.status_code, response.content[:300])
        assert response.status_code < 500
    else:
        assert response.status_code == 403, response.content[:300]
        body = response.json()
        assert response["Content-Type"].startswith("application/problem+json")
        assert body["status"] == 403 and body["title"] == "Not allowed"


@pytest.mark.parametrize(("method", "template", "allowed"), ENDPOINTS, ids=[f"{m} {p}" for m, p, _ in ENDPOINTS])
def test_anonymous_gets_401_with_the_scheme(db, objects, method, template, allowed):
    response = getattr(APIClient(), method)(template.format(**objects), {}, format="json")
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert response.json()["type"].endswith("/not-authenticated")


def test_annotator_token_cannot_read_reports(annotator, objects):
    response = annotator.client.get(f"/api/v1/topics/{objects['topic']}/report/")
    assert response.status_code == 403
    assert "manager" in response.json()["detail"]
