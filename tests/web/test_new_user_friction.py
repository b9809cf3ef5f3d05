"""What a new analyst met on the forms and every page (issue "the friction a new analyst, manager and pipeline
engineer still meet", items 1 and 4): fields a keyword filter reads, "unsure" at creation, help texts that
aria-describedby names, file pickers that offer the accepted types, checkboxes before their labels, the skip
link and the favicon."""
from __future__ import annotations

from html.parser import HTMLParser

import pytest
from django.contrib.staticfiles import finders
from django.test import Client
from django.urls import reverse

from annotation.models import Classifier, ClassifierPair, Topic
from tests.factories import ClassifierFactory, corpus_build, make_topic_set, user_with_role


class Elements(HTMLParser):
    """Every start tag with its attributes, in document order, and the element ids; plus the text that follows
    each tag until the next one (enough to tell what a label says after its checkbox)."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.ids: set[str] = set()
        self.stack: list[str] = []
        self.inside_label: list[bool] = []
        self.checkboxes_in_labels: list[dict[str, str]] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        self.tags.append((tag, values))
        if "id" in values:
            self.ids.add(values["id"])
        if tag == "input" and values.get("type") == "checkbox" and "label" in self.stack:
            self.checkboxes_in_labels.append(values)
        if tag not in ("input", "br", "img", "link", "meta", "hr"):
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.stack:
            while self.stack and self.stack.pop() != tag:
                pass


@pytest.fixture
def analyst(db) -> Client:
    client = Client()
    client.force_login(user_with_role("ana", "analyst"))
    return client


@pytest.fixture
def corpus(db):
    corpus, _ = corpus_build(size=30)
    return corpus


def _pair(corpus) -> tuple[Classifier, Classifier]:
    ids = list(corpus.documents.order_by("pk").values_list("pk", flat=True))
    return (ClassifierFactory.create(corpus=corpus, name="first", ids=ids[:15]),
            ClassifierFactory.create(corpus=corpus, name="second", ids=ids[10:25]))


def _topic(corpus) -> Topic:
    c1, c2 = _pair(corpus)
    topic = Topic.objects.create(corpus=corpus, name="Oil", instructions="Oil?")
    ClassifierPair.objects.create(topic=topic, c1=c1, c2=c2)
    return topic


# --- 1. the keyword filter reads only the fields the analyst ticks -------------------------------------------


def test_the_keyword_form_ticks_no_field_in_advance_and_refuses_none(analyst, corpus):
    url = reverse("analyst:classifier_keywords", args=[corpus.pk])
    page = Elements(analyst.get(url).content.decode())
    boxes = [attrs for tag, attrs in page.tags if tag == "input" and attrs.get("name") == "fields"]
    assert {box["value"] for box in boxes} >= {"title", "text"}
    assert not [box for box in boxes if "checked" in box], "no field is read unless the analyst ticks it"

    refused = analyst.post(url, {"name": "title oil", "terms": "oil", "create": "1"})
    assert refused.status_code == 200
    assert "Choose where to search" in refused.content.decode()
    assert not Classifier.objects.filter(name="title oil").exists()


def test_a_title_filter_reads_the_title_only(analyst, corpus):
    url = reverse("analyst:classifier_keywords", args=[corpus.pk])
    created = analyst.post(url, {"name": "title oil", "terms": "oil", "fields": ["title"], "create": "1"})
    assert created.status_code == 302
    classifier = Classifier.objects.get(name="title oil")
    assert classifier.definition["fields"] == ["title"]
    # corpus_build: "oil" is in the title of every third document (10 of 30), in the text of every other one.
    assert classifier.retrieved_count == 10


def test_the_preview_with_no_field_ticked_searches_nothing(analyst, corpus):
    fragment = analyst.get(reverse("analyst:keyword_preview", args=[corpus.pk]), {"terms": "oil"}).content.decode()
    assert 'id="preview-count"' not in fragment
    assert "Tick at least one field" in fragment
    # The page's own Preview button (no JavaScript) says the same.
    url = reverse("analyst:classifier_keywords", args=[corpus.pk])
    page = analyst.post(url, {"name": "", "terms": "oil", "preview": "1"}).content.decode()
    assert 'id="preview-count"' not in page and "Tick at least one field" in page


# --- 1. "unsure" offered when the topic is created -----------------------------------------------------------


def _topic_post(corpus, c1, c2, **overrides):
    data = {"name": "Oil", "corpus": corpus.pk, "instructions": "Is it about oil?", "c1": c1.pk, "c2": c2.pk,
            "target_recall": "0.8", "confidence": "0.95", "crowd": "local", "aggregator": "majority",
            "hit_size": "5", "reward_per_hit": "0.10", "budget": ""}
    data.update(overrides)
    return data


def test_unsure_can_be_offered_when_the_topic_is_created(analyst, corpus):
    c1, c2 = _pair(corpus)
    url = reverse("analyst:topic_new") + f"?corpus={corpus.pk}"
    page = Elements(analyst.get(url).content.decode())
    assert [attrs for tag, attrs in page.tags if tag == "input" and attrs.get("name") == "allow_unsure"]

    analyst.post(url, _topic_post(corpus, c1, c2, name="With unsure", allow_unsure="on"))
    analyst.post(url, _topic_post(corpus, c1, c2, name="Without unsure"))
    assert Topic.objects.get(name="With unsure").allow_unsure is True
    assert Topic.objects.get(name="Without unsure").allow_unsure is False


# --- 1. aria-describedby, accept=, checkboxes before their labels ---------------------------------------------


def _form_pages(analyst, corpus) -> dict[str, str]:
    topic = _topic(corpus)
    topic_set = make_topic_set(corpus, name="Sets")
    urls = {
        "corpus upload": reverse("analyst:corpus_upload"),
        "keyword filter": reverse("analyst:classifier_keywords", args=[corpus.pk]),
        "classifier upload": reverse("analyst:classifier_upload", args=[corpus.pk]),
        "new topic": reverse("analyst:topic_new") + f"?corpus={corpus.pk}",
        "topic settings": reverse("analyst:topic_edit", args=[topic.pk]),
        "gold": reverse("analyst:gold", args=[topic.pk]),
        "router upload": reverse("analyst:router_upload", args=[topic_set.pk]),
        "retrieved-set upload": reverse("analyst:classifier_retrieved_upload", args=[corpus.pk]),
        "new topic set": reverse("analyst:topic_set_new"),
    }
    pages = {}
    for name, url in urls.items():
        response = analyst.get(url)
        assert response.status_code == 200, (name, response.status_code)
        pages[name] = response.content.decode()
    return pages


def test_every_id_aria_describedby_names_exists(analyst, corpus):
    described = 0
    for name, html in _form_pages(analyst, corpus).items():
        page = Elements(html)
        for tag, attrs in page.tags:
            for target in attrs.get("aria-describedby", "").split():
                described += 1
                assert target in page.ids, f"{name}: <{tag} name={attrs.get('name')}> names #{target}, absent"
    assert described > 10


def test_an_invalid_field_names_its_error_too(analyst, corpus):
    html = analyst.post(reverse("analyst:corpus_upload"), {"corpus_name": " ", "id_field": "id",
                                                           "text_fields": "title"}).content.decode()
    page = Elements(html)
    name_input = next(attrs for tag, attrs in page.tags if tag == "input" and attrs.get("name") == "corpus_name")
    assert "id_corpus_name_error" in name_input["aria-describedby"].split()
    assert "id_corpus_name_error" in page.ids


EXPECTED_ACCEPT = {
    "corpus upload": {".jsonl", ".json", ".ndjson", ".csv", ".gz"},
    "classifier upload": {".txt", ".csv"},
    "gold": {".csv"},
    "router upload": {".csv"},
    "retrieved-set upload": {".roaring", ".bin", ".parquet"},
}


def test_every_file_input_says_which_files_it_takes(analyst, corpus):
    pages = _form_pages(analyst, corpus)
    for name, expected in EXPECTED_ACCEPT.items():
        files = [attrs for tag, attrs in Elements(pages[name]).tags if tag == "input" and attrs.get("type") == "file"]
        assert files, name
        for attrs in files:
            assert set(attrs.get("accept", "").split(",")) == expected, (name, attrs.get("accept"))
    for name, html in pages.items():  # and no other file input goes without
        for tag, attrs in Elements(html).tags:
            if tag == "input" and attrs.get("type") == "file":
                assert attrs.get("accept"), name


def test_a_checkbox_comes_first_inside_its_label(analyst, corpus):
    topic = _topic(corpus)
    html = analyst.get(reverse("analyst:topic_edit", args=[topic.pk])).content.decode()
    page = Elements(html)
    box = next(attrs for attrs in page.checkboxes_in_labels if attrs.get("name") == "allow_unsure")
    label_at = html.index(f'for="{box["id"]}"')
    box_at = html.index(f'id="{box["id"]}"')
    words_at = html.index("Offer an &quot;unsure&quot; answer", label_at)
    assert label_at < box_at < words_at, "the label wraps the box, and its words come after the box"
    assert "_helptext" in box.get("aria-describedby", "")


# --- 4. a skip link, and a favicon -----------------------------------------------------------------------


def test_the_skip_link_comes_first_and_targets_main(analyst, corpus):
    html = analyst.get(reverse("analyst:topics")).content.decode()
    page = Elements(html)
    body_at = next(i for i, (tag, _) in enumerate(page.tags) if tag == "body")
    first_link = next(attrs for tag, attrs in page.tags[body_at:] if tag in ("a", "button", "input"))
    assert first_link.get("href") == "#content"
    assert "Skip to content" in html[html.index('href="#content"'):][:80]
    main = next(attrs for tag, attrs in page.tags if tag == "main")
    assert main.get("id") == "content"


def test_the_favicon_is_linked_and_served(analyst, db):
    html = Client().get(reverse("login")).content.decode()
    icon = next(attrs for tag, attrs in Elements(html).tags if tag == "link" and attrs.get("rel") == "icon")
    assert icon["href"].endswith("img/favicon.svg") and icon["type"] == "image/svg+xml"
    assert finders.find("img/favicon.svg"), "the linked file is in static/"
    with open(finders.find("img/favicon.svg"), encoding="utf-8") as handle:
        assert handle.read().startswith("<svg")
    fallback = Client().get("/favicon.ico")
    assert fallback.status_code == 301 and fallback["Location"].endswith("img/favicon.svg")
