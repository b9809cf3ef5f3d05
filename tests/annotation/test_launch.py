"""One launch guard (annotation/services/topics/launch.py), the same through both front-ends.

Each case runs four ways: the analyst's page (Django's client, the two-step confirmation) and the API
(DRF's client, an Idempotency-Key), for a topic (classifier pair) and a topic set (uniform sample).
The confirmation is taken first (the page's first step, the API's quote or preview), then the state
changes, then the launch is confirmed: the guard must hold under the confirmation, not only on the
first step. Every refusal draws nothing; a confirmed launch draws once.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from html import unescape
from typing import Any

import pytest
from django.contrib.messages import get_messages
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.models import Hit, SampleDraw, Topic
from annotation.services.sampling.complement import complement_default
from annotation.services.sampling.draws import samples_launch
from annotation.services.topics.topic import topic_create
from annotation.services.topics.topic_sets import topic_set_launch
from api.services import api_token_create
from tests.factories import ClassifierFactory, corpus_build, make_topic_set, user_with_role

HALF_WIDTH = 0.3  # a small pair sample: a few dozen documents
SET_DOCUMENTS = 20  # the topic set's uniform sample, in all


def _topic() -> Topic:
    """A draft topic on 600 documents (A12 60, B1 40, B2 40), $0.10 per HIT of 5 documents, budget $100."""
    corpus, ids = corpus_build(name="launch", size=600)
    c1 = ClassifierFactory.create(corpus=corpus, name="title", ids=ids[:100])
    c2 = ClassifierFactory.create(corpus=corpus, name="body", ids=ids[40:140])
    topic = topic_create(corpus=corpus, name="Oil", instructions="Oil?", c1=c1, c2=c2)
    Topic.objects.filter(pk=topic.pk).update(budget=Decimal("100.00"), reward_per_hit=Decimal("0.10"), hit_size=5)
    topic.refresh_from_db()
    return topic


def _topic_set() -> Topic:
    """A draft topic set of three classes on 60 documents, the same prices and budget."""
    return make_topic_set(documents=60, status=Topic.Status.DRAFT, budget=Decimal("100.00"),
                          reward_per_hit=Decimal("0.10"), hit_size=5)


@dataclass
class Outcome:
    launched: bool
    status: int
    text: str  # the message or problem detail shown


class Front:
    """A front-end: how it shows a confirmation and how it confirms."""

    name: str

    def confirmation(self, topic: Topic) -> dict[str, str]:
        raise NotImplementedError

    def confirm(self, topic: Topic, confirmation: dict[str, str]) -> Outcome:
        raise NotImplementedError


class Page(Front):
    name = "page"

    def __init__(self) -> None:
        self.client = Client()
        self.client.force_login(user_with_role("ana", "analyst"))

    def _post(self, topic: Topic, data: dict[str, str]):
        if topic.is_multiclass:
            url, body = reverse("analyst:topic_set_launch", args=[topic.pk]), {"documents": str(SET_DOCUMENTS)}
        else:
            url, body = reverse("analyst:topic_launch", args=[topic.pk]), {"half_width": str(HALF_WIDTH)}
        back = reverse("analyst:topic_set" if topic.is_multiclass else "analyst:topic", args=[topic.pk])
        return self.client.post(url, {**body, **data}, HTTP_REFERER=f"http://testserver{back}")

    def confirmation(self, topic: Topic) -> dict[str, str]:
        first = self._post(topic, {})
        assert first.status_code == 200, first
        html = first.content.decode()
        return {k: unescape(v) for k, v in re.findall(r'<input type="hidden" name="(confirm_\w+)" value="([^"]*)"',
                                                         html)}

    def confirm(self, topic: Topic, confirmation: dict[str, str]) -> Outcome:
        response = self._post(topic, confirmation)
        shown = [str(m) for m in get_messages(response.wsgi_request)]
        if response.status_code != 302:  # the confirmation page again: what changed, or why it is refused
            match = re.search(r'role="alert"[^>]*>(.*?)</p>', response.content.decode(), re.S)
            shown.append(unescape(match.group(1)) if match else "")
        else:
            self.client.get(response.url)  # read the messages, so the next request shows only its own
        launched = any(m.startswith("The sample is") for m in shown)
        return Outcome(launched=launched, status=response.status_code, text=" ".join(shown))


class Api(Front):
    name = "api"

    def __init__(self) -> None:
        user = user_with_role("api-ana", "analyst")
        self.client = APIClient()
        self.client.credentials(HTTP_AUTHORIZATION=f"Bearer {api_token_create(user=user, name='t').plaintext}")
        self.keys = 0

    def confirmation(self, topic: Topic) -> dict[str, str]:
        if topic.is_multiclass:
            preview = self.client.get(f"/api/v1/topic-sets/{topic.pk}/preview/?documents={SET_DOCUMENTS}").json()
            return {"confirm_cost": preview["cost"]}  # the API's preview has no fingerprint (schema unchanged)
        quote = self.client.get(f"/api/v1/topics/{topic.pk}/quote/?half_width={HALF_WIDTH}").json()
        return {"confirm_cost": quote["cost"], "confirm_fingerprint": quote["fingerprint"]}

    def confirm(self, topic: Topic, confirmation: dict[str, str]) -> Outcome:
        self.keys += 1
        body: dict[str, Any]
        if topic.is_multiclass:
            url, body = f"/api/v1/topic-sets/{topic.pk}/launch/", {"documents": SET_DOCUMENTS}
        else:
            url, body = f"/api/v1/topics/{topic.pk}/launch/", {"half_width": HALF_WIDTH}
        response = self.client.post(url, {**body, **confirmation}, format="json",
                                    HTTP_IDEMPOTENCY_KEY=f"launch-{self.keys}")
        data: dict[str, Any] = response.json()
        return Outcome(launched=response.status_code in (201, 202), status=response.status_code,
                       text=str(data.get("detail", "")) + " " + str(data.get("type", "")))


FRONTS: dict[str, Callable[[], Front]] = {"page": Page, "api": Api}
KINDS: dict[str, Callable[[], Topic]] = {"topic": _topic, "topic_set": _topic_set}


def _archive(topic: Topic) -> None:
    Topic.objects.filter(pk=topic.pk).update(archived_at=timezone.now(), status=Topic.Status.CLOSED)


def _status(status: str) -> Callable[[Topic], None]:
    def change(topic: Topic) -> None:
        Topic.objects.filter(pk=topic.pk).update(status=status)
    return change


def _drawn_meanwhile(topic: Topic) -> None:
    """Someone launched the same sample between the two steps: nothing is left to draw."""
    if topic.is_multiclass:
        topic_set_launch(topic=topic, documents=SET_DOCUMENTS, seed=1)
    else:
        # The launch now includes the dependence check by default (issue 23): what "the same sample" draws.
        samples_launch(topic=topic, half_width=HALF_WIDTH, seed=1,
                       complement=complement_default(topic=topic, half_width=HALF_WIDTH))


def _budget_cut(topic: Topic) -> None:
    Topic.objects.filter(pk=topic.pk).update(budget=Decimal("0.01"))


def _budget_raised(topic: Topic) -> None:
    """Changes what the confirmation showed (the budget) but not the cost."""
    Topic.objects.filter(pk=topic.pk).update(budget=Decimal("90.00"))


# name: (change between the two steps, change to the confirmation, words of the refusal, status on both)
GUARDS: dict[str, tuple[Callable[[Topic], None] | None, dict[str, str], str, int | None]] = {
    "archived": (_archive, {}, "archived", None),
    "paused": (_status(Topic.Status.PAUSED), {}, "paused; resume it", None),
    "closed": (_status(Topic.Status.CLOSED), {}, "closed; resume it", None),
    "nothing to draw": (_drawn_meanwhile, {}, "Nothing to draw", None),
    "budget too small": (_budget_cut, {}, "over the budget", None),
    "cost changed": (None, {"confirm_cost": "0.01"}, "Nothing was drawn", 409),
    "fingerprint changed": (_budget_raised, {}, "Nothing was drawn", 409),
}


def _counts(topic: Topic) -> tuple[int, int]:
    return SampleDraw.objects.filter(topic=topic).count(), Hit.objects.filter(topic=topic).count()


# The API's topic-set launch takes no fingerprint (its body and schema stay as they are): that one
# combination has nothing to tamper with, so it is not generated (rather than skipped).
CASES = [(guard, front, kind) for guard in GUARDS for front in FRONTS for kind in KINDS
         if not (guard == "fingerprint changed" and front == "api" and kind == "topic_set")]


@pytest.mark.parametrize(("guard", "front", "kind"), CASES)
def test_each_guard_refuses_the_same_way_through_both_front_ends(db, django_capture_on_commit_callbacks,
                                                                  front: str, kind: str, guard: str) -> None:
    change, tamper, words, status = GUARDS[guard]
    topic, client = KINDS[kind](), FRONTS[front]()
    confirmation = client.confirmation(topic)
    if change is not None:
        change(topic)
    before = _counts(topic)
    with django_capture_on_commit_callbacks(execute=True):
        outcome = client.confirm(topic, {**confirmation, **tamper})
    assert not outcome.launched, outcome
    assert _counts(topic) == before  # nothing drawn, no HIT
    assert words in outcome.text, outcome
    if status is not None:
        assert outcome.status == status
    if front == "api":
        assert outcome.status == 409
        slug = {"nothing to draw": "nothing-to-draw", "cost changed": "cost-changed",
                "fingerprint changed": "cost-changed"}.get(guard, "conflict")
        assert outcome.text.endswith("/" + slug)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("front", FRONTS)
def test_a_confirmed_launch_draws_once(db, django_capture_on_commit_callbacks, front: str, kind: str) -> None:
    topic, client = KINDS[kind](), FRONTS[front]()
    confirmation = client.confirmation(topic)
    with django_capture_on_commit_callbacks(execute=True):
        outcome = client.confirm(topic, confirmation)
    assert outcome.launched, outcome
    draws, hits = _counts(topic)
    assert draws > 0 and hits > 0
    topic.refresh_from_db()
    assert topic.status == Topic.Status.ACTIVE
    # The same confirmation again (a new key for the API): nothing is left to draw, nothing more is spent.
    with django_capture_on_commit_callbacks(execute=True):
        again = client.confirm(topic, confirmation)
    assert not again.launched and _counts(topic) == (draws, hits)
