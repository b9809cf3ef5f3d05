"""The trained classifier measured on the corpus (issues 23 and 24 item 2).

A synthetic corpus where the judged documents were drawn from a pair's regions (rich in relevant documents)
and the trained view cannot tell the relevant documents from a fifth of the others ("decoys" whose article
reads like a farming one). The old page showed the cross-validated precision on the training labels; this
test first reproduces it far above the corpus truth, then checks that the figures now stored and shown are
corpus-level estimates whose interval covers the truth, that an unsupported target precision is refused with
the reason, and that the scorer's quality (weighted AUC, share of relevant documents in the top 5%) is stored.
"""
from __future__ import annotations

import numpy as np
import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Classifier, ClassifierScore, Document, SampleDraw
from annotation.services.classifiers import trained
from annotation.services.classifiers.classifier import ClassifierError
from annotation.services.classifiers.trained import (
    FOLDS,
    DesignLabels,
    classifier_create_trained,
    document_view,
    folds_assign,
    model_fit,
    trained_evaluate,
    vectorizer,
)
from annotation.services.corpora.retrieved_sets import classifier_bitmap
from tests.factories import TRAINED_CORPUS_SIZE as SIZE
from tests.factories import trained_corpus_world as make_world
from tests.factories import user_with_role

pytestmark = pytest.mark.django_db



@pytest.fixture(autouse=True)
def _fewer_hashed_features(monkeypatch):
    monkeypatch.setattr(trained, "N_FEATURES", 2**16)


def precision_of(retrieved: set[int], relevant: dict[int, bool]) -> float:
    return sum(relevant[pk] for pk in retrieved) / len(retrieved)


def test_the_old_figure_was_far_above_the_corpus_truth_and_the_new_one_covers_it():
    corpus, pks, relevant, topic = make_world()
    # The defect, reproduced with the old rules (unweighted, class-balanced fit; precision counted on the
    # out-of-fold scores of the training labels, as the old page showed it).
    training = trained._labels_from_topic(topic=topic, corpus=corpus)
    texts = trained._texts_of(training.pks, ["article"])
    features = vectorizer().transform(texts)
    folds = folds_assign(labels=training.labels, seed=3)
    oof = np.empty(len(training.labels))
    for fold in range(FOLDS):
        held = folds == fold
        oof[held] = model_fit(features=features[~held], labels=training.labels[~held], seed=3).predict_proba(
            features[held])[:, 1]
    old_shown = trained._confusion(oof, training.labels, 0.5)["precision"]
    old_model = model_fit(features=features, labels=training.labels, seed=3)
    docs = {d.pk: d for d in Document.objects.filter(corpus=corpus)}
    corpus_scores = old_model.predict_proba(vectorizer().transform(
        [document_view(title=docs[pk].title, text=docs[pk].text, metadata=docs[pk].metadata, fields=["article"])
         for pk in pks.tolist()]))[:, 1]
    position = {int(pk): i for i, pk in enumerate(pks.tolist())}
    for pk, score in zip(training.pks.tolist(), oof.tolist(), strict=True):
        corpus_scores[position[pk]] = score  # cross-fitted, as stored
    old_retrieved = {int(pk) for pk, s in zip(pks.tolist(), corpus_scores.tolist(), strict=True) if s >= 0.5}
    old_truth = precision_of(old_retrieved, relevant)
    print(f"old: shown {old_shown:.3f}, corpus truth {old_truth:.3f} ({len(old_retrieved)} retrieved)")
    assert old_shown > 0.6 and old_shown > 3 * old_truth
    # The new estimator on the *old* classifier's retrieved set: its interval covers that truth.
    judged = DesignLabels(pks=training.pks, labels=training.labels, scores=oof, stratum=training.stratum,
                          design=training.design)
    on_old = trained_evaluate(definition={"seed": 3, "threshold": 0.5, "target_precision": None}, judged=judged,
                              pks=pks, scores=corpus_scores)["corpus_estimate"]["at_threshold"]
    print(f"new estimator on the old classifier: {on_old['precision']}")
    assert on_old["retrieved"] == len(old_retrieved)
    assert on_old["precision"]["low"] <= old_truth <= on_old["precision"]["high"]
    assert on_old["precision"]["high"] < old_shown

    # The classifier as now built: weighted by 1/π, its figures are the corpus's, with their interval.
    c = classifier_create_trained(corpus=corpus, name="article", fields=["article"], labels_from=topic, seed=3,
                                  threshold=0.1)
    d = c.definition
    assert d["model"]["class_weight"] is None and "sample_weight" in d["model"]
    estimate = d["corpus_estimate"]
    at = estimate["at_threshold"]
    retrieved = set(classifier_bitmap(classifier=c))
    truth = precision_of(retrieved, relevant)
    relevant_total = sum(relevant.values())
    truth_recall = sum(relevant[pk] for pk in retrieved) / relevant_total
    print(f"new: shown {at['precision']} (truth {truth:.3f}, {len(retrieved)} retrieved); "
          f"recall {at['recall']} (truth {truth_recall:.3f}); scorer {estimate['scorer']}")
    assert at["retrieved"] == len(retrieved) and at["threshold"] == 0.1
    assert at["precision"]["low"] <= truth <= at["precision"]["high"]
    assert at["recall"]["low"] <= truth_recall <= at["recall"]["high"]
    assert {s["region"] for s in estimate["strata"]} == {"A12", "B1", "B2", "N"}
    assert all(r["covered"] == r["size"] for r in estimate["regions"].values())
    assert len(estimate["curve"]) == len(trained.THRESHOLD_GRID)
    scorer = estimate["scorer"]
    assert 0.5 < scorer["weighted_auc"] <= 1.0 and scorer["top_documents"] == SIZE // 20
    top = set(ClassifierScore.objects.filter(classifier=c, score__gte=scorer["top_threshold"])
              .values_list("document_id", flat=True))
    top_truth = precision_of(top, relevant)
    assert scorer["relevant_share_in_top"]["low"] <= top_truth <= scorer["relevant_share_in_top"]["high"]

    # The page shows the corpus figures, not the training-label ones as precision.
    client = Client()
    client.force_login(user_with_role("analyst", "analyst"))
    page = client.get(reverse("analyst:classifier", args=[c.pk])).content.decode()
    assert "Precision on the corpus" in page and f"{at['precision']['low']:.3f}" in page
    assert "Weighted AUC" in page and "not the corpus precision" in page


def test_a_target_precision_the_labels_cannot_support_is_refused_with_the_reason():
    corpus, _, _, topic = make_world(size=1500)
    with pytest.raises(ClassifierError, match=r"cannot support a target precision of 0\.80: at best .* at least"):
        classifier_create_trained(corpus=corpus, name="strict", fields=["article"], labels_from=topic, seed=3,
                                  threshold=None, target_precision=0.8)
    assert not Classifier.objects.filter(name="strict").exists()


def test_a_reachable_target_takes_the_lowest_threshold_whose_lower_bound_reaches_it():
    corpus, _, _, topic = make_world(size=1500)
    c = classifier_create_trained(corpus=corpus, name="loose", fields=["article"], labels_from=topic, seed=3,
                                  threshold=None, target_precision=0.02)
    at = c.definition["corpus_estimate"]["at_threshold"]
    assert at["precision"]["low"] >= 0.02 and at["judged_retrieved"] >= trained.MIN_JUDGED_RETRIEVED
    assert c.definition["threshold"] == at["threshold"] and at["threshold"] in trained.TARGET_GRID
    # No lower threshold of the grid qualifies (the curve's rows below it are coarser: check them all there).
    lower = [row for row in c.definition["corpus_estimate"]["curve"] if row["threshold"] < at["threshold"]]
    assert all(row["precision"]["low"] < 0.02 or row["judged_retrieved"] < trained.MIN_JUDGED_RETRIEVED
               for row in lower)


def test_an_unsampled_complement_leaves_the_precision_open():
    corpus, pks, relevant, topic = make_world(size=1500)
    # Forget the complement's sample: its documents' relevance is then unknown.
    n_draw = SampleDraw.objects.get(topic=topic, region="N")
    for doc in n_draw.documents.values_list("document_id", flat=True):
        topic.labels.filter(document_id=doc).delete()
    n_draw.delete()
    c = classifier_create_trained(corpus=corpus, name="open", fields=["article"], labels_from=topic, seed=3,
                                  threshold=0.1)
    estimate = c.definition["corpus_estimate"]
    at = estimate["at_threshold"]
    assert estimate["regions"]["N"]["covered"] == 0
    assert at["unsampled_retrieved"] > 0 and at["precision"]["point"] is None
    truth = precision_of(set(classifier_bitmap(classifier=c)), relevant)
    assert at["precision"]["low"] <= truth <= at["precision"]["high"]
