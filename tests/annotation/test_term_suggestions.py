"""Neighbour terms without stop words (issue 13 item 3, seed 000 Sec. 6.1.1).

The issue's example: seeds "bad, worst, boring" on short movie reviews gave "just, not, good, movie, it, is".
"""
from __future__ import annotations

import random

import pytest

from annotation.services.classifiers.classifier import ClassifierError
from annotation.services.classifiers.term_suggestions import (
    MIN_SEED_DOCUMENTS,
    STOP_WORDS,
    neighbour_terms_suggest,
    term_candidates_score,
    term_suggestions_rank,
)
from annotation.services.corpora.retrieved_sets import bitmap_from_ids, bitmap_to_bytes
from tests.factories import CorpusFactory, DocumentFactory

pytestmark = pytest.mark.django_db

SEEDS = ["bad", "worst", "boring"]
NEIGHBOURS = ["awful", "terrible", "waste", "dull"]
PRAISE = ["great", "wonderful", "loved", "brilliant"]
FILLER = ["it is just {} and not good", "this movie is just {}", "it is not a {} movie", "just {} , it is",
          "the movie is {} , not good at all"]


def _reviews(rng: random.Random) -> list[str]:
    """Short reviews: 40 negative (seed words and their neighbours), 150 positive; function words and "movie"
    everywhere, as in real reviews."""
    texts = []
    for i in range(40):
        words = [rng.choice(NEIGHBOURS)]
        if i < 34:  # most negative reviews use a seed word; a few only a neighbour
            words.append(rng.choice(SEEDS))
        if rng.random() < 0.5:
            words.append(rng.choice(NEIGHBOURS))
        rng.shuffle(words)
        texts.append(rng.choice(FILLER).format(" and ".join(words)))
    for _ in range(150):
        texts.append(rng.choice(FILLER).format(rng.choice(PRAISE)) + rng.choice(["", " the acting", " loved it"]))
    return texts


def _corpus(texts):
    corpus = CorpusFactory.create()
    pks = [DocumentFactory.create(corpus=corpus, external_id=f"r{i}", title="", text=text).pk
           for i, text in enumerate(texts)]
    corpus.documents_bitmap = bitmap_to_bytes(bitmap_from_ids(pks))
    corpus.document_count = len(pks)
    corpus.save()
    return corpus


@pytest.fixture
def reviews():
    return _corpus(_reviews(random.Random(13)))


def test_without_the_filters_the_ranking_is_led_by_function_words(reviews):
    """What the issue saw: the unfiltered Jaccard ranking of short texts suggests stop words."""
    raw = term_suggestions_rank(corpus=reviews, seed_terms=SEEDS, k=6, stop_words=frozenset(), max_doc_share=None,
                                min_length=1, min_lift=0).terms
    assert {"just", "it", "is", "not"} & {t.term for t in raw}


@pytest.mark.parametrize("measure", ["jaccard", "overlap"])
def test_no_stop_word_and_the_real_neighbours_are_suggested(reviews, measure):
    terms = term_suggestions_rank(corpus=reviews, seed_terms=SEEDS, k=6, measure=measure).terms
    words = [t.term for t in terms]
    assert not set(words) & STOP_WORDS
    assert not set(words) & {"just", "not", "it", "is", "movie", "good", "the", "and"}
    assert set(words[:4]) == set(NEIGHBOURS)  # the four neighbours lead the list
    assert not set(words) & set(SEEDS)


def test_the_rank_explains_what_it_dropped(reviews):
    result = term_suggestions_rank(corpus=reviews, seed_terms=SEEDS, k=6)
    assert result.documents == 190 and result.seed_documents == 34
    assert result.warnings == []
    assert result.dropped["stop word"] >= 4  # just, not, it, is, and, a, this, at, all…
    # "movie" is in more than half of the reviews: the document-frequency ceiling takes it. "good" ("not good",
    # "good at all") is as common in positive reviews as in negative ones: the lift takes it.
    assert result.dropped["in too many documents"] >= 1
    assert result.dropped["no more common with the seeds"] >= 1
    assert {"movie", "good"}.isdisjoint(t.term for t in result.terms)


def test_a_small_seed_set_is_said_to_be_too_small():
    corpus = _corpus(["a boring film with dull jokes", "boring and dull", "great fun", "great acting"])
    result = term_suggestions_rank(corpus=corpus, seed_terms=["boring"], k=5)
    assert result.seed_documents == 2
    assert len(result.warnings) == 1 and "only 2 documents" in result.warnings[0]
    assert str(MIN_SEED_DOCUMENTS) in result.warnings[0]
    assert [t.term for t in result.terms] == ["dull"]  # "a", "with", "and" are stop words; "film" in one document
    nothing = term_suggestions_rank(corpus=corpus, seed_terms=["absent"])
    assert nothing.terms == [] and "no document" in nothing.warnings[0]


def test_scores_are_the_papers_and_the_ceiling_needs_enough_documents():
    # Jaccard |A_y ∩ A_seed| / |A_y ∪ A_seed| and overlap |A_y ∩ A_seed| / |A_y| (seed 000 Sec. 6.1.1).
    doc_freq = {"rover": 6, "nasa": 10, "the": 30, "common": 25}
    seed_freq = {"rover": 5, "nasa": 5, "the": 10, "common": 9}
    terms, dropped = term_candidates_score(doc_freq=doc_freq, seed_freq=seed_freq, seed_size=10, documents=40)
    assert [(t.term, t.score) for t in terms] == [("rover", pytest.approx(5 / 11)), ("nasa", pytest.approx(5 / 15))]
    assert dropped == {"stop word": 1, "in too many documents": 1}
    overlap, _ = term_candidates_score(doc_freq=doc_freq, seed_freq=seed_freq, seed_size=10, documents=40,
                                       measure="overlap")
    assert [(t.term, t.score) for t in overlap] == [("rover", pytest.approx(5 / 6)), ("nasa", pytest.approx(0.5))]
    # Below MIN_DOCUMENTS_FOR_SHARES documents a share is too noisy: "common" stays (ceiling and lift off).
    few, dropped = term_candidates_score(doc_freq={"common": 12}, seed_freq={"common": 3}, seed_size=5, documents=19)
    assert [t.term for t in few] == ["common"] and dropped == {}


def test_bad_parameters_are_refused(reviews):
    with pytest.raises(ClassifierError, match="ceiling"):
        term_suggestions_rank(corpus=reviews, seed_terms=SEEDS, max_doc_share=0)
    with pytest.raises(ClassifierError, match="unknown measure"):
        term_suggestions_rank(corpus=reviews, seed_terms=SEEDS, measure="pmi")


def test_neighbour_terms_suggest_delegates_to_the_filtered_ranking(reviews):
    """annotation.services.classifiers.classifier.neighbour_terms_suggest (the page and the suggest_terms command; now in term_suggestions.py) gives the
    same list."""
    assert neighbour_terms_suggest(corpus=reviews, seed_terms=SEEDS, k=6) == term_suggestions_rank(
        corpus=reviews, seed_terms=SEEDS, k=6).terms
    assert not {t.term for t in neighbour_terms_suggest(corpus=reviews, seed_terms=SEEDS, k=10)} & STOP_WORDS
