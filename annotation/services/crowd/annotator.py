"""What an annotator sees of their own work and of the HITs still open to them (the HIT pages).

Reads, but over the assignment rules (which open HITs a worker may take, whether submitted answers
may still change), so they live with annotation.services.crowd.assignments rather than in the
model-only annotation.selectors.
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from django.db.models import Count, Sum

from annotation.models import Assignment, Judgment, Topic, Worker
from annotation.services.crowd.assignments import assignment_correctable, hits_open_count

# One count for every page (issue 27: the home page said "about 152 open" while the HIT page said "HIT 1 of more
# than 51"): HITs open for the worker, counted up to QUEUE_CAP + 1. The HIT page counts on every HIT, and the count's
# cost grows with the HITs it walks (about 2 ms of PostgreSQL at 200).
QUEUE_CAP = 200


@dataclass(frozen=True)
class AnnotatorProgress:
    judgments: int
    hits_done: int
    earned: Decimal
    in_progress: Assignment | None
    # Open HITs of built-in-crowd topics with a free place this worker may take (not held, not
    # returned by them), counted up to QUEUE_CAP + 1; approximate (gold repeats are not excluded).
    hits_left: int = 0
    cap: int = QUEUE_CAP

    @property
    def hits_left_capped(self) -> bool:
        return self.hits_left > self.cap


def annotator_progress(*, worker: Worker) -> AnnotatorProgress:
    done = Assignment.objects.filter(worker=worker, status__in=("submitted", "approved"))
    totals = done.aggregate(hits=Count("pk"), earned=Sum("hit__reward"))
    current = (
        Assignment.objects.filter(worker=worker, status=Assignment.Status.CLAIMED, hit__status="open")
        .select_related("hit__topic")
        .order_by("claimed_at")
        .first()
    )
    return AnnotatorProgress(
        judgments=Judgment.objects.filter(worker=worker).count(),
        hits_done=totals["hits"] or 0,
        earned=totals["earned"] or Decimal("0"),
        in_progress=current,
        hits_left=_hits_left(worker=worker),
        cap=QUEUE_CAP,
    )


def _hits_left(*, worker: Worker) -> int:
    return hits_open_count(worker=worker, cap=QUEUE_CAP)


@dataclass(frozen=True)
class AnnotatorQueue:
    """Where a worker stands in the queue, for the HIT page ("HIT 4 of about 30"): two queries."""

    hits_done: int
    hits_left: int  # as AnnotatorProgress.hits_left, counted up to `cap` + 1
    cap: int = QUEUE_CAP

    @property
    def hits_left_capped(self) -> bool:
        return self.hits_left > self.cap


def annotator_queue(*, worker: Worker) -> AnnotatorQueue:
    """The HITs the worker has done and those still open for them (annotator_progress without the rest).

    Counted up to QUEUE_CAP + 1 as on the home page ("HIT 4 of more than 204"): the same count, the same words.
    """
    done = Assignment.objects.filter(worker=worker, status__in=("submitted", "approved")).count()
    return AnnotatorQueue(hits_done=done, hits_left=_hits_left(worker=worker), cap=QUEUE_CAP)


def annotator_correctable(*, worker: Worker, limit: int = 5) -> list[Assignment]:
    """The worker's most recent submitted HITs whose answers they may still change (judgment_correct)."""
    recent = (
        Assignment.objects.filter(worker=worker, status=Assignment.Status.SUBMITTED, hit__topic__crowd=Topic.Crowd.LOCAL)
        .select_related("hit__topic")
        .order_by("-submitted_at", "-pk")[:limit]
    )
    return [assignment for assignment in recent if assignment_correctable(assignment=assignment)]
