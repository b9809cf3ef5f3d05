"""Field-value filters (seed 000 §6.1.3): author in a list, mention of an account; the page (analysts only)."""
from __future__ import annotations

import hashlib

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Classifier, Corpus, Document
from annotation.services.classifiers.classifier import ClassifierError
from annotation.services.classifiers.field_values import (
    classifier_create_field_values,
    corpus_metadata_keys,
    field_values_preview,
)
from annotation.services.corpora.retrieved_sets import bitmap_from_ids, bitmap_to_bytes, classifier_bitmap
from tests.factories import HOSTILE, user_with_role

pytestmark = pytest.mark.django_db

# external id -> metadata
DOCS: dict[str, dict] = {
    "plain": {"author": "NASA", "mentions": ["@MarsCuriosity", "@esa"]},
    "lower": {"author": "nasa ", "mentions": []},
    "other": {"author": "nasa_fan", "mentions": ["@nasa"]},
    "listed": {"author": "someone", "mentions": ["@esa", "@BarackObama"]},
    "scalar_mention": {"author": "x", "mentions": "@barackobama"},
    "number": {"author": 42},
    "nested": {"author": {"name": "nasa"}},
    "null": {"author": None},
    "missing": {"lang": "en"},
    "hostile": {"author": HOSTILE, "mentions": [HOSTILE]},
}


def make_corpus(docs: dict[str, dict] = DOCS, name: str = "tweets") -> tuple[Corpus, dict[str, int]]:
    corpus = Corpus.objects.create(name=name)
    Document.objects.bulk_create([
        Document(corpus=corpus, external_id=eid, title=f"title {eid} {HOSTILE}", text=f"text {eid}", metadata=meta,
                 content_hash=hashlib.sha256(eid.encode()).hexdigest())
        for eid, meta in docs.items()
    ])
    pks = dict(Document.objects.filter(corpus=corpus).values_list("external_id", "pk"))
    corpus.documents_bitmap = bitmap_to_bytes(bitmap_from_ids(pks.values()))
    corpus.document_count = len(pks)
    corpus.save()
    return corpus, pks


def retrieved(classifier: Classifier, pks: dict[str, int]) -> set[str]:
    by_pk = {pk: eid for eid, pk in pks.items()}
    return {by_pk[pk] for pk in classifier_bitmap(classifier=classifier)}


def test_author_in_a_list_matches_exactly_ignoring_case_and_surrounding_space():
    corpus, pks = make_corpus()
    c = classifier_create_field_values(corpus=corpus, name="nasa authors", field="author", values=["NaSa", " 42 "])
    # "nasa_fan" is another value (exact match), the nested object never matches, a number by its written form.
    assert retrieved(c, pks) == {"plain", "lower", "number"}
    assert c.kind == Classifier.Kind.FIELD_VALUES and c.retrieved_count == 3
    assert c.definition == {"field": "author", "values": ["nasa", "42"]}


def test_list_valued_field_matches_any_element_and_a_scalar_value_too():
    corpus, pks = make_corpus()
    c = classifier_create_field_values(corpus=corpus, name="obama", field="mentions", values=["@barackobama"])
    assert retrieved(c, pks) == {"listed", "scalar_mention"}
    c2 = classifier_create_field_values(corpus=corpus, name="esa or curiosity", field="mentions",
                                        values=["@ESA", "@marscuriosity", "", "@esa"])
    assert retrieved(c2, pks) == {"plain", "listed"}
    assert c2.definition["values"] == ["@esa", "@marscuriosity"]  # de-duplicated, blank lines dropped


def test_hostile_value_matches_as_plain_text():
    corpus, pks = make_corpus()
    c = classifier_create_field_values(corpus=corpus, name="h", field="mentions", values=[HOSTILE.upper()])
    assert retrieved(c, pks) == {"hostile"}


@pytest.mark.parametrize(("field", "values", "message"), [
    ("", ["nasa"], "choose the field"),
    ("author", ["", "  "], "at least one value"),
    ("nosuchfield", ["nasa"], "no document of corpus"),
    ("author", ["x" * 501], "longer than 500"),
])
def test_mistakes_are_application_errors(field, values, message):
    corpus, _ = make_corpus()
    with pytest.raises(ClassifierError, match=message):
        classifier_create_field_values(corpus=corpus, name="c", field=field, values=values)
    assert not Classifier.objects.exists()


def test_name_taken_is_refused():
    corpus, _ = make_corpus()
    classifier_create_field_values(corpus=corpus, name="same", field="author", values=["nasa"])
    with pytest.raises(ClassifierError, match="already has a classifier"):
        classifier_create_field_values(corpus=corpus, name="same", field="author", values=["esa"])


def test_unknown_field_error_names_the_fields_found():
    corpus, _ = make_corpus()
    with pytest.raises(ClassifierError) as info:
        classifier_create_field_values(corpus=corpus, name="c", field="auteur", values=["nasa"])
    assert "author" in info.value.message and "mentions" in info.value.message


def test_metadata_keys_most_frequent_first_with_list_flag():
    corpus, _ = make_corpus()
    keys = {k.name: k for k in corpus_metadata_keys(corpus=corpus)}
    assert [k.name for k in corpus_metadata_keys(corpus=corpus)][:2] == ["author", "mentions"]
    assert keys["author"].documents == 9 and not keys["author"].list_valued
    assert keys["mentions"].list_valued and keys["lang"].documents == 1


def test_preview_counts_per_value_and_shows_matching_documents():
    corpus, pks = make_corpus()
    preview = field_values_preview(corpus=corpus, field="mentions", values=["@esa", "@nobody"])
    assert preview.retrieved == 2 and not preview.estimated and preview.corpus_size == len(DOCS)
    assert preview.per_value == [("@esa", 2), ("@nobody", 0)]
    assert {d.external_id for d in preview.sample} == {"plain", "listed"}
    assert all(d.value == "@esa" for d in preview.sample)


def test_preview_on_a_large_corpus_is_estimated_on_a_sample(monkeypatch):
    from annotation.services.classifiers import field_values

    docs = {f"d{i}": {"author": "a" if i % 4 == 0 else "b"} for i in range(400)}
    corpus, _ = make_corpus(docs)
    monkeypatch.setattr(field_values, "PREVIEW_SAMPLE_DOCUMENTS", 200)
    preview = field_values_preview(corpus=corpus, field="author", values=["A"])
    assert preview.estimated and preview.scanned == 200
    assert 60 <= preview.retrieved <= 140  # 100 true; scaled up from a 200-document sample
    exact = classifier_create_field_values(corpus=corpus, name="a", field="author", values=["a"])
    assert exact.retrieved_count == 100


# --- the page -------------------------------------------------------------------------------------


def _client(role: str | None) -> Client:
    client = Client()
    client.force_login(user_with_role(f"user-{role}", role))
    return client


@pytest.mark.parametrize("role", ["manager", "annotator", None])
def test_page_is_for_analysts_only(role):
    corpus, _ = make_corpus()
    url = reverse("analyst:classifier_field_values", args=[corpus.pk])
    client = _client(role)
    assert client.get(url).status_code == 403
    response = client.post(url, {"name": "n", "field": "author", "values": "nasa", "create": "1"})
    assert response.status_code == 403 and not Classifier.objects.exists()
    anonymous = Client().get(url)
    assert anonymous.status_code == 302 and "login" in anonymous["Location"]


def test_page_offers_the_corpus_fields_previews_and_creates():
    corpus, pks = make_corpus()
    client = _client("analyst")
    url = reverse("analyst:classifier_field_values", args=[corpus.pk])
    page = client.get(url).content.decode()
    assert '<option value="author"' in page and '<option value="mentions"' in page
    assert HOSTILE not in page  # example values and titles are escaped

    preview = client.post(url, {"name": "", "field": "mentions", "values": "@ESA\n@nobody", "preview": "1"})
    html = preview.content.decode()
    assert preview.status_code == 200 and not Classifier.objects.exists()
    assert 'id="preview-count">2<' in html and "@nobody" in html and "title plain" in html
    assert HOSTILE not in html

    created = client.post(url, {"name": "esa", "field": "mentions", "values": "@ESA\n@nobody", "create": "1"})
    c = Classifier.objects.get(name="esa")
    assert created.status_code == 302 and created["Location"] == reverse("analyst:classifier", args=[c.pk])
    assert retrieved(c, pks) == {"plain", "listed"}


def test_page_shows_service_errors_above_the_form_and_keeps_input():
    corpus, _ = make_corpus()
    client = _client("analyst")
    url = reverse("analyst:classifier_field_values", args=[corpus.pk])
    response = client.post(url, {"name": "kept name", "field": "author", "values": "nasa\n" + "x" * 501, "create": "1"})
    html = response.content.decode()
    assert response.status_code == 200 and "longer than 500 characters" in html and 'value="kept name"' in html
    assert not Classifier.objects.exists()


def test_the_fingerprint_names_the_field_and_values_not_only_the_retrieved_set():
    """Two filters retrieving the same documents through different values are different classifiers."""
    from annotation.services.classifiers.classifier import classifier_fingerprint
    from annotation.services.corpora.retrieved_sets import bitmap_from_ids

    retrieved = bitmap_from_ids([1, 2, 3])
    one = classifier_fingerprint(kind=Classifier.Kind.FIELD_VALUES, definition={"field": "author", "values": ["a", "b"]},
                                 retrieved=retrieved)
    same = classifier_fingerprint(kind=Classifier.Kind.FIELD_VALUES, definition={"field": "author", "values": ["b", "a"]},
                                  retrieved=retrieved)
    other = classifier_fingerprint(kind=Classifier.Kind.FIELD_VALUES, definition={"field": "author", "values": ["c"]},
                                   retrieved=retrieved)
    trained = {"fields": ["text"], "labels": "topic 1", "seed": 1, "threshold": 0.5}
    moved = classifier_fingerprint(kind=Classifier.Kind.TRAINED, definition={**trained, "threshold": 0.6},
                                   retrieved=retrieved)
    assert one == same and one != other
    assert classifier_fingerprint(kind=Classifier.Kind.TRAINED, definition=trained, retrieved=retrieved) != moved
