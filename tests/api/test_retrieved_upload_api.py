"""POST /api/v1/corpora/{id}/classifiers/retrieved/: a Roaring bitmap or a Parquet file of ids, multipart."""
from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from pyroaring import BitMap

from annotation.models import Classifier
from annotation.services.corpora.retrieved_sets import classifier_bitmap
from tests.factories import CorpusFactory, DocumentFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def corpus():
    corpus = CorpusFactory(name="ints")
    corpus.pks = {str(1000 + i): DocumentFactory(corpus=corpus, external_id=str(1000 + i)).pk for i in range(50)}
    corpus.document_count = 50
    corpus.save(update_fields=["document_count"])
    return corpus


def url(corpus) -> str:
    return f"/api/v1/corpora/{corpus.pk}/classifiers/retrieved/"


def parquet_bytes(columns: dict) -> bytes:
    out = io.BytesIO()
    pq.write_table(pa.table(columns), out)
    return out.getvalue()


def post(caller, corpus, content: bytes, filename: str, **fields):
    return caller.client.post(url(corpus), {"file": SimpleUploadedFile(filename, content), **fields},
                              format="multipart")


def test_bitmap_upload_creates_an_ids_classifier(analyst, corpus):
    wanted = [1000, 1003, 1010, 1049]
    response = post(analyst, corpus, BitMap(wanted).serialize(), "nightly.roaring", name="spark nightly")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["read"] == 4 and body["unknown_count"] == 0
    assert body["classifier"]["kind"] == "ids" and body["classifier"]["retrieved_count"] == 4
    assert body["classifier"]["definition"]["format"] == "roaring"
    classifier = Classifier.objects.get(pk=body["classifier"]["id"])
    assert set(classifier_bitmap(classifier=classifier)) == {corpus.pks[str(v)] for v in wanted}


def test_parquet_upload_detected_by_its_magic_with_a_named_column(analyst, corpus):
    data = parquet_bytes({"doc": ["1001", "1002", "1002"], "score": [0.9, 0.8, 0.8]})
    response = post(analyst, corpus, data, "part-0000.parquet", name="dask", column="doc")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["classifier"]["retrieved_count"] == 2
    assert body["classifier"]["definition"]["format"] == "parquet"
    assert body["classifier"]["definition"]["column"] == "doc"


def test_parquet_without_the_id_column_is_a_problem_naming_the_columns(analyst, corpus):
    response = post(analyst, corpus, parquet_bytes({"doc_id": ["1000"]}), "r.parquet", name="p")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/problem+json")
    assert "no column 'id'; the file has 'doc_id'" in response.json()["detail"]
    assert not Classifier.objects.exists()


@pytest.mark.parametrize("content", [b"garbage, not a bitmap", BitMap(range(0, 10_000, 3)).serialize()[:300]])
def test_corrupt_bitmap_is_a_problem_and_creates_nothing(analyst, corpus, content):
    response = post(analyst, corpus, content, "bad.roaring", name="b")
    assert response.status_code == 400
    assert "not a serialized 32-bit Roaring bitmap" in response.json()["detail"]
    assert not Classifier.objects.exists()


def test_ids_outside_the_corpus_are_refused_with_examples(analyst, corpus):
    response = post(analyst, corpus, BitMap([1000, 7001, 7002]).serialize(), "r.roaring", name="b")
    assert response.status_code == 400
    detail = response.json()["detail"]
    assert "2 of the 3 ids" in detail and "'7001'" in detail
    assert not Classifier.objects.exists()


def test_a_file_past_the_limit_is_413_with_max_bytes(analyst, corpus, settings):
    settings.RETRIEVED_UPLOAD_MAX_BYTES = 100
    content = parquet_bytes({"id": [str(v) for v in range(1000, 1050)]})
    assert len(content) > 100
    response = post(analyst, corpus, content, "big.parquet", name="big")
    assert response.status_code == 413
    body = response.json()
    assert body["max_bytes"] == 100 and "nothing was kept" in body["detail"]
    assert not Classifier.objects.exists()


def test_a_declared_body_past_the_limit_is_refused_before_reading(analyst, corpus, settings):
    settings.RETRIEVED_UPLOAD_MAX_BYTES = 10
    response = analyst.client.generic("POST", url(corpus), b"x" * 70_000,
                                      content_type="multipart/form-data; boundary=zzz")
    assert response.status_code == 413 and response.json()["max_bytes"] == 10


def test_validation_and_taken_name(analyst, corpus):
    response = post(analyst, corpus, BitMap([1000]).serialize(), "r.roaring", name="  ", format="zip")
    assert response.status_code == 400
    assert set(response.json()["errors"]) == {"name", "format"}
    assert post(analyst, corpus, BitMap([1000]).serialize(), "r.roaring", name="same").status_code == 201
    again = post(analyst, corpus, BitMap([1001]).serialize(), "r.roaring", name="same")
    assert again.status_code == 400 and "already has a classifier named 'same'" in again.json()["detail"]
    assert Classifier.objects.count() == 1


def test_json_body_is_unsupported(analyst, corpus):
    response = analyst.client.post(url(corpus), {"name": "x"}, format="json")
    assert response.status_code == 415


@pytest.mark.parametrize("role", ["manager", "annotator"])
def test_only_analysts(callers, corpus, role):
    response = post(callers[role], corpus, BitMap([1000]).serialize(), "r.roaring", name="b")
    assert response.status_code == 403
    assert not Classifier.objects.exists()
