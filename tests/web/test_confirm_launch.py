"""Issue 12 item 5: Launch and Top up show documents, judgments, HITs, cost and budget, and spend only on confirmation.

The figures on the confirmation page are checked against what the confirmed launch then draws and
commits (the SampledDocument and Hit rows), and the cost against the published crowd prices
(local: the reward; Mechanical Turk: reward + 20% commission, at least $0.01, ESTIMATION-NOTES §3).
"""
from __future__ import annotations

import re
from decimal import Decimal
from html import unescape

import pytest
from django.db.models import Count
from django.test import Client
from django.urls import reverse

from annotation.models import Hit, SampledDocument, Topic
from tests.factories import ClassifierFactory, corpus_build, user_with_role


@pytest.fixture
def analyst(db):
    client = Client()
    client.force_login(user_with_role("ana", "analyst"))
    return client


def _topic(*, crowd: str = "local", budget: str | None = "100.00") -> tuple[Topic, list[int]]:
    """A draft topic on 3,000 documents: A12 300, B1 200, B2 400, N 2,100; $0.10 per HIT of 5 documents."""
    from annotation.services.topics.topic import topic_create

    corpus, ids = corpus_build(name="big", size=3000)
    c1 = ClassifierFactory.create(corpus=corpus, name="title", ids=ids[:500])
    c2 = ClassifierFactory.create(corpus=corpus, name="body", ids=ids[200:900])
    topic = topic_create(corpus=corpus, name="Oil", instructions="Oil?", c1=c1, c2=c2)
    Topic.objects.filter(pk=topic.pk).update(crowd=crowd, budget=None if budget is None else Decimal(budget),
                                             reward_per_hit=Decimal("0.10"), hit_size=5)
    topic.refresh_from_db()
    return topic, ids


def _shown(html: str, key: str) -> str:
    match = re.search(rf'id="quote-{key}"[^>]*>(.*?)</(?:dd|td|th)>', html, re.S)
    assert match, f"quote-{key} missing"
    return re.sub(r"<[^>]+>", "", match.group(1)).strip()


def _hidden(html: str) -> dict[str, str]:
    return {k: unescape(v) for k, v in re.findall(r'<input type="hidden" name="(confirm_\w+)" value="([^"]*)"', html)}


def test_launch_shows_what_it_draws_and_costs_then_draws_exactly_that(analyst, db, django_capture_on_commit_callbacks):
    topic, ids = _topic(budget="100.00")
    url = reverse("analyst:topic_launch", args=[topic.pk])
    data = {"half_width": "0.2", "complement": "120"}
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        first = analyst.post(url, data)
    html = first.content.decode()
    assert first.status_code == 200 and not callbacks  # nothing enqueued, nothing drawn
    assert not SampledDocument.objects.filter(topic=topic).exists() and not Hit.objects.filter(topic=topic).exists()
    shown = {region: int(_shown(html, region)) for region in ("A12", "B1", "B2", "N")}
    documents, hits = int(_shown(html, "documents")), int(_shown(html, "hits").split()[0])
    assert shown["N"] == 120 and documents == sum(shown.values())
    assert _shown(html, "judgments").startswith(f"{documents * 3} ")
    assert hits == -(-documents // 5)
    cost = Decimal("0.10") * 3 * hits  # local crowd: the reward, no fees
    assert f"${cost:.2f}" in _shown(html, "cost") and _shown(html, "committed") == "$0.00"
    assert f"${Decimal('100') - cost:.2f} would remain" in _shown(html, "budget")
    assert "csrfmiddlewaretoken" in html and _hidden(html)["confirm_cost"] == f"{cost:.2f}"

    with django_capture_on_commit_callbacks(execute=True):
        done = analyst.post(url, {**data, **_hidden(html)})
    assert done.status_code == 302
    drawn = dict(SampledDocument.objects.filter(topic=topic).values("region").annotate(n=Count("pk"))
                 .values_list("region", "n"))
    assert drawn == shown
    created = list(Hit.objects.filter(topic=topic).values_list("reward", "max_assignments"))
    assert len(created) == hits and sum(reward * slots for reward, slots in created) == cost
    page = analyst.get(done.url).content.decode()
    assert f"The sample is being drawn: {documents} documents (120 of them for the dependence check) into {hits} HITs" in page


def test_mturk_cost_includes_amazons_commission(analyst, db):
    topic, _ = _topic(crowd="mturk", budget=None)
    html = analyst.post(reverse("analyst:topic_launch", args=[topic.pk]), {"half_width": "0.3"}).content.decode()
    hits = int(_shown(html, "hits").split()[0])
    # $0.10 reward + 20% commission ($0.02) per assignment, 3 assignments per HIT.
    assert f"${Decimal('0.12') * 3 * hits:.2f}" in _shown(html, "cost") and "fees" in _shown(html, "cost")
    assert _shown(html, "budget") == "no limit set"


def test_a_budget_changed_between_the_two_steps_is_refused_and_shown_again(analyst, db, django_capture_on_commit_callbacks):
    topic, _ = _topic(budget="100.00")
    url = reverse("analyst:topic_launch", args=[topic.pk])
    html = analyst.post(url, {"half_width": "0.3"}).content.decode()
    Topic.objects.filter(pk=topic.pk).update(budget=Decimal("90.00"))  # another analyst edits the topic meanwhile
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        refused = analyst.post(url, {"half_width": "0.3", **_hidden(html)})
    again = refused.content.decode()
    assert refused.status_code == 409 and not callbacks and not Hit.objects.filter(topic=topic).exists()
    assert "Nothing was drawn: the figures changed" in again and "$90.00" in _shown(again, "budget")
    with django_capture_on_commit_callbacks(execute=True):
        assert analyst.post(url, {"half_width": "0.3", **_hidden(again)}).status_code == 302
    assert Hit.objects.filter(topic=topic).exists()


def test_a_tampered_or_stale_cost_is_refused(analyst, db, django_capture_on_commit_callbacks):
    topic, _ = _topic()
    url = reverse("analyst:topic_launch", args=[topic.pk])
    hidden = _hidden(analyst.post(url, {"half_width": "0.3"}).content.decode())
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        low = analyst.post(url, {"half_width": "0.3", **hidden, "confirm_cost": "0.01"})
        other_plan = analyst.post(url, {"half_width": "0.2", **hidden})  # a confirmation of another half-width (here: the same 90 documents)
    assert (low.status_code, other_plan.status_code) == (409, 409) and not callbacks
    assert not Hit.objects.filter(topic=topic).exists()


def test_a_repeated_launch_says_nothing_would_be_drawn(analyst, db, django_capture_on_commit_callbacks):
    topic, _ = _topic()
    url = reverse("analyst:topic_launch", args=[topic.pk])
    html = analyst.post(url, {"half_width": "0.3"}).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        analyst.get(analyst.post(url, {"half_width": "0.3", **_hidden(html)}).url)  # read the launch's message
    hits = Hit.objects.filter(topic=topic).count()
    assert hits > 0
    for step in ("topic_launch", "topic_topup"):
        with django_capture_on_commit_callbacks(execute=True) as callbacks:
            response = analyst.post(reverse(f"analyst:{step}", args=[topic.pk]), {"half_width": "0.3"}, follow=True)
        page = response.content.decode()
        assert "Nothing to draw" in page and "into 0 HITs" not in page and "being drawn" not in page
        assert not callbacks and Hit.objects.filter(topic=topic).count() == hits


def test_top_up_is_confirmed_too(analyst, db, django_capture_on_commit_callbacks):
    topic, _ = _topic(budget=None)
    launch = reverse("analyst:topic_launch", args=[topic.pk])
    with django_capture_on_commit_callbacks(execute=True):
        analyst.post(launch, {"half_width": "0.3", **_hidden(analyst.post(launch, {"half_width": "0.3"}).content.decode())})
    before = Hit.objects.filter(topic=topic).count()
    committed = Decimal("0.10") * 3 * before
    url = reverse("analyst:topic_topup", args=[topic.pk])
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        first = analyst.post(url, {"half_width": "0.1"})
    html = first.content.decode()
    assert first.status_code == 200 and not callbacks and Hit.objects.filter(topic=topic).count() == before
    assert _shown(html, "committed") == f"${committed:.2f}" and "Top up" in html
    with django_capture_on_commit_callbacks(execute=True):
        analyst.post(url, {"half_width": "0.1", **_hidden(html)})
    assert Hit.objects.filter(topic=topic).count() - before == int(_shown(html, "hits").split()[0])


def test_the_topic_page_no_longer_prefills_a_one_click_spend(analyst, db):
    topic, _ = _topic()
    html = analyst.get(reverse("analyst:topic", args=[topic.pk]), {"half_width": "0.3"}).content.decode()
    assert "review the cost" in html and "nothing is drawn until you confirm" in html


def test_a_budget_below_what_is_committed_is_refused_with_both_amounts(analyst, db, django_capture_on_commit_callbacks):
    topic, _ = _topic(budget=None)
    url = reverse("analyst:topic_launch", args=[topic.pk])
    with django_capture_on_commit_callbacks(execute=True):
        analyst.post(url, {"half_width": "0.3", **_hidden(analyst.post(url, {"half_width": "0.3"}).content.decode())})
    committed = Decimal("0.10") * 3 * Hit.objects.filter(topic=topic).count()
    assert committed > 1
    data = {"instructions": "Oil?", "target_recall": "0.8", "confidence": "0.95", "crowd": "local",
            "aggregator": "majority", "hit_size": "5", "reward_per_hit": "0.10", "budget": "1.00"}
    form = analyst.get(reverse("analyst:topic_edit", args=[topic.pk])).content.decode()
    assert f"Already committed to this topic's HITs: ${committed:.2f}" in unescape(form)
    refused = analyst.post(reverse("analyst:topic_edit", args=[topic.pk]), data)
    assert refused.status_code == 200
    assert f"A budget of $1.00 is below the ${committed:.2f} already committed" in unescape(refused.content.decode())
    topic.refresh_from_db()
    assert topic.budget is None
    assert analyst.post(reverse("analyst:topic_edit", args=[topic.pk]), {**data, "budget": f"{committed:.2f}"}).status_code == 302


def test_further_classifiers_are_quoted_as_an_upper_bound_the_launch_stays_within(analyst, db,
                                                                                   django_capture_on_commit_callbacks):
    from annotation.models import HitItem
    from annotation.services.topics.topic import topic_create

    corpus, ids = corpus_build(name="extra", size=600)
    c1 = ClassifierFactory.create(corpus=corpus, name="title", ids=ids[:200])
    c2 = ClassifierFactory.create(corpus=corpus, name="body", ids=ids[100:300])
    extra = ClassifierFactory.create(corpus=corpus, name="model", ids=ids[50:400])
    topic = topic_create(corpus=corpus, name="Oil", instructions="Oil?", c1=c1, c2=c2, extra_classifiers=[extra])
    url = reverse("analyst:topic_launch", args=[topic.pk])
    html = analyst.post(url, {"half_width": "0.3"}).content.decode()
    documents = int(_shown(html, "documents").removeprefix("at most "))
    # The HITs (and the cost) are bounds too when the documents are: said so ("Every figure honest", item 8).
    assert _shown(html, "hits").startswith("at most ")
    hits = int(_shown(html, "hits").removeprefix("at most ").split()[0])
    assert _shown(html, "documents").startswith("at most ") and "Further classifier model (precision sample): at most" in html
    with django_capture_on_commit_callbacks(execute=True):
        analyst.post(url, {"half_width": "0.3", **_hidden(html)})
    queued = HitItem.objects.filter(topic=topic, is_gold=False).count()
    created = Hit.objects.filter(topic=topic).count()
    assert 0 < queued <= documents and 0 < created <= hits
