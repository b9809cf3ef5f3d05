"""Annotator views of issue 12: JSON submit for the page script, stale second tab, return (skip),
progress, paragraphs, the CSRF failure page."""
import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Assignment, Document, HitItem, Judgment
from annotation.services.sampling.draws import samples_launch
from tests.factories import make_pair_world, user_with_role

pytestmark = pytest.mark.django_db
JSON = {"HTTP_ACCEPT": "application/json"}


@pytest.fixture
def world():
    world = make_pair_world(n=500, prevalence=0.2, seed=3)
    samples_launch(topic=world.topic, per_region=4, seed=1)  # 12 documents: three HITs
    return world


@pytest.fixture
def annotator(client):
    user = user_with_role("ann", "annotator")
    client.force_login(user)
    return user


def _take(client) -> Assignment:
    client.post("/annotate/next/")
    return Assignment.objects.get(status="claimed")


def _data(assignment, value="1", then="home"):
    docs = HitItem.objects.filter(hit=assignment.hit).values_list("document_id", flat=True)
    return {**{f"doc-{d}": value for d in docs}, "then": then}


def _url(assignment):
    return reverse("annotator:assignment", args=[assignment.pk])


def test_json_submit_acknowledges_with_the_next_location(client, annotator, world):
    assignment = _take(client)
    response = client.post(_url(assignment), _data(assignment, then="next"), **JSON)
    assert response.status_code == 200
    body = response.json()
    nxt = Assignment.objects.get(status="claimed")
    assert body == {"ok": True, "replayed": False, "location": f"/annotate/assignments/{nxt.pk}/"}
    assert Judgment.objects.filter(assignment=assignment).count() == HitItem.objects.filter(hit=assignment.hit).count()
    missing = client.post(_url(nxt), {"then": "home"}, **JSON)
    assert missing.status_code == 400 and "Please answer every document" in missing.json()["error"]


def test_anonymous_json_submit_is_a_redirect_to_sign_in(client, world):
    """The page script reads a redirect as "session expired" (it keeps the answers and says so)."""
    user_with_role("ann", "annotator")
    response = Client().post("/annotate/assignments/1/", {"then": "home"}, **JSON)
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/?next=")


def test_stale_second_tab_gets_a_clear_message(client, annotator, world):
    assignment = _take(client)
    client.post(_url(assignment), _data(assignment, "1"))
    client.get("/annotate/")  # consume the first tab's message
    stale = client.post(_url(assignment), _data(assignment, "0"), follow=True)
    assert "already been submitted (from another tab or window) with different answers" in stale.content.decode()
    assert set(Judgment.objects.filter(assignment=assignment).values_list("relevant", flat=True)) == {True}
    # The same answers twice (a double click) say nothing.
    again = client.post(_url(assignment), _data(assignment, "1"), follow=True)
    assert "different answers" not in again.content.decode()


def test_return_frees_the_place_takes_another_hit_and_blocks_the_submit(client, annotator, world):
    first = _take(client)
    response = client.post(reverse("annotator:release", args=[first.pk]), {"then": "next"})
    second = Assignment.objects.get(status="claimed")
    assert response["Location"] == f"/annotate/assignments/{second.pk}/" and second.hit_id != first.hit_id
    assert Assignment.objects.get(pk=first.pk).status == "expired"
    late = client.post(_url(first), _data(first), follow=True)
    assert "You returned this HIT" in late.content.decode()
    assert not Judgment.objects.exists()
    page = client.get(_url(first)).content.decode()
    assert "You returned this HIT; nothing was recorded." in page and "Skip this HIT" not in page
    # Submitted HITs cannot be returned; another worker's assignment is a 404.
    client.post(_url(second), _data(second))
    refused = client.post(reverse("annotator:release", args=[second.pk]), {"then": "home"}, follow=True)
    assert "already submitted; it cannot be returned" in refused.content.decode()
    client.force_login(user_with_role("other", "annotator"))
    assert client.post(reverse("annotator:release", args=[second.pk])).status_code == 404


def test_progress_in_the_hit_and_in_the_queue(client, annotator, world):
    home = client.get("/annotate/").content.decode()
    assert 'id="hits-left">about 3<' in home
    assignment = _take(client)
    page = client.get(_url(assignment)).content.decode()
    n_docs = HitItem.objects.filter(hit=assignment.hit).count()
    assert f"0 of {n_docs} answered" in page and "HIT 1 of about 3 for you" in page
    assert f'datetime="{assignment.deadline.isoformat()}"' in page
    client.post(_url(assignment), _data(assignment, then="next"))
    nxt = Assignment.objects.get(status="claimed")
    assert "HIT 2 of about 3 for you" in client.get(_url(nxt)).content.decode()


def test_newswire_line_breaks_become_escaped_paragraphs(client, annotator, world):
    assignment = _take(client)
    doc_id = HitItem.objects.filter(hit=assignment.hit).order_by("position").first().document_id
    Document.objects.filter(pk=doc_id).update(
        text="Showers continued in\nthe Bahia <zone>.\n    The dry period\nmeans delays.\n\n\n Reuter\r\n")
    page = client.get(_url(assignment)).content.decode()
    assert "<p>Showers continued in the Bahia &lt;zone&gt;.</p><p>The dry period means delays.</p><p>Reuter</p>" in page


def test_csrf_failure_is_a_friendly_page_with_a_way_back(settings, world):
    settings.CSRF_FAILURE_VIEW = "core.web.csrf_failure"
    client = Client(enforce_csrf_checks=True)
    client.force_login(user_with_role("ann", "annotator"))
    response = client.post("/annotate/next/", HTTP_REFERER="http://testserver/annotate/")
    content = response.content.decode()
    assert response.status_code == 403
    assert "This page was out of date" in content and 'href="http://testserver/annotate/"' in content
    assert "CSRF verification failed" not in content
    evil = client.post("/annotate/next/", HTTP_REFERER="https://evil.example/x")
    assert 'id="csrf-back" href="/"' in evil.content.decode()
    script = client.post("/annotate/next/", **JSON)
    assert script.status_code == 403 and script.json()["csrf"] is True
    assert not Assignment.objects.exists()


def test_the_home_page_and_the_hit_page_give_the_same_count(client, annotator, world, monkeypatch):
    """Issue 27: "about 152 HITs open for you" on the home page and "HIT 1 of more than 51" on the HIT page at the
    same moment (two caps, 1,000 and 50). One count now, with one cap, in the same words."""
    from annotation.services.crowd import annotator as queue

    monkeypatch.setattr(queue, "QUEUE_CAP", 1)  # the world's three HITs are more than the cap
    home = client.get("/annotate/").content.decode()
    assert 'id="hits-left">more than 1<' in home
    assignment = _take(client)
    assert "HIT 1 of more than 2 for you" in client.get(_url(assignment)).content.decode()
    monkeypatch.setattr(queue, "QUEUE_CAP", 200)
    assert "HIT 1 of about 3 for you" in client.get(_url(assignment)).content.decode()
    assert 'id="hits-left">about 2<' in client.get("/annotate/").content.decode()  # the two still open besides it
