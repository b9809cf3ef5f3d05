"""Every path under /api/ that is no endpoint answers a problem+json 404, never the HTML page (issue "the friction
a new analyst, manager and pipeline engineer still meet", item 2); /api/v1/schema/ leads to the schema."""
from __future__ import annotations

import json

import pytest
from django.test import Client

UNKNOWN = ["/api/", "/api/v1/", "/api/v1/nothing-here/", "/api/v2/topics/", "/api/v1/topics/12/nope/",
           "/api/v1/topics/not-a-number/"]


def _is_problem_404(response) -> dict:
    assert response.status_code == 404, response.status_code
    assert response["Content-Type"].startswith("application/problem+json"), response["Content-Type"]
    body = json.loads(response.content)
    assert body["status"] == 404 and body["title"] == "Not found"
    assert body["type"].endswith("/not-found") and body["detail"]
    return body


@pytest.mark.parametrize("path", UNKNOWN)
def test_an_unknown_path_is_a_problem_for_anyone(db, path):
    body = _is_problem_404(Client().get(path))
    assert "/api/schema/" in body["detail"]


@pytest.mark.parametrize("method", ["get", "post", "patch", "delete"])
def test_an_unknown_path_is_a_problem_with_a_token_and_any_method(analyst, method):
    _is_problem_404(getattr(analyst.client, method)("/api/v1/"))
    _is_problem_404(getattr(analyst.client, method)("/api/v1/topicz/"))


def test_a_known_resource_that_is_missing_is_still_a_problem(analyst):
    _is_problem_404(analyst.client.get("/api/v1/topics/999999/"))


def test_a_missing_trailing_slash_redirects_a_read_and_names_the_path_otherwise(analyst):
    read = analyst.client.get("/api/v1/topics?status=draft")
    assert read.status_code == 301 and read["Location"] == "/api/v1/topics/?status=draft"
    write = analyst.client.post("/api/v1/topics", {}, format="json")
    assert "did you mean /api/v1/topics/" in _is_problem_404(write)["detail"]


def test_the_versioned_schema_address_leads_to_the_schema(db):
    response = Client().get("/api/v1/schema/")
    assert response.status_code == 302 and response["Location"] == "/api/schema/"
    assert Client().get(response["Location"]).status_code == 200


def test_pages_outside_the_api_keep_their_html_404(db):
    response = Client().get("/analyst/nothing-here/")
    assert response.status_code in (302, 404)  # sign-in first, or the page
    missing = Client().get("/no-such-page/")
    assert missing.status_code == 404 and missing["Content-Type"].startswith("text/html")
