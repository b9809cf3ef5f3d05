"""Deleting a corpus from the admin starts a task that deletes in batches (issue 25 item 2: "delete corpus" on
60,000 documents collected and listed every row in the request, timed out with a 500 and deleted nothing).

Quick in the request is shown by counting its queries (the same with 3,000 documents as with 30), not by time."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import Classifier, ClassifierScore, Corpus, CorpusDeletion, Document
from annotation.services.corpora import corpus_delete
from annotation.services.corpora.corpus_delete import corpus_deletion_run
from tests.factories import ClassifierFactory, CorpusFactory, TopicFactory, make_documents

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(db) -> Client:
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("root-h8", "root@example.invalid", "x"))
    return client


def _corpus(documents: int, name: str = "big") -> Corpus:
    corpus = CorpusFactory.create(name=name)
    ids = make_documents(corpus, documents)
    classifier = ClassifierFactory.create(corpus=corpus, ids=ids[: documents // 2])
    ClassifierFactory.create(corpus=corpus, ids=ids[:10])
    ClassifierScore.objects.bulk_create(ClassifierScore(classifier=classifier, document_id=pk, score=0.5) for pk in ids)
    return corpus


def _delete_page(client, corpus) -> tuple[int, str]:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(reverse("admin:annotation_corpus_delete", args=[corpus.pk]))
    assert response.status_code == 200
    return len(queries.captured_queries), response.content.decode()


def test_the_confirmation_page_summarises_without_collecting_the_documents(admin_client):
    small, big = _corpus(30, "small"), _corpus(3000, "big")
    small_queries, _ = _delete_page(admin_client, small)
    big_queries, html = _delete_page(admin_client, big)
    assert big_queries == small_queries  # nothing proportional to the corpus
    assert "3,000 documents and its classifiers, deleted in the background" in html
    assert "Document:" not in html and "Title 1" not in html


def test_deleting_answers_at_once_and_the_task_deletes_everything_in_batches(
        admin_client, monkeypatch, django_capture_on_commit_callbacks):
    monkeypatch.setattr(corpus_delete, "DELETE_BATCH", 1000)
    corpus = _corpus(3000)
    with CaptureQueriesContext(connection) as queries, django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = admin_client.post(reverse("admin:annotation_corpus_delete", args=[corpus.pk]), {"post": "yes"},
                                     follow=True)
    assert response.status_code == 200
    assert len(queries.captured_queries) < 40
    assert not [q for q in queries.captured_queries if q["sql"].startswith("DELETE")]
    assert "Deleting corpus “big” (3,000 documents, 2 classifiers) in the background" in response.content.decode()
    assert Corpus.objects.filter(pk=corpus.pk).exists() and len(callbacks) == 1
    deletion = CorpusDeletion.objects.get(corpus_pk=corpus.pk)
    assert (deletion.status, deletion.total, deletion.processed) == ("pending", 3000, 0)

    with CaptureQueriesContext(connection) as task_queries:
        callbacks[0]()  # the task (eager: no broker in tests)
    assert not Corpus.objects.filter(pk=corpus.pk).exists()
    assert (Document.objects.count(), Classifier.objects.count(), ClassifierScore.objects.count()) == (0, 0, 0)
    progress = [q["sql"] for q in task_queries.captured_queries
                if q["sql"].startswith('UPDATE "annotation_corpus" SET "document_count"')]
    assert len(progress) == 3  # one per batch of 1,000 documents
    deletion.refresh_from_db()
    assert (deletion.status, deletion.processed, deletion.total, deletion.corpus_id) == ("done", 3000, 3000, None)
    assert deletion.finished_at is not None and deletion.error == ""
    again = corpus_deletion_run(deletion_id=deletion.pk)  # twice: the task's second run changes nothing
    assert again is not None and (again.status, again.processed) == ("done", 3000)


def test_the_admin_action_starts_the_deletion_too_and_django_s_bulk_delete_is_gone(
        admin_client, django_capture_on_commit_callbacks):
    corpus = _corpus(300)
    changelist = reverse("admin:annotation_corpus_changelist")
    assert "delete_selected" not in admin_client.get(changelist).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(changelist, {"action": "delete_in_background", "_selected_action": [corpus.pk]},
                                     follow=True)
    assert "Deleting corpus “big” (300 documents" in response.content.decode()
    assert not Corpus.objects.filter(pk=corpus.pk).exists() and not Document.objects.exists()


def test_a_corpus_that_topics_use_is_refused_with_their_names(admin_client, django_capture_on_commit_callbacks):
    corpus = _corpus(30)
    TopicFactory(corpus=corpus, name="wheat prices")
    html = _delete_page(admin_client, corpus)[1]
    assert "used by topics (“wheat prices”)" in html
    changelist = reverse("admin:annotation_corpus_changelist")
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = admin_client.post(changelist, {"action": "delete_in_background", "_selected_action": [corpus.pk]},
                                     follow=True)
    assert "Delete those topics first" in response.content.decode() and callbacks == []
    assert Document.objects.filter(corpus=corpus).count() == 30


# --- the deletion as a job the operator can see (issue 25) ---------------------------------------------------


def _start(corpus: Corpus, callbacks_ctx) -> CorpusDeletion:
    with callbacks_ctx(execute=False) as callbacks:
        started = corpus_delete.corpus_delete_start(corpus=corpus)
    assert len(callbacks) == 1 and not started.already_running
    return started.deletion


def test_progress_is_recorded_batch_by_batch(monkeypatch, django_capture_on_commit_callbacks):
    monkeypatch.setattr(corpus_delete, "DELETE_BATCH", 100)
    corpus = _corpus(350)
    deletion = _start(corpus, django_capture_on_commit_callbacks)
    seen: list[tuple[str, int, int]] = []
    real_progress = corpus_delete.job_progress_add

    def watch(**kwargs):
        done = real_progress(**kwargs)
        row = CorpusDeletion.objects.get(pk=deletion.pk)
        seen.append((row.status, row.processed, row.total))
        return done

    monkeypatch.setattr(corpus_delete, "job_progress_add", watch)
    corpus_deletion_run(deletion_id=deletion.pk)
    assert seen == [("running", 100, 350), ("running", 200, 350), ("running", 300, 350), ("running", 350, 350)]
    deletion.refresh_from_db()
    assert (deletion.status, deletion.processed, deletion.total) == ("done", 350, 350)
    assert not Corpus.objects.filter(pk=corpus.pk).exists() and not Document.objects.exists()


def test_asking_twice_while_it_runs_returns_the_same_deletion(django_capture_on_commit_callbacks):
    corpus = _corpus(30)
    first = _start(corpus, django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        second = corpus_delete.corpus_delete_start(corpus=corpus)
    assert second.already_running and second.deletion.pk == first.pk and callbacks == []
    assert CorpusDeletion.objects.count() == 1


def test_a_deletion_killed_mid_way_is_failed_by_the_sweep_and_a_second_run_finishes_it(
        monkeypatch, django_capture_on_commit_callbacks, settings):
    """The worker dies after two batches: the row stays "running" with no sign of life; the stuck sweep fails
    it with a message; run again from the admin, it deletes what is left and the corpus is gone."""
    from datetime import timedelta

    from django.utils import timezone

    monkeypatch.setattr(corpus_delete, "DELETE_BATCH", 100)
    corpus = _corpus(350)
    deletion = _start(corpus, django_capture_on_commit_callbacks)
    real_progress = corpus_delete.job_progress_add
    batches = [0]

    def killed_after_two(**kwargs):
        batches[0] += 1
        if batches[0] > 2:
            raise SystemExit("worker killed")  # not an Exception: nothing records it, as with a SIGKILL
        return real_progress(**kwargs)

    monkeypatch.setattr(corpus_delete, "job_progress_add", killed_after_two)
    with pytest.raises(SystemExit):
        corpus_deletion_run(deletion_id=deletion.pk)
    monkeypatch.setattr(corpus_delete, "job_progress_add", real_progress)
    deletion.refresh_from_db()
    # The third batch rolled back with the kill (its progress is written inside its transaction): two batches gone.
    assert (deletion.status, deletion.processed) == ("running", 200)
    assert Document.objects.filter(corpus=corpus).count() == 150
    assert Corpus.objects.get(pk=corpus.pk).document_count == 150

    settings.CORPUS_DELETION_STUCK_SECONDS = 1800
    assert corpus_delete.corpus_deletions_stuck_fail(now=timezone.now() + timedelta(minutes=29)) == 0
    assert corpus_delete.corpus_deletions_stuck_fail(now=timezone.now() + timedelta(minutes=31)) == 1
    deletion.refresh_from_db()
    assert deletion.status == "failed" and "No sign of life for 30 minutes" in deletion.error
    assert "continues where it stopped" in deletion.error

    with django_capture_on_commit_callbacks(execute=True):  # the admin's "run again" queues it; eager here
        corpus_delete.corpus_deletion_retry(deletion=deletion)
    deletion.refresh_from_db()
    assert (deletion.status, deletion.processed, deletion.total, deletion.error) == ("done", 150, 150, "")
    assert not Corpus.objects.filter(pk=corpus.pk).exists()
    assert (Document.objects.count(), Classifier.objects.count(), ClassifierScore.objects.count()) == (0, 0, 0)
    with pytest.raises(corpus_delete.DeletionNotFailed):
        corpus_delete.corpus_deletion_retry(deletion=deletion)


def test_a_failure_records_its_message_and_keeps_what_was_deleted(monkeypatch, django_capture_on_commit_callbacks):
    """A topic created on the corpus between the start and the task: the task refuses, the row says why."""
    corpus = _corpus(30)
    deletion = _start(corpus, django_capture_on_commit_callbacks)
    TopicFactory(corpus=corpus, name="late topic")
    from annotation.tasks_corpora import corpus_delete_task

    assert corpus_delete_task(deletion_id=deletion.pk) == "failed"
    deletion.refresh_from_db()
    assert deletion.status == "failed" and "used by topics (“late topic”)" in deletion.error
    assert Document.objects.filter(corpus=corpus).count() == 30

    # An unexpected error: the row points to the log, the task re-raises (the worker logs it).
    deletion2 = CorpusDeletion.objects.create(corpus=corpus, corpus_pk=corpus.pk, corpus_name=corpus.name)
    corpus.topics.all().delete()

    def broken(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(corpus_delete, "_batches_delete", broken)
    with pytest.raises(RuntimeError):
        corpus_delete_task(deletion_id=deletion2.pk)
    deletion2.refresh_from_db()
    assert deletion2.status == "failed" and "unexpected error (see the server log)" in deletion2.error


def test_the_admin_shows_the_deletion_s_progress_and_its_failure(admin_client):
    corpus = _corpus(30)
    CorpusDeletion.objects.create(corpus=corpus, corpus_pk=corpus.pk, corpus_name="big <b>", status="running",
                                  total=60000, processed=5000)
    CorpusDeletion.objects.create(corpus=corpus, corpus_pk=corpus.pk, corpus_name="big", status="failed",
                                  total=60000, processed=15000, error="No sign of life for 30 minutes")
    html = admin_client.get(reverse("admin:annotation_corpusdeletion_changelist")).content.decode()
    assert "deleting… 5,000 of 60,000 documents" in html
    assert "stopped after 15,000 of 60,000 documents" in html and "No sign of life for 30 minutes" in html
    assert "big &lt;b&gt;" in html


def test_beat_runs_the_stuck_sweep_and_the_task_is_registered(settings):
    import annotation.tasks  # noqa: F401 - what Celery's autodiscovery imports
    from config.celery import app

    entry = settings.CELERY_BEAT_SCHEDULE["fail-stuck-corpus-deletions"]
    assert entry["task"] == "annotation.tasks_corpora.corpus_deletions_stuck_task"
    assert entry["task"] in app.tasks and "annotation.tasks_corpora.corpus_delete_task" in app.tasks
