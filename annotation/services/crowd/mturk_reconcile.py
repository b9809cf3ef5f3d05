"""Mechanical Turk reconcile: the periodic sweep that brings the app and Mechanical Turk into agreement.

Split from ``annotation.services.crowd.mturk`` (publishing, the external page, costs, verification): for every
published HIT it verifies provisional submissions, approves or rejects reviewed assignments, offers
replacements, publishes HITs that never reached Mechanical Turk and expires HITs no longer needed.
Run by ``annotation.tasks.crowd_reconcile_task``; every call is safe to repeat.
"""
from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError
from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from annotation.crowds.mturk_client import (
    MturkError,
    MturkNotConfigured,
    MturkUnavailable,
    error_code,
    error_message,
    is_transient,
    mturk_client_get,
)
from annotation.models import Assignment, Hit, Topic
from annotation.services.crowd.mturk import (
    EXPIRE_NOW,
    FEEDBACK_APPROVED,
    FEEDBACK_LOW_ACCURACY,
    FEEDBACK_NO_ANSWERS,
    _hit_needed,
    _publish,
    _why_not_needed,
    mturk_assignment_verify,
)
from annotation.services.crowd.provisional import UNVERIFIED, VERIFIED, assignments_pending_confirmation

logger = logging.getLogger(__name__)

# --- Reconcile ---------------------------------------------------------------------


@dataclass
class ReconcileSummary:
    published: int = 0
    publish_failed: int = 0
    hits_checked: int = 0
    approved: int = 0
    rejected: int = 0
    already_reviewed: int = 0  # found approved/rejected on MTurk already; the app record was synced
    held: int = 0  # recorded, but submitted less than MTURK_APPROVAL_HOLD_SECONDS ago
    replaced: int = 0  # extra MTurk assignments for ones rejected without answers
    expired: int = 0
    reopened: int = 0
    verified: int = 0  # provisional answers MTurk confirmed: counted now
    unverified: int = 0  # provisional answers MTurk contradicted or never confirmed: kept, not counted
    awaiting_verification: int = 0  # MTurk does not know them yet; a later run asks again
    errors: list[str] = field(default_factory=list)
    stopped_early: bool = False  # MTurk unreachable or throttling: the rest waits for the next run


def _assignments_of(*, client: Any, mturk_hit_id: str) -> Iterator[dict[str, Any]]:
    kwargs: dict[str, Any] = {"HITId": mturk_hit_id, "MaxResults": 100}
    while True:
        page = client.list_assignments_for_hit(**kwargs)
        yield from page.get("Assignments", [])
        # MTurk may hand out a NextToken with an empty last page; stop on either.
        if not page.get("NextToken") or not page.get("Assignments"):
            return
        kwargs["NextToken"] = page["NextToken"]


def _app_assignment_mark(*, assignment: Assignment, status: str, feedback: str) -> None:
    # Only from "submitted" (or "claimed": work never recorded): an approved or
    # rejected record is final, whichever reconcile run got there first.
    Assignment.objects.filter(
        pk=assignment.pk, status__in=[Assignment.Status.SUBMITTED, Assignment.Status.CLAIMED]
    ).update(status=status, feedback=feedback[:1024])


def _decide(*, client: Any, mturk_assignment_id: str, approve: bool, feedback: str) -> tuple[str, bool]:
    """Approve or reject on MTurk; returns (the assignment's MTurk status, whether this call decided it).

    A second decision (two reconcile runs, or a crash after the call) is refused by
    MTurk because the assignment is no longer Submitted; we then read its status
    instead of failing, so nothing is approved twice.
    """
    try:
        if approve:
            client.approve_assignment(AssignmentId=mturk_assignment_id, RequesterFeedback=feedback)
        else:
            client.reject_assignment(AssignmentId=mturk_assignment_id, RequesterFeedback=feedback)
        return ("Approved" if approve else "Rejected"), True
    except ClientError as exc:
        if is_transient(exc):
            raise
        current = client.get_assignment(AssignmentId=mturk_assignment_id)["Assignment"]["AssignmentStatus"]
        if current in ("Approved", "Rejected"):
            logger.info(
                "mturk: assignment %s was already %s (%s)", mturk_assignment_id, current.lower(), error_code(exc)
            )
            return current, False
        raise


def _held(assignment: Assignment) -> bool:
    hold = timedelta(seconds=settings.MTURK_APPROVAL_HOLD_SECONDS)
    # Never past MTurk's auto-approval (it would approve by itself): keep an hour of margin.
    hold = min(hold, timedelta(seconds=settings.MTURK_AUTO_APPROVAL_DELAY_SECONDS) - timedelta(hours=1))
    return assignment.submitted_at is not None and assignment.submitted_at > timezone.now() - hold


def _review(*, client: Any, hit: Hit, found: Mapping[str, Any], summary: ReconcileSummary) -> None:
    """Decide one assignment MTurk holds as Submitted: the app's record decides."""
    mturk_assignment_id = found["AssignmentId"]
    assignment = (
        Assignment.objects.select_related("worker")
        .filter(external_id=mturk_assignment_id, hit=hit, worker__platform=Topic.Crowd.MTURK,
                worker__external_id=found.get("WorkerId"))
        .first()
    )
    recorded = assignment is not None and assignment.status in (
        Assignment.Status.SUBMITTED,
        Assignment.Status.APPROVED,
    )
    if assignment is not None and assignment.status == Assignment.Status.CLAIMED and (
        assignment.provisional_answers is not None
    ):
        summary.held += 1  # answers stored, not confirmed yet (mturk_hit_reconcile verified first)
        return
    if assignment is None or not recorded:
        approve, feedback = False, FEEDBACK_NO_ANSWERS
    elif assignment.worker.blocked:
        approve, feedback = False, FEEDBACK_LOW_ACCURACY
    elif _held(assignment):
        summary.held += 1  # a later run approves it (or rejects it, if the worker gets blocked)
        return
    else:
        approve, feedback = True, FEEDBACK_APPROVED
    outcome, decided_now = _decide(
        client=client, mturk_assignment_id=mturk_assignment_id, approve=approve, feedback=feedback
    )
    # An unrecorded assignment stays as it is in the app unless MTurk rejected it:
    # there are no judgments to approve.
    if assignment is not None and (recorded or outcome == "Rejected"):
        _app_assignment_mark(
            assignment=assignment, status=outcome.lower(), feedback=feedback if decided_now else ""
        )
    log = logger.info if approve else logger.warning
    # No worker id in the logs: MTurk worker ids can be linked to Amazon profiles.
    log(
        "mturk: assignment %s of HIT %s %s%s: %s",
        mturk_assignment_id, hit.pk, outcome.lower(), "" if decided_now else " earlier", feedback,
    )
    if not decided_now:
        summary.already_reviewed += 1
    elif approve:
        summary.approved += 1
    else:
        summary.rejected += 1
    if decided_now and not recorded and _hit_needed(hit):
        _replacement_offer(client=client, hit=hit, mturk_assignment_id=mturk_assignment_id, summary=summary)


def _replacement_offer(*, client: Any, hit: Hit, mturk_assignment_id: str, summary: ReconcileSummary) -> None:
    """One more MTurk assignment for one rejected without answers: the app still needs that vote.

    (A blocked worker's rejected assignment is not replaced: the app kept its votes.)
    MTurk refuses to take a HIT created with fewer than 10 assignments to 10 or more;
    that refusal is logged and the HIT simply ends with fewer workers.
    """
    try:
        client.create_additional_assignments_for_hit(
            HITId=hit.external_id,
            NumberOfAdditionalAssignments=1,
            UniqueRequestToken=f"recall-extra-{mturk_assignment_id}"[:64],
        )
        summary.replaced += 1
    except ClientError as exc:
        if is_transient(exc):
            raise
        logger.error(
            "mturk: no replacement for assignment %s of HIT %s: %s %s",
            mturk_assignment_id, hit.pk, error_code(exc), error_message(exc),
        )
        summary.errors.append(f"HIT {hit.pk}: no replacement for {mturk_assignment_id}: {error_message(exc)}")


def _sync_reviewed(*, hit: Hit, found: Mapping[str, Any], summary: ReconcileSummary) -> None:
    """MTurk already approved or rejected it (our earlier run, or auto-approval): mirror that."""
    status = found["AssignmentStatus"].lower()
    updated = Assignment.objects.filter(
        external_id=found["AssignmentId"], hit=hit, status=Assignment.Status.SUBMITTED
    ).update(status=status)
    summary.already_reviewed += updated


def _hit_expiry_sync(*, client: Any, hit: Hit, summary: ReconcileSummary) -> None:
    """Expire a HIT nobody should take any more; reopen one a resumed topic needs again."""
    found = client.get_hit(HITId=hit.external_id)["HIT"]
    expiration = found.get("Expiration")
    live = expiration is not None and expiration > timezone.now()
    if not _hit_needed(hit):
        if live and found.get("HITStatus") in ("Assignable", "Unassignable"):
            client.update_expiration_for_hit(HITId=hit.external_id, ExpireAt=EXPIRE_NOW)
            summary.expired += 1
            logger.info("mturk: HIT %s (%s) expired: %s", hit.pk, hit.external_id, _why_not_needed(hit))
        return
    if not live:
        # The topic was paused (we expired it) or the lifetime ran out while the app still needs answers.
        expire_at = timezone.now() + timedelta(seconds=settings.MTURK_LIFETIME_SECONDS)
        client.update_expiration_for_hit(HITId=hit.external_id, ExpireAt=expire_at)
        summary.reopened += 1
        logger.info("mturk: HIT %s (%s) offered again until %s", hit.pk, hit.external_id, expire_at.isoformat())


def mturk_hit_reconcile(*, hit: Hit, client: Any, summary: ReconcileSummary | None = None) -> ReconcileSummary:
    """Review every submitted assignment of one published HIT, then expire or reopen it."""
    summary = summary if summary is not None else ReconcileSummary()
    hit = Hit.objects.select_related("topic").get(pk=hit.pk)
    assert hit.external_id is not None, "only published HITs are reconciled (_hits_to_reconcile)"
    summary.hits_checked += 1
    # First confirm provisional answers (GetAssignment): only confirmed work is counted, then paid below.
    for pending in assignments_pending_confirmation().filter(hit=hit).select_related("worker").order_by("pk"):
        outcome = mturk_assignment_verify(assignment=pending, client=client)
        if outcome == VERIFIED:
            summary.verified += 1
        elif outcome == UNVERIFIED:
            summary.unverified += 1
        else:
            summary.awaiting_verification += 1
        if outcome == VERIFIED:  # the HIT may be complete now: expire it on MTurk in this run
            hit = Hit.objects.select_related("topic").get(pk=hit.pk)
    assert hit.external_id is not None
    for found in _assignments_of(client=client, mturk_hit_id=hit.external_id):
        if found["AssignmentStatus"] == "Submitted":
            _review(client=client, hit=hit, found=found, summary=summary)
        else:
            _sync_reviewed(hit=hit, found=found, summary=summary)
    _hit_expiry_sync(client=client, hit=hit, summary=summary)
    return summary


def _hits_to_reconcile() -> Any:
    """Published HITs MTurk may still hold unreviewed work for, or may still be offering.

    Open HITs, HITs with app assignments not yet final, and closed ones younger than
    the MTurk lifetime (a complete or cancelled HIT may still be on offer there).
    """
    recent = timezone.now() - timedelta(seconds=settings.MTURK_LIFETIME_SECONDS)
    pending = Assignment.objects.filter(
        status__in=[Assignment.Status.CLAIMED, Assignment.Status.SUBMITTED]
    ).values("hit_id")
    return (
        Hit.objects.filter(topic__crowd=Topic.Crowd.MTURK, external_id__isnull=False)
        .filter(Q(status=Hit.Status.OPEN) | Q(pk__in=pending) | Q(created_at__gte=recent))
        .order_by("pk")
    )


def mturk_reconcile_all(*, client: Any = None) -> ReconcileSummary:
    """Publish what failed to publish, pay for recorded work, reject the rest, expire unneeded HITs.

    Safe to run twice and concurrently: MTurk refuses a second approval and we read
    the assignment's status instead; app records only move forward from "submitted".
    One HIT's failure is logged and counted; the others are still reconciled.
    """
    summary = ReconcileSummary()
    try:
        client = client if client is not None else mturk_client_get()
    except MturkNotConfigured as exc:
        has_work = Hit.objects.filter(topic__crowd=Topic.Crowd.MTURK).exclude(status=Hit.Status.CANCELLED).exists()
        if has_work:
            logger.error("mturk: reconcile skipped: %s", exc)
        summary.errors.append(str(exc))
        return summary

    unpublished = Hit.objects.filter(
        topic__crowd=Topic.Crowd.MTURK,
        topic__status=Topic.Status.ACTIVE,
        status=Hit.Status.OPEN,
        external_id__isnull=True,
    ).order_by("pk")
    for hit in unpublished:
        try:
            summary.published += bool(_publish(hit=hit, client=client))
        except MturkError as exc:
            summary.publish_failed += 1
            summary.errors.append(f"HIT {hit.pk} not published: {exc}")
            logger.error("mturk: HIT %s not published: %s (next run retries)", hit.pk, exc)
            if isinstance(exc, MturkUnavailable):
                return _stopped(summary)

    for hit in _hits_to_reconcile():
        try:
            mturk_hit_reconcile(hit=hit, client=client, summary=summary)
        except (ClientError, BotoCoreError, MturkError) as exc:
            message = f"HIT {hit.pk} ({hit.external_id}): {error_code(exc)} {error_message(exc)}"
            logger.error("mturk: reconcile failed for %s; next run retries", message)
            summary.errors.append(message)
            if is_transient(exc):
                return _stopped(summary)
    logger.info("mturk: reconcile done: %s", summary)
    return summary


def _stopped(summary: ReconcileSummary) -> ReconcileSummary:
    # Unreachable or throttling: every further call would wait out its own timeouts
    # and retries, so the run stops here; the next one (5 minutes) starts over.
    summary.stopped_early = True
    logger.error("mturk: MTurk unavailable, reconcile stopped early: %s", summary)
    return summary
