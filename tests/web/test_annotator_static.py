"""The HIT page's CSS and script are static files (hashed names under the manifest storage, cached by the browser),
not inlined into every page; and the one-request cycle of issue 30: "Submit and take the next HIT" swaps the next
HIT into the page in place (no navigation), its texts placed as text, with the keyboard, the answers kept in
localStorage and the session-expiry path working on the swapped HIT as on a loaded one.

The browser tests run in headless Chromium (Debian's /usr/bin/chromium driven by Playwright); skipped without it
unless REQUIRE_BROWSER=1.
"""
from __future__ import annotations

import os
import re

import pytest
from django.core.management import call_command

from annotation.models import Assignment, ClassifierPair, HitItem, Judgment
from annotation.services.sampling.draws import samples_launch
from tests.factories import (
    HOSTILE,
    ClassifierFactory,
    CorpusFactory,
    TopicFactory,
    make_documents,
    user_with_role,
)
from tests.factories import browser_sign_in as _sign_in

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def _topic(texts: list[str] | None = None):
    """A launched topic whose HITs hold 5 documents each (15 documents: three HITs)."""
    corpus = CorpusFactory.create()
    ids = make_documents(corpus, 60, texts=texts)
    topic = TopicFactory.create(corpus=corpus, status="active", instructions="Is it about cocoa?")
    ClassifierPair.objects.create(topic=topic, c1=ClassifierFactory.create(corpus=corpus, ids=ids[:40]),
                                  c2=ClassifierFactory.create(corpus=corpus, ids=ids[20:]))
    samples_launch(topic=topic, per_region=5, seed=1)
    return topic


def _claimed(client) -> Assignment:
    client.post("/annotate/next/")
    return Assignment.objects.get(status="claimed")


# --------------------------------------------------------------------------- static files, not inlined


@pytest.mark.django_db
def test_the_hit_page_links_its_stylesheets_and_script(client):
    _topic()
    client.force_login(user_with_role("linked", "annotator"))
    assignment = _claimed(client)
    content = client.get(f"/annotate/assignments/{assignment.pk}/").content.decode()
    head = content.split("</head>")[0]
    assert "--accent:" not in content and "label.choice" not in content  # the stylesheets are not inlined
    assert re.search(r'<link rel="stylesheet" href="/static/css/app\.css">', head)
    assert re.search(r'<link rel="stylesheet" href="/static/css/annotator\.css">', head)
    scripts = re.findall(r"<script[^>]*>", content)
    assert scripts == ['<script src="/static/js/annotator.js" defer>']
    assert "gold" not in content.lower()


@pytest.mark.django_db
def test_under_the_manifest_storage_the_names_are_hashed(client, settings, tmp_path):
    settings.STATIC_ROOT = str(tmp_path)
    settings.STORAGES = {**settings.STORAGES, "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.ManifestStaticFilesStorage"}}
    call_command("collectstatic", interactive=False, verbosity=0)
    _topic()
    client.force_login(user_with_role("hashed", "annotator"))
    assignment = _claimed(client)
    content = client.get(f"/annotate/assignments/{assignment.pk}/").content.decode()
    for pattern in (r"/static/css/app\.[0-9a-f]{12}\.css", r"/static/css/annotator\.[0-9a-f]{12}\.css",
                    r"/static/js/annotator\.[0-9a-f]{12}\.js"):
        found = re.search(pattern, content)
        assert found, pattern
        assert (tmp_path / found.group(0).removeprefix("/static/")).is_file()


# --------------------------------------------------------------------------- in headless Chromium


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(15_000)
    yield context.new_page()
    context.close()


def _take_hit(page, live_server, username: str) -> Assignment:
    user_with_role(username, "annotator")
    _sign_in(page, live_server, username)
    page.click("text=Take the next HIT")
    page.wait_for_selector("#hit-form")
    return Assignment.objects.get(worker__user__username=username, status="claimed")


def _shown_docs(page) -> list[int]:
    return [int(d) for d in page.eval_on_selector_all("article.document", "els => els.map(e => e.dataset.doc)")]


def _answer_all_by_keys(page, n: int) -> None:
    for _ in range(n):
        page.keyboard.press("j")


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_submit_swaps_the_next_hit_in_place_and_it_submits_too(page, live_server):
    _topic(texts=[f"Cocoa {i} {HOSTILE}\n\nSecond paragraph {i}." for i in range(60)])
    first = _take_hit(page, live_server, "swapper")
    first_docs = list(HitItem.objects.filter(hit=first.hit).order_by("position").values_list("document_id", flat=True))
    assert _shown_docs(page) == first_docs
    page.evaluate("window.__sameDocument = true")  # survives only if the page is not reloaded
    requests: list[str] = []
    page.on("request", lambda request: requests.append(f"{request.method} {request.url}"))
    _answer_all_by_keys(page, len(first_docs))
    page.keyboard.press("Enter")
    page.wait_for_selector(f"#hit-form:not([data-assignment='{first.pk}'])", state="attached")

    second = Assignment.objects.get(worker=first.worker, status="claimed")
    assert Judgment.objects.filter(assignment=first).count() == len(first_docs)
    assert page.evaluate("window.__sameDocument") is True
    pages = [r for r in requests if "/static/" not in r]  # (the favicon may still be on its way)
    assert pages == [f"POST {live_server.url}/annotate/assignments/{first.pk}/"]  # one request per HIT
    assert page.url.endswith(f"/annotate/assignments/{second.pk}/")
    second_docs = list(HitItem.objects.filter(hit=second.hit).order_by("position").values_list("document_id", flat=True))
    assert _shown_docs(page) == second_docs
    assert page.get_attribute("#hit-form", "action") == f"/annotate/assignments/{second.pk}/"
    assert page.get_attribute("#skip", "formaction") == f"/annotate/assignments/{second.pk}/return/"
    # Texts placed as text: the hostile markup is shown, not parsed (no element made from it).
    first_card = page.locator("article.document[data-index='0']")
    assert HOSTILE in first_card.locator(".document-text p").first.inner_text()
    assert page.evaluate("document.querySelectorAll('article.document script, article.document img').length") == 0
    assert first_card.locator(".document-text p").count() == 2
    assert page.inner_text("#doc-1-title").startswith(f"Document 1 of {len(second_docs)}")
    assert page.inner_text("article.document[data-index='1'] legend").startswith(f"Document 2 of {len(second_docs)}")
    assert page.inner_text("#answered").strip().startswith(f"0 of {len(second_docs)} answered")
    assert page.inner_text("#queue").strip() == "HIT 2 of about 3 for you"
    assert "Thank you" in page.inner_text("#save-status")
    assert page.evaluate(f"localStorage.getItem('recall-hit:{first.pk}')") is None
    assert page.locator("article.document.current").get_attribute("data-index") == "0"

    # The swapped HIT: keys answer it, its answers are kept under its own key, and it submits.
    page.keyboard.press("k")
    saved = page.evaluate(f"JSON.parse(localStorage.getItem('recall-hit:{second.pk}')).answers")
    assert saved == {str(second_docs[0]): "0"}
    _answer_all_by_keys(page, len(second_docs) - 1)
    page.keyboard.press("Enter")
    page.wait_for_selector(f"#hit-form:not([data-assignment='{second.pk}'])", state="attached")
    recorded = dict(Judgment.objects.filter(assignment=second).values_list("document_id", "relevant"))
    assert recorded == {doc: i != 0 for i, doc in enumerate(second_docs)}


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_expired_session_on_a_swapped_hit_keeps_its_answers(page, live_server):
    _topic()
    first = _take_hit(page, live_server, "sleeper")
    n = HitItem.objects.filter(hit=first.hit).count()
    _answer_all_by_keys(page, n)
    page.keyboard.press("Enter")
    page.wait_for_selector(f"#hit-form:not([data-assignment='{first.pk}'])", state="attached")
    second = Assignment.objects.get(worker=first.worker, status="claimed")
    context = page.context
    kept = [c for c in context.cookies() if c["name"] != "sessionid"]
    context.clear_cookies()
    context.add_cookies(kept)
    _answer_all_by_keys(page, HitItem.objects.filter(hit=second.hit).count())
    page.keyboard.press("Enter")
    page.wait_for_selector("#submit-problem:not([hidden])")
    assert "session expired" in page.inner_text("#submit-problem")
    saved = page.evaluate(f"JSON.parse(localStorage.getItem('recall-hit:{second.pk}')).answers")
    assert len(saved) == HitItem.objects.filter(hit=second.hit).count()
    assert not Judgment.objects.filter(assignment=second).exists()
