"""The gold page of a topic set: judged documents with their class votes in words and a class to mark them gold
with, the known class by name in the gold list, a class gold file (``id,class``) uploaded end to end, and only
analysts may post.

Votes are written into the Labels here (three workers' counts per class), so the expected words and majorities
are read off those counts, never from the code under test. Class names and titles carry hostile markup
(tests.factories.HOSTILE): every page here is also an escaping test.
"""
from __future__ import annotations

import re
from decimal import Decimal
from html import unescape

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from annotation.models import Document, Label, Topic
from annotation.services.crowd.labels import topic_gold_answers
from annotation.services.topics.topic_sets import topic_set_create
from tests.factories import HOSTILE, corpus_build, user_with_role

pytestmark = pytest.mark.django_db

COFFEE = "Coffee " + HOSTILE  # class 1
TEA = "Tea"  # class 2


def _client(username: str, role: str | None) -> Client:
    user_with_role(username, role)
    client = Client()
    client.login(username=username, password="pw-for-tests-1")
    return client


def _text(response) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", response.content.decode())).split())


def _messages(response) -> str:
    return " ".join(str(m) for m in response.context["messages"]) if response.context else ""


@pytest.fixture
def analyst() -> Client:
    return _client("ana", "analyst")


@pytest.fixture
def topic_set() -> Topic:
    """Classes Coffee (1) and Tea (2); d0 voted coffee 2 / none 1, d1 a three-way tie, d2 tea 3, d3 two votes only."""
    corpus = corpus_build(size=12)[0]
    topic = topic_set_create(corpus=corpus, name="Drinks", classes=[(COFFEE, "beans"), (TEA, "leaves")],
                             reward_per_hit=Decimal("0.10"), hit_size=5)
    for external_id, votes, majority in (("d0", [1, 2, 0], 1), ("d1", [1, 1, 1], None), ("d2", [0, 0, 3], 2)):
        Label.objects.create(topic=topic, document=_doc(topic, external_id), votes_total=3, class_votes=votes,
                             majority_class=majority)
    Label.objects.create(topic=topic, document=_doc(topic, "d3"), votes_total=2, class_votes=[0, 2, 0])
    return topic


def _doc(topic: Topic, external_id: str) -> Document:
    return Document.objects.get(corpus=topic.corpus, external_id=external_id)


def _row(html: str, doc: Document) -> str:
    match = re.search(rf'<tr id="judged-{doc.pk}">(.*?)</tr>', html, re.S)
    assert match, f"no judged row for {doc.external_id}"
    return match.group(1)


def _upload(client: Client, topic: Topic, content: bytes, **extra):
    return client.post(reverse("analyst:gold_upload", args=[topic.pk]),
                       {"file": SimpleUploadedFile("gold.csv", content, content_type="text/csv")}, **extra)


def test_the_judged_list_shows_class_votes_in_words_and_the_majority(analyst, topic_set):
    response = analyst.get(reverse("analyst:gold", args=[topic_set.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    assert "<script>alert(1)</script>" not in html and 'onmouseover="alert(1)' not in html
    d0, d1, d2, d3 = (_doc(topic_set, f"d{i}") for i in range(4))
    row0 = unescape(_row(html, d0))
    assert f"{COFFEE} 2, none 1" in row0 and f"<td>{COFFEE}</td>" in row0
    row1 = unescape(_row(html, d1))
    assert f"none 1, {COFFEE} 1, Tea 1" in row1 and "<td>tie</td>" in row1
    assert '<option value="" selected>choose…</option>' in row1  # a tie: no class chosen for the analyst
    row2 = _row(html, d2)
    assert "Tea 3" in row2 and '<option value="2" selected>Tea</option>' in row2
    assert f'id="judged-{d3.pk}"' not in html  # two votes of three: not complete
    # One select of the classes, "None of these" included, and one button; no yes/no buttons.
    assert row2.count("<option") == 3 and '<option value="0">None of these</option>' in row2
    assert 'name="gold_class"' in row2 and 'name="relevant"' not in html
    assert "Votes relevant" not in html
    # The help shows a class file, not a yes/no one.
    help_text = _text(response)
    assert "id,class" in help_text and "id,relevant" not in help_text and "reuters-2211,none" in help_text


def test_posting_a_class_marks_the_document_gold_and_the_list_names_it(analyst, topic_set):
    d1 = _doc(topic_set, "d1")
    response = analyst.post(reverse("analyst:gold_add", args=[topic_set.pk]),
                            {"document": str(d1.pk), "gold_class": "2", "page": "1"}, follow=True)
    assert response.redirect_chain[-1][0] == reverse("analyst:gold", args=[topic_set.pk]) + "?page=1"
    assert topic_gold_answers(topic=topic_set) == {d1.pk: 2}
    assert Label.objects.get(topic=topic_set, document=d1).gold is None
    assert "is now gold (Tea)" in _messages(response)
    html = response.content.decode()
    gold_row = re.search(rf'<tr id="gold-{d1.pk}">(.*?)</tr>', html, re.S)
    assert gold_row and "<td>Tea</td>" in gold_row.group(1)
    assert f'id="judged-{d1.pk}"' not in html  # gold now: out of the judged list
    # "None of these" (0) is a class too, and the gold list names it.
    d0 = _doc(topic_set, "d0")
    page = analyst.post(reverse("analyst:gold_add", args=[topic_set.pk]),
                        {"document": str(d0.pk), "gold_class": "0"}, follow=True).content.decode()
    assert topic_gold_answers(topic=topic_set) == {d0.pk: 0, d1.pk: 2}
    gold_row = re.search(rf'<tr id="gold-{d0.pk}">(.*?)</tr>', page, re.S)
    assert gold_row and "<td>None of these</td>" in gold_row.group(1)
    # An unused gold document of a topic set can be removed again.
    analyst.post(reverse("analyst:gold_remove", args=[topic_set.pk]), {"document": str(d0.pk)})
    assert topic_gold_answers(topic=topic_set) == {d1.pk: 2}


@pytest.mark.parametrize("bad", ["3", "-1", "x", "", "1.0", "²"])
def test_a_bad_class_is_a_page_with_the_message_not_a_500(analyst, topic_set, bad):
    d0 = _doc(topic_set, "d0")
    response = analyst.post(reverse("analyst:gold_add", args=[topic_set.pk]),
                            {"document": str(d0.pk), "gold_class": bad})
    assert response.status_code == 400
    assert "Choose the document's class" in _text(response) and "0 to 2" in _text(response)
    assert topic_gold_answers(topic=topic_set) == {}
    # From the gold page (a referer) it goes back there with the message.
    back = analyst.post(reverse("analyst:gold_add", args=[topic_set.pk]), {"document": str(d0.pk), "gold_class": bad},
                        HTTP_REFERER="http://testserver" + reverse("analyst:gold", args=[topic_set.pk]), follow=True)
    assert back.status_code == 200 and "Choose the document's class" in _messages(back)


def test_an_incomplete_document_is_refused_with_a_message(analyst, topic_set):
    d3 = _doc(topic_set, "d3")
    response = analyst.post(reverse("analyst:gold_add", args=[topic_set.pk]), {"document": str(d3.pk), "gold_class": "1"})
    assert response.status_code == 400 and "judgments are complete" in _text(response)
    assert topic_gold_answers(topic=topic_set) == {}


def test_a_class_file_is_added_at_once_when_every_line_is_good(analyst, topic_set):
    response = _upload(analyst, topic_set, b"id,class\nd5,tea\nd6,None of these\nd7,1\n", follow=True)
    assert "3 gold documents added from the file" in _messages(response)
    assert topic_gold_answers(topic=topic_set) == {
        _doc(topic_set, "d5").pk: 2, _doc(topic_set, "d6").pk: 0, _doc(topic_set, "d7").pk: 1}
    gold_row = re.search(rf'<tr id="gold-{_doc(topic_set, "d7").pk}">(.*?)</tr>', response.content.decode(), re.S)
    assert gold_row and f"<td>{COFFEE}</td>" in unescape(gold_row.group(1))


def test_a_class_file_with_bad_lines_lists_them_then_adds_the_good_ones_on_confirmation(analyst, topic_set):
    response = _upload(analyst, topic_set, b"id,class\nd5,tea\nd6,Milk <b>\nd5,Tea\nd7,none\n")
    assert response.status_code == 200
    html = response.content.decode()
    assert "<b>" not in html.split('id="gold-problems"')[1].split("</div>")[0]  # the bad cell is escaped
    text = _text(response)
    assert "Nothing was added." in text and "Line 3: class is 'Milk <b>'" in text
    assert "'Tea'" in text.split("Line 3:")[1] and "Line 4: the id 'd5' was already given on line 2" in text
    assert topic_gold_answers(topic=topic_set) == {}
    token = re.search(r'name="token" value="([^"]+)"', html)
    assert token
    confirmed = analyst.post(reverse("analyst:gold_upload_confirm", args=[topic_set.pk]),
                             {"token": unescape(token.group(1))}, follow=True)
    assert "2 gold documents added; the bad lines were skipped" in _messages(confirmed)
    assert topic_gold_answers(topic=topic_set) == {_doc(topic_set, "d5").pk: 2, _doc(topic_set, "d7").pk: 0}


def test_a_yes_no_file_is_refused_for_a_topic_set_with_the_columns_it_needs(analyst, topic_set):
    response = _upload(analyst, topic_set, b"id,relevant\nd5,yes\n")
    assert response.status_code == 400
    assert "The first line must name the columns 'id' and 'class'" in _text(response)
    assert topic_gold_answers(topic=topic_set) == {}


@pytest.mark.parametrize("role", ["annotator", "manager"])
def test_only_analysts_may_post(topic_set, role):
    client = _client("someone", role)
    d0 = _doc(topic_set, "d0")
    assert client.post(reverse("analyst:gold_add", args=[topic_set.pk]),
                       {"document": str(d0.pk), "gold_class": "1"}).status_code == 403
    assert _upload(client, topic_set, b"id,class\nd5,tea\n").status_code == 403
    assert client.get(reverse("analyst:gold", args=[topic_set.pk])).status_code == 403
    assert topic_gold_answers(topic=topic_set) == {}


def test_a_single_topic_keeps_its_yes_no_gold_page(world):
    client = Client()
    client.login(username="ana", password="pw-for-tests-1")
    topic = world["topic"]
    url = reverse("analyst:gold", args=[topic.pk])
    html = client.get(url).content.decode()
    assert "Votes relevant" in html and 'name="relevant" value="yes"' in html and 'name="gold_class"' not in html
    assert "id,relevant" in _text(client.get(url)) and "id,class" not in html
    label = Label.objects.filter(topic=topic, majority__isnull=False).order_by("document_id").first()
    assert label is not None
    page = client.post(reverse("analyst:gold_add", args=[topic.pk]),
                       {"document": str(label.document_id), "relevant": "no"}, follow=True).content.decode()
    gold_row = re.search(rf'<tr id="gold-{label.document_id}">(.*?)</tr>', page, re.S)
    assert gold_row and "<td>not relevant</td>" in gold_row.group(1)
