"""Retrieved sets as Roaring bitmaps of Document ids: region counts and uniform draws.

Why bitmaps: the five region sizes of a pair and a uniform draw from a region
must be fast on corpora of millions of documents. A bitmap of a million ids is
a few hundred kilobytes; intersections and differences take microseconds, and
`bitmap[i]` (select by rank) gives a uniform draw without materialising the
region. Measured in bench/bench_regions.py, recorded in docs/benchmarks.md.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np
from pyroaring import BitMap

from annotation.models import Classifier, Corpus, Document
from annotation.services.corpora.engine_counts import corpus_in_engine, engine_region_counts


def bitmap_from_ids(ids: Iterable[int]) -> BitMap:
    if isinstance(ids, np.ndarray):
        return BitMap(ids.astype(np.uint32, copy=False))
    return BitMap(ids)


def bitmap_to_bytes(bitmap: BitMap) -> bytes:
    bitmap.run_optimize()
    return bitmap.serialize()


@lru_cache(maxsize=256)
def _bitmap_from_bytes_cached(data: bytes) -> BitMap:
    # Keyed by the bytes themselves, so a changed retrieved set can never hit a stale entry.
    return BitMap.deserialize(data) if data else BitMap()


def bitmap_from_bytes(data: bytes | memoryview) -> BitMap:
    """Deserialised bitmaps are cached; callers get a copy they may mutate."""
    return BitMap(_bitmap_from_bytes_cached(bytes(data)))


def classifier_bitmap(*, classifier: Classifier) -> BitMap:
    return bitmap_from_bytes(classifier.retrieved_bitmap)


def corpus_bitmap(*, corpus: Corpus) -> BitMap:
    return bitmap_from_bytes(corpus.documents_bitmap)


def corpus_documents(*, corpus_id: int) -> BitMap:
    """The ids of a corpus's documents: its stored bitmap, or the Document table for a corpus imported without one."""
    data = Corpus.objects.filter(pk=corpus_id).values_list("documents_bitmap", flat=True).first()
    bitmap = bitmap_from_bytes(data) if data else BitMap()
    if not bitmap:
        # A corpus imported without its bitmap (older data): fall back to the table.
        bitmap = bitmap_from_ids(Document.objects.filter(corpus_id=corpus_id).values_list("pk", flat=True))
    return bitmap


PAIR_REGION_CODES = ("A1", "A2", "A12", "B1", "B2", "N")


@dataclass(frozen=True)
class PairRegions:
    """The Venn regions of a pair: A12 = A1 ∩ A2, B1 = A1 ∖ A2, B2 = A2 ∖ A1, and N = U ∖ (A1 ∪ A2).

    N, the documents neither classifier retrieved, needs the corpus (``corpus_id``):
    its bitmap is read on first use of N only, so callers of the other regions
    pay nothing for it.  A12, B1, B2 and N partition the corpus.
    """

    a1: BitMap
    a2: BitMap
    a12: BitMap
    b1: BitMap
    b2: BitMap
    corpus_id: int | None = None

    @cached_property
    def neither(self) -> BitMap:
        if self.corpus_id is None:
            raise ValueError("region N needs the corpus: build PairRegions with pair_regions(c1=..., c2=...)")
        return corpus_documents(corpus_id=self.corpus_id) - (self.a1 | self.a2)

    def by_code(self, code: str) -> BitMap:
        if code == "N":
            return self.neither
        return {"A1": self.a1, "A2": self.a2, "A12": self.a12, "B1": self.b1, "B2": self.b2}[code]

    def counts(self) -> dict[str, int]:
        return {code: len(self.by_code(code)) for code in PAIR_REGION_CODES}


def pair_regions(*, c1: Classifier, c2: Classifier) -> PairRegions:
    a1 = classifier_bitmap(classifier=c1)
    a2 = classifier_bitmap(classifier=c2)
    return PairRegions(a1=a1, a2=a2, a12=a1 & a2, b1=a1 - a2, b2=a2 - a1, corpus_id=c1.corpus_id)


def region_counts(*, c1: Classifier, c2: Classifier, include_neither: bool = False) -> dict[str, int]:
    """|A1|, |A2|, |A12|, |A1∖A2|, |A2∖A1| without materialising the regions; with ``include_neither``, |N| too.

    |N| = |U| − |U ∩ (A1 ∪ A2)| reads the corpus's bitmap (one query, then microseconds).
    A corpus that stays in the team's engine has no bitmaps: its counts are the engine's, kept per snapshot
    (annotation.services.corpora.engine_counts; never counted in the caller).
    """
    if corpus_in_engine(corpus_id=c1.corpus_id):
        return engine_region_counts(c1=c1, c2=c2, include_neither=include_neither)
    a1 = classifier_bitmap(classifier=c1)
    a2 = classifier_bitmap(classifier=c2)
    a12 = a1.intersection_cardinality(a2)
    counts = {"A1": len(a1), "A2": len(a2), "A12": a12, "B1": len(a1) - a12, "B2": len(a2) - a12}
    if include_neither:
        universe = corpus_documents(corpus_id=c1.corpus_id)
        counts["N"] = len(universe) - universe.intersection_cardinality(a1 | a2)
    return counts


def bitmap_draw(*, bitmap: BitMap, k: int, rng: np.random.Generator, exclude: BitMap | None = None) -> list[int]:
    """A uniform draw of min(k, |bitmap ∖ exclude|) ids without replacement.

    The draw depends only on the region, the excluded ids and the generator, so
    it is reproducible from the recorded seed.
    """
    if k < 0:
        raise ValueError("k must be non-negative")
    population = bitmap - exclude if exclude else bitmap
    size = len(population)
    take = min(k, size)
    if take == 0:
        return []
    positions = np.sort(rng.choice(size, size=take, replace=False))
    return [population[int(i)] for i in positions]
