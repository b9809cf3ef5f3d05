"""Browser check (Debian's chromium via Playwright) for issue 13 item 1: an analyst creates a topic set through
the pages, uploads a router's predictions and launches the sample through the priced confirmation.

Screenshots at 1280 and 390 px go to test-artifacts/screenshots/; no page scrolls sideways at 390 px.
"""
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
    """Screenshots at both widths; the page must not scroll sideways at 390 px."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(SHOTS / f"{name}-{width}.png"), full_page=True)
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, f"{name} scrolls sideways by {overflow}px at {width}px"
    page.set_viewport_size({"width": 1280, "height": 900})




def test_create_a_topic_set_upload_a_router_and_confirm_the_launch(page, live_server, tmp_path):
    from annotation.models import Hit, Router, SampledDocument, Topic
    from tests.factories import corpus_build, user_with_role

    corpus, _ = corpus_build(name="news", size=60)
    user_with_role("ana", "analyst")
    _sign_in(page, live_server, "ana")

    # From the topics list to the form; a first try with one class is refused with a clear message.
    page.goto(live_server.url + "/analyst/")
    page.click("#new-topic-set")
    page.fill("#id_name", "Commodities")
    page.fill("#id_classes", "Oil: crude and petrol")
    page.click("#create-topic-set")
    page.wait_for_selector("#field-classes.has-error")
    assert "List at least 2 classes" in page.inner_text("#field-classes")
    assert not Topic.objects.filter(name="Commodities").exists()
    page.fill("#id_classes", "Oil: crude and petrol\nWheat: grain harvests")
    page.fill("#id_budget", "5")
    _shots(page, "analyst-topic-set-new")
    page.click("#create-topic-set")
    page.wait_for_selector("#classes-table")
    topic = Topic.objects.get(name="Commodities")
    assert topic.is_multiclass and "Wheat" in page.inner_text("#classes-table")
    _shots(page, "analyst-topic-set-detail")

    # A router file with a bad line: its build fails and its page names the line; the corrected file is stored.
    page.click("#router-upload")
    bad = tmp_path / "bad.csv"
    bad.write_text("id,class\nd0,Oil\nd1,Barley\n")
    page.fill("#id_name", "production model")
    page.set_input_files("#id_file", str(bad))
    page.click("#upload-router")
    page.wait_for_selector("#bad-lines")
    assert "3" in page.inner_text("#bad-lines tbody td.num") and "Barley" in page.inner_text("#bad-lines")
    _shots(page, "analyst-router-upload-errors")
    page.click("#start-again")
    page.wait_for_selector("#upload-router")
    good = tmp_path / "good.csv"
    good.write_text("id,class\nd0,Oil\nd1,Wheat\nd2,wheat\n")
    page.fill("#id_name", "production model")
    page.set_input_files("#id_file", str(good))
    page.click("#upload-router")
    page.wait_for_selector("#router-counts")
    assert Router.objects.get(topic=topic).predicted_counts == [57, 1, 2]

    # The launch asks first, with the cost and the budget; nothing is drawn until Confirm.
    page.goto(f"{live_server.url}/analyst/topic-sets/{topic.pk}/")
    page.fill("#id_documents", "20")
    page.click("#launch")
    page.wait_for_selector("#launch-quote")
    assert page.inner_text("#quote-cost").startswith("$1.20")
    assert "$5.00" in page.inner_text("#quote-budget") and "$3.80 after it" in page.inner_text("#quote-budget")
    assert not SampledDocument.objects.filter(topic=topic).exists()
    _shots(page, "analyst-topic-set-launch-confirm")
    page.click("#confirm-launch")
    page.wait_for_selector("#sample-drawn")
    assert page.inner_text("#sample-drawn").startswith("20 documents")
    assert SampledDocument.objects.filter(topic=topic).count() == 20 and Hit.objects.filter(topic=topic).count() == 4

    # The keyword router's page explains the precedence and fits a phone.
    page.click("#router-keywords")
    page.wait_for_selector("#rules-table")
    assert "first matching rule wins" in page.inner_text("#precedence-help")
    _shots(page, "analyst-router-keywords")
