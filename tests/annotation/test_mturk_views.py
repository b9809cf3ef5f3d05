"""The external HIT page MTurk frames: preview, accept, submit, hand back — and its defences."""
import re
from decimal import Decimal
from urllib.parse import urlencode

import pytest
from django.test import Client

from annotation.models import Assignment, Hit, HitItem, Judgment, Label, Topic, Worker
from tests.factories import DocumentFactory, TopicFactory

pytestmark = pytest.mark.django_db

MTURK_HIT_ID = "3Z8UJEJOCZEG603II1EL4BE2QUB93V"
ASSIGNMENT = "3AAAAAAAAAAAAAAAAAAAAAAAAAAAA1"
WORKER = "A1WORKER0000001"
SANDBOX_WORKER_SITE = "https://workersandbox.mturk.com"
HOSTILE = "<script>alert('x')</script>"


@pytest.fixture
def hit() -> Hit:
    topic = TopicFactory.create(
        crowd=Topic.Crowd.MTURK,
        status=Topic.Status.ACTIVE,
        reward_per_hit=Decimal("0.05"),
        instructions=f"Relevant: gold mining. {HOSTILE}",
    )
    hit = Hit.objects.create(topic=topic, reward=topic.reward_per_hit, external_id=MTURK_HIT_ID)
    documents = [
        DocumentFactory.create(corpus=topic.corpus, title="<img src=x onerror=alert(1)>", text=f"Gold prices {HOSTILE}"),
        DocumentFactory.create(corpus=topic.corpus, title="Second", text="Nothing to see & more"),
    ]
    for position, document in enumerate(documents):
        HitItem.objects.create(hit=hit, topic=topic, document=document, position=position)
        Label.objects.create(topic=topic, document=document)
    return hit


def _url(hit: Hit, **params) -> str:
    defaults = {"assignmentId": ASSIGNMENT, "hitId": MTURK_HIT_ID, "workerId": WORKER, "turkSubmitTo": SANDBOX_WORKER_SITE}
    return f"/mturk/hit/{hit.pk}/?" + urlencode({**defaults, **params})


def _token(response) -> str:
    found = re.search(r'name="token" value="([^"]+)"', response.content.decode())
    assert found is not None, "the page carries no token field"
    return found.group(1)


def _answers(hit: Hit, relevant=(True, False)) -> dict:
    doc_ids = HitItem.objects.filter(hit=hit).order_by("position").values_list("document_id", flat=True)
    return {f"doc-{doc_id}": "1" if value else "0" for doc_id, value in zip(doc_ids, relevant, strict=True)}


def _post(client: Client, hit: Hit, token: str, **overrides):
    data = {
        "assignmentId": ASSIGNMENT,
        "hitId": MTURK_HIT_ID,
        "workerId": WORKER,
        "turkSubmitTo": SANDBOX_WORKER_SITE,
        "token": token,
        **_answers(hit),
    }
    data.update(overrides)
    return client.post(f"/mturk/hit/{hit.pk}/", data)


def _accept(client: Client, hit: Hit) -> str:
    response = client.get(_url(hit))
    assert response.status_code == 200
    return _token(response)


def test_preview_shows_instructions_and_documents_without_a_form(client, hit):
    response = client.get(_url(hit, assignmentId="ASSIGNMENT_ID_NOT_AVAILABLE"))
    body = response.content.decode()
    assert response.status_code == 200
    assert "Relevant: gold mining." in body and "Gold prices" in body and "Second" in body
    assert "<form" not in body
    assert not Worker.objects.exists() and not Assignment.objects.exists()


def _policy(response) -> dict[str, str]:
    parts = [part.strip().split(" ", 1) for part in response.headers["Content-Security-Policy"].split(";")]
    return {part[0]: part[1] if len(part) > 1 else "" for part in parts if part[0]}


def test_page_may_be_framed_by_mturk_only(client, hit):
    # Issue 15: the page now carries the site-wide policy, with MTurk's two directives replaced.
    for response in (client.get(_url(hit, assignmentId="ASSIGNMENT_ID_NOT_AVAILABLE")), client.get(_url(hit)),
                     client.get(_url(hit, turkSubmitTo="https://evil.example.com"))):
        assert "X-Frame-Options" not in response.headers
        policy = _policy(response)
        assert policy["frame-ancestors"] == "'self' https://www.mturk.com https://workersandbox.mturk.com"
        assert policy["form-action"] == "'self' https://www.mturk.com https://workersandbox.mturk.com"
        assert policy["default-src"] == "'self'" and policy["object-src"] == "'none'"
        assert policy["script-src"] == "'self'"  # no inline script on the preview, the form or a refusal


def test_the_hand_back_script_runs_by_its_nonce_only(client, hit):
    response = _post(client, hit, _accept(client, hit))
    nonce = re.search(r'<script nonce="([^"]+)">', response.content.decode())
    assert nonce is not None
    assert _policy(response)["script-src"] == f"'self' 'nonce-{nonce.group(1)}'"
    assert "'unsafe-inline'" not in _policy(response)["script-src"]


def test_hostile_text_is_escaped(client, hit):
    for response in (client.get(_url(hit, assignmentId="ASSIGNMENT_ID_NOT_AVAILABLE")), client.get(_url(hit))):
        body = response.content.decode()
        assert HOSTILE not in body and "<img src=x" not in body
        assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in body
        assert "&lt;img src=x onerror=alert(1)&gt;" in body
        assert "Nothing to see &amp; more" in body


def test_accepting_records_the_mturk_worker_and_assignment_and_shows_the_form(client, hit):
    response = client.get(_url(hit))
    body = response.content.decode()
    assert response.status_code == 200
    assert '<form method="post" id="hit-form">' in body
    worker = Worker.objects.get(platform="mturk", external_id=WORKER)
    assignment = Assignment.objects.get(external_id=ASSIGNMENT)
    assert (assignment.hit_id, assignment.worker_id, assignment.status) == (hit.pk, worker.pk, "claimed")
    # A reload keeps the same assignment.
    client.get(_url(hit))
    assert Assignment.objects.count() == 1


def test_submit_records_judgments_and_hands_back_to_mturk(client, hit):
    token = _accept(client, hit)
    response = _post(client, hit, token)
    body = response.content.decode()
    assert response.status_code == 200
    assert 'action="https://workersandbox.mturk.com/mturk/externalSubmit"' in body
    assert f'name="assignmentId" value="{ASSIGNMENT}"' in body
    assert 'name="judgments" value="2"' in body and 'name="relevant" value="1"' in body
    assert 'document.getElementById("mturk-handback").submit()' in body
    # Issue 15: stored as provisional answers; they count once reconcile confirms the assignment
    # with MTurk (tests/annotation/test_mturk.py follows the rest of the way).
    assignment = Assignment.objects.get(external_id=ASSIGNMENT)
    first, second = HitItem.objects.filter(hit=hit).order_by("position").values_list("document_id", flat=True)
    assert assignment.provisional_answers == {str(first): True, str(second): False}
    assert assignment.status == "claimed" and assignment.submitted_at is not None
    assert not Judgment.objects.exists()
    assert Label.objects.get(topic=hit.topic, document_id=first).votes_total == 0


def test_three_forged_assignment_and_worker_ids_decide_no_label(client):
    """Issue 15 item 3: knowing only a HIT's MTurk id, three invented assignmentId/workerId pairs
    submitted through the page were accepted, added 15 judgments and decided 5 labels."""
    topic = TopicFactory.create(crowd=Topic.Crowd.MTURK, status=Topic.Status.ACTIVE, reward_per_hit=Decimal("0.05"))
    five = Hit.objects.create(topic=topic, reward=topic.reward_per_hit, external_id=MTURK_HIT_ID)
    for position in range(5):
        document = DocumentFactory.create(corpus=topic.corpus)
        HitItem.objects.create(hit=five, topic=topic, document=document, position=position)
        Label.objects.create(topic=topic, document=document)
    doc_ids = list(HitItem.objects.filter(hit=five).order_by("position").values_list("document_id", flat=True))
    for n in range(3):
        forged = {"assignmentId": f"3FORGEDASSIGNMENT{n}", "workerId": f"AFORGEDWORKER{n}"}
        page = client.get(_url(five, **forged))
        assert page.status_code == 200  # the page alone cannot tell a forged id from a real one
        response = client.post(f"/mturk/hit/{five.pk}/", {
            "hitId": MTURK_HIT_ID, "turkSubmitTo": SANDBOX_WORKER_SITE, "token": _token(page), **forged,
            **{f"doc-{doc_id}": "1" for doc_id in doc_ids},
        })
        assert response.status_code == 200
        assert "waiting for Mechanical Turk to confirm" in response.content.decode()
    assert Judgment.objects.count() == 0
    assert sorted(Label.objects.values_list("votes_total", "majority")) == [(0, None)] * 5
    five.refresh_from_db()
    assert (five.completed_assignments, five.status) == (0, Hit.Status.OPEN)
    # Nothing typed is lost: each answer is stored, provisional, until MTurk confirms it.
    stored = Assignment.objects.filter(hit=five).order_by("pk")
    assert [a.provisional_answers for a in stored] == [{str(d): True for d in doc_ids}] * 3
    assert {a.status for a in stored} == {Assignment.Status.CLAIMED}


def test_production_workers_are_handed_back_to_www_mturk_com(client, hit):
    response = client.get(_url(hit, turkSubmitTo="https://www.mturk.com"))
    response = _post(client, hit, _token(response), turkSubmitTo="https://www.mturk.com")
    assert 'action="https://www.mturk.com/mturk/externalSubmit"' in response.content.decode()


def test_double_submit_is_idempotent(client, hit):
    token = _accept(client, hit)
    first = _post(client, hit, token)
    second = _post(client, hit, token, **dict.fromkeys(_answers(hit), "0"))  # a changed replay changes nothing
    assert second.status_code == 200
    assert 'action="https://workersandbox.mturk.com/mturk/externalSubmit"' in second.content.decode()
    assert 'name="judgments" value="2"' in second.content.decode() and 'name="relevant" value="1"' in second.content.decode()
    stored = Assignment.objects.get(external_id=ASSIGNMENT).provisional_answers
    assert stored is not None and sorted(stored.values()) == [False, True]  # the first answers, unchanged
    assert not Judgment.objects.exists()
    assert first.status_code == 200
    # Reloading the HIT page after submitting offers the hand-back again instead of a new form.
    reload = client.get(_url(hit))
    assert 'id="mturk-handback"' in reload.content.decode()


@pytest.mark.parametrize(
    "submit_to",
    [
        "https://evil.example.com",
        "https://www.mturk.com.evil.example.com",
        "https://www.mturk.com@evil.example.com",
        "http://www.mturk.com",
        "//www.mturk.com",
        "javascript:alert(1)",
        "",
    ],
)
def test_hostile_turk_submit_to_is_refused(client, hit, submit_to):
    response = client.get(_url(hit, turkSubmitTo=submit_to))
    assert response.status_code == 400
    assert "externalSubmit" not in response.content.decode()
    assert not Assignment.objects.exists()


def test_hostile_turk_submit_to_is_refused_on_submit_too(client, hit):
    token = _accept(client, hit)
    response = _post(client, hit, token, turkSubmitTo="https://evil.example.com")
    assert response.status_code == 400
    assert not Judgment.objects.exists()


def test_another_worker_cannot_submit_for_the_assignment(client, hit):
    token = _accept(client, hit)
    response = _post(client, hit, token, workerId="A9INTRUDER00001")
    assert response.status_code == 403
    assert not Judgment.objects.exists()


def test_a_forged_or_missing_token_is_refused(client, hit):
    _accept(client, hit)
    assert _post(client, hit, "forged").status_code == 403
    assert _post(client, hit, "").status_code == 403
    assert not Judgment.objects.exists()


def test_a_cross_site_post_is_refused(client, hit):
    token = _accept(client, hit)
    data = {"assignmentId": ASSIGNMENT, "hitId": MTURK_HIT_ID, "workerId": WORKER,
            "turkSubmitTo": SANDBOX_WORKER_SITE, "token": token, **_answers(hit)}
    response = client.post(f"/mturk/hit/{hit.pk}/", data, headers={"Origin": "https://evil.example.com"})
    assert response.status_code == 403
    assert not Judgment.objects.exists()
    same_site = client.post(f"/mturk/hit/{hit.pk}/", data, headers={"Origin": "http://testserver"})
    assert same_site.status_code == 200


def test_the_public_base_url_counts_as_our_origin_behind_a_proxy(client, hit, settings):
    settings.MTURK_EXTERNAL_BASE_URL = "https://recall.example.org"
    token = _accept(client, hit)
    data = {"assignmentId": ASSIGNMENT, "hitId": MTURK_HIT_ID, "workerId": WORKER,
            "turkSubmitTo": SANDBOX_WORKER_SITE, "token": token, **_answers(hit)}
    response = client.post(f"/mturk/hit/{hit.pk}/", data, headers={"Origin": "https://recall.example.org"})
    assert response.status_code == 200


def test_the_post_works_with_django_csrf_checks_enforced(hit):
    """The view replaces the cookie-based check (module docstring); it must not 403 an honest worker."""
    client = Client(enforce_csrf_checks=True)
    token = _accept(client, hit)
    assert _post(client, hit, token).status_code == 200


def test_a_missing_answer_shows_the_form_again_and_records_nothing(client, hit):
    token = _accept(client, hit)
    answers = _answers(hit)
    first_key = next(iter(answers))
    data = {"assignmentId": ASSIGNMENT, "hitId": MTURK_HIT_ID, "workerId": WORKER,
            "turkSubmitTo": SANDBOX_WORKER_SITE, "token": token, first_key: answers[first_key]}
    response = client.post(f"/mturk/hit/{hit.pk}/", data)
    body = response.content.decode()
    assert response.status_code == 400
    assert "Please answer every document" in body
    assert f'name="{first_key}" value="1" required checked' in body  # the given answer is kept
    assert not Judgment.objects.exists()
    assert Assignment.objects.get(external_id=ASSIGNMENT).status == "claimed"


def test_a_page_for_another_mturk_hit_is_refused(client, hit):
    response = client.get(_url(hit, hitId="3OTHERHIT00000000000000000000A"))
    assert response.status_code == 409
    assert not Assignment.objects.exists()


def test_malformed_ids_are_refused(client, hit):
    response = client.get(_url(hit, workerId="A1<script>"))
    assert response.status_code == 409
    assert not Worker.objects.exists()


def test_a_paused_topic_offers_no_form(client, hit):
    Topic.objects.filter(pk=hit.topic_id).update(status=Topic.Status.PAUSED)
    response = client.get(_url(hit))
    assert response.status_code == 409
    assert "no longer available" in response.content.decode()
    assert not Assignment.objects.exists()


def test_a_blocked_worker_gets_no_form(client, hit):
    Worker.objects.create(platform="mturk", external_id=WORKER, blocked=True, blocked_reason="gold accuracy")
    response = client.get(_url(hit))
    assert response.status_code == 409
    assert "accuracy" in response.content.decode()
    assert not Assignment.objects.exists()


def test_a_local_crowd_hit_is_not_served(client, hit):
    Topic.objects.filter(pk=hit.topic_id).update(crowd=Topic.Crowd.LOCAL)
    assert client.get(_url(hit)).status_code == 404


def test_a_late_worker_can_still_submit_while_the_slot_is_free(client, hit):
    token = _accept(client, hit)
    Assignment.objects.filter(external_id=ASSIGNMENT).update(status=Assignment.Status.EXPIRED)
    reload = client.get(_url(hit))
    assert reload.status_code == 200 and 'id="hit-form"' in reload.content.decode()
    response = _post(client, hit, token)
    assert response.status_code == 200
    late = Assignment.objects.get(external_id=ASSIGNMENT)
    assert late.status == "claimed" and late.provisional_answers is not None  # its place again, waiting for MTurk


def test_a_late_worker_whose_place_was_taken_is_told_and_nothing_is_stored(client, hit):
    token = _accept(client, hit)
    Assignment.objects.filter(external_id=ASSIGNMENT).update(status=Assignment.Status.EXPIRED, slot=2)
    client.get(_url(hit, assignmentId="3NEWCOMER0000000000000000000001", workerId="A2NEWCOMER"))
    Assignment.objects.filter(external_id="3NEWCOMER0000000000000000000001").update(slot=2)
    response = _post(client, hit, token)
    assert response.status_code == 409
    assert "another worker has taken your place" in response.content.decode()
    assert Assignment.objects.get(external_id=ASSIGNMENT).provisional_answers is None


def test_answers_never_confirmed_are_shown_as_not_counted(client, hit):
    token = _accept(client, hit)
    _post(client, hit, token)
    # What reconcile does when MTurk never confirms the assignment (tests/annotation/test_mturk.py).
    Assignment.objects.filter(external_id=ASSIGNMENT).update(status=Assignment.Status.EXPIRED)
    for response in (client.get(_url(hit)), _post(client, hit, token)):
        assert response.status_code == 409
        assert "never confirmed this assignment" in response.content.decode()
        assert "externalSubmit" not in response.content.decode()
    assert Assignment.objects.get(external_id=ASSIGNMENT).provisional_answers is not None  # kept


@pytest.mark.parametrize(
    "change",
    [
        {"external_id": None},  # not published
        {"status": Hit.Status.COMPLETE},
        {"status": Hit.Status.CANCELLED},
    ],
)
def test_preview_shows_only_hits_on_offer(client, hit, change):
    Hit.objects.filter(pk=hit.pk).update(**change)
    response = client.get(_url(hit, assignmentId="ASSIGNMENT_ID_NOT_AVAILABLE"))
    assert response.status_code == 404
    assert "Gold prices" not in response.content.decode()


def test_preview_of_a_paused_topic_or_another_mturk_hit_is_refused(client, hit):
    assert client.get(_url(hit, assignmentId="ASSIGNMENT_ID_NOT_AVAILABLE", hitId="3OTHER")).status_code == 404
    Topic.objects.filter(pk=hit.topic_id).update(status=Topic.Status.PAUSED)
    assert client.get(_url(hit, assignmentId="ASSIGNMENT_ID_NOT_AVAILABLE")).status_code == 404


def test_a_full_hit_asks_the_newcomer_to_return_it(client, hit):
    for n in range(3):
        client.get(_url(hit, assignmentId=f"3FULL{n}", workerId=f"A{n}FULL"))
    response = client.get(_url(hit, assignmentId="3LATECOMER", workerId="A9LATE"))
    assert response.status_code == 409
    assert "full for now" in response.content.decode()
    assert Assignment.objects.filter(hit=hit).count() == 3


# --- in a real browser ------------------------------------------------------------------

@pytest.fixture
def browser_page(browser):
    context = browser.new_context()
    context.set_default_timeout(15_000)
    yield context.new_page()
    context.close()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_in_a_browser_the_answers_are_recorded_and_handed_back_to_mturk(browser_page, live_server, hit):
    """The hand-back form submits itself to MTurk's externalSubmit (intercepted here: no network)."""
    page = browser_page
    alerts = []
    page.on("dialog", lambda dialog: (alerts.append(dialog.message), dialog.dismiss()))
    received = []

    def mturk(route):
        received.append(route.request.post_data)
        route.fulfill(status=200, content_type="text/html", body="<p id=mturk>MTurk got it</p>")

    page.route("https://workersandbox.mturk.com/**", mturk)
    page.goto(live_server.url + _url(hit))
    assert page.locator(".document").count() == 2
    for radio in page.locator("input[type=radio][value='1']").all():
        radio.check()
    page.click("#hit-form button[type=submit]")
    page.wait_for_selector("#mturk")
    assert len(received) == 1
    fields = dict(pair.split("=", 1) for pair in received[0].split("&"))
    assert fields == {"assignmentId": ASSIGNMENT, "judgments": "2", "relevant": "2"}
    stored = Assignment.objects.get(external_id=ASSIGNMENT).provisional_answers
    assert stored is not None and list(stored.values()) == [True, True]  # counted once MTurk confirms
    assert alerts == []  # the hostile document text did not run
