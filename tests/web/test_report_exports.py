"""Browser check (Debian's chromium via Playwright) for issue 12 items 8 and 9: a manager reads the headline of the
report and downloads the raw judgments. Screenshots at 1280 and 390 px go to test-artifacts/screenshots/; the
report does not scroll sideways at 390 px."""
from __future__ import annotations

import csv
import io
import os
from pathlib import Path

import pytest

SHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    context.set_default_timeout(15_000)
    yield context.new_page()
    context.close()


def test_manager_reads_the_headline_and_downloads_the_raw_judgments(page, live_server, world):
    from annotation.models import Judgment
    from estimation.models import EstimateSnapshot
    from estimation.templatetags.report_extras import recall_headline
    from tests.factories import PASSWORD

    topic = world["topic"]
    page.goto(live_server.url + "/accounts/login/")
    page.fill("#id_username", "max")
    page.fill("#id_password", PASSWORD)
    page.click(".auth button[type=submit]")
    page.wait_for_load_state()
    page.goto(f"{live_server.url}/reports/topics/{topic.pk}/")

    report = EstimateSnapshot.objects.filter(topic=topic).latest("version").report
    # The headline's figure (schema 3: design-based or the dependence band), its basis and statement beside it.
    shown = page.locator("#headlines li .headline-text").all_inner_texts()
    expected = [recall_headline(name=row["name"], recall=row["headline"], target=topic.target_recall,
                                confidence=topic.confidence)["text"] for row in report["classifiers"]]
    assert shown == expected
    assert page.locator("#headlines li .headline-basis").count() == len(report["classifiers"])
    assert any(("below the target" in text or "meets the target" in text or "straddles the target" in text)
               for text in shown)
    # The glossary link from the headline lands on its entry.
    page.click("#headlines a[href='#glossary-target']")
    assert page.evaluate("location.hash") == "#glossary-target"

    SHOTS.mkdir(parents=True, exist_ok=True)
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.screenshot(path=str(SHOTS / f"report-headline-{width}.png"), full_page=True)
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, f"the report scrolls sideways by {overflow}px at {width}px"
    page.set_viewport_size({"width": 1280, "height": 900})

    with page.expect_download() as info:
        page.click("#export-judgments-csv")
    download = info.value
    assert download.suggested_filename.endswith("-judgments.csv")
    text = Path(download.path()).read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == Judgment.objects.filter(topic=topic).count() > 0
    assert {"HITId", "AssignmentId", "WorkerId", "SubmitTime", "Answer.relevance", "Input.document_id"} <= set(rows[0])
    assert {row["Answer.relevance"] for row in rows} <= {"relevant", "not relevant", "unsure"}
