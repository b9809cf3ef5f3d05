"""A classifier trained on another view (seed 000 §6.1.2, §7.2–7.3): labels, views, cross-fitting, determinism, page."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Classifier, ClassifierScore, Corpus, Document, Topic
from annotation.services.classifiers import trained
from annotation.services.classifiers.classifier import ClassifierError, classifier_create_keywords
from annotation.services.classifiers.trained import (
    FOLDS,
    classifier_create_trained,
    document_view,
    folds_assign,
    model_fit,
    vectorizer,
)
from annotation.services.corpora.retrieved_sets import bitmap_from_ids, bitmap_to_bytes, classifier_bitmap
from tests.factories import HOSTILE, make_label, user_with_role

pytestmark = pytest.mark.django_db
FULL_SIZE_TESTS = ("test_trained_on_the_article_from_judged_documents_retrieves_the_topic",)


@pytest.fixture(autouse=True)
def _fewer_hashed_features(request, monkeypatch):
    """A fit over 2**20 hashed features costs ~0.5 s whatever the data (dense weights): most tests use 2**16.

    The first test runs at the product's size and checks the definition records it.
    """
    if request.node.originalname not in FULL_SIZE_TESTS:
        monkeypatch.setattr(trained, "N_FEATURES", 2**16)

FARM = ["wheat harvest in the fields", "grain prices for farmers", "the farm tractor and the barley crop",
        "rain helps the maize harvest", "farmers sell wheat and grain"]
SPORT = ["the football match ended", "a goal in the last minute", "the striker scored twice",
         "tennis final on sunday", "the coach praised the team"]


def make_world(n: int = 120) -> tuple[Corpus, list[int], set[int]]:
    """Even positions are about farming (relevant): the status (title) says so in few words, the article at length."""
    corpus = Corpus.objects.create(name="stories")
    docs = []
    for i in range(n):
        relevant = i % 2 == 0
        words = FARM if relevant else SPORT
        title = ("farm news " if relevant else "sport news ") + str(i)
        article = f"{words[i % 5]}. {words[(i + 2) % 5]}. story {i} {HOSTILE}"
        docs.append(Document(corpus=corpus, external_id=f"s{i}", title=title, text="",
                             metadata={"article": article, "author": f"user{i % 7}"},
                             content_hash=hashlib.sha256(str(i).encode()).hexdigest()))
    Document.objects.bulk_create(docs)
    pks = list(Document.objects.filter(corpus=corpus).order_by("pk").values_list("pk", flat=True))
    corpus.documents_bitmap = bitmap_to_bytes(bitmap_from_ids(pks))
    corpus.document_count = len(pks)
    corpus.save()
    return corpus, pks, {pk for i, pk in enumerate(pks) if i % 2 == 0}


def judged_topic(corpus: Corpus, pks: list[int], relevant: set[int], n: int = 60) -> Topic:
    topic = Topic.objects.create(corpus=corpus, name="farming")
    for pk in pks[:n]:
        make_label(topic, pk, relevant=pk in relevant)
    make_label(topic, pks[n])  # incomplete: not a training label
    return topic


def scores_of(classifier: Classifier) -> dict[int, float]:
    return dict(ClassifierScore.objects.filter(classifier=classifier).values_list("document_id", "score"))


def test_trained_on_the_article_from_judged_documents_retrieves_the_topic():
    corpus, pks, relevant = make_world()
    topic = judged_topic(corpus, pks, relevant)
    c = classifier_create_trained(corpus=corpus, name="article model", fields=["article"], labels_from=topic, seed=3)
    assert c.kind == Classifier.Kind.TRAINED
    scores = scores_of(c)
    assert set(scores) == set(pks)  # the whole corpus is scored and kept
    assert set(classifier_bitmap(classifier=c)) == {pk for pk, s in scores.items() if s >= 0.5}
    # The unseen half of the corpus (positions 61…) is classified by its article alone.
    unseen = pks[61:]
    correct = sum((scores[pk] >= 0.5) == (pk in relevant) for pk in unseen)
    assert correct / len(unseen) > 0.9
    d = c.definition
    assert d["fields"] == ["article"] and d["n_positive"] == 30 and d["n_negative"] == 30 and d["seed"] == 3
    assert d["labels"]["source"] == "topic" and d["labels"]["topic_id"] == topic.pk
    assert d["features"]["n_features"] == 2**20 and d["features"]["ngram_range"] == [4, 4]
    assert d["features"]["analyzer"] == "char_wb" and d["model"]["class_weight"] == "balanced"
    cv = d["cross_validation"]
    assert cv["folds"] == 5 and cv["at_threshold"]["precision"] > 0.8 and cv["at_threshold"]["recall"] > 0.8
    assert cv["at_threshold"]["tp"] + cv["at_threshold"]["fn"] == 30  # counted over the training labels
    assert len(cv["curve"]) == 19


def test_same_seed_same_classifier():
    corpus, pks, relevant = make_world()
    topic = judged_topic(corpus, pks, relevant)
    a = classifier_create_trained(corpus=corpus, name="a", fields=["article"], labels_from=topic, seed=11)
    b = classifier_create_trained(corpus=corpus, name="b", fields=["article"], labels_from=topic, seed=11)
    assert scores_of(a) == scores_of(b)
    assert a.fingerprint == b.fingerprint or a.retrieved_bitmap == b.retrieved_bitmap
    assert a.definition["cross_validation"] == b.definition["cross_validation"]


def test_cross_fitting_a_training_document_is_scored_by_the_model_that_did_not_see_its_label():
    corpus, pks, relevant = make_world()
    topic = judged_topic(corpus, pks, relevant)
    c = classifier_create_trained(corpus=corpus, name="cf", fields=["article"], labels_from=topic, seed=5)
    scores = scores_of(c)
    train = np.array(sorted(pks[:60]), dtype=np.int64)
    labels = np.array([pk in relevant for pk in train])
    docs = {d.pk: d for d in Document.objects.filter(pk__in=train.tolist())}
    features = vectorizer().transform([document_view(title=docs[pk].title, text=docs[pk].text,
                                                     metadata=docs[pk].metadata, fields=["article"])
                                       for pk in train.tolist()])
    fold_of = folds_assign(labels=labels, seed=5)
    full = model_fit(features=features, labels=labels, seed=5).predict_proba(features)[:, 1]
    differs = 0
    for fold in range(FOLDS):
        held = fold_of == fold
        model = model_fit(features=features[~held], labels=labels[~held], seed=5)
        expected = model.predict_proba(features[held])[:, 1]
        stored = np.array([scores[pk] for pk in train[held].tolist()])
        assert np.allclose(stored, expected, rtol=0, atol=1e-12)
        differs += int(np.sum(np.abs(stored - full[held]) > 1e-9))
    assert differs == len(train)  # never the score of the model fitted on every label


def test_a_memorised_label_does_not_score_its_own_document():
    """A document labelled relevant whose article shares nothing with the others: only its own label could score it high."""
    corpus, pks, relevant = make_world()
    odd = Document.objects.get(pk=pks[1])  # a sport story...
    odd.metadata = {**odd.metadata, "article": "zyxqv blorptang quuxfrob wizzleplonk"}
    odd.save()
    topic = judged_topic(corpus, pks, relevant | {pks[1]})  # ...labelled relevant
    c = classifier_create_trained(corpus=corpus, name="m", fields=["article"], labels_from=topic, seed=2)
    features = vectorizer().transform(["zyxqv blorptang quuxfrob wizzleplonk"])
    train = sorted(pks[:60])
    labels = np.array([pk in relevant or pk == pks[1] for pk in train])
    docs = {d.pk: d for d in Document.objects.filter(pk__in=train)}
    all_features = vectorizer().transform([document_view(title="", text="", metadata=docs[pk].metadata,
                                                         fields=["article"]) for pk in train])
    seen = model_fit(features=all_features, labels=labels, seed=2).predict_proba(features)[0, 1]
    assert scores_of(c)[pks[1]] < seen  # the model that saw its label would score it higher


def test_partner_reading_the_same_field_is_refused_with_the_reason():
    corpus, pks, relevant = make_world()
    topic = judged_topic(corpus, pks, relevant)
    keywords = classifier_create_keywords(corpus=corpus, name="kw", terms=["farm"], fields=["title"])
    with pytest.raises(ClassifierError, match="conditionally independent") as info:
        classifier_create_trained(corpus=corpus, name="t", fields=["title", "article"], labels_from=topic, seed=1,
                                  partner=keywords)
    assert "title" in info.value.message
    # Noisy labels from the keyword filter: the filter is the partner, its field is refused too.
    with pytest.raises(ClassifierError, match="conditionally independent"):
        classifier_create_trained(corpus=corpus, name="t", fields=["TITLE"], labels_from=keywords, seed=1)
    assert not Classifier.objects.filter(kind=Classifier.Kind.TRAINED).exists()
    ok = classifier_create_trained(corpus=corpus, name="t", fields=["article"], labels_from=topic, seed=1,
                                   partner=keywords)
    assert ok.definition["partner"] == {"classifier_id": keywords.pk, "name": "kw", "fields": ["title"]}


def test_noisy_labels_from_another_classifier_on_the_other_view():
    corpus, pks, relevant = make_world()
    keywords = classifier_create_keywords(corpus=corpus, name="kw", terms=["farm"], fields=["title"])
    c = classifier_create_trained(corpus=corpus, name="from kw", fields=["article"], labels_from=keywords, seed=4)
    d = c.definition
    assert d["labels"]["source"] == "classifier" and d["labels"]["classifier_id"] == keywords.pk
    assert "noisy" in d["labels"]["label"] and d["n_positive"] == 60 and d["n_negative"] == 60
    assert set(classifier_bitmap(classifier=c)) == relevant  # the article view reproduces the title filter here


def test_too_few_labels_are_refused_with_the_counts():
    corpus, pks, relevant = make_world()
    topic = judged_topic(corpus, pks, relevant, n=30)  # 15 relevant, 15 not
    with pytest.raises(ClassifierError, match=r"15 relevant and 15 not relevant.*at least 20 of each"):
        classifier_create_trained(corpus=corpus, name="t", fields=["article"], labels_from=topic, seed=1)
    assert not Classifier.objects.exists()


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"fields": []}, "at least one field"),
    ({"fields": ["nosuch"]}, "has a field “nosuch”"),
    ({"threshold": 1.0}, "strictly between 0 and 1"),
    ({"name": "  "}, "needs a name"),
])
def test_mistakes_are_application_errors(kwargs, message):
    corpus, pks, relevant = make_world(60)
    topic = judged_topic(corpus, pks, relevant, n=50)
    arguments = {"corpus": corpus, "name": "t", "fields": ["article"], "labels_from": topic, "seed": 1, **kwargs}
    with pytest.raises(ClassifierError, match=message):
        classifier_create_trained(**arguments)


# --- the page ------------------------------------------------------------------------------------


def _client(role: str | None) -> Client:
    client = Client()
    client.force_login(user_with_role(f"user-{role}", role))
    return client


@pytest.mark.parametrize("role", ["manager", "annotator", None])
def test_page_is_for_analysts_only(role):
    corpus, pks, relevant = make_world(60)
    topic = judged_topic(corpus, pks, relevant, n=50)
    url = reverse("analyst:classifier_trained", args=[corpus.pk])
    client = _client(role)
    assert client.get(url).status_code == 403
    response = client.post(url, {"name": "t", "view_fields": ["article"], "labels_from": f"topic:{topic.pk}",
                                 "threshold": "0.5", "seed": "1"})
    assert response.status_code == 403 and not Classifier.objects.exists()
    assert Client().get(url).status_code == 302


def test_page_trains_and_shows_refusals_above_the_form():
    corpus, pks, relevant = make_world()
    topic = judged_topic(corpus, pks, relevant)
    keywords = classifier_create_keywords(corpus=corpus, name="kw " + HOSTILE, terms=["farm"], fields=["title"])
    client = _client("analyst")
    url = reverse("analyst:classifier_trained", args=[corpus.pk])
    page = client.get(url).content.decode()
    assert 'value="article"' in page and f'value="topic:{topic.pk}"' in page and HOSTILE not in page

    refused = client.post(url, {"name": "t", "view_fields": ["title"], "labels_from": f"classifier:{keywords.pk}",
                                "threshold": "0.5", "seed": "1"})
    html = refused.content.decode()
    assert refused.status_code == 200 and "conditionally independent" in html and HOSTILE not in html

    created = client.post(url, {"name": "t", "view_fields": ["article"], "labels_from": f"topic:{topic.pk}",
                                "partner": str(keywords.pk), "threshold": "0.5", "seed": "1"}, follow=True)
    c = Classifier.objects.get(name="t")
    assert created.redirect_chain[-1][0] == reverse("analyst:classifier", args=[c.pk])
    assert "cross-validated on its training labels: precision" in created.content.decode()
