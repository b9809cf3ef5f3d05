"""document_ids_resolve: the streamed pass and the chunked lookups give the same answer (issue 14)."""
from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.services.corpora import id_resolution
from annotation.services.corpora.id_resolution import (
    document_ids_resolve,
    document_ids_resolve_chunked,
    document_ids_resolve_scan,
    use_scan,
)
from tests.factories import CorpusFactory, DocumentFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def corpora():
    corpus = CorpusFactory()
    other = CorpusFactory()
    docs = {f"d{i}": DocumentFactory(corpus=corpus, external_id=f"d{i}").pk for i in range(40)}
    # The same external ids in another corpus must never be returned for the first one.
    for i in range(0, 40, 2):
        DocumentFactory(corpus=other, external_id=f"d{i}")
    DocumentFactory(corpus=other, external_id="only-other")
    corpus.document_count = 40
    corpus.save(update_fields=["document_count"])
    return corpus, docs


REQUEST = ["d3", "zz-unknown", "d7", "d3", "only-other", "d39", "", "D7", "d7"]
EXPECTED_KEYS = {"d3", "d7", "d39"}


@pytest.mark.parametrize("strategy", [document_ids_resolve_scan, document_ids_resolve_chunked])
def test_each_strategy_resolves_known_ids_once_and_drops_unknown(corpora, strategy):
    corpus, docs = corpora
    resolved = strategy(corpus=corpus, external_ids=REQUEST)
    assert resolved == {key: docs[key] for key in EXPECTED_KEYS}


def test_strategies_agree_on_the_whole_corpus_and_on_nothing(corpora):
    corpus, docs = corpora
    everything = [*docs, "nope", *docs]
    assert document_ids_resolve_scan(corpus=corpus, external_ids=everything) == docs
    assert document_ids_resolve_chunked(corpus=corpus, external_ids=everything) == docs
    assert document_ids_resolve_scan(corpus=corpus, external_ids=["x", "y"]) == {}
    assert document_ids_resolve_chunked(corpus=corpus, external_ids=["x", "y"]) == {}
    assert document_ids_resolve(corpus=corpus, external_ids=[]) == {}


def test_chunked_crosses_chunk_boundaries(corpora, monkeypatch):
    corpus, docs = corpora
    monkeypatch.setattr(id_resolution, "ID_LOOKUP_CHUNK", 7)
    with CaptureQueriesContext(connection) as queries:
        resolved = document_ids_resolve_chunked(corpus=corpus, external_ids=[*docs, "unknown"])
    assert resolved == docs
    assert len(queries) == 6  # 41 distinct ids in chunks of 7


def test_scan_streams_in_several_fetches(corpora, monkeypatch):
    corpus, docs = corpora
    monkeypatch.setattr(id_resolution, "SCAN_FETCH", 3)
    assert document_ids_resolve_scan(corpus=corpus, external_ids=set(docs) - {"d0"}) == {
        key: pk for key, pk in docs.items() if key != "d0"}


def test_use_scan_thresholds():
    assert use_scan(requested=51, corpus_documents=1000)  # > 5 %
    assert not use_scan(requested=50, corpus_documents=1000)
    assert use_scan(requested=50_001, corpus_documents=10**8)  # > 50k ids, however large the corpus
    assert not use_scan(requested=50_000, corpus_documents=10**8)


def test_dispatch_scans_a_large_share_in_one_query(corpora):
    corpus, docs = corpora
    with CaptureQueriesContext(connection) as queries:
        resolved = document_ids_resolve(corpus=corpus, external_ids=list(docs)[:10] + ["unknown"])
    assert resolved == {key: docs[key] for key in list(docs)[:10]}
    if connection.vendor == "sqlite":  # on PostgreSQL the named cursor's statements are not captured
        assert len(queries) == 1
        assert " IN " not in queries[0]["sql"]


def test_dispatch_probes_the_index_for_a_small_share(corpora, monkeypatch):
    corpus, docs = corpora
    monkeypatch.setattr(id_resolution, "SCAN_MIN_SHARE", 0.5)
    with CaptureQueriesContext(connection) as queries:
        resolved = document_ids_resolve(corpus=corpus, external_ids=["d1", "d2", "missing"])
    assert resolved == {"d1": docs["d1"], "d2": docs["d2"]}
    assert len(queries) == 1
    assert " IN " in queries[0]["sql"]


def test_dispatch_counts_a_corpus_whose_count_was_never_stored(corpora):
    corpus, docs = corpora
    corpus.document_count = 0  # as if never refreshed: the 40 documents are counted instead
    with CaptureQueriesContext(connection) as queries:
        resolved = document_ids_resolve(corpus=corpus, external_ids=["d1", "missing"])
    assert resolved == {"d1": docs["d1"]}
    # 2 ids of 40 counted documents is 5 %, not more: index probes, not the pass.
    assert [" IN " in query["sql"] for query in queries] == [False, True]
    assert "COUNT" in queries[0]["sql"].upper()
