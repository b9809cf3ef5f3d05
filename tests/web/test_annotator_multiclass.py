"""The annotator's HIT page for a topic set (issue 13 item 1, seed 002): one choice per class, none of these, unsure.

Server side: the classes and their descriptions are on the page (escaped), a POST stores the chosen
class positions, a submitted HIT shows them back, the page reads the classes once (no query per
document), binary pages keep their on/off-topic choices, and the page paints from its HTML alone
(its CSS inlined, its script deferred). In headless Chromium: focus document 3, press 2 and document 3
gets class 2; the answers survive a reload before the submit (localStorage); two digits choose class 12.
Browser tests are skipped without Chromium, unless REQUIRE_BROWSER=1.
Fixtures are built with the models directly (Topic kind multiclass, TopicClass, Hit, HitItem, Label, Assignment).
"""
from __future__ import annotations

import os
import re
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from annotation.models import Assignment, Hit, HitItem, Judgment, Label, Topic, TopicClass
from annotation.services.crowd.workers import worker_for_user
from tests.factories import HOSTILE, CorpusFactory, TopicFactory, make_documents, user_with_role

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

SHOTS = Path(__file__).resolve().parents[2] / "var" / "artifacts" / "screenshots"
CLASSES = (("Sport " + HOSTILE, "Games & <matches>"), ("Politics", "Elections, parliaments"), ("Science", ""))


def _topic_set(*, classes=CLASSES, allow_unsure: bool = False, documents: int = 5, name: str = "news set") -> Topic:
    corpus = CorpusFactory.create()
    make_documents(corpus, max(documents, 5))
    topic = TopicFactory.create(corpus=corpus, name=name + " " + HOSTILE, kind=Topic.Kind.MULTICLASS,
                                status=Topic.Status.ACTIVE, allow_unsure=allow_unsure,
                                instructions="Which topic? " + HOSTILE)
    TopicClass.objects.bulk_create(TopicClass(topic=topic, position=p, name=n, description=d)
                                   for p, (n, d) in enumerate(classes, start=1))
    return topic


def _hit_for(topic: Topic, username: str, *, documents: int = 5, skip: int = 0) -> tuple[Assignment, list[int]]:
    """A HIT of `documents` of the topic's documents (after the first `skip`), claimed by `username` (an annotator)."""
    doc_ids = list(topic.corpus.documents.order_by("pk").values_list("pk", flat=True)[skip:skip + documents])
    hit = Hit.objects.create(topic=topic, reward=Decimal("0.10"))
    HitItem.objects.bulk_create(HitItem(hit=hit, topic=topic, document_id=d, position=i) for i, d in enumerate(doc_ids))
    m = TopicClass.objects.filter(topic=topic).count()
    Label.objects.bulk_create(Label(topic=topic, document_id=d, class_votes=[0] * (m + 1)) for d in doc_ids)
    worker = worker_for_user(user=user_with_role(username, "annotator"))
    assignment = Assignment.objects.create(hit=hit, worker=worker, slot=0,
                                           deadline=timezone.now() + timedelta(hours=1))
    return assignment, doc_ids


def _url(assignment: Assignment) -> str:
    return reverse("annotator:assignment", args=[assignment.pk])


def _values(content: str, doc_id: int) -> list[str]:
    return re.findall(rf'name="doc-{doc_id}" value="([^"]*)"', content)


# --------------------------------------------------------------------------- server side


@pytest.mark.django_db
def test_page_offers_each_class_by_name_none_of_these_and_escapes_them(client):
    topic = _topic_set()
    assignment, docs = _hit_for(topic, "mc-reader")
    client.force_login(assignment.worker.user)
    response = client.get(_url(assignment))
    assert response.status_code == 200
    content = response.content.decode()
    # One choice per class 1..M, then "none of these"; no on/off topic, no unsure (not allowed here).
    for doc_id in docs:
        assert _values(content, doc_id) == ["c1", "c2", "c3", "c0"]
    assert "On topic" not in content and "Unsure" not in content
    assert content.count("None of these</label>") == len(docs)
    assert "<dt><kbd>0</kbd> None of these</dt>" in content  # the key to the classes, above the documents
    # Names and descriptions are text: the hostile markup arrives escaped, never as tags.
    assert HOSTILE not in content
    assert "Sport &lt;script&gt;" in content and "Games &amp; &lt;matches&gt;" in content
    assert "Elections, parliaments" in content
    form = re.search(r'<form method="post" id="hit-form"[^>]*>', content).group(0)
    assert 'data-kind="multiclass"' in form and 'data-classes="3"' in form


@pytest.mark.django_db
def test_unsure_offered_only_where_the_topic_allows_it(client):
    topic = _topic_set(allow_unsure=True)
    assignment, docs = _hit_for(topic, "mc-doubter")
    client.force_login(assignment.worker.user)
    content = client.get(_url(assignment)).content.decode()
    assert _values(content, docs[0]) == ["c1", "c2", "c3", "c0", "u"]
    assert "<kbd>u</kbd> unsure" in content


@pytest.mark.django_db
def test_binary_page_keeps_its_on_and_off_topic_choices(client):
    from annotation.services.sampling.draws import samples_launch
    from tests.factories import make_pair_world

    world = make_pair_world(n=300, prevalence=0.2, seed=3)
    samples_launch(topic=world.topic, per_region=4, seed=1)
    user = user_with_role("bin-reader", "annotator")
    client.force_login(user)
    response = client.post("/annotate/next/")
    content = client.get(response["Location"]).content.decode()
    doc_id = int(re.search(r'name="doc-(\d+)"', content).group(1))
    assert _values(content, doc_id) == ["1", "0"]
    markup = re.sub(r"<script\b.*?</script>", "", content, flags=re.S)  # the inlined script names both kinds
    assert "data-kind" not in markup and "None of these" not in markup
    assert "<kbd>j</kbd>/<kbd>1</kbd> on topic" in content


@pytest.mark.django_db
def test_submit_stores_the_chosen_classes(client):
    topic = _topic_set()
    assignment, docs = _hit_for(topic, "mc-submitter")
    client.force_login(assignment.worker.user)
    chosen = {docs[0]: 1, docs[1]: 2, docs[2]: 3, docs[3]: 0, docs[4]: 2}
    data = {f"doc-{d}": f"c{c}" for d, c in chosen.items()}
    data["then"] = "home"
    response = client.post(_url(assignment), data)
    assert response.status_code == 302, response.content.decode()[:2000]
    stored = dict(Judgment.objects.filter(assignment=assignment).values_list("document_id", "choice"))
    assert stored == chosen
    assert not Judgment.objects.filter(assignment=assignment, relevant__isnull=False).exists()
    # The submitted HIT shows the recorded classes back, read-only.
    content = client.get(_url(assignment)).content.decode()
    for doc_id, position in chosen.items():
        assert re.search(rf'name="doc-{doc_id}" value="c{position}"[^>]* checked', content), doc_id


@pytest.mark.django_db
def test_change_my_answers_shows_the_classes_and_changes_them(client):
    topic = _topic_set()
    assignment, docs = _hit_for(topic, "mc-changer")
    client.force_login(assignment.worker.user)
    data = {f"doc-{d}": "c1" for d in docs}
    data["then"] = "home"
    assert client.post(_url(assignment), data).status_code == 302
    correct = reverse("annotator:correct", args=[assignment.pk])
    content = client.get(correct).content.decode()
    assert all(re.search(rf'name="doc-{d}" value="c1"[^>]* checked', content) for d in docs)
    data[f"doc-{docs[2]}"] = "c0"
    assert client.post(correct, data).status_code == 302
    stored = dict(Judgment.objects.filter(assignment=assignment).values_list("document_id", "choice"))
    assert stored == {**dict.fromkeys(docs, 1), docs[2]: 0}


@pytest.mark.django_db
def test_a_refused_submit_shows_the_form_again_with_the_classes_chosen(client):
    topic = _topic_set()
    assignment, docs = _hit_for(topic, "mc-partial")
    client.force_login(assignment.worker.user)
    # Two documents answered, three missing: refused, nothing stored, the two choices still checked.
    response = client.post(_url(assignment), {f"doc-{docs[0]}": "c3", f"doc-{docs[1]}": "c0", "then": "home"})
    assert response.status_code == 400
    assert not Judgment.objects.filter(assignment=assignment).exists()
    content = response.content.decode()
    assert re.search(rf'name="doc-{docs[0]}" value="c3"[^>]* checked', content)
    assert re.search(rf'name="doc-{docs[1]}" value="c0"[^>]* checked', content)
    assert not re.search(rf'name="doc-{docs[2]}" value="c\d+"[^>]* checked', content)


@pytest.mark.django_db
def test_values_that_are_no_answer_are_ignored_not_a_500(client):
    topic = _topic_set()
    assignment, docs = _hit_for(topic, "mc-junk")
    client.force_login(assignment.worker.user)
    data = {f"doc-{d}": "c1" for d in docs}
    data[f"doc-{docs[0]}"] = "c123"  # three digits: not a class code
    data[f"doc-{docs[1]}"] = "cc"
    response = client.post(_url(assignment), data)
    assert response.status_code == 400  # two documents left unanswered: the form again, with the message
    assert not Judgment.objects.filter(assignment=assignment).exists()


@pytest.mark.django_db
def test_the_classes_are_read_once_not_per_document(client):
    topic = _topic_set(documents=14)
    small, _ = _hit_for(topic, "mc-small", documents=2)
    large, _ = _hit_for(topic, "mc-large", documents=12, skip=2)

    def queries(assignment: Assignment) -> int:
        client.force_login(assignment.worker.user)
        client.get(_url(assignment))  # warm the session and the content types
        with CaptureQueriesContext(connection) as captured:
            assert client.get(_url(assignment)).status_code == 200
        return len(captured)

    assert queries(small) == queries(large)


@pytest.mark.django_db
def test_the_page_links_its_cached_assets_and_binds_after_the_form(client):
    """The HIT page's CSS and script are static files served cached with hashed names (issue 30: inlining them cost
    every HIT ~27 KB), the stylesheets in the head, the one deferred script after the form it binds to."""
    topic = _topic_set()
    assignment, _ = _hit_for(topic, "mc-paint")
    client.force_login(assignment.worker.user)
    content = client.get(_url(assignment)).content.decode()
    head = content.split("</head>")[0]
    assert 'href="/static/css/app.css"' in head and 'href="/static/css/annotator.css"' in head
    assert "--accent:" not in head  # nothing inlined any more
    scripts = re.findall(r"<script[^>]*>", content)
    assert len(scripts) == 1 and 'src="/static/js/annotator.js"' in scripts[0] and "defer" in scripts[0]
    assert content.index("<script") > content.index('id="hit-form"')  # the DOM it binds to is parsed first


# --------------------------------------------------------------------------- in headless Chromium


def _checked(page) -> dict[int, str]:
    return {
        int(name[4:]): value
        for name, value in page.eval_on_selector_all(
            "#hit-form input[type=radio]:checked", "els => els.map(e => [e.name, e.value])")
    }


def _open_hit(browser, live_server, assignment: Assignment):
    from tests.factories import PASSWORD

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(15_000)
    page = context.new_page()
    page.goto(live_server.url + "/accounts/login/?next=" + _url(assignment))
    user = assignment.worker.user
    assert user is not None
    page.fill("#id_username", user.username)
    page.fill("#id_password", PASSWORD)
    page.click(".auth button[type=submit]")
    page.wait_for_selector("#hit-form")
    return context, page


def _focus_document(page, index: int) -> None:
    """Tab until the keyboard focus is inside the document at `index` (0-based)."""
    where = "document.activeElement.closest('article.document')?.dataset.index"
    for _ in range(80):
        page.keyboard.press("Tab")
        if page.evaluate(where) == str(index):
            return
    raise AssertionError(f"Tab never reached document {index + 1}")


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_keys_choose_the_class_of_the_focused_document_and_survive_a_reload(browser, live_server):
    topic = _topic_set(name="keys set")
    assignment, docs = _hit_for(topic, "mc-keys")
    context, page = _open_hit(browser, live_server, assignment)
    try:
        _focus_document(page, 2)
        assert page.locator("article.document.current").get_attribute("data-index") == "2"
        page.keyboard.press("2")  # document 3 gets class 2, not document 1
        assert _checked(page) == {docs[2]: "c2"}
        # On to document 4, focus and highlight together; 0 is "none of these" there.
        assert page.locator("article.document.current").get_attribute("data-index") == "3"
        page.keyboard.press("0")
        assert _checked(page) == {docs[2]: "c2", docs[3]: "c0"}
        page.keyboard.press("9")  # no class 9: nothing answered, nothing moves
        assert _checked(page) == {docs[2]: "c2", docs[3]: "c0"}
        assert page.inner_text("#answered").startswith("2 of 5 answered")
        # j/k mean nothing in a topic set.
        page.keyboard.press("j")
        assert len(_checked(page)) == 2
        # A reload before the submit: the answers come back from this browser's storage.
        page.reload()
        page.wait_for_selector("#hit-form")
        assert _checked(page) == {docs[2]: "c2", docs[3]: "c0"}
        assert "2 answers kept in this browser were restored" in page.inner_text("#save-status")
        assert page.inner_text("#answered").startswith("2 of 5 answered")
        # Finish by clicking the choices (44 px targets), then submit: the server stores the positions.
        for index, position in ((0, 1), (1, 3), (4, 2)):
            label = page.locator(f"article.document[data-index='{index}'] label.choice:has(input[value='c{position}'])")
            assert label.bounding_box()["height"] >= 44
            label.click()
        with page.expect_navigation():
            page.click("button[value=home]:not(.skip)")
        stored = dict(Judgment.objects.filter(assignment=assignment).values_list("document_id", "choice"))
        assert stored == {docs[0]: 1, docs[1]: 3, docs[2]: 2, docs[3]: 0, docs[4]: 2}
        assert page.evaluate("Object.keys(localStorage).filter(k => k.startsWith('recall-hit:')).length") == 0
    finally:
        context.close()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_two_digits_choose_a_class_above_nine_and_u_is_unsure(browser, live_server):
    classes = [(f"Class {i}", "") for i in range(1, 13)]  # twelve classes
    topic = _topic_set(classes=classes, allow_unsure=True, name="twelve set")
    assignment, docs = _hit_for(topic, "mc-digits")
    context, page = _open_hit(browser, live_server, assignment)
    try:
        _focus_document(page, 0)
        page.keyboard.press("1")
        page.keyboard.press("2")  # in quick succession: class 12
        assert _checked(page) == {docs[0]: "c12"}
        page.keyboard.press("1")  # alone: class 1 once no second digit follows
        for _ in range(50):
            if len(_checked(page)) == 2:
                break
            page.wait_for_timeout(50)
        assert _checked(page)[docs[1]] == "c1"
        page.keyboard.press("1")
        page.keyboard.press("9")  # 19 is no class: the 1 stands alone, the 9 answers the next document
        assert _checked(page)[docs[2]] == "c1" and _checked(page)[docs[3]] == "c9"
        page.keyboard.press("u")
        assert _checked(page) == {docs[0]: "c12", docs[1]: "c1", docs[2]: "c1", docs[3]: "c9", docs[4]: "u"}
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / "annotator-topic-set-1280.png"), full_page=True)
        # On a phone: fourteen choices per document wrap, every one a 44 px target, nothing scrolls sideways.
        page.set_viewport_size({"width": 390, "height": 844})
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        heights = page.eval_on_selector_all("#hit-form label.choice", "els => els.map(e => e.getBoundingClientRect().height)")
        assert len(heights) == 5 * 14 and min(heights) >= 44
        page.screenshot(path=str(SHOTS / "annotator-topic-set-390.png"), full_page=True)
    finally:
        context.close()


@pytest.mark.django_db
def test_the_analysts_hit_preview_of_a_topic_set_shows_the_class_choices(client):
    """The analyst's preview renders this template without the annotator view's context: it reads the classes itself."""
    topic = _topic_set()
    client.force_login(user_with_role("mc-analyst", "analyst"))
    response = client.get(reverse("analyst:topic_hit_preview", args=[topic.pk]))
    assert response.status_code == 200
    content = response.content.decode()
    doc_id = int(re.search(r'name="doc-(\d+)"', content).group(1))
    assert _values(content, doc_id) == ["c1", "c2", "c3", "c0"]
    assert "Sport &lt;script&gt;" in content and HOSTILE not in content
    head = content.split("</head>")[0]
    assert "annotator." in head and 'rel="stylesheet"' in head  # no inlined CSS here: the linked stylesheets
