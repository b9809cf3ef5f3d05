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

from annotation.models import Classifier, ClassifierScore, Corpus, Document
from annotation.services.corpora import corpus_delete
from annotation.services.corpora.corpus_delete import corpus_delete_run
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

    with CaptureQueriesContext(connection) as task_queries:
        callbacks[0]()  # the task (eager: no broker in tests)
    assert not Corpus.objects.filter(pk=corpus.pk).exists()
    assert (Document.objects.count(), Classifier.objects.count(), ClassifierScore.objects.count()) == (0, 0, 0)
    progress = [q["sql"] for q in task_queries.captured_queries
                if q["sql"].startswith('UPDATE "annotation_corpus" SET "document_count"')]
    assert len(progress) == 3  # one per batch of 1,000 documents
    assert corpus_delete_run(corpus_id=corpus.pk) is False  # twice: gone already


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
