"""Issue 12: unarchiving a topic asks first (GET: a confirmation page; POST: unarchive), like archiving."""
from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Topic
from annotation.services.sampling.draws import samples_launch
from annotation.services.topics.topic import topic_archive, topic_create
from tests.factories import HOSTILE, ClassifierFactory, corpus_build, user_with_role

pytestmark = pytest.mark.django_db


def _client(username: str, role: str | None) -> Client:
    user_with_role(username, role)
    client = Client()
    client.login(username=username, password="pw-for-tests-1")
    return client


@pytest.fixture
def archived() -> Topic:
    corpus, ids = corpus_build(name="news", size=60)
    c1 = ClassifierFactory.create(corpus=corpus, name="kw", ids=ids[0:30])
    c2 = ClassifierFactory.create(corpus=corpus, name="model", ids=ids[15:45])
    topic = topic_create(corpus=corpus, name="Oil " + HOSTILE, c1=c1, c2=c2)
    samples_launch(topic=topic, per_region=5, seed=3)
    topic_archive(topic=topic)
    topic.refresh_from_db()
    return topic


def test_the_topic_page_links_to_a_confirmation_instead_of_unarchiving_on_one_click(archived):
    analyst = _client("ana", "analyst")
    page = analyst.get(reverse("analyst:topic", args=[archived.pk])).content.decode()
    url = reverse("analyst:topic_unarchive", args=[archived.pk])
    assert f'href="{url}" id="topic-unarchive"' in page
    assert f'action="{url}"' not in page  # no one-click form left
    confirm = analyst.get(url)
    assert confirm.status_code == 200
    html = confirm.content.decode()
    assert 'id="confirm-unarchive"' in html and "comes back <strong>paused</strong>" in html
    assert HOSTILE not in html  # the name is escaped
    archived.refresh_from_db()
    assert archived.archived_at is not None  # a GET changes nothing


def test_confirming_unarchives_it_paused(archived):
    analyst = _client("ana", "analyst")
    response = analyst.post(reverse("analyst:topic_unarchive", args=[archived.pk]), follow=True)
    archived.refresh_from_db()
    assert archived.archived_at is None and archived.status == Topic.Status.PAUSED
    assert "is back in the list, paused" in response.content.decode()


def test_a_topic_not_archived_shows_nothing_to_undo_and_a_post_changes_nothing(archived):
    analyst = _client("ana", "analyst")
    url = reverse("analyst:topic_unarchive", args=[archived.pk])
    analyst.post(url)
    archived.refresh_from_db()
    paused = archived.status
    html = analyst.get(url).content.decode()
    assert 'id="not-archived"' in html and 'id="confirm-unarchive"' not in html
    response = analyst.post(url, follow=True)
    archived.refresh_from_db()
    assert archived.status == paused and "is not archived: nothing changed" in response.content.decode()


def test_only_analysts_may_unarchive(archived):
    url = reverse("analyst:topic_unarchive", args=[archived.pk])
    for role in ("annotator", "manager"):
        client = _client(f"u-{role}", role)
        assert client.get(url).status_code == 403 and client.post(url).status_code == 403
    anonymous = Client().post(url)
    assert anonymous.status_code == 302 and reverse("login") in anonymous["Location"]
    archived.refresh_from_db()
    assert archived.archived_at is not None
