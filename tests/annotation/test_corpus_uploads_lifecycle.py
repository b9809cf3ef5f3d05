"""The life of a browser upload (issue 15 items 5–6, issue 12 item 6): size limit while streaming, files
deleted when of no further use, retries on a lost database, stuck uploads failed by the sweep, the outcome
announced once and told in words, and the record deletable by analysts."""
from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import InterfaceError, OperationalError
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from annotation import tasks
from annotation.events import ImportFinished
from annotation.models import Corpus, CorpusUpload
from annotation.services.corpora import corpus_uploads
from core import events
from tests.factories import user_with_role

pytestmark = pytest.mark.django_db

ROWS = b"".join(json.dumps({"id": f"x{i}", "title": "t", "body": f"b{i}"}).encode() + b"\n" for i in range(7))


def _files(settings) -> list:
    folder = settings.MEDIA_ROOT / corpus_uploads.UPLOAD_DIR
    return sorted(folder.iterdir()) if folder.exists() else []


def _create(content: bytes = ROWS, name: str = "c.jsonl") -> CorpusUpload:
    return corpus_uploads.corpus_upload_create(corpus_name="Up", original_name=name, chunks=iter([content]),
                                               id_field="id", text_fields=["title", "body"])


@pytest.fixture
def finished(monkeypatch):
    """Every ImportFinished delivered (after commit)."""
    seen: list[ImportFinished] = []
    monkeypatch.setitem(events._subscribers, ImportFinished, [seen.append])
    return seen


@pytest.fixture
def like_a_worker(monkeypatch):
    """Eager tasks that retry as a worker would (with propagation on, celery raises its Retry instead)."""
    # The app reads Django's CELERY_ namespace: the key is the setting's name.
    monkeypatch.setattr(tasks.corpus_import_task.app.conf, "CELERY_TASK_EAGER_PROPAGATES", False)


@pytest.fixture
def no_queue(monkeypatch):
    """The task is queued nowhere: the test runs it (or not) itself."""
    monkeypatch.setattr(tasks.corpus_import_task, "delay", lambda **kwargs: None)


# --- size limit ------------------------------------------------------------------------------------------


def test_the_size_limit_stops_the_stream_and_removes_the_partial_file(settings):
    settings.CORPUS_UPLOAD_MAX_BYTES = 1000
    consumed = []

    def chunks():
        for i in range(100):
            consumed.append(i)
            yield b"x" * 300

    with pytest.raises(corpus_uploads.CorpusUploadTooLarge) as caught:
        corpus_uploads.corpus_upload_create(corpus_name="Big", original_name="big.jsonl", chunks=chunks(),
                                            id_field="id", text_fields=["body"])
    assert "larger than the limit of 1,000 bytes" in caught.value.message
    assert len(consumed) == 4  # stopped at the chunk that passed the limit, not at the end of the upload
    assert _files(settings) == [] and not CorpusUpload.objects.exists()


def test_a_file_at_the_limit_is_accepted(settings, no_queue):
    settings.CORPUS_UPLOAD_MAX_BYTES = len(ROWS)
    upload = _create()
    assert upload.file_size == len(ROWS) and len(_files(settings)) == 1


def test_the_upload_page_refuses_a_file_over_the_limit_without_keeping_anything(settings, tmp_path):
    settings.CORPUS_UPLOAD_MAX_BYTES = 4096
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path)  # where Django would spool the upload
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 1024
    client = Client()
    client.force_login(user_with_role("ana", "analyst"))
    big = SimpleUploadedFile("big.jsonl", ROWS * 200)
    response = client.post(reverse("analyst:corpus_upload"),
                           {"corpus_name": "Big", "file": big, "id_field": "id", "text_fields": "title, body"})
    assert response.status_code == 413
    assert "larger than the limit of 4 KiB" in response.content.decode()
    assert not CorpusUpload.objects.exists() and _files(settings) == []
    assert list(tmp_path.iterdir()) == []  # the spooled temporary file was closed and removed


# --- files removed, errors kept ----------------------------------------------------------------------------


def test_a_failed_import_deletes_the_file_and_keeps_the_error(settings, no_queue, finished,
                                                               django_capture_on_commit_callbacks):
    upload = _create(ROWS + b"not json\n")
    with django_capture_on_commit_callbacks(execute=True):
        result = corpus_uploads.corpus_upload_run(upload_id=upload.pk)
    assert result.status == "failed" and result.error_line == 8 and "malformed JSON" in result.error_problem
    assert _files(settings) == []
    assert finished == [ImportFinished(upload_id=upload.pk, corpus_id=None, succeeded=False)]
    assert not corpus_uploads.corpus_upload_retryable(upload=result)


def test_a_finished_import_deletes_the_file_and_announces_itself_once(settings, no_queue, finished,
                                                                        django_capture_on_commit_callbacks):
    upload = _create()
    with django_capture_on_commit_callbacks(execute=True):
        result = corpus_uploads.corpus_upload_run(upload_id=upload.pk)
        corpus_uploads.corpus_upload_run(upload_id=upload.pk)  # a second delivery of the task
    assert result.status == "done" and result.corpus.document_count == 7
    assert _files(settings) == []
    assert finished == [ImportFinished(upload_id=upload.pk, corpus_id=result.corpus_id, succeeded=True)]


def test_an_unexpected_error_keeps_the_file_so_a_retry_can_import_it(settings, no_queue, monkeypatch):
    real = corpus_uploads.corpus_import

    def broken(**kwargs):
        raise RuntimeError("bug")

    monkeypatch.setattr(corpus_uploads, "corpus_import", broken)
    upload = _create()
    result = corpus_uploads.corpus_upload_run(upload_id=upload.pk)
    assert result.status == "failed" and "unexpected error" in result.error_problem and len(_files(settings)) == 1
    assert corpus_uploads.corpus_upload_retryable(upload=result)
    monkeypatch.setattr(corpus_uploads, "corpus_import", real)
    monkeypatch.undo()  # the real queue (eager) again
    retried = corpus_uploads.corpus_upload_retry(upload_id=upload.pk)
    assert retried.status == "done" and retried.corpus.document_count == 7 and retried.error_problem == ""


# --- database faults -------------------------------------------------------------------------------------


def test_the_task_retries_when_the_database_connection_was_lost(monkeypatch, like_a_worker):
    real = corpus_uploads.corpus_import
    calls = []

    def flaky(**kwargs):
        calls.append(1)
        if len(calls) <= 2:
            raise (OperationalError if len(calls) == 1 else InterfaceError)("server closed the connection")
        return real(**kwargs)

    monkeypatch.setattr(corpus_uploads, "corpus_import", flaky)
    upload = _create()  # eager: queued on commit, which the test transaction never reaches
    tasks.corpus_import_task.apply(kwargs={"upload_id": upload.pk})
    upload.refresh_from_db()
    assert len(calls) == 3 and upload.status == "done" and upload.corpus.document_count == 7


def test_retries_are_bounded_and_the_upload_is_then_failed_by_the_sweep(monkeypatch, settings, like_a_worker):
    calls = []

    def down(**kwargs):
        calls.append(1)
        raise OperationalError("connection refused")

    monkeypatch.setattr(corpus_uploads, "corpus_import", down)
    upload = _create()
    result = tasks.corpus_import_task.apply(kwargs={"upload_id": upload.pk})
    assert isinstance(result.result, OperationalError) and result.state == "FAILURE"
    assert len(calls) == tasks.IMPORT_RETRIES + 1
    upload.refresh_from_db()
    assert upload.status == "running"  # nobody could say otherwise while the database was down
    settings.CORPUS_UPLOAD_STUCK_SECONDS = 600
    assert corpus_uploads.corpus_uploads_stuck_fail(now=timezone.now() + timedelta(seconds=300)) == 0
    assert corpus_uploads.corpus_uploads_stuck_fail(now=timezone.now() + timedelta(seconds=601)) == 1
    upload.refresh_from_db()
    assert upload.status == "failed" and upload.error_problem == corpus_uploads.STUCK and upload.finished_at
    assert corpus_uploads.corpus_upload_retryable(upload=upload)  # the file was kept for this


def test_the_sweep_fails_a_pending_upload_whose_task_never_ran(settings, no_queue, finished,
                                                                django_capture_on_commit_callbacks):
    settings.CORPUS_UPLOAD_STUCK_SECONDS = 600
    upload = _create()
    CorpusUpload.objects.filter(pk=upload.pk).update(created_at=timezone.now() - timedelta(seconds=900))
    with django_capture_on_commit_callbacks(execute=True):
        assert tasks.corpus_uploads_stuck_task.apply().get() == 1
        assert corpus_uploads.corpus_uploads_stuck_fail() == 0  # once
    upload.refresh_from_db()
    assert upload.status == "failed" and upload.error_problem == corpus_uploads.STUCK
    assert finished == [ImportFinished(upload_id=upload.pk, corpus_id=None, succeeded=False)]


def test_a_heartbeat_keeps_a_long_import_alive_and_a_queue_down_upload_is_left_alone(settings, no_queue):
    settings.CORPUS_UPLOAD_STUCK_SECONDS = 600
    old = timezone.now() - timedelta(hours=2)
    running = _create()
    CorpusUpload.objects.filter(pk=running.pk).update(
        status="running", created_at=old, summary={"heartbeat": (timezone.now() - timedelta(seconds=60)).isoformat()})
    waiting = _create()
    CorpusUpload.objects.filter(pk=waiting.pk).update(created_at=old, error_problem=corpus_uploads.QUEUE_DOWN)
    assert corpus_uploads.corpus_uploads_stuck_fail() == 0
    assert set(CorpusUpload.objects.values_list("status", flat=True)) == {"running", "pending"}


def test_progress_writes_a_heartbeat(no_queue, monkeypatch):
    monkeypatch.setattr("annotation.services.corpora.corpus_import.BATCH_SIZE", 2)
    beats = []
    real_set = corpus_uploads._set

    def spy(upload_id, **fields):
        if "heartbeat" in fields.get("summary", {}) and "progress" in fields:
            beats.append((fields["progress"], fields["summary"]["heartbeat"]))
        real_set(upload_id, **fields)

    monkeypatch.setattr(corpus_uploads, "_set", spy)
    upload = _create()
    corpus_uploads.corpus_upload_run(upload_id=upload.pk)
    assert [count for count, _ in beats] == [0, 2, 4, 6, 7]


# --- words, not a dictionary -------------------------------------------------------------------------------


def test_the_success_message_is_written_in_words():
    upload = CorpusUpload(corpus_name="Reuters", status="done",
                          summary={"corpus_name": "Reuters", "read": 21581, "created": 21578, "unchanged": 3,
                                   "conflicts": 0, "document_count": 21578})
    assert corpus_uploads.corpus_upload_message(upload=upload) == \
        "Imported 21,578 documents into Reuters (3 skipped as duplicates)."
    upload.summary = {"corpus_name": "Reuters", "created": 1, "unchanged": 0, "conflicts": 2, "document_count": 40}
    assert corpus_uploads.corpus_upload_message(upload=upload) == (
        "Imported 1 document into Reuters (2 skipped because a document with the same id and different content "
        "exists); the corpus now has 40 documents.")


def test_the_upload_page_shows_the_sentence_not_the_dictionary(no_queue):
    client = Client()
    client.force_login(user_with_role("ana", "analyst"))
    upload = _create()
    corpus_uploads.corpus_upload_run(upload_id=upload.pk)
    html = client.get(reverse("analyst:upload", args=[upload.pk])).content.decode()
    assert "Imported 7 documents into Up." in html
    assert "created:" not in html and "conflict_examples" not in html
    state = client.get(reverse("analyst:upload_status", args=[upload.pk])).json()
    assert state["message"] == "Imported 7 documents into Up."


# --- deleting an upload record ------------------------------------------------------------------------------


def _client(role: str | None) -> Client:
    client = Client()
    if role:
        client.force_login(user_with_role(role, role))
    return client


def test_an_analyst_deletes_a_finished_upload_and_the_corpus_stays(settings, no_queue):
    upload = _create()
    corpus_uploads.corpus_upload_run(upload_id=upload.pk)
    failed = _create(b"broken\n")
    corpus_uploads.corpus_upload_run(upload_id=failed.pk)
    client = _client("analyst")
    response = client.post(reverse("analyst:upload_delete", args=[upload.pk]), follow=True)
    assert response.redirect_chain[-1][0] == reverse("analyst:corpora")
    assert "was deleted. The corpus it imported is kept." in response.content.decode()
    assert not CorpusUpload.objects.filter(pk=upload.pk).exists()
    assert Corpus.objects.get(name="Up").document_count == 7
    client.post(reverse("analyst:upload_delete", args=[failed.pk]))
    assert not CorpusUpload.objects.exists()


def test_deleting_removes_a_kept_file(settings, no_queue, monkeypatch, django_capture_on_commit_callbacks):
    monkeypatch.setattr(corpus_uploads, "corpus_import", lambda **kwargs: 1 / 0)
    upload = _create()
    corpus_uploads.corpus_upload_run(upload_id=upload.pk)  # unexpected error: the file is kept for a retry
    assert len(_files(settings)) == 1
    with django_capture_on_commit_callbacks(execute=True):  # the file goes once the deletion commits
        _client("analyst").post(reverse("analyst:upload_delete", args=[upload.pk]))
    assert _files(settings) == [] and not CorpusUpload.objects.exists()


def test_a_waiting_or_running_upload_cannot_be_deleted(no_queue):
    upload = _create()
    client = _client("analyst")
    response = client.post(reverse("analyst:upload_delete", args=[upload.pk]),
                           HTTP_REFERER="http://testserver" + reverse("analyst:upload", args=[upload.pk]), follow=True)
    assert "can be deleted once it has finished or failed" in response.content.decode()
    assert CorpusUpload.objects.filter(pk=upload.pk).exists()


@pytest.mark.parametrize("role", ["manager", "annotator", None])
def test_only_analysts_delete_uploads(role, no_queue):
    upload = _create()
    corpus_uploads.corpus_upload_run(upload_id=upload.pk)
    response = _client(role).post(reverse("analyst:upload_delete", args=[upload.pk]))
    assert response.status_code == (302 if role is None else 403)
    if role is None:
        assert response["Location"].startswith(reverse("login"))
    assert CorpusUpload.objects.filter(pk=upload.pk).exists()


def test_delete_is_post_only(no_queue):
    upload = _create()
    corpus_uploads.corpus_upload_run(upload_id=upload.pk)
    assert _client("analyst").get(reverse("analyst:upload_delete", args=[upload.pk])).status_code == 405
    assert CorpusUpload.objects.filter(pk=upload.pk).exists()


# --- the corpora list -----------------------------------------------------------------------------------


def test_the_corpora_list_is_paginated_25_a_page_and_searchable():
    Corpus.objects.bulk_create([Corpus(name=f"corpus {i:02d}" + (" reuters" if i % 10 == 0 else ""))
                                for i in range(30)])
    client = _client("analyst")
    first = client.get(reverse("analyst:corpora")).content.decode()
    assert first.count('<tr><td><a href="/analyst/corpora/') == 25
    assert "corpus 00" in first and "corpus 24" in first and "corpus 25" not in first
    assert "Page 1 of 2 · 30 corpora" in first
    second = client.get(reverse("analyst:corpora"), {"page": 2}).content.decode()
    assert "corpus 25" in second and "corpus 29" in second and "corpus 24" not in second
    found = client.get(reverse("analyst:corpora"), {"q": "REUTERS"}).content.decode()
    assert found.count(" reuters</a>") == 3 and "Page 1 of" not in found
    none = client.get(reverse("analyst:corpora"), {"q": "nothing like it"}).content.decode()
    assert "No corpus has “nothing like it” in its name." in none


def test_a_queued_or_finished_upload_is_not_queued_twice(no_queue):
    upload = _create()
    with pytest.raises(corpus_uploads.CorpusUploadNotRetryable):
        corpus_uploads.corpus_upload_retry(upload_id=upload.pk)  # still queued: its task will run
    corpus_uploads.corpus_upload_run(upload_id=upload.pk)
    with pytest.raises(corpus_uploads.CorpusUploadNotRetryable):
        corpus_uploads.corpus_upload_retry(upload_id=upload.pk)


def test_the_page_of_a_stuck_upload_offers_a_retry_that_imports_it(settings, no_queue, monkeypatch):
    settings.CORPUS_UPLOAD_STUCK_SECONDS = 60
    upload = _create()
    CorpusUpload.objects.filter(pk=upload.pk).update(created_at=timezone.now() - timedelta(seconds=120))
    assert corpus_uploads.corpus_uploads_stuck_fail() == 1
    client = _client("analyst")
    page = client.get(reverse("analyst:upload", args=[upload.pk])).content.decode()
    assert "stopped without finishing" in page and "Retry the import" in page
    monkeypatch.undo()  # the eager queue again: the retry imports at once
    client.post(reverse("analyst:upload_retry", args=[upload.pk]))
    upload.refresh_from_db()
    assert upload.status == "done" and upload.corpus.document_count == 7 and _files(settings) == []


def test_the_upload_form_still_checks_csrf(no_queue):
    """The view installs its size limit before the CSRF check reads the body (csrf_exempt outside,
    csrf_protect inside): the check itself must still run."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(user_with_role("ana", "analyst"))
    response = client.post(reverse("analyst:corpus_upload"), {
        "corpus_name": "X", "file": SimpleUploadedFile("x.jsonl", ROWS), "id_field": "id", "text_fields": "title"})
    assert response.status_code == 403 and not CorpusUpload.objects.exists()
    page = client.get(reverse("analyst:corpus_upload"))
    token = page.cookies["csrftoken"].value
    response = client.post(reverse("analyst:corpus_upload"), {
        "csrfmiddlewaretoken": token, "corpus_name": "X", "file": SimpleUploadedFile("x.jsonl", ROWS),
        "id_field": "id", "text_fields": "title"})
    assert response.status_code == 302 and CorpusUpload.objects.count() == 1
