"""core/middleware_hostile.py: the depth is counted without parsing; pages answer a 400 page with the reason."""
from __future__ import annotations

import json
import sys
from urllib.parse import urlencode

import pytest
from django.test import Client
from django.urls import reverse

from core.middleware_hostile import JSON_MAX_DEPTH, json_depth, json_refusal, unstorable_reason
from tests.factories import user_with_role


def test_the_depth_ignores_brackets_and_escaped_quotes_inside_strings():
    assert json_depth(b'{"a": [1, {"b": "[[[{{{"}]}') == 3
    assert json_depth(b'["\\"[[[", "\\\\", [[]]]') == 3
    assert json_depth(b'"just a string"') == 0 and json_depth(b"") == 0
    assert json_depth(("[" * 5000 + "]" * 5000).encode()) == 5000


def test_a_body_nested_far_past_the_recursion_limit_is_refused_without_recursing():
    deep = ("{\"a\":" * (sys.getrecursionlimit() * 10) + "1" + "}" * (sys.getrecursionlimit() * 10)).encode()
    with pytest.raises(RecursionError):
        json.loads(deep)  # the defect: what DRF's parser did with it
    reason = json_refusal(deep)
    assert reason is not None and f"at most {JSON_MAX_DEPTH} levels" in reason


def test_strings_no_database_can_hold_are_named_with_their_path():
    assert json_refusal(b'{"rules": [{"terms": ["ok", "a\\u0000b"]}]}') == (
        "The JSON value at rules.0.terms.1 contains a NUL character (\\u0000), which no text value can hold.")
    assert "lone surrogate (\\udc00)" in json_refusal(b'{"name": "\\udc00"}')
    assert "a key of the body" in json_refusal(b'{"a\\u0000": 1}')
    assert json_refusal(b'{"name": "\\ud83d\\ude00 wheat"}') is None  # a pair is one character
    assert json_refusal(b"not json [") is None  # the parser downstream says what is wrong
    assert unstorable_reason("plain") is None


@pytest.fixture
def analyst_client(db) -> Client:
    client = Client()
    client.force_login(user_with_role("hostile-analyst", "analyst"))
    return client


def _page_400(response) -> str:
    assert response.status_code == 400, (response.status_code, response.content[:300])
    assert response["Content-Type"].startswith("text/html")
    html = response.content.decode()
    assert 'id="error-page"' in html
    return html


def test_a_page_refuses_a_nul_in_its_query_string_with_a_page_saying_why(analyst_client):
    html = _page_400(analyst_client.get(reverse("analyst:corpora") + "?q=wheat%00"))
    assert "The query parameter &#x27;q&#x27; contains a NUL character" in html


def test_a_url_encoded_form_with_a_nul_is_refused_before_the_view(analyst_client):
    html = _page_400(analyst_client.post(reverse("analyst:topic_new"), urlencode({"name": "wheat\x00"}),
                                         content_type="application/x-www-form-urlencoded"))
    assert "form field &#x27;name&#x27; contains a NUL character" in html


def test_a_multipart_form_field_with_a_nul_is_refused_once_the_csrf_check_has_read_it(db):
    client = Client(enforce_csrf_checks=True)
    client.force_login(user_with_role("hostile-csrf", "analyst"))
    client.get(reverse("analyst:topic_new"))
    token = client.cookies["csrftoken"].value
    html = _page_400(client.post(reverse("analyst:topic_new"), {"name": "wheat\x00", "csrfmiddlewaretoken": token}))
    assert "form field &#x27;name&#x27; contains a NUL character" in html


def test_json_posted_to_a_page_is_refused_when_nested_too_deep(analyst_client):
    response = analyst_client.post(reverse("analyst:topic_new"), "[" * 3000, content_type="application/json")
    assert "nested 3000 levels deep" in _page_400(response)
