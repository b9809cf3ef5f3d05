"""The analyst page that turns a Roaring bitmap or a Parquet file of ids into a classifier."""
from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from pyroaring import BitMap

from annotation.models import Classifier
from tests.factories import PASSWORD, CorpusFactory, DocumentFactory, user_with_role

pytestmark = pytest.mark.django_db


@pytest.fixture
def corpus():
    corpus = CorpusFactory(name="ints <b>bold</b>")
    for i in range(30):
        DocumentFactory(corpus=corpus, external_id=str(2000 + i))
    corpus.document_count = 30
    corpus.save(update_fields=["document_count"])
    return corpus


def client_for(role: str | None) -> Client:
    client = Client()
    user_with_role(f"page-{role}", role)
    assert client.login(username=f"page-{role}", password=PASSWORD)
    return client


@pytest.fixture
def analyst() -> Client:
    return client_for("analyst")


def page(corpus) -> str:
    return reverse("analyst:classifier_retrieved_upload", args=[corpus.pk])


def parquet(columns: dict) -> bytes:
    out = io.BytesIO()
    pq.write_table(pa.table(columns), out)
    return out.getvalue()


def test_page_explains_formats_and_limit_and_escapes_the_corpus_name(analyst, corpus, settings):
    settings.RETRIEVED_UPLOAD_MAX_BYTES = 3 * 2**20
    response = analyst.get(page(corpus))
    html = response.content.decode()
    assert response.status_code == 200
    assert "Roaring bitmap" in html and "Parquet" in html and "3.0\xa0MB" in html
    assert "ints &lt;b&gt;bold&lt;/b&gt;" in html and "<b>bold</b>" not in html
    assert 'name="csrfmiddlewaretoken"' in html and 'enctype="multipart/form-data"' in html


def test_bitmap_upload_goes_to_the_new_classifier(analyst, corpus):
    upload = SimpleUploadedFile("nightly.roaring", BitMap([2000, 2001, 2029]).serialize())
    response = analyst.post(page(corpus), {"name": "spark", "file": upload, "file_format": "auto", "column": "id"})
    classifier = Classifier.objects.get(corpus=corpus, name="spark")
    assert response.status_code == 302 and response["Location"] == reverse("analyst:classifier", args=[classifier.pk])
    assert classifier.retrieved_count == 3 and classifier.definition["format"] == "roaring"
    followed = analyst.get(response["Location"])
    assert "3 documents retrieved of 3 ids read" in followed.content.decode()


def test_parquet_without_id_column_shows_the_columns_and_creates_nothing(analyst, corpus):
    upload = SimpleUploadedFile("part-0.parquet", parquet({"doc": ["2000"]}))
    response = analyst.post(page(corpus), {"name": "p", "file": upload, "file_format": "auto", "column": "id"})
    assert response.status_code == 200
    html = response.content.decode()
    assert "part-0.parquet: no column &#x27;id&#x27;; the file has &#x27;doc&#x27;" in html
    assert not Classifier.objects.exists()


def test_corrupt_bitmap_and_foreign_ids_are_explained(analyst, corpus):
    bad = SimpleUploadedFile("bad.roaring", b"not a bitmap at all")
    html = analyst.post(page(corpus), {"name": "b", "file": bad, "file_format": "roaring", "column": "id"}).content
    assert b"not a serialized 32-bit Roaring bitmap" in html
    foreign = SimpleUploadedFile("other.roaring", BitMap([2000, 9001, 9002]).serialize())
    html = analyst.post(page(corpus), {"name": "b", "file": foreign, "file_format": "auto", "column": "id"}).content
    assert b"2 of the 3 ids" in html and b"another corpus" in html
    assert not Classifier.objects.exists()


def test_too_big_file_is_refused_with_the_limit(analyst, corpus, settings):
    settings.RETRIEVED_UPLOAD_MAX_BYTES = 50
    upload = SimpleUploadedFile("big.parquet", parquet({"id": [str(2000 + i) for i in range(30)]}))
    response = analyst.post(page(corpus), {"name": "big", "file": upload, "file_format": "auto", "column": "id"})
    assert response.status_code == 200
    assert b"a retrieved-set file may have; nothing was kept" in response.content
    assert not Classifier.objects.exists()


def test_declared_body_past_the_limit_is_refused_without_reading_it(analyst, corpus, settings):
    settings.RETRIEVED_UPLOAD_MAX_BYTES = 10
    response = analyst.generic("POST", page(corpus), b"x" * 70_000, content_type="multipart/form-data; boundary=q")
    assert response.status_code == 413 and b"nothing was kept" in response.content
    assert not Classifier.objects.exists()


@pytest.mark.parametrize("role", ["manager", "annotator"])
def test_other_roles_are_refused(corpus, role):
    client = client_for(role)
    assert client.get(page(corpus)).status_code == 403
    upload = SimpleUploadedFile("r.roaring", BitMap([2000]).serialize())
    assert client.post(page(corpus), {"name": "x", "file": upload}).status_code == 403
    assert not Classifier.objects.exists()


def test_anonymous_goes_to_sign_in(corpus):
    response = Client().get(page(corpus))
    assert response.status_code == 302 and "login" in response["Location"]
