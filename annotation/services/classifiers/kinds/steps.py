"""What the build steps of every kind share: the id-range shards, a shard's retrieved set as text, the end.

Used by the kind modules and by the build service (classifier_builds.py); imports neither.
"""
from __future__ import annotations

import base64
from typing import Any

from django.utils import timezone
from pyroaring import BitMap

from annotation.models import Classifier, ClassifierBuild, Corpus
from annotation.services.classifiers.classifier import classifier_coverage_warnings
from annotation.services.corpora.retrieved_sets import corpus_bitmap
from core.jobs import job_finish


def shard_ranges(*, corpus: Corpus, shards: int) -> list[tuple[int, int]]:
    """`shards` half-open id ranges [lo, hi) holding about the same number of the corpus's documents.

    Together they cover every document of the corpus exactly once (the last one ends past the largest id).
    """
    ids = corpus_bitmap(corpus=corpus)
    if len(ids) == 0:
        return [(0, 1)]
    shards = max(1, min(shards, len(ids)))
    starts = [ids[(len(ids) * i) // shards] for i in range(shards)]
    ends = [*starts[1:], ids.max() + 1]
    return list(zip(starts, ends, strict=True))


def bitmap_encode(bitmap: BitMap) -> str:
    return base64.b64encode(bitmap.serialize()).decode("ascii")


def bitmap_decode(text: str) -> BitMap:
    return BitMap.deserialize(base64.b64decode(text))


def build_done(build: ClassifierBuild, classifier: Classifier, *, details: dict[str, Any]) -> None:
    """The build stored its classifier: done, with the kind's facts, the retrieved count, the coverage
    warnings and how long it took."""
    started = build.started_at or build.created_at
    warnings = classifier_coverage_warnings(retrieved=classifier.retrieved_count,
                                            corpus_size=build.corpus.document_count)
    job_finish(job=build, classifier=classifier,
               details={**details, "retrieved": classifier.retrieved_count, "warnings": warnings,
                        "seconds": round((timezone.now() - started).total_seconds(), 3)})
