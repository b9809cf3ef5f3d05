"""Issue 26 item 4 at 390 px (Chromium): the header is one row with a Menu disclosure (≤ 15% of the screen on
the HIT page and elsewhere), the menu opens on the same links, and the API tokens table shows Revoke without
scrolling sideways. Before: the header wrapped to three rows and the tokens table was 506 px wide."""
from __future__ import annotations

import os

import pytest

from tests.factories import HOSTILE, ClassifierFactory, browser_sign_in, corpus_build, user_with_role

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}


@pytest.fixture
def phone(browser):
    context = browser.new_context(viewport=PHONE)
    context.set_default_timeout(15_000)
    yield context.new_page()
    context.close()


def _header_height(page) -> float:
    return page.evaluate("document.querySelector('header.topbar').getBoundingClientRect().height")


def test_header_is_one_row_on_a_phone_and_the_menu_holds_the_links(phone, live_server):
    from annotation.services.sampling.draws import samples_launch
    from annotation.services.topics.topic import topic_create

    corpus, ids = corpus_build()
    c1 = ClassifierFactory.create(corpus=corpus, name="kw " + HOSTILE, ids=ids[0:30])
    c2 = ClassifierFactory.create(corpus=corpus, name="model", ids=ids[15:45])
    topic = topic_create(corpus=corpus, name="oil", c1=c1, c2=c2, instructions="Oil?")
    samples_launch(topic=topic, per_region=5, seed=7)
    user = user_with_role("ann", "annotator")
    user.groups.add(*user_with_role("max", "manager").groups.all())  # many links: the worst case for the header
    browser_sign_in(phone, live_server, "ann")
    phone.goto(live_server.url + "/annotate/")
    with phone.expect_navigation():
        phone.click("text=Take the next HIT")
    assert "/annotate/assignments/" in phone.url
    hit_header = _header_height(phone)
    assert hit_header <= 0.15 * PHONE["height"], f"header {hit_header}px on the HIT page"
    phone.goto(live_server.url + "/reports/")
    header = _header_height(phone)
    assert header <= 0.15 * PHONE["height"], f"header {header}px"
    assert not phone.is_visible("nav.topbar-wide")
    menu = phone.locator("details.navmenu")
    assert menu.is_visible() and not phone.is_visible("details.navmenu a[href='/webhooks/']")
    phone.click("details.navmenu > summary")
    assert phone.is_visible("details.navmenu a[href='/webhooks/']")
    assert phone.is_visible("details.navmenu button:has-text('Sign out')")
    assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    print(f"header at 390 px: {hit_header:.0f}px on the HIT page, {header:.0f}px on /reports/")


def test_tokens_table_fits_a_phone_with_revoke_in_view(phone, live_server):
    user_with_role("max", "manager")
    browser_sign_in(phone, live_server, "max")
    phone.goto(live_server.url + "/account/tokens/")
    phone.fill("#token-name", "nightly pipeline with a long name")
    with phone.expect_navigation():
        phone.click("button:has-text('Create token')")
    revoke = phone.locator("table button:has-text('Revoke')").first
    box = revoke.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], box
    table = phone.evaluate("document.querySelector('table.tokens').getBoundingClientRect().width")
    assert table <= PHONE["width"], f"tokens table {table}px wide"
    assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
