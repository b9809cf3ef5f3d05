"""Browser check (Debian's chromium via Playwright) for issue 12 item 6: an analyst archives a classifier
after a confirmation page, then creates a topic whose form offers only the chosen corpus's (unarchived)
classifiers. Screenshots at 1280 and 390 px go to test-artifacts/screenshots/; no page scrolls sideways."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.factories import browser_sign_in as _sign_in

SHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
WIDTHS = (1280, 390)



def _shots(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(SHOTS / f"{name}-{width}.png"), full_page=True)
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, f"{name} scrolls sideways by {overflow}px at {width}px"
    page.set_viewport_size({"width": 1280, "height": 900})




def test_archive_a_classifier_then_create_a_topic_from_the_corpus_classifiers(page, live_server):
    from annotation.models import Classifier, Topic
    from tests.factories import ClassifierFactory, corpus_build, user_with_role

    corpus, ids = corpus_build(name="Wire news", size=80)
    kw = ClassifierFactory.create(corpus=corpus, name="title keywords", ids=ids[:40])
    model = ClassifierFactory.create(corpus=corpus, name="model", ids=ids[20:60])
    old = ClassifierFactory.create(corpus=corpus, name="old filter", ids=ids[10:30])
    other, other_ids = corpus_build(name="Other corpus", size=10)
    foreign = ClassifierFactory.create(corpus=other, name="foreign filter", ids=other_ids[:5])
    user_with_role("ana", "analyst")
    _sign_in(page, live_server, "ana")

    page.goto(f"{live_server.url}/analyst/classifiers/{old.pk}/")
    page.click("#classifier-archive")
    page.wait_for_selector("#confirm-archive")
    old.refresh_from_db()
    assert old.archived_at is None  # the confirmation page changed nothing
    _shots(page, "analyst-classifier-archive-confirm")
    page.click("#confirm-archive")
    page.wait_for_selector("#archived-notice")
    assert Classifier.objects.get(pk=old.pk).archived_at is not None

    page.goto(f"{live_server.url}/analyst/classifiers/")
    assert "old filter" not in page.inner_text("main") and "title keywords" in page.inner_text("main")
    page.check("#id_archived")  # analyst.js applies the toggle at once
    page.wait_for_url("**archived=on**")
    assert "old filter" in page.inner_text("#classifiers-table")
    _shots(page, "analyst-classifier-list")

    page.goto(f"{live_server.url}/analyst/topics/new/")
    page.select_option("#id_corpus", value=str(corpus.pk))
    _shots(page, "analyst-topic-new-corpus")
    page.click("#topic-corpus-next")
    page.wait_for_selector("#topic-form")
    offered = set(page.eval_on_selector_all("#id_c1 option", "els => els.map(e => e.value).filter(Boolean)"))
    assert offered == {str(kw.pk), str(model.pk)}  # neither the archived one nor another corpus's
    assert str(foreign.pk) not in offered and str(old.pk) not in offered
    page.fill("#id_name", "Oil")
    page.fill("#id_instructions", "Is the item about the oil market?")
    page.select_option("#id_c1", value=str(kw.pk))
    page.select_option("#id_c2", value=str(model.pk))
    _shots(page, "analyst-topic-new-form")
    page.click("#topic-form button[type=submit]")
    page.wait_for_selector("#plan")
    topic = Topic.objects.get(name="Oil")
    assert topic.corpus == corpus and topic.pair.c1 == kw and topic.pair.c2 == model
    assert "Select a valid choice" not in page.content()
