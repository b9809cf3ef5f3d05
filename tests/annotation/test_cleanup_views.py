"""Issue 12 items 6 and 9 (lists), the pages: rename, archive and delete with a confirmation page,
coverage warnings, a new-topic form that offers only the chosen corpus's classifiers, and
searchable, paginated topic and classifier lists. Analysts only."""
from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Classifier, Topic
from annotation.services.classifiers.classifier import classifier_archive
from annotation.services.sampling.draws import samples_launch
from annotation.services.topics.topic import topic_archive, topic_create
from tests.factories import ClassifierFactory, TopicFactory, corpus_build, user_with_role

pytestmark = pytest.mark.django_db


def _client(username: str, role: str | None) -> Client:
    user_with_role(username, role)
    client = Client()
    client.login(username=username, password="pw-for-tests-1")
    return client


@pytest.fixture
def analyst():
    return _client("ana", "analyst")


@pytest.fixture
def world():
    corpus, ids = corpus_build(name="news", size=60)
    c1 = ClassifierFactory.create(corpus=corpus, name="kw", ids=ids[0:30])
    c2 = ClassifierFactory.create(corpus=corpus, name="model", ids=ids[15:45])
    return corpus, ids, c1, c2


def _messages(response) -> str:
    return " ".join(str(m) for m in response.context["messages"]) if response.context else ""


# --- roles ----------------------------------------------------------------------------------------


def test_only_analysts_may_rename_archive_delete_or_list(world):
    corpus, _, c1, c2 = world
    topic = topic_create(corpus=corpus, name="Oil", c1=c1, c2=c2)
    pages = [reverse("analyst:classifiers"), reverse("analyst:topics"),
             *(reverse(f"analyst:classifier_{a}", args=[c1.pk]) for a in ("rename", "archive", "delete")),
             *(reverse(f"analyst:topic_{a}", args=[topic.pk]) for a in ("rename", "archive", "delete"))]
    posts = [reverse("analyst:classifier_delete", args=[c1.pk]), reverse("analyst:topic_delete", args=[topic.pk]),
             reverse("analyst:topic_archive", args=[topic.pk]), reverse("analyst:classifier_unarchive", args=[c1.pk])]
    for role in ("annotator", "manager"):
        client = _client(f"u-{role}", role)
        assert all(client.get(url).status_code == 403 for url in pages), role
        assert all(client.post(url).status_code == 403 for url in posts), role
    anonymous = Client().get(pages[0])
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous.url
    assert Topic.objects.filter(pk=topic.pk, archived_at__isnull=True).exists() and Classifier.objects.count() == 2


# --- classifiers ----------------------------------------------------------------------------------


def test_archiving_a_classifier_is_confirmed_on_a_page_and_hides_it(analyst, world):
    corpus, ids, c1, c2 = world
    spare = ClassifierFactory.create(corpus=corpus, name="spare", ids=ids[40:50])
    url = reverse("analyst:classifier_archive", args=[spare.pk])
    page = analyst.get(url).content.decode()
    assert 'id="confirm-archive"' in page and "csrfmiddlewaretoken" in page and "hides the classifier" in page
    spare.refresh_from_db()
    assert spare.archived_at is None  # the GET only asks
    response = analyst.post(url, follow=True)
    spare.refresh_from_db()
    assert spare.archived_at is not None and "archived" in _messages(response)
    assert 'id="classifier-unarchive"' in response.content.decode()
    listed = analyst.get(reverse("analyst:classifiers")).content.decode()
    assert ">spare<" not in listed and ">kw<" in listed
    assert ">spare<" in analyst.get(reverse("analyst:classifiers"), {"archived": "on"}).content.decode()
    form = analyst.get(reverse("analyst:topic_new"), {"corpus": corpus.pk}).content.decode()
    assert f'value="{spare.pk}"' not in form and f'value="{c1.pk}"' in form
    analyst.post(reverse("analyst:classifier_unarchive", args=[spare.pk]))
    spare.refresh_from_db()
    assert spare.archived_at is None


def test_deleting_a_used_classifier_is_refused_with_the_reason(analyst, world):
    corpus, _, c1, c2 = world
    topic_create(corpus=corpus, name="Oil topic", c1=c1, c2=c2)
    url = reverse("analyst:classifier_delete", args=[c1.pk])
    page = analyst.get(url).content.decode()
    assert 'id="delete-refused"' in page and "used by topic “Oil topic”" in page and 'id="confirm-delete"' not in page
    response = analyst.post(url, follow=True)
    assert "used by topic “Oil topic”" in _messages(response) and "Archive it instead" in _messages(response)
    assert Classifier.objects.filter(pk=c1.pk).exists()


def test_deleting_an_unused_classifier_after_confirmation(analyst, world):
    corpus, ids, _, _ = world
    spare = ClassifierFactory.create(corpus=corpus, name="spare", ids=ids[40:50])
    url = reverse("analyst:classifier_delete", args=[spare.pk])
    assert 'id="confirm-delete"' in analyst.get(url).content.decode()
    response = analyst.post(url)
    assert response.status_code == 302 and response.url == reverse("analyst:corpus", args=[corpus.pk])
    assert not Classifier.objects.filter(pk=spare.pk).exists()


def test_rename_shows_a_clash_next_to_the_form(analyst, world):
    _, _, c1, _ = world
    url = reverse("analyst:classifier_rename", args=[c1.pk])
    html = analyst.post(url, {"name": "model"}).content.decode()
    assert "already has a classifier named “model”" in html and 'id="rename-form"' in html
    assert analyst.post(url, {"name": "title keywords"}).status_code == 302
    c1.refresh_from_db()
    assert c1.name == "title keywords"


def test_coverage_warnings_on_the_page_in_the_preview_and_at_creation(analyst, world):
    corpus, ids, c1, _ = world
    broad = ClassifierFactory.create(corpus=corpus, name="broad", ids=ids[:50])
    page = analyst.get(reverse("analyst:classifier", args=[broad.pk])).content.decode()
    assert 'id="coverage-warnings"' in page and "83% of the corpus" in page
    assert 'id="coverage-warnings"' not in analyst.get(reverse("analyst:classifier", args=[c1.pk])).content.decode()
    # corpus_build: every even document's text says "crude oil", every one says "Text": 100% of the corpus.
    fragment = analyst.get(reverse("analyst:keyword_preview", args=[corpus.pk]), {"terms": "text", "fields": ["title", "text"]}).content.decode()
    assert 'id="preview-warnings"' in fragment and "100% of the corpus" in fragment
    fragment = analyst.get(reverse("analyst:keyword_preview", args=[corpus.pk]), {"terms": "zzzq", "fields": ["title", "text"]}).content.decode()
    assert "retrieves no document" in fragment
    ok = analyst.get(reverse("analyst:keyword_preview", args=[corpus.pk]), {"terms": "crude", "fields": ["title", "text"]}).content.decode()
    assert 'id="preview-warnings"' not in ok  # half the corpus: no warning
    response = analyst.post(reverse("analyst:classifier_keywords", args=[corpus.pk]),
                            {"name": "nothing", "terms": "zzzq", "fields": ["title", "text"], "create": "1"},
                            follow=True)
    assert Classifier.objects.filter(name="nothing", retrieved_count=0).exists()  # warned, not refused
    assert "“nothing”: It retrieves no document" in _messages(response)


# --- topics ---------------------------------------------------------------------------------------


def test_archiving_a_topic_is_confirmed_and_stops_sampling(analyst, world):
    corpus, _, c1, c2 = world
    topic = topic_create(corpus=corpus, name="Oil", c1=c1, c2=c2)
    samples_launch(topic=topic, per_region=5, seed=3)
    url = reverse("analyst:topic_archive", args=[topic.pk])
    page = analyst.get(url).content.decode()
    assert 'id="confirm-archive"' in page and "No new HIT is handed out" in page
    response = analyst.post(url, follow=True)
    topic.refresh_from_db()
    assert topic.archived_at is not None and topic.status == Topic.Status.CLOSED
    html = response.content.decode()
    assert 'id="archived-notice"' in html and 'id="topup"' not in html and "Pause sampling" not in html
    launch = analyst.post(reverse("analyst:topic_topup", args=[topic.pk]), {"half_width": "0.2"}, follow=True)
    assert "archived" in _messages(launch)
    assert ">Oil<" not in analyst.get(reverse("analyst:topics")).content.decode()
    assert ">Oil<" in analyst.get(reverse("analyst:topics"), {"archived": "on"}).content.decode()
    report = _client("mgr", "manager").get(reverse("reports:topic", args=[topic.pk]))
    assert report.status_code == 200  # its report stays readable
    analyst.post(reverse("analyst:topic_unarchive", args=[topic.pk]))
    topic.refresh_from_db()
    assert topic.archived_at is None and topic.status == Topic.Status.PAUSED


def test_deleting_topics(analyst, world):
    corpus, _, c1, c2 = world
    draft = topic_create(corpus=corpus, name="Draft", c1=c1, c2=c2)
    sampled = topic_create(corpus=corpus, name="Sampled", c1=c1, c2=c2)
    samples_launch(topic=sampled, per_region=5, seed=3)
    page = analyst.get(reverse("analyst:topic_delete", args=[sampled.pk])).content.decode()
    assert 'id="delete-refused"' in page and "3 sample draws" in page and 'id="confirm-delete"' not in page
    response = analyst.post(reverse("analyst:topic_delete", args=[sampled.pk]), follow=True)
    assert "cannot be deleted" in _messages(response) and Topic.objects.filter(pk=sampled.pk).exists()
    assert 'id="confirm-delete"' in analyst.get(reverse("analyst:topic_delete", args=[draft.pk])).content.decode()
    response = analyst.post(reverse("analyst:topic_delete", args=[draft.pk]))
    assert response.url == reverse("analyst:topics") and not Topic.objects.filter(pk=draft.pk).exists()


def test_topic_rename_page(analyst, world):
    corpus, _, c1, c2 = world
    topic = topic_create(corpus=corpus, name="Oil", c1=c1, c2=c2)
    TopicFactory.create(corpus=corpus, name="Wheat")
    url = reverse("analyst:topic_rename", args=[topic.pk])
    assert "a topic named “Wheat” already exists" in analyst.post(url, {"name": "Wheat"}).content.decode()
    assert analyst.post(url, {"name": "Crude"}).status_code == 302
    assert Topic.objects.filter(pk=topic.pk, name="Crude").exists()


def test_new_topic_picks_the_corpus_first_and_offers_only_its_classifiers(analyst, world):
    corpus, _, c1, c2 = world
    other, other_ids = corpus_build(name="other corpus", size=10)
    foreign = ClassifierFactory.create(corpus=other, name="foreign", ids=other_ids[:5])
    step_one = analyst.get(reverse("analyst:topic_new")).content.decode()
    assert 'id="topic-corpus-form"' in step_one and 'id="topic-form"' not in step_one
    assert "news · 2 classifiers" in step_one and "other corpus · 1 classifier" in step_one
    step_two = analyst.get(reverse("analyst:topic_new"), {"corpus": corpus.pk}).content.decode()
    select = re.findall(r'name="c1"[^>]*>(.*?)</select>', step_two, re.S)[0]
    assert set(re.findall(r'value="(\d+)"', select)) == {str(c1.pk), str(c2.pk)}
    assert f'value="{foreign.pk}"' not in step_two
    # The posted corpus cannot differ from the one chosen (the field is disabled): no "Select a valid choice".
    data = {"name": "Oil", "corpus": other.pk, "instructions": "Oil?", "c1": c1.pk, "c2": c2.pk,
            "target_recall": "0.8", "confidence": "0.95", "crowd": "local", "aggregator": "majority",
            "hit_size": "5", "reward_per_hit": "0.10", "budget": ""}
    response = analyst.post(reverse("analyst:topic_new") + f"?corpus={corpus.pk}", data)
    assert response.status_code == 302
    assert Topic.objects.get(name="Oil").corpus == corpus
    few = analyst.get(reverse("analyst:topic_new"), {"corpus": other.pk}).content.decode()
    assert 'id="too-few-classifiers"' in few


def test_a_single_corpus_skips_the_first_step(analyst, world):
    page = analyst.get(reverse("analyst:topic_new")).content.decode()
    assert 'id="topic-form"' in page and 'id="topic-corpus-form"' not in page and 'id="change-corpus"' not in page


# --- lists ----------------------------------------------------------------------------------------


def test_topics_list_searches_and_pages_keeping_the_query(analyst, world):
    corpus, _, _, _ = world
    for i in range(30):
        TopicFactory.create(corpus=corpus, name=f"oil {i:02d}")
    for i in range(5):
        TopicFactory.create(corpus=corpus, name=f"wheat {i}")
    archived = TopicFactory.create(corpus=corpus, name="oil archived")
    topic_archive(topic=archived)
    first = analyst.get(reverse("analyst:topics"), {"q": "OIL"})
    html = first.content.decode()
    assert len(first.context["topics"]) == 25 and "wheat" not in html and "oil archived" not in html
    assert "Page 1 of 2 · 30 topics" in html
    next_link = re.search(r'rel="next" href="([^"]+)"', html).group(1).replace("&amp;", "&")
    assert "q=OIL" in next_link and "page=2" in next_link
    second = analyst.get(reverse("analyst:topics") + next_link)
    assert [t.name for t in second.context["topics"]] == [f"oil {i:02d}" for i in range(25, 30)]
    with_archived = analyst.get(reverse("analyst:topics"), {"q": "oil", "archived": "on", "page": "2"})
    assert "oil archived" in with_archived.content.decode() and "archived=on" in with_archived.content.decode()
    none = analyst.get(reverse("analyst:topics"), {"q": "barley"}).content.decode()
    assert 'id="no-match"' in none
    assert analyst.get(reverse("analyst:topics"), {"page": "99"}).status_code == 200  # out of range: last page


def test_classifiers_list_searches_and_pages(analyst, world):
    corpus, ids, _, _ = world
    for i in range(27):
        ClassifierFactory.create(corpus=corpus, name=f"filter {i:02d}", ids=ids[:2])
    classifier_archive(classifier=Classifier.objects.get(name="filter 00"))
    page = analyst.get(reverse("analyst:classifiers"), {"q": "filter"})
    assert page.context["page"].paginator.count == 26 and "Page 1 of 2" in page.content.decode()
    page2 = analyst.get(reverse("analyst:classifiers"), {"q": "filter", "page": "2"})
    assert [c.name for c in page2.context["page"].object_list] == ["filter 26"]
    assert analyst.get(reverse("analyst:classifiers"), {"q": "filter", "archived": "on"}).context[
        "page"].paginator.count == 27
