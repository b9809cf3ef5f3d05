
import pytest
from django.urls import reverse

from annotation.models import Assignment, Document, HitItem, Judgment
from annotation.roles import roles_ensure
from annotation.services.crowd.workers import worker_for_user
from annotation.services.sampling.draws import samples_launch
from tests.factories import ClassifierFactory, CorpusFactory, TopicFactory, UserFactory, make_documents, make_pair_world

pytestmark = pytest.mark.django_db

HOSTILE_TEXT = '<script>alert(1)</script> and " onmouseover="x and <b>bold</b>'


@pytest.fixture
def groups():
    return roles_ensure()


def _annotator(client, groups, name="ann1"):
    user = UserFactory.create(username=name)
    user.groups.add(groups["annotator"])
    client.force_login(user)
    return user


@pytest.fixture
def world():
    world = make_pair_world(n=500, prevalence=0.2, seed=3, instructions="Read <carefully>.\n\nThen answer.")
    samples_launch(topic=world.topic, per_region=4, seed=1)
    return world


def _post_answers(client, assignment, value="1", then="home"):
    docs = HitItem.objects.filter(hit=assignment.hit).values_list("document_id", flat=True)
    data = {f"doc-{d}": value for d in docs}
    data["then"] = then
    return client.post(reverse("annotator:assignment", args=[assignment.pk]), data)


def test_anonymous_goes_to_sign_in_and_other_roles_get_403(client, groups):
    response = client.get("/annotate/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    manager = UserFactory.create(username="boss")
    manager.groups.add(groups["manager"])
    client.force_login(manager)
    assert client.get("/annotate/").status_code == 403
    assert client.post("/annotate/next/").status_code == 403


def test_take_judge_submit_and_progress(client, groups, world):
    user = _annotator(client, groups)
    home = client.get("/annotate/")
    assert home.status_code == 200 and b"Take the next HIT" in home.content
    response = client.post("/annotate/next/")
    assignment = Assignment.objects.get(worker__user=user)
    assert response.status_code == 302 and response["Location"] == f"/annotate/assignments/{assignment.pk}/"
    page = client.get(response["Location"])
    content = page.content.decode()
    assert page.status_code == 200
    assert "Read &lt;carefully&gt;." in content and "<p>Then answer.</p>" in content
    # The script is a cached static file (hashed name under the manifest storage in production; issue 30), loaded
    # after the form it binds to; no CDN.
    assert '<script src="/static/js/annotator.js" defer>' in content and "https://" not in content
    for doc_id in HitItem.objects.filter(hit=assignment.hit).values_list("document_id", flat=True):
        assert f'name="doc-{doc_id}"' in content
    assert "is_gold" not in content and "gold" not in content.lower()
    n_docs = HitItem.objects.filter(hit=assignment.hit).count()
    done = _post_answers(client, assignment)
    assert done.status_code == 302 and done["Location"] == "/annotate/"
    home = client.get("/annotate/").content.decode()
    assert f'id="judgments">{n_docs}<' in home
    assert 'id="hits-done">1<' in home
    assert f'id="earned">${world.topic.reward_per_hit:.2f}<' in home


def test_submit_and_take_next_goes_to_a_new_hit(client, groups, world):
    _annotator(client, groups)
    client.post("/annotate/next/")
    first = Assignment.objects.get()
    response = _post_answers(client, first, then="next")
    second = Assignment.objects.exclude(pk=first.pk).get()
    # One request (issue 15 item 8): the answer to the POST is the next HIT's page, whose form posts to it.
    assert response.status_code == 200
    content = response.content.decode()
    assert f'action="/annotate/assignments/{second.pk}/"' in content
    assert "answers recorded" in content  # the message shows on that page
    assert second.hit_id != first.hit_id and second.status == "claimed"


def test_missing_answers_rerender_with_choices_kept(client, groups, world):
    _annotator(client, groups)
    client.post("/annotate/next/")
    assignment = Assignment.objects.get()
    first_doc = HitItem.objects.filter(hit=assignment.hit).order_by("position").first().document_id
    response = client.post(reverse("annotator:assignment", args=[assignment.pk]), {f"doc-{first_doc}": "0"})
    assert response.status_code == 400
    content = response.content.decode()
    assert "Please answer every document" in content
    assert f'name="doc-{first_doc}" value="0" checked' in content
    assert not Judgment.objects.exists()


def test_replayed_post_records_one_set_of_judgments(client, groups, world):
    _annotator(client, groups)
    client.post("/annotate/next/")
    assignment = Assignment.objects.get()
    first = _post_answers(client, assignment, value="1")
    replay = _post_answers(client, assignment, value="0")
    assert first.status_code == replay.status_code == 302
    judgments = Judgment.objects.filter(assignment=assignment)
    assert judgments.count() == HitItem.objects.filter(hit=assignment.hit).count()
    assert set(judgments.values_list("relevant", flat=True)) == {True}
    # Looking at it again shows the recorded answers, read-only.
    page = client.get(reverse("annotator:assignment", args=[assignment.pk])).content.decode()
    assert "submitted" in page and "disabled" in page


def test_another_annotators_assignment_is_404(client, groups, world):
    _annotator(client, groups, "owner")
    client.post("/annotate/next/")
    assignment = Assignment.objects.get()
    client.logout()
    _annotator(client, groups, "intruder")
    url = reverse("annotator:assignment", args=[assignment.pk])
    assert client.get(url).status_code == 404
    assert _post_answers(client, assignment).status_code == 404
    assert not Judgment.objects.exists()
    assert client.get(reverse("annotator:assignment", args=[999999])).status_code == 404


def test_annotator_cannot_read_reports(client, groups, world):
    _annotator(client, groups)
    for url in (
        reverse("reports:topics"),
        reverse("reports:topic", args=[world.topic.pk]),
        reverse("reports:topic_json", args=[world.topic.pk]),
        reverse("reports:topic_csv", args=[world.topic.pk]),
    ):
        assert client.get(url).status_code == 403, url


def test_no_hits_and_blocked_messages(client, groups):
    user = _annotator(client, groups)
    response = client.post("/annotate/next/", follow=True)
    assert b"No HITs are available right now" in response.content
    worker = worker_for_user(user=user)
    worker.blocked, worker.blocked_reason = True, "too many wrong gold answers"
    worker.save()
    page = client.get("/annotate/")
    assert b"too many wrong gold answers" in page.content and b"Take the next HIT" not in page.content
    response = client.post("/annotate/next/", follow=True)
    assert b"You can no longer take HITs" in response.content


def test_hostile_document_text_is_escaped(client, groups):
    corpus = CorpusFactory.create()
    ids = make_documents(corpus, 60, texts=[HOSTILE_TEXT] * 60)
    Document.objects.filter(pk__in=ids).update(title='"><img src=x onerror=alert(2)>')
    topic = TopicFactory.create(corpus=corpus, status="active", instructions="<script>alert(3)</script>")
    from annotation.models import ClassifierPair

    ClassifierPair.objects.create(
        topic=topic, c1=ClassifierFactory.create(corpus=corpus, ids=ids[:40]), c2=ClassifierFactory.create(corpus=corpus, ids=ids[20:])
    )
    samples_launch(topic=topic, per_region=2, seed=1)
    _annotator(client, groups)
    response = client.post("/annotate/next/", follow=True)
    content = response.content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in content
    assert "<script>alert" not in content
    assert '" onmouseover="x' not in content and "&quot; onmouseover=&quot;x" in content
    assert "<img src=x" not in content and "<b>bold</b>" not in content
    assert "&lt;script&gt;alert(3)&lt;/script&gt;" in content


def test_csrf_is_enforced(groups, world):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    _annotator(client, groups)
    assert client.post("/annotate/next/").status_code == 403
    assert not Assignment.objects.exists()


@pytest.fixture
def browser_page(browser):
    context = browser.new_context(viewport={"width": 390, "height": 844})
    context.set_default_timeout(15_000)
    yield context
    context.close()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_keyboard_shortcuts_answer_and_submit(browser_page, live_server, groups):
    from django.test import Client

    world = make_pair_world(n=500, prevalence=0.2, seed=3)
    samples_launch(topic=world.topic, per_region=5, seed=1)  # 15 documents: three full HITs of 5
    user = UserFactory.create(username="keys")
    user.groups.add(groups["annotator"])
    client = Client()
    client.force_login(user)
    browser_page.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}])
    page = browser_page.new_page()
    page.goto(live_server.url + "/annotate/")
    page.click("text=Take the next HIT")
    page.wait_for_selector("#hit-form")
    assignment = Assignment.objects.get(worker__user=user)
    docs = list(HitItem.objects.filter(hit=assignment.hit).order_by("position").values_list("document_id", flat=True))
    assert len(docs) == 5
    assert page.locator("article.document.current").get_attribute("data-index") == "0"
    page.keyboard.press("j")  # first: on topic, moves to the second
    page.keyboard.press("k")  # second: off topic
    page.keyboard.press("p")  # back to the second...
    page.keyboard.press("1")  # ...and change it to on topic
    assert page.locator("article.document.current").get_attribute("data-index") == "2"
    page.keyboard.press("Enter")  # not all answered: jumps to the first unanswered instead of submitting
    assert not Judgment.objects.exists()
    for _ in docs[2:]:
        page.keyboard.press("0")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    answers = dict(Judgment.objects.filter(assignment=assignment).values_list("document_id", "relevant"))
    assert answers == {d: i < 2 for i, d in enumerate(docs)}
    assert "/annotate/assignments/" in page.url  # "submit and take the next HIT"
    assert Assignment.objects.filter(worker__user=user, status="claimed").exists()
