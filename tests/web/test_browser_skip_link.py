"""The skip link in a browser (issue "the friction a new analyst, manager and pipeline engineer still meet", item 4):
hidden until the first Tab, then visible; following it moves the focus into the main content. And the checkbox
sits before its label on screen. Needs /usr/bin/chromium (see tests/conftest.py)."""
from __future__ import annotations

import os

import pytest

from tests.factories import browser_sign_in as _sign_in

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]





def test_the_first_tab_shows_the_skip_link_and_it_moves_the_focus_to_main(page, live_server):
    from tests.factories import user_with_role

    user_with_role("ana", "analyst")
    _sign_in(page, live_server, "ana")
    page.goto(live_server.url + "/analyst/")
    link = page.locator("a.skip-link")
    assert link.bounding_box()["x"] < 0, "off-screen until focused"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip-link"
    box = link.bounding_box()
    assert box["x"] >= 0 and box["y"] >= 0 and box["width"] > 20, "visible once focused"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "content"
    assert page.evaluate("document.activeElement.tagName") == "MAIN"


def test_a_checkbox_sits_left_of_its_label_on_the_same_line(page, live_server):
    from annotation.models import ClassifierPair, Topic
    from tests.factories import ClassifierFactory, corpus_build, user_with_role

    user_with_role("ana", "analyst")
    corpus, ids = corpus_build(size=20)
    topic = Topic.objects.create(corpus=corpus, name="Oil", instructions="Oil?")
    ClassifierPair.objects.create(topic=topic, c1=ClassifierFactory.create(corpus=corpus, ids=ids[:10]),
                                  c2=ClassifierFactory.create(corpus=corpus, ids=ids[5:15]))
    _sign_in(page, live_server, "ana")
    page.goto(f"{live_server.url}/analyst/topics/{topic.pk}/edit/")
    box = page.locator("#id_allow_unsure").bounding_box()
    words = page.locator("#field-allow_unsure label span").bounding_box()
    assert box["x"] + box["width"] <= words["x"], "the box comes first"
    assert abs((box["y"] + box["height"] / 2) - (words["y"] + words["height"] / 2)) < 8, "on one line"
    page.click("#field-allow_unsure label span")  # the words tick the box
    assert page.is_checked("#id_allow_unsure")
