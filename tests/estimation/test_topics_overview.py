"""The reports overview (issue 12): searchable, 25 topics a page, progress figures in grouped queries
(annotation.selectors.topics_progress) that agree with topic_progress."""
from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.models import Assignment, Hit, HitItem, Judgment
from annotation.selectors import topic_progress, topics_progress
from estimation.views.reports import OVERVIEW_PAGE_SIZE
from tests.factories import DocumentFactory, TopicFactory, make_worker, user_with_role

pytestmark = pytest.mark.django_db


def _hit(topic, docs, *, reward: str, status=Hit.Status.OPEN, answers=()):
    """A HIT over `docs` with one assignment per (worker, assignment status) in `answers`, each judging every doc."""
    hit = Hit.objects.create(topic=topic, reward=Decimal(reward), status=status)
    for position, doc in enumerate(docs):
        HitItem.objects.create(hit=hit, topic=topic, document_id=doc, position=position)
    for slot, (worker, assignment_status) in enumerate(answers):
        assignment = Assignment.objects.create(hit=hit, worker=worker, slot=slot, status=assignment_status,
                                               deadline=timezone.now() + timedelta(minutes=30))
        if assignment_status != Assignment.Status.CLAIMED:
            for doc in docs:
                Judgment.objects.create(assignment=assignment, topic=topic, document_id=doc, worker=worker,
                                        relevant=doc % 2 == 0)
    return hit


def test_topics_progress_counts_hits_judgments_and_paid_rewards_per_topic(django_assert_num_queries):
    first, second, empty = TopicFactory.create(), TopicFactory.create(), TopicFactory.create()
    docs = [DocumentFactory.create(corpus=first.corpus).pk for _ in range(5)]
    others = [DocumentFactory.create(corpus=second.corpus).pk for _ in range(2)]
    ann, bob, cy = make_worker("ann"), make_worker("bob"), make_worker("cy")
    S, A, C = Assignment.Status.SUBMITTED, Assignment.Status.APPROVED, Assignment.Status.CLAIMED
    _hit(first, docs[:3], reward="0.25", answers=[(ann, S), (bob, A), (cy, C)])  # 2 paid, 6 judgments
    _hit(first, docs[3:], reward="0.40", answers=[(ann, S)])  # 1 paid, 2 judgments
    # A cancelled HIT plans nothing, but what was paid for it stays spent.
    _hit(first, [DocumentFactory.create(corpus=first.corpus).pk], reward="1.00", status=Hit.Status.CANCELLED,
         answers=[(bob, S)])
    _hit(second, others, reward="0.10", answers=[(cy, S)])

    with django_assert_num_queries(4):  # whatever the number of topics
        progress = topics_progress(topics=[first, second, empty])

    assert progress[first.pk] == {
        "hits": 2, "judgments_done": 6 + 2 + 1, "judgments_planned": 3 * 3 + 2 * 3,
        "judgments_outstanding": 15 - 9, "rewards_paid": Decimal("0.25") * 2 + Decimal("0.40") + Decimal("1.00"),
        "budget": first.budget}
    assert progress[second.pk]["judgments_done"] == 2 and progress[second.pk]["rewards_paid"] == Decimal("0.10")
    assert progress[empty.pk] == {"hits": 0, "judgments_done": 0, "judgments_planned": 0, "judgments_outstanding": 0,
                                  "rewards_paid": Decimal("0"), "budget": empty.budget}
    for topic in (first, second, empty):
        assert topic_progress(topic=topic) == progress[topic.pk]


@pytest.fixture
def manager():
    client = Client()
    client.force_login(user_with_role("overview-manager", "manager"))
    return client


def test_overview_pages_and_searches_topics(manager, django_assert_max_num_queries):
    names = [f"alpha {n:02d}" for n in range(OVERVIEW_PAGE_SIZE + 3)] + ["beta only"]
    topics = {name: TopicFactory.create(name=name) for name in names}
    url = reverse("reports:topics")

    with django_assert_max_num_queries(2 * OVERVIEW_PAGE_SIZE + 15):  # snapshot and certification per row
        first = manager.get(url).content.decode()
    second = manager.get(url, {"page": 2}).content.decode()
    shown_first = {n for n in names if reverse("reports:topic", args=[topics[n].pk]) in first}
    shown_second = {n for n in names if reverse("reports:topic", args=[topics[n].pk]) in second}
    assert len(shown_first) == OVERVIEW_PAGE_SIZE and shown_first | shown_second == set(names)
    assert not shown_first & shown_second
    assert "Page 1 of 2" in first and 'rel="next"' in first

    found = manager.get(url, {"q": "BETA"}).content.decode()
    assert reverse("reports:topic", args=[topics["beta only"].pk]) in found
    assert not any(reverse("reports:topic", args=[topics[n].pk]) in found for n in names[:-1])
    nothing = manager.get(url, {"q": "gamma"})
    assert nothing.status_code == 200 and "No topic has “gamma” in its name" in nothing.content.decode()
