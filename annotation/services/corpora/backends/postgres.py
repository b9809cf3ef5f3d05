"""The app's own database (PostgreSQL; SQLite in development): today's behaviour behind the backend interface.

Regions stay Roaring bitmaps of Document pks (annotation.services.corpora.retrieved_sets): a stored
classifier is its bitmap, a keyword or field-value classifier is the existing scan
(annotation.services.classifiers.keywords / field_values), uploaded ids and scores are resolved to
pks. Nothing about imported corpora changes; this class only lets the same five operations be asked
of an imported corpus and of a corpus that stays in the team's engine, so they can be compared.

Its ``draw`` follows the engines' hash order (md5 of "<seed>:<external id>"), so the same topic draws
the same documents here as in DuckDB or Spark; the launch of an imported corpus
(annotation.services.sampling.draws) keeps its numpy draw over the bitmap, unchanged.
"""
from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Sequence

from pyroaring import BitMap

from annotation.models import Classifier, Corpus, Document
from annotation.services.corpora.backends.base import (
    BackendError,
    ClassifierQuery,
    DocumentRecord,
    FieldValueQuery,
    IdsQuery,
    KeywordQuery,
    RegionQuery,
    ScoreRange,
    ScoresQuery,
    Snapshot,
    StoredClassifierQuery,
    hash_order_take,
    snapshot_token,
)
from annotation.services.corpora.id_resolution import document_ids_resolve
from annotation.services.corpora.retrieved_sets import (
    bitmap_from_ids,
    bitmap_to_bytes,
    classifier_bitmap,
    corpus_documents,
)

CHUNK = 900  # pks per IN (...) query: below SQLite's limit on parameters


# Evaluates a keyword or field-value query over an imported corpus (the classifiers' scans, which sit above
# corpora: annotation.services.classifiers.keywords.keyword_scan / field_values.field_values_scan).
Scanner = Callable[[Corpus, "KeywordQuery | FieldValueQuery"], BitMap]


class DatabaseBackend:
    engine = "postgres"

    def __init__(self, *, corpus: Corpus, scanner: Scanner | None = None) -> None:
        self.corpus = corpus
        self.scanner = scanner

    def _universe(self) -> BitMap:
        return corpus_documents(corpus_id=self.corpus.pk)

    def _resolve(self, ids: Sequence[str]) -> BitMap:
        return bitmap_from_ids(document_ids_resolve(corpus=self.corpus, external_ids=list(ids)).values())

    def _bitmap(self, query: ClassifierQuery) -> BitMap:
        if isinstance(query, StoredClassifierQuery):
            classifier = Classifier.objects.filter(pk=query.classifier_id, corpus=self.corpus).first()
            if classifier is None:
                raise BackendError(f"Classifier {query.classifier_id} is not a classifier of corpus {self.corpus.name!r}.")
            return classifier_bitmap(classifier=classifier)
        if isinstance(query, (KeywordQuery, FieldValueQuery)):
            if self.scanner is None:
                raise BackendError("This corpus's classifiers are evaluated when they are created: give the stored "
                                   "classifier, or open the backend with the classifiers' scanner.")
            return self.scanner(self.corpus, query)
        if isinstance(query, IdsQuery):
            return self._resolve(query.ids)
        if isinstance(query, ScoresQuery):
            return self._resolve([i for i, s in query.scores if s >= query.threshold])
        raise TypeError(f"not a classifier query: {query!r}")

    def _stratum(self, stratum: ScoreRange) -> BitMap:
        return self._resolve([i for i, s in stratum.scores.scores
                              if (stratum.low is None or s >= stratum.low) and (stratum.high is None or s < stratum.high)])

    def region_bitmap(self, region: RegionQuery) -> BitMap:
        bitmap = self._universe()
        for query, member in zip(region.classifiers, region.membership, strict=True):
            if member is True:
                bitmap &= self._bitmap(query)
            elif member is False:
                bitmap -= self._bitmap(query)
        if region.stratum is not None:
            bitmap &= self._stratum(region.stratum)
        return bitmap

    def _external_ids(self, pks: BitMap) -> list[str]:
        ids: list[str] = []
        values = list(pks)
        for start in range(0, len(values), CHUNK):
            ids += Document.objects.filter(pk__in=values[start:start + CHUNK]).values_list("external_id", flat=True)
        return ids

    # -- the interface
    def snapshot(self) -> Snapshot:
        universe = self._universe()
        digest = hashlib.sha256(bitmap_to_bytes(BitMap(universe))).hexdigest()[:16]
        manifest = ((f"documents#{digest}", len(universe), 0),)
        return Snapshot(engine="db", token=snapshot_token("db", manifest), manifest=manifest)

    def size(self) -> int:
        return len(self._universe())

    def region_counts(self, classifiers: Sequence[ClassifierQuery]) -> dict[tuple[bool, ...], int]:
        universe = self._universe()
        bitmaps = [self._bitmap(q) & universe for q in classifiers]
        cells = {}
        for pattern in itertools.product((True, False), repeat=len(bitmaps)):
            cell = BitMap(universe)
            for bitmap, member in zip(bitmaps, pattern, strict=True):
                cell = cell & bitmap if member else cell - bitmap
            if len(cell):
                cells[pattern] = len(cell)
        return cells

    def region_size(self, region: RegionQuery) -> int:
        return len(self.region_bitmap(region))

    def draw(self, region: RegionQuery, *, n: int, seed: int, exclude: Sequence[str] = ()) -> list[str]:
        if n <= 0:
            return []
        return hash_order_take(seed=seed, ids=self._external_ids(self.region_bitmap(region)), n=n, exclude=exclude)

    def classifier_count(self, query: ClassifierQuery) -> int:
        return len(self._bitmap(query) & self._universe())

    def fetch(self, ids: Sequence[str]) -> list[DocumentRecord]:
        rows = {}
        for start in range(0, len(ids), CHUNK):
            for doc in Document.objects.filter(corpus=self.corpus, external_id__in=list(ids[start:start + CHUNK])):
                rows[doc.external_id] = DocumentRecord(external_id=doc.external_id, title=doc.title, text=doc.text,
                                                       metadata=dict(doc.metadata or {}))
        return [rows[i] for i in ids if i in rows]

    def close(self) -> None:
        return None
