"""Gather, for one topic, every number the estimators of `estimation.stats` need.

The result, `TopicInputs`, is a plain frozen dataclass that serialises to JSON:
it is stored as the `inputs` of an EstimateSnapshot, and its checksum decides
whether a recompute produces a new snapshot version.  Everything a report says
is a function of these inputs (plus the number of draws and the seed, which are
recorded in `parameters`).

Wiring decisions (documented in docs/report.md):

* A document counts as judged when its Label has a majority (the crowd code sets
  it when the third judgment lands).  An "unsure" vote (Topic.allow_unsure) fills a
  worker's place but is left out of the majority, which is taken over the sure votes:
  a complete label with no sure vote, or with the sure votes tied, is *undecided*
  (majority NULL).  Undecided documents are not judged for any estimator (never read
  as "not relevant"); they are counted per sample (``SampleInputs.undecided``) and
  for the topic (``undecided``) so the report can disclose them (docs/aggregation.md).  Its value is 1.0/0.0 from the majority, or
  the Dawid–Skene posterior P(relevant) when the topic's aggregator is
  dawid_skene and a posterior is stored (soft label); without a stored
  posterior the majority is used.
* Gold documents injected as checks (SampledDocuments of region G) are in no estimate.
  A document drawn into an estimation sample that carries a gold answer (an analyst
  made a judged document gold) stays in its sample with the gold answer as its
  label: dropping it would leave the rest of the sample non-random (analysts pick
  clear-cut documents).  Its votes (which mix gold-check judgments) stay out of the
  agreement figures.
* Regions are counted in distinct documents: a document drawn twice for the same
  region (e.g. by the pair design and the paper design, both sampling A12)
  counts once.  The pair/paper regions (A12, B1, B2, A1, A2) are keyed by region
  code; precision samples (R) by the classifier of their draw.
* Certification draws are left out: their designs (and inclusion
  probabilities) belong to the certification test, which is computed once on
  its own locked sample.  The judgments and the cost spent on documents that
  only certification samples hold are counted apart (``certification_judgments``,
  ``certification_spent``), so the report's judgment count, cost per judged
  document and recall history describe the estimation sample alone.
* The complement sample (region N = documents neither classifier retrieved, the
  dependence check of issue 11) is keyed "N"; its size is |U| − |A1 ∪ A2| with
  |U| = corpus.document_count, as everywhere else in the report (no read of the
  corpus bitmap).
* Each judged document's votes — its *sure* votes: (on topic, on topic + off topic),
  unsure ones left out and counted apart in ``unsure_votes`` — are kept with its sample (``SampleInputs.votes``)
  and, for worker agreement, with the key of the first sample holding it
  (``vote_strata``, parallel to ``votes``).
* Region sizes come from the retrieved-set bitmaps, never from joins. A corpus in the team's engine has no
  bitmaps: its sizes are the engine's counts its draws recorded (engine_counts.engine_topic_counts), |A1| and
  |A2| derived from them, the pair's membership of a sampled document known from its region; a further
  classifier's size and overlaps are not counted there (``retrieved`` None, the report says so).
"""
from __future__ import annotations

import hashlib
import json
import logging
from collections import defaultdict
from dataclasses import dataclass, field, fields
from decimal import Decimal
from typing import Any

from django.db.models import Count, Sum

from annotation.models import (
    Assignment,
    Classifier,
    ClassifierPair,
    Hit,
    Judgment,
    Label,
    Region,
    SampledDocument,
    SampleDraw,
    Topic,
    TopicClassifier,
)
from annotation.selectors import topic_gold_answers
from annotation.services.corpora.engine_counts import (
    corpus_in_engine,
    engine_classifier_size,
    engine_region_members,
    engine_topic_counts,
)
from annotation.services.corpora.retrieved_sets import classifier_bitmap, region_counts
from annotation.services.crowd.adjudication import topic_adjudications
from annotation.services.crowd.crowds import crowd_cost_per_assignment
from annotation.services.crowd.labels import UNSAMPLED_STRATUM, labels_strata
from annotation.services.crowd.model_judge import model_judge_answers
from core.errors import ApplicationError
from estimation.selectors import certification_summary

logger = logging.getLogger(__name__)

# The schema of the inputs dict; bump when its meaning changes.
# 2: N samples, per-sample votes, vote strata, certification judgments and cost apart;
# 3: votes are the sure votes (an "unsure" one is left out), undecided documents and unsure votes counted.
# (The "strata" of a sample drawn by strata are an optional addition to 3: absent, the inputs are as before.
# So are a Dawid–Skene topic's "crowd_judgments", issue 24 item 5.)
INPUTS_SCHEMA = 3

PAIR_REGIONS = ("A12", "B1", "B2")
NEITHER = "N"  # Region.NEITHER: the complement of the pair's union (the dependence check)
PAPER_REGIONS = ("A1", "A2")


@dataclass(frozen=True)
class ClassifierInputs:
    id: int
    name: str
    fingerprint: str
    role: str  # "c1", "c2" or "extra"
    # |A_C|; None for a further classifier of a corpus in the team's engine: its retrieved set is not counted
    # with the pair's (the report says NOT_COUNTED, never 0).
    retrieved: int | None


@dataclass(frozen=True)
class SampleInputs:
    """The judged documents of one sampled region and their labels."""

    key: str  # "A12", "B1", "B2", "A1", "A2", "N", "R:<classifier id>" or "U"
    region: str  # the Region code
    classifier_id: int | None  # the classifier whose retrieved set was sampled (region R)
    size: int  # documents in the region (|region|; the corpus size for U)
    sampled: int  # distinct documents drawn (judged or not yet)
    document_ids: tuple[int, ...]  # judged documents, ascending
    labels: tuple[float, ...]  # per judged document: 1.0/0.0, or P(relevant) for soft labels
    # retrieved_by[i]: ids of the topic's classifiers (pair and extras) whose retrieved set holds document_ids[i].
    retrieved_by: tuple[tuple[int, ...], ...]
    # votes[i]: (relevant votes, sure votes) of document_ids[i] ("unsure" votes left out); empty when not gathered.
    votes: tuple[tuple[int, int], ...] = ()
    # Drawn documents whose label is complete but undecided (no sure vote, or the sure votes tie): not judged.
    undecided: int = 0
    # gold[i]: document_ids[i] carries a gold answer (its label is the truth); empty when none does, so the
    # inputs (and their checksum) of topics without gold in their samples are as before.
    gold: tuple[bool, ...] = ()

    @property
    def judged(self) -> int:
        return len(self.document_ids)

    @property
    def relevant(self) -> float:
        # Summed in document-id order so the float is the same on every run.
        return float(sum(self.labels))


@dataclass(frozen=True)
class StratumInputs:
    """One stratum of a sample drawn by strata (a score stratum of N): its own size and judged documents.

    The sample's ``SampleInputs`` keeps every document of the region; this says which of its judged documents
    each stratum drew, so the estimator weighs each stratum by its own size (n_h/N_h inclusion probability).
    """

    key: str  # the draws' stratum key, e.g. "score:2/4:0.31:0.57"
    size: int  # N_h: documents of the region in this stratum
    sampled: int  # distinct documents the stratum's draws took
    document_ids: tuple[int, ...]  # of them, the judged ones, ascending

    @property
    def judged(self) -> int:
        return len(self.document_ids)


@dataclass(frozen=True)
class CrowdJudgmentsInputs:
    """Every sure judgment of a Dawid–Skene topic, as ``annotation.services.crowd.labels`` fits its posteriors.

    The report draws the Bayesian Dawid–Skene chain from them (issue 24 item 5), so its intervals carry the
    uncertainty of the workers' accuracies.  Items are the judged documents in document order; workers are
    numbered 0, 1, … in the order of their first judgment (no worker id is stored); strata are
    ``labels_strata``'s keys (the sample that drew the document: one class prior each); gold items keep
    their known answer.  Parallel tuples, one entry per judgment in ``items``/``workers``/``answers``.
    """

    document_ids: tuple[int, ...]  # item index → document id
    strata: tuple[str, ...]  # per item
    items: tuple[int, ...]
    workers: tuple[int, ...]
    answers: tuple[int, ...]  # 1 on topic, 0 off topic ("unsure" left out: a missing observation)
    gold_items: tuple[int, ...] = ()
    gold_answers: tuple[int, ...] = ()


@dataclass(frozen=True)
class CostInputs:
    assignments: int  # submitted or approved assignments
    rewards: str  # Decimal as a string: sum of the HIT rewards of those assignments
    spent: str  # rewards plus crowd fees when the crowd module prices them
    includes_fees: bool


@dataclass(frozen=True)
class TopicInputs:
    schema: int
    topic_id: int
    topic_name: str
    corpus_size: int
    aggregator: str
    soft_labels: bool
    target_recall: float
    confidence: float
    crowd: str
    c1: ClassifierInputs | None
    c2: ClassifierInputs | None
    extras: tuple[ClassifierInputs, ...]
    # |A1|, |A2|, |A12|, |B1|, |B2| of the pair; empty without a pair.
    region_sizes: dict[str, int]
    # Keyed like SampleInputs.key; only regions that have sampled documents.
    samples: dict[str, SampleInputs]
    # Per further classifier C (key: its id as a string), the sizes of the seven regions of the
    # A1/A2/A_C Venn diagram keyed by capture history "x1x2x3" (log-linear capture–recapture).
    venn3: dict[str, dict[str, int]]
    judgments: int  # Judgment rows of the topic (gold checks included: they cost too)
    # Fleiss' kappa needs every worker's vote: (votes_relevant, sure votes) per judged non-gold document
    # ("unsure" votes are left out here and counted in ``unsure_votes``).
    votes: tuple[tuple[int, int], ...]
    cost: CostInputs
    # estimation.selectors.certification_summary(topic=...): {"state": "none"} without a plan.
    certification: dict[str, Any]
    code_version: str
    parameters: dict[str, Any] = field(default_factory=dict)  # draws, seed, ...
    # The sample key of each entry of ``votes`` (the first sample holding the document), for agreement per stratum.
    vote_strata: tuple[str, ...] = ()
    # Judgments of documents that only certification samples hold, and their share of the cost (Decimal string).
    certification_judgments: int = 0
    certification_spent: str = "0"
    # Sampled (non-gold, non-certification) documents whose complete label is undecided; in no estimate.
    undecided: int = 0
    # "Unsure" votes on the sampled documents (decided or not), and the judged documents that have one
    # (their entry in ``votes`` holds fewer than three sure votes).
    unsure_votes: int = 0
    unsure_documents: int = 0
    # Samples drawn by strata (today: "N" when the topic names a scorer), keyed like ``samples``: each stratum's
    # size and judged documents. Empty for samples drawn as one simple random sample (left out of ``as_dict``
    # then, so an unstratified topic's checksum is what it was).
    strata: dict[str, tuple[StratumInputs, ...]] = field(default_factory=dict)
    # The latest finished model-judge run's answers (annotation.services.crowd.model_judge.JudgeAnswers, issue 28)
    # and its identity "<run id>:<finished at>": only the identity enters the stored inputs and their checksum
    # (the answers are rows of that run), and only when there is one, so topics without a judge are as before.
    model_judge: Any = None
    model_judge_run: str = ""
    # Sampled documents an analyst adjudicated (annotation.services.crowd.adjudication): their label is the
    # adjudicated answer, counted as certain. Left out of ``as_dict`` when 0, so other topics' checksums stay.
    adjudicated: int = 0
    # Dawid–Skene topics: every sure judgment, for the posterior draws of the workers' accuracies (issue 24
    # item 5). None on majority topics and topic sets; left out of ``as_dict`` then, so their checksums stay.
    crowd_judgments: CrowdJudgmentsInputs | None = None

    def sample(self, key: str) -> SampleInputs | None:
        return self.samples.get(key)

    def sample_strata(self, key: str) -> tuple[StratumInputs, ...]:
        """The strata of sample `key` (empty: one simple random sample of its region)."""
        return self.strata.get(key, ())

    @property
    def pair(self) -> tuple[ClassifierInputs, ClassifierInputs] | None:
        """(c1, c2), or None without a pair: the two are gathered together, from the topic's ClassifierPair."""
        if self.c1 is None:
            return None
        assert self.c2 is not None
        return self.c1, self.c2

    def as_dict(self) -> dict[str, Any]:
        """The stored (JSON) form.  Built by hand: dataclasses.asdict deep-copies every
        tuple of a 1,500-document sample and was the slowest step of a recompute."""
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        for name in ("c1", "c2"):
            data[name] = None if data[name] is None else _shallow(data[name])
        data["extras"] = [_shallow(c) for c in self.extras]
        data["cost"] = _shallow(self.cost)
        data["region_sizes"] = dict(self.region_sizes)
        data["venn3"] = {key: dict(sizes) for key, sizes in self.venn3.items()}
        data["votes"] = [list(v) for v in self.votes]
        data["vote_strata"] = list(self.vote_strata)
        data["parameters"] = dict(self.parameters)
        data["samples"] = {
            key: {
                "key": s.key, "region": s.region, "classifier_id": s.classifier_id, "size": s.size,
                "sampled": s.sampled, "document_ids": list(s.document_ids), "labels": list(s.labels),
                "retrieved_by": [list(r) for r in s.retrieved_by],
                "votes": [list(v) for v in s.votes],
                "undecided": s.undecided,
                # Not fields, but handy for anyone reading a stored snapshot.
                "judged": s.judged, "relevant": s.relevant,
            }
            for key, s in self.samples.items()
        }
        if self.strata:
            data["strata"] = {key: [_shallow(stratum) | {"document_ids": list(stratum.document_ids)}
                                    for stratum in strata] for key, strata in self.strata.items()}
        else:
            del data["strata"]
        del data["model_judge"]
        if not self.model_judge_run:
            del data["model_judge_run"]
        if not self.adjudicated:
            del data["adjudicated"]
        if self.crowd_judgments is None:
            del data["crowd_judgments"]
        else:
            data["crowd_judgments"] = {f.name: list(getattr(self.crowd_judgments, f.name))
                                       for f in fields(self.crowd_judgments)}
        return data

    def checksum(self) -> str:
        return inputs_checksum(inputs=self.as_dict())


def _shallow(value: Any) -> dict[str, Any]:
    return {f.name: getattr(value, f.name) for f in fields(value)}


def inputs_checksum(*, inputs: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of an inputs dict (sorted keys, no spaces)."""
    canonical = json.dumps(inputs, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _classifier_inputs(classifier: Classifier, role: str, engine: _EngineCounts | None = None) -> ClassifierInputs:
    return ClassifierInputs(
        id=classifier.pk,
        name=classifier.name,
        fingerprint=classifier.fingerprint,
        role=role,
        retrieved=(len(classifier_bitmap(classifier=classifier)) if engine is None else engine_classifier_size(
            classifier_id=classifier.pk, c1_id=engine.c1_id, c2_id=engine.c2_id, counts=engine.counts)),
    )


@dataclass(frozen=True)
class _EngineCounts:
    """A topic over a corpus in the team's engine: the pair's region sizes its draws recorded (no bitmaps)."""

    c1_id: int
    c2_id: int
    counts: dict[str, int]  # A1, A2, A12, B1, B2, N (annotation.services.corpora.engine_counts.engine_topic_counts)


@dataclass
class _Labels:
    values: dict[int, float] = field(default_factory=dict)  # judged documents: 1.0/0.0 or P(relevant)
    gold: set[int] = field(default_factory=set)
    votes: dict[int, tuple[int, int]] = field(default_factory=dict)  # judged: (relevant, sure votes)
    undecided: set[int] = field(default_factory=set)  # complete, no majority over the sure votes
    unsure: dict[int, int] = field(default_factory=dict)  # "unsure" votes per non-gold document (when any)
    adjudicated: set[int] = field(default_factory=set)  # non-gold documents whose label an analyst adjudicated


def _label_values(*, topic: Topic, soft: bool) -> _Labels:
    """Label value per judged document, the gold documents, the sure votes, the undecided documents."""
    result = _Labels()
    adjudications = topic_adjudications(topic=topic)
    rows = Label.objects.filter(topic=topic).values_list(
        "document_id", "majority", "posterior", "gold", "votes_relevant", "votes_total", "votes_unsure"
    )
    for document_id, majority, posterior, gold_answer, votes_relevant, votes_total, votes_unsure in rows:
        if gold_answer is not None:
            # A known answer: its value is the truth, and its votes (which mix gold-check judgments)
            # stay out of every agreement figure. A sampled document that became gold keeps its place
            # in its sample — dropping it would make the rest of that sample non-random.
            result.gold.add(document_id)
            result.values[document_id] = 1.0 if gold_answer else 0.0
            result.votes[document_id] = (Hit.ASSIGNMENTS_PER_HIT if gold_answer else 0, Hit.ASSIGNMENTS_PER_HIT)
            continue
        if votes_unsure:
            result.unsure[document_id] = int(votes_unsure)
        if document_id in adjudications and votes_total >= Hit.ASSIGNMENTS_PER_HIT:
            # An analyst's final answer, counted as certain like gold; the crowd's votes stay in the agreement.
            result.adjudicated.add(document_id)
            result.values[document_id] = 1.0 if adjudications[document_id] else 0.0
            result.votes[document_id] = (int(votes_relevant), int(votes_total) - int(votes_unsure))
            continue
        if majority is None:
            if votes_total >= Hit.ASSIGNMENTS_PER_HIT:
                result.undecided.add(document_id)  # complete, but no sure vote or a tie among them
            continue  # else: fewer than three judgments so far
        if soft and posterior is not None:
            result.values[document_id] = min(1.0, max(0.0, float(posterior)))
        else:
            result.values[document_id] = 1.0 if majority else 0.0
        result.votes[document_id] = (int(votes_relevant), int(votes_total) - int(votes_unsure))
    return result


_COUNTED = (Assignment.Status.SUBMITTED, Assignment.Status.APPROVED)


def _fee_per_assignment(*, topic: Topic) -> Decimal | None:
    """The crowd's fee per assignment (e.g. Amazon's commission), None when the crowd cannot price it."""
    try:
        fee = Decimal(crowd_cost_per_assignment(topic)) - Decimal(topic.reward_per_hit)
    except ApplicationError:  # an unknown crowd must not break a report: rewards are the cost
        logger.warning("crowd cost unavailable for topic %s; reporting rewards only", topic.pk, exc_info=True)
        return None
    return max(fee, Decimal(0))


def _cost(*, topic: Topic, fee: Decimal | None) -> CostInputs:
    """Rewards of submitted/approved assignments, plus the crowd's fee per assignment when priced.

    The fee is crowd_cost_per_assignment(topic) minus the topic's current reward
    (e.g. Amazon's commission); each HIT's own reward is summed as recorded.
    """
    totals = Assignment.objects.filter(hit__topic=topic, status__in=_COUNTED).aggregate(
        n=Count("id"), rewards=Sum("hit__reward"))
    assignments = int(totals["n"] or 0)
    rewards = Decimal(totals["rewards"] or 0)
    spent, includes_fees = rewards, False
    if fee is not None:
        spent, includes_fees = rewards + fee * assignments, True
    return CostInputs(assignments=assignments, rewards=str(rewards), spent=str(spent), includes_fees=includes_fees)


def _certification_share(*, topic: Topic, fee: Decimal | None) -> tuple[int, Decimal]:
    """Judgments of documents only certification samples hold, and their share of the cost.

    An assignment's cost (its HIT's reward plus the fee) is split evenly over the
    documents it judged, so a HIT mixing estimation and certification documents
    is charged to each in proportion.  Two subqueries and one grouped query.
    """
    estimation_documents = (SampledDocument.objects.filter(topic=topic)
                            .exclude(draw__purpose=SampleDraw.Purpose.CERTIFICATION).values("document_id"))
    certification_documents = (SampledDocument.objects.filter(topic=topic, draw__purpose=SampleDraw.Purpose.CERTIFICATION)
                               .exclude(document_id__in=estimation_documents).values("document_id"))
    judgments = Judgment.objects.filter(topic=topic, document_id__in=certification_documents)
    count = judgments.count()
    if count == 0:
        return 0, Decimal(0)
    per_assignment = (judgments.filter(assignment__status__in=_COUNTED).values("assignment_id")
                      .annotate(n=Count("id")).values_list("assignment_id", "n"))
    certification_by_assignment = dict(per_assignment)
    spent = Decimal(0)
    if certification_by_assignment:
        rows = (Assignment.objects.filter(pk__in=list(certification_by_assignment))
                .annotate(judged=Count("judgments")).values_list("pk", "hit__reward", "judged"))
        for pk, reward, judged in rows:
            cost = Decimal(reward or 0) + (fee or Decimal(0))
            if judged:
                spent += cost * certification_by_assignment[pk] / judged
    return count, spent


def _certification(*, topic: Topic) -> dict[str, Any]:
    """The certification block of the report; an input, so a new verdict makes a new snapshot."""
    try:
        summary = certification_summary(topic=topic)
    except Exception:  # a certification bug must not take the recall report down
        logger.exception("certification_summary failed for topic %s", topic.pk)
        return {"state": "unavailable"}
    # Round-trip through JSON so the stored inputs and the checksum see plain types.
    return json.loads(json.dumps(summary, default=str))


def topic_inputs_gather(*, topic: Topic, parameters: dict[str, Any] | None = None, code_version: str = "") -> TopicInputs:
    """Everything the report of `topic` is computed from, read in a handful of queries.

    `parameters` (draws, seed, ...) and `code_version` are recorded verbatim so the
    checksum changes when either does.
    """
    soft = topic.aggregator == Topic.Aggregator.DAWID_SKENE
    corpus = topic.corpus
    pair = ClassifierPair.objects.select_related("c1", "c2").filter(topic=topic).first()
    # A corpus in the team's engine has no bitmaps: the pair's sizes are the counts its draws recorded.
    engine = (_EngineCounts(c1_id=pair.c1_id, c2_id=pair.c2_id,
                            counts=engine_topic_counts(topic_id=topic.pk, c1=pair.c1, c2=pair.c2))
              if pair is not None and corpus_in_engine(corpus_id=topic.corpus_id) else None)
    c1 = _classifier_inputs(pair.c1, "c1", engine) if pair else None
    c2 = _classifier_inputs(pair.c2, "c2", engine) if pair else None
    extra_classifiers = [
        tc.classifier
        for tc in TopicClassifier.objects.filter(topic=topic).select_related("classifier").order_by("classifier_id")
    ]
    extras = tuple(_classifier_inputs(c, "extra", engine) for c in extra_classifiers)
    labels = _label_values(topic=topic, soft=soft)
    values, gold, votes = labels.values, labels.gold, labels.votes

    # Distinct documents per sample key; the draw's classifier names the R samples.
    drawn: dict[str, set[int]] = defaultdict(set)
    # Samples drawn by strata: {sample key: {stratum key: drawn documents}} (the draws' stratum_key).
    stratum_drawn: dict[str, dict[str, set[int]]] = defaultdict(lambda: defaultdict(set))
    rows = (
        SampledDocument.objects.filter(topic=topic)
        .exclude(region=Region.GOLD)
        .exclude(draw__purpose=SampleDraw.Purpose.CERTIFICATION)
        .values_list("document_id", "region", "draw__classifier_id", "draw__stratum_key")
    )
    for document_id, region, draw_classifier_id, draw_stratum_key in rows:
        key = f"R:{draw_classifier_id}" if region == Region.RETRIEVED else region
        drawn[key].add(document_id)
        if draw_stratum_key:
            stratum_drawn[key][draw_stratum_key].add(document_id)

    extra_sizes = {c.id: c.retrieved for c in extras}
    if engine is not None:
        # The state the draws measured: its regions partition the corpus, so |U| is their sum.
        sizes = {k: v for k, v in engine.counts.items() if k != NEITHER}
        corpus_size = sum(engine.counts[k] for k in ("A12", "B1", "B2", NEITHER))
        if NEITHER in drawn:
            sizes[NEITHER] = engine.counts[NEITHER]
    else:
        sizes = region_counts(c1=pair.c1, c2=pair.c2) if pair else {}
        corpus_size = int(corpus.document_count)
    if sizes and NEITHER in drawn and engine is None:
        # |N| = |U| − |A1 ∪ A2| from the sizes at hand (no read of the 1M-id corpus bitmap).
        sizes["N"] = max(0, corpus_size - (sizes["A12"] + sizes["B1"] + sizes["B2"]))
    bitmaps = ([] if engine is not None
               else [(c.pk, classifier_bitmap(classifier=c)) for c in _topic_classifiers(pair, extra_classifiers)])
    samples: dict[str, SampleInputs] = {}
    for key in sorted(drawn):
        region = "R" if key.startswith("R:") else key
        classifier_id = int(key[2:]) if region == "R" and key[2:] != "None" else None
        if region == "R":
            size = extra_sizes.get(classifier_id) if classifier_id is not None else None
            if size is None:
                continue  # a precision draw for a classifier no longer attached to the topic
        elif region == "U":
            size = corpus_size
        else:
            if region not in sizes:
                continue  # pair regions without a pair
            size = sizes[region]
        judged_ids = tuple(sorted(d for d in drawn[key] if d in values))
        members = (None if engine is None
                   else engine_region_members(region=region, c1_id=engine.c1_id, c2_id=engine.c2_id))
        samples[key] = SampleInputs(
            key=key,
            region=region,
            classifier_id=classifier_id,
            size=int(size),
            sampled=len(drawn[key]),
            document_ids=judged_ids,
            labels=tuple(values[d] for d in judged_ids),
            retrieved_by=(tuple(tuple(cid for cid, bitmap in bitmaps if d in bitmap) for d in judged_ids)
                          if members is None else (members,) * len(judged_ids)),
            votes=tuple(votes[d] for d in judged_ids),
            undecided=sum(1 for d in drawn[key] if d in labels.undecided),
            gold=tuple(d in gold for d in judged_ids) if any(d in gold for d in judged_ids) else (),
        )

    strata = _strata(samples=samples, stratum_drawn=stratum_drawn, topic=topic)
    # An engine corpus: the overlaps with further classifiers are not counted (the report says NOT_COUNTED).
    venn3 = {} if engine is not None else _venn3_sizes(pair=pair, extra_classifiers=extra_classifiers)

    # Votes of every judged, sampled, non-gold document (for worker agreement), with the first sample holding it.
    stratum_of: dict[int, str] = {}
    for key, sample in samples.items():  # keys in sorted order
        for d in sample.document_ids:
            if d not in gold:
                stratum_of.setdefault(d, key)
    sampled_judged = sorted(stratum_of)
    # Every document of the estimation samples (judged or not), for the undecided and unsure counts.
    sampled_any = {d for key in samples for d in drawn[key]}
    fee = _fee_per_assignment(topic=topic)
    certification_judgments, certification_spent = _certification_share(topic=topic, fee=fee)
    judge_answers = model_judge_answers(topic_id=topic.pk)
    return TopicInputs(
        schema=INPUTS_SCHEMA,
        topic_id=topic.pk,
        topic_name=topic.name,
        corpus_size=corpus_size,
        aggregator=topic.aggregator,
        soft_labels=soft,
        target_recall=float(topic.target_recall),
        confidence=float(topic.confidence),
        crowd=topic.crowd,
        c1=c1,
        c2=c2,
        extras=extras,
        region_sizes=dict(sizes),
        samples=samples,
        venn3=venn3,
        judgments=Judgment.objects.filter(topic=topic).count(),
        votes=tuple(votes[d] for d in sampled_judged),
        cost=_cost(topic=topic, fee=fee),
        certification=_certification(topic=topic),
        code_version=code_version,
        parameters=dict(parameters or {}),
        vote_strata=tuple(stratum_of[d] for d in sampled_judged),
        certification_judgments=certification_judgments,
        certification_spent=str(certification_spent),
        undecided=len(sampled_any & labels.undecided),
        unsure_votes=sum(labels.unsure.get(d, 0) for d in sampled_any),
        unsure_documents=sum(1 for d in sampled_judged if labels.unsure.get(d)),
        strata=strata,
        model_judge=judge_answers,
        model_judge_run=f"{judge_answers.run_id}:{judge_answers.finished_at}" if judge_answers else "",
        adjudicated=len(sampled_any & labels.adjudicated),
        crowd_judgments=_crowd_judgments(topic=topic) if soft and not topic.is_multiclass else None,
    )


def _crowd_judgments(*, topic: Topic) -> CrowdJudgmentsInputs | None:
    """The judgments ``labels_posteriors_recompute`` fits Dawid–Skene to (same rows, strata and gold), or None
    without a sure judgment."""
    rows = (Judgment.objects.filter(topic=topic, relevant__isnull=False).order_by("document_id", "worker_id")
            .values_list("document_id", "worker_id", "relevant"))
    doc_index: dict[int, int] = {}
    worker_index: dict[int, int] = {}
    items, workers, answers = [], [], []
    for document_id, worker_id, relevant in rows:
        items.append(doc_index.setdefault(document_id, len(doc_index)))
        workers.append(worker_index.setdefault(worker_id, len(worker_index)))
        answers.append(int(bool(relevant)))
    if not items:
        return None
    gold = {d: int(bool(answer)) for d, answer in topic_gold_answers(topic=topic).items() if d in doc_index}
    stratum_of = labels_strata(topic=topic, document_ids=doc_index)
    return CrowdJudgmentsInputs(
        document_ids=tuple(doc_index), strata=tuple(stratum_of.get(d, UNSAMPLED_STRATUM) for d in doc_index),
        items=tuple(items), workers=tuple(workers), answers=tuple(answers),
        gold_items=tuple(doc_index[d] for d in gold), gold_answers=tuple(gold.values()))


def _strata(*, samples: dict[str, SampleInputs], stratum_drawn: dict[str, dict[str, set[int]]],
            topic: Topic) -> dict[str, tuple[StratumInputs, ...]]:
    """The strata of each sample drawn by strata, with each stratum's size from its draws' records.

    A stratum's size N_h is the ``region_size`` its draws recorded (annotation's sampling refuses a top-up once
    it changed, so every draw of a stratum records the same). A sample some of whose documents were drawn
    without a stratum key (e.g. N drawn before the topic named a scorer) is not stratified here.
    """
    if not stratum_drawn:
        return {}
    sizes = {
        (region, stratum_key): region_size
        for region, stratum_key, region_size in SampleDraw.objects.filter(topic=topic).exclude(stratum_key="")
        .exclude(purpose=SampleDraw.Purpose.CERTIFICATION).values_list("region", "stratum_key", "region_size")
    }
    result: dict[str, tuple[StratumInputs, ...]] = {}
    for key, by_stratum in sorted(stratum_drawn.items()):
        sample = samples.get(key)
        if sample is None:
            continue
        covered = set().union(*by_stratum.values())
        if len(covered) != sample.sampled:
            logger.warning("sample %s of topic %s mixes stratified and unstratified draws", key, topic.pk)
            continue
        judged = set(sample.document_ids)
        result[key] = tuple(
            StratumInputs(key=stratum_key, size=int(sizes[(sample.region, stratum_key)]), sampled=len(ids),
                          document_ids=tuple(sorted(ids & judged)))
            for stratum_key, ids in sorted(by_stratum.items())
        )
    return result


def _venn3_sizes(*, pair: ClassifierPair | None, extra_classifiers: list[Classifier]) -> dict[str, dict[str, int]]:
    """|region| for each capture history of (C1, C2, C) — bitmap set operations, microseconds."""
    if pair is None or not extra_classifiers:
        return {}
    a1, a2 = classifier_bitmap(classifier=pair.c1), classifier_bitmap(classifier=pair.c2)
    a12, b1, b2 = a1 & a2, a1 - a2, a2 - a1
    union = a1 | a2
    result = {}
    for classifier in extra_classifiers:
        a3 = classifier_bitmap(classifier=classifier)
        in12, in_b1, in_b2 = a12.intersection_cardinality(a3), b1.intersection_cardinality(a3), b2.intersection_cardinality(a3)
        result[str(classifier.pk)] = {
            "111": in12, "110": len(a12) - in12,
            "101": in_b1, "100": len(b1) - in_b1,
            "011": in_b2, "010": len(b2) - in_b2,
            "001": len(a3) - union.intersection_cardinality(a3),
        }
    return result


def _topic_classifiers(pair: ClassifierPair | None, extra_classifiers: list[Classifier]) -> list[Classifier]:
    listed = ([pair.c1, pair.c2] if pair else []) + list(extra_classifiers)
    seen: set[int] = set()
    result = []
    for classifier in listed:
        if classifier.pk not in seen:
            seen.add(classifier.pk)
            result.append(classifier)
    return result
