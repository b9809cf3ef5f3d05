"""Issue 13 item 1: the analyst's pages for topic sets — create, routers (CSV upload, keywords), launch with a
confirmation, archive/delete of routers — and the single-topic pages sending a topic set to its own page.

Expected figures come from how the corpus is built (tests.factories.corpus_build: "oil" in the title of
every third document, "wheat" in the others; "crude oil" in the text of every even one), never from the code
under test.
"""
from __future__ import annotations

import re
from decimal import Decimal
from html import unescape

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from annotation.models import Corpus, Hit, Label, Router, RouterBuild, SampledDocument, Topic, TopicClass
from annotation.services.classifiers.routers import router_create_from_csv
from annotation.services.topics.topic_sets import topic_set_create
from tests.factories import HOSTILE, ClassifierFactory, corpus_build, user_with_role

pytestmark = pytest.mark.django_db


def _client(username: str, role: str | None) -> Client:
    user_with_role(username, role)
    client = Client()
    client.login(username=username, password="pw-for-tests-1")
    return client


@pytest.fixture
def analyst() -> Client:
    return _client("ana", "analyst")


@pytest.fixture
def corpus() -> Corpus:
    return corpus_build(name="news", size=60)[0]


@pytest.fixture
def topic_set(corpus) -> Topic:
    return topic_set_create(corpus=corpus, name="Commodities", classes=[("Oil", "crude, petrol"),
                                                                        ("Wheat", "grain harvests")],
                            reward_per_hit=Decimal("0.10"), budget=Decimal("10.00"), hit_size=5)


def _messages(response) -> str:
    return " ".join(str(m) for m in response.context["messages"]) if response.context else ""


def _text(response) -> str:
    return unescape(re.sub(r"<[^>]+>", " ", response.content.decode()))


def _create_post(corpus: Corpus, **changes) -> dict:
    data = {"corpus": corpus.pk, "name": "Markets", "classes": "Oil: crude and petrol\nWheat: grain\n",
            "instructions": "Pick the topic.", "aggregator": "majority", "hit_size": "5",
            "reward_per_hit": "0.10", "budget": ""}
    data.update(changes)
    return data


# --- create ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("classes", "expected"), [
    ("Oil: crude", "List at least 2 classes"),
    ("\n".join(f"Class {i}: x" for i in range(21)), "at most 20 classes (found 21)"),
    ("Oil: crude\noil: petrol", "Line 2: “oil” is already the class of line 1."),
    ("Oil: crude\n\nNone of these: rest", "Line 3: “None of these” is reserved"),
    ("Oil: crude\n: no name", "Line 2: the class has no name"),
    ("Oil: crude\n7: seven", "Line 2: “7” is a number"),
])
def test_bad_classes_are_refused_with_their_line_and_nothing_is_created(analyst, corpus, classes, expected):
    response = analyst.post(reverse("analyst:topic_set_new"), _create_post(corpus, classes=classes))
    assert response.status_code == 200
    assert expected in _text(response)
    assert not Topic.objects.exists() and not TopicClass.objects.exists()


def test_without_a_corpus_the_form_says_to_upload_one(analyst):
    html = analyst.get(reverse("analyst:topic_set_new")).content.decode()
    assert "No corpus yet" in html and reverse("analyst:corpus_upload") in html and 'id="topic-set-form"' not in html


def test_a_taken_name_and_bad_amounts_are_refused(analyst, corpus, topic_set):
    response = analyst.post(reverse("analyst:topic_set_new"),
                            _create_post(corpus, name="Commodities", hit_size="0", reward_per_hit="-1"))
    text = _text(response)
    assert "A topic with this name exists already." in text
    assert "greater than or equal to 1" in text and "greater than or equal to 0" in text
    assert Topic.objects.count() == 1


def test_creating_a_topic_set(analyst, corpus):
    page = analyst.get(reverse("analyst:topic_set_new") + f"?corpus={corpus.pk}").content.decode()
    assert f'<option value="{corpus.pk}" selected>' in page
    response = analyst.post(reverse("analyst:topic_set_new"),
                            _create_post(corpus, allow_unsure="on", aggregator="dawid_skene", budget="25"),
                            follow=True)
    topic = Topic.objects.get(name="Markets")
    assert response.redirect_chain[-1][0] == reverse("analyst:topic_set", args=[topic.pk])
    assert topic.is_multiclass and topic.allow_unsure and topic.aggregator == "dawid_skene"
    assert topic.budget == Decimal("25") and topic.instructions == "Pick the topic."
    assert list(topic.classes.values_list("position", "name", "description")) == [
        (1, "Oil", "crude and petrol"), (2, "Wheat", "grain")]
    text = _text(response)
    assert "created with 2 topics" in _messages(response)
    assert "crude and petrol" in text and "None of these" in text and "No router yet" in text
    assert "Drawn 0 documents" in " ".join(text.split())


def test_the_topics_list_and_the_corpus_page_show_and_offer_topic_sets(analyst, corpus, topic_set):
    c1 = ClassifierFactory.create(corpus=corpus, name="kw", ids=[])
    assert c1  # a corpus with a classifier, as in real use
    listing = analyst.get(reverse("analyst:topics")).content.decode()
    assert reverse("analyst:topic_set_new") in listing
    row = re.search(r"<tr><td><a href=\"[^\"]+\">Commodities</a>.*?</tr>", listing, re.S)
    assert row and "Topic set" in row.group(0) and "2 topics + none of these" in row.group(0)
    corpus_page = analyst.get(reverse("analyst:corpus", args=[corpus.pk])).content.decode()
    assert f'{reverse("analyst:topic_set_new")}?corpus={corpus.pk}' in corpus_page


# --- the single-topic pages on a topic set ------------------------------------------------------


def test_single_topic_pages_send_a_topic_set_to_its_own_pages(analyst, topic_set):
    pk = topic_set.pk
    assert analyst.get(reverse("analyst:topic", args=[pk])).url == reverse("analyst:topic_set", args=[pk])
    for name in ("topic_launch", "topic_topup"):
        response = analyst.post(reverse(f"analyst:{name}", args=[pk]), {"half_width": "0.1"}, follow=True)
        assert response.redirect_chain[-1][0] == reverse("analyst:topic_set", args=[pk])
        assert "launched from its own page" in _messages(response)
    assert not SampledDocument.objects.filter(topic=topic_set).exists()
    edit = analyst.get(reverse("analyst:topic_edit", args=[pk]))
    assert edit.status_code == 200 and 'name="target_recall"' not in edit.content.decode()
    saved = analyst.post(reverse("analyst:topic_edit", args=[pk]),
                         {"instructions": "New words", "crowd": "local", "aggregator": "majority", "hit_size": "4",
                          "reward_per_hit": "0.20", "budget": "12"})
    assert saved.status_code == 302
    topic_set.refresh_from_db()
    assert (topic_set.instructions, topic_set.hit_size, topic_set.budget) == ("New words", 4, Decimal("12"))
    # The HIT preview is the annotator's own page, with the set's topics to choose from (4 documents a HIT now).
    preview = analyst.get(reverse("analyst:topic_hit_preview", args=[pk]))
    html = preview.content.decode()
    assert preview.status_code == 200 and "the first documents of the corpus" in _messages(preview)
    assert len(re.findall(r'name="doc-\d+" value="c1"', html)) == 4
    assert len(re.findall(r'name="doc-\d+" value="c2"', html)) == 4
    assert 'value="1" required' not in html  # no on topic / off topic choice


def test_a_single_topic_is_sent_back_from_the_topic_set_pages(analyst, corpus):
    from annotation.services.topics.topic import topic_create

    _, ids = corpus, list(corpus.documents.values_list("pk", flat=True))
    single = topic_create(corpus=corpus, name="Oil", c1=ClassifierFactory.create(corpus=corpus, name="a", ids=ids[:30]),
                          c2=ClassifierFactory.create(corpus=corpus, name="b", ids=ids[15:45]))
    for name in ("topic_set", "router_upload", "router_keywords"):
        assert analyst.get(reverse(f"analyst:{name}", args=[single.pk])).url == reverse("analyst:topic", args=[single.pk])


# --- routers --------------------------------------------------------------------------------------


def _upload(analyst: Client, topic: Topic, content: bytes, name: str = "router one"):
    return analyst.post(reverse("analyst:router_upload", args=[topic.pk]),
                        {"name": name, "file": SimpleUploadedFile("preds.csv", content, content_type="text/csv")})


def test_a_router_file_with_bad_lines_is_refused_with_every_line_and_its_reason(analyst, topic_set):
    content = b"id,class\nd1,Oil\nd2,Barley\nnope,Wheat\nd1,Wheat\nd5,7\nd6,a,b\nd7,none\n"
    response = _upload(analyst, topic_set, content)  # the lines are read by the build (here: in-process)
    build = RouterBuild.objects.get()
    assert response.status_code == 302 and response.url == reverse("analyst:router_build", args=[build.pk])
    response = analyst.get(response.url)
    html = response.content.decode()
    rows = re.findall(r'<tr><td class="num">(\d+)</td><td>([^<]*)</td></tr>', html)
    assert [int(n) for n, _ in rows] == [3, 4, 5, 6, 7]
    reasons = {int(n): unescape(r) for n, r in rows}
    assert "unknown class 'Barley'" in reasons[3] and "not a document" in reasons[4]
    assert "listed twice (first on line 2)" in reasons[5] and "unknown class '7'" in reasons[6]
    assert "expected two fields" in reasons[7]
    assert "preds.csv: 5 bad line(s), nothing stored" in _text(response) and build.status == "failed"
    assert not Router.objects.exists()


def test_a_router_upload_without_the_header_or_empty_is_refused_plainly(analyst, topic_set):
    assert "header" in _text(_upload(analyst, topic_set, b"d1,Oil\n"))
    assert "file is empty" in _text(_upload(analyst, topic_set, b""))
    assert not Router.objects.exists()


def test_a_good_router_upload_shows_documents_per_predicted_topic(analyst, topic_set):
    response = _upload(analyst, topic_set, b"id,class\nd0,Oil\nd1,oil\nd2,2\nd3,none\nd4,\n")
    router = Router.objects.get()
    assert response.url == reverse("analyst:router", args=[router.pk])
    detail = analyst.get(response.url).content.decode()
    counts = dict(re.findall(r"<tr><td>([^<]+)</td><td class=\"num\">(\d+)</td></tr>", detail))
    assert counts == {"Oil": "2", "Wheat": "1", "None of these": "57"}
    page = analyst.get(reverse("analyst:topic_set", args=[topic_set.pk])).content.decode()
    row = re.search(r"router one</a></td>.*?</tr>", page, re.S)
    assert row and re.findall(r'class="num">(\d+)<', row.group(0)) == ["2", "1", "57"]


def _keywords(analyst: Client, topic: Topic, *, oil_order: int, wheat_order: int, fields=("title", "text"),
              oil_terms: str = "oil", wheat_terms: str = "wheat", name: str = "kw router"):
    data: dict = {"router-name": name}
    for position, order, terms in ((1, oil_order, oil_terms), (2, wheat_order, wheat_terms)):
        data.update({f"rule-{position}-position": position, f"rule-{position}-order": order,
                     f"rule-{position}-terms": terms, f"rule-{position}-fields": list(fields)})
    return analyst.post(reverse("analyst:router_keywords", args=[topic.pk]), data)


def test_keyword_router_first_matching_rule_wins(analyst, topic_set):
    page = analyst.get(reverse("analyst:router_keywords", args=[topic_set.pk])).content.decode()
    assert "first matching rule wins" in page and 'name="rule-2-terms"' in page
    # Oil first: any document with "oil" in its title (i % 3 == 0) or text (i even) -> 40 of 60; the other 20
    # all have "wheat" in their title.
    first = _keywords(analyst, topic_set, oil_order=1, wheat_order=2, name="oil first")
    assert first.status_code == 302
    assert Router.objects.get(name="oil first").predicted_counts == [0, 40, 20]
    # Wheat first: every title without "oil" has "wheat" (40); oil takes the remaining 20.
    _keywords(analyst, topic_set, oil_order=2, wheat_order=1, name="wheat first")
    assert Router.objects.get(name="wheat first").predicted_counts == [0, 20, 40]
    # Titles only, oil first, no rule for wheat: 20 oil titles, the rest to none of these.
    _keywords(analyst, topic_set, oil_order=1, wheat_order=2, fields=("title",), wheat_terms="", name="titles")
    router = Router.objects.get(name="titles")
    assert router.predicted_counts == [40, 20, 0]
    detail = _text(analyst.get(reverse("analyst:router", args=[router.pk])))
    assert "Oil : oil in title" in " ".join(detail.split())


def test_keyword_router_preview_counts_without_saving(analyst, topic_set):
    data = {"router-name": "", "preview": "1"}
    for position, order, terms in ((1, 2, "oil"), (2, 1, "wheat")):
        data.update({f"rule-{position}-position": position, f"rule-{position}-order": order,
                     f"rule-{position}-terms": terms, f"rule-{position}-fields": ["title", "text"]})
    response = analyst.post(reverse("analyst:router_keywords", args=[topic_set.pk]), data)
    html = response.content.decode()
    counts = dict(re.findall(r"<tr><td>([^<]+)</td><td class=\"num\">(\d+)</td></tr>", html))
    assert counts == {"Oil": "20", "Wheat": "40", "None of these": "0"}  # wheat first: see the precedence test
    assert "Enter a name" not in html and "This field is required" not in html
    assert not Router.objects.exists()


def test_keyword_router_preview_is_not_offered_on_a_large_corpus(analyst, topic_set, monkeypatch):
    monkeypatch.setattr("annotation.views.topic_sets.KEYWORD_PREVIEW_MAX_DOCUMENTS", 59)  # the corpus has 60
    data = {"preview": "1", "rule-1-position": 1, "rule-1-order": 1, "rule-1-terms": "oil",
            "rule-1-fields": ["title"], "rule-2-position": 2, "rule-2-order": 2, "rule-2-terms": ""}
    html = analyst.post(reverse("analyst:router_keywords", args=[topic_set.pk]), data).content.decode()
    assert "offered for corpora of up to 59 documents" in html and 'id="preview-counts"' not in html


def test_keyword_router_mistakes_are_explained(analyst, topic_set):
    nothing = _keywords(analyst, topic_set, oil_order=1, wheat_order=2, oil_terms="", wheat_terms="")
    assert "Give terms for at least one topic" in _text(nothing)
    no_fields = _keywords(analyst, topic_set, oil_order=1, wheat_order=2, fields=())
    assert "Choose where to search for the terms of “Oil”." in _text(no_fields)
    bad_order = _keywords(analyst, topic_set, oil_order=0, wheat_order=2)
    assert "greater than or equal to 1" in _text(bad_order)
    _keywords(analyst, topic_set, oil_order=1, wheat_order=2, name="taken")
    taken = _keywords(analyst, topic_set, oil_order=1, wheat_order=2, name="taken")
    assert "already has a router named 'taken'" in _text(taken)
    assert Router.objects.count() == 1


def test_router_archive_unarchive_and_delete(analyst, topic_set):
    router = router_create_from_csv(topic=topic_set, name="r", data=b"id,class\nd0,Oil\n", source_name="r.csv")
    archive = reverse("analyst:router_archive", args=[router.pk])
    assert 'id="confirm-router-archive"' in analyst.get(archive).content.decode()
    router.refresh_from_db()
    assert router.archived_at is None  # a GET changes nothing
    analyst.post(archive)
    router.refresh_from_db()
    assert router.archived_at is not None
    page = analyst.get(reverse("analyst:topic_set", args=[topic_set.pk])).content.decode()
    assert 'id="archived-routers"' in page and 'id="routers-table"' not in page
    analyst.post(reverse("analyst:router_unarchive", args=[router.pk]))
    router.refresh_from_db()
    assert router.archived_at is None
    # Once the topic set has a judged document, a report may have measured the router: delete is refused.
    Label.objects.create(topic=topic_set, document=topic_set.corpus.documents.first(), votes_total=1,
                         class_votes=[0, 1, 0])
    delete = reverse("analyst:router_delete", args=[router.pk])
    refused_page = analyst.get(delete).content.decode()
    assert 'id="delete-refused"' in refused_page and "1 judged document" in refused_page
    assert 'id="confirm-delete"' not in refused_page
    refused = analyst.post(delete, follow=True)
    assert "cannot be deleted" in _messages(refused) and Router.objects.filter(pk=router.pk).exists()
    Label.objects.all().delete()
    assert 'id="confirm-delete"' in analyst.get(delete).content.decode()
    deleted = analyst.post(delete)
    assert deleted.url == reverse("analyst:topic_set", args=[topic_set.pk])
    assert not Router.objects.filter(pk=router.pk).exists()


# --- launch ---------------------------------------------------------------------------------------


def _field(html: str, element_id: str) -> str:
    match = re.search(rf'id="{element_id}">(.*?)</dd>', html, re.S)
    assert match, element_id
    return " ".join(unescape(re.sub(r"<[^>]+>", "", match.group(1))).split())


def _hidden(html: str) -> dict[str, str]:
    return dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)">', html))


def test_launch_confirmation_shows_documents_hits_cost_and_budget_then_draws_exactly_that(analyst, topic_set):
    url = reverse("analyst:topic_set_launch", args=[topic_set.pk])
    confirm = analyst.post(url, {"documents": "20"})
    assert confirm.status_code == 200
    html = confirm.content.decode()
    assert not SampledDocument.objects.filter(topic=topic_set).exists()  # nothing drawn yet
    # 20 documents, 5 per HIT: 4 HITs x 3 assignments x $0.10 (built-in crowd: the reward, no fees).
    assert _field(html, "quote-documents") == "20"
    assert _field(html, "quote-hits").startswith("4 ")
    assert _field(html, "quote-judgments").startswith("60 ")
    assert _field(html, "quote-cost").startswith("$1.20 ")
    assert _field(html, "quote-committed") == "$0.00"
    assert _field(html, "quote-budget") == "$10.00: $10.00 left before this launch, $8.80 after it"
    launched = analyst.post(url, _hidden(html), follow=True)
    assert "20 new documents in 4 HITs, $1.20" in _messages(launched)
    assert SampledDocument.objects.filter(topic=topic_set).count() == 20
    assert Hit.objects.filter(topic=topic_set).count() == 4
    assert "Drawn 20 documents" in " ".join(_text(launched).split())

    # The same total again draws nothing, and says so (no green "0 documents drawn").
    again = analyst.post(url, {"documents": "20"}, follow=True)
    assert "Nothing to draw: the sample already holds 20 documents" in _messages(again)
    assert "0 new documents" not in _messages(again)
    assert SampledDocument.objects.filter(topic=topic_set).count() == 20

    # A larger total draws only the difference, priced with what is already committed.
    more = analyst.post(url, {"documents": "30"}).content.decode()
    assert _field(more, "quote-documents") == "10" and _field(more, "quote-committed") == "$1.20"
    assert _field(more, "quote-budget") == "$10.00: $8.80 left before this launch, $8.20 after it"
    analyst.post(url, _hidden(more))
    assert SampledDocument.objects.filter(topic=topic_set).count() == 30


def test_a_stale_or_tampered_confirmation_draws_nothing(analyst, topic_set):
    url = reverse("analyst:topic_set_launch", args=[topic_set.pk])
    hidden = _hidden(analyst.post(url, {"documents": "20"}).content.decode())
    tampered = analyst.post(url, {**hidden, "confirm_cost": "0.01"})
    assert tampered.status_code == 409 and 'id="confirm-changed"' in tampered.content.decode()
    Topic.objects.filter(pk=topic_set.pk).update(reward_per_hit=Decimal("0.20"))
    stale = analyst.post(url, hidden)
    assert stale.status_code == 409 and "it showed $1.20; now $2.40" in _text(stale)
    assert not SampledDocument.objects.filter(topic=topic_set).exists()


def test_a_launch_over_budget_is_refused_with_the_amounts_and_no_confirm_button(analyst, topic_set):
    Topic.objects.filter(pk=topic_set.pk).update(budget=Decimal("1.00"))
    page = analyst.post(reverse("analyst:topic_set_launch", args=[topic_set.pk]), {"documents": "20"})
    html = page.content.decode()
    assert 'id="launch-refused"' in html and 'id="confirm-launch"' not in html
    assert "$1.20" in _text(page) and "$1.00" in _text(page)
    # A confirmation forged from the figures shown is refused all the same: the budget is checked again.
    forged = {"documents": "20", "confirm_cost": "1.20", "confirm_fingerprint": "20:4:0.00:1.00"}
    forced = analyst.post(reverse("analyst:topic_set_launch", args=[topic_set.pk]), forged)
    assert forced.status_code == 200 and 'id="launch-refused"' in forced.content.decode()
    assert not SampledDocument.objects.filter(topic=topic_set).exists()


def test_launch_input_mistakes_and_an_archived_set(analyst, topic_set):
    url = reverse("analyst:topic_set_launch", args=[topic_set.pk])
    for bad in ("", "0", "abc"):
        response = analyst.post(url, {"documents": bad}, follow=True)
        assert "whole number of documents" in _messages(response)
    from annotation.services.topics.topic import topic_archive

    topic_archive(topic=topic_set)
    archived = analyst.post(url, {"documents": "10"}, follow=True)
    assert "archived" in _messages(archived)
    assert not SampledDocument.objects.filter(topic=topic_set).exists()


# --- roles and escaping -------------------------------------------------------------------------


def test_only_analysts_reach_the_topic_set_pages(topic_set):
    router = router_create_from_csv(topic=topic_set, name="r", data=b"id,class\nd0,Oil\n", source_name="r.csv")
    pk = topic_set.pk
    urls = [reverse("analyst:topic_set_new"), *(reverse(f"analyst:{n}", args=[pk]) for n in (
        "topic_set", "topic_set_launch", "router_upload", "router_keywords")),
        *(reverse(f"analyst:{n}", args=[router.pk]) for n in ("router", "router_archive", "router_unarchive",
                                                                "router_delete"))]
    for role in ("annotator", "manager"):
        client = _client(f"u-{role}", role)
        for url in urls:
            assert client.get(url).status_code == 403, (role, url)
            assert client.post(url, {"documents": "5", "name": "x"}).status_code == 403, (role, url)
    anonymous = Client()
    for url in urls:
        response = anonymous.post(url)
        assert response.status_code == 302 and reverse("login") in response["Location"]
    assert Router.objects.filter(pk=router.pk, archived_at__isnull=True).exists()
    assert not SampledDocument.objects.exists()


def test_hostile_names_are_escaped_everywhere(analyst, corpus):
    topic = topic_set_create(corpus=corpus, name="set " + HOSTILE, classes=[("Oil " + HOSTILE, "d " + HOSTILE),
                                                                             ("Wheat", "")],
                             instructions="Choose " + HOSTILE)
    router = router_create_from_csv(topic=topic, name="r " + HOSTILE, data=b"id,class\nd0,1\n",
                                    source_name="f " + HOSTILE)
    pages = [reverse("analyst:topic_set", args=[topic.pk]), reverse("analyst:topic_hit_preview", args=[topic.pk]),
             reverse("analyst:router_upload", args=[topic.pk]), reverse("analyst:router_keywords", args=[topic.pk]),
             reverse("analyst:topic_edit", args=[topic.pk]), reverse("analyst:topics"),
             *(reverse(f"analyst:{n}", args=[router.pk]) for n in ("router", "router_archive", "router_delete"))]
    for url in pages:
        html = analyst.get(url).content.decode()
        assert "<script>alert(1)</script>" not in html and 'onmouseover="alert(1)' not in html, url
    launch = analyst.post(reverse("analyst:topic_set_launch", args=[topic.pk]), {"documents": "5"}).content.decode()
    assert "<script>alert(1)</script>" not in launch
    bad_upload = analyst.get(_upload(analyst, topic, b"id,class\n<script>alert(1)</script>,x\n").url).content.decode()
    assert "<script>alert(1)</script>" not in bad_upload and "&lt;script&gt;" in bad_upload


def test_the_other_topic_pages_answer_for_a_topic_set(analyst, topic_set):
    url = reverse("analyst:topic_set_launch", args=[topic_set.pk])
    analyst.post(url, _hidden(analyst.post(url, {"documents": "10"}).content.decode()))
    assert SampledDocument.objects.filter(topic=topic_set).count() == 10
    for name in ("topic_rename", "topic_archive", "topic_delete", "gold", "workers"):
        response = analyst.get(reverse(f"analyst:{name}", args=[topic_set.pk]))
        assert response.status_code == 200, name
    # The detail page's Report link leads to the topic set's report.
    detail = analyst.get(reverse("analyst:topic_set", args=[topic_set.pk])).content.decode()
    report_url = reverse("reports:topic", args=[topic_set.pk])
    assert f'href="{report_url}" id="report-link"' in detail
    assert analyst.get(report_url).status_code == 200
