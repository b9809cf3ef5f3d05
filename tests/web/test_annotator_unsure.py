"""In headless Chromium: answer "unsure" by keyboard, then change the submitted answers (issue 12).

Skipped without Chromium, unless REQUIRE_BROWSER=1, which turns the skip into a failure.
Screenshots go to var/artifacts/screenshots/ (git-ignored).
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

SHOTS = Path(__file__).resolve().parents[2] / "var" / "artifacts" / "screenshots"
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]



def _checked(page) -> dict[int, str]:
    return {
        int(name[4:]): value
        for name, value in page.eval_on_selector_all(
            "#hit-form input[type=radio]:checked", "els => els.map(e => [e.name, e.value])")
    }


def test_unsure_by_keyboard_then_change_my_answers(page, live_server):
    from annotation.models import Assignment, ClassifierPair, HitItem, Judgment
    from annotation.services.sampling.draws import samples_launch
    from tests.factories import (
        PASSWORD,
        ClassifierFactory,
        CorpusFactory,
        TopicFactory,
        make_documents,
        user_with_role,
    )

    corpus = CorpusFactory.create()
    ids = make_documents(corpus, 60)
    topic = TopicFactory.create(corpus=corpus, status="active", instructions="Is it about cocoa?", allow_unsure=True)
    ClassifierPair.objects.create(topic=topic, c1=ClassifierFactory.create(corpus=corpus, ids=ids[:40]),
                                  c2=ClassifierFactory.create(corpus=corpus, ids=ids[20:]))
    samples_launch(topic=topic, per_region=5, seed=1)  # HITs of 5 documents
    user_with_role("doubter", "annotator")

    page.goto(live_server.url + "/accounts/login/")
    page.fill("#id_username", "doubter")
    page.fill("#id_password", PASSWORD)
    page.click(".auth button[type=submit]")
    page.click("text=Take the next HIT")
    page.wait_for_selector("#hit-form")
    assignment = Assignment.objects.get(worker__user__username="doubter", status="claimed")
    docs = list(HitItem.objects.filter(hit=assignment.hit).order_by("position").values_list("document_id", flat=True))
    assert "unsure" in page.inner_text(".keys")  # the key is shown on the page

    # u answers the highlighted document "unsure" and moves on; 2 is the other unsure key.
    for key in ("u", "j", "k", "2", "j"):
        page.keyboard.press(key)
    assert _checked(page) == dict(zip(docs, ["u", "1", "0", "u", "1"], strict=True))
    with page.expect_navigation():
        page.keyboard.press("Enter")  # all answered: submit and take the next HIT
    recorded = dict(Judgment.objects.filter(assignment=assignment).values_list("document_id", "relevant"))
    assert recorded == dict(zip(docs, [None, True, False, None, True], strict=True))

    # The annotator home offers "Change my answers" while the other workers have not finished.
    page.goto(live_server.url + "/annotate/")
    page.click(f"#correctable a[href$='/assignments/{assignment.pk}/correct/']")
    page.wait_for_selector("#save-changes")
    assert _checked(page) == dict(zip(docs, ["u", "1", "0", "u", "1"], strict=True))  # the recorded answers
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "annotator-change-my-answers.png"), full_page=True)
    page.keyboard.press("j")  # the first document (highlighted): now on topic
    assert _checked(page)[docs[0]] == "1"
    with page.expect_navigation():
        page.click("#save-changes")
    assert page.url.endswith("/annotate/")
    assert "Your answers were changed (1 changed)" in page.inner_text("body")
    recorded = dict(Judgment.objects.filter(assignment=assignment).values_list("document_id", "relevant"))
    assert recorded == dict(zip(docs, [True, True, False, None, True], strict=True))
