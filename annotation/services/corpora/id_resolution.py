"""Resolve a corpus's external document ids to Document pks, fast for any size of request.

Two strategies give the same answer:

* **chunked lookups** — `external_id IN (...)` by chunks of `ID_LOOKUP_CHUNK` (below SQLite's limit on
  query parameters), each an index probe on `document_external_id_unique`: right for a few ids;
* **one streamed pass** over the corpus's `(external_id, pk)` pairs, kept when the id is wanted: a
  sequential read with no per-chunk round trip. It wins once the request covers a large share of the corpus
  (1,000,000 ids of a 1,000,000-document corpus: ~8 s in chunks on SQLite, ~1.5 s in one pass).

`document_ids_resolve` picks the pass when the request names more than `SCAN_MIN_SHARE` of the corpus's
documents or more than `SCAN_MIN_IDS` ids; the pass reads rows with a raw cursor, `SCAN_FETCH` at a time
(never the whole corpus in memory on PostgreSQL: a named server-side cursor there).
"""
from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator

from django.db import connection, transaction
from pyroaring import BitMap

from annotation.models import Corpus, Document

ID_LOOKUP_CHUNK = 900  # below SQLite's default limit on query parameters
SCAN_MIN_SHARE = 0.05  # a request naming more than this share of the corpus reads it in one pass
SCAN_MIN_IDS = 50_000  # ... and so does any request of more ids than this
SCAN_FETCH = 10_000  # rows fetched at a time by the pass


def document_ids_resolve(*, corpus: Corpus, external_ids: Collection[str]) -> dict[str, int]:
    """{external id: Document pk} for the ids of `external_ids` that are documents of `corpus`.

    Unknown ids are absent from the result; a repeated id appears once. The order of the result is not
    meaningful. Chooses the strategy by the size of the request (module docstring); both give the same dict.
    """
    if not external_ids:
        return {}
    if use_scan(requested=len(external_ids), corpus_documents=_corpus_documents(corpus)):
        return document_ids_resolve_scan(corpus=corpus, external_ids=external_ids)
    return document_ids_resolve_chunked(corpus=corpus, external_ids=external_ids)


def use_scan(*, requested: int, corpus_documents: int) -> bool:
    """Whether a request of `requested` ids is cheaper as one pass over a corpus of `corpus_documents`."""
    return requested > SCAN_MIN_IDS or requested > SCAN_MIN_SHARE * corpus_documents


def document_ids_resolve_chunked(*, corpus: Corpus, external_ids: Iterable[str]) -> dict[str, int]:
    """The chunked-IN strategy (index probes), for requests small next to the corpus."""
    ids = list(dict.fromkeys(external_ids))
    resolved: dict[str, int] = {}
    for start in range(0, len(ids), ID_LOOKUP_CHUNK):
        chunk = ids[start:start + ID_LOOKUP_CHUNK]
        resolved.update(
            Document.objects.filter(corpus=corpus, external_id__in=chunk).order_by().values_list("external_id", "pk")
        )
    return resolved


def document_ids_resolve_scan(*, corpus: Corpus, external_ids: Iterable[str]) -> dict[str, int]:
    """The one-pass strategy: stream the corpus's (external_id, pk) pairs and keep the wanted ones."""
    wanted = external_ids if isinstance(external_ids, (set, frozenset, dict)) else set(external_ids)
    if not wanted:
        return {}
    resolved: dict[str, int] = {}
    for rows in corpus_id_pairs(corpus=corpus):
        _keep(resolved, rows, wanted)
    return resolved


def corpus_id_pairs(*, corpus: Corpus) -> Iterator[list[tuple[str, int]]]:
    """The corpus's (external_id, pk) pairs, `SCAN_FETCH` at a time, never the whole corpus in memory."""
    table, quote = Document._meta.db_table, connection.ops.quote_name
    sql = f"SELECT {quote('external_id')}, {quote('id')} FROM {quote(table)} WHERE {quote('corpus_id')} = %s"
    if connection.vendor == "postgresql":
        # A named (server-side) cursor streams the rows instead of holding the corpus's pairs in memory;
        # it lives inside a transaction.
        with transaction.atomic():
            connection.ensure_connection()
            with connection.connection.cursor(name=f"ids_resolve_{corpus.pk}") as cursor:
                cursor.execute(sql, [corpus.pk])
                while rows := cursor.fetchmany(SCAN_FETCH):
                    yield rows
        return
    with connection.cursor() as cursor:
        cursor.execute(sql, [corpus.pk])
        while rows := cursor.fetchmany(SCAN_FETCH):
            yield rows


def document_ids_resolve_bitmap(*, corpus: Corpus, values: BitMap) -> tuple[BitMap, BitMap]:
    """(pks of the documents, values found) for a bitmap of integer external ids: value n is the id str(n).

    A large request is one pass over the corpus testing each canonical decimal id against the bitmap
    itself, so memory is the bitmap (an upload of 1M ids of a 10M corpus was four passes of 250,000
    strings each before); a small one is chunked lookups of the values' texts. Both give the same answer.
    """
    pks, found = BitMap(), BitMap()
    if not values:
        return pks, found
    if not use_scan(requested=len(values), corpus_documents=_corpus_documents(corpus)):
        for external_id, pk in document_ids_resolve_chunked(corpus=corpus, external_ids=map(str, values)).items():
            pks.add(pk)
            found.add(int(external_id))
        return pks, found
    for rows in corpus_id_pairs(corpus=corpus):
        for external_id, pk in rows:
            # Canonical decimal only ("042" is not 42), within 32 bits.
            if (external_id.isascii() and external_id.isdigit() and len(external_id) <= 10
                    and (external_id[0] != "0" or external_id == "0")):
                value = int(external_id)
                if value < 2**32 and value in values:
                    pks.add(pk)
                    found.add(value)
    return pks, found


def _keep(resolved: dict[str, int], rows: list[tuple[str, int]], wanted: Collection[str]) -> None:
    """Add the rows whose id is wanted; a batch wholly wanted (the usual case of a pass) is added in C."""
    batch = dict(rows)
    common = batch.keys() & wanted
    if len(common) == len(batch):
        resolved.update(batch)
    else:
        resolved.update({external_id: batch[external_id] for external_id in common})


def _corpus_documents(corpus: Corpus) -> int:
    """The corpus's size as last counted (import and refresh keep it); counted when it reads 0."""
    return corpus.document_count or Document.objects.filter(corpus=corpus).count()
