"""Mechanical Turk: publish HITs, take work from the external HIT page, review and pay.

The app's own records are authoritative for answers, but MTurk is authoritative for
who did the work: the HIT page cannot tell real assignment and worker ids from invented
ones (MTurk does not sign them), so a submission is stored as *provisional answers* and
counts for nothing (no judgment, vote, label, estimate or payment) until reconcile has
confirmed it with GetAssignment (`mturk_assignment_verify`); then the answers become
judgments through the same service as local submissions (the bookkeeping, for every platform
that works this way, is annotation.services.crowd.provisional),
and only then may the assignment be approved and paid. Never-confirmed answers expire and
are kept, marked as not counted. MTurk is told the
outcome by `mturk_reconcile_all`, which the beat schedule runs every five minutes;
it also (re)publishes HITs whose first publication failed, so a network failure
never loses a HIT. The crowd registry reaches all this through
annotation.services.crowd.platforms.mturk. docs/mturk.md describes the whole sequence.

Money is Decimal throughout and rounded to cents (ROUND_HALF_UP) where MTurk would
charge it: `mturk_cost_per_assignment`, the one place the commission is computed
(`MturkPlatform.cost_per_assignment`, hence `crowd_cost_per_assignment` and the budget check, use it).
"""
from __future__ import annotations

import logging
import re
import time
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError
from django.conf import settings
from django.db import transaction

from annotation.crowds.mturk_client import (
    WORKER_SUBMIT_HOSTS,
    MturkError,
    MturkNotConfigured,
    MturkUnavailable,
    create_hit_request,
    error_code,
    error_message,
    hit_external_url,
    is_transient,
    mturk_client_get,
    turk_error_code,
)
from annotation.models import Assignment, Hit, HitItem, Topic
from annotation.services.crowd.assignments import ClaimRefused, assignment_claim_for_hit
from annotation.services.crowd.provisional import (
    PENDING,  # noqa: F401  (re-exported: the verification outcomes)
    UNVERIFIED,  # noqa: F401
    VERIFIED,  # noqa: F401
    Confirmation,
    CrowdSubmission,
    assignment_provisional_settle,
    assignment_provisional_submit,
    assignment_submission_summary,
    topic_verification_counts,
)
from annotation.services.crowd.workers import worker_for_external_id

logger = logging.getLogger(__name__)

CENT = Decimal("0.01")
COMMISSION_RATE = Decimal("0.20")
LARGE_HIT_EXTRA_RATE = Decimal("0.20")  # HITs with 10 or more assignments
LARGE_HIT_ASSIGNMENTS = 10
MIN_COMMISSION = Decimal("0.01")  # Amazon's minimum fee per assignment

# An ExpireAt in the past expires a HIT at once (UpdateExpirationForHIT).
EXPIRE_NOW = datetime(2015, 1, 1, tzinfo=UTC)

FEEDBACK_APPROVED = "Thank you: your answers were recorded."
FEEDBACK_NO_ANSWERS = (
    "Rejected: no answers were recorded for this assignment. Answers must be given and submitted on the "
    "HIT page itself."
)
FEEDBACK_LOW_ACCURACY = (
    "Rejected: your answers on control documents, whose correct answers are known, were below the "
    "required accuracy, so your judgments cannot be used."
)

# Publish attempts within one call after a timeout or throttling; the same
# UniqueRequestToken makes every attempt safe. Later attempts happen in reconcile.
PUBLISH_ATTEMPTS = 2
HIT_ID_PATTERN = re.compile(r"\b[A-Z0-9]{20,64}\b")
# HIT, assignment and worker ids as MTurk writes them (upper-case letters and digits).
MTURK_ID_PATTERN = re.compile(r"[A-Za-z0-9]{1,64}")


# --- Costs -------------------------------------------------------------------------


def mturk_cost_per_assignment(*, reward: Decimal, assignments: int) -> Decimal:
    """Reward plus Amazon's commission for one assignment of a HIT with `assignments` assignments.

    Commission: 20% of the reward, plus 20% more when the HIT has 10 or more
    assignments (ESTIMATION-NOTES §3), rounded half-up to the cent, and at least
    $0.01 (Amazon's minimum fee per assignment). A zero reward costs nothing.
    10¢: 0.10 + 0.02 = $0.12; 5¢: 0.05 + 0.01 = $0.06; 2¢: 0.4¢ is below the
    minimum, 0.02 + 0.01 = $0.03; 10¢ with 10 assignments: 0.10 + 0.04 = $0.14.
    """
    reward = Decimal(reward)
    if reward < 0:
        raise ValueError(f"a reward cannot be negative ({reward})")
    if reward == 0:
        return Decimal("0.00")
    rate = COMMISSION_RATE + (LARGE_HIT_EXTRA_RATE if assignments >= LARGE_HIT_ASSIGNMENTS else Decimal("0"))
    commission = max((reward * rate).quantize(CENT, rounding=ROUND_HALF_UP), MIN_COMMISSION)
    return (reward + commission).quantize(CENT, rounding=ROUND_HALF_UP)


# --- Status, for the analyst's pages -----------------------------------------------


def mturk_configuration_problem() -> str | None:
    """Why HITs cannot be published right now (settings or credentials), or None."""
    try:
        mturk_client_get()
        hit_external_url(hit_id=1)
    except MturkNotConfigured as exc:
        return str(exc)
    return None


def mturk_unpublished_count(*, topic: Topic) -> int:
    """Open HITs of the topic still waiting for MTurk (reconcile publishes them every 5 minutes)."""
    return Hit.objects.filter(topic=topic, status=Hit.Status.OPEN, external_id__isnull=True).count()


# --- The external HIT page ----------------------------------------------------------


class MturkPageRefused(MturkError):
    """The HIT page cannot serve this request; the message is safe to show the worker."""


def mturk_submit_url(*, turk_submit_to: str) -> str:
    """`<turkSubmitTo>/mturk/externalSubmit`, for the two official MTurk worker sites only.

    Anything else is refused, so the HIT page cannot be used to send a browser's
    POST (the worker's answers) to an address of an attacker's choosing.
    """
    value = (turk_submit_to or "").strip()
    origin = value[:-1] if value.endswith("/") else value
    if origin not in WORKER_SUBMIT_HOSTS:
        raise MturkPageRefused("turkSubmitTo must be https://www.mturk.com or https://workersandbox.mturk.com.")
    return f"{origin}/mturk/externalSubmit"


def mturk_hit_on_offer(*, hit: Hit) -> bool:
    """Whether workers should be able to see and take this HIT now (open, topic sampling)."""
    return _hit_needed(Hit.objects.select_related("topic").get(pk=hit.pk))


def _mturk_id_check(value: str, what: str) -> str:
    if not MTURK_ID_PATTERN.fullmatch(value or ""):
        raise MturkPageRefused(f"The {what} given by Mechanical Turk is missing or malformed.")
    return value


def mturk_assignment_start(*, hit: Hit, mturk_hit_id: str, mturk_assignment_id: str, mturk_worker_id: str) -> Assignment:
    """The app's assignment for the MTurk worker who accepted this HIT (created on first visit).

    MTurk lets a worker hold one assignment per HIT; the app keeps the same rule
    (one live assignment per worker and HIT), so a reload returns the same record.
    An MTurk assignment id already bound to another worker or HIT is refused.
    """
    _mturk_id_check(mturk_hit_id, "HIT id")
    _mturk_id_check(mturk_assignment_id, "assignment id")
    _mturk_id_check(mturk_worker_id, "worker id")
    if not hit.external_id or mturk_hit_id != hit.external_id:
        raise MturkPageRefused("This page does not belong to that HIT.")
    bound = Assignment.objects.filter(external_id=mturk_assignment_id).select_related("worker").first()
    if bound is not None:
        if bound.hit_id != hit.pk or (bound.worker.platform, bound.worker.external_id) != (Topic.Crowd.MTURK, mturk_worker_id):
            raise MturkPageRefused("This assignment belongs to another worker or HIT.")
        # Even when the app's claim expired: MTurk still lets the worker submit, and
        # assignment_submit accepts a late submission while nobody has taken the slot.
        return bound
    if not mturk_hit_on_offer(hit=hit):
        raise MturkPageRefused("This HIT is no longer available. Please return it; you will not be penalised.")
    _mturk_places_check(hit=hit)
    worker = worker_for_external_id(platform=Topic.Crowd.MTURK, external_id=mturk_worker_id)
    try:
        return assignment_claim_for_hit(worker=worker, hit=hit, external_assignment_id=mturk_assignment_id)
    except ClaimRefused as exc:
        if worker.blocked:
            raise MturkPageRefused(
                "You can no longer take these HITs: your answers on control documents were below the required "
                "accuracy. Please return this HIT."
            ) from exc
        # Usually a worker who returned the HIT on MTurk still holds the app's place
        # until it times out (MTurk does not tell us about returns).
        raise MturkPageRefused(
            "This HIT is full for now: another worker's time on it has not run out. Please return it."
        ) from exc


# App assignments bound to an MTurk assignment that still hold (or held, and used) a place in the HIT.
PLACE_HOLDING = (Assignment.Status.CLAIMED, Assignment.Status.SUBMITTED, Assignment.Status.APPROVED)


def _mturk_places_check(*, hit: Hit, client: Any = None) -> None:
    """Refuse a new place when MTurk has no accepted assignment of this HIT left to match it (GetHIT).

    The page's assignment and worker ids are not signed, and MTurk's GetAssignment knows an assignment only
    once it is handed back, so a new id cannot be checked itself. What MTurk does count is the HIT's
    accepted assignments: NumberOfAssignmentsPending (accepted, not yet handed back) plus
    NumberOfAssignmentsCompleted. A genuine worker who accepted is among them; ids invented by someone who
    only previewed the HIT are not. So the app's places bound to MTurk assignments may never outnumber
    MTurk's accepted assignments: an invented id finds none left and takes no place (before, it held one for
    the claim's 30 minutes plus grace, or 24 hours once answers were posted and MTurk was unreachable).
    One GetHIT per new place (a reload of a bound assignment returns before this). MTurk not answering
    refuses the place (the worker is asked to retry); no credentials at all (nothing of ours can be on
    MTurk: tests, a demo) skips the check.
    """
    try:
        client = client if client is not None else mturk_client_get()
    except MturkNotConfigured:
        return
    try:
        found = client.get_hit(HITId=hit.external_id)["HIT"]
    except (ClientError, BotoCoreError) as exc:
        logger.warning("mturk: GetHIT for HIT %s failed (%s): no new place given", hit.pk, error_code(exc))
        raise MturkPageRefused(
            "Mechanical Turk could not confirm your assignment just now. Please reload this page in a minute."
        ) from exc
    accepted = int(found.get("NumberOfAssignmentsPending") or 0) + int(found.get("NumberOfAssignmentsCompleted") or 0)
    held = Assignment.objects.filter(hit=hit, external_id__isnull=False, status__in=PLACE_HOLDING).count()
    if held >= accepted:
        logger.warning("mturk: HIT %s: a new place refused (%d held, MTurk counts %d accepted)", hit.pk, held, accepted)
        raise MturkPageRefused(
            "Mechanical Turk shows no accepted assignment of this HIT for you. Accept the HIT on Mechanical Turk "
            "first; if you did, reload this page in a minute."
        )


# Shown on the HIT page, and kept as the assignment's feedback, when MTurk never confirmed it.
UNVERIFIED_MESSAGE = (
    "Mechanical Turk never confirmed this assignment, so its answers were kept but not counted."
)
# What was stored for an assignment (provisional or counted), to offer the hand-back again.
mturk_submission_summary = assignment_submission_summary


def mturk_assignment_submit(
    *, hit: Hit, mturk_assignment_id: str, mturk_worker_id: str, answers: Mapping[int, Any],
    now: datetime | None = None,
) -> CrowdSubmission:
    """Store the worker's answers as provisional: nothing counts until MTurk confirms the assignment.

    Only the holder of the app assignment bound to these MTurk ids can submit; the place in the HIT
    is kept for up to MTURK_VERIFY_WINDOW_SECONDS while reconcile confirms it (`mturk_assignment_verify`)
    or gives it up. Idempotent (annotation.services.crowd.provisional).
    """
    return assignment_provisional_submit(
        hit=hit, platform=Topic.Crowd.MTURK, external_assignment_id=mturk_assignment_id,
        external_worker_id=mturk_worker_id, answers=answers,
        window=timedelta(seconds=settings.MTURK_VERIFY_WINDOW_SECONDS), unverified_message=UNVERIFIED_MESSAGE,
        now=now,
    )


# --- Verification: provisional answers count only once MTurk confirms the assignment -------

# MTurk statuses of an assignment whose worker really submitted it.
CONFIRMED_STATUSES = ("Submitted", "Approved")
# After MTurk's own deadline for an assignment (accepted + MTURK_ASSIGNMENT_DURATION_SECONDS,
# and it was accepted before our claim), one MTurk does not know can no longer appear.
VERIFY_GRACE = timedelta(minutes=10)


def mturk_assignment_verify(*, assignment: Assignment, client: Any, now: datetime | None = None) -> str:
    """Ask MTurk (GetAssignment) whether a provisional submission is real; count it if so.

    Confirmed — the assignment exists, its WorkerId is this worker's, its HITId this HIT's,
    and MTurk holds it as Submitted or Approved: the answers are counted (VERIFIED).
    Contradicted — another worker or HIT, or already Rejected: given up now (UNVERIFIED).
    Unknown to MTurk (not handed back yet, or invented): PENDING until MTurk's own deadline
    for it has passed (claimed_at + MTURK_ASSIGNMENT_DURATION_SECONDS + VERIFY_GRACE), then
    given up. MTurk not answering (network, throttling) raises: the next run retries.
    """
    mturk_deadline = assignment.claimed_at + timedelta(seconds=settings.MTURK_ASSIGNMENT_DURATION_SECONDS)
    return assignment_provisional_settle(
        assignment=assignment, confirmation=_confirmation(assignment=assignment, client=client),
        give_up_after=mturk_deadline + VERIFY_GRACE, platform_name="MTurk", unverified_message=UNVERIFIED_MESSAGE,
        now=now,
    )


def _confirmation(*, assignment: Assignment, client: Any) -> Confirmation:
    hit = Hit.objects.only("external_id").get(pk=assignment.hit_id)
    try:
        found = client.get_assignment(AssignmentId=assignment.external_id)["Assignment"]
    except ClientError as exc:
        if is_transient(exc):
            raise
        return Confirmation(confirmed=None, reason=f"MTurk does not know it ({error_code(exc)})")
    if found.get("WorkerId") != assignment.worker.external_id:
        return Confirmation(confirmed=False, reason="MTurk says another worker holds this assignment")
    if found.get("HITId") != hit.external_id:
        return Confirmation(confirmed=False, reason="MTurk says this assignment belongs to another HIT")
    status = found.get("AssignmentStatus")
    if status in CONFIRMED_STATUSES:
        return Confirmation(confirmed=True)
    if status == "Rejected":
        return Confirmation(confirmed=False, reason="MTurk shows it rejected")
    return Confirmation(confirmed=None, reason=f"MTurk shows it {status or 'without a status'}")


# Submissions of a topic waiting for MTurk's confirmation, and those never confirmed.
mturk_verification_counts = topic_verification_counts


# --- Publish -----------------------------------------------------------------------


def _hit_id_from_duplicate(exc: ClientError, *, client: Any, token: str) -> str | None:
    """The HITId of the HIT an earlier call with the same token created.

    MTurk answers a repeated token with AWS.MechanicalTurk.HitAlreadyExists and a
    message containing the HITId; if the message ever lacks it, we look for the
    HIT carrying our token as its RequesterAnnotation.
    """
    match = HIT_ID_PATTERN.search(error_message(exc))
    if match:
        return match.group(0)
    kwargs: dict[str, Any] = {"MaxResults": 100}
    for _ in range(100):  # at most 10,000 HITs: an account of ours never holds more live ones
        page = client.list_hits(**kwargs)
        for found in page.get("HITs", []):
            if found.get("RequesterAnnotation") == token:
                return found["HITId"]
        if not page.get("NextToken") or not page.get("HITs"):
            return None
        kwargs["NextToken"] = page["NextToken"]
    return None


def _is_duplicate(exc: Exception) -> bool:
    if not isinstance(exc, ClientError):
        return False
    return turk_error_code(exc) == "AWS.MechanicalTurk.HitAlreadyExists" or "already exist" in error_message(
        exc
    ).lower()


def _create_hit(*, client: Any, request: Mapping[str, Any]) -> str:
    last: Exception | None = None
    for attempt in range(1, PUBLISH_ATTEMPTS + 1):
        try:
            return client.create_hit(**request)["HIT"]["HITId"]
        except (ClientError, BotoCoreError) as exc:
            if _is_duplicate(exc):
                hit_id = _hit_id_from_duplicate(exc, client=client, token=request["UniqueRequestToken"])
                if hit_id:
                    return hit_id
                raise MturkError(
                    f"MTurk says a HIT with token {request['UniqueRequestToken']} exists but did not name it: "
                    f"{error_message(exc)}"
                ) from exc
            if not is_transient(exc):
                raise MturkError(f"MTurk refused CreateHIT ({error_code(exc)}): {error_message(exc)}") from exc
            last = exc
            logger.warning(
                "mturk: CreateHIT attempt %d/%d for token %s failed (%s); retrying with the same token",
                attempt, PUBLISH_ATTEMPTS, request["UniqueRequestToken"], error_code(exc),
            )
    # PUBLISH_ATTEMPTS >= 1 and every attempt returns, raises or records its transient error.
    assert last is not None
    raise MturkUnavailable(f"MTurk did not answer CreateHIT ({error_code(last)}): {error_message(last)}") from last


def _publish(*, hit: Hit, client: Any) -> str | None:
    """Create the MTurk HIT and store its HITId; None if the HIT should not be offered now.

    Raises MturkError (MturkUnavailable when MTurk did not answer).
    """
    hit = Hit.objects.select_related("topic").get(pk=hit.pk)
    if hit.external_id:
        return hit.external_id
    if hit.topic.crowd != Topic.Crowd.MTURK:
        raise MturkError(f"topic {hit.topic_id} does not use Mechanical Turk (crowd {hit.topic.crowd})")
    if not _hit_needed(hit):
        # Reconcile publishes it if the topic becomes active again.
        logger.info("mturk: HIT %s not published now: %s", hit.pk, _why_not_needed(hit))
        return None
    request = create_hit_request(hit=hit, document_count=HitItem.objects.filter(hit=hit, is_gold=False).count())
    client = client if client is not None else mturk_client_get()
    mturk_hit_id = _create_hit(client=client, request=request)
    # Compare-and-set: a concurrent publisher used the same token, so it got the same HITId.
    Hit.objects.filter(pk=hit.pk, external_id__isnull=True).update(external_id=mturk_hit_id)
    logger.info("mturk: HIT %s published as %s", hit.pk, mturk_hit_id)
    return mturk_hit_id


# After MTurk failed to answer, this process leaves publishing to the reconcile task
# for a while: a launch of 100 HITs must not wait out 100 × the timeouts and retries.
UNAVAILABLE_PAUSE_SECONDS = 120.0
_unavailable_until = 0.0


def mturk_hit_publish(*, hit: Hit, client: Any = None) -> str | None:
    """Create the MTurk HIT for `hit` and store its HITId; returns it, or None if not published now.

    Never raises for MTurk, network or configuration trouble: the HIT stays
    unpublished in the app (Hit.external_id empty) with a log line saying why, and
    the next `mturk_reconcile_all` tries again with the same UniqueRequestToken.
    Call it outside any transaction (see `mturk_hit_publish_on_commit`):
    it waits on the network.
    """
    global _unavailable_until
    if time.monotonic() < _unavailable_until:
        logger.warning("mturk: HIT %s not published now: MTurk did not answer recently (reconcile will retry)", hit.pk)
        return None
    try:
        return _publish(hit=hit, client=client)
    except MturkError as exc:
        if isinstance(exc, MturkUnavailable):
            _unavailable_until = time.monotonic() + UNAVAILABLE_PAUSE_SECONDS
        logger.error("mturk: HIT %s not published: %s (reconcile will retry)", hit.pk, exc)
        return None


class MturkInsufficientFunds(MturkError):
    """The production account's balance does not cover the HITs about to be published (the launch is refused)."""

    http_status = 409
    code = "conflict"


# (topic, newest unpublished HIT, their cost) already checked against the balance: the other HITs of the same
# launch (published one by one, in the same transaction) do not ask MTurk again.
_funds_checked: set[tuple[int, int, Decimal]] = set()  # a few entries per launch, per process


def mturk_funds_check(*, topic: Topic, client: Any = None) -> None:
    """In production, refuse (MturkInsufficientFunds) HITs the account's available balance cannot pay for.

    The cost is every open, not yet published HIT of the topic (the launch's new ones included) at
    `mturk_cost_per_assignment` × assignments — what MTurk sets aside at CreateHIT. GetAccountBalance is
    asked once per launch. Not in the sandbox, whose balance is play money. MTurk not answering refuses too:
    publishing would fail as well, and an unfunded account would otherwise surface only as CreateHIT errors.
    """
    if settings.MTURK_ENVIRONMENT != "production":
        return
    rows = list(Hit.objects.filter(topic=topic, status=Hit.Status.OPEN, external_id__isnull=True)
                .values_list("pk", "reward", "max_assignments"))
    cost = sum((mturk_cost_per_assignment(reward=r, assignments=a) * a for _, r, a in rows), Decimal("0.00"))
    # The newest HIT's id tells this launch from a later one of the same size on the same topic.
    key = (topic.pk, max(pk for pk, _, _ in rows) if rows else 0, cost)
    if not rows or key in _funds_checked:
        return
    try:
        client = client if client is not None else mturk_client_get()
        available = Decimal(client.get_account_balance()["AvailableBalance"])
    except MturkNotConfigured:
        return  # publishing logs it and the analyst's pages show it (mturk_configuration_problem)
    except (ClientError, BotoCoreError) as exc:
        raise MturkUnavailable(
            f"Mechanical Turk did not tell the account's balance ({error_code(exc)}), so the launch of "
            f"{len(rows)} HITs costing ${cost:.2f} was not made. Launch again in a minute."
        ) from exc
    if available < cost:
        raise MturkInsufficientFunds(
            f"The Mechanical Turk account has ${available:.2f} available, but publishing these {len(rows)} HITs "
            f"needs ${cost:.2f} (reward and Amazon's commission for every assignment): "
            f"${cost - available:.2f} short. Add funds at requester.mturk.com, then launch again.",
            extra={"available": str(available), "needed": str(cost)},
        )
    _funds_checked.add(key)


def mturk_hit_publish_on_commit(*, hit: Hit) -> None:
    """Publish once the creating transaction commits: a rolled-back HIT must never reach MTurk.

    In production the account's balance is checked first, inside the creating transaction, so a launch the
    account cannot pay for is refused whole (`mturk_funds_check`) instead of failing HIT by HIT at CreateHIT.
    """
    hit_pk = hit.pk
    mturk_funds_check(topic=Hit.objects.select_related("topic").get(pk=hit_pk).topic)
    transaction.on_commit(lambda: mturk_hit_publish(hit=Hit(pk=hit_pk)), robust=True)


def _hit_needed(hit: Hit) -> bool:
    return hit.status == Hit.Status.OPEN and hit.topic.status == Topic.Status.ACTIVE


def _why_not_needed(hit: Hit) -> str:
    if hit.status != Hit.Status.OPEN:
        return f"the HIT is {hit.status}"
    return f"topic {hit.topic_id} is {hit.topic.status}"
