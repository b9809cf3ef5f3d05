"""Region N: the documents neither classifier of the pair retrieved, U ∖ (A1 ∪ A2) (issue 11, dependence check)."""
import time

import pytest
from pyroaring import BitMap

from annotation.models import ClassifierPair, Region
from annotation.services.corpora.retrieved_sets import bitmap_from_ids, bitmap_to_bytes, pair_regions, region_counts
from annotation.services.sampling.draws import region_bitmap
from tests.factories import ClassifierFactory, CorpusFactory, DocumentFactory, TopicFactory, make_pair_world

pytestmark = pytest.mark.django_db


def test_region_n_is_the_corpus_minus_both_retrieved_sets():
    world = make_pair_world(n=800, prevalence=0.1, seed=5)
    expected = set(world.doc_ids) - world.a1 - world.a2
    assert Region.NEITHER == "N"
    assert set(region_bitmap(topic=world.topic, region="N")) == expected
    regions = pair_regions(c1=world.topic.pair.c1, c2=world.topic.pair.c2)
    assert set(regions.by_code("N")) == expected
    counts = regions.counts()
    assert counts["N"] == len(expected)
    # The four disjoint regions partition the corpus.
    assert counts["A12"] + counts["B1"] + counts["B2"] + counts["N"] == len(world.doc_ids)


def test_region_counts_add_n_only_when_asked():
    world = make_pair_world(n=500, prevalence=0.1, seed=6)
    pair = world.topic.pair
    plain = region_counts(c1=pair.c1, c2=pair.c2)
    assert "N" not in plain
    with_n = region_counts(c1=pair.c1, c2=pair.c2, include_neither=True)
    assert with_n == {**plain, "N": len(set(world.doc_ids) - world.a1 - world.a2)}


def test_region_n_of_a_corpus_without_its_bitmap_falls_back_to_the_document_table():
    corpus = CorpusFactory.create()  # documents_bitmap left empty (older data)
    docs = [DocumentFactory.create(corpus=corpus).pk for _ in range(12)]
    c1 = ClassifierFactory.create(corpus=corpus, ids=docs[0:5])
    c2 = ClassifierFactory.create(corpus=corpus, ids=docs[3:8])
    topic = TopicFactory.create(corpus=corpus)
    ClassifierPair.objects.create(topic=topic, c1=c1, c2=c2)
    assert set(region_bitmap(topic=topic, region="N")) == set(docs[8:])
    assert pair_regions(c1=c1, c2=c2).counts()["N"] == 4


def test_region_n_of_a_million_documents_takes_milliseconds():
    corpus = CorpusFactory.create(document_count=1_000_000)
    corpus.documents_bitmap = bitmap_to_bytes(BitMap(range(1, 1_000_001)))
    corpus.save(update_fields=["documents_bitmap"])
    c1 = ClassifierFactory.create(corpus=corpus, ids=list(range(1, 1_000_001, 97)))
    c2 = ClassifierFactory.create(corpus=corpus, ids=list(range(1, 1_000_001, 89)))
    a1, a2 = bitmap_from_ids(range(1, 1_000_001, 97)), bitmap_from_ids(range(1, 1_000_001, 89))
    regions = pair_regions(c1=c1, c2=c2)
    started = time.perf_counter()
    counts = regions.counts()  # one query for the corpus bitmap, then set arithmetic
    elapsed = time.perf_counter() - started
    assert counts["N"] == 1_000_000 - len(a1 | a2)
    # Bitmap arithmetic, not a table scan of a million rows: milliseconds even on a loaded machine.
    assert elapsed < 0.05, elapsed
