"""Score strata: region N (retrieved by neither classifier) split by the topic's scorer, each stratum its own SRS.

When a topic names a scorer (``Topic.scorer``: an uploaded scores classifier or a trained one), the dependence
check's sample of N is drawn by strata: N's documents are split by the scorer's score at the cut points of
``estimation.stats.stratified`` and each stratum is drawn as a simple random sample of its own (a SampleDraw
with ``stratum_key`` = the stratum's key and region N). Each sampled document's inclusion probability is then
n_h/N_h of its stratum (``draws.region_sample_draw`` keeps it so through top-ups), and the report's design-based
recall weighs each stratum by its own size (``estimation.stats.stratified.stratified_design_recall``).

The stratum key names the stratum completely: ``score:<k>/<K>:<low>:<high>`` holds the document whose score s
has low ≤ s < high (low "-inf" for the first, high "inf" for the last; a document the scorer did not score
counts as −inf, so it falls in the first). The cut points are rounded to six significant digits before use, so
the key re-derives the stratum exactly (``sample_draw_reproduce``), and a top-up reuses the keys of the earlier
draws rather than cutting again.

The plan (``scored_plan``): ``estimation.stats.stratified.stratified_sample_plan`` over the pair's regions (one
stratum each, at their precision guesses or pilot) and N's score strata, Neyman-allocated so both recalls'
design-based intervals are expected within the half-width — at N's stated prior prevalence (the largest plan
over ``design_based.complement_prior_prevalences``) until a stratum is judged, then at its own Jeffreys mean, so
each top-up re-plans from the pilot (the staged plan). A total of N given by the analyst is shared between the
strata in the plan's proportions (``strata_targets``), never below what a stratum already holds (totals: a
top-up only adds). The same functions size the quote and the draw, so the quote is what is drawn.
"""
from __future__ import annotations

import functools
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from pyroaring import BitMap, FrozenBitMap

from annotation.models import Classifier, ClassifierScore, Label, SampledDocument, SampleDraw, Topic
from estimation.stats import stratified as stratified_stats
from estimation.stats.design_based import complement_prior_prevalences

SCORE_KEY_PREFIX = "score:"
# Score strata of N (estimation.stats.stratified.score_strata_bounds, its default "geometric" cuts: the top
# stratum smallest, where a good scorer puts N's rare relevant documents).
SCORE_STRATA = 5
# The fewest documents a score stratum is drawn with (stratified_sample_plan's min_per_stratum default).
STRATUM_MIN_SAMPLE = 10


@dataclass(frozen=True)
class ScoreStratum:
    """One score stratum of a region: its key, position, score range [low, high) and documents."""

    key: str
    index: int  # 1..count
    count: int
    low: float
    high: float
    documents: FrozenBitMap

    @property
    def size(self) -> int:
        return len(self.documents)


def _rounded(value: float) -> float:
    return float(f"{value:.6g}")


def score_stratum_key(*, index: int, count: int, low: float, high: float) -> str:
    """``score:<k>/<K>:<low>:<high>`` (six significant digits; "-inf"/"inf" at the ends)."""
    return f"{SCORE_KEY_PREFIX}{index}/{count}:{low:.6g}:{high:.6g}"


def score_stratum_parse(key: str) -> tuple[int, int, float, float] | None:
    """(k, K, low, high) of a score stratum key, or None when `key` is not one."""
    if not key.startswith(SCORE_KEY_PREFIX):
        return None
    try:
        position, low, high = key[len(SCORE_KEY_PREFIX):].split(":")
        index, count = position.split("/")
        return int(index), int(count), float(low), float(high)
    except ValueError:
        return None


def stratum_words(key: str) -> str:
    """A score stratum in words, e.g. "score stratum 2 of 4 (scores 0.31 to 0.57)"; "" is "all"."""
    parsed = score_stratum_parse(key)
    if parsed is None:
        return key or "all"
    index, count, low, high = parsed
    if not math.isfinite(low):
        span = f"scores below {high:.6g}" if math.isfinite(high) else "every score"
    elif not math.isfinite(high):
        span = f"scores {low:.6g} and above"
    else:
        span = f"scores {low:.6g} to {high:.6g}"
    return f"score stratum {index} of {count} ({span})"


def _identity(scorer: Classifier) -> tuple[int, str, str]:
    """What names a scorer's scores for the caches: its id, fingerprint and creation time (a scores file's
    sha256 is in its definition, hence its fingerprint; a rebuilt classifier is a new row)."""
    return scorer.pk, scorer.fingerprint, str(scorer.created_at)


@functools.lru_cache(maxsize=8)
def _scores(scorer_id: int, fingerprint: str, created_at: str) -> tuple[np.ndarray, np.ndarray]:
    """(document ids ascending, their scores) of a scorer, memoised per process by its identity (``_identity``).

    Reading a million ClassifierScore rows takes seconds; the scores of a classifier never change (its
    fingerprint would), so the topic page, the quote and the draw read them once per process.
    """
    rows = ClassifierScore.objects.filter(classifier_id=scorer_id).order_by("document_id").values_list(
        "document_id", "score")
    pairs = np.array(list(rows), dtype=float).reshape(-1, 2)
    return pairs[:, 0].astype(np.int64), pairs[:, 1].astype(float)


def documents_scores(*, scorer: Classifier, documents: BitMap) -> tuple[np.ndarray, np.ndarray]:
    """(ids ascending, scores) of `documents`; a document the scorer did not score gets −inf."""
    ids = np.fromiter(documents, dtype=np.int64, count=len(documents))
    scored_ids, scores = _scores(*_identity(scorer))
    return _scores_of(ids=ids, scored_ids=scored_ids, scores=scores)


def _scores_of(*, ids: np.ndarray, scored_ids: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if not len(scored_ids):
        return ids, np.full(len(ids), -math.inf)
    position = np.clip(np.searchsorted(scored_ids, ids), 0, len(scored_ids) - 1)
    found = scored_ids[position] == ids
    return ids, np.where(found, scores[position], -math.inf)


def _strata_from_cuts(*, ids: np.ndarray, scores: np.ndarray, bounds: Sequence[tuple[float, float]],
                      keys: Sequence[str] | None = None) -> list[ScoreStratum]:
    count = len(bounds)
    result = []
    for index, (low, high) in enumerate(bounds, start=1):
        inside = (scores >= low) & (scores < high) if math.isfinite(high) else scores >= low
        key = keys[index - 1] if keys is not None else score_stratum_key(index=index, count=count, low=low, high=high)
        result.append(ScoreStratum(key=key, index=index, count=count, low=low, high=high,
                                   documents=FrozenBitMap(ids[inside].tolist())))
    return result


def score_stratum_documents(*, scorer: Classifier, documents: BitMap, key: str) -> BitMap:
    """The documents of `documents` in the score stratum `key` (re-derives a draw's population exactly)."""
    parsed = score_stratum_parse(key)
    if parsed is None:
        raise ValueError(f"{key!r} is not a score stratum key")
    index, count, low, high = parsed
    ids, scores = documents_scores(scorer=scorer, documents=documents)
    return BitMap(_strata_from_cuts(ids=ids, scores=scores, bounds=[(low, high)], keys=[key])[0].documents)


def _existing_keys(*, topic: Topic, region: str) -> list[str]:
    keys = (SampleDraw.objects.filter(topic=topic, region=region, purpose=SampleDraw.Purpose.PAIR)
            .exclude(stratum_key="").values_list("stratum_key", flat=True).distinct())
    return sorted({k for k in keys if score_stratum_parse(k) is not None},
                  key=lambda k: score_stratum_parse(k)[0])  # type: ignore[index]


@functools.lru_cache(maxsize=16)
def _strata_cached(identity: tuple[int, str, str], documents: bytes, keys: tuple[str, ...]
                   ) -> tuple[ScoreStratum, ...]:
    """The score strata of a serialised region, memoised per process: the plan page, the quote and the launch
    ask for the same strata several times a request (a million-document N takes ~0.1 s each)."""
    region = BitMap.deserialize(documents)
    ids = np.fromiter(region, dtype=np.int64, count=len(region))
    scored_ids, scored = _scores(*identity)
    ids, scores = _scores_of(ids=ids, scored_ids=scored_ids, scores=scored)
    if keys:
        parsed = [score_stratum_parse(k) for k in keys]
        bounds = [(p[2], p[3]) for p in parsed if p is not None]
        return tuple(_strata_from_cuts(ids=ids, scores=scores, bounds=bounds, keys=keys))
    cuts = sorted({_rounded(c) for c in stratified_stats.score_strata_bounds(scores[np.isfinite(scores)],
                                                                            strata=SCORE_STRATA)})
    edges = [-math.inf, *cuts, math.inf]
    bounds = [(edges[i], edges[i + 1]) for i in range(len(edges) - 1)]
    strata = [s for s in _strata_from_cuts(ids=ids, scores=scores, bounds=bounds) if s.size]
    # Number the non-empty strata 1..K again, so keys say how many strata there are.
    return tuple(_strata_from_cuts(ids=ids, scores=scores, bounds=[(s.low, s.high) for s in strata]))


def region_score_strata(*, topic: Topic, region: str, documents: BitMap) -> list[ScoreStratum]:
    """The score strata of `documents` (region `region` of the topic) by the topic's scorer; [] without one.

    A region already drawn by strata keeps its keys (a top-up draws the same strata); otherwise the cut points
    are ``estimation.stats.stratified``'s for these scores, rounded to six significant digits. Empty strata
    (ties at a cut) are left out.
    """
    scorer = topic.scorer
    if scorer is None:
        return []
    keys = tuple(_existing_keys(topic=topic, region=region))
    return list(_strata_cached(_identity(scorer), documents.serialize(), keys))


@dataclass(frozen=True)
class StratumPilot:
    sampled: int
    judged: int
    relevant: int


def strata_pilot(*, topic: Topic, region: str) -> dict[str, StratumPilot]:
    """Per score stratum of the topic's pair sample of `region`: distinct documents drawn, judged, relevant.

    Judged as in ``draws.region_sample_labels``: a Label with a majority, gold documents never counted."""
    drawn: dict[str, set[int]] = defaultdict(set)
    rows = SampledDocument.objects.filter(topic=topic, region=region, draw__purpose=SampleDraw.Purpose.PAIR) \
        .exclude(draw__stratum_key="")
    for key, doc_id in rows.values_list("draw__stratum_key", "document_id"):
        drawn[key].add(doc_id)
    majorities = dict(Label.objects.filter(topic=topic, gold__isnull=True, majority__isnull=False,
                                           document_id__in=rows.values("document_id"))
                      .values_list("document_id", "majority"))
    result = {}
    for key, ids in drawn.items():
        judged = [bool(majorities[d]) for d in ids if d in majorities]
        result[key] = StratumPilot(sampled=len(ids), judged=len(judged), relevant=sum(judged))
    return result


@dataclass(frozen=True)
class ScoredPlan:
    """The joint plan of a topic with a scorer (``estimation.stats.stratified.stratified_sample_plan``): the pair's
    regions one stratum each, N split by score, Neyman-allocated so both recalls' design-based intervals are
    expected within the half-width. `prior` is N's prevalence planned for before its strata are piloted (the
    largest plan over ``design_based.complement_prior_prevalences``); each judged stratum is planned at its own
    Jeffreys mean instead (the staged top-ups)."""

    plan: stratified_stats.StratifiedPlan
    strata: tuple[ScoreStratum, ...]
    prior: float
    pilot: dict[str, StratumPilot]

    @property
    def pair_planned(self) -> dict[str, int]:
        return {row.region: row.planned for row in self.plan.strata if row.region != "U"}

    @property
    def n_planned(self) -> dict[str, int]:
        return {row.key: row.planned for row in self.plan.strata if row.region == "U"}

    @property
    def n_total(self) -> int:
        return sum(self.n_planned.values())

    @property
    def expected_half_width(self) -> dict[str, float | None]:
        r1, r2 = self.plan.expected_half_width
        return {"r1": r1 if math.isfinite(r1) else None, "r2": r2 if math.isfinite(r2) else None}


def scored_plan(*, topic: Topic, half_width: float, neither: BitMap, sizes: Mapping[str, int],
                guesses: Mapping[str, float], pair_pilot: Mapping[str, tuple[int, int]]) -> ScoredPlan | None:
    """The joint plan at `half_width` of a topic with a scorer; None without one (or with N empty).

    `sizes`/`guesses`: the pair regions' sizes and precision guesses; `pair_pilot`: (judged, relevant) of each
    pair region's sample. Planned at each prior prevalence of N; the largest plan is kept (as the unstratified
    dependence check keeps its largest, ``complement.complement_plan``)."""
    strata = tuple(region_score_strata(topic=topic, region="N", documents=neither))
    if not strata:
        return None
    pilot = strata_pilot(topic=topic, region="N")
    pair_relevant = sum(float(sizes[h]) * float(guesses[h]) for h in ("A12", "B1", "B2"))
    best: ScoredPlan | None = None
    for prior in complement_prior_prevalences(pair_relevant=pair_relevant, size_u=len(neither)):
        rows = [stratified_stats.StratumGuess(region=h, size=int(sizes[h]), prevalence=float(guesses[h]), key=h,
                                              judged=int(pair_pilot.get(h, (0, 0))[0]),
                                              relevant=float(pair_pilot.get(h, (0, 0))[1]))
                for h in ("A12", "B1", "B2")]
        rows += [stratified_stats.StratumGuess(region="U", size=s.size, prevalence=float(prior), key=s.key,
                                               judged=pilot[s.key].judged if s.key in pilot else 0,
                                               relevant=float(pilot[s.key].relevant) if s.key in pilot else 0.0)
                 for s in strata]
        plan = stratified_stats.stratified_sample_plan(strata=rows, half_width=float(half_width),
                                                       confidence=float(topic.confidence),
                                                       min_per_stratum=STRATUM_MIN_SAMPLE)
        candidate = ScoredPlan(plan=plan, strata=strata, prior=float(prior), pilot=pilot)
        if best is None or candidate.n_total > best.n_total:
            best = candidate
    return best


@dataclass(frozen=True)
class StratumTarget:
    stratum: ScoreStratum
    guess: float  # the prevalence the plan used for it (prior, or its pilot's Jeffreys mean)
    already: int  # documents the stratum's draws hold
    total: int  # the stratum's total after this stage (never below `already`, never above its size)
    judged: int = 0

    @property
    def new(self) -> int:
        return max(0, self.total - self.already)


def strata_targets(*, plan: ScoredPlan, total: int) -> list[StratumTarget]:
    """Share N's `total` between its score strata as the joint plan allocates them (its Neyman shares), as totals.

    With `total` = ``plan.n_total`` each stratum gets exactly its planned size; another total (an analyst's
    own size of the check) is shared in the same proportions, largest remainders first, each stratum getting
    at least STRATUM_MIN_SAMPLE (or all its documents), so the total drawn may exceed a small `total`. The quote and the draw
    both call this, so what is quoted is what is drawn."""
    planned = plan.n_planned
    prevalence = {row.key: row.prevalence for row in plan.plan.strata if row.region == "U"}
    weight = sum(planned.values())
    if weight == total or weight == 0:
        shares = {s.key: float(planned[s.key]) for s in plan.strata}
    else:
        raw = {s.key: total * planned[s.key] / weight for s in plan.strata}
        shares = {k: float(math.floor(v)) for k, v in raw.items()}
        for k in sorted(raw, key=lambda k: (-(raw[k] - shares[k]), k))[:max(0, int(total - sum(shares.values())))]:
            shares[k] += 1
    result = []
    for s in plan.strata:
        counted = plan.pilot.get(s.key)
        already = counted.sampled if counted else 0
        # Every stratum is sampled (an unjudged stratum leaves the design's recall unknown): at least the plan's
        # floor per stratum, whatever share a smaller total would give it.
        floor = min(s.size, STRATUM_MIN_SAMPLE)
        result.append(StratumTarget(stratum=s, guess=prevalence[s.key], already=already,
                                    total=max(already, floor, min(s.size, int(shares[s.key]))),
                                    judged=counted.judged if counted else 0))
    return result


__all__ = [
    "SCORE_KEY_PREFIX",
    "ScoreStratum",
    "ScoredPlan",
    "StratumTarget",
    "documents_scores",
    "region_score_strata",
    "score_stratum_documents",
    "score_stratum_key",
    "score_stratum_parse",
    "scored_plan",
    "strata_pilot",
    "strata_targets",
    "stratum_words",
]
