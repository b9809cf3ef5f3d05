"""Browser checks (Debian's chromium via Playwright) for issue 12 items 5 and 11.

The analyst's Launch goes through the confirmation page (cost shown, nothing drawn until Confirm);
the 403 and 404 pages are styled with a way back. Screenshots at 1280 and 390 px go to
test-artifacts/screenshots/; neither page scrolls sideways at 390 px.
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




def test_launch_shows_the_cost_and_draws_only_on_confirm(page, live_server):
    from annotation.models import Hit, SampledDocument, Topic
    from annotation.services.topics.topic import topic_create
    from tests.factories import ClassifierFactory, corpus_build, user_with_role

    corpus, ids = corpus_build(size=300)
    topic = topic_create(corpus=corpus, name="Oil", instructions="Oil?",
                         c1=ClassifierFactory.create(corpus=corpus, name="kw", ids=ids[:150]),
                         c2=ClassifierFactory.create(corpus=corpus, name="model", ids=ids[100:250]))
    Topic.objects.filter(pk=topic.pk).update(budget=50)
    user_with_role("ana", "analyst")
    _sign_in(page, live_server, "ana")
    page.goto(f"{live_server.url}/analyst/topics/{topic.pk}/?half_width=0.3")
    page.click("#launch")
    page.wait_for_selector("#launch-quote")
    assert "$" in page.inner_text("#quote-cost") and "would remain" in page.inner_text("#quote-budget")
    assert not SampledDocument.objects.filter(topic=topic).exists()
    _shots(page, "analyst-launch-confirm")
    page.click("#confirm-launch")
    page.wait_for_selector("text=The sample is being drawn")
    topic.refresh_from_db()
    assert topic.status == Topic.Status.ACTIVE and Hit.objects.filter(topic=topic).exists()


def test_error_pages_are_styled_with_a_way_back(page, live_server):
    from tests.factories import user_with_role

    user_with_role("mgr", "manager")
    _sign_in(page, live_server, "mgr")
    page.goto(live_server.url + "/reports/")
    with page.expect_navigation():
        page.evaluate("location.href = '/analyst/'")  # a manager may not configure topics; the referer is /reports/
    assert page.inner_text("h1").startswith("Not allowed")
    assert page.get_attribute("#error-back", "href") == live_server.url + "/reports/"
    _shots(page, "error-403")
    response = page.goto(live_server.url + "/no/such/page/")
    assert response is not None and response.status == 404 and page.inner_text("h1").startswith("Page not found")
    _shots(page, "error-404")
    page.click("#error-home")
    page.wait_for_load_state()
    assert page.url.rstrip("/") == live_server.url or page.url.startswith(live_server.url + "/reports")
