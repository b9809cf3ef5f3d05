"""Issue 15 for topic sets: the router pages start a build and send the analyst to its page, which polls a JSON
status and, once built, links to the router. Expected counts come from how the corpus is built
(tests.factories.corpus_build: "oil" in the title of every third document, "wheat" in the others)."""
from __future__ import annotations

import re
from decimal import Decimal
from html import unescape

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from annotation.models import Router, RouterBuild, Topic
from annotation.services.classifiers.router_builds import router_build_start
from annotation.services.topics.topic_sets import topic_set_create
from annotation.tasks_routers import router_build_task
from tests.factories import HOSTILE, corpus_build, user_with_role

pytestmark = pytest.mark.django_db


def _client(username: str, role: str | None) -> Client:
    user_with_role(username, role)
    client = Client()
    client.login(username=username, password="pw-for-tests-1")
    return client


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path


@pytest.fixture
def deferred(settings):
    """A broker: the page only queues the build; the test runs the task as a worker would."""
    settings.CELERY_TASK_ALWAYS_EAGER = False


@pytest.fixture
def analyst() -> Client:
    return _client("ana", "analyst")


@pytest.fixture
def topic_set() -> Topic:
    corpus = corpus_build(name="news", size=60)[0]
    return topic_set_create(corpus=corpus, name="Commodities", classes=[("Oil", "crude"), ("Wheat", "grain")],
                            reward_per_hit=Decimal("0.10"), budget=Decimal("10.00"), hit_size=5)


def _text(response) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", response.content.decode())).split())


def _keyword_post(analyst: Client, topic: Topic, name: str):
    data: dict = {"router-name": name, "create": "1"}
    for position, terms in ((1, "oil"), (2, "wheat")):
        data.update({f"rule-{position}-position": position, f"rule-{position}-order": position,
                     f"rule-{position}-terms": terms, f"rule-{position}-fields": ["title"]})
    return analyst.post(reverse("analyst:router_keywords", args=[topic.pk]), data)


def test_keyword_page_starts_a_build_whose_page_polls_then_links_to_the_router(analyst, topic_set, deferred, monkeypatch,
                                                                                 django_capture_on_commit_callbacks):
    from annotation import tasks_routers

    queued = []
    monkeypatch.setattr(tasks_routers.router_build_task, "delay", lambda **kwargs: queued.append(kwargs))  # the broker
    with django_capture_on_commit_callbacks(execute=True):
        response = _keyword_post(analyst, topic_set, "desk")
    build = RouterBuild.objects.get()
    assert queued == [{"build_id": build.pk}] and not Router.objects.exists()
    assert response.status_code == 302 and response.url == reverse("analyst:router_build", args=[build.pk])
    status_url = reverse("analyst:router_build_status", args=[build.pk])

    waiting = analyst.get(response.url)
    html = waiting.content.decode()
    assert f'data-status-url="{status_url}"' in html and 'class="badge pending"' in html
    assert "Oil: oil" in _text(waiting) and "0 of 60" in _text(waiting)
    assert analyst.get(status_url).json() == {
        "status": "pending", "status_display": "Waiting", "finished": False, "processed": 0, "total": 60,
        "percent": 0, "error": "", "router_id": None, "router_url": None}

    router_build_task(build_id=build.pk)  # the worker
    router = Router.objects.get(name="desk")
    state = analyst.get(status_url).json()
    assert state["finished"] and state["status"] == "done" and state["processed"] == 60 and state["percent"] == 100
    assert state["router_url"] == reverse("analyst:router", args=[router.pk])
    done = analyst.get(response.url).content.decode()
    assert f'href="{state["router_url"]}"' in done and "refresh" not in done
    assert router.predicted_counts == [0, 20, 40]  # "oil" in every third title, "wheat" in the others


def test_upload_page_queues_a_build_and_the_build_page_lists_bad_lines(analyst, topic_set, deferred):
    upload = SimpleUploadedFile("preds.csv", b"id,class\nd0,Oil\nd1,Barley\nd2,Wheat\nzz,Oil\n",
                                content_type="text/csv")
    response = analyst.post(reverse("analyst:router_upload", args=[topic_set.pk]), {"name": "up", "file": upload})
    build = RouterBuild.objects.get()
    assert response.url == reverse("analyst:router_build", args=[build.pk]) and build.status == "pending"
    router_build_task(build_id=build.pk)
    page = analyst.get(response.url)
    rows = re.findall(r'<tr><td class="num">(\d+)</td><td>([^<]*)</td></tr>', page.content.decode())
    assert [int(n) for n, _ in rows] == [3, 5]
    assert "unknown class 'Barley'" in unescape(rows[0][1]) and "not a document" in unescape(rows[1][1])
    assert "preds.csv: 2 bad line(s), nothing stored" in _text(page)
    assert f'href="{reverse("analyst:router_upload", args=[topic_set.pk])}"' in page.content.decode()
    assert analyst.get(reverse("analyst:router_build_status", args=[build.pk])).json()["status"] == "failed"
    assert not Router.objects.exists()


def test_without_a_broker_the_page_goes_straight_to_the_router(analyst, topic_set):
    response = _keyword_post(analyst, topic_set, "now")
    router = Router.objects.get()
    assert response.url == reverse("analyst:router", args=[router.pk])
    assert RouterBuild.objects.get().router == router


def test_build_pages_need_the_configure_role(topic_set, deferred):
    build = router_build_start(topic=topic_set, name="r", kind=Router.Kind.KEYWORDS,
                               rules=[{"class": 1, "terms": ["oil"], "fields": ["title"]}])
    urls = [reverse("analyst:router_build", args=[build.pk]), reverse("analyst:router_build_status", args=[build.pk])]
    for role in ("annotator", None):
        client = _client(f"user-{role}", role)
        for url in urls:
            response = client.get(url)
            assert response.status_code in (302, 403) and response.status_code != 200, (role, url)
    anonymous = Client().get(urls[1])
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous.url
    assert _client("ana2", "analyst").post(urls[1]).status_code == 405
    assert _client("ana3", "analyst").get(reverse("analyst:router_build", args=[build.pk + 1000])).status_code == 404


def test_hostile_names_are_escaped_on_the_build_page(analyst, deferred):
    corpus = corpus_build(name="c " + HOSTILE, size=10)[0]
    topic = topic_set_create(corpus=corpus, name="set " + HOSTILE, classes=[("Oil " + HOSTILE, ""), ("Wheat", "")])
    keywords = router_build_start(topic=topic, name="kw " + HOSTILE, kind=Router.Kind.KEYWORDS,
                                  rules=[{"class": 1, "terms": ["oil"], "fields": ["title"]}])
    upload = router_build_start(topic=topic, name="up " + HOSTILE, kind=Router.Kind.UPLOAD,
                                data=b"id,class\n<script>alert(1)</script>,x\n", source_name="f " + HOSTILE)
    router_build_task(build_id=upload.pk)
    for build in (keywords, upload):
        html = analyst.get(reverse("analyst:router_build", args=[build.pk])).content.decode()
        assert "<script>alert(1)</script>" not in html and 'onmouseover="alert(1)' not in html
        assert "&lt;script&gt;" in html


def test_topic_set_page_lists_builds_still_running(analyst, topic_set, deferred):
    waiting = router_build_start(topic=topic_set, name="slow " + HOSTILE, kind=Router.Kind.KEYWORDS,
                                 rules=[{"class": 1, "terms": ["oil"], "fields": ["title"]}])
    done = router_build_start(topic=topic_set, name="quick", kind=Router.Kind.KEYWORDS,
                              rules=[{"class": 2, "terms": ["wheat"], "fields": ["title"]}])
    router_build_task(build_id=done.pk)
    page = analyst.get(reverse("analyst:topic_set", args=[topic_set.pk]))
    html = page.content.decode()
    listed = re.search(r'<p class="muted" id="router-builds">(.*?)</p>', html, re.S)
    assert listed and f'href="{reverse("analyst:router_build", args=[waiting.pk])}"' in listed.group(1)
    assert "(waiting, 0 of 60)" in unescape(listed.group(1)) and "quick" not in listed.group(1)
    assert "<script>alert(1)</script>" not in html
