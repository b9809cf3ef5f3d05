"""Retrieved-set uploads (Roaring bitmap, Parquet) are jobs: the request stores the file and answers 202 (API) or
redirects to the build's page; a task resolves the ids (issue 25 item 2: a 167 kB Parquet file of 60M rows was
resolved inside the request until gunicorn killed the worker).

"Not in the request" is shown by what the request asks the database, not by time: with a broker (not eager),
no query of the request touches the documents table; the task then resolves everything."""
from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from pyroaring import BitMap

from annotation.models import Classifier, ClassifierBuild
from annotation.services.classifiers import retrieved_upload
from annotation.services.classifiers.classifier_builds import classifier_builds_stuck_fail
from annotation.services.classifiers.kinds.ids import upload_absolute
from annotation.services.corpora.retrieved_sets import classifier_bitmap
from annotation.tasks_retrieved import classifier_retrieved_upload_task
from api.services import api_token_create
from tests.factories import CorpusFactory, make_documents, user_with_role

pytestmark = pytest.mark.django_db


@pytest.fixture
def corpus():
    corpus = CorpusFactory(name="ints")
    make_documents(corpus, 50)
    for document in corpus.documents.all():  # integer external ids, as a bitmap needs
        document.external_id = str(1000 + document.pk)
        document.save(update_fields=["external_id"])
    return corpus


@pytest.fixture
def queued(settings, monkeypatch):
    """A broker: the task is only recorded (its ids), as Celery would queue it."""
    settings.CELERY_TASK_ALWAYS_EAGER = False
    sent: list[int] = []
    monkeypatch.setattr(classifier_retrieved_upload_task, "delay", lambda *, build_id: sent.append(build_id))
    return sent


@pytest.fixture
def api(db):
    from rest_framework.test import APIClient

    user = user_with_role("retrieved-job", "analyst")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {api_token_create(user=user, name='t').plaintext}")
    return client


def _ids(corpus) -> list[str]:
    return list(corpus.documents.order_by("pk").values_list("external_id", flat=True))


def _parquet(values: list, *, column: str = "id") -> bytes:
    out = io.BytesIO()
    pq.write_table(pa.table({column: values}), out)
    return out.getvalue()


def _post(api, corpus, content: bytes, filename: str, **fields):
    return api.post(f"/api/v1/corpora/{corpus.pk}/classifiers/retrieved/",
                    {"file": SimpleUploadedFile(filename, content), "name": "engine", **fields}, format="multipart")


def _document_queries(queries) -> list[str]:
    return [q["sql"] for q in queries if "annotation_document" in q["sql"]]


def test_a_parquet_file_of_many_rows_is_stored_and_answered_202_without_resolving_an_id(
        api, corpus, queued, django_capture_on_commit_callbacks):
    ids = _ids(corpus)
    rows = [ids[i % 10] for i in range(200_000)]  # 200,000 rows, 10 distinct ids: a small file
    content = _parquet(rows)
    assert len(content) < 50_000
    with CaptureQueriesContext(connection) as queries, django_capture_on_commit_callbacks(execute=True):
        response = _post(api, corpus, content, "many.parquet")
    assert response.status_code == 202, response.content[:300]
    assert _document_queries(queries.captured_queries) == []  # the request resolved nothing
    build = ClassifierBuild.objects.get(pk=response.json()["id"])
    assert response["Location"] == f"/api/v1/classifier-builds/{build.pk}/"
    assert (build.status, build.total, queued) == ("pending", 200_000, [build.pk])
    assert not Classifier.objects.filter(name="engine").exists()

    classifier_retrieved_upload_task(build_id=build.pk)  # the worker
    build.refresh_from_db()
    assert (build.status, build.processed, build.total) == ("done", 200_000, 200_000)
    assert classifier_bitmap(classifier=build.classifier) == BitMap(corpus.documents.order_by("pk").values_list("pk", flat=True)[:10])
    assert not upload_absolute(build.definition["file"]).exists()  # the stored file is gone
    polled = api.get(response["Location"]).json()
    assert polled["status"] == "done" and polled["classifier_id"] == build.classifier_id
    assert classifier_retrieved_upload_task(build_id=build.pk) is None  # twice: nothing new
    assert Classifier.objects.filter(name="engine").count() == 1


def test_a_bitmap_upload_from_the_page_redirects_to_the_build_page(corpus, queued, django_capture_on_commit_callbacks):
    client = Client()
    client.force_login(user_with_role("retrieved-page", "analyst"))
    bitmap = BitMap(int(i) for i in _ids(corpus)[:5])
    with CaptureQueriesContext(connection) as queries, django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("analyst:classifier_retrieved_upload", args=[corpus.pk]),
                               {"name": "engine", "file": SimpleUploadedFile("r.roaring", bitmap.serialize()),
                                "file_format": "auto", "column": "id"})
    build = ClassifierBuild.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("analyst:classifier_build", args=[build.pk])
    assert _document_queries(queries.captured_queries) == []
    classifier_retrieved_upload_task(build_id=build.pk)
    build.refresh_from_db()
    assert build.status == "done" and build.classifier.retrieved_count == 5 and build.processed == 5
    assert client.get(response["Location"]).status_code == 200


@pytest.mark.parametrize("setting, value, words", [
    ("RETRIEVED_PARQUET_MAX_ROWS", 1000, "2,000 rows is more than the 1,000 rows"),
    ("RETRIEVED_PARQUET_MAX_UNCOMPRESSED_BYTES", 10_000, "decompresses to"),
])
def test_a_parquet_file_past_the_row_or_decompressed_limit_is_refused_in_the_request_with_the_reason(
        api, corpus, queued, settings, setting, value, words):
    setattr(settings, setting, value)
    rows = [f"{i:06d}" + "x" * 200 for i in range(2000)]  # 400 kB of distinct ids, a few kB compressed
    response = _post(api, corpus, _parquet(rows), "big.parquet")
    assert response.status_code == 400, response.content[:300]
    detail = response.json()["detail"]
    assert words in detail and detail.startswith("big.parquet:") and "nothing was kept" in detail
    assert not ClassifierBuild.objects.exists() and queued == []
    assert not list(upload_absolute("classifier-uploads").glob("*big.parquet"))


def test_a_parquet_file_without_the_column_is_refused_before_queueing(api, corpus, queued):
    response = _post(api, corpus, _parquet(["x"], column="doc"), "cols.parquet")
    assert response.status_code == 400 and "no column 'id'; the file has 'doc'" in response.json()["detail"]
    assert not ClassifierBuild.objects.exists()


@pytest.mark.parametrize("content, words", [
    (b"\x00\x01garbage", "not a serialized 32-bit Roaring bitmap"),
    (BitMap([5, 6, 7]).serialize(), "none of the 3 ids is a document of corpus 'ints'"),
])
def test_a_bad_file_fails_its_job_with_a_message_for_the_user(api, corpus, queued, django_capture_on_commit_callbacks,
                                                              content, words):
    with django_capture_on_commit_callbacks(execute=True):
        response = _post(api, corpus, content, "bad.roaring")
    assert response.status_code == 202
    build = ClassifierBuild.objects.get()
    classifier_retrieved_upload_task(build_id=build.pk)
    build.refresh_from_db()
    assert build.status == "failed" and words in build.error and build.error.startswith("bad.roaring:")
    assert not upload_absolute(build.definition["file"]).exists()
    assert not Classifier.objects.exists()
    assert api.get(response["Location"]).json()["error"] == build.error


def test_with_the_broker_down_the_build_fails_saying_so(api, corpus, settings, monkeypatch,
                                                        django_capture_on_commit_callbacks):
    settings.CELERY_TASK_ALWAYS_EAGER = False

    def down(**kwargs):
        raise ConnectionError("redis is down")

    monkeypatch.setattr(classifier_retrieved_upload_task, "delay", down)
    with django_capture_on_commit_callbacks(execute=True):
        response = _post(api, corpus, BitMap([1]).serialize(), "r.roaring")
    build = ClassifierBuild.objects.get(pk=response.json()["id"])
    assert build.status == "failed" and build.error == retrieved_upload.RETRIEVED_QUEUE_DOWN
    assert not upload_absolute(build.definition["file"]).exists()


def test_a_lost_job_is_failed_by_the_stuck_sweep_and_its_file_removed(api, corpus, queued,
                                                                       django_capture_on_commit_callbacks):
    from datetime import timedelta

    from django.utils import timezone

    with django_capture_on_commit_callbacks(execute=True):
        _post(api, corpus, BitMap([1]).serialize(), "r.roaring")
    build = ClassifierBuild.objects.get()
    assert classifier_builds_stuck_fail(now=timezone.now() + timedelta(days=1)) == 1
    build.refresh_from_db()
    assert build.status == "failed" and not upload_absolute(build.definition["file"]).exists()


def test_without_a_broker_the_api_answers_as_before(api, corpus):
    """Eager (no broker, the test settings): the job ran before the answer: 201 with the classifier."""
    response = _post(api, corpus, _parquet(_ids(corpus)[:7]), "seven.parquet")
    assert response.status_code == 201 and response.json()["classifier"]["retrieved_count"] == 7


def test_the_page_says_the_file_is_resolved_in_the_background_and_the_row_limit(corpus):
    client = Client()
    client.force_login(user_with_role("retrieved-page-get", "analyst"))
    html = client.get(reverse("analyst:classifier_retrieved_upload", args=[corpus.pk])).content.decode()
    assert "resolved in the background" in html and "at most 100,000,000 rows" in html
