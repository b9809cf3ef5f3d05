"""Hostile input on the API answers 400 problem+json with the reason, never 500 (issue 25 item 2).

Before core/middleware_hostile.py: a NUL (`%00`) in a string filter reached PostgreSQL's driver (500 on 10 of
12 list endpoints; run with DATABASE_URL at PostgreSQL to see it), and JSON nested past Python's recursion
limit raised RecursionError in the parser (500 on every JSON endpoint, on any database).
"""
from __future__ import annotations

import json

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from annotation.models import Topic
from estimation.models import CertificationPlan
from tests.factories import c1, make_pair_world, make_topic_set

pytestmark = pytest.mark.django_db


def _problem_400(response) -> str:
    assert response.status_code == 400, (response.status_code, response.content[:300])
    assert response["Content-Type"].startswith("application/problem+json")
    body = response.json()
    assert body["status"] == 400 and body["type"].endswith("/invalid-request")
    return body["detail"]


@pytest.fixture
def objects(db):
    """Real rows for every id in the URL conf, so that each endpoint gets past its lookups (the defect showed
    only where the filter or the parser was reached)."""
    world = make_pair_world(n=200)
    topic_set = make_topic_set(world.topic.corpus)
    plan = CertificationPlan.objects.filter(topic=world.topic).first()
    return {"corpus_id": world.topic.corpus_id, "topic_id": world.topic.pk, "classifier_id": c1(world).pk,
            "topic_set_id": topic_set.pk, "plan_id": plan.pk if plan else 1, "build_id": 1, "upload_id": 1,
            "router_id": 1, "version": 1, "run_id": 1}


# Each API list endpoint and its string filters (api/views/*: every `params.get(...)` that filters text).
LIST_FILTERS = [
    ("/api/v1/corpora/", ("name",)),
    ("/api/v1/corpora/{corpus_id}/classifiers/", ("name", "kind")),
    ("/api/v1/topics/", ("name", "status")),
    ("/api/v1/topics/{topic_id}/samples/", ("purpose", "region")),
    ("/api/v1/topics/{topic_id}/hits/", ("status",)),
    ("/api/v1/topics/{topic_id}/judgments/", ("document",)),
    ("/api/v1/topics/{topic_id}/certification-plans/", ("status",)),
    ("/api/v1/topic-sets/", ("name",)),
    ("/api/v1/topic-sets/{topic_set_id}/router-builds/", ("name", "status")),
    ("/api/v1/topic-sets/{topic_set_id}/routers/", ("archived",)),
    ("/api/v1/topics/{topic_id}/report/versions/", ("page",)),
    ("/api/v1/topics/{topic_id}/report/csv/", ("version",)),
    ("/api/v1/topics/{topic_id}/bonuses/", ("status",)),
]


@pytest.mark.parametrize(("template", "filters"), LIST_FILTERS, ids=[t for t, _ in LIST_FILTERS])
def test_a_nul_in_a_string_filter_is_a_400_problem_naming_the_parameter(analyst, objects, template, filters):
    url = template.format(**objects)
    for name in filters:
        detail = _problem_400(analyst.client.get(f"{url}?{name}=wheat%00oil"))
        assert repr(name) in detail and "NUL" in detail


def test_a_nul_in_a_parameter_name_and_a_lone_surrogate_in_json_are_refused_too(analyst, objects):
    assert "NUL" in _problem_400(analyst.client.get("/api/v1/topics/?na%00me=x"))
    body = b'{"name": "wheat \\ud800", "corpus": 1}'
    detail = _problem_400(analyst.client.post("/api/v1/topics/", body, content_type="application/json"))
    assert "surrogate" in detail and "name" in detail
    body = json.dumps({"name": "a\x00b"}).encode()
    assert "NUL" in _problem_400(analyst.client.post("/api/v1/topics/", body, content_type="application/json"))


def test_a_well_formed_surrogate_pair_and_ordinary_filters_still_work(analyst, objects):
    assert analyst.client.get("/api/v1/topics/?name=wheat").status_code == 200
    response = analyst.client.post("/api/v1/topics/", b'{"name": "\\ud83d\\ude00"}', content_type="application/json")
    assert response.status_code != 500 and "surrogate" not in response.content.decode()


def _api_paths(objects) -> list[tuple[str, type | None]]:
    """Every route of /api/v1/ with its ids filled in, and the view's class (None for a plain function)."""
    found: list[tuple[str, type | None]] = []

    def walk(patterns, prefix: str) -> None:
        for pattern in patterns:
            route = prefix + str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, route)
            elif isinstance(pattern, URLPattern) and route.startswith("api/v1/"):
                path = route
                for name, value in objects.items():
                    path = path.replace(f"<int:{name}>", str(value))
                if "topic-sets/<int:topic_id>" in route:
                    path = route.replace("<int:topic_id>", str(objects["topic_set_id"]))
                for name, value in objects.items():
                    path = path.replace(f"<int:{name}>", str(value))
                assert "<" not in path, path
                found.append(("/" + path, getattr(pattern.callback, "view_class", None)))

    walk(get_resolver().url_patterns, "")
    return found


def test_every_api_route_refuses_a_nul_in_its_query_string(analyst, objects):
    paths = _api_paths(objects)
    assert len(paths) > 40
    for path, _ in paths:
        assert "NUL" in _problem_400(analyst.client.get(path + "?q=%00")), path


def test_json_nested_past_the_limit_is_a_400_on_every_json_endpoint_before_it_is_parsed(analyst, objects):
    deep = ("[" * 100_000 + "]" * 100_000).encode()  # far past sys.getrecursionlimit()
    topics = Topic.objects.count()
    tried = 0
    for path, view_class in _api_paths(objects):
        for method in ("post", "put", "patch"):
            if view_class is None or not hasattr(view_class, method):
                continue
            tried += 1
            response = getattr(analyst.client, method)(path, deep, content_type="application/json")
            detail = _problem_400(response)
            assert "nested 100000 levels deep" in detail and "64" in detail, (method, path)
    assert tried >= 20
    assert Topic.objects.count() == topics  # nothing was created


def test_json_at_the_limit_reaches_the_view(analyst, objects):
    body = json.dumps({"name": "x", "rules": [[[[]]]]}).encode()
    assert analyst.client.post("/api/v1/topics/", body, content_type="application/json").status_code != 500
    at_limit = ("[" * 64 + "]" * 64).encode()
    response = analyst.client.post("/api/v1/topics/", at_limit, content_type="application/json")
    assert response.status_code == 400 and "nested" not in response.json()["detail"]


@pytest.mark.parametrize("offset", ["100001", "99999999999999999999"])
def test_an_offset_past_the_ceiling_is_a_400_not_a_walk_over_the_table_or_a_500(analyst, objects, offset):
    """Before: 200 (an empty page after the database walked the offset)."""
    response = analyst.client.get(f"/api/v1/topics/{objects['topic_id']}/judgments/?offset={offset}")
    assert response.status_code == 400 and response.json()["errors"]["offset"][0].startswith("An offset past 100,000")
    assert analyst.client.get(f"/api/v1/topics/{objects['topic_id']}/judgments/?offset=100000").status_code == 200
