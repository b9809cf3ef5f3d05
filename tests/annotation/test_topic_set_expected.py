"""The launch review of a topic set: expected documents per class in the planned uniform sample, and the
sample size giving every topic a usable interval (issue 24 item 1). Expected figures are computed here from
the router's predicted counts, never read from the code under test."""
from __future__ import annotations

import math
import re
from decimal import Decimal
from html import unescape

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Router
from annotation.services.topics.topic_sets import USABLE_PER_CLASS, topic_set_create, topic_set_expected_per_class
from tests.factories import corpus_build, user_with_role

pytestmark = pytest.mark.django_db


@pytest.fixture
def topic_set():
    corpus = corpus_build(name="reuters", size=60)[0]
    corpus.document_count = 10_000  # the plan reads the corpus size only
    corpus.save(update_fields=["document_count"])
    return topic_set_create(corpus=corpus, name="Commodities", classes=[("Grain", ""), ("Cocoa", "")],
                            reward_per_hit=Decimal("0.10"), hit_size=5)


def _router(topic, counts, name="r1"):
    return Router.objects.create(topic=topic, name=name, kind=Router.Kind.UPLOAD, fingerprint=name,
                                 predicted_counts=counts)


def test_expected_per_class_and_the_size_that_makes_every_topic_usable(topic_set):
    _router(topic_set, [9_600, 350, 50])  # none 96%, Grain 3.5%, Cocoa 0.5%
    plan = topic_set_expected_per_class(topic=topic_set, documents=300)
    rows = {c.name: c for c in plan.classes}
    assert [c.position for c in plan.classes] == [1, 2, 0]
    assert rows["Grain"].expected == pytest.approx(300 * 0.035)
    assert rows["Cocoa"].expected == pytest.approx(1.5)  # the defect: 300 documents buy a near-empty class
    assert not rows["Cocoa"].usable and [c.name for c in plan.thin] == ["Grain", "Cocoa"]
    assert plan.needed == math.ceil(USABLE_PER_CLASS / 0.005)
    big = topic_set_expected_per_class(topic=topic_set, documents=plan.needed)
    assert not big.thin


def test_no_router_yet_and_a_topic_the_router_never_predicts(topic_set):
    assert topic_set_expected_per_class(topic=topic_set, documents=300).classes == ()
    _router(topic_set, [9_000, 1_000, 0])
    plan = topic_set_expected_per_class(topic=topic_set, documents=300)
    assert plan.unreachable == ("Cocoa",)
    assert plan.needed == math.ceil(USABLE_PER_CLASS / 0.1)


def test_launch_confirmation_and_detail_page_show_the_expected_counts(topic_set):
    _router(topic_set, [9_600, 350, 50])
    user_with_role("ana", "analyst")
    client = Client()
    client.login(username="ana", password="pw-for-tests-1")
    page = client.post(reverse("analyst:topic_set_launch", args=[topic_set.pk]), {"documents": "300"})
    text = unescape(re.sub(r"<[^>]+>", " ", page.content.decode()))
    assert page.status_code == 200
    assert 'id="expected-table"' in page.content.decode()
    assert re.search(r"Cocoa\s+0\.5%\s+1\.5\s+too few", text), text  # a share as a percentage (issue 26)
    assert f"sample about {math.ceil(USABLE_PER_CLASS / 0.005)} documents" in " ".join(text.split())
    detail = client.get(reverse("analyst:topic_set", args=[topic_set.pk])).content.decode()
    assert 'id="expected-per-class"' in detail and 'id="expected-needed"' in detail
