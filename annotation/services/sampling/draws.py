"""Seeded draws of documents to judge: the pair's regions, a uniform sample, further classifiers.

Design (ESTIMATION-NOTES §2): the product samples the disjoint regions
A12 = A1 ∩ A2, B1 = A1 ∖ A2 and B2 = A2 ∖ A1 ("stratified"); the paper's separate
samples of A1, A2 and A12 are kept for comparison ("paper"). A further classifier
of the topic gets a precision sample of its retrieved set (region R), and a
uniform sample of the corpus (region U) can validate the whole estimate.

A *stratum* is (topic, purpose, region, classifier, stratum key): every
draw of a stratum is a simple random sample (SRS) of the stratum's population
without replacement, and a later draw of the same stratum (a top-up) excludes
the documents its earlier draws took. The stratum key is opaque here: empty for
the topic's own samples, set by the app that owns a stratum (a certification plan's
sample is `purpose=CERTIFICATION` with the key estimation gives it, and estimation
links the draws to the plan on its side).

Why a top-up keeps the inclusion probabilities right: drawing n1 documents by
SRS from a region of N, then n2 more by SRS from the N − n1 left, gives a sample
whose every subset of size n1 + n2 is equally likely — it *is* an SRS of size
n1 + n2 from the region. So after a top-up every sampled document of the stratum
has inclusion probability (n1 + n2)/N, and `region_sample_draw` rewrites the
stratum's SampledDocument rows to that value (the SampleDraw rows keep what
each draw requested and drew). This holds only while the region is unchanged,
so a top-up of a region whose size changed since its first draw is refused.
A caller's exclusion (`exclude`, e.g. documents a certification must not reuse)
removes documents from the population: probabilities are then relative to the
region minus those documents.

Reproducibility: each draw records its seed, the region size and the bitmap
of every id excluded at the time (`excluded_bitmap`); `sample_draw_reproduce`
re-derives the drawn ids from those alone.
"""
from __future__ import annotations

import secrets
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, TypedDict

import numpy as np
from django.db import transaction
from pyroaring import BitMap

from annotation.events import SampleDrawn
from annotation.models import (
    Classifier,
    ClassifierPair,
    Document,
    Hit,
    Label,
    Region,
    SampledDocument,
    SampleDraw,
    Topic,
)
from annotation.services.classifiers.pairs import pair_design_check
from annotation.services.corpora.backends.external import (
    corpus_is_external,
    external_draw_reproduce,
    external_pair_counts,
    external_pair_counts_cached,
    external_pair_plan,
    external_plan_snapshot_check,
    external_samples_draw,
)
from annotation.services.corpora.retrieved_sets import (
    bitmap_draw,
    bitmap_from_bytes,
    bitmap_from_ids,
    bitmap_to_bytes,
    classifier_bitmap,
    corpus_documents,
    pair_regions,
    region_counts,
)
from annotation.services.crowd.hits import hits_create_for_draws, hits_publish
from annotation.services.sampling.strata import (
    ScoredPlan,
    score_stratum_documents,
    score_stratum_parse,
    scored_plan,
    strata_targets,
)
from core.errors import ApplicationError
from core.events import event_send_on_commit
from estimation.stats.planning import plan_pair_sample, precision_guess_from_pilot

DESIGN_STRATIFIED = "stratified"
DESIGN_PAPER = "paper"
DESIGNS = (DESIGN_STRATIFIED, DESIGN_PAPER)
DESIGN_REGIONS = {DESIGN_STRATIFIED: ("A12", "B1", "B2"), DESIGN_PAPER: ("A12", "A1", "A2")}

# Planning guesses of the regions' precision before any pilot judgment: documents both
# classifiers retrieve are mostly relevant; those only one retrieves mostly are not.
# They only set sample sizes — a wrong guess costs precision of the interval, never bias.
PRIOR_PRECISION = {"A12": 0.8, "B1": 0.2, "B2": 0.2}
DEFAULT_HALF_WIDTH = 0.05
# With fewer judged documents than this in a region, its prior guess is used.
PILOT_MIN_JUDGED = 10


class SamplingError(ApplicationError):
    """The draw cannot be made as asked; the message says why and what to do."""

    http_status: ClassVar[int] = 409
    code: ClassVar[str] = "conflict"


# --------------------------------------------------------------------------- regions


def topic_pair(*, topic: Topic) -> ClassifierPair:
    try:
        return ClassifierPair.objects.select_related("c1", "c2").get(topic=topic)
    except ClassifierPair.DoesNotExist:
        raise SamplingError(f"Topic {topic.name!r} has no classifier pair yet: pair two classifiers first.") from None


def _pair_drawable(*, topic: Topic) -> ClassifierPair:
    """The topic's pair, refused (SamplingError) when it cannot carry an estimate (nested, identical, disjoint).

    Topics created before that rule (or whose classifier changed since) are not sampled: the
    judgments would buy a recall of 1 or 0 by construction (annotation.services.classifiers.pairs.pair_design_check).
    """
    pair = topic_pair(topic=topic)
    check = pair_design_check(c1=pair.c1, c2=pair.c2)
    if check.refused:
        raise SamplingError(f"Topic {topic.name!r} cannot be sampled: {check.errors[0]}")
    return pair


def _corpus_documents(*, topic: Topic) -> BitMap:
    return corpus_documents(corpus_id=topic.corpus_id)


def region_bitmap(*, topic: Topic, region: str, classifier: Classifier | None = None) -> BitMap:
    """The ids of a region of the topic (R needs the further classifier; N is U ∖ (A1 ∪ A2))."""
    if region in ("A12", "B1", "B2", "A1", "A2", Region.NEITHER):
        pair = topic_pair(topic=topic)
        return pair_regions(c1=pair.c1, c2=pair.c2).by_code(region)
    if region == Region.RETRIEVED:
        if classifier is None:
            raise SamplingError("Region R (a classifier's retrieved set) needs the classifier.")
        return classifier_bitmap(classifier=classifier)
    if region == Region.UNIFORM:
        return _corpus_documents(topic=topic)
    raise SamplingError(f"Region {region!r} cannot be drawn from.")


# --------------------------------------------------------------------------- one draw


class _Stratum(TypedDict):
    """The keyword arguments that name one stratum of draws (_stratum_draws, _already_sampled, region_sample_draw)."""

    topic: Topic
    purpose: str
    region: str
    classifier: Classifier | None
    stratum_key: str


def _stratum_draws(*, topic: Topic, purpose: str, region: str, classifier, stratum_key: str = ""):
    return SampleDraw.objects.filter(
        topic=topic,
        purpose=purpose,
        region=region,
        classifier=classifier,
        stratum_key=stratum_key,
    )


def draw_seed_derive(*, seed: int, stream: int, shift: int = 31) -> int:
    """A child seed of ``seed`` for one stream of draws, so strata get independent random streams.

    numpy's SeedSequence([seed, stream]) gives two 32-bit words, folded as
    (w0 << shift) XOR w1 into 62 bits (fits a signed BigIntegerField).  A launch
    uses ``launch_stream(...)`` with shift 31; a certification lock the region's
    index with shift 30.  The shift is part of the recorded derivation: changing
    it would change the order of locked plans and stop old draws reproducing.
    """
    state = np.random.SeedSequence([int(seed) & (2**64 - 1), int(stream)]).generate_state(2, dtype=np.uint32)
    return int((int(state[0]) << shift) ^ int(state[1])) & (2**62 - 1)


def launch_stream(*, region: str, classifier_id: int | None, previous_draws: int) -> int:
    """The stream of one launch draw: crc32 of "region:classifier:earlier draws of the stratum"."""
    return zlib.crc32(f"{region}:{classifier_id or 0}:{previous_draws}".encode())


def region_sample_draw(
    *,
    topic: Topic,
    region: str,
    bitmap: BitMap,
    k: int,
    seed: int,
    purpose: str,
    classifier: Classifier | None = None,
    stratum_key: str = "",
    exclude: BitMap | None = None,
) -> SampleDraw:
    """Draw k more documents (SRS without replacement) from `bitmap`, a region of the topic.

    Documents already sampled in the same stratum are never drawn again; all the
    stratum's documents then carry inclusion probability n_total/|population|
    (see the module docstring). `seed` is used as given and recorded.
    """
    if k < 0:
        raise SamplingError(f"Cannot draw a negative number of documents ({k}).")
    previous = list(
        _stratum_draws(
            topic=topic, purpose=purpose, region=region, classifier=classifier, stratum_key=stratum_key
        )
    )
    region_size = len(bitmap)
    changed = [d for d in previous if d.region_size != region_size]
    if changed:
        raise SamplingError(
            f"Region {region} of topic {topic.name!r} had {changed[0].region_size} documents when first drawn "
            f"and has {region_size} now; a top-up would not be a simple random sample. "
            "Define a new topic (or pair) for the changed classifiers."
        )
    already = bitmap_from_ids(
        SampledDocument.objects.filter(draw__in=previous).values_list("document_id", flat=True)
    )
    caller_exclude = (exclude - already) if exclude else BitMap()
    excluded = already | caller_exclude
    ids = bitmap_draw(bitmap=bitmap, k=k, rng=np.random.default_rng(seed), exclude=excluded)
    draw = SampleDraw.objects.create(
        topic=topic,
        purpose=purpose,
        region=region,
        classifier=classifier,
        stratum_key=stratum_key,
        seed=seed,
        region_size=region_size,
        requested=k,
        drawn=len(ids),
        excluded_bitmap=bitmap_to_bytes(BitMap(excluded)),
    )
    population = region_size - len(caller_exclude & bitmap)
    sampled_total = len(already & bitmap) + len(ids)
    if ids:
        probability = sampled_total / population
        SampledDocument.objects.filter(draw__in=previous).update(inclusion_probability=probability)
        SampledDocument.objects.bulk_create(
            [
                SampledDocument(
                    draw=draw, topic=topic, document_id=doc_id, region=region, inclusion_probability=probability
                )
                for doc_id in ids
            ],
            batch_size=2000,
        )
    return draw


def sample_draw_reproduce(*, draw: SampleDraw) -> list[int]:
    """Re-derive the ids of a draw from its record (seed, region, exclusions), sorted by id.

    A draw of a corpus in the team's engine is re-run there (external.external_draw_reproduce: refused when the
    corpus is no longer in the snapshot the draw measured); its ids are the Document rows the draw stored."""
    if corpus_is_external(corpus_id=draw.topic.corpus_id):
        external_ids = external_draw_reproduce(draw=draw)
        pks = dict(Document.objects.filter(corpus_id=draw.topic.corpus_id, external_id__in=external_ids)
                   .values_list("external_id", "pk"))
        missing = [i for i in external_ids if i not in pks]
        if missing:
            raise SamplingError(f"Draw {draw.pk} re-derives document {missing[0]!r}, which it never stored: "
                                "the draw does not reproduce.")
        return sorted(pks[i] for i in external_ids)
    bitmap = region_bitmap(topic=draw.topic, region=draw.region, classifier=draw.classifier)
    if score_stratum_parse(draw.stratum_key) is not None:
        # A score stratum of the region: its key names the scores it holds (annotation.services.sampling.strata).
        scorer = draw.topic.scorer
        if scorer is None:
            raise SamplingError(f"Draw {draw.pk} sampled a score stratum, but its topic names no scorer now.")
        bitmap = score_stratum_documents(scorer=scorer, documents=bitmap, key=draw.stratum_key)
    if len(bitmap) != draw.region_size:
        raise SamplingError(
            f"Region {draw.region} has {len(bitmap)} documents now but had {draw.region_size} at draw {draw.pk}."
        )
    return bitmap_draw(
        bitmap=bitmap,
        k=draw.requested,
        rng=np.random.default_rng(draw.seed),
        exclude=bitmap_from_bytes(draw.excluded_bitmap),
    )


# --------------------------------------------------------------------------- sizes


@dataclass(frozen=True)
class PairSizes:
    """The pair's region sizes (A1, A2, A12, B1, B2, N) and the corpus state they describe.

    ``snapshot`` is the engine's snapshot token for a corpus that stays in the team's engine (the counts are of that
    state), "" for an imported corpus (its bitmaps are the state)."""

    counts: dict[str, int]
    snapshot: str = ""


def pair_sizes(*, topic: Topic) -> PairSizes:
    """The one place the plan, the quote and the launch get the pair's region sizes.

    An imported corpus: its bitmaps (microseconds). A corpus in the team's engine: the engine's counts of its
    current snapshot, read from the cache (external.external_pair_counts); when not counted yet, the count is
    queued as a task and RegionCountsPending (409, code "counting") says so: no request counts a corpus."""
    pair = topic_pair(topic=topic)
    if corpus_is_external(corpus_id=topic.corpus_id):
        counted = external_pair_counts(c1=pair.c1, c2=pair.c2)
        return PairSizes(counts=dict(counted.counts), snapshot=counted.snapshot)
    return PairSizes(counts=region_counts(c1=pair.c1, c2=pair.c2, include_neither=True))


@dataclass(frozen=True)
class SampledRegion:
    """One region of a topic's sample: distinct documents drawn, those with a majority label, the relevant ones."""

    sampled: int
    judged: int
    relevant: int


def region_sample_labels(
    *, topic: Topic, regions: Sequence[str] = ("A12", "B1", "B2"), purpose: str = SampleDraw.Purpose.PAIR
) -> dict[str, SampledRegion]:
    """Per region: the topic's `purpose` sample counted in distinct documents, judged and relevant.

    A document is judged when its Label has a majority; gold documents (a Label with
    a gold answer: its votes mix gold checks) are never counted as judged. The one
    place these counts are made: the planning guesses below, the certification
    pilot (estimation) and the analyst pages read them from here.
    """
    drawn: dict[str, set[int]] = {region: set() for region in regions}
    rows = SampledDocument.objects.filter(topic=topic, region__in=list(regions), draw__purpose=purpose)
    for region, doc_id in rows.values_list("region", "document_id"):
        drawn[region].add(doc_id)
    majorities = dict(
        Label.objects.filter(topic=topic, gold__isnull=True, majority__isnull=False,
                             document_id__in=rows.values("document_id"))
        .values_list("document_id", "majority")
    )
    result = {}
    for region, doc_ids in drawn.items():
        judged = [bool(majorities[d]) for d in doc_ids if d in majorities]
        result[region] = SampledRegion(sampled=len(doc_ids), judged=len(judged), relevant=sum(judged))
    return result


def region_precision_guesses(*, topic: Topic) -> dict[str, float]:
    """Planning guesses of each pair region's precision: the pilot's Jeffreys posterior mean once
    PILOT_MIN_JUDGED of its sampled documents are judged (gold documents never count), else the prior."""
    guesses = dict(PRIOR_PRECISION)
    for region, counted in region_sample_labels(topic=topic).items():
        if counted.judged >= PILOT_MIN_JUDGED:
            guesses[region] = precision_guess_from_pilot(relevant=counted.relevant, judged=counted.judged)
    return guesses


def topic_scored_plan(*, topic: Topic, half_width: float) -> ScoredPlan | None:
    """The joint plan of a topic with a scorer (annotation.services.sampling.strata.scored_plan) at `half_width`,
    from the pair regions' sizes, precision guesses and pilot; None without a scorer."""
    if topic.scorer_id is None:
        return None
    if corpus_is_external(corpus_id=topic.corpus_id):
        raise SamplingError(
            f"Topic {topic.name!r} names a scorer, but its corpus stays in the team's engine: score strata of N are "
            "not supported there yet (the scores would have to be joined in the engine). Remove the scorer from the "
            "topic's settings to plan and launch without score strata.")
    pair = topic_pair(topic=topic)
    regions = pair_regions(c1=pair.c1, c2=pair.c2)
    counted = region_sample_labels(topic=topic)
    try:
        return scored_plan(topic=topic, half_width=half_width, neither=regions.by_code(Region.NEITHER),
                           sizes=regions.counts(), guesses=region_precision_guesses(topic=topic),
                           pair_pilot={h: (c.judged, c.relevant) for h, c in counted.items()})
    except ValueError as exc:
        raise SamplingError(f"Cannot plan the score strata of topic {topic.name!r}: {exc}") from exc


def planned_region_sizes(*, topic: Topic, half_width: float, design: str = DESIGN_STRATIFIED) -> dict[str, int]:
    """Total judgments per region for recall of both classifiers ± half_width (estimation.stats.planning).

    With a scorer (stratified design), each pair region gets at least what the joint plan with N's score strata
    gives it (``topic_scored_plan``), so the design-based interval is expected within the half-width too."""
    counts = pair_sizes(topic=topic).counts
    guesses = region_precision_guesses(topic=topic)
    try:
        plan = plan_pair_sample(
            size_a12=counts["A12"],
            size_b1=counts["B1"],
            size_b2=counts["B2"],
            p12=guesses["A12"],
            p_b1=guesses["B1"],
            p_b2=guesses["B2"],
            half_width=half_width,
            confidence=topic.confidence,
            target="both",
        )
    except ValueError as exc:
        raise SamplingError(f"Cannot plan the sample of topic {topic.name!r}: {exc}") from exc
    _pair_drawable(topic=topic)
    sizes = plan.stratified if design == DESIGN_STRATIFIED else plan.paper_design
    result = {region: int(sizes.get(region, 0)) for region in DESIGN_REGIONS[design]}
    joint = topic_scored_plan(topic=topic, half_width=half_width) if design == DESIGN_STRATIFIED else None
    if joint is not None:
        result = {region: max(n, joint.pair_planned.get(region, 0)) for region, n in result.items()}
    return result


def _already_sampled(*, topic: Topic, purpose: str, region: str, classifier=None, stratum_key: str = "") -> int:
    return SampledDocument.objects.filter(
        draw__in=_stratum_draws(
            topic=topic, purpose=purpose, region=region, classifier=classifier, stratum_key=stratum_key
        )
    ).count()


# --------------------------------------------------------------------------- the launch


def samples_draw(
    *,
    topic: Topic,
    half_width: float | None = None,
    per_region: int | None = None,
    uniform: int = 0,
    seed: int | None = None,
    design: str = DESIGN_STRATIFIED,
    extra_per_classifier: int | None = None,
    exclude_documents: BitMap | None = None,
    purpose: str = SampleDraw.Purpose.PAIR,
    stratum_key: str = "",
    complement: int = 0,
    plan_snapshot: str = "",
) -> list[SampleDraw]:
    """Draw the topic's samples up to the requested *totals*; returns the new draws.

    Sizes are totals per stratum, so running the same launch twice draws nothing
    new and asking for more tops the strata up: `per_region` (every region of the
    design) or `half_width` (sizes from `estimation.stats.planning.plan_pair_sample`
    with pilot or prior precision guesses; the default when neither is given).
    `uniform` is the total of a uniform corpus sample; `extra_per_classifier` the
    precision sample of each further classifier (default: `per_region`, else the
    planned A12 size). `per_region=0` skips the pair's regions (e.g. a
    certification that needs only a uniform sample). `complement` is the total
    of the dependence check: an SRS of region N = U ∖ (A1 ∪ A2), the documents
    neither classifier retrieved, recorded as a stratum of the pair's design
    (purpose PAIR, region N; estimation reads it as sample key "N"), with the
    same top-up rules; 0 (the default) draws none. With
    `purpose=CERTIFICATION` every draw is recorded under that purpose and the
    caller's non-empty `stratum_key` (e.g. one per certification plan), so
    certification samples are strata of their own. When the topic names a
    scorer, the dependence check's `complement` is shared between N's score
    strata (annotation.services.sampling.strata: Neyman from the prior, then
    from each stratum's pilot), each drawn as its own SRS under its score key.

    A corpus that stays in the team's engine is drawn there (``_external_draw``): the pair's regions and N, with
    `plan_snapshot` the snapshot the confirmed plan counted (a corpus changed since is refused, naming the files).
    """
    if design not in DESIGNS:
        raise SamplingError(f"Unknown design {design!r}; use one of {', '.join(DESIGNS)}.")
    if half_width is not None and per_region is not None:
        raise SamplingError("Give either a half-width or a per-region size, not both.")
    if per_region is not None and per_region < 0:
        raise SamplingError("The per-region size cannot be negative.")
    if uniform < 0 or complement < 0 or (extra_per_classifier is not None and extra_per_classifier < 0):
        raise SamplingError("Sample sizes cannot be negative.")
    if purpose not in SampleDraw.Purpose.values:
        raise SamplingError(f"Unknown purpose {purpose!r}.")
    certifying = purpose == SampleDraw.Purpose.CERTIFICATION
    if certifying != bool(stratum_key):
        raise SamplingError("A certification draw needs its stratum key (one per certification plan), and only it takes one.")
    seed = secrets.randbits(62) if seed is None else int(seed)

    with transaction.atomic():
        # One launch per topic at a time: two analysts topping up at once would double-draw.
        topic = Topic.objects.select_for_update().select_related("corpus").get(pk=topic.pk)
        if topic.status == Topic.Status.CLOSED:
            raise SamplingError(f"Topic {topic.name!r} is closed: it takes no more samples.")
        if topic.is_multiclass:
            _topic_set_options_check(
                topic=topic, half_width=half_width, per_region=per_region, design=design,
                extra_per_classifier=extra_per_classifier, complement=complement,
            )
        if corpus_is_external(corpus_id=topic.corpus_id):
            return _external_draw(topic=topic, half_width=half_width, per_region=per_region, uniform=uniform,
                                  seed=seed, design=design, extra_per_classifier=extra_per_classifier,
                                  exclude_documents=exclude_documents, purpose=purpose, complement=complement,
                                  plan_snapshot=plan_snapshot)
        if per_region is not None:
            targets = dict.fromkeys(DESIGN_REGIONS[design], per_region)
        else:
            targets = planned_region_sizes(topic=topic, half_width=half_width or DEFAULT_HALF_WIDTH, design=design)
        pair_purpose = (
            purpose if certifying else SampleDraw.Purpose.PAIR if design == DESIGN_STRATIFIED else SampleDraw.Purpose.PAPER
        )
        # (purpose, region, classifier, total, stratum key, population) per stratum to draw.
        plans: list[tuple[str, str, Classifier | None, int, str, BitMap]] = []
        if any(targets.values()):
            pair = _pair_drawable(topic=topic)
            regions = pair_regions(c1=pair.c1, c2=pair.c2)
            plans += [(pair_purpose, region, None, n, stratum_key, regions.by_code(region))
                      for region, n in targets.items()]
        if complement:
            # Region N belongs to the pair's stratified design whatever the design of A12/B1/B2 (or A1/A2).
            pair = _pair_drawable(topic=topic)
            neither = pair_regions(c1=pair.c1, c2=pair.c2).by_code(Region.NEITHER)
            # With a scorer, N is drawn by score strata, each its own SRS (annotation.services.sampling.strata);
            # a certification's sample of N stays one SRS under its plan's key.
            joint = None if certifying else topic_scored_plan(topic=topic, half_width=half_width or DEFAULT_HALF_WIDTH)
            by_score = [] if joint is None else strata_targets(plan=joint, total=complement)
            if by_score:
                plans += [(SampleDraw.Purpose.PAIR, Region.NEITHER, None, target.total, target.stratum.key,
                           BitMap(target.stratum.documents)) for target in by_score]
            else:
                plans.append((purpose if certifying else SampleDraw.Purpose.PAIR, Region.NEITHER, None, complement,
                              stratum_key, neither))
        if uniform:
            plans.append((purpose if certifying else SampleDraw.Purpose.UNIFORM, Region.UNIFORM, None, uniform,
                          stratum_key, _corpus_documents(topic=topic)))
        extra_n = extra_per_classifier
        if extra_n is None:
            extra_n = per_region if per_region is not None else targets.get("A12", 0)
        if extra_n:
            for link in topic.extra_classifiers.select_related("classifier"):
                plans.append((purpose if certifying else SampleDraw.Purpose.PRECISION, Region.RETRIEVED,
                              link.classifier, extra_n, stratum_key, classifier_bitmap(classifier=link.classifier)))

        draws = []
        for draw_purpose, region, classifier, total, key, bitmap in plans:
            stratum = _Stratum(
                topic=topic, purpose=draw_purpose, region=region, classifier=classifier, stratum_key=key,
            )
            # A region smaller than asked is judged in full; once it is, there is nothing to top up.
            k = max(0, min(total, len(bitmap)) - _already_sampled(**stratum))
            if k == 0:
                continue
            previous = _stratum_draws(**stratum).count()
            # A score stratum gets a stream of its own; every other stratum keeps the stream it always had.
            stream_region = f"{region}|{key}" if score_stratum_parse(key) is not None else region
            draws.append(
                region_sample_draw(
                    bitmap=bitmap,
                    k=k,
                    seed=draw_seed_derive(seed=seed, stream=launch_stream(
                        region=stream_region, classifier_id=classifier.pk if classifier else None,
                        previous_draws=previous,
                    )),
                    exclude=exclude_documents,
                    **stratum,
                )
            )
        return draws


def _external_draw(
    *, topic: Topic, half_width: float | None, per_region: int | None, uniform: int, seed: int, design: str,
    extra_per_classifier: int | None, exclude_documents: BitMap | None, purpose: str, complement: int,
    plan_snapshot: str,
) -> list[SampleDraw]:
    """samples_draw for a corpus in the team's engine (called under the topic's lock): the pair's stratified
    regions and the dependence check N, drawn in the engine (external.external_samples_draw), seeds derived as for
    an imported corpus. What the engine cannot draw yet is refused with the reason."""
    unsupported = []
    if design != DESIGN_STRATIFIED:
        unsupported.append("the paper design")
    if purpose != SampleDraw.Purpose.PAIR:
        unsupported.append(f"{SampleDraw.Purpose(purpose).label.lower()} samples")
    if uniform:
        unsupported.append("a uniform sample of the corpus")
    if exclude_documents:
        unsupported.append("excluded documents")
    if extra_per_classifier or topic.extra_classifiers.exists():
        unsupported.append("precision samples of further classifiers")
    if unsupported:
        raise SamplingError(f"Topic {topic.name!r}: its corpus stays in the team's engine, which draws the pair's "
                            f"regions and the dependence check only, not {' or '.join(unsupported)}.")
    topic_scored_plan(topic=topic, half_width=half_width or DEFAULT_HALF_WIDTH)  # refuses a scorer, with the reason
    # A corpus changed since the confirmed plan is refused before anything is counted or drawn, naming the files.
    now = external_plan_snapshot_check(topic=topic, plan_snapshot=plan_snapshot)
    pair = topic_pair(topic=topic)
    if external_pair_counts_cached(c1=pair.c1, c2=pair.c2, snapshot=now.token) is None:
        # Only in the launch's task (the launch guard refuses a request until the counts are cached): count here.
        external_pair_plan(topic=topic)
    if per_region is not None:
        targets = dict.fromkeys(DESIGN_REGIONS[design], per_region)
    else:
        targets = planned_region_sizes(topic=topic, half_width=half_width or DEFAULT_HALF_WIDTH, design=design)
    if complement:
        targets[Region.NEITHER] = complement
    _pair_drawable(topic=topic)
    sizes = pair_sizes(topic=topic).counts
    # A region smaller than asked is judged in full (as for an imported corpus).
    totals = {region: min(total, sizes.get(region, 0)) for region, total in targets.items() if total}

    def seed_for(region: str, previous: int) -> int:
        return draw_seed_derive(seed=seed, stream=launch_stream(region=region, classifier_id=None,
                                                                previous_draws=previous))

    return external_samples_draw(topic=topic, per_region=totals, seed_for=seed_for, plan_snapshot=plan_snapshot,
                                 regions=tuple(totals), purpose=SampleDraw.Purpose.PAIR)


def _topic_set_options_check(
    *, topic: Topic, half_width: float | None, per_region: int | None, design: str,
    extra_per_classifier: int | None, complement: int,
) -> None:
    """A topic set (multiclass) has no classifier pair: only its uniform sample can be drawn."""
    asked = []
    if half_width is not None or per_region is None or per_region > 0:
        asked.append("samples of a classifier pair's regions (give per_region=0)")
    if design != DESIGN_STRATIFIED:
        asked.append("the paper design")
    if complement:
        asked.append("the dependence check (region N)")
    if extra_per_classifier:
        asked.append("precision samples of further classifiers")
    if asked:
        raise SamplingError(
            f"Topic {topic.name!r} is a topic set: it has no classifier pair, so it takes only a uniform sample "
            f"of the corpus, not {' or '.join(asked)}."
        )


@dataclass(frozen=True)
class Launch:
    draws: list[SampleDraw]
    hits: list[Hit]

    @property
    def documents(self) -> int:
        return sum(d.drawn for d in self.draws)


def samples_launch(*, topic: Topic, publish: bool = True, **options) -> Launch:
    """Draw (see `samples_draw` for the options), queue the new documents into HITs and publish them.

    One transaction: if the budget refuses the HITs, no draw is recorded either.
    The topic moves from draft to sampling.
    """
    with transaction.atomic():
        draws = samples_draw(topic=topic, **options)
        return draws_launch(topic=topic, draws=draws, publish=publish)


def draws_launch(*, topic: Topic, draws: list[SampleDraw], publish: bool = True) -> Launch:
    """Put drawn documents to work: HITs for the draws (budget permitting), draft -> sampling, publish, announce.

    The end of every launch (``samples_launch``, a certification plan's lock): the HITs are created
    under the topic row lock (``hits_create_for_draws``; a caller holding it keeps it), a draft topic
    starts sampling, the HITs are published, and SampleDrawn is announced after commit once per
    stratum key of the draws. One transaction with the caller's: a budget too small refuses it all.
    """
    with transaction.atomic():
        hits = hits_create_for_draws(topic=topic, draws=draws)
        Topic.objects.filter(pk=topic.pk, status=Topic.Status.DRAFT).update(status=Topic.Status.ACTIVE)
        topic.refresh_from_db(fields=["status"])
        if publish:
            hits_publish(hits=hits)
        # Score strata are parts of the topic's own sample: announced as it is (key ""), once.
        for key in sorted({"" if score_stratum_parse(draw.stratum_key) else draw.stratum_key for draw in draws}):
            event_send_on_commit(event=SampleDrawn(topic_id=topic.pk, stratum_key=key))
        return Launch(draws=draws, hits=hits)


def samples_launch_enqueue(*, topic: Topic, **options) -> None:
    """Launch in a Celery task once the caller's transaction commits (options must be JSON-able).

    For views: drawing and creating hundreds of HITs does not belong in a request.
    Errors (budget, missing pair) surface in the task; call `samples_launch` directly
    to get them synchronously.
    """
    from annotation.tasks_sampling import samples_draw_task  # noqa: PLC0415 — a task module imports this service

    topic_id = topic.pk
    transaction.on_commit(lambda: samples_draw_task.delay(topic_id=topic_id, options=options), robust=True)
