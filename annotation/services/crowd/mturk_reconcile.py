"""Mechanical Turk reconcile: the periodic sweep that brings the app and Mechanical Turk into agreement.

Split from ``annotation.services.crowd.mturk`` (publishing, the external page, costs, verification): it
verifies provisional submissions, approves or rejects reviewed assignments, offers replacements, publishes
HITs that never reached Mechanical Turk and expires HITs no longer needed.
Run by ``annotation.tasks.crowd_reconcile_task``; every call is safe to repeat.

What it asks Mechanical Turk, per run (issue 25: it used to poll every HIT of the last 7 days, two calls each):

* ``ListReviewableHITs`` (100 a page, ``NextToken``) for ``Reviewable`` HITs (expired, or every assignment
  submitted: where submitted work waits) and for ``Reviewing`` ones (those this sweep finished with);
* ``ListAssignmentsForHIT`` only for our HITs that are reviewable, or where the app itself saw a worker
  (an assignment claimed or submitted here): an open HIT nobody took costs nothing;
* ``GetAssignment`` for each provisional submission (counted only once MTurk confirms it);
* the decisions (approve, reject, an extra assignment), ``UpdateExpirationForHIT`` to expire a HIT no longer
  needed that is in neither list (so still on offer) or to reopen a needed one whose lifetime ran out, and
  ``UpdateHITReviewStatus`` to move a reviewable HIT we no longer need, all of whose work is decided, to
  ``Reviewing`` (so later runs list it once, in a page, and never again one by one).

Throttling or MTurk unreachable stops the run (``stopped_early``); the next run starts over, and every
decision is idempotent (MTurk refuses a second approval; app records only move forward).
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
    reviewable_listed: int = 0  # our HITs MTurk listed as Reviewable this run
    parked: int = 0  # reviewable HITs moved to Reviewing: nothing left to decide, not needed
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


REVIEWABLE = "Reviewable"
REVIEWING = "Reviewing"


def mturk_reviewable_hits(*, client: Any, status: str = REVIEWABLE,
                          hit_type_id: str | None = None) -> dict[str, Mapping[str, Any]]:
    """Every HIT MTurk lists with `status` (Reviewable or Reviewing), by HIT id: 100 a page, following
    ``NextToken`` (per HIT type when `hit_type_id` is given, else all of the account's HITs)."""
    kwargs: dict[str, Any] = {"Status": status, "MaxResults": 100}
    if hit_type_id:
        kwargs["HITTypeId"] = hit_type_id
    found: dict[str, Mapping[str, Any]] = {}
    while True:
        page = client.list_reviewable_hits(**kwargs)
        for listed in page.get("HITs", []):
            found[listed["HITId"]] = listed
        # Like ListAssignmentsForHIT: a NextToken may come with an empty last page; stop on either.
        if not page.get("NextToken") or not page.get("HITs"):
            return found
        kwargs["NextToken"] = page["NextToken"]


def _not_live(listed: Mapping[str, Any] | None) -> bool:
    """A HIT MTurk lists as reviewable or reviewing whose expiry has passed (a full one may still expire later)."""
    expiration = listed.get("Expiration") if listed is not None else None
    return expiration is not None and expiration <= timezone.now()


def mturk_hit_reconcile(*, hit: Hit, client: Any, summary: ReconcileSummary | None = None,
                        listed: Mapping[str, Any] | None = None, list_assignments: bool = True) -> ReconcileSummary:
    """Reconcile one published HIT: confirm its provisional answers, decide its submitted assignments (when
    `list_assignments`), then expire, reopen or park it.

    `listed` is the HIT as ListReviewableHITs returned it (its ``HITStatus`` Reviewable or Reviewing), or
    None when MTurk listed it in neither (so it is still on offer, or full but not yet expired).
    """
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
    undecided = 0
    if list_assignments:
        for found in _assignments_of(client=client, mturk_hit_id=hit.external_id):
            if found["AssignmentStatus"] == "Submitted":
                before = summary.approved + summary.rejected + summary.already_reviewed
                _review(client=client, hit=hit, found=found, summary=summary)
                undecided += summary.approved + summary.rejected + summary.already_reviewed == before
            else:
                _sync_reviewed(hit=hit, found=found, summary=summary)
    _hit_expiry_sync(client=client, hit=hit, listed=listed, summary=summary)
    if (list_assignments and listed is not None and listed.get("HITStatus") == REVIEWABLE and not undecided
            and not _hit_needed(hit)):
        # Nothing left to decide and the app needs nothing more: off the Reviewable list for good.
        client.update_hit_review_status(HITId=hit.external_id, Revert=False)
        summary.parked += 1
    return summary


def _hit_expiry_sync(*, client: Any, hit: Hit, listed: Mapping[str, Any] | None, summary: ReconcileSummary) -> None:
    """Expire a HIT nobody should take any more; reopen one the app needs again whose lifetime ran out."""
    assert hit.external_id is not None
    if not _hit_needed(hit):
        if listed is None:  # in neither list: MTurk still offers it (or holds work in progress)
            client.update_expiration_for_hit(HITId=hit.external_id, ExpireAt=EXPIRE_NOW)
            summary.expired += 1
            logger.info("mturk: HIT %s (%s) expired: %s", hit.pk, hit.external_id, _why_not_needed(hit))
        return
    if _not_live(listed):
        assert listed is not None
        # The topic was paused (we expired it) or the lifetime ran out while the app still needs answers.
        if listed.get("HITStatus") == REVIEWING:  # parked by an earlier run while the topic was paused
            client.update_hit_review_status(HITId=hit.external_id, Revert=True)
        expire_at = timezone.now() + timedelta(seconds=settings.MTURK_LIFETIME_SECONDS)
        client.update_expiration_for_hit(HITId=hit.external_id, ExpireAt=expire_at)
        summary.reopened += 1
        logger.info("mturk: HIT %s (%s) offered again until %s", hit.pk, hit.external_id, expire_at.isoformat())


def _hits_to_reconcile(*, reviewable: Mapping[str, Any], reviewing: Mapping[str, Any]) -> list[tuple[Hit, bool]]:
    """Our published HITs with something to do this run, each with whether to list its assignments.

    Listed (ListAssignmentsForHIT): HITs MTurk lists as Reviewable, and HITs where the app saw a worker (an
    assignment claimed or submitted here: work to confirm, pay or reject before MTurk's auto-approval).
    Expiry only: HITs no longer needed that are recent (younger than the MTurk lifetime) and in neither list,
    so possibly still on offer; needed HITs MTurk lists as expired (to reopen). An open HIT nobody has taken
    is in none of these and costs no call.
    """
    recent = timezone.now() - timedelta(seconds=settings.MTURK_LIFETIME_SECONDS)
    active = Assignment.objects.filter(
        status__in=[Assignment.Status.CLAIMED, Assignment.Status.SUBMITTED]
    ).values("hit_id")
    listed_ids = set(reviewable) | set(reviewing)
    published = Hit.objects.filter(topic__crowd=Topic.Crowd.MTURK, external_id__isnull=False)
    with_work = set(published.filter(Q(external_id__in=list(reviewable)) | Q(pk__in=active)).values_list("pk", flat=True))
    not_needed = (published.filter(Q(pk__in=active) | Q(created_at__gte=recent))
                  .filter(~Q(status=Hit.Status.OPEN) | ~Q(topic__status=Topic.Status.ACTIVE))
                  .exclude(external_id__in=list(listed_ids)).values_list("pk", flat=True))
    expired_needed = [pk for pk, external_id in published.filter(
        external_id__in=list(listed_ids), status=Hit.Status.OPEN, topic__status=Topic.Status.ACTIVE,
    ).values_list("pk", "external_id") if _not_live(reviewable.get(external_id or "") or reviewing.get(external_id or ""))]
    todo = with_work | set(not_needed) | set(expired_needed)
    return [(hit, hit.pk in with_work) for hit in published.filter(pk__in=todo).order_by("pk")]


def mturk_reconcile_all(*, client: Any = None, hit_type_id: str | None = None) -> ReconcileSummary:
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

    if not Hit.objects.filter(topic__crowd=Topic.Crowd.MTURK, external_id__isnull=False).exists():
        return summary  # nothing published: nothing to ask MTurk
    try:
        reviewable = mturk_reviewable_hits(client=client, status=REVIEWABLE, hit_type_id=hit_type_id)
        reviewing = mturk_reviewable_hits(client=client, status=REVIEWING, hit_type_id=hit_type_id)
    except (ClientError, BotoCoreError) as exc:
        message = f"ListReviewableHITs: {error_code(exc)} {error_message(exc)}"
        logger.error("mturk: reconcile could not list reviewable HITs: %s; next run retries", message)
        summary.errors.append(message)
        return _stopped(summary) if is_transient(exc) else summary
    summary.reviewable_listed = Hit.objects.filter(external_id__in=list(reviewable)).count()

    for hit, list_assignments in _hits_to_reconcile(reviewable=reviewable, reviewing=reviewing):
        assert hit.external_id is not None
        listed = reviewable.get(hit.external_id) or reviewing.get(hit.external_id)
        try:
            mturk_hit_reconcile(hit=hit, client=client, summary=summary, listed=listed,
                                list_assignments=list_assignments)
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
