"""Bonuses for the workers of a topic (issue 27): quoted, confirmed with their cost, paid exactly once.

A bonus is per worker (a fixed amount each) or per judgment (an amount × the worker's judgments on the topic,
counted from their submitted or approved assignments), with a reason the worker is shown. The same three steps
serve the analyst's page and the API:

* ``bonus_quote``: who gets what, the platform's fees and the total (nothing is written).
* ``bonus_grant``: under the topic row lock, refused (``BonusCostChanged``, with the fresh quote) unless the
  confirmed total equals a fresh quote's; then one ``WorkerBonus`` row per worker in one transaction, and the
  payment queued once it commits. The caller's idempotency key is part of a unique constraint (topic, worker,
  key): a second grant with the same key creates nothing and returns the first batch.
* ``bonus_pay``: Mechanical Turk's SendBonus for one pending row, with the row's ``request_token`` as
  UniqueRequestToken, so a retried call pays nothing more; MTurk's "token already processed" answer counts as
  paid; throttling and network faults leave the row pending (the task retries, and the crowd reconcile sweeps
  pending bonuses every five minutes); any other MTurk error marks it failed with MTurk's message.

Fees: MTurk's commission on a bonus is the commission on a reward without the extra 20% for HITs of 10 or more
assignments, i.e. ``mturk_cost_per_assignment(reward=bonus, assignments=1)`` (20%, rounded half-up to the cent,
at least $0.01). The built-in crowd moves no money: its bonuses cost their amount and are recorded as
*granted* for the operator's own payroll export, without any network call.

MTurk keeps a UniqueRequestToken for 24 hours. A bonus tried before and still pending 23 hours after its grant
(MTurk unreachable for most of a day) is first looked for in MTurk's ListBonusPayments for its assignment: when
MTurk lists more payments like it (worker, amount, reason) than the app recorded as paid, it is marked paid
without a new SendBonus.
"""
from __future__ import annotations

import logging
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal, InvalidOperation
from typing import Any, ClassVar

from botocore.exceptions import BotoCoreError, ClientError
from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from annotation.crowds.mturk_client import (
    MturkNotConfigured,
    bonus_token_already_used,
    error_code,
    error_message,
    is_transient,
    mturk_client_get,
    send_bonus_request,
)
from annotation.models import Assignment, Judgment, Topic, WorkerBonus
from annotation.services.crowd.mturk import mturk_cost_per_assignment
from annotation.services.crowd.workers import worker_public_id
from core.errors import ApplicationError

logger = logging.getLogger(__name__)

CENT = Decimal("0.01")
AMOUNT_MAX = Decimal("100.00")  # what one worker may get in one bonus: a typo's ceiling, not MTurk's
REASON_MAX_CHARS = 1000
KEY_MAX_CHARS = 200
# Judgments count towards a per-judgment bonus when their assignment was handed in and not rejected.
COUNTED_STATUSES = (Assignment.Status.SUBMITTED, Assignment.Status.APPROVED)
# Crowds whose bonuses are paid through their platform; the others are recorded as granted.
PAID_CROWDS = (Topic.Crowd.MTURK,)
SWEEP_LIMIT = 200
# MTurk keeps a UniqueRequestToken for 24 hours; past this (a margin), a retry first asks ListBonusPayments.
TOKEN_LIFETIME = timedelta(hours=23)


class BonusRefused(ApplicationError):
    """A bonus that cannot be quoted or granted; the message says why."""


class BonusCostChanged(BonusRefused):
    """The confirmed total differs from a fresh quote; ``quote`` is the fresh one to confirm instead."""

    http_status: ClassVar[int] = 409
    code: ClassVar[str] = "cost-changed"

    def __init__(self, message: str, *, quote: BonusQuote, confirmed_total: Decimal) -> None:
        super().__init__(message)
        self.quote = quote
        self.confirmed_total = confirmed_total


@dataclass(frozen=True)
class BonusLine:
    worker_id: int
    worker: str  # worker_public_id: the id the worker-quality page and the exports show
    judgments: int
    amount: Decimal
    fee: Decimal

    @property
    def total(self) -> Decimal:
        return self.amount + self.fee


@dataclass(frozen=True)
class BonusQuote:
    topic_id: int
    platform: str
    rule: str
    rate: Decimal
    lines: tuple[BonusLine, ...]

    @property
    def amount(self) -> Decimal:
        return sum((line.amount for line in self.lines), Decimal("0.00"))

    @property
    def fees(self) -> Decimal:
        return sum((line.fee for line in self.lines), Decimal("0.00"))

    @property
    def total(self) -> Decimal:
        return self.amount + self.fees

    @property
    def paid_through_platform(self) -> bool:
        return self.platform in PAID_CROWDS


@dataclass(frozen=True)
class BonusGrant:
    bonuses: tuple[WorkerBonus, ...]
    quote: BonusQuote
    created: bool  # False: the idempotency key was already used for this batch; nothing new was written


def _money(value: Any, what: str) -> Decimal:
    try:
        amount = Decimal(str(value))
    except (InvalidOperation, ValueError) as exc:
        raise BonusRefused(f"The {what} must be an amount in dollars such as 0.50.") from exc
    if not amount.is_finite() or amount != amount.quantize(CENT) or amount < CENT:
        raise BonusRefused(f"The {what} must be whole cents, at least $0.01 (not {value}).")
    return amount.quantize(CENT)


def _fee(*, platform: str, amount: Decimal) -> Decimal:
    if platform == Topic.Crowd.MTURK:
        return mturk_cost_per_assignment(reward=amount, assignments=1) - amount
    return Decimal("0.00")


def bonus_quote(*, topic: Topic, rule: str, amount: Decimal, workers: Iterable[str] | None = None) -> BonusQuote:
    """Who gets what: each worker with counted judgments on the topic (or only `workers`, public ids), the fees.

    Per worker: `amount` each. Per judgment: `amount` × the worker's judgments from submitted or approved
    assignments. Refused: an unknown rule, an amount that is not whole cents or over AMOUNT_MAX for a worker,
    a worker id that did no counted judgment on the topic, nobody to pay.
    """
    if rule not in WorkerBonus.Rule.values:
        raise BonusRefused(f"Choose how the bonus is counted: {' or '.join(WorkerBonus.Rule.values)}.")
    rate = _money(amount, "amount")
    counts = (Judgment.objects.filter(topic=topic, assignment__status__in=COUNTED_STATUSES)
              .values_list("worker_id", "worker__external_id").annotate(n=Count("id")).order_by("worker_id"))
    found = {worker_id: (worker_public_id(worker_id=worker_id, external_id=external_id), n)
             for worker_id, external_id, n in counts}
    if workers is not None:
        wanted = {w.strip() for w in workers if w and w.strip()}
        by_public = {public: worker_id for worker_id, (public, _) in found.items()}
        unknown = sorted(wanted - set(by_public))
        if unknown:
            raise BonusRefused(f"No judgment of this topic by worker {', '.join(unknown[:5])}: only workers who "
                               "judged documents of the topic can get its bonus.")
        found = {by_public[w]: found[by_public[w]] for w in wanted}
    lines = []
    for worker_id in sorted(found):
        public, judgments = found[worker_id]
        value = rate if rule == WorkerBonus.Rule.PER_WORKER else rate * judgments
        if value > AMOUNT_MAX:
            raise BonusRefused(f"Worker {public} would get ${value:.2f}; one bonus is at most ${AMOUNT_MAX:.2f}.")
        lines.append(BonusLine(worker_id=worker_id, worker=public, judgments=judgments, amount=value,
                               fee=_fee(platform=topic.crowd, amount=value)))
    return BonusQuote(topic_id=topic.pk, platform=topic.crowd, rule=rule, rate=rate, lines=tuple(lines))


def _reason(reason: str) -> str:
    reason = " ".join((reason or "").split())
    if not reason:
        raise BonusRefused("Say why the workers get this bonus (the reason is shown to them).")
    if len(reason) > REASON_MAX_CHARS:
        raise BonusRefused(f"The reason is {len(reason):,} characters; the limit is {REASON_MAX_CHARS:,}.")
    return reason


def _key(idempotency_key: str) -> str:
    key = (idempotency_key or "").strip()
    if not key or len(key) > KEY_MAX_CHARS:
        raise BonusRefused(f"An idempotency key of 1 to {KEY_MAX_CHARS} characters is required.")
    return key


def bonus_grant(
    *, topic: Topic, rule: str, amount: Decimal, reason: str, confirm_total: Decimal, idempotency_key: str,
    user: Any, workers: Iterable[str] | None = None,
) -> BonusGrant:
    """Record the confirmed bonuses (one row per worker) and queue their payment once the transaction commits.

    Under the topic row lock: a batch already granted with `idempotency_key` is returned as it is (created
    False, nothing written, nothing queued again); else `confirm_total` must equal a fresh quote's total
    (BonusCostChanged carries the fresh quote). MTurk bonuses start pending; built-in ones are granted at once.
    """
    reason, key = _reason(reason), _key(idempotency_key)
    with transaction.atomic():
        locked = Topic.objects.select_for_update().only("id", "crowd").get(pk=topic.pk)
        existing = tuple(WorkerBonus.objects.filter(topic=locked, idempotency_key=key).select_related("worker")
                         .order_by("id"))
        if existing:
            return BonusGrant(bonuses=existing, quote=_quote_of(existing), created=False)
        quote = bonus_quote(topic=locked, rule=rule, amount=amount, workers=workers)
        if not quote.lines:
            raise BonusRefused("No worker has a counted judgment on this topic: there is nobody to pay.")
        if Decimal(str(confirm_total)) != quote.total:
            raise BonusCostChanged(f"The bonus now costs ${quote.total:.2f} in all, not the ${confirm_total} "
                                   "confirmed. Check the quote and confirm its total.", quote=quote,
                                   confirmed_total=Decimal(str(confirm_total)))
        paid = quote.paid_through_platform
        now = timezone.now()
        actor = user if user is not None and getattr(user, "is_authenticated", False) else None
        rows = WorkerBonus.objects.bulk_create([
            WorkerBonus(topic=locked, worker_id=line.worker_id, rule=rule, rate=quote.rate, amount=line.amount,
                        fee=line.fee, judgments=line.judgments, reason=reason, platform=quote.platform,
                        idempotency_key=key, request_token=f"recall-bonus-{secrets.token_hex(24)}",
                        status=WorkerBonus.Status.PENDING if paid else WorkerBonus.Status.GRANTED,
                        paid_at=None if paid else now, created_by=actor)
            for line in quote.lines
        ])
        bonuses = tuple(WorkerBonus.objects.filter(topic=locked, idempotency_key=key).select_related("worker")
                        .order_by("id"))
        if paid:
            ids = [b.pk for b in bonuses]
            transaction.on_commit(lambda: _enqueue(ids))
    logger.info("bonuses: topic %s: %d granted (%s, $%s in all)", topic.pk, len(rows), rule, quote.total)
    return BonusGrant(bonuses=bonuses, quote=quote, created=True)


def _quote_of(bonuses: tuple[WorkerBonus, ...]) -> BonusQuote:
    """The quote a granted batch was confirmed with, rebuilt from its rows."""
    first = bonuses[0]
    lines = tuple(BonusLine(worker_id=b.worker_id, worker=worker_public_id(worker_id=b.worker_id,
                                                                          external_id=b.worker.external_id),
                            judgments=b.judgments, amount=b.amount, fee=b.fee) for b in bonuses)
    return BonusQuote(topic_id=first.topic_id, platform=first.platform, rule=first.rule, rate=first.rate, lines=lines)


def _enqueue(bonus_ids: list[int]) -> None:
    from annotation.tasks_bonuses import bonus_pay_task  # noqa: PLC0415 — the task module imports this service

    for bonus_id in bonus_ids:
        bonus_pay_task.delay(bonus_id=bonus_id)


def _assignment_for(bonus: WorkerBonus) -> str | None:
    """The MTurk id of one of the worker's submitted or approved assignments on the topic (approved first)."""
    if bonus.assignment_external_id:
        return bonus.assignment_external_id
    rows = (Assignment.objects.filter(worker_id=bonus.worker_id, hit__topic_id=bonus.topic_id,
                                      status__in=COUNTED_STATUSES, external_id__isnull=False)
            .values_list("status", "external_id").order_by("id"))
    ordered = sorted(rows, key=lambda row: row[0] != Assignment.Status.APPROVED)
    return ordered[0][1] if ordered else None


def _finish(bonus: WorkerBonus, *, status: str, error: str = "", assignment: str | None = None) -> WorkerBonus:
    """Move a pending row on (only a pending one: a concurrent run that finished first wins)."""
    fields: dict[str, Any] = {"status": status, "error": error[:2000]}
    if status == WorkerBonus.Status.PAID:
        fields["paid_at"] = timezone.now()
    if assignment:
        fields["assignment_external_id"] = assignment
    WorkerBonus.objects.filter(pk=bonus.pk, status=WorkerBonus.Status.PENDING).update(**fields)
    bonus.refresh_from_db()
    return bonus


def _paid_on_mturk(*, bonus: WorkerBonus, assignment: str, client: Any) -> bool:
    """Whether MTurk lists more payments like this bonus (worker, amount, reason) on the assignment than we
    recorded as paid (ListBonusPayments): an earlier call whose answer was lost did pay it."""
    amount, worker = f"{bonus.amount:.2f}", bonus.worker.external_id
    listed, token = 0, None
    while True:
        kwargs: dict[str, Any] = {"AssignmentId": assignment, "MaxResults": 100}
        if token:
            kwargs["NextToken"] = token
        page = client.list_bonus_payments(**kwargs)
        listed += sum(1 for p in page.get("BonusPayments", ())
                      if p.get("WorkerId") == worker and p.get("BonusAmount") == amount
                      and p.get("Reason") == bonus.reason)
        token = page.get("NextToken")
        if not token:
            break
    recorded = (WorkerBonus.objects.filter(worker_id=bonus.worker_id, assignment_external_id=assignment,
                                           amount=bonus.amount, reason=bonus.reason, status=WorkerBonus.Status.PAID)
                .exclude(pk=bonus.pk).count())
    return listed > recorded


def bonus_pay(*, bonus_id: int, client: Any = None) -> WorkerBonus:
    """Pay one pending bonus; safe to call twice or concurrently (the request token makes MTurk pay once).

    Not pending (paid, granted, failed): returned unchanged, nothing sent. MTurk not configured or
    unreachable, or throttling: stays pending with the reason in ``error`` (retried later). MTurk's answer that
    the token was already processed: paid. Any other MTurk refusal, or no submitted assignment of the worker
    on the topic to pay it against: failed, with the message.
    """
    bonus = WorkerBonus.objects.select_related("worker").get(pk=bonus_id)
    if bonus.status != WorkerBonus.Status.PENDING:
        return bonus
    if bonus.platform not in PAID_CROWDS:  # no platform to pay through: the operator's payroll
        return _finish(bonus, status=WorkerBonus.Status.GRANTED)
    assignment = _assignment_for(bonus)
    if assignment is None or not bonus.worker.external_id:
        return _finish(bonus, status=WorkerBonus.Status.FAILED,
                       error="The worker has no submitted Mechanical Turk assignment on this topic to pay it against.")
    tried_before = bonus.attempts > 0
    WorkerBonus.objects.filter(pk=bonus.pk).update(attempts=bonus.attempts + 1, assignment_external_id=assignment)
    try:
        client = client if client is not None else mturk_client_get()
        if tried_before and timezone.now() - bonus.created_at > TOKEN_LIFETIME and _paid_on_mturk(
                bonus=bonus, assignment=assignment, client=client):
            logger.info("bonuses: bonus %s found among MTurk's bonus payments: paid", bonus.pk)
            return _finish(bonus, status=WorkerBonus.Status.PAID, assignment=assignment)
        client.send_bonus(**send_bonus_request(worker_id=bonus.worker.external_id, amount=bonus.amount,
                                               assignment_id=assignment, reason=bonus.reason,
                                               token=bonus.request_token))
    except MturkNotConfigured as exc:
        WorkerBonus.objects.filter(pk=bonus.pk, status=WorkerBonus.Status.PENDING).update(error=str(exc))
        logger.error("bonuses: bonus %s not paid: %s", bonus.pk, exc)
        bonus.refresh_from_db()
        return bonus
    except (ClientError, BotoCoreError) as exc:
        message = f"{error_code(exc)}: {error_message(exc)}"
        if bonus_token_already_used(exc):
            logger.info("bonuses: bonus %s was already paid (MTurk: %s)", bonus.pk, message)
            return _finish(bonus, status=WorkerBonus.Status.PAID, assignment=assignment)
        if is_transient(exc):
            logger.warning("bonuses: bonus %s stays pending: %s", bonus.pk, message)
            WorkerBonus.objects.filter(pk=bonus.pk, status=WorkerBonus.Status.PENDING).update(error=message[:2000])
            bonus.refresh_from_db()
            return bonus
        logger.error("bonuses: bonus %s failed: %s", bonus.pk, message)
        return _finish(bonus, status=WorkerBonus.Status.FAILED, error=message, assignment=assignment)
    return _finish(bonus, status=WorkerBonus.Status.PAID, assignment=assignment)


def bonuses_pay_pending(*, limit: int = SWEEP_LIMIT, client: Any = None) -> int:
    """Try every pending bonus once (oldest first, at most `limit`); the number paid. The reconcile sweep."""
    ids = list(WorkerBonus.objects.filter(status=WorkerBonus.Status.PENDING).order_by("id")
               .values_list("id", flat=True)[:limit])
    paid = 0
    for bonus_id in ids:
        paid += bonus_pay(bonus_id=bonus_id, client=client).status == WorkerBonus.Status.PAID
    return paid


def topic_bonuses(*, topic: Topic, limit: int) -> list[WorkerBonus]:
    """The topic's newest `limit` bonuses, newest first (the analyst's page)."""
    return list(WorkerBonus.objects.filter(topic=topic).select_related("worker").order_by("-id")[:limit])
