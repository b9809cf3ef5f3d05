"""Analyst pages through the Django test client: uploads, classifiers, topics, launch."""
from __future__ import annotations

import gzip
import json
import re
from html import unescape

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from annotation.models import Classifier, Corpus, CorpusUpload, Hit, Topic
from tests.factories import HOSTILE, ClassifierFactory, corpus_build, user_with_role


@pytest.fixture
def analyst(db):
    client = Client()
    client.force_login(user_with_role("ana", "analyst"))
    return client


def _jsonl(rows) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


ROWS = [{"id": f"n{i}", "title": f"Oil report {i}", "body": "crude oil and grain" if i % 2 else "grain only"}
        for i in range(12)]


def test_upload_jsonl_imports_through_the_task_and_shows_the_corpus(analyst, django_capture_on_commit_callbacks):
    upload = SimpleUploadedFile("news.jsonl", _jsonl(ROWS), content_type="application/octet-stream")
    with django_capture_on_commit_callbacks(execute=True):
        response = analyst.post(reverse("analyst:corpus_upload"),
                                {"corpus_name": "News", "file": upload, "id_field": "id", "text_fields": "title, body"})
    record = CorpusUpload.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("analyst:upload", args=[record.pk])
    record.refresh_from_db()
    assert record.status == "done" and record.corpus.name == "News" and record.corpus.document_count == 12
    page = analyst.get(response["Location"])
    assert b"Imported" in page.content and b'http-equiv="refresh"' not in page.content
    state = analyst.get(reverse("analyst:upload_status", args=[record.pk])).json()
    assert state["status"] == "done" and state["finished"] and state["progress"] == 12


def test_upload_gzip_csv_is_read(analyst, django_capture_on_commit_callbacks):
    csv_text = "id,title,body\n" + "".join(f"c{i},Title {i},Body {i}\n" for i in range(5))
    upload = SimpleUploadedFile("docs.csv.gz", gzip.compress(csv_text.encode()))
    with django_capture_on_commit_callbacks(execute=True):
        analyst.post(reverse("analyst:corpus_upload"),
                     {"corpus_name": "CSV corpus", "file": upload, "id_field": "id", "text_fields": "title, body"})
    assert Corpus.objects.get(name="CSV corpus").document_count == 5


def test_a_bad_record_fails_the_upload_with_its_line_number(analyst, django_capture_on_commit_callbacks):
    data = _jsonl(ROWS[:2]) + b'{"id": "broken", "title": \n' + _jsonl(ROWS[2:4])
    with django_capture_on_commit_callbacks(execute=True):
        response = analyst.post(reverse("analyst:corpus_upload"), {
            "corpus_name": "Broken", "file": SimpleUploadedFile("b.jsonl", data), "id_field": "id",
            "text_fields": "title, body"})
    page = analyst.get(response["Location"])
    record = CorpusUpload.objects.get()
    assert record.status == "failed" and record.error_line == 3
    assert b"Line 3:" in page.content
    assert not Corpus.objects.filter(name="Broken", document_count__gt=0).exists()


def test_upload_form_keeps_input_and_shows_errors_next_to_fields(analyst):
    response = analyst.post(reverse("analyst:corpus_upload"), {
        "corpus_name": "Kept name", "file": SimpleUploadedFile("notes.txt", b"hello"), "id_field": "id",
        "text_fields": " , "})
    html = response.content.decode()
    assert response.status_code == 200
    assert 'value="Kept name"' in html
    assert html.index('id="field-file"') < html.index("Unsupported file type") < html.index('id="field-id_field"')
    assert "Name at least one text field" in html
    assert not CorpusUpload.objects.exists()


@pytest.fixture
def corpus(db):
    corpus, ids = corpus_build(size=30)
    return corpus


def test_keyword_preview_counts_highlights_and_escapes(analyst, corpus):
    ClassifierFactory.create(corpus=corpus, name="other " + HOSTILE, ids=[])
    response = analyst.get(reverse("analyst:keyword_preview", args=[corpus.pk]), {"terms": "crude oil", "fields": ["text"]})
    html = response.content.decode()
    assert response.status_code == 200
    assert 'id="preview-count">15<' in html  # even-numbered documents mention crude oil
    assert "<mark>crude oil</mark>" in html
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "other &lt;script&gt;" in html  # overlap table names the other classifier, escaped


def test_keyword_classifier_create_with_preview_then_duplicate_name_error(analyst, corpus):
    url = reverse("analyst:classifier_keywords", args=[corpus.pk])
    preview = analyst.post(url, {"name": "kw", "terms": "grain", "fields": ["text"], "preview": "1"})
    assert preview.status_code == 200 and b"<mark>grain</mark>" in preview.content and not Classifier.objects.exists()
    created = analyst.post(url, {"name": "kw", "terms": "grain", "fields": ["text"], "create": "1"})
    classifier = Classifier.objects.get(name="kw")
    assert created.status_code == 302 and classifier.retrieved_count == 15
    again = analyst.post(url, {"name": "kw", "terms": "oil", "fields": ["text"], "create": "1"})
    assert again.status_code == 200 and b"already" in again.content and b'value="kw"' in again.content


def test_neighbour_terms_are_suggested(analyst, corpus):
    response = analyst.get(reverse("analyst:neighbour_terms", args=[corpus.pk]),
                           {"suggest-seed_terms": "crude", "suggest-k": 5, "suggest-measure": "jaccard", "fragment": "1"})
    assert response.status_code == 200 and b'data-term="oil"' in response.content


def test_ids_upload_creates_a_classifier_and_reports_unknown_ids(analyst, corpus):
    data = b"d1\nd2\nd3\nnot-a-doc\n"
    response = analyst.post(reverse("analyst:classifier_upload", args=[corpus.pk]),
                            {"name": "ids", "kind": "ids", "file": SimpleUploadedFile("ids.txt", data)}, follow=True)
    assert Classifier.objects.get(name="ids").retrieved_count == 3
    assert b"not-a-doc" in response.content


def test_scores_upload_needs_a_threshold_and_reports_bad_lines(analyst, corpus):
    url = reverse("analyst:classifier_upload", args=[corpus.pk])
    missing = analyst.post(url, {"name": "s", "kind": "scores", "file": SimpleUploadedFile("s.csv", b"d1,0.5\n")})
    assert b"needs a threshold" in missing.content
    bad = analyst.post(url, {"name": "s", "kind": "scores", "threshold": "0.5",
                             "file": SimpleUploadedFile("s.csv", b"d1,0.9\nd2,high\n")})
    assert bad.status_code == 200 and b"Line 2:" in bad.content and not Classifier.objects.exists()
    good = analyst.post(url, {"name": "s", "kind": "scores", "threshold": "0.5",
                              "file": SimpleUploadedFile("s.csv", b"d1,0.9\nd2,0.1\nd3,0.7\n")})
    classifier = Classifier.objects.get(name="s")
    assert good.status_code == 302 and classifier.retrieved_count == 2
    analyst.post(reverse("analyst:classifier_threshold", args=[classifier.pk]), {"threshold": "0.8"})
    classifier.refresh_from_db()
    assert classifier.retrieved_count == 1


def _confirmed(client, url, data, **extra):
    """Issue 12 item 5: a launch or top-up is two POSTs; the first shows the cost, the second confirms it.

    Posts `data`, then (when a confirmation page came back) posts it again with the hidden
    confirmation fields of that page, as the browser does when the analyst clicks Confirm.
    """
    first = client.post(url, data)
    if first.status_code != 200:
        return first
    html = first.content.decode()
    hidden = dict(re.findall(r'<input type="hidden" name="(confirm_\w+)" value="([^"]*)"', html))
    assert set(hidden) == {"confirm_cost", "confirm_fingerprint"}, "no confirmation page"
    return client.post(url, {**data, **{k: unescape(v) for k, v in hidden.items()}}, **extra)


def _topic_post(corpus, c1, c2, **overrides):
    data = {"name": "Oil", "corpus": corpus.pk, "instructions": "Is it about oil?", "c1": c1.pk, "c2": c2.pk,
            "target_recall": "0.8", "confidence": "0.95", "crowd": "local", "aggregator": "majority",
            "hit_size": "5", "reward_per_hit": "0.10", "budget": ""}
    data.update(overrides)
    return data


def test_topic_form_errors_stay_next_to_their_fields(analyst, corpus):
    c1 = ClassifierFactory.create(corpus=corpus, ids=[])
    other_corpus, _ = corpus_build(name="other", size=3)
    foreign = ClassifierFactory.create(corpus=other_corpus, ids=[])
    response = analyst.post(reverse("analyst:topic_new"), _topic_post(corpus, c1, c1, name="Kept topic"))
    html = response.content.decode()
    assert "Choose two different classifiers" in html and 'value="Kept topic"' in html
    response = analyst.post(reverse("analyst:topic_new"), _topic_post(corpus, c1, foreign, target_recall="1.5"))
    html = response.content.decode()
    # Only the chosen corpus's classifiers are offered, so a foreign one is not a valid choice.
    assert "Select a valid choice" in html and "less than or equal to 0.99" in html
    assert not Topic.objects.exists()


def test_topic_create_plan_launch_pause_resume_topup(analyst, db, django_capture_on_commit_callbacks):
    corpus, ids = corpus_build(name="big", size=300)
    c1 = ClassifierFactory.create(corpus=corpus, name="a", ids=ids[:150])
    c2 = ClassifierFactory.create(corpus=corpus, name="b", ids=ids[100:250])
    response = analyst.post(reverse("analyst:topic_new"), _topic_post(corpus, c1, c2, budget="50", crowd="local"))
    topic = Topic.objects.get(name="Oil")
    assert response.status_code == 302 and topic.budget == 50 and topic.pair.c1 == c1
    page = analyst.get(reverse("analyst:topic", args=[topic.pk]), {"half_width": "0.3"})
    html = page.content.decode()
    assert 'id="plan-total"' in html and "Uniform sampling" in html and 'id="launch"' in html
    # The launch is a task enqueued on commit; with eager tasks it has run before the redirect is followed.
    with django_capture_on_commit_callbacks(execute=True):
        launched = _confirmed(analyst, reverse("analyst:topic_launch", args=[topic.pk]), {"half_width": "0.3"})
    topic.refresh_from_db()
    hits = Hit.objects.filter(topic=topic).count()
    assert topic.status == "active" and hits > 0
    page = analyst.get(launched.url).content.decode()
    assert "The sample is being drawn" in page and f"into {hits} HITs" in page and f"<dd>{hits}</dd>" in page
    analyst.post(reverse("analyst:topic_pause", args=[topic.pk]))
    topic.refresh_from_db()
    assert topic.status == "paused"
    analyst.post(reverse("analyst:topic_pause", args=[topic.pk]), {"action": "resume"})
    topic.refresh_from_db()
    assert topic.status == "active"
    with django_capture_on_commit_callbacks(execute=True):
        _confirmed(analyst, reverse("analyst:topic_topup", args=[topic.pk]), {"half_width": "0.1"})
    assert Hit.objects.filter(topic=topic).count() > hits


def test_launch_over_budget_is_refused_with_a_message(analyst, corpus, django_capture_on_commit_callbacks):
    ids = list(corpus.documents.order_by("pk").values_list("pk", flat=True))
    c1 = ClassifierFactory.create(corpus=corpus, name="a", ids=ids[:20])
    c2 = ClassifierFactory.create(corpus=corpus, name="b", ids=ids[10:30])
    analyst.post(reverse("analyst:topic_new"), _topic_post(corpus, c1, c2, budget="0.01"))
    topic = Topic.objects.get()
    page = reverse("analyst:topic", args=[topic.pk])
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = analyst.post(reverse("analyst:topic_launch", args=[topic.pk]), {"half_width": "0.2"}, follow=True,
                                HTTP_REFERER=f"http://testserver{page}")
    assert b"over the budget" in response.content and not Hit.objects.filter(topic=topic).exists()
    assert response.redirect_chain[-1][0].endswith(page) and not callbacks  # refused before anything was enqueued


def test_launch_without_overlap_is_refused_with_a_message(analyst, corpus, django_capture_on_commit_callbacks):
    # Issue 11: a disjoint pair is now refused at creation (test_topic_form_refuses_pairs_that_cannot_carry_an_estimate);
    # a topic created before that rule still cannot launch.
    from annotation.models import ClassifierPair
    from tests.factories import TopicFactory

    ids = list(corpus.documents.order_by("pk").values_list("pk", flat=True))
    c1 = ClassifierFactory.create(corpus=corpus, name="a", ids=ids[:10])
    c2 = ClassifierFactory.create(corpus=corpus, name="b", ids=ids[10:20])
    topic = TopicFactory.create(corpus=corpus, name="Oil", status=Topic.Status.DRAFT)
    ClassifierPair.objects.create(topic=topic, c1=c1, c2=c2)
    page = reverse("analyst:topic", args=[topic.pk])
    assert b"retrieve no document in common" in analyst.get(page).content
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = analyst.post(reverse("analyst:topic_launch", args=[topic.pk]), {"half_width": "0.2"}, follow=True,
                                HTTP_REFERER=f"http://testserver{page}")
    assert b"Cannot plan the sample" in response.content and not callbacks
    assert not Hit.objects.filter(topic=topic).exists()


def test_empty_states_point_to_the_next_step(analyst):
    assert b"Upload a corpus" in analyst.get(reverse("analyst:topics")).content
    assert b"No corpus yet" in analyst.get(reverse("analyst:corpora")).content


def test_hit_preview_uses_the_annotator_page_with_overlap_documents(analyst, corpus):
    from annotation.services.topics.topic import topic_create

    ids = list(corpus.documents.order_by("pk").values_list("pk", flat=True))
    topic = topic_create(corpus=corpus, name="t", instructions="Judge oil news", c1=ClassifierFactory.create(corpus=corpus, ids=ids[:10]),
                         c2=ClassifierFactory.create(corpus=corpus, ids=ids[8:20]))
    response = analyst.get(reverse("analyst:topic_hit_preview", args=[topic.pk]))
    html = response.content.decode()
    assert response.status_code == 200 and 'id="hit-form"' in html and "Judge oil news" in html
    assert "Nothing you answer here is recorded" in html
    assert f'name="doc-{ids[8]}"' in html and f'name="doc-{ids[9]}"' in html and f'name="doc-{ids[0]}"' not in html
    assert analyst.post(reverse("analyst:topic_hit_preview", args=[topic.pk]), {f"doc-{ids[8]}": "1"}).status_code == 200
    from annotation.models import Judgment

    assert not Judgment.objects.exists()


def test_mturk_topic_page_says_when_hits_are_not_on_mturk_yet(analyst, db, django_capture_on_commit_callbacks, settings):
    settings.MTURK_EXTERNAL_BASE_URL = ""
    corpus, ids = corpus_build(name="mt", size=100)
    c1 = ClassifierFactory.create(corpus=corpus, name="a", ids=ids[:50])
    c2 = ClassifierFactory.create(corpus=corpus, name="b", ids=ids[30:80])
    analyst.post(reverse("analyst:topic_new"), _topic_post(corpus, c1, c2, crowd="mturk"))
    topic = Topic.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        _confirmed(analyst, reverse("analyst:topic_launch", args=[topic.pk]), {"half_width": "0.3"})
    hits = Hit.objects.filter(topic=topic, external_id__isnull=True).count()
    assert hits > 0
    page = analyst.get(reverse("analyst:topic", args=[topic.pk])).content.decode()
    assert f"{hits} open HITs not yet on Mechanical Turk" in page


def test_topic_edit_changes_instructions_and_budget_but_not_the_crowd_once_sampling(analyst, db, django_capture_on_commit_callbacks):
    corpus, ids = corpus_build(name="ed", size=100)
    c1 = ClassifierFactory.create(corpus=corpus, name="a", ids=ids[:50])
    c2 = ClassifierFactory.create(corpus=corpus, name="b", ids=ids[30:80])
    analyst.post(reverse("analyst:topic_new"), _topic_post(corpus, c1, c2))
    topic = Topic.objects.get()
    url = reverse("analyst:topic_edit", args=[topic.pk])
    form = analyst.get(url).content.decode()
    assert "Is it about oil?" in form
    data = {"instructions": "New words", "target_recall": "0.7", "confidence": "0.9", "crowd": "local",
            "aggregator": "majority", "hit_size": "5", "reward_per_hit": "0.20", "budget": "30"}
    assert analyst.post(url, data).status_code == 302
    topic.refresh_from_db()
    assert (topic.instructions, topic.target_recall, str(topic.budget)) == ("New words", 0.7, "30.00")
    with django_capture_on_commit_callbacks(execute=True):
        _confirmed(analyst, reverse("analyst:topic_launch", args=[topic.pk]), {"half_width": "0.3"})
    refused = analyst.post(url, {**data, "hit_size": "7"})
    assert refused.status_code == 200 and b"cannot change once sampling has started" in refused.content
    topic.refresh_from_db()
    assert topic.hit_size == 5


def test_preview_without_a_name_keeps_the_input_and_shows_no_errors(analyst, corpus):
    response = analyst.post(reverse("analyst:classifier_keywords", args=[corpus.pk]),
                            {"name": "", "terms": "grain", "fields": ["text"], "preview": "1"})
    html = response.content.decode()
    assert "<mark>grain</mark>" in html and "errorlist" not in html
    import re

    boxes = dict(re.findall(r'<input type="checkbox" name="fields" value="(\w+)"([^>]*)>', html))
    assert ">\ngrain</textarea>" in html
    assert "checked" in boxes["text"] and "checked" not in boxes["title"]


def test_topic_page_shows_sampled_and_judged_per_region(world):
    import re

    from annotation.models import Label, SampledDocument

    client = Client()
    client.force_login(world["accounts"]["analyst"])
    html = client.get(reverse("analyst:topic", args=[world["topic"].pk])).content.decode()
    from django.utils.html import escape

    names = {"A12": "found by both", "B1": "found only by " + escape(world["c1"].name),
             "B2": "found only by " + escape(world["c2"].name)}
    for region in ("A12", "B1", "B2"):
        sampled = SampledDocument.objects.filter(topic=world["topic"], region=region).values("document_id")
        judged = Label.objects.filter(topic=world["topic"], document_id__in=sampled, majority__isnull=False).count()
        # The plan names regions in words, as every page does ("found by both", "found only by <name>", ...).
        name, row = re.search(rf'<tr><td data-region="{region}">(.*?)</td>(.*?)</tr>', html, re.S).groups()
        assert name == names[region]
        cells = re.findall(r'<td class="num">([^<]*)</td>', row)
        assert cells[-2:] == [str(sampled.count()), str(judged)] and judged > 0


def test_repeated_preview_is_served_from_the_cache_until_a_classifier_changes(analyst, corpus, monkeypatch):
    import annotation.views.classifiers as classifier_views

    calls = []
    real = classifier_views.keyword_preview

    def counting(**kwargs):
        calls.append(kwargs["terms"])
        return real(**kwargs)

    monkeypatch.setattr(classifier_views, "keyword_preview", counting)
    url = reverse("analyst:keyword_preview", args=[corpus.pk])
    query = {"terms": "grain", "fields": ["text"]}  # a field ticked: none ticked previews nothing
    first = analyst.get(url, query).content
    assert analyst.get(url, query).content == first and len(calls) == 1
    ClassifierFactory.create(corpus=corpus, name="new one", ids=[])
    assert b"new one" in analyst.get(url, query).content and len(calls) == 2


# --------------------------------------------------------------------------- errors: user mistakes vs bugs


def _draft_topic(corpus):
    from annotation.services.topics.topic import topic_create

    ids = list(corpus.documents.order_by("pk").values_list("pk", flat=True))
    return topic_create(corpus=corpus, name="t", instructions="Oil?", c1=ClassifierFactory.create(corpus=corpus, ids=ids[:10]),
                        c2=ClassifierFactory.create(corpus=corpus, ids=ids[8:20]))


def test_an_application_error_without_a_form_becomes_a_flash_message(analyst, corpus):
    topic = _draft_topic(corpus)  # a draft cannot be paused: TopicStatusError, handled by the middleware
    page = reverse("analyst:topic", args=[topic.pk])
    response = analyst.post(reverse("analyst:topic_pause", args=[topic.pk]), follow=True,
                            HTTP_REFERER=f"http://testserver{page}")
    assert response.status_code == 200 and response.redirect_chain[-1][0].endswith(page)
    assert b"only a topic that is sampling can be paused" in response.content


def test_an_application_error_from_a_form_shows_above_the_form_with_the_input_kept(analyst, corpus, monkeypatch):
    import annotation.views.classifiers as classifier_views
    from annotation.services.classifiers.classifier import ClassifierError

    def refuse(**kwargs):
        raise ClassifierError("that filter is refused <b>here</b>")

    monkeypatch.setattr(classifier_views, "classifier_build_start", refuse)
    response = analyst.post(reverse("analyst:classifier_keywords", args=[corpus.pk]),
                            {"name": "kw-kept", "terms": "grain", "fields": ["text"], "create": "1"})
    html = response.content.decode()
    assert response.status_code == 200 and "that filter is refused &lt;b&gt;here&lt;/b&gt;" in html
    assert 'value="kw-kept"' in html and not Classifier.objects.filter(name="kw-kept").exists()


@pytest.mark.parametrize("view", ["pause", "create"])
def test_a_plain_value_error_is_a_server_error_not_a_polite_message(analyst, corpus, monkeypatch, view):
    import annotation.views.classifiers as classifier_views
    import annotation.views.topics as topic_views

    def bug(**kwargs):
        raise ValueError("a bug, not the user's mistake")

    analyst.raise_request_exception = False
    if view == "pause":
        topic = _draft_topic(corpus)
        monkeypatch.setattr(topic_views, "topic_pause", bug)
        response = analyst.post(reverse("analyst:topic_pause", args=[topic.pk]))
    else:
        monkeypatch.setattr(classifier_views, "classifier_build_start", bug)
        response = analyst.post(reverse("analyst:classifier_keywords", args=[corpus.pk]),
                                {"name": "kw", "terms": "grain", "fields": ["text"], "create": "1"})
    assert response.status_code == 500 and b"a bug" not in response.content


# --------------------------------------------------------------------------- issue 11: pairs and the dependence check


@pytest.mark.parametrize("first, second, words", [
    (slice(0, 20), slice(0, 40), "Classifier “inner” retrieves nothing “outer” does not"),  # A1 ⊆ A2 (B1 empty)
    (slice(0, 40), slice(0, 20), "Classifier “inner” retrieves nothing “outer” does not"),  # A2 ⊆ A1 (B2 empty)
    (slice(0, 20), slice(20, 40), "retrieve no document in common"),
    (slice(0, 20), slice(0, 20), "retrieve exactly the same documents"),
])
def test_topic_form_refuses_pairs_that_cannot_carry_an_estimate(analyst, corpus, first, second, words):
    ids = list(corpus.documents.order_by("pk").values_list("pk", flat=True))
    inner_first = first.stop <= second.stop
    c1 = ClassifierFactory.create(corpus=corpus, name="inner" if inner_first else "outer", ids=ids[first])
    c2 = ClassifierFactory.create(corpus=corpus, name="outer" if inner_first else "inner", ids=ids[second])
    if first == second:
        c2.name = "twin"
        c2.save(update_fields=["name"])
    response = analyst.post(reverse("analyst:topic_new"), _topic_post(corpus, c1, c2, name="Kept name"))
    html = response.content.decode()
    assert response.status_code == 200 and words in html and 'value="Kept name"' in html
    assert "1 by construction" in html or "0 for both by construction" in html
    assert not Topic.objects.exists()


def test_topic_page_warns_about_a_small_overlap(analyst, corpus):
    ids = list(corpus.documents.order_by("pk").values_list("pk", flat=True))
    c1 = ClassifierFactory.create(corpus=corpus, name="a", ids=ids[:15])
    c2 = ClassifierFactory.create(corpus=corpus, name="b", ids=ids[12:28])  # A12 holds 3 documents
    analyst.post(reverse("analyst:topic_new"), _topic_post(corpus, c1, c2))
    topic = Topic.objects.get()
    html = analyst.get(reverse("analyst:topic", args=[topic.pk])).content.decode()
    assert 'id="pair-warnings"' in html and "holds only 3 documents" in html


@pytest.fixture
def big_topic(db):
    """A draft topic on 3,000 documents: A12 300, B1 200, B2 400, N 2,100."""
    from annotation.services.topics.topic import topic_create

    corpus, ids = corpus_build(name="big", size=3000)
    c1 = ClassifierFactory.create(corpus=corpus, name="title", ids=ids[:500])
    c2 = ClassifierFactory.create(corpus=corpus, name="body", ids=ids[200:900])
    return topic_create(corpus=corpus, name="Oil", instructions="Oil?", c1=c1, c2=c2), ids


def test_plan_shows_the_dependence_check_sized_and_costed(analyst, big_topic):
    from annotation.services.sampling.complement import complement_plan
    from annotation.services.sampling.draws import planned_region_sizes

    topic, _ = big_topic
    html = analyst.get(reverse("analyst:topic", args=[topic.pk]), {"half_width": "0.1"}).content.decode()
    planned = complement_plan(topic=topic, judged=planned_region_sizes(topic=topic, half_width=0.1))
    assert planned.feasible and planned.size == 2100 and 0 < planned.judged <= 2100
    assert 'id="dependence-check"' in html and 'id="plan-row-n"' in html
    row = html.split('id="plan-row-n"')[1].split("</tr>")[0]
    assert ">2100<" in row and f">{planned.judged}<" in row
    # What it buys and what happens without it, in plain words; what the N guess rests on.
    assert "assumes nothing about whether the two classifiers are independent" in html
    assert "a test of that assumption" in html and "Without it" in html
    assert "a conservative prior, not the pair" in html  # issue 23: N is no longer sized from δ1 = 1.25
    # Its cost next to the plan's, and the launch form offers it ticked by default (issue 23), with an opt-out.
    # (the figures are the launch quote's with the check: tests/web/test_one_quote.py)
    assert 'id="dependence-cost"' in html and f"({planned.judged} of them in “found by neither”)" in html
    assert f'name="complement" value="{planned.judged}" id="launch-complement" checked> With the dependence check' in html
    assert 'id="launch-no-complement"' in html
    assert "csrfmiddlewaretoken" in html.split('id="dependence-check"')[1]


def test_launch_with_the_dependence_check_draws_region_n(analyst, big_topic, django_capture_on_commit_callbacks):
    from annotation.models import SampledDocument, SampleDraw

    topic, ids = big_topic
    with django_capture_on_commit_callbacks(execute=True):
        launched = _confirmed(analyst, reverse("analyst:topic_launch", args=[topic.pk]), {"half_width": "0.2", "complement": "120"})
    drawn = SampledDocument.objects.filter(topic=topic, region="N")
    assert drawn.count() == 120 and set(drawn.values_list("draw__purpose", flat=True)) == {SampleDraw.Purpose.PAIR}
    assert set(drawn.values_list("document_id", flat=True)) <= set(ids[900:])
    page = analyst.get(launched.url).content.decode()
    assert "(120 of them for the dependence check)" in page
    assert f"into {Hit.objects.filter(topic=topic).count()} HITs" in page


def test_launch_without_the_check_is_unchanged(analyst, big_topic, django_capture_on_commit_callbacks):
    from annotation.models import SampledDocument

    topic, _ = big_topic
    with django_capture_on_commit_callbacks(execute=True):
        _confirmed(analyst, reverse("analyst:topic_launch", args=[topic.pk]), {"half_width": "0.2"})
    assert SampledDocument.objects.filter(topic=topic).exists()
    assert not SampledDocument.objects.filter(topic=topic, region="N").exists()


def test_a_bad_dependence_check_size_is_refused_with_a_message(analyst, big_topic, django_capture_on_commit_callbacks):
    topic, _ = big_topic
    page = reverse("analyst:topic", args=[topic.pk])
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = analyst.post(reverse("analyst:topic_launch", args=[topic.pk]), {"half_width": "0.2", "complement": "-5"},
                                follow=True)
    assert b"dependence check&#x27;s size" in response.content and not callbacks
    assert response.redirect_chain[-1][0].endswith(page) and not Hit.objects.filter(topic=topic).exists()


def test_top_up_can_add_the_dependence_check(analyst, big_topic, django_capture_on_commit_callbacks):
    from annotation.models import SampledDocument

    topic, _ = big_topic
    with django_capture_on_commit_callbacks(execute=True):
        _confirmed(analyst, reverse("analyst:topic_launch", args=[topic.pk]), {"half_width": "0.2"})
    with django_capture_on_commit_callbacks(execute=True):
        _confirmed(analyst, reverse("analyst:topic_topup", args=[topic.pk]), {"half_width": "0.2", "complement": "50"})
    assert SampledDocument.objects.filter(topic=topic, region="N").count() == 50


def test_launch_and_plan_need_the_analyst_role(big_topic, accounts):
    topic, _ = big_topic
    client = Client()
    client.force_login(accounts["manager"])
    response = client.post(reverse("analyst:topic_launch", args=[topic.pk]), {"half_width": "0.2", "complement": "50"})
    assert response.status_code in (302, 403)
    assert not Hit.objects.filter(topic=topic).exists()
    csrf_client = Client(enforce_csrf_checks=True)
    csrf_client.force_login(user_with_role("ana2", "analyst"))
    assert csrf_client.post(reverse("analyst:topic_launch", args=[topic.pk]),
                            {"half_width": "0.2", "complement": "50"}).status_code == 403
    assert not Hit.objects.filter(topic=topic).exists()


def test_a_nested_topic_from_before_the_rule_shows_no_plan_and_cannot_launch(analyst, big_topic,
                                                                           django_capture_on_commit_callbacks):
    from annotation.models import ClassifierPair

    topic, ids = big_topic
    container = ClassifierFactory.create(corpus=topic.corpus, name="container", ids=ids[:900])
    ClassifierPair.objects.filter(topic=topic).update(c2=container)
    page = reverse("analyst:topic", args=[topic.pk])
    html = analyst.get(page).content.decode()
    assert "No plan: Classifier “title” retrieves nothing “container” does not" in html and 'id="launch"' not in html
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = analyst.post(reverse("analyst:topic_launch", args=[topic.pk]), {"half_width": "0.2"}, follow=True,
                                HTTP_REFERER=f"http://testserver{page}")
    assert "cannot be sampled" in response.content.decode() and not callbacks
    assert not Hit.objects.filter(topic=topic).exists()
