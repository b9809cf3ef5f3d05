"""Trained classifiers through the API's classifier builds and the command-line client (issue 24 item 2):
202 and a build to poll, the corpus figures once done, a target precision the labels cannot support failed with
the reason, and `recall classifier train` waiting for the build."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from annotation.models import Classifier, ClassifierBuild
from annotation.services.classifiers import trained
from api.services import api_token_create
from tests.factories import cli_env as _env
from tests.factories import cli_run as _recall
from tests.factories import trained_corpus_world as make_world
from tests.factories import user_with_role

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "clients" / "recall-cli"))

SIZE = 1200


@pytest.fixture(autouse=True)
def _fewer_hashed_features(monkeypatch, settings, tmp_path):
    monkeypatch.setattr(trained, "N_FEATURES", 2**16)
    settings.MEDIA_ROOT = str(tmp_path)


@pytest.mark.django_db
def test_a_trained_build_answers_202_and_ends_with_the_corpus_figures(analyst, django_capture_on_commit_callbacks):
    corpus, _, _, topic = make_world(size=SIZE)
    url = f"/api/v1/corpora/{corpus.pk}/classifier-builds/"
    with django_capture_on_commit_callbacks(execute=True):
        response = analyst.client.post(url, {"name": "article", "kind": "trained", "fields": ["article"],
                                             "topic_id": topic.pk, "seed": 3, "threshold": 0.1}, format="json")
    assert response.status_code == 202, response.content
    polled = analyst.client.get(response["Location"]).json()
    assert polled["status"] == "done" and polled["kind"] == "trained", polled
    figures = polled["trained"]
    classifier = Classifier.objects.get(pk=polled["classifier_id"])
    # The API shows the classifier's stored corpus figures (their coverage of the truth is tested in
    # tests/annotation/test_trained_corpus.py and tests/estimation/stats/test_weighted_validation.py).
    estimate = classifier.definition["corpus_estimate"]
    assert figures["threshold"] == 0.1 and polled["retrieved"] == classifier.retrieved_count
    assert estimate["at_threshold"]["retrieved"] == classifier.retrieved_count
    assert figures["corpus_precision"] == estimate["at_threshold"]["precision"]
    assert figures["corpus_recall"] == estimate["at_threshold"]["recall"]
    assert figures["weighted_auc"] == estimate["scorer"]["weighted_auc"]
    assert figures["relevant_share_in_top"] == estimate["scorer"]["relevant_share_in_top"]
    assert 0 <= figures["corpus_precision"]["low"] <= figures["corpus_precision"]["high"] <= 1


@pytest.mark.django_db
def test_an_unsupported_target_fails_the_build_with_the_reason_and_bad_requests_are_400(
        analyst, django_capture_on_commit_callbacks):
    corpus, _, _, topic = make_world(size=SIZE)
    url = f"/api/v1/corpora/{corpus.pk}/classifier-builds/"
    with django_capture_on_commit_callbacks(execute=True):
        response = analyst.client.post(url, {"name": "strict", "kind": "trained", "fields": ["article"],
                                             "topic_id": topic.pk, "target_precision": 0.8}, format="json")
    assert response.status_code == 202, response.content
    polled = analyst.client.get(response["Location"]).json()
    assert polled["status"] == "failed" and "cannot support a target precision of 0.80" in polled["error"]
    assert polled["trained"] is None and not Classifier.objects.filter(name="strict").exists()
    both = analyst.client.post(url, {"name": "x", "kind": "trained", "fields": ["article"], "topic_id": topic.pk,
                                     "labels_classifier_id": 1}, format="json")
    assert both.status_code == 400
    view = analyst.client.post(url, {"name": "x", "kind": "trained", "fields": ["title"], "topic_id": topic.pk,
                                     "partner_id": Classifier.objects.get(name="title").pk}, format="json")
    assert view.status_code == 400 and "already reads title" in json.dumps(view.json())
    assert not ClassifierBuild.objects.filter(name="x").exists()


@pytest.mark.django_db(transaction=True)
def test_recall_classifier_train_waits_for_the_build(live_server):
    corpus, _, _, topic = make_world(size=SIZE)
    env = _env(live_server, api_token_create(user=user_with_role("pipeline", "analyst"), name="n").plaintext)
    done = _recall(env, "classifier", "train", "--corpus", corpus.name, "--name", "article", "--field", "article",
                   "--topic", topic.name, "--partner", "title", "--seed", "3", "--threshold", "0.1",
                   "--interval", "0.2", timeout=300)
    assert done.returncode == 0, done.stderr
    build = json.loads(done.stdout)
    assert build["status"] == "done" and build["trained"]["corpus_precision"]["high"] <= 1
    assert "precision on the corpus" in done.stderr and "weighted AUC" in done.stderr
    refused = _recall(env, "classifier", "train", "--corpus", corpus.name, "--name", "strict", "--field", "article",
                      "--topic", str(topic.pk), "--target-precision", "0.8", "--interval", "0.2", timeout=300)
    assert refused.returncode == 1 and "cannot support a target precision" in refused.stderr
