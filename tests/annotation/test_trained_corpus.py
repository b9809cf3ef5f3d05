"""The trained classifier measured on the corpus (issues 23 and 24 item 2).

A synthetic corpus where the judged documents were drawn from a pair's regions (rich in relevant documents)
and the trained view cannot tell the relevant documents from a fifth of the others ("decoys" whose article
reads like a farming one). The old page showed the cross-validated precision on the training labels; this
test first reproduces it far above the corpus truth, then checks that the figures now stored and shown are
corpus-level estimates whose interval covers the truth, that an unsupported target precision is refused with
the reason, and that the scorer's quality (weighted AUC, share of relevant documents in the top 5%) is stored.
"""
from __future__ import annotations

import hashlib

import numpy as np
import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Classifier, ClassifierPair, ClassifierScore, Corpus, Document, SampleDraw, Topic
from annotation.services.classifiers import trained
from annotation.services.classifiers.classifier import ClassifierError, classifier_create_keywords
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
from annotation.services.corpora.retrieved_sets import bitmap_from_ids, bitmap_to_bytes, classifier_bitmap, pair_regions
from annotation.services.sampling.draws import region_sample_draw
from tests.factories import make_label, user_with_role

pytestmark = pytest.mark.django_db

FARM = ["wheat harvest in the fields", "grain prices for farmers", "the farm tractor and the barley crop",
        "rain helps the maize harvest", "farmers sell wheat and grain"]
SPORT = ["the football match ended", "a goal in the last minute", "the striker scored twice",
         "tennis final on sunday", "the coach praised the team"]
SIZE = 3000


@pytest.fixture(autouse=True)
def _fewer_hashed_features(monkeypatch):
    monkeypatch.setattr(trained, "N_FEATURES", 2**16)


def make_world(seed: int = 7, size: int = SIZE) -> tuple[Corpus, np.ndarray, dict[int, bool], Topic]:
    """The synthetic corpus (module docstring), its keyword pair (title "farm", text "harvest") and a topic whose
    pair regions were drawn (A12 whole, 30 of B1 and B2, 120 of N) and judged with the truth."""
    rng = np.random.default_rng(seed)
    corpus = Corpus.objects.create(name="farms")
    truth = rng.random(size) < 0.03
    decoy = ~truth & (rng.random(size) < 0.2)
    docs = []
    for i in range(size):
        rel = bool(truth[i])
        farm_title = rng.random() < (0.8 if rel else 0.012)
        harvest = rng.random() < (0.8 if rel else 0.012)
        words = FARM if rel or decoy[i] else SPORT
        article = f"{words[rng.integers(5)]}. {words[rng.integers(5)]}. story {i}"
        docs.append(Document(corpus=corpus, external_id=f"d{i}", title=("farm " if farm_title else "daily ") + f"t{i}",
                             text=("harvest " if harvest else "weather ") + f"x{i}", metadata={"article": article},
                             content_hash=hashlib.sha256(str(i).encode()).hexdigest()))
    Document.objects.bulk_create(docs)
    pks = np.array(Document.objects.filter(corpus=corpus).order_by("pk").values_list("pk", flat=True), dtype=np.int64)
    corpus.documents_bitmap = bitmap_to_bytes(bitmap_from_ids(pks.tolist()))
    corpus.document_count = len(pks)
    corpus.save()
    relevant = {int(pk): bool(truth[i]) for i, pk in enumerate(pks)}
    c1 = classifier_create_keywords(corpus=corpus, name="title", terms=["farm"], fields=["title"])
    c2 = classifier_create_keywords(corpus=corpus, name="text", terms=["harvest"], fields=["text"])
    topic = Topic.objects.create(corpus=corpus, name="farming")
    ClassifierPair.objects.create(topic=topic, c1=c1, c2=c2)
    regions = pair_regions(c1=c1, c2=c2)
    for code, k in (("A12", 200), ("B1", 30), ("B2", 30), ("N", 120)):
        draw = region_sample_draw(topic=topic, region=code, bitmap=regions.by_code(code), k=k, seed=11,
                                  purpose=SampleDraw.Purpose.PAIR)
        for doc in draw.documents.values_list("document_id", flat=True):
            make_label(topic, doc, relevant=relevant[doc])
    return corpus, pks, relevant, topic


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
