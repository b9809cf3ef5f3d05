"""Issue 15: classifiers built by tasks with progress, sharded keyword builds identical to a one-process scan;
issue 13 item 2: keyword filters on any field the import kept (metadata)."""
from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation.models import Classifier, ClassifierBuild, Corpus, Document
from annotation.services.classifiers import classifier_builds as builds
from annotation.services.classifiers import keywords
from annotation.services.classifiers.classifier import ClassifierError, classifier_create_keywords
from annotation.services.classifiers.classifier_builds import (
    classifier_build_file_save,
    classifier_build_shard_ranges,
    classifier_build_start,
    classifier_builds_stuck_fail,
)
from annotation.services.corpora.retrieved_sets import bitmap_from_ids, bitmap_to_bytes, classifier_bitmap
from annotation.tasks_builds import classifier_build_task
from tests.factories import user_with_role

pytestmark = pytest.mark.django_db

WORDS = ["oil", "wheat", "coffee", "gold", "green coffee", "copper", "grain", "crude"]


def make_corpus(size: int = 200, *, name: str = "news") -> tuple[Corpus, list[int]]:
    corpus = Corpus.objects.create(name=name)
    docs = []
    for i in range(size):
        title = f"Doc {i} {WORDS[i % len(WORDS)]}"
        text = f"Text {i} about {WORDS[(i * 3) % len(WORDS)]} and {WORDS[(i * 5 + 1) % len(WORDS)]} prices"
        metadata = {"author": f"@writer{i % 7}", "mentions": [f"@acct{i % 5}", f"@acct{(i + 2) % 5}"],
                    "likes": i, "article": "Coffee futures rise" if i % 11 == 0 else "Markets quiet"}
        docs.append(Document(corpus=corpus, external_id=f"d{i}", title=title, text=text, metadata=metadata,
                             content_hash=hashlib.sha256(f"{title}{text}".encode()).hexdigest()))
    Document.objects.bulk_create(docs)
    ids = list(Document.objects.filter(corpus=corpus).order_by("pk").values_list("pk", flat=True))
    corpus.documents_bitmap = bitmap_to_bytes(bitmap_from_ids(ids))
    corpus.document_count = len(ids)
    corpus.save()
    return corpus, ids


def build(django_capture_on_commit_callbacks, **kwargs) -> ClassifierBuild:
    with django_capture_on_commit_callbacks(execute=True):
        started = classifier_build_start(user=None, **kwargs)
    started.refresh_from_db()
    return started


# --- sharded keyword builds ------------------------------------------------------------------------------


def test_shard_ranges_cover_every_document_once():
    corpus, ids = make_corpus(101)
    for shards in (1, 2, 3, 4, 7, 101, 500):
        ranges = classifier_build_shard_ranges(corpus=corpus, shards=shards)
        assert len(ranges) == min(shards, 101)
        covered = [pk for pk in ids for lo, hi in ranges if lo <= pk < hi]
        assert sorted(covered) == ids  # each document in exactly one range
        sizes = [sum(lo <= pk < hi for pk in ids) for lo, hi in ranges]
        assert max(sizes) - min(sizes) <= 1


def test_sharded_build_equals_one_process_build(django_capture_on_commit_callbacks):
    corpus, _ = make_corpus(240)
    terms = ["coffee", "gold", "green coffee"]
    one = build(django_capture_on_commit_callbacks, corpus=corpus, name="one", kind="keywords",
                definition={"terms": terms, "fields": ["title", "text"]}, shards=1)
    four = build(django_capture_on_commit_callbacks, corpus=corpus, name="four", kind="keywords",
                 definition={"terms": terms, "fields": ["title", "text"]}, shards=4)
    sync = classifier_create_keywords(corpus=corpus, name="sync", terms=terms)
    assert one.status == four.status == ClassifierBuild.Status.DONE, (one.error, four.error)
    assert (one.shards, four.shards) == (1, 4)
    c1, c4 = one.classifier, four.classifier
    assert c1 is not None and c4 is not None
    assert list(classifier_bitmap(classifier=c1)) == list(classifier_bitmap(classifier=c4)) \
        == list(classifier_bitmap(classifier=sync))
    assert 0 < c1.retrieved_count < 240
    assert c1.fingerprint == c4.fingerprint == sync.fingerprint
    assert four.processed == four.total == 240
    assert four.details["retrieved"] == c4.retrieved_count


def test_progress_is_written_per_batch(django_capture_on_commit_callbacks, monkeypatch):
    corpus, _ = make_corpus(100)
    monkeypatch.setattr(keywords, "SCAN_CHUNK_DOCUMENTS", 10)
    seen: list[int] = []
    original = builds._progress_add

    def spy(build_id: int, count: int) -> None:
        original(build_id, count)
        seen.append(ClassifierBuild.objects.get(pk=build_id).processed)

    monkeypatch.setattr(builds, "_progress_add", spy)
    done = build(django_capture_on_commit_callbacks, corpus=corpus, name="kw", kind="keywords",
                 definition={"terms": ["oil"]}, shards=2)
    assert done.status == "done"
    assert len(seen) == 10 and seen == sorted(seen) and seen[-1] == 100


def test_a_second_run_of_the_task_does_nothing(django_capture_on_commit_callbacks):
    corpus, _ = make_corpus(50)
    done = build(django_capture_on_commit_callbacks, corpus=corpus, name="kw", kind="keywords",
                 definition={"terms": ["oil"]}, shards=3)
    assert classifier_build_task.delay(build_id=done.pk).get() == {"started": False}
    assert Classifier.objects.filter(corpus=corpus).count() == 1
    # The chord callback delivered twice stores nothing more either.
    assert builds.classifier_build_finish(build_id=done.pk, shard_results=[]).classifier_id == done.classifier_id
    assert Classifier.objects.filter(corpus=corpus).count() == 1


def test_a_failing_shard_marks_the_build_failed(django_capture_on_commit_callbacks, monkeypatch):
    corpus, _ = make_corpus(50)

    def boom(**kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(keywords, "keyword_scan", boom)
    failed = build(django_capture_on_commit_callbacks, corpus=corpus, name="kw", kind="keywords",
                   definition={"terms": ["oil"]}, shards=2)
    assert failed.status == ClassifierBuild.Status.FAILED
    assert failed.error == builds.UNEXPECTED and "disk" not in failed.error
    assert failed.classifier is None and not Classifier.objects.filter(corpus=corpus).exists()


def test_a_build_that_stopped_is_failed_by_the_sweep():
    corpus, _ = make_corpus(5)
    lost = ClassifierBuild.objects.create(corpus=corpus, name="lost", kind="keywords", status="running", total=5,
                                          definition={"terms": ["oil"], "fields": ["title", "text"]},
                                          started_at=timezone.now(), details={"heartbeat": timezone.now().isoformat()})
    assert classifier_builds_stuck_fail() == 0
    later = timezone.now() + timedelta(seconds=builds.DEFAULT_STUCK_SECONDS + 5)
    assert classifier_builds_stuck_fail(now=later) == 1
    lost.refresh_from_db()
    assert lost.status == "failed" and "stopped making progress" in lost.error


# --- validation at once -------------------------------------------------------------------------------------


def test_start_refuses_user_mistakes_at_once():
    corpus, _ = make_corpus(10)
    classifier_create_keywords(corpus=corpus, name="taken", terms=["oil"])
    cases = [
        ({"name": "taken", "kind": "keywords", "definition": {"terms": ["gold"]}}, "already has a classifier"),
        ({"name": " ", "kind": "keywords", "definition": {"terms": ["gold"]}}, "needs a name"),
        ({"name": "x", "kind": "keywords", "definition": {"terms": [" ", ""]}}, "at least one non-empty term"),
        ({"name": "x", "kind": "keywords", "definition": {"terms": ["gold"], "fields": ["nope"]}}, "unknown field"),
        ({"name": "x", "kind": "keywords", "definition": {"terms": ["gold"]}, "shards": 0}, "shards"),
        ({"name": "x", "kind": "field_values", "definition": {}}, "not built here"),
        ({"name": "x", "kind": "trained", "definition": {}}, "choose the training labels"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ClassifierError, match=message):
            classifier_build_start(corpus=corpus, user=None, **kwargs)
    assert not ClassifierBuild.objects.exists()


def test_start_refuses_a_name_being_built():
    corpus, _ = make_corpus(10)
    ClassifierBuild.objects.create(corpus=corpus, name="kw", kind="keywords", status="running")
    with pytest.raises(ClassifierError, match="being built"):
        classifier_build_start(corpus=corpus, name="kw", kind="keywords", definition={"terms": ["gold"]}, user=None)


def test_a_bad_scores_file_is_refused_with_its_line_and_removed():
    corpus, _ = make_corpus(10)
    relative = classifier_build_file_save(original_name="s.csv", chunks=[b"id,score\nd1,0.5\nd2,high\n"])
    with pytest.raises(ClassifierError, match=":3: score 'high' is not a number") as caught:
        classifier_build_start(corpus=corpus, name="s", kind="scores", user=None,
                               definition={"file": relative, "source": "s.csv", "threshold": 0.4})
    assert caught.value.line == 3
    assert not builds._upload_absolute(relative).exists()


# --- ids and scores -------------------------------------------------------------------------------------------


def test_ids_and_scores_builds(django_capture_on_commit_callbacks):
    corpus, ids = make_corpus(10)
    relative = classifier_build_file_save(original_name="ids.txt", chunks=[b"d1\nd2\nd3\nghost\n"])
    done = build(django_capture_on_commit_callbacks, corpus=corpus, name="ids", kind="ids",
                 definition={"file": relative, "source": "ids.txt"})
    assert done.status == "done", done.error
    assert list(classifier_bitmap(classifier=done.classifier)) == ids[1:4]
    assert done.classifier.definition["source"] == "ids.txt"
    assert done.details["unknown_count"] == 1 and done.details["unknown_examples"] == ["ghost"]
    assert done.processed == done.total == 4
    assert not builds._upload_absolute(relative).exists()

    relative = classifier_build_file_save(original_name="scores.csv", chunks=[b"d0,0.9\nd1,0.1\nd2,0.7\n"])
    done = build(django_capture_on_commit_callbacks, corpus=corpus, name="scores", kind="scores",
                 definition={"file": relative, "source": "scores.csv", "threshold": 0.5})
    assert done.status == "done", done.error
    assert list(classifier_bitmap(classifier=done.classifier)) == [ids[0], ids[2]]
    assert done.classifier.scores.count() == 3 and done.classifier.definition["threshold"] == 0.5


# --- any field (issue 13 item 2) -------------------------------------------------------------------------


def test_the_corpus_lists_its_text_fields():
    corpus, _ = make_corpus(20)
    # likes is a number: not searchable text, not listed.
    assert keywords.corpus_keyword_fields(corpus=corpus) == ["title", "text", "article", "author", "mentions"]


def test_keyword_filters_on_metadata_fields(django_capture_on_commit_callbacks):
    corpus, ids = make_corpus(40)
    by_author = classifier_create_keywords(corpus=corpus, name="a", terms=["@writer3"], fields=["author"])
    assert list(classifier_bitmap(classifier=by_author)) == [ids[i] for i in range(40) if i % 7 == 3]
    # A list value: any item matches; a phrase never spans two items.
    mentions = classifier_create_keywords(corpus=corpus, name="m", terms=["@acct1"], fields=["mentions"])
    assert list(classifier_bitmap(classifier=mentions)) == [
        ids[i] for i in range(40) if 1 in (i % 5, (i + 2) % 5)]
    with pytest.raises(ClassifierError, match="unknown field"):
        classifier_create_keywords(corpus=corpus, name="n", terms=["7"], fields=["likes2"])
    spanning = classifier_create_keywords(corpus=corpus, name="s", terms=["acct0 @acct2"], fields=["mentions"])
    assert spanning.retrieved_count == 0
    # The definition records the fields, title/text first; the fingerprint depends on them.
    article = classifier_create_keywords(corpus=corpus, name="art", terms=["coffee"], fields=["article", "Title"])
    assert article.definition["fields"] == ["title", "article"]
    title_only = classifier_create_keywords(corpus=corpus, name="t", terms=["coffee"], fields=["title"])
    assert article.fingerprint != title_only.fingerprint
    expected = {ids[i] for i in range(40) if i % 11 == 0 or WORDS[i % len(WORDS)] in ("coffee", "green coffee")}
    assert set(classifier_bitmap(classifier=article)) == expected
    # Built as a sharded task: the same set and fingerprint.
    sharded = build(django_capture_on_commit_callbacks, corpus=corpus, name="art2", kind="keywords",
                    definition={"terms": ["coffee"], "fields": ["article", "title"]}, shards=3)
    assert sharded.status == "done", sharded.error
    assert sharded.classifier.fingerprint == article.fingerprint  # the name is not part of it
    assert list(classifier_bitmap(classifier=sharded.classifier)) == list(classifier_bitmap(classifier=article))


def test_title_and_text_definitions_keep_their_fingerprint():
    corpus, _ = make_corpus(30)
    classifier = classifier_create_keywords(corpus=corpus, name="kw", terms=["oil", "gold"])
    assert classifier.definition == {"terms": ["oil", "gold"], "fields": ["title", "text"]}
    from annotation.services.classifiers.classifier import classifier_fingerprint

    assert classifier.fingerprint == classifier_fingerprint(
        kind="keywords", definition={"terms": ["gold", "oil"], "fields": ["text", "title"]},
        retrieved=classifier_bitmap(classifier=classifier))


# --- pages ---------------------------------------------------------------------------------------------------


@pytest.fixture
def analyst() -> Client:
    user_with_role("ana", "analyst")
    client = Client()
    client.login(username="ana", password="pw-for-tests-1")
    return client


def test_keyword_form_starts_a_build_and_its_page_links_the_classifier(analyst, settings):
    corpus, _ = make_corpus(30)
    page = analyst.get(reverse("analyst:classifier_keywords", args=[corpus.pk]))
    assert b'value="author"' in page.content and b'value="mentions"' in page.content
    settings.CELERY_TASK_ALWAYS_EAGER = False  # a broker: the request only queues the build (after commit)
    response = analyst.post(reverse("analyst:classifier_keywords", args=[corpus.pk]),
                            {"name": "by author", "terms": "@writer2", "fields": ["author"], "create": "1"})
    started = ClassifierBuild.objects.get()
    assert response.status_code == 302 and not Classifier.objects.exists()
    assert response["Location"] == reverse("analyst:classifier_build", args=[started.pk])
    status_url = reverse("analyst:classifier_build_status", args=[started.pk])
    assert analyst.get(status_url).json() == {
        "status": "pending", "status_display": "Waiting", "finished": False, "processed": 0, "total": 30,
        "percent": 0, "shards": 1, "error": "", "classifier_id": None, "retrieved": None, "warnings": [],
        "unknown_count": 0, "unknown_examples": [], "classifier_url": None}
    page = analyst.get(response["Location"]).content.decode()
    assert 'data-status-url="' + status_url + '"' in page and "Waiting" in page
    settings.CELERY_TASK_ALWAYS_EAGER = True
    classifier_build_task.delay(build_id=started.pk)  # what the worker does
    status = analyst.get(status_url).json()
    assert status["status"] == "done" and status["processed"] == 30 and status["percent"] == 100
    assert status["classifier_url"] == reverse("analyst:classifier", args=[status["classifier_id"]])
    page = analyst.get(response["Location"])
    assert status["classifier_url"].encode() in page.content
    assert Classifier.objects.get().definition["fields"] == ["author"]


def test_without_a_broker_the_form_goes_straight_to_the_classifier(analyst):
    corpus, _ = make_corpus(30)
    response = analyst.post(reverse("analyst:classifier_keywords", args=[corpus.pk]),
                            {"name": "kw", "terms": "@writer2", "fields": ["author"], "create": "1"}, follow=True)
    classifier = Classifier.objects.get()
    assert response.redirect_chain[-1][0] == reverse("analyst:classifier", args=[classifier.pk])
    assert f"retrieves {classifier.retrieved_count} documents" in response.content.decode()
    assert classifier.retrieved_count == 4 and ClassifierBuild.objects.get().classifier == classifier


def test_keyword_form_shows_mistakes_without_starting_anything(analyst):
    corpus, _ = make_corpus(10)
    classifier_create_keywords(corpus=corpus, name="taken", terms=["oil"])
    response = analyst.post(reverse("analyst:classifier_keywords", args=[corpus.pk]),
                            {"name": "taken", "terms": "gold", "fields": ["title"], "create": "1"})
    assert response.status_code == 200 and "has a classifier with this name" in response.content.decode()
    ClassifierBuild.objects.create(corpus=corpus, name="busy", kind="keywords")
    response = analyst.post(reverse("analyst:classifier_keywords", args=[corpus.pk]),
                            {"name": "busy", "terms": "gold", "fields": ["title"], "create": "1"})
    assert response.status_code == 200 and "is being built" in response.content.decode()
    assert ClassifierBuild.objects.count() == 1


def test_upload_form_starts_a_build(analyst, settings):
    corpus, ids = make_corpus(10)
    from django.core.files.uploadedfile import SimpleUploadedFile

    settings.CELERY_TASK_ALWAYS_EAGER = False
    response = analyst.post(reverse("analyst:classifier_upload", args=[corpus.pk]), {
        "name": "up", "kind": "scores", "threshold": "0.5",
        "file": SimpleUploadedFile("my scores.csv", b"d0,0.9\nd1,0.2\nnobody,0.9\n")})
    started = ClassifierBuild.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("analyst:classifier_build", args=[started.pk])
    assert builds._upload_absolute(started.definition["file"]).is_file()  # kept for the task
    settings.CELERY_TASK_ALWAYS_EAGER = True
    classifier_build_task.delay(build_id=started.pk)
    started.refresh_from_db()
    assert not builds._upload_absolute(started.definition["file"]).exists()  # removed once built
    assert started.status == "done" and started.classifier.definition["source"] == "my scores.csv"
    page = analyst.get(response["Location"]).content.decode()
    assert "1 id" in page and "nobody" in page
    bad = analyst.post(reverse("analyst:classifier_upload", args=[corpus.pk]), {
        "name": "bad", "kind": "scores", "threshold": "0.5",
        "file": SimpleUploadedFile("bad.csv", b"d0,0.9\nd1,lots\n")})
    assert bad.status_code == 200 and "Line 2: score" in bad.content.decode()
    assert ClassifierBuild.objects.count() == 1


def test_build_pages_need_the_analyst_role(analyst):
    corpus, _ = make_corpus(3)
    started = ClassifierBuild.objects.create(corpus=corpus, name="x", kind="keywords")
    user_with_role("someone", "annotator")
    other = Client()
    other.login(username="someone", password="pw-for-tests-1")
    for name in ("analyst:classifier_build", "analyst:classifier_build_status"):
        assert other.get(reverse(name, args=[started.pk])).status_code in (302, 403)
        assert analyst.get(reverse(name, args=[started.pk])).status_code == 200


def test_metadata_values_searched_strings_numbers_and_lists_only():
    assert keywords._metadata_text("Green  Coffee") == "Green  Coffee"
    assert keywords._metadata_text(["a b", 7, 2.5, True, None, {"x": "hidden"}]) == "a b\x017\x012.5"
    assert keywords._metadata_text({"nested": "hidden"}) == "" and keywords._metadata_text(None) == ""
    matcher = keywords.KeywordMatcher(["hidden", "a b", "7"])
    rows = [(1, {"tags": ["x", {"y": "hidden"}]}), (2, {"tags": ["a b"]}), (3, {"other": "a b"}), (4, {"tags": 7}),
            (5, {"tags": [7]})]
    assert list(keywords._scan_rows(matcher, rows, ["tags"])) == [2, 5]


def test_a_file_problem_found_by_the_task_names_the_upload_and_is_stored_as_data(django_capture_on_commit_callbacks):
    corpus, _ = make_corpus(5)
    relative = classifier_build_file_save(original_name="ghosts.txt", chunks=[b"ghost\nphantom\n"])
    failed = build(django_capture_on_commit_callbacks, corpus=corpus, name="ghosts", kind="ids",
                   definition={"file": relative, "source": "ghosts.txt"})
    assert failed.status == "failed"
    assert failed.error.startswith("ghosts.txt: none of the 2 ids") and "classifier-uploads" not in failed.error
    assert failed.error_detail == {"line": None, "problem": failed.error.removeprefix("ghosts.txt: ")}
    assert not builds._upload_absolute(relative).exists()
