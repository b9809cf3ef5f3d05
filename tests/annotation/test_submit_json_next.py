"""The script's one-request cycle (issue 30): a JSON submit asking to swap (swap=1) answers with the next HIT's
content — its address, deadline, queue line and documents as plain strings — and the thank-you line, which is not
left behind in the message store for a later page. Without swap=1 the JSON answer is as before (location only)."""
import pytest
from django.urls import reverse

from annotation.models import Assignment, Document, HitItem, Judgment
from annotation.services.sampling.draws import samples_launch
from annotation.views.highlight import paragraphs
from tests.factories import HOSTILE, make_pair_world, user_with_role

pytestmark = pytest.mark.django_db
JSON = {"HTTP_ACCEPT": "application/json"}


@pytest.fixture
def world():
    world = make_pair_world(n=500, prevalence=0.2, seed=3)
    samples_launch(topic=world.topic, per_region=4, seed=1)  # 12 documents: three HITs of four
    return world


@pytest.fixture
def annotator(client):
    user = user_with_role("ann", "annotator")
    client.force_login(user)
    return user


def _take(client) -> Assignment:
    client.post("/annotate/next/")
    return Assignment.objects.get(status="claimed")


def _data(assignment, value="1", then="next", swap=True):
    docs = HitItem.objects.filter(hit=assignment.hit).values_list("document_id", flat=True)
    return {**{f"doc-{d}": value for d in docs}, "then": then, **({"swap": "1"} if swap else {})}


def _url(assignment):
    return reverse("annotator:assignment", args=[assignment.pk])


def test_json_submit_with_swap_answers_with_the_next_hit(client, annotator, world):
    first = _take(client)
    items = list(HitItem.objects.filter(hit=first.hit).order_by("position").values_list("document_id", flat=True))
    response = client.post(_url(first), _data(first), **JSON)
    assert response.status_code == 200
    body = response.json()
    second = Assignment.objects.get(status="claimed")
    assert Judgment.objects.filter(assignment=first).count() == len(items)
    nxt = body["next"]
    assert body["ok"] is True and body["location"] == _url(second)
    assert nxt["assignment"] == second.pk and nxt["topic"] == world.topic.pk
    assert nxt["action"] == _url(second)
    assert nxt["release"] == reverse("annotator:release", args=[second.pk])
    assert nxt["deadline"] == second.deadline.isoformat()
    assert nxt["queue"] == "HIT 2 of about 3 for you"
    expected = [
        (d.pk, d.title, paragraphs(d.text))
        for d in (Document.objects.get(pk=i) for i in HitItem.objects.filter(hit=second.hit)
                  .order_by("position").values_list("document_id", flat=True))
    ]
    assert [(d["id"], d["title"], d["paragraphs"]) for d in nxt["documents"]] == expected
    assert body["notice"].startswith(f"Thank you: {len(items)} answers recorded.")
    # The thank-you went with the answer: the next page rendered shows no stale copy of it.
    assert "Thank you" not in client.get("/annotate/").content.decode()


def test_hostile_text_is_sent_verbatim_not_as_markup(client, annotator, world):
    first = _take(client)
    # Make every document hostile before the claim, so whichever HIT comes next carries it.
    Document.objects.filter(corpus=world.topic.corpus).update(title=HOSTILE, text=f"Para one {HOSTILE}\n\nPara two")
    body = client.post(_url(first), _data(first), **JSON).json()
    second_hit_docs = body["next"]["documents"]
    assert second_hit_docs
    for doc in second_hit_docs:
        assert doc["title"] == HOSTILE
        assert doc["paragraphs"] == [f"Para one {HOSTILE}", "Para two"]
    assert "is_gold" not in str(body) and "gold" not in str(body).lower()


def test_without_swap_the_json_answer_is_the_location_alone(client, annotator, world):
    first = _take(client)
    body = client.post(_url(first), _data(first, swap=False), **JSON).json()
    second = Assignment.objects.get(status="claimed")
    assert body == {"ok": True, "replayed": False, "location": _url(second)}


def test_no_hit_left_answers_home_without_next(client, annotator, world):
    for _ in range(3):
        assignment = _take(client) if not Assignment.objects.filter(status="claimed").exists() else \
            Assignment.objects.get(status="claimed")
        body = client.post(_url(assignment), _data(assignment), **JSON).json()
    assert body == {"ok": True, "replayed": False, "location": "/annotate/"}
    assert not Assignment.objects.filter(status="claimed").exists()


def test_the_swapped_hit_submits_like_a_loaded_one(client, annotator, world):
    first = _take(client)
    nxt = client.post(_url(first), _data(first), **JSON).json()["next"]
    second = Assignment.objects.get(pk=nxt["assignment"])
    answers = {f"doc-{d['id']}": "0" for d in nxt["documents"]}
    response = client.post(nxt["action"], {**answers, "then": "home", "swap": "1"}, **JSON)
    assert response.json() == {"ok": True, "replayed": False, "location": "/annotate/"}
    assert Judgment.objects.filter(assignment=second, relevant=False).count() == len(nxt["documents"])


def test_the_no_script_form_still_answers_with_the_next_page(client, annotator, world):
    first = _take(client)
    response = client.post(_url(first), _data(first, swap=False))
    second = Assignment.objects.get(status="claimed")
    content = response.content.decode()
    assert response.status_code == 200 and f'action="{_url(second)}"' in content
    assert "Thank you" in content  # the form's page shows the thank-you as a message
