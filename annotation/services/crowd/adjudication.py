"""Adjudication (issue 27): an analyst settles a split or disputed document with a final answer and a reason.

The queue (``topic_adjudication_queue``) holds a topic's complete, non-gold, not yet adjudicated documents whose
workers did not agree: the sure votes split (some on topic, some off), a tie or no sure vote (no majority), or at
least one "unsure" answer. Judgments carry no free-text comment in this codebase, so comments are not a reason
to queue a document (there are none to read).

``document_adjudicate`` is the one service the analyst page and the API call. It writes one Adjudication per
topic and document; the same answer and reason posted again change nothing (no row, no event). Estimates read
an adjudicated document as they read gold (estimation.services.inputs): its label is the adjudicated answer,
counted as certain, and the report's inputs count the adjudicated documents of its samples. The crowd's votes
stay as they were (the worker-quality figures are about the crowd). A recompute is scheduled the way completed
labels schedule one: ``LabelsCompleted`` sent on commit (estimation.receivers).

Topic sets (several classes) are refused: their estimates (estimation.services.multiclass_report) do not read
adjudications yet, so this is binary (single topics) only.

``workers.worker_public_id`` is the one id a worker is shown by everywhere (worker-quality page, raw judgments export,
API): the crowd platform's worker id when there is one, else a keyed hash of the local id — never a username.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import F, Q

from annotation.events import LabelsCompleted
from annotation.models import Adjudication, Document, Hit, Judgment, Label, Topic
from annotation.services.crowd.workers import worker_public_ids
from core.errors import ApplicationError
from core.events import event_send_on_commit

REASON_MAX_CHARS = 2000
QUEUE_LIMIT = 500


class AdjudicationRefused(ApplicationError):
    """An adjudication that cannot be recorded; the message says why."""


@dataclass(frozen=True)
class Vote:
    worker: str  # worker_public_id
    answer: str  # "relevant", "not relevant" or "unsure"


@dataclass(frozen=True)
class QueueItem:
    document_id: int
    external_id: str
    title: str
    votes_relevant: int
    votes_total: int
    votes_unsure: int
    majority: bool | None
    why: str  # "split", "tie", "unsure"
    votes: tuple[Vote, ...]


def _disputed() -> Q:
    """Complete labels whose workers did not agree (split sure votes, no majority, or an unsure answer)."""
    sure = F("votes_total") - F("votes_unsure")
    split = Q(votes_relevant__gt=0) & Q(votes_relevant__lt=sure)
    return Q(votes_total__gte=Hit.ASSIGNMENTS_PER_HIT) & (split | Q(majority__isnull=True) | Q(votes_unsure__gt=0))


def topic_adjudication_queue(*, topic: Topic, limit: int = QUEUE_LIMIT) -> list[QueueItem]:
    """The topic's disputed documents still to adjudicate, with each worker's vote (by public id), oldest id first."""
    if topic.is_multiclass:
        return []
    adjudicated = Adjudication.objects.filter(topic=topic).values("document_id")
    labels = list(
        Label.objects.filter(_disputed(), topic=topic, gold__isnull=True)
        .exclude(document_id__in=adjudicated)
        .select_related("document").only("document_id", "votes_relevant", "votes_total", "votes_unsure", "majority",
                                         "document__external_id", "document__title")
        .order_by("document_id")[:limit])
    doc_ids = [label.document_id for label in labels]
    judgments = list(Judgment.objects.filter(topic=topic, document_id__in=doc_ids).order_by("id")
                     .values_list("document_id", "worker_id", "relevant"))
    names = worker_public_ids(worker_ids={worker_id for _, worker_id, _ in judgments})
    votes: dict[int, list[Vote]] = {}
    for document_id, worker_id, relevant in judgments:
        answer = "unsure" if relevant is None else ("relevant" if relevant else "not relevant")
        votes.setdefault(document_id, []).append(Vote(worker=names[worker_id], answer=answer))
    items = []
    for label in labels:
        sure = label.votes_total - label.votes_unsure
        why = ("tie" if label.majority is None else "split" if 0 < label.votes_relevant < sure else "unsure")
        items.append(QueueItem(document_id=label.document_id, external_id=label.document.external_id,
                               title=label.document.title, votes_relevant=label.votes_relevant,
                               votes_total=label.votes_total, votes_unsure=label.votes_unsure,
                               majority=label.majority, why=why, votes=tuple(votes.get(label.document_id, ()))))
    return items


def document_adjudicate(
    *, topic: Topic, document: Document, label: bool, reason: str,
    user: Any,
) -> tuple[Adjudication, bool]:
    """Record the final answer ``label`` (on topic: True) of a disputed document, with the analyst's reason.

    Returns (the adjudication, changed). The same answer and reason again change nothing (changed False, no
    recompute); a different answer or reason replaces the previous one. Refused: a topic set, a document not
    in the topic's corpus, a gold document, a document whose label is not complete, an empty reason.
    """
    if topic.is_multiclass:
        raise AdjudicationRefused(f"Topic set {topic.name!r}: adjudication is for single topics (on topic or off "
                                  "topic) only.")
    if document.corpus_id != topic.corpus_id:
        raise AdjudicationRefused(f"Document {document.pk} is not in the corpus of topic {topic.name!r}.")
    if isinstance(label, bool) is False:
        raise AdjudicationRefused("The final answer is on topic or off topic.")
    reason = " ".join((reason or "").split())
    if not reason:
        raise AdjudicationRefused("Say why this is the final answer (a reason is required).")
    if len(reason) > REASON_MAX_CHARS:
        raise AdjudicationRefused(f"The reason is {len(reason):,} characters; the limit is {REASON_MAX_CHARS:,}.")
    with transaction.atomic():
        current = Label.objects.select_for_update().filter(topic=topic, document=document).first()
        if current is None or current.votes_total < Hit.ASSIGNMENTS_PER_HIT:
            raise AdjudicationRefused(f"Document {document.external_id!r} does not have its "
                                      f"{Hit.ASSIGNMENTS_PER_HIT} judgments yet: nothing to adjudicate.")
        if current.gold is not None:
            raise AdjudicationRefused(f"Document {document.external_id!r} is gold: its answer is already known.")
        actor = user if user is not None and user.is_authenticated else None
        existing = Adjudication.objects.filter(topic=topic, document=document).first()
        if existing is not None and existing.relevant == label and existing.reason == reason:
            return existing, False
        if existing is None:
            adjudication = Adjudication.objects.create(topic=topic, document=document, relevant=label, reason=reason,
                                                       user=actor)
        else:
            existing.relevant, existing.reason, existing.user = label, reason, actor
            existing.save(update_fields=["relevant", "reason", "user", "updated_at"])
            adjudication = existing
        event_send_on_commit(event=LabelsCompleted(topic_id=topic.pk))
    return adjudication, True


def topic_adjudications(*, topic: Topic) -> dict[int, bool]:
    """{document id: adjudicated answer} of the topic (what the estimates read)."""
    return dict(Adjudication.objects.filter(topic=topic).values_list("document_id", "relevant"))
