"""Submit and take the next HIT in one request, and the annotator path's query budget (issue 15 item 8)."""
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import Assignment, HitItem, Judgment, Label
from annotation.services.sampling.draws import samples_launch
from tests.factories import make_pair_world, user_with_role

pytestmark = pytest.mark.django_db
JSON = {"HTTP_ACCEPT": "application/json"}

# Queries, on SQLite and PostgreSQL alike (savepoints counted; test settings: no session or permission cache),
# measured when the path was made cheap: the submit that also claims and renders the next HIT (25, plus
# the claim's lazy expiry UPDATE, which runs at most once a second per process), and the HIT page alone.
# Going over means a query per document or a repeated lookup crept back in. Before: 29 + 11 over two
# requests; then 31 + 9 in one request; 2026-11-25: 25 + 8 (the worker loaded with the user, a place taken
# without a savepoint and read back with its HIT, the HIT row locked by the submit so its count needs no
# second read, the page's queue count capped).
SUBMIT_AND_NEXT_QUERIES = 26
HIT_PAGE_QUERIES = 8


@pytest.fixture
def world():
    world = make_pair_world(n=500, prevalence=0.2, seed=3)
    samples_launch(topic=world.topic, per_region=10, seed=1)  # 30 documents: six HITs of five
    return world


@pytest.fixture
def annotator(client):
    user = user_with_role("ann", "annotator")
    client.force_login(user)
    return user


def _take(client) -> Assignment:
    client.post("/annotate/next/")
    return Assignment.objects.get(status="claimed")


def _answers(assignment, value="1", then="next"):
    docs = HitItem.objects.filter(hit=assignment.hit).values_list("document_id", flat=True)
    return {**{f"doc-{d}": value for d in docs}, "then": then}


def _url(assignment):
    return reverse("annotator:assignment", args=[assignment.pk])


def test_one_post_records_the_answers_and_shows_the_next_hit(client, annotator, world):
    first = _take(client)
    response = client.post(_url(first), _answers(first))
    assert response.status_code == 200  # no redirect: the next HIT is the answer
    second = Assignment.objects.get(status="claimed")
    assert second.hit_id != first.hit_id
    assert Judgment.objects.filter(assignment=first).count() == 5
    content = response.content.decode()
    assert f'action="/annotate/assignments/{second.pk}/"' in content
    for doc_id in HitItem.objects.filter(hit=second.hit).values_list("document_id", flat=True):
        assert f'name="doc-{doc_id}" value="1"' in content
    assert "HIT 2 of about" in content and "Thank you: 5 answers recorded" in content
    # That page's form (posting to its own address) records the second HIT the same way.
    third_page = client.post(_url(second), _answers(second, "0"))
    assert third_page.status_code == 200
    assert Judgment.objects.filter(assignment=second, relevant=False).count() == 5


def test_a_reload_of_that_post_records_nothing_twice_and_shows_the_same_next_hit(client, annotator, world):
    first = _take(client)
    client.post(_url(first), _answers(first))
    second = Assignment.objects.get(status="claimed")
    again = client.post(_url(first), _answers(first))  # the browser's "resend" after a reload
    assert again.status_code == 200
    assert f'action="/annotate/assignments/{second.pk}/"' in again.content.decode()
    assert Judgment.objects.filter(assignment=first).count() == 5
    assert Assignment.objects.filter(worker__user=annotator).count() == 2  # no third HIT taken
    assert Label.objects.filter(topic=world.topic, votes_total__gt=1).count() == 0


def test_no_hit_left_goes_home_with_the_message(client, annotator, world):
    Assignment.objects.all().delete()
    first = _take(client)
    # Every other HIT is taken by someone else's three places: none is left for this worker.
    others = [user_with_role(f"o{i}", "annotator") for i in range(3)]
    from annotation.models import Hit
    from annotation.services.crowd.workers import worker_for_user

    for hit in Hit.objects.exclude(pk=first.hit_id):
        for slot, user in enumerate(others):
            Assignment.objects.create(hit=hit, worker=worker_for_user(user=user), slot=slot,
                                      deadline=first.deadline)
    response = client.post(_url(first), _answers(first), follow=True)
    assert response.redirect_chain[-1][0] == "/annotate/"
    assert "No HITs are available right now" in response.content.decode()
    assert Judgment.objects.filter(assignment=first).count() == 5


def test_the_script_still_gets_json_with_the_next_location(client, annotator, world):
    first = _take(client)
    response = client.post(_url(first), _answers(first), **JSON)
    second = Assignment.objects.get(status="claimed")
    assert response.json() == {"ok": True, "replayed": False, "location": _url(second)}


def test_submit_and_stop_still_redirects_home(client, annotator, world):
    first = _take(client)
    response = client.post(_url(first), _answers(first, then="home"))
    assert response.status_code == 302 and response["Location"] == "/annotate/"
    assert not Assignment.objects.filter(status="claimed").exists()


def test_the_annotator_path_stays_within_its_query_budget(client, annotator, world):
    first = _take(client)
    client.get(_url(first))  # warm the session and the content types
    with CaptureQueriesContext(connection) as page:
        assert client.get(_url(first)).status_code == 200
    data = _answers(first)
    with CaptureQueriesContext(connection) as submit:
        response = client.post(_url(first), data)
    assert response.status_code == 200
    sql = [q["sql"] for q in submit.captured_queries]
    assert len(page) <= HIT_PAGE_QUERIES, [q["sql"][:120] for q in page.captured_queries]
    assert len(submit) <= SUBMIT_AND_NEXT_QUERIES, [s[:120] for s in sql]
    # No query per document: the five judgments are one INSERT, the five labels one UPDATE.
    assert sum(1 for s in sql if s.startswith('INSERT INTO "annotation_judgment"')) == 1
    assert sum(1 for s in sql if s.startswith('UPDATE "annotation_label"')) == 1
    # The worker comes with the signed-in user (one query, core.auth), and is not looked up again for the claim.
    by_user = 'FROM "annotation_worker" WHERE "annotation_worker"."user_id"'
    assert not any(by_user in s for s in sql), [s[:200] for s in sql if by_user in s]
    assert sum(1 for s in sql if 'FROM "auth_user" LEFT OUTER JOIN "annotation_worker"' in s) == 1
    # The claim takes its place without a savepoint and reads it back with its HIT and topic: the page
    # does not fetch the assignment again.
    assert sum(1 for s in sql if s.startswith("INSERT") and 'INTO "annotation_assignment"' in s) == 1
    # Two savepoints (the test's transaction makes the submit's and the claim's atomic blocks savepoints),
    # none around the place taken.
    assert sum(1 for s in sql if s.startswith("SAVEPOINT")) == 2, [s[:60] for s in sql]
    assert sum(1 for s in sql if 'FROM "annotation_assignment" INNER JOIN "annotation_hit"' in s) == 3, sql
