"""The region counts of a classifier pair over a corpus that stays in the team's engine, kept for requests (issue 29).

No page request does corpus-sized work: the engine counts a pair's regions in a task
(annotation.services.corpora.backends.external.external_pair_plan), and the counts are kept here, in Django's
cache, per (classifier pair, snapshot), with the last counted state of the pair (its snapshot, file listing and
counts). The key holds the classifiers' fingerprints and the snapshot token, so a lost entry means one more count
in a task, never a wrong figure. This module reads and writes the cache only: it imports no engine, so the
bitmap layer (retrieved_sets.region_counts) can read the counts without depending on the backends.
"""
from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from typing import Any, ClassVar

from django.core.cache import cache

from annotation.models import Classifier, ExternalCorpusSource, ExternalDraw, SampleDraw
from core.errors import ApplicationError

logger = logging.getLogger(__name__)

COUNTS_CACHE_SECONDS = 30 * 24 * 3600


class RegionCountsPending(ApplicationError):
    """The pair's region counts of the corpus's current snapshot are not counted yet (a task counts them).

    ``changes`` lists, in words, what changed in the corpus since the pair was last counted (empty when it never
    was): a launch refuses both cases, the second as "changed since the plan", naming the files."""

    http_status: ClassVar[int] = 409
    code: ClassVar[str] = "counting"

    def __init__(self, message: str, *, snapshot: str = "", changes: Sequence[str] = (),
                 counted_snapshot: str = "") -> None:
        super().__init__(message)
        self.snapshot = snapshot
        self.changes = list(changes)
        self.counted_snapshot = counted_snapshot


class RegionCountsStale(RegionCountsPending):
    """The corpus changed since the pair was last counted (``changes`` names the files); it is being counted again."""

    code: ClassVar[str] = "corpus-changed"


def corpus_in_engine(*, corpus_id: int) -> bool:
    """Whether the corpus stays in the team's engine (it has an ExternalCorpusSource)."""
    return ExternalCorpusSource.objects.filter(corpus_id=corpus_id).exists()


def _pair_key(c1: Classifier, c2: Classifier) -> str:
    return hashlib.sha256(f"{c1.pk}:{c1.fingerprint}:{c2.pk}:{c2.fingerprint}".encode()).hexdigest()[:32]


def _counts_key(*, c1: Classifier, c2: Classifier, snapshot: str) -> str:
    return f"engine-pair-counts:{_pair_key(c1, c2)}:{hashlib.sha256(snapshot.encode()).hexdigest()[:32]}"


def _latest_key(*, c1: Classifier, c2: Classifier) -> str:
    return f"engine-pair-latest:{_pair_key(c1, c2)}"


def _get(key: str) -> Any:
    try:
        return cache.get(key)
    except Exception:  # a cache that is down is a miss: the count runs in a task instead
        logger.warning("cache read failed for %s", key, exc_info=True)
        return None


def _set(key: str, value: Any) -> None:
    try:
        cache.set(key, value, timeout=COUNTS_CACHE_SECONDS)
    except Exception:  # the next request queues the count again
        logger.warning("cache write failed for %s", key, exc_info=True)


def engine_counts_store(*, c1: Classifier, c2: Classifier, snapshot: str, engine: str, counts: dict[str, int],
                        manifest: Sequence[Sequence]) -> None:
    """Keep the pair's counts of ``snapshot`` and make it the pair's last counted state."""
    entry = {"snapshot": snapshot, "engine": engine, "counts": dict(counts)}
    _set(_counts_key(c1=c1, c2=c2, snapshot=snapshot), entry)
    _set(_latest_key(c1=c1, c2=c2), {**entry, "manifest": [list(row) for row in manifest]})


def engine_counts_of(*, c1: Classifier, c2: Classifier, snapshot: str) -> dict | None:
    """{"snapshot", "engine", "counts"} of the pair at ``snapshot``, if counted; else None."""
    entry = _get(_counts_key(c1=c1, c2=c2, snapshot=snapshot))
    return entry or None


def engine_counts_latest(*, c1: Classifier, c2: Classifier) -> dict | None:
    """The pair's last counted state: {"snapshot", "engine", "counts", "manifest"}, or None if never counted."""
    entry = _get(_latest_key(c1=c1, c2=c2))
    return entry or None


def engine_region_counts(*, c1: Classifier, c2: Classifier, include_neither: bool = False) -> dict[str, int]:
    """retrieved_sets.region_counts for a pair of a corpus in the team's engine: the pair's last counted state
    (the state its draws measured: a draw refuses a corpus changed since its plan). RegionCountsPending if the
    pair was never counted (the plan page queues the count)."""
    latest = engine_counts_latest(c1=c1, c2=c2)
    if latest is None:
        raise RegionCountsPending(f"The regions of {c1.name!r} / {c2.name!r} are not counted in the engine yet: "
                                  "open the topic's plan, which starts the count.")
    counts = dict(latest["counts"])
    if not include_neither:
        counts.pop("N", None)
    return counts


# --------------------------------------------------------------------------- what the draws recorded (the report)

NOT_COUNTED = "not counted for an engine corpus"
RECORDED_KEY = "pair_counts"  # the key of ExternalDraw.region_query that keeps the pair's counts the draw used
_MEMBERS = {"A12": (True, True), "B1": (True, False), "B2": (False, True), "N": (False, False)}


def engine_counts_record(*, snapshot: str, counts: dict[str, int]) -> dict:
    """What a draw keeps of the pair's counts (under RECORDED_KEY of its ExternalDraw.region_query): the snapshot
    they describe and the six region sizes, so its report needs no cache entry."""
    return {"snapshot": snapshot, "counts": {k: int(v) for k, v in counts.items()}}


def engine_topic_counts(*, topic_id: int, c1: Classifier, c2: Classifier) -> dict[str, int]:
    """The pair's region sizes (A1, A2, A12, B1, B2, N) a topic's report reads for a corpus in the team's engine.

    The sizes its latest pair draw recorded (engine_counts_record); a draw made before draws recorded them: the
    cached counts of the snapshot it measured; a topic not drawn yet: the pair's last counted state. Raises
    RegionCountsPending only when none of these is known."""
    records = (ExternalDraw.objects.filter(draw__topic_id=topic_id, draw__purpose=SampleDraw.Purpose.PAIR)
               .order_by("-draw_id").values_list("region_query", "snapshot", "plan_snapshot"))
    for region_query, snapshot, plan_snapshot in records:
        recorded = (region_query or {}).get(RECORDED_KEY)
        if recorded and recorded.get("counts"):
            return {k: int(v) for k, v in recorded["counts"].items()}
        entry = engine_counts_of(c1=c1, c2=c2, snapshot=plan_snapshot or snapshot)
        if entry is not None:
            return dict(entry["counts"])
    return engine_region_counts(c1=c1, c2=c2, include_neither=True)


def engine_classifier_size(*, classifier_id: int, c1_id: int, c2_id: int, counts: dict[str, int]) -> int | None:
    """|A_C| of a classifier of an engine topic from the pair's counts (the plan's and the report's one rule):
    C1 retrieves A1 = A12 + B1, C2 retrieves A2 = A12 + B2; a further classifier's overlap is not counted (None)."""
    if classifier_id == c1_id:
        return int(counts["A12"]) + int(counts["B1"])
    if classifier_id == c2_id:
        return int(counts["A12"]) + int(counts["B2"])
    return None


def engine_region_members(*, region: str, c1_id: int, c2_id: int) -> tuple[int, ...]:
    """Which of the pair's classifiers retrieved every document of a region the engine draws (A12, B1, B2, N: known
    from the region itself; the engine draws no other region of a pair, annotation.services.sampling.draws)."""
    in1, in2 = _MEMBERS.get(region, (False, False))
    return tuple(cid for cid, inside in ((c1_id, in1), (c2_id, in2)) if inside)
