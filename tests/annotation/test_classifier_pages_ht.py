"""Issue 12 (unarchive is confirmed on a page, never one click) and issue 13 item 3 (the neighbour-term page says
plainly when the seed set is too small, with the numbers)."""
from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Classifier
from annotation.services.classifiers.classifier import classifier_archive
from annotation.services.classifiers.term_suggestions import MIN_SEED_DOCUMENTS
from annotation.services.corpora.retrieved_sets import bitmap_from_ids, bitmap_to_bytes
from tests.factories import ClassifierFactory, CorpusFactory, DocumentFactory, corpus_build, user_with_role

pytestmark = pytest.mark.django_db


def _client(username: str, role: str | None) -> Client:
    user_with_role(username, role)
    client = Client()
    client.login(username=username, password="pw-for-tests-1")
    return client


@pytest.fixture
def analyst():
    return _client("ana", "analyst")


@pytest.fixture
def archived():
    corpus, ids = corpus_build(name="news", size=20)
    classifier = ClassifierFactory.create(corpus=corpus, name="kw <b>", ids=ids[:10])
    classifier_archive(classifier=classifier)
    return classifier


# --- unarchive --------------------------------------------------------------------------------------


def test_unarchive_get_only_asks_and_post_unarchives(analyst, archived):
    url = reverse("analyst:classifier_unarchive", args=[archived.pk])
    page = analyst.get(url)
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="confirm-unarchive"' in html and "csrfmiddlewaretoken" in html
    assert "kw &lt;b&gt;" in html and "kw <b>" not in html  # the name is escaped
    archived.refresh_from_db()
    assert archived.archived_at is not None  # the GET changed nothing
    response = analyst.post(url)
    assert response.status_code == 302 and response.url == reverse("analyst:classifier", args=[archived.pk])
    archived.refresh_from_db()
    assert archived.archived_at is None


def test_unarchive_of_a_live_classifier_says_so_and_changes_nothing(analyst):
    corpus, ids = corpus_build(name="live", size=10)
    classifier = ClassifierFactory.create(corpus=corpus, name="live", ids=ids[:5])
    url = reverse("analyst:classifier_unarchive", args=[classifier.pk])
    assert 'id="not-archived"' in analyst.get(url).content.decode()
    response = analyst.post(url, follow=True)
    assert response.status_code == 200
    assert "not archived" in " ".join(str(m) for m in response.context["messages"])
    assert Classifier.objects.get(pk=classifier.pk).archived_at is None


def test_unarchive_needs_the_analyst_role_and_csrf(archived):
    url = reverse("analyst:classifier_unarchive", args=[archived.pk])
    annotator = _client("ann", "annotator")
    assert annotator.get(url).status_code in (302, 403)
    assert annotator.post(url).status_code in (302, 403)
    archived.refresh_from_db()
    assert archived.archived_at is not None
    user_with_role("csrf", "analyst")
    strict = Client(enforce_csrf_checks=True)
    strict.login(username="csrf", password="pw-for-tests-1")
    assert strict.post(url).status_code == 403
    archived.refresh_from_db()
    assert archived.archived_at is not None


# --- neighbour terms ----------------------------------------------------------------------------------


def _corpus(texts: list[str]):
    corpus = CorpusFactory.create()
    pks = [DocumentFactory.create(corpus=corpus, external_id=f"d{i}", title="", text=t).pk
           for i, t in enumerate(texts)]
    corpus.documents_bitmap = bitmap_to_bytes(bitmap_from_ids(pks))
    corpus.document_count = len(pks)
    corpus.save()
    return corpus


def _suggest(client: Client, corpus, seeds: str, fragment: bool = False) -> str:
    params = {"suggest-seed_terms": seeds, "suggest-k": "5", "suggest-measure": "jaccard"}
    if fragment:
        params["fragment"] = "1"
    response = client.get(reverse("analyst:neighbour_terms", args=[corpus.pk]), params)
    assert response.status_code == 200
    return response.content.decode()


@pytest.mark.parametrize("fragment", [False, True])
def test_a_too_small_seed_set_is_said_plainly_with_the_numbers(analyst, fragment):
    texts = ["boring and dull plot", "boring dull acting", "boring, dull, long"] + [f"great fun {i}" for i in range(40)]
    corpus = _corpus(texts)
    html = _suggest(analyst, corpus, "boring", fragment)
    assert 'id="seed-set-too-small"' in html
    assert "find 3 documents" in html and f"at least {MIN_SEED_DOCUMENTS}" in html
    assert "match 3 of the 43 documents measured" in html
    assert "guesses" in html  # "dull" is still shown, but as a guess


def test_no_seed_document_at_all_is_not_no_related_terms(analyst):
    corpus = _corpus([f"great fun {i}" for i in range(30)])
    html = _suggest(analyst, corpus, "absent")
    assert 'id="seed-set-too-small"' in html and "find 0 documents" in html
    assert "No related terms found" not in html  # the reason is the seed set, not the corpus


def test_an_adequate_seed_set_gets_no_warning(analyst):
    texts = ([f"boring dull film {i}" for i in range(MIN_SEED_DOCUMENTS)]
             + [f"great fun show {i}" for i in range(3 * MIN_SEED_DOCUMENTS)])
    corpus = _corpus(texts)
    html = _suggest(analyst, corpus, "boring")
    assert 'id="seed-set-too-small"' not in html
    assert f"match {MIN_SEED_DOCUMENTS} of the {4 * MIN_SEED_DOCUMENTS} documents" in html
    assert 'data-term="dull"' in html
