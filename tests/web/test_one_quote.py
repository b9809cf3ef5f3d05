"""Issue "Every figure honest", item 8: one quote is the source of every launch figure.

The plan page, its Launch button, the confirmation page and the API quote show the same documents and money for a
topic with a further classifier (whose precision sample is an upper bound, since documents the pair's sample
already holds are judged once): itemised, with "at most" said the same way everywhere.
"""
from __future__ import annotations

import re
from decimal import Decimal
from html import unescape

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Topic
from annotation.services.sampling.quote import topic_launch_quote
from api.services import api_token_create
from tests.factories import ClassifierFactory, corpus_build, user_with_role

pytestmark = pytest.mark.django_db


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))


def _element(html: str, element_id: str) -> str:
    match = re.search(rf'id="{element_id}"[^>]*>(.*?)</(?:dd|td|th|button|p|span|div|li)>', html, re.S)
    assert match, f"{element_id} missing"
    return _text(match.group(1)).strip()


@pytest.fixture
def topic() -> Topic:
    from annotation.services.topics.topic import topic_create

    corpus, ids = corpus_build(name="big", size=3000)
    c1 = ClassifierFactory.create(corpus=corpus, name="title", ids=ids[:500])
    c2 = ClassifierFactory.create(corpus=corpus, name="body", ids=ids[200:900])
    extra = ClassifierFactory.create(corpus=corpus, name="summary", ids=ids[100:700])
    topic = topic_create(corpus=corpus, name="Oil", instructions="Oil?", c1=c1, c2=c2, extra_classifiers=[extra])
    Topic.objects.filter(pk=topic.pk).update(budget=Decimal("100.00"), reward_per_hit=Decimal("0.10"), hit_size=5)
    topic.refresh_from_db()
    return topic


def test_the_plan_page_its_button_the_confirmation_and_the_api_show_one_quote(topic):
    quote = topic_launch_quote(topic=topic, half_width=0.2)
    assert quote.further and not quote.exact  # the further classifier's sample is a bound
    documents, cost = quote.documents_text, quote.cost_text
    assert documents == f"at most {quote.documents} documents" and cost == f"at most ${quote.cost:.2f}"

    client = Client()
    client.force_login(user_with_role("ana", "analyst"))
    page = client.get(reverse("analyst:topic", args=[topic.pk]), {"half_width": "0.2"}).content.decode()
    assert _element(page, "launch-quote-documents") == documents
    assert _element(page, "launch-quote-cost") == cost
    button = _element(page, "launch")
    assert documents in button and cost in button, button
    # Itemised: pair regions, further classifiers; the same figures, the regions by their plain names (issue 26).
    region_names = {"A12": "“found by both”", "B1": f"“found only by {topic.pair.c1.name}”",
                    "B2": f"“found only by {topic.pair.c2.name}”", "N": "“found by neither”"}

    def same_part(shown: str, part: dict) -> bool:
        figures = part["text"].split(": ", 1)[1]  # "19 documents, $1.14" (or "at most …")
        named = region_names.get(part["key"].split("-")[0]) if part["kind"] != "further" else part["label"]
        return shown.endswith(figures) and named in shown and not re.search(r"\b(A12|B1|B2|region N)\b", shown)

    for part in quote.parts:
        assert same_part(_element(page, f"launch-quote-part-{part['key']}"), part), part

    confirm = client.post(reverse("analyst:topic_launch", args=[topic.pk]), {"half_width": "0.2"}).content.decode()
    assert _element(confirm, "quote-documents-text") == documents
    assert _element(confirm, "quote-cost").startswith(cost)
    for part in quote.parts:
        assert same_part(_element(confirm, f"quote-part-{part['key']}"), part), part

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION="Bearer " + api_token_create(
        user=user_with_role("api-ana", "analyst"), name="t").plaintext)
    body = api.get(f"/api/v1/topics/{topic.pk}/quote/?half_width=0.2").json()
    assert body["documents"] == quote.documents and body["cost"] == f"{quote.cost:.2f}"
    assert body["documents_text"] == documents and body["cost_text"] == cost
    assert [(p["key"], p["documents"], p["at_most"], p["text"]) for p in body["parts"]] == [
        (p["key"], p["documents"], p["at_most"], p["text"]) for p in quote.parts]


def test_with_the_dependence_check_the_plan_page_quotes_it_too(topic):
    client = Client()
    client.force_login(user_with_role("ana", "analyst"))
    page = client.get(reverse("analyst:topic", args=[topic.pk]), {"half_width": "0.1"}).content.decode()
    match = re.search(r'name="complement" value="(\d+)"', page)
    assert match, "the dependence check is offered at ±0.1"
    quote = topic_launch_quote(topic=topic, half_width=0.1, complement=int(match.group(1)))
    label = _element(page, "launch-complement-quote")
    assert quote.documents_text in label and quote.cost_text in label, label
    assert _element(page, "dependence-cost").startswith(f"{quote.documents_text}, {quote.cost_text}")


@pytest.mark.django_db(transaction=True)
def test_the_cli_says_the_quote_in_the_same_words(live_server, topic):
    from tests.factories import cli_env, cli_run

    quote = topic_launch_quote(topic=topic, half_width=0.2)
    env = cli_env(live_server, api_token_create(user=user_with_role("pipeline", "analyst"), name="cli").plaintext)
    refused = cli_run(env, "measure", "--topic", topic.name, "--half-width", "0.2", "--max-cost", "0.01")
    assert refused.returncode == 2, refused.stderr
    assert quote.summary in refused.stderr
    for part in quote.parts:
        assert part["text"] in refused.stderr
