"""Browser flows in headless Chromium (Debian's /usr/bin/chromium driven by Playwright).

One test per flow: an analyst uploads a corpus, builds a pair and launches a topic;
an annotator completes a HIT; a manager opens the report and sees numbers and plots.
Screenshots of each page go to test-artifacts/screenshots/ (gitignored).
Skipped without Chromium, unless REQUIRE_BROWSER=1, which turns the skip into a failure.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from tests.factories import browser_sign_in as _sign_in

SHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
# Playwright's sync API runs an event loop in this thread; the ORM calls made by the test are still synchronous.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]



def _shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)




def test_analyst_uploads_a_corpus_builds_a_pair_and_launches_a_topic(page, live_server, tmp_path):
    from annotation.models import Hit, Topic
    from tests.factories import user_with_role

    user_with_role("ana", "analyst")
    rows = [{"id": f"n{i}", "title": f"Oil market {i}" if i % 3 == 0 else f"Grain report {i}",
             "body": "crude prices rose" if i % 2 == 0 else "wheat harvest"} for i in range(90)]
    corpus_file = tmp_path / "news.jsonl"
    corpus_file.write_text("".join(json.dumps(r) + "\n" for r in rows))

    _sign_in(page, live_server, "ana")
    assert page.url.endswith("/analyst/")
    _shot(page, "analyst-topics-empty")
    page.goto(live_server.url + "/analyst/corpora/upload/")
    page.fill("#id_corpus_name", "Browser news")
    page.set_input_files("#id_file", str(corpus_file))
    _shot(page, "analyst-upload-form")
    page.click("text=Upload and import")
    page.wait_for_selector("text=Imported")
    _shot(page, "analyst-upload-done")
    page.click("text=Open the corpus")

    for name, term, field in (("title oil", "oil", "title"), ("body crude", "crude", "text")):
        page.click("text=New keyword filter")
        page.fill("#id_name", name)
        for box in ("title", "text"):
            page.set_checked(f"#keyword-form input[name=fields][value={box}]", box == field)
        page.fill("#id_terms", term)  # typing refreshes the preview through analyst.js
        page.wait_for_selector("#preview-count")
        page.wait_for_selector(f"#preview mark:text-is('{term.capitalize() if field == 'title' else term}')")
        _shot(page, f"analyst-keyword-preview-{term}")
        page.click("button[name=create]")
        page.wait_for_selector("text=retrieves")
        page.click("text=Browser news")

    page.goto(live_server.url + "/analyst/topics/new/")
    page.fill("#id_name", "Oil topic")
    page.fill("#id_instructions", "Is the item about the oil market?")
    from annotation.models import Classifier

    page.select_option("#id_c1", value=str(Classifier.objects.get(name="title oil").pk))
    page.select_option("#id_c2", value=str(Classifier.objects.get(name="body crude").pk))
    _shot(page, "analyst-topic-form")
    page.click("#topic-form button[type=submit]")
    page.wait_for_selector("#plan-total")
    _shot(page, "analyst-topic-plan")
    page.click("#launch")
    page.wait_for_selector("#launch-quote")  # a paid step: the cost is confirmed first (issue 12)
    _shot(page, "analyst-topic-launch-confirm")
    page.click("#confirm-launch")
    page.wait_for_selector("text=The sample is being drawn")
    _shot(page, "analyst-topic-launched")
    topic = Topic.objects.get(name="Oil topic")
    assert topic.status == Topic.Status.ACTIVE and Hit.objects.filter(topic=topic).exists()


def _launched_topic():
    from annotation.services.sampling.draws import samples_launch
    from annotation.services.topics.topic import topic_create
    from tests.factories import HOSTILE, ClassifierFactory, corpus_build

    corpus, ids = corpus_build(size=40)
    topic = topic_create(corpus=corpus, name="oil " + HOSTILE, instructions="Oil? " + HOSTILE,
                         c1=ClassifierFactory.create(corpus=corpus, name="kw", ids=ids[:20]),
                         c2=ClassifierFactory.create(corpus=corpus, name="model", ids=ids[10:30]))
    samples_launch(topic=topic, per_region=3, seed=5)
    return topic


def test_annotator_completes_a_hit(page, live_server):
    from annotation.models import Judgment
    from tests.factories import user_with_role

    topic = _launched_topic()
    user_with_role("ann", "annotator")
    _sign_in(page, live_server, "ann")
    assert page.url.endswith("/annotate/")
    _shot(page, "annotator-home")
    page.click("text=Take the next HIT")
    page.wait_for_selector("#hit-form")
    page.on("dialog", lambda dialog: dialog.accept())
    assert page.evaluate("window.__xss === undefined")
    _shot(page, "annotator-hit")
    page.set_viewport_size({"width": 390, "height": 844})  # a phone: nothing may force sideways scrolling
    assert page.evaluate("document.documentElement.scrollWidth") <= 391
    _shot(page, "annotator-hit-phone")
    page.set_viewport_size({"width": 1280, "height": 900})
    radios = page.query_selector_all("#hit-form input[type=radio][value='1']")
    assert radios
    for radio in radios:
        radio.check()
    page.click("button[value=home]")
    page.wait_for_selector("#judgments")
    _shot(page, "annotator-after-submit")
    assert Judgment.objects.filter(topic=topic, relevant=True).count() == len(radios)
    assert page.inner_text("#judgments").strip() == str(len(radios))


def test_manager_opens_the_report_and_sees_numbers_and_plots(page, live_server):
    from annotation.models import HitItem
    from annotation.services.crowd.assignments import assignment_claim, assignment_submit
    from annotation.services.crowd.workers import worker_for_user
    from tests.factories import user_with_role

    topic = _launched_topic()
    for i in range(3):
        worker = worker_for_user(user=user_with_role(f"w{i}", "annotator"))
        while (assignment := assignment_claim(worker=worker, topic=topic)) is not None:
            docs = HitItem.objects.filter(hit_id=assignment.hit_id).values_list("document_id", flat=True)
            assignment_submit(assignment_id=assignment.pk, worker=worker, answers={d: d % 2 == 0 for d in docs})
    user_with_role("max", "manager")
    alerts = []
    page.on("dialog", lambda dialog: (alerts.append(dialog.message), dialog.dismiss()))
    _sign_in(page, live_server, "max")
    assert page.url.endswith("/reports/")
    _shot(page, "manager-overview")
    page.click(f"a[href='/reports/topics/{topic.pk}/']")
    page.wait_for_selector("#classifiers")
    _shot(page, "manager-report")
    assert re.search(r"\d\.\d{3}", page.inner_text("#classifiers"))
    for plot in ("plot-pr", "plot-history", "plot-venn", "plot-posterior"):
        box = page.locator(f"#{plot} svg").bounding_box()
        assert box and box["width"] > 200 and box["height"] > 100
    assert page.locator("#plot-pr svg circle").count() == 2
    page.hover("#classifiers")  # attribute injection would fire onmouseover here
    page.click("text=Printable")
    page.wait_for_selector("text=Recall report:")
    page.emulate_media(media="print")
    assert not page.locator(".topbar").is_visible()
    _shot(page, "manager-report-print")
    assert alerts == []
