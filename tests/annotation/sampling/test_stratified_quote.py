"""Issue 23: the dependence check (N) is part of the default plan, and its cost — by score stratum with a
scorer — is the same on the plan page, GET …/plan/, GET …/quote/ and the confirmation page (one LaunchQuote)."""
from __future__ import annotations

import re
from decimal import Decimal
from html import unescape

import numpy as np
import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import Classifier, ClassifierScore, Region, SampleDraw, Topic
from annotation.services.sampling.complement import complement_default
from annotation.services.sampling.draws import samples_draw
from annotation.services.sampling.quote import topic_launch_quote
from annotation.services.topics.topic import topic_scorer_set
from api.services import api_token_create
from tests.factories import ClassifierFactory, make_pair_world, user_with_role

pytestmark = pytest.mark.django_db

HALF_WIDTH = 0.1


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html))).strip()


def _element(html: str, element_id: str) -> str:
    match = re.search(rf'id="{element_id}"[^>]*>(.*?)</(?:dd|td|th|button|p|span|div|li)>', html, re.S)
    assert match, f"{element_id} missing"
    return _text(match.group(1))


def _world(*, scorer: bool):
    world = make_pair_world(n=3000, prevalence=0.08, seed=17, status=Topic.Status.DRAFT)
    Topic.objects.filter(pk=world.topic.pk).update(budget=Decimal("5000.00"), hit_size=5)
    if scorer:
        rng = np.random.default_rng(4)
        model = ClassifierFactory.create(corpus=world.topic.corpus, name="model", kind=Classifier.Kind.SCORES,
                                         ids=world.doc_ids[:3], definition={"threshold": 9})
        ClassifierScore.objects.bulk_create([
            ClassifierScore(classifier=model, document_id=d,
                            score=float(rng.normal(1.5 if d in world.relevant else 0.0, 1.0)))
            for d in world.doc_ids])
        topic_scorer_set(topic=world.topic, scorer=model)
    world.topic.refresh_from_db()
    return world


def _api() -> APIClient:
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION="Bearer " + api_token_create(
        user=user_with_role("api-ana", "analyst"), name="t").plaintext)
    return api


@pytest.mark.parametrize("scorer", [False, True], ids=["no scorer", "scorer"])
def test_n_is_in_the_default_plan_and_costs_the_same_everywhere(scorer):
    world = _world(scorer=scorer)
    topic = world.topic
    quote = topic_launch_quote(topic=topic, half_width=HALF_WIDTH)
    assert quote.complement == complement_default(topic=topic, half_width=HALF_WIDTH) > 0
    n_parts = [p for p in quote.parts if p["kind"] == "dependence_check"]
    assert sum(p["documents"] for p in n_parts) == quote.regions["N"] == quote.check_documents > 0
    if scorer:
        assert len(n_parts) == len(quote.strata) >= 2 and all("score stratum" in p["label"] for p in n_parts)
        assert quote.expected_half_width is not None and quote.expected_half_width["r1"] <= HALF_WIDTH
    else:
        assert [p["key"] for p in n_parts] == ["N"] and quote.strata == {}

    client = Client()
    client.force_login(user_with_role("ana", "analyst"))
    page = client.get(reverse("analyst:topic", args=[topic.pk]), {"half_width": str(HALF_WIDTH)}).content.decode()
    assert _element(page, "launch-quote-cost") == quote.cost_text
    for part in quote.parts:
        assert _element(page, f"launch-quote-part-{part['key']}") == part["text"]
    assert 'id="launch-complement" checked' in page  # the check is ticked by default

    # The confirmation of the default launch (no size given) shows the same parts and cost.
    confirm = client.post(reverse("analyst:topic_launch", args=[topic.pk]),
                          {"half_width": str(HALF_WIDTH)}).content.decode()
    assert _element(confirm, "quote-cost").startswith(quote.cost_text)
    for part in quote.parts:
        assert _element(confirm, f"quote-part-{part['key']}") == part["text"]
    assert f'name="complement" value="{quote.complement}"' in confirm

    api = _api()
    body = api.get(f"/api/v1/topics/{topic.pk}/quote/?half_width={HALF_WIDTH}").json()
    assert body["cost"] == f"{quote.cost:.2f}" and body["complement"] == quote.complement
    assert [(p["key"], p["documents"], p["cost"]) for p in body["parts"]] == [
        (p["key"], p["documents"], f"{p['cost']:.2f}") for p in quote.parts]
    assert body["strata"] == quote.strata
    plan = api.get(f"/api/v1/topics/{topic.pk}/plan/?half_width={HALF_WIDTH}").json()
    assert plan["dependence"]["judged"] == quote.complement
    if scorer:
        assert [(r["key"], r["new"]) for r in plan["dependence"]["strata"]] == list(quote.strata.items())
        assert plan["dependence"]["expected_half_width"] == pytest.approx(quote.expected_half_width)
    # Opting out (0) leaves N out, on the API as on the page.
    without = api.get(f"/api/v1/topics/{topic.pk}/quote/?half_width={HALF_WIDTH}&complement=0").json()
    assert without["complement"] == 0 and "N" not in without["regions"]


def test_the_default_launch_draws_what_the_quote_said():
    world = _world(scorer=True)
    quote = topic_launch_quote(topic=world.topic, half_width=HALF_WIDTH)
    samples_draw(topic=world.topic, half_width=HALF_WIDTH, complement=quote.complement, seed=3)
    drawn = {d.stratum_key: d.drawn for d in SampleDraw.objects.filter(topic=world.topic, region=Region.NEITHER)}
    assert drawn == quote.strata
    # Drawn: the same quote has nothing left in N.
    assert topic_launch_quote(topic=world.topic, half_width=HALF_WIDTH, complement=quote.complement).regions["N"] == 0
