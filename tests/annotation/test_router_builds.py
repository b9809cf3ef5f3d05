"""Router builds (issue 15): checked in the request, built by a task with progress, the same router as the
synchronous functions, bad uploads failed with their line numbers, safe to run twice."""
import hashlib
from pathlib import Path

import pytest

from annotation.models import Document, Router, RouterBuild, RouterPrediction
from annotation.services.classifiers import router_builds, routers
from annotation.services.classifiers.router_builds import (
    QUEUE_DOWN,
    UNEXPECTED,
    UPLOAD_DIR,
    router_build_run,
    router_build_start,
)
from annotation.services.classifiers.routers import RouterError, router_create_from_csv, router_create_from_keywords
from annotation.services.corpora.retrieved_sets import bitmap_from_ids, bitmap_to_bytes
from annotation.tasks_routers import router_build_task
from tests.factories import CorpusFactory, TopicFactory, make_documents, make_topic_set

pytestmark = pytest.mark.django_db

ROWS = [  # (title, text, desk, tags): documents d0..d6, each repeated so the scan has several chunks
    ("Cup final tonight", "The football match", "sports", ["match"]),
    ("Vote count", "parliament debates the football budget", "", []),
    ("Quiet day", "nothing happened", "science", []),
    ("Telescope", "a new comet", "", ["astronomy", "election"]),
    ("Other", "unrelated text", "", []),
    ("Footballer", "footballers are not football?", "", ["x"]),
    ("FOOTBALL", "", "", []),
]
RULES = [
    {"class": 2, "terms": ["parliament", "election"], "fields": ["text", "tags"]},
    {"class": 1, "terms": ["football"], "fields": ["title", "text"]},
    {"class": "Science", "terms": ["science"], "fields": ["desk"]},
]


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    return tmp_path


@pytest.fixture
def topic():
    corpus = CorpusFactory.create()
    Document.objects.bulk_create(
        Document(corpus=corpus, external_id=f"d{i}", title=title, text=text, metadata={"desk": desk, "tags": tags},
                 content_hash=hashlib.sha256(f"{i}".encode()).hexdigest())
        for i, (title, text, desk, tags) in enumerate(ROWS * 3))
    pks = list(Document.objects.filter(corpus=corpus).order_by("pk").values_list("pk", flat=True))
    corpus.documents_bitmap = bitmap_to_bytes(bitmap_from_ids(pks))
    corpus.document_count = len(pks)
    corpus.save()
    return make_topic_set(corpus)  # Sport 1, Politics 2, Science 3; 21 documents


def _predictions(router):
    return dict(RouterPrediction.objects.filter(router=router).values_list("document_id", "predicted"))


def _uploads(media):
    folder = Path(media) / UPLOAD_DIR
    return sorted(folder.iterdir()) if folder.exists() else []


@pytest.fixture
def deferred(settings):
    """Builds are queued, not run: the test runs the task itself (as a worker would)."""
    settings.CELERY_TASK_ALWAYS_EAGER = False


# --------------------------------------------------------------------------- same router as the synchronous functions


def test_keyword_build_gives_the_synchronous_router(topic, monkeypatch):
    monkeypatch.setattr(routers, "SCAN_CHUNK_DOCUMENTS", 4)  # 21 documents: six chunks
    build = router_build_start(topic=topic, name="by task", kind=Router.Kind.KEYWORDS, rules=RULES)
    assert build.status == RouterBuild.Status.DONE, build.error
    synchronous = router_create_from_keywords(topic=topic, name="in request", rules=RULES)
    router = build.router
    assert router.kind == Router.Kind.KEYWORDS and router.name == "by task"
    assert router.fingerprint == synchronous.fingerprint
    assert router.definition == synchronous.definition
    assert router.predicted_counts == synchronous.predicted_counts == [3, 9, 6, 3]
    assert _predictions(router) == _predictions(synchronous) and len(_predictions(router)) == 18
    assert (build.processed, build.total) == (21, 21)


def test_keyword_progress_written_per_chunk_and_visible(topic, monkeypatch, deferred):
    monkeypatch.setattr(routers, "SCAN_CHUNK_DOCUMENTS", 5)
    build = router_build_start(topic=topic, name="progress", kind=Router.Kind.KEYWORDS, rules=RULES)
    assert build.status == RouterBuild.Status.PENDING and build.total == 21
    seen = []
    original = router_builds._progress_add

    def spy(build_id, count):
        original(build_id, count)
        seen.append(RouterBuild.objects.values_list("status", "processed").get(pk=build_id))

    monkeypatch.setattr(router_builds, "_progress_add", spy)
    router_build_run(build_id=build.pk)
    assert seen == [("running", 5), ("running", 10), ("running", 15), ("running", 20), ("running", 21)]
    build.refresh_from_db()
    assert build.status == RouterBuild.Status.DONE and build.started_at and build.finished_at


def test_csv_build_gives_the_synchronous_router_and_removes_the_file(topic, media, deferred):
    data = b"id,class\nd0,Sport\nd1,2\nd2,science\nd3,0\nd4,none\nd5,\n\nd6,  POLITICS \n"
    build = router_build_start(topic=topic, name="uploaded", kind=Router.Kind.UPLOAD, data=[data[:10], data[10:]],
                               source_name="../pred.csv")
    assert build.definition["source"] == "pred.csv"
    assert build.definition["sha256"] == hashlib.sha256(data).hexdigest()
    assert len(_uploads(media)) == 1 and _uploads(media)[0].read_bytes() == data
    router_build_task(build_id=build.pk)
    build.refresh_from_db()
    assert build.status == RouterBuild.Status.DONE, build.error
    assert _uploads(media) == []
    synchronous = router_create_from_csv(topic=topic, name="sync", data=data, source_name="pred.csv")
    assert build.router.fingerprint == synchronous.fingerprint
    assert build.router.definition == synchronous.definition
    assert build.router.predicted_counts == synchronous.predicted_counts == [17, 1, 2, 1]
    assert _predictions(build.router) == _predictions(synchronous)
    assert build.processed == build.total == 9


# --------------------------------------------------------------------------- failures


def test_bad_csv_fails_the_build_with_every_line_and_stores_nothing(topic, media):
    data = b"id,class\nd0,Sport\nd1,Cooking\nd2\nd0,Politics\nnope,Sport\n"
    build = router_build_start(topic=topic, name="bad", kind=Router.Kind.UPLOAD, data=data, source_name="bad.csv")
    assert build.status == RouterBuild.Status.FAILED
    lines = build.error.splitlines()
    assert lines[0] == "bad.csv: 4 bad line(s), nothing stored"
    assert [line.split(":")[0] for line in lines[1:]] == ["line 3", "line 4", "line 5", "line 6"]
    assert "unknown class 'Cooking'" in lines[1] and "listed twice (first on line 2)" in lines[3]
    assert build.router is None and not Router.objects.exists() and not RouterPrediction.objects.exists()
    assert _uploads(media) == []


def test_many_bad_lines_are_capped_in_the_error(topic):
    data = b"id,class\n" + b"".join(f"x{i},Sport\n".encode() for i in range(150))
    build = router_build_start(topic=topic, name="bad", kind=Router.Kind.UPLOAD, data=data, source_name="b.csv")
    lines = build.error.splitlines()
    assert len(lines) == 1 + 100 + 1 and lines[-1] == "(and 50 more)" and lines[1].startswith("line 2: id 'x0'")


@pytest.mark.parametrize("data, fragment", [
    (b"document,label\nd0,1\n", "line 1: the first line must be the header"),
    (b"\n\n", "the file is empty"),
    (b"\xff\xfe,class\n", "line 1 is not valid UTF-8"),
])
def test_bad_header_is_refused_in_the_request(topic, media, data, fragment):
    with pytest.raises(RouterError) as caught:
        router_build_start(topic=topic, name="r", kind=Router.Kind.UPLOAD, data=data, source_name="h.csv")
    assert fragment in caught.value.message
    assert not RouterBuild.objects.exists() and _uploads(media) == []


@pytest.mark.parametrize("data, total", [
    ("\ufeffID,Class\r\nd0,Sport\r\nd1,none\r\n", 3),
    ("\n \nid,class\nd0,1", 4),
])
def test_header_with_bom_crlf_or_after_blank_lines_is_accepted(topic, data, total):
    build = router_build_start(topic=topic, name="ok", kind=Router.Kind.UPLOAD, data=data.encode(), source_name="b.csv")
    assert build.status == RouterBuild.Status.DONE, build.error
    assert build.total == total and build.router.predicted_counts == [20, 1, 0, 0]


def test_a_bom_past_line_one_is_refused_in_the_request_as_the_task_would(topic):
    with pytest.raises(RouterError, match="line 2: the first line must be the header"):
        router_build_start(topic=topic, name="x", kind=Router.Kind.UPLOAD, data="\n\ufeffid,class\nd0,1\n".encode(),
                           source_name="b.csv")
    with pytest.raises(RouterError, match="line 2: the first line must be the header"):
        router_create_from_csv(topic=topic, name="x", data="\n\ufeffid,class\nd0,1\n".encode(), source_name="b.csv")


def test_upload_over_the_size_limit_is_refused_while_streaming(topic, media, monkeypatch):
    monkeypatch.setattr(router_builds, "ROUTER_CSV_MAX_BYTES", 20)
    with pytest.raises(RouterError, match="larger than"):
        router_build_start(topic=topic, name="r", kind=Router.Kind.UPLOAD,
                           data=[b"id,class\n", b"d0,Sport\nd1,Sport\n"], source_name="big.csv")
    assert _uploads(media) == [] and not RouterBuild.objects.exists()


@pytest.mark.parametrize("rules, fragment", [
    ([], "at least one rule"),
    ([{"class": 9, "terms": ["a"]}], "not one of the topics"),
    ([{"class": 1, "terms": ["a"], "fields": ["nowhere"]}], "unknown field"),
])
def test_bad_rules_are_refused_in_the_request(topic, rules, fragment):
    with pytest.raises(RouterError, match=fragment):
        router_build_start(topic=topic, name="r", kind=Router.Kind.KEYWORDS, rules=rules)
    assert not RouterBuild.objects.exists()


def test_names_and_topic_checked_in_the_request(topic, deferred):
    router_create_from_keywords(topic=topic, name="taken", rules=RULES)
    with pytest.raises(RouterError, match="already has a router named"):
        router_build_start(topic=topic, name=" taken ", kind=Router.Kind.KEYWORDS, rules=RULES)
    router_build_start(topic=topic, name="busy", kind=Router.Kind.KEYWORDS, rules=RULES)  # waiting
    with pytest.raises(RouterError, match="is being built"):
        router_build_start(topic=topic, name="busy", kind=Router.Kind.KEYWORDS, rules=RULES)
    with pytest.raises(RouterError, match="needs a name"):
        router_build_start(topic=topic, name="  ", kind=Router.Kind.KEYWORDS, rules=RULES)
    single = TopicFactory.create(corpus=topic.corpus)
    with pytest.raises(RouterError, match="single topic"):
        router_build_start(topic=single, name="r", kind=Router.Kind.KEYWORDS, rules=RULES)
    assert RouterBuild.objects.count() == 1


def test_unexpected_error_fails_the_build_and_reaches_the_log(topic, deferred, monkeypatch, caplog):
    build = router_build_start(topic=topic, name="boom", kind=Router.Kind.KEYWORDS, rules=RULES)

    def broken(**kwargs):
        raise ValueError("a bug")

    monkeypatch.setattr(routers, "router_keyword_predictions", broken)
    with pytest.raises(ValueError):
        router_build_task(build_id=build.pk)
    build.refresh_from_db()
    assert build.status == RouterBuild.Status.FAILED and build.error == UNEXPECTED
    assert "router build" in caplog.text and not Router.objects.exists()


def test_queue_down_fails_the_build(topic, deferred, monkeypatch, django_capture_on_commit_callbacks):
    from annotation import tasks_routers

    def down(**kwargs):
        raise ConnectionError("no broker")

    monkeypatch.setattr(tasks_routers.router_build_task, "delay", down)
    with django_capture_on_commit_callbacks(execute=True):
        build = router_build_start(topic=topic, name="q", kind=Router.Kind.KEYWORDS, rules=RULES)
    build.refresh_from_db()
    assert build.status == RouterBuild.Status.FAILED and build.error == QUEUE_DOWN


# --------------------------------------------------------------------------- twice


def test_a_build_run_twice_creates_one_router(topic, deferred, media):
    keywords = router_build_start(topic=topic, name="kw", kind=Router.Kind.KEYWORDS, rules=RULES)
    upload = router_build_start(topic=topic, name="up", kind=Router.Kind.UPLOAD, data=b"id,class\nd0,1\n",
                                source_name="u.csv")
    for build in (keywords, upload):
        first = router_build_task(build_id=build.pk)
        second = router_build_task(build_id=build.pk)
        assert first["status"] == second["status"] == "done" and first["router_id"] == second["router_id"]
    assert Router.objects.filter(topic=topic).count() == 2
    assert _uploads(media) == []


def test_a_replayed_start_cannot_store_a_second_router(topic, deferred):
    """A build set back to waiting after it stored (a replayed start) scans again, but the Router name constraint
    refuses the second router: the build fails with the reason and one router remains."""
    build = router_build_start(topic=topic, name="race", kind=Router.Kind.KEYWORDS, rules=RULES)
    router_build_task(build_id=build.pk)
    RouterBuild.objects.filter(pk=build.pk).update(status=RouterBuild.Status.PENDING)
    assert router_build_task(build_id=build.pk) == {"status": "failed", "router_id": None}
    build.refresh_from_db()
    assert build.status == RouterBuild.Status.FAILED and "already has a router named 'race'" in build.error
    assert Router.objects.filter(topic=topic).count() == 1


def test_the_tasks_are_registered_for_the_worker_and_beat(settings):
    import annotation.tasks  # noqa: F401 - what Celery's autodiscovery imports
    from config.celery import app

    assert "annotation.tasks_routers.router_build_task" in app.tasks
    assert "annotation.tasks_routers.router_builds_stuck_task" in app.tasks
    beat = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert "annotation.tasks_routers.router_builds_stuck_task" in beat


def test_builds_stuck_past_the_limit_are_failed_and_their_files_removed(topic, deferred, media, settings):
    from datetime import timedelta

    from django.utils import timezone

    from annotation.services.classifiers.router_builds import STUCK, router_builds_stuck_fail

    settings.ROUTER_BUILD_STUCK_SECONDS = 600
    rules = [{"class": 1, "terms": ["football"], "fields": ["title"]}]
    old_pending = router_build_start(topic=topic, name="lost", kind=Router.Kind.UPLOAD, data=b"id,class\nd0,1\n",
                                     source_name="lost.csv")
    old_running = router_build_start(topic=topic, name="dead worker", kind=Router.Kind.KEYWORDS, rules=rules)
    young = router_build_start(topic=topic, name="young", kind=Router.Kind.KEYWORDS, rules=rules)
    finished = router_build_start(topic=topic, name="finished", kind=Router.Kind.KEYWORDS, rules=rules)
    router_build_run(build_id=finished.pk)
    now = timezone.now()
    RouterBuild.objects.filter(pk=old_pending.pk).update(created_at=now - timedelta(seconds=601))
    RouterBuild.objects.filter(pk=old_running.pk).update(status="running", started_at=now - timedelta(seconds=601))
    RouterBuild.objects.filter(pk=young.pk).update(status="running", started_at=now - timedelta(seconds=599))
    RouterBuild.objects.filter(pk=finished.pk).update(started_at=now - timedelta(days=1))
    assert len(_uploads(media)) == 1
    assert router_builds_stuck_fail(now=now) == 2
    states = dict(RouterBuild.objects.values_list("name", "status"))
    assert states == {"lost": "failed", "dead worker": "failed", "young": "running", "finished": "done"}
    assert RouterBuild.objects.get(pk=old_running.pk).error == STUCK and _uploads(media) == []
    assert router_builds_stuck_fail(now=now) == 0


def test_a_large_corpus_is_scanned_in_5000_document_chunks(deferred, monkeypatch):
    corpus = CorpusFactory.create()
    make_documents(corpus, 12_001, texts=[f"story {i} {'wheat' if i % 3 == 0 else 'oil'}" for i in range(12_001)])
    topic = make_topic_set(corpus, classes=("Wheat", "Oil"))
    build = router_build_start(topic=topic, name="big", kind=Router.Kind.KEYWORDS, rules=[
        {"class": 1, "terms": ["wheat"], "fields": ["text"]}, {"class": 2, "terms": ["oil"], "fields": ["text"]}])
    seen = []
    original = router_builds._progress_add
    monkeypatch.setattr(router_builds, "_progress_add", lambda build_id, n: (seen.append(n), original(build_id, n)))
    router_build_run(build_id=build.pk)
    build.refresh_from_db()
    assert seen == [5000, 5000, 2001]
    assert build.router.predicted_counts == [0, 4001, 8000]
