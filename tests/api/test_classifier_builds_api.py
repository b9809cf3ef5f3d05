"""Classifiers built by tasks through the API: 202, a build to poll, the classifier at the end (issue 15)."""
from __future__ import annotations

import io

import pytest

from annotation.models import Classifier, ClassifierBuild, Corpus
from tests.factories import make_documents

pytestmark = pytest.mark.django_db


@pytest.fixture
def corpus() -> Corpus:
    corpus = Corpus.objects.create(name="wire")
    make_documents(corpus, 40, texts=["coffee prices rose" if i % 4 == 0 else "wheat harvest news" for i in range(40)])
    corpus.refresh_from_db()
    return corpus


def _file(content: bytes, name: str) -> io.BytesIO:
    upload = io.BytesIO(content)
    upload.name = name
    return upload


def test_keywords_answer_202_and_the_build_ends_with_the_classifier(analyst, corpus, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = analyst.client.post(f"/api/v1/corpora/{corpus.pk}/classifier-builds/",
                                       {"name": "coffee words", "terms": ["coffee"], "fields": ["text"]}, format="json")
    assert response.status_code == 202, response.content
    build = ClassifierBuild.objects.get(name="coffee words")
    assert response["Location"] == f"/api/v1/classifier-builds/{build.pk}/" == response.json()["url"]
    polled = analyst.client.get(response["Location"]).json()
    assert polled["status"] == "done" and polled["kind"] == "keywords"
    assert polled["processed"] == polled["total"] == 40 and polled["retrieved"] == 10
    classifier = Classifier.objects.get(pk=polled["classifier_id"])
    assert classifier.name == "coffee words" and classifier.retrieved_count == 10
    assert analyst.client.get(f"/api/v1/classifiers/{classifier.pk}/").json()["retrieved_count"] == 10


def test_an_ids_file_is_built_with_its_unknown_ids_counted(analyst, corpus, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = analyst.client.post(f"/api/v1/corpora/{corpus.pk}/classifier-builds/",
                                       {"name": "engine", "kind": "ids", "file": _file(b"d1\nd2\nd3\nnope\n", "ids.txt")},
                                       format="multipart")
    assert response.status_code == 202, response.content
    polled = analyst.client.get(response["Location"]).json()
    assert polled["status"] == "done" and polled["retrieved"] == 3
    assert polled["unknown_count"] == 1 and polled["unknown_examples"] == ["nope"]


def test_a_scores_file_with_its_threshold(analyst, corpus, django_capture_on_commit_callbacks):
    csv = b"id,score\nd1,0.9\nd2,0.2\nd3,0.7\n"
    with django_capture_on_commit_callbacks(execute=True):
        response = analyst.client.post(f"/api/v1/corpora/{corpus.pk}/classifier-builds/",
                                       {"name": "model", "kind": "scores", "threshold": "0.5",
                                        "file": _file(csv, "scores.csv")}, format="multipart")
    assert response.status_code == 202, response.content
    polled = analyst.client.get(response["Location"]).json()
    assert polled["status"] == "done" and polled["retrieved"] == 2


def test_mistakes_are_400_and_start_nothing(analyst, corpus):
    url = f"/api/v1/corpora/{corpus.pk}/classifier-builds/"
    Classifier.objects.create(corpus=corpus, name="taken", kind=Classifier.Kind.KEYWORDS, definition={})
    for body, fmt, needle in [
        ({"name": "taken", "terms": ["coffee"]}, "json", "already has a classifier named"),
        ({"name": "x", "terms": []}, "json", "terms"),
        ({"name": "y", "kind": "scores", "threshold": "0.5", "file": _file(b"id,score\nd1,high\n", "s.csv")},
         "multipart", "s.csv, line 2: score 'high' is not a number"),
        ({"name": "z", "kind": "trained", "file": _file(b"d1\n", "i.txt")}, "multipart", "kind"),
    ]:
        response = analyst.client.post(url, body, format=fmt)
        assert response.status_code == 400, (body, response.content)
        assert response["Content-Type"].startswith("application/problem+json")
        assert needle in response.json()["detail"], (needle, response.content)
        assert "classifier-uploads" not in response.content.decode()  # no server path in the answer
    assert not ClassifierBuild.objects.exists()
    assert analyst.client.post(url, b"d1\n", content_type="text/plain").status_code == 415


def test_other_roles_and_other_builds(callers, corpus):
    url = f"/api/v1/corpora/{corpus.pk}/classifier-builds/"
    for role in ("manager", "annotator"):
        assert callers[role].client.post(url, {"name": "n", "terms": ["coffee"]}, format="json").status_code == 403
    assert callers[None].client.post(url, {"name": "n", "terms": ["coffee"]}, format="json").status_code == 403
    assert callers["analyst"].client.get("/api/v1/classifier-builds/999999/").status_code == 404
