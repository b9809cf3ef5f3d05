"""Provisional answers: a crowd platform's submission counts only once the platform confirms it.

Some crowd platforms (Mechanical Turk) show our HIT page to their workers but do not sign the
ids they pass to it, so the page cannot tell a real assignment from an invented one. Their
submissions are stored on the assignment as `provisional_answers` and count for nothing (no
judgment, vote, label, estimate or payment) until the platform confirms the assignment
(`CrowdPlatform.assignment_verify`, run by the platform's reconcile); then they become judgments
through the same service as local submissions (`assignment_submit`). Answers never confirmed
expire and are kept, marked as not counted.

Which platforms work this way is `CrowdPlatform.provisional` (annotation.services.crowd.platforms);
this module is the one place the bookkeeping lives, whatever the platform.
"""
from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Count, Q
from django.utils import timezone

from annotation.models import Assignment, Hit, HitItem, Topic
from annotation.services.crowd.assignments import (
    AssignmentExpired,
    AssignmentNotFound,
    InvalidAnswers,
    SubmitRefused,
    answers_normalise,
    assignment_submit,
)

logger = logging.getLogger(__name__)

VERIFIED = "verified"
PENDING = "pending"
UNVERIFIED = "unverified"


@dataclass(frozen=True)
class CrowdSubmission:
    """What the platform's HIT page tells the worker (and the platform) after a submit."""

    assignment_id: int
    answers: int
    relevant: int
    # False while the answers wait for the platform to confirm the assignment (they count only then).
    counted: bool
    replayed: bool = False


@dataclass(frozen=True)
class Confirmation:
    """What the platform says about a provisional submission.

    confirmed: True (real: count it), False (contradicted: never count it) or None (not known yet).
    """

    confirmed: bool | None
    reason: str = ""


def _submission(assignment: Assignment, *, replayed: bool) -> CrowdSubmission:
    if assignment.provisional_answers is not None:
        values = list(assignment.provisional_answers.values())
        return CrowdSubmission(
            assignment_id=assignment.pk, answers=len(values), relevant=sum(1 for v in values if v),
            counted=False, replayed=replayed,
        )
    # "relevant": answers on a topic (a single topic's yes, or a topic set's class other than none of these).
    judged = assignment.judgments.aggregate(
        n=Count("pk"), relevant=Count("pk", filter=Q(relevant=True) | Q(choice__gte=1))
    )
    return CrowdSubmission(
        assignment_id=assignment.pk, answers=judged["n"], relevant=judged["relevant"], counted=True, replayed=replayed
    )


def assignment_submission_summary(*, assignment: Assignment) -> CrowdSubmission:
    """What was stored for this assignment (provisional or counted), to offer the hand-back again."""
    return _submission(assignment, replayed=True)


def _answers_check(*, hit: Hit, answers: Mapping[int, Any]) -> dict[str, Any]:
    """One yes/no answer for every document of the HIT, as JSON ({"<document id>": bool}).

    A topic set's HIT takes one class position 0..M per document (None: unsure, where the topic allows
    it), checked exactly as ``assignment_submit`` will check it once the platform confirms the assignment.
    """
    expected = set(HitItem.objects.filter(hit=hit).values_list("document_id", flat=True))
    if hit.topic.is_multiclass:
        checked = answers_normalise(topic=hit.topic, answers=answers, expected=expected)
        return {str(doc_id): checked[doc_id] for doc_id in sorted(checked)}
    given = {int(doc_id): value for doc_id, value in answers.items()}
    if any(not isinstance(value, bool) for value in given.values()):
        raise InvalidAnswers("Each answer must be on topic (true) or off topic (false).")
    missing = expected - set(given)
    if missing:
        raise InvalidAnswers(f"Please answer every document ({len(missing)} without an answer).")
    if set(given) - expected:
        raise InvalidAnswers("Some answers are for documents that are not in this HIT.")
    return {str(doc_id): given[doc_id] for doc_id in sorted(given)}


def assignment_provisional_submit(
    *, hit: Hit, platform: str, external_assignment_id: str, external_worker_id: str, answers: Mapping[int, Any],
    window: timedelta, unverified_message: str, now: datetime | None = None,
) -> CrowdSubmission:
    """Store the worker's answers as provisional: nothing counts until the platform confirms the assignment.

    Only the holder of the app assignment bound to these platform ids can submit. The assignment
    keeps its place in the HIT ("claimed") while it waits, for up to `window` (the deadline is
    extended so the expiry sweep leaves it alone). Idempotent: a replay (double click, reload)
    stores nothing more and returns what was stored.
    """
    now = now or timezone.now()
    with transaction.atomic():
        assignment = (
            Assignment.objects.select_for_update(of=("self",))
            .select_related("hit")
            .filter(external_id=external_assignment_id, hit=hit, worker__platform=platform,
                    worker__external_id=external_worker_id)
            .first()
        )
        if assignment is None:
            raise AssignmentNotFound("This assignment does not exist or is not yours.")
        if assignment.provisional_answers is not None:
            if assignment.status == Assignment.Status.EXPIRED:
                raise SubmitRefused(unverified_message)
            return _submission(assignment, replayed=True)
        if assignment.status in (Assignment.Status.SUBMITTED, Assignment.Status.APPROVED, Assignment.Status.REJECTED):
            return _submission(assignment, replayed=True)  # counted earlier
        if assignment.hit.status == Hit.Status.CANCELLED:
            raise SubmitRefused("This HIT was withdrawn; your answers were not recorded.")
        stored = _answers_check(hit=hit, answers=answers)
        update = {
            "status": Assignment.Status.CLAIMED,
            "provisional_answers": stored,
            "submitted_at": now,
            "deadline": max(assignment.deadline, now + window),
        }
        try:
            # A savepoint: a late submission (the claim expired) takes its place back only while it is free.
            with transaction.atomic():
                Assignment.objects.filter(pk=assignment.pk).update(**update)
        except IntegrityError:
            raise AssignmentExpired(
                "Your time for this HIT ran out and another worker has taken your place; your answers were not "
                "recorded. Please return the HIT."
            ) from None
        assignment.provisional_answers = stored
    logger.info("%s: assignment %s of HIT %s stored, waiting for confirmation", platform, external_assignment_id,
                hit.pk)
    return _submission(assignment, replayed=False)


def assignments_pending_confirmation() -> Any:
    """Provisional submissions still waiting for their platform's confirmation."""
    return Assignment.objects.filter(status=Assignment.Status.CLAIMED, provisional_answers__isnull=False)


def assignment_provisional_give_up(*, assignment: Assignment, reason: str, unverified_message: str) -> None:
    """Never counted: the place in the HIT is freed; the answers stay on the row."""
    Assignment.objects.filter(
        pk=assignment.pk, status=Assignment.Status.CLAIMED, provisional_answers__isnull=False
    ).update(status=Assignment.Status.EXPIRED, feedback=f"{unverified_message} ({reason})"[:1024])
    # No worker id in the logs: platform worker ids can be linked to personal profiles.
    logger.warning("crowd: assignment %s of HIT %s not counted: %s", assignment.external_id, assignment.hit_id, reason)


def _provisional_count(*, assignment: Assignment, platform_name: str, unverified_message: str) -> str:
    """The platform confirmed it: the answers become judgments exactly as a local submission's would."""
    try:
        with transaction.atomic():
            locked = (
                assignments_pending_confirmation().select_for_update(of=("self",)).select_related("worker")
                .filter(pk=assignment.pk).first()
            )
            if locked is None:
                return VERIFIED  # a concurrent reconcile run counted (or gave up) first
            # A single topic's answers are yes/no; a topic set's class positions (None: unsure) stay as stored.
            answers = {int(doc_id): value if value is None or type(value) is int else bool(value)
                       for doc_id, value in (locked.provisional_answers or {}).items()}
            # Back to a plain claim inside this transaction: assignment_submit records it (judgments,
            # votes, gold check, HIT completion, LabelsCompleted) at the worker's own submission time.
            assignment_submit(assignment_id=locked.pk, worker=locked.worker, answers=answers, now=locked.submitted_at)
            Assignment.objects.filter(pk=locked.pk).update(provisional_answers=None)
    except SubmitRefused as exc:
        assignment_provisional_give_up(assignment=assignment, reason=f"confirmed by {platform_name} but not recordable: {exc}",
                                       unverified_message=unverified_message)
        return UNVERIFIED
    logger.info("crowd: assignment %s of HIT %s confirmed and counted", assignment.external_id, assignment.hit_id)
    return VERIFIED


def assignment_provisional_settle(
    *, assignment: Assignment, confirmation: Confirmation, give_up_after: datetime, platform_name: str,
    unverified_message: str, now: datetime | None = None,
) -> str:
    """Act on the platform's answer: count the submission (VERIFIED), give it up (UNVERIFIED) or wait (PENDING).

    An unknown submission waits until `give_up_after` (the platform's own deadline for it), then is given up.
    """
    now = now or timezone.now()
    if confirmation.confirmed is True:
        return _provisional_count(assignment=assignment, platform_name=platform_name,
                                  unverified_message=unverified_message)
    if confirmation.confirmed is False:
        assignment_provisional_give_up(assignment=assignment, reason=confirmation.reason,
                                       unverified_message=unverified_message)
        return UNVERIFIED
    if now > give_up_after:
        assignment_provisional_give_up(
            assignment=assignment, reason=f"{confirmation.reason} after the assignment's time ran out",
            unverified_message=unverified_message,
        )
        return UNVERIFIED
    return PENDING


def topic_verification_counts(*, topic: Topic) -> dict[str, int]:
    """Submissions of the topic waiting for their platform's confirmation, and those never confirmed."""
    rows = Assignment.objects.filter(hit__topic=topic, provisional_answers__isnull=False)
    return {
        PENDING: rows.filter(status=Assignment.Status.CLAIMED).count(),
        UNVERIFIED: rows.filter(status=Assignment.Status.EXPIRED).count(),
    }
