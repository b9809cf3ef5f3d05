"""Reads of the crowd workflow, scoped to who is asking.

Annotator reads take the Worker and only ever return that worker's own
assignments: another worker's assignment is indistinguishable from a missing
one. Quality reads (worker agreement, split votes) are for analysts.

Selectors read models only: they import no annotation.services module (a service may import them).
Reads that follow a service's rule stay with that service (annotation.services.crowd.annotator).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

import numpy as np
from django.db import connections
from django.db.models import Count, DecimalField, F, OuterRef, Q, Subquery, Sum
from django.db.models.functions import Coalesce

from annotation.models import (
    Assignment,
    Classifier,
    Hit,
    HitItem,
    Judgment,
    Label,
    Region,
    SampledDocument,
    SampleDraw,
    Topic,
    TopicClass,
    Worker,
)
from estimation.stats.aggregation import fleiss_kappa, worker_agreement

# --------------------------------------------------------------------------- gold answers


def topic_gold_answers(*, topic: Topic) -> dict[int, bool | int]:
    """{document id: known answer} of the topic's gold documents, in document order.

    A single topic's answers are True/False (``Label.gold``); a topic set's are class positions 0..M
    (``Label.gold_class``).
    """
    if topic.is_multiclass:
        class_rows = (Label.objects.filter(topic=topic, gold_class__isnull=False).order_by("document_id")
                      .values_list("document_id", "gold_class"))
        return {document_id: int(gold_class) for document_id, gold_class in class_rows if gold_class is not None}
    rows = Label.objects.filter(topic=topic, gold__isnull=False).order_by("document_id").values_list("document_id", "gold")
    return {document_id: gold for document_id, gold in rows if gold is not None}


def topic_gold_document_ids(*, topic: Topic) -> list[int]:
    """The topic's gold documents (known answers), sorted by id."""
    return list(topic_gold_answers(topic=topic))



def gold_remove_blockers(*, topic: Topic, document_ids: Sequence[int]) -> dict[int, list[str]]:
    """Why each gold document cannot be removed ({} entries for the removable ones are left out).

    A gold document stays while a decision rests on it: a HIT carries it as its gold check
    (workers answered or will answer it as one, and the automatic block counts those answers),
    or a worker who judged it is blocked (their gold accuracy counted it).
    """
    reasons: dict[int, list[str]] = {}
    ids = list(document_ids)
    if not ids:
        return reasons
    in_hits: dict[int, int] = {}
    for doc_id in HitItem.objects.filter(topic=topic, is_gold=True, document_id__in=ids).values_list(
            "document_id", flat=True):
        in_hits[doc_id] = in_hits.get(doc_id, 0) + 1
    for doc_id, n in in_hits.items():
        reasons.setdefault(doc_id, []).append(
            f"{n} HIT{'s' if n != 1 else ''} carr{'y' if n != 1 else 'ies'} it as the gold check: workers' gold "
            "accuracy (and any automatic block) counts their answers on it")
    blocked = Judgment.objects.filter(topic=topic, document_id__in=ids, worker__blocked=True).values_list(
        "document_id", flat=True).distinct()
    for doc_id in blocked:
        reasons.setdefault(doc_id, []).append(
            "a blocked worker judged it, and their gold accuracy counted it; unblock them first")
    return reasons



# --------------------------------------------------------------------------- annotators


def assignment_for_worker(*, worker: Worker, assignment_id: int) -> Assignment:
    """The worker's own assignment; raises Assignment.DoesNotExist for anyone else's."""
    return Assignment.objects.select_related("hit__topic").get(pk=assignment_id, worker=worker)


def assignment_items(*, assignment: Assignment) -> list[HitItem]:
    """The HIT's documents in display order. Gold items are not marked: workers must not tell them apart."""
    return list(HitItem.objects.filter(hit_id=assignment.hit_id).select_related("document").order_by("position"))


def assignment_answers(*, assignment: Assignment) -> dict[int, bool | int | None]:
    """The worker's own recorded answers (to show a submitted assignment back to them); None is "unsure".

    A single topic's answers are True/False; a topic set's are class positions 0..M (0: none of these). A
    judgment carries one or the other, never both, so no need to read the topic.
    """
    rows = Judgment.objects.filter(assignment=assignment).values_list("document_id", "relevant", "choice")
    return {document_id: choice if choice is not None else relevant for document_id, relevant, choice in rows}


# --------------------------------------------------------------------------- quality


@dataclass(frozen=True)
class WorkerQuality:
    worker_id: int
    name: str
    judgments: int
    agreement: float | None  # with the majority of the *other* workers on the same documents
    gold_answered: int
    gold_correct: int
    blocked: bool

    @property
    def gold_accuracy(self) -> float | None:
        return self.gold_correct / self.gold_answered if self.gold_answered else None


def _topic_judgment_arrays(*, topic: Topic, gold_ids: Sequence[int] | None = None, unsure_class: int = 2):
    """(items, workers, labels) index arrays of the topic's non-gold judgments, with {document id: index} and
    {worker id: index} (indices in order of ids). numpy builds them: a topic may hold 100k judgments.

    Labels are 0/1 (off/on topic), or a topic set's class positions 0..M; "unsure" is `unsure_class`."""
    query = (Judgment.objects.filter(topic=topic)
             .exclude(document_id__in=topic_gold_document_ids(topic=topic) if gold_ids is None else list(gold_ids))
             .order_by().values_list("document_id", "worker_id", "choice" if topic.is_multiclass else "relevant"))
    # The raw rows: no per-row field converters (relevant is 0/1/NULL on SQLite, a boolean or NULL on PostgreSQL).
    sql, params = query.query.sql_with_params()
    with connections[query.db].cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    if not rows:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty, {}, {}
    document_ids, worker_ids, answers = zip(*rows, strict=True)
    doc_keys, items = np.unique(np.array(document_ids, dtype=np.int64), return_inverse=True)
    worker_keys, workers = np.unique(np.array(worker_ids, dtype=np.int64), return_inverse=True)
    # "Unsure" (NULL) is a third category: agreeing on it counts as agreement, like any answer.
    labels = np.array([unsure_class if r is None else int(r) for r in answers], dtype=np.int64)
    doc_index = {int(key): index for index, key in enumerate(doc_keys)}
    worker_index = {int(key): index for index, key in enumerate(worker_keys)}
    return items.astype(np.int64), workers.astype(np.int64), labels, doc_index, worker_index


UNSURE_CLASS = 2  # the class index of an "unsure" answer in agreement figures (0 off topic, 1 on topic)


def worker_quality_for_topic(*, topic: Topic) -> list[WorkerQuality]:
    """Per worker of the topic: judgments, agreement with the others' majority, gold score; worst first."""
    gold = topic_gold_answers(topic=topic)
    # A topic set's answers are classes 0..M, and "unsure" the class after them.
    unsure_class = _topic_set_size(topic) + 1 if topic.is_multiclass else UNSURE_CLASS
    items, workers, labels, _, worker_index = _topic_judgment_arrays(
        topic=topic, gold_ids=list(gold), unsure_class=unsure_class)
    agreement = {}
    if items.size:
        result = worker_agreement(items=items, workers=workers, labels=labels, n_classes=unsure_class + 1)
        for worker_id, index in worker_index.items():
            value = float(result.agreement[index])
            agreement[worker_id] = None if np.isnan(value) else value
    counts = dict(
        Judgment.objects.filter(topic=topic).values("worker").annotate(n=Count("pk")).values_list("worker", "n")
    )
    # Gold scores of every worker in one query (worker_gold_score's rule: each answer to a gold document counts).
    gold_scores: dict[int, list[int]] = {}
    if gold:
        answer_field = "choice" if topic.is_multiclass else "relevant"
        for worker_id, doc_id, answer in Judgment.objects.filter(
                topic=topic, document_id__in=list(gold)).values_list("worker_id", "document_id", answer_field):
            score = gold_scores.setdefault(worker_id, [0, 0])
            score[0] += 1
            score[1] += int(answer is not None and answer == gold[doc_id])
    rows = []
    for worker in Worker.objects.filter(pk__in=list(counts)).select_related("user"):
        answered, correct = gold_scores.get(worker.pk, (0, 0))
        rows.append(
            WorkerQuality(
                worker_id=worker.pk,
                name=str(worker),
                judgments=counts[worker.pk],
                agreement=agreement.get(worker.pk),
                gold_answered=answered,
                gold_correct=correct,
                blocked=worker.blocked,
            )
        )
    return sorted(rows, key=lambda q: (q.agreement if q.agreement is not None else 2.0, q.worker_id))


def topic_fleiss_kappa(*, topic: Topic) -> float | None:
    """Fleiss' κ over the topic's complete labels (Hit.ASSIGNMENTS_PER_HIT votes each); None when undefined.

    Three categories: off topic, on topic, "unsure" (an unused category changes nothing); undecided
    labels (no sure vote, or the sure votes tie) are complete and count.
    """
    if topic.is_multiclass:
        return _topic_set_fleiss_kappa(topic=topic)
    complete = list(
        Label.objects.filter(topic=topic, gold__isnull=True,
                             votes_total=Hit.ASSIGNMENTS_PER_HIT).values_list(
            "votes_relevant", "votes_total", "votes_unsure"
        )
    )
    if not complete:
        return None
    counts = np.array([[total - relevant - unsure, relevant, unsure] for relevant, total, unsure in complete],
                      dtype=float)
    try:
        return fleiss_kappa(counts=counts)
    except ValueError:  # every vote the same label: κ is undefined
        return None


def _topic_set_size(topic: Topic) -> int:
    """M, the number of a topic set's classes (positions 1..M)."""
    return TopicClass.objects.filter(topic=topic).count()


def _topic_set_fleiss_kappa(*, topic: Topic) -> float | None:
    """Fleiss' κ of a topic set's complete labels over M + 2 categories: the classes 0..M and "unsure"."""
    size = _topic_set_size(topic) + 1
    rows = Label.objects.filter(topic=topic, gold_class__isnull=True, votes_total=Hit.ASSIGNMENTS_PER_HIT)
    counts = [[*(list(class_votes or []) + [0] * size)[:size], unsure]
              for class_votes, unsure in rows.values_list("class_votes", "votes_unsure")]
    if not counts:
        return None
    try:
        return fleiss_kappa(counts=np.array(counts, dtype=float))
    except ValueError:  # every vote the same category: κ is undefined
        return None


@dataclass(frozen=True)
class SplitVote:
    document_id: int
    external_id: str
    title: str
    votes_relevant: int
    votes_total: int
    majority: bool | None
    votes_unsure: int = 0


def topic_split_votes(*, topic: Topic) -> list[SplitVote]:
    """Complete labels where the workers disagreed (2–1, or an "unsure" among the votes), for an analyst's review."""
    labels = (
        Label.objects.filter(topic=topic, votes_total__gte=2)
        .filter(Q(votes_relevant__gt=0, votes_relevant__lt=F("votes_total")) | Q(votes_unsure__gt=0))
        .exclude(votes_unsure=F("votes_total"))
        .filter(Q(majority__isnull=False) | Q(votes_total__gte=Hit.ASSIGNMENTS_PER_HIT))
        .select_related("document")
        .order_by("document_id")
    )
    return [
        SplitVote(
            document_id=label.document_id,
            external_id=label.document.external_id,
            title=label.document.title,
            votes_relevant=label.votes_relevant,
            votes_total=label.votes_total,
            majority=label.majority,
            votes_unsure=label.votes_unsure,
        )
        for label in labels
    ]



# --------------------------------------------------------------------------- gold documents and worker quality pages


@dataclass(frozen=True)
class GoldDocumentRow:
    document_id: int
    external_id: str
    title: str
    gold: bool
    seen: int  # judgments on it in the topic (each one counts towards its worker's gold accuracy)
    correct: int
    sample_judged: bool  # a judged sample document used as gold: it is out of the recall estimate
    blockers: tuple[str, ...]  # why it cannot be removed; empty when it can
    gold_class: int | None = None  # a topic set's known class 0..M (0: none of these); None for a single topic

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.seen if self.seen else None


def topic_gold_documents(*, topic: Topic) -> list[GoldDocumentRow]:
    """The topic's gold documents with how many judgments they got, how many were right, and what keeps them.

    In a topic set a judgment is right when its class (``Judgment.choice``) is the known class (``gold_class``)."""
    if topic.is_multiclass:
        labels = list(Label.objects.filter(topic=topic, gold_class__isnull=False).select_related("document")
                      .only("document_id", "gold_class", "votes_total", "document__external_id", "document__title")
                      .order_by("document_id"))
        ids = [label.document_id for label in labels]
        choices: dict[int, dict[int | None, int]] = {}
        for doc_id, choice, n in (Judgment.objects.filter(topic=topic, document_id__in=ids).values("document_id", "choice")
                                  .annotate(n=Count("pk")).values_list("document_id", "choice", "n")):
            choices.setdefault(doc_id, {})[choice] = n
        blockers = gold_remove_blockers(topic=topic, document_ids=ids)
        sampled = set(SampledDocument.objects.filter(topic=topic, document_id__in=ids).values_list("document_id", flat=True))
        rows = []
        for label in labels:
            counts = choices.get(label.document_id, {})  # an unsure answer (choice NULL) is never right
            rows.append(GoldDocumentRow(
                document_id=label.document_id, external_id=label.document.external_id, title=label.document.title,
                gold=False, seen=sum(counts.values()), correct=counts.get(label.gold_class, 0),
                sample_judged=label.votes_total >= Hit.ASSIGNMENTS_PER_HIT and label.document_id in sampled,
                blockers=tuple(blockers.get(label.document_id, ())), gold_class=label.gold_class))
        return rows

    labels = list(Label.objects.filter(topic=topic, gold__isnull=False).select_related("document")
                  .only("document_id", "gold", "majority", "document__external_id", "document__title")
                  .order_by("document_id"))
    ids = [label.document_id for label in labels]
    seen: dict[int, tuple[int, int, int]] = {
        doc_id: (n, yes, no) for doc_id, n, yes, no in
        Judgment.objects.filter(topic=topic, document_id__in=ids).values("document_id")
        .annotate(n=Count("pk"), yes=Count("pk", filter=Q(relevant=True)), no=Count("pk", filter=Q(relevant=False)))
        .values_list("document_id", "n", "yes", "no")
    }
    blockers = gold_remove_blockers(topic=topic, document_ids=ids)
    rows = []
    for label in labels:
        n, yes, no = seen.get(label.document_id, (0, 0, 0))  # an unsure answer is neither
        rows.append(GoldDocumentRow(
            document_id=label.document_id, external_id=label.document.external_id, title=label.document.title,
            gold=bool(label.gold), seen=n, correct=yes if label.gold else no,
            sample_judged=label.majority is not None, blockers=tuple(blockers.get(label.document_id, ()))))
    return rows


def topic_judged_documents(*, topic: Topic):
    """The topic's fully judged, non-gold labels with their document (a queryset, for a paginator).

    In a topic set: the labels with all their votes (ties included) and no known class yet."""
    if topic.is_multiclass:
        return (Label.objects.filter(topic=topic, votes_total__gte=Hit.ASSIGNMENTS_PER_HIT, gold_class__isnull=True)
                .select_related("document").only("document_id", "votes_total", "votes_unsure", "class_votes",
                                                 "majority_class", "document__external_id", "document__title")
                .order_by("document_id"))
    return (Label.objects.filter(topic=topic, majority__isnull=False, gold__isnull=True)
            .select_related("document").only("document_id", "votes_relevant", "votes_total", "majority",
                                             "document__external_id", "document__title")
            .order_by("document_id"))


@dataclass(frozen=True)
class WorkerQualityRow:
    quality: WorkerQuality
    blocked_reason: str
    split_votes: int  # the worker's judgments on documents whose votes split
    split_minority: int  # of which the worker was in the minority


def topic_worker_quality_rows(*, topic: Topic) -> list[WorkerQualityRow]:
    """worker_quality_for_topic with each worker's block reason and split votes (worst agreement first)."""
    qualities = worker_quality_for_topic(topic=topic)
    split_majority = dict(
        Label.objects.filter(topic=topic, majority__isnull=False, gold__isnull=True, votes_relevant__gt=0)
        .exclude(votes_relevant=F("votes_total")).values_list("document_id", "majority"))
    split: dict[int, list[int]] = {}
    if split_majority:
        rows = Judgment.objects.filter(
            topic=topic, document_id__in=Label.objects.filter(
                topic=topic, majority__isnull=False, gold__isnull=True, votes_relevant__gt=0)
            .exclude(votes_relevant=F("votes_total")).values("document_id"),
        ).values_list("worker_id", "document_id", "relevant")
        for worker_id, doc_id, relevant in rows:
            counts = split.setdefault(worker_id, [0, 0])
            counts[0] += 1
            counts[1] += int(relevant != split_majority[doc_id])
    reasons = dict(Worker.objects.filter(pk__in=[q.worker_id for q in qualities]).values_list("pk", "blocked_reason"))
    return [WorkerQualityRow(quality=q, blocked_reason=reasons.get(q.worker_id, ""),
                             split_votes=split.get(q.worker_id, [0, 0])[0],
                             split_minority=split.get(q.worker_id, [0, 0])[1]) for q in qualities]


# --------------------------------------------------------------------------- analysts


def topic_progress(*, topic: Topic) -> dict:
    """Judgments done and outstanding, spend against budget: a few indexed aggregates."""
    return topics_progress(topics=[topic])[topic.pk]


PAID_STATUSES = (Assignment.Status.SUBMITTED, Assignment.Status.APPROVED)
CENT = Decimal("0.01")


def topics_progress(*, topics: Sequence[Topic]) -> dict[int, dict]:
    """topic_progress of several topics in four grouped queries, whatever their number (the reports overview).

    The spend is summed per HIT (reward x its paid assignments, a correlated count on the assignment's hit
    index): joining assignments to HITs led SQLite, without statistics, to scan every paid assignment of
    every topic through the status index.
    """
    ids = [topic.pk for topic in topics]
    live = Hit.objects.filter(topic_id__in=ids).exclude(status=Hit.Status.CANCELLED).order_by()
    hits = dict(live.values("topic_id").annotate(n=Count("pk")).values_list("topic_id", "n"))
    planned: dict[int, int] = {}
    for topic_id, slots, items in (HitItem.objects.filter(hit__topic_id__in=ids).exclude(hit__status=Hit.Status.CANCELLED)
                                   .order_by().values("hit__topic_id", "hit__max_assignments")
                                   .annotate(n=Count("pk")).values_list("hit__topic_id", "hit__max_assignments", "n")):
        planned[topic_id] = planned.get(topic_id, 0) + items * slots
    done = dict(Judgment.objects.filter(topic_id__in=ids).order_by().values("topic_id").annotate(n=Count("pk"))
                .values_list("topic_id", "n"))
    paid = Subquery(Assignment.objects.filter(hit_id=OuterRef("pk"), status__in=PAID_STATUSES).order_by()
                    .values("hit_id").annotate(n=Count("pk")).values("n"))
    spent = dict(Hit.objects.filter(topic_id__in=ids).order_by().values("topic_id")
                 .annotate(total=Sum(F("reward") * Coalesce(paid, 0),
                                     output_field=DecimalField(max_digits=14, decimal_places=2)))
                 .values_list("topic_id", "total"))
    return {topic.pk: {"hits": hits.get(topic.pk, 0), "judgments_done": done.get(topic.pk, 0),
                       "judgments_planned": planned.get(topic.pk, 0),
                       "judgments_outstanding": max(0, planned.get(topic.pk, 0) - done.get(topic.pk, 0)),
                       # rewards are in cents; SQLite sums them as floats
                       "rewards_paid": Decimal(spent.get(topic.pk) or 0).quantize(CENT), "budget": topic.budget}
            for topic in topics}


PAIR_REGIONS = ("A12", "B1", "B2")


def topic_region_progress(*, topic: Topic, regions: Sequence[str] = PAIR_REGIONS) -> dict[str, dict[str, int]]:
    """{region: {"sampled", "judged"}}: documents of the pair's sample in each region, and those with a majority.

    `regions` may add "N", the dependence check's sample of the documents neither classifier retrieved.
    """
    progress = {}
    for region in regions:
        sampled = SampledDocument.objects.filter(topic=topic, region=region, draw__purpose=SampleDraw.Purpose.PAIR)
        judged = Label.objects.filter(topic=topic, majority__isnull=False,
                                      document_id__in=sampled.values("document_id")).count()
        progress[region] = {"sampled": sampled.count(), "judged": judged}
    return progress


def topic_set_uniform_sample(*, topic: Topic):
    """The topic set's uniform sample (its own, not a certification's): SampledDocument rows, a queryset."""
    return SampledDocument.objects.filter(topic=topic, region=Region.UNIFORM, draw__purpose=SampleDraw.Purpose.UNIFORM,
                                          draw__stratum_key="")


@dataclass(frozen=True)
class TopicSetSampleProgress:
    drawn: int  # documents of the uniform sample
    judged: int  # of them, with all three judgments
    decided: int  # of them, with a majority class (or posterior) to report


def topic_set_sample_progress(*, topic: Topic) -> TopicSetSampleProgress:
    """How far the topic set's uniform sample is: drawn, fully judged, decided (the page and the API)."""
    sampled = topic_set_uniform_sample(topic=topic)
    labels = Label.objects.filter(topic=topic, document_id__in=sampled.values("document_id"))
    return TopicSetSampleProgress(
        drawn=sampled.count(),
        judged=labels.filter(votes_total__gte=Hit.ASSIGNMENTS_PER_HIT).count(),
        decided=labels.filter(Q(majority_class__isnull=False) | Q(class_posterior__isnull=False)).count())


def topics_for_list(*, search: str = "", archived: bool = False):
    """The analyst's topics list: name contains `search` (any case); archived topics only when `archived`."""
    topics = Topic.objects.all()
    if search.strip():
        topics = topics.filter(name__icontains=search.strip())
    if not archived:
        topics = topics.filter(archived_at__isnull=True)
    return topics.order_by("name", "pk")


def classifiers_for_list(*, search: str = "", archived: bool = False):
    """The analyst's classifiers list (every corpus): name contains `search`; archived ones only when `archived`."""
    classifiers = Classifier.objects.select_related("corpus").defer("retrieved_bitmap", "corpus__documents_bitmap")
    if search.strip():
        classifiers = classifiers.filter(name__icontains=search.strip())
    if not archived:
        classifiers = classifiers.filter(archived_at__isnull=True)
    return classifiers.order_by("corpus__name", "name", "pk")
