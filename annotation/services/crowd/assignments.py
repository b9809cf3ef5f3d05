"""Assignments: a worker claims a place (slot 0–2) in a HIT, then submits one answer per document.

Claiming never locks HITs. It picks a few candidate HITs with a free slot that
the worker may take, and inserts an assignment for a free slot with
INSERT … ON CONFLICT DO NOTHING; the partial unique constraints
`assignment_slot_unique_live` (one live assignment per slot) and
`assignment_one_live_per_worker` (one per worker and HIT) turn a lost race into
no row, and the claimer moves on to the next slot or HIT (no savepoint needed). (Turkle locks every unfinished task of a batch to hand
out one, and serialises all annotators: about 2 judgments/s at 32 of them.)
The only lock a claim takes is the claiming worker's own (an advisory lock on
PostgreSQL), so one worker's double click takes one HIT while different
workers never wait for each other. Candidates come from the partial index
`hit_open_by_topic` in id order, so a claim costs the same with ten open HITs
or a hundred thousand. The annotator path's hottest queries (_open_hits_sql) are
plain SQL: the ORM's cost of building them was most of their price.

Submitting locks the assignment row and its HIT row (in one SELECT … FOR UPDATE;
the HIT's completion is counted with an F() expression), then the HIT's labels
in document order.
Every path takes these locks in that order, so submissions cannot deadlock.

Correcting one's own submitted answers (judgment_correct) locks the assignment row,
then the HIT's labels in document order — the submit order without the HIT row —
and is refused once any of those labels has all its votes.

Returning (releasing) a HIT locks only the assignment row, like the first step
of a submit, and marks it expired at once, so its slot is free for the next
claimer; the mark (RELEASED_FEEDBACK) keeps a later submit of it from counting
and keeps the HIT from being offered to the same worker again
(assignment_claim_fresh).
"""
from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Case, F, Value, When
from django.utils import timezone

from annotation.events import LabelsCompleted
from annotation.models import Assignment, Hit, HitItem, Judgment, Label, Topic, TopicClass, Worker
from annotation.services.crowd.gold import worker_gold_check_for_topic
from annotation.services.crowd.labels import (
    LabelsComplete,
    labels_votes_add,
    labels_votes_change,
    topic_gold_document_ids,
)
from annotation.tasks_labels import labels_posteriors_task
from core.errors import ApplicationError
from core.events import event_send_on_commit
from core.observability.metrics import judgments_stored

CANDIDATE_HITS = 20  # HITs considered per claim round
CLAIM_ROUNDS = 5  # rounds of candidates before giving up (each lost race moves on)
LAZY_EXPIRY_INTERVAL = timedelta(seconds=1)
NON_EXPIRED = ("claimed", "submitted", "approved", "rejected")
DONE = ("submitted", "approved", "rejected")


class ClaimRefused(ApplicationError):
    """The worker may not take HITs (blocked) or may not take this HIT."""


class SubmitRefused(ApplicationError):
    """The submission cannot be recorded; the message is safe to show the worker."""


class AssignmentNotFound(SubmitRefused):
    """No such assignment for this worker (another worker's assignment looks the same: not found)."""


class AssignmentExpired(SubmitRefused):
    pass


class InvalidAnswers(SubmitRefused):
    pass


class AssignmentReleased(AssignmentExpired):
    """The worker returned this HIT; its place may already be someone else's."""


class ReleaseRefused(ApplicationError):
    """The assignment cannot be returned (already submitted, or not this worker's)."""


# Kept as the feedback of an assignment its worker returned (status "expired", slot freed).
RELEASED_FEEDBACK = "Returned by the worker."


@dataclass(frozen=True)
class SubmitResult:
    assignment_id: int
    hit_id: int
    judgments: int
    # The HIT's state when this result was made: a replay may see it complete since.
    hit_complete: bool = field(compare=False)
    # True when this call only replayed an earlier submission (double click, retried request).
    replayed: bool = field(default=False, compare=False)
    labels_completed: tuple[int, ...] = field(default=(), compare=False)
    # A replay whose answers differ from the recorded ones (a stale second tab): nothing was changed.
    differs: bool = field(default=False, compare=False)


def _deadline(now: datetime, *, hold: bool = False) -> datetime:
    """A new place's deadline: the whole timeout (a platform's worker), or the built-in pages' short hold.

    The built-in HIT page renews its hold while the annotator is active (assignment_hold_renew), up to
    ASSIGNMENT_TIMEOUT_SECONDS after the claim; a tab left alone or closed frees its place within
    ASSIGNMENT_HOLD_SECONDS (issue 27: "submit and next" used to keep the next HIT for half an hour).
    """
    seconds = settings.ASSIGNMENT_HOLD_SECONDS if hold else settings.ASSIGNMENT_TIMEOUT_SECONDS
    return now + timedelta(seconds=seconds)


def _hold_until(*, claimed_at: datetime, now: datetime) -> datetime:
    """A renewed hold: ASSIGNMENT_HOLD_SECONDS from now, never past the timeout counted from the claim."""
    return min(now + timedelta(seconds=settings.ASSIGNMENT_HOLD_SECONDS),
               claimed_at + timedelta(seconds=settings.ASSIGNMENT_TIMEOUT_SECONDS))


# --------------------------------------------------------------------------- expiry


def assignments_expire(*, now: datetime | None = None) -> int:
    """Expire claimed assignments past their deadline, freeing their slots; returns how many."""
    now = now or timezone.now()
    return Assignment.objects.filter(status=Assignment.Status.CLAIMED, deadline__lt=now).update(
        status=Assignment.Status.EXPIRED
    )


# --------------------------------------------------------------------------- hold


@dataclass(frozen=True)
class HoldResult:
    """What the HIT page learns when it renews its hold: still held (until ``deadline``) or not, and why."""

    held: bool
    deadline: datetime | None
    message: str = ""


def assignment_hold_renew(*, assignment_id: int, worker: Worker, now: datetime | None = None) -> HoldResult:
    """Renew the built-in HIT page's hold on the worker's claimed assignment (called while they are active).

    Claimed: the deadline moves to ASSIGNMENT_HOLD_SECONDS from now, capped at ASSIGNMENT_TIMEOUT_SECONDS
    after the claim. Expired by the sweep while its place is still free (a tab asleep for a while): the
    place is taken back, so the answers typed can still be submitted; if another worker took it, not held,
    with the reason. Submitted, returned or past the timeout: not held. Another worker's assignment:
    AssignmentNotFound. One UPDATE on the assignment's row; safe to call any number of times.
    """
    now = now or timezone.now()
    assignment = Assignment.objects.filter(pk=assignment_id, worker=worker).select_related("hit__topic").first()
    if assignment is None:
        raise AssignmentNotFound("This assignment does not exist or is not yours.")
    if assignment.hit.topic.crowd != Topic.Crowd.LOCAL:  # a platform's places keep the platform's own time
        return HoldResult(held=assignment.status == Assignment.Status.CLAIMED, deadline=assignment.deadline)
    until = _hold_until(claimed_at=assignment.claimed_at, now=now)
    if assignment.status == Assignment.Status.CLAIMED:
        if until <= now:
            return HoldResult(held=False, deadline=assignment.deadline,
                              message="The time allowed for this HIT has passed.")
        deadline = max(until, assignment.deadline)  # never shortened
        Assignment.objects.filter(pk=assignment.pk, status=Assignment.Status.CLAIMED).update(deadline=deadline)
        return HoldResult(held=True, deadline=deadline)
    if assignment.status == Assignment.Status.EXPIRED and assignment.feedback != RELEASED_FEEDBACK and until > now:
        try:
            with transaction.atomic():
                revived = Assignment.objects.filter(pk=assignment.pk, status=Assignment.Status.EXPIRED).update(
                    status=Assignment.Status.CLAIMED, deadline=until)
        except IntegrityError:  # the place (or this worker's place in the HIT) was taken since
            revived = 0
        if revived:
            return HoldResult(held=True, deadline=until)
        return HoldResult(held=False, deadline=assignment.deadline,
                          message="Another worker has taken your place in this HIT: your answers can no longer "
                                  "be recorded. Take the next HIT.")
    return HoldResult(held=False, deadline=assignment.deadline, message="This HIT is no longer yours to answer.")


# --------------------------------------------------------------------------- claim


def _open_hits_sql(*, worker_id: int, topic_id: int | None, skip_returned: bool, exclude_ids: Collection[int] = (),
                   gold_ids: Collection[int] = ()) -> tuple[str, list]:
    """SQL of the open HITs with a free place that the worker may take: (id, places, places live now).

    The annotator path's hottest query, once per claim and once per HIT page (hits_open_count), written
    in SQL because the ORM spent about 3 ms of CPU building and compiling it each time (PostgreSQL runs
    it in under 0.5 ms). Plain SQL that SQLite and PostgreSQL both read; every value is a parameter.

    * ``topic_id``: that topic's HITs only (the caller has checked it is sampling); None: every sampling
      topic of the built-in crowd.
    * Not a HIT the worker holds or held (an expired place does not count, unless ``skip_returned`` and
      they returned it), nor one of ``exclude_ids``.
    * ``gold_ids``: the topic's gold documents, which recur across HITs: not a HIT holding one the
      worker has already seen in the topic (needs ``topic_id``).
    """
    live = ", ".join(["%s"] * len(Assignment.LIVE_STATUSES))
    params: list = [*Assignment.LIVE_STATUSES, Hit.Status.OPEN]
    where = ["h.status = %s"]
    if topic_id is not None:
        where.append("h.topic_id = %s")
        params.append(topic_id)
    else:
        where.append("EXISTS (SELECT 1 FROM annotation_topic t WHERE t.id = h.topic_id AND t.status = %s AND t.crowd = %s)")
        params += [Topic.Status.ACTIVE, Topic.Crowd.LOCAL]
    if exclude_ids:
        where.append(f"h.id NOT IN ({', '.join(['%s'] * len(exclude_ids))})")
        params += list(exclude_ids)
    held = "(m.status <> %s OR m.feedback = %s)" if skip_returned else "m.status <> %s"
    where.append(f"NOT EXISTS (SELECT 1 FROM annotation_assignment m WHERE m.hit_id = h.id AND m.worker_id = %s AND {held})")
    params += [worker_id, Assignment.Status.EXPIRED] + ([RELEASED_FEEDBACK] if skip_returned else [])
    if gold_ids:
        assert topic_id is not None
        seen = ", ".join(["%s"] * len(NON_EXPIRED))
        where.append(
            "NOT EXISTS (SELECT 1 FROM annotation_hititem i"
            f" WHERE i.hit_id = h.id AND i.document_id IN ({', '.join(['%s'] * len(gold_ids))})"
            " AND EXISTS (SELECT 1 FROM annotation_assignment s"
            " JOIN annotation_hit sh ON sh.id = s.hit_id JOIN annotation_hititem si ON si.hit_id = s.hit_id"
            f" WHERE s.worker_id = %s AND s.status IN ({seen}) AND sh.topic_id = %s AND si.document_id = i.document_id))"
        )
        params += [*gold_ids, worker_id, *NON_EXPIRED, topic_id]
    sql = (
        "SELECT q.id, q.max_assignments, q.live FROM ("
        "SELECT h.id, h.max_assignments,"
        f" (SELECT COUNT(*) FROM annotation_assignment a WHERE a.hit_id = h.id AND a.status IN ({live})) AS live"
        f" FROM annotation_hit h WHERE {' AND '.join(where)}"
        ") q WHERE q.live < q.max_assignments"
    )
    return sql, params


def _candidate_hits(*, worker: Worker, topic: Topic, exclude_ids: set[int],
                    skip_returned: bool = False) -> list[tuple[int, int, int]]:
    """Up to CANDIDATE_HITS open HITs of the topic, oldest first, with a free place the worker may take.

    (HIT id, places, places live now.) Walks the partial index hit_open_by_topic in id order and stops
    at the first matches, so the cost does not grow with the number of open HITs.
    ``skip_returned``: not the HITs this worker returned either (in the same query).
    """
    # The topic's gold ids first (one cheap query, none of them in most topics): folded into the
    # candidate query as a join, the check cost PostgreSQL 3.5 ms of planning and probes per claim.
    gold = topic_gold_document_ids(topic=topic)
    sql, params = _open_hits_sql(worker_id=worker.pk, topic_id=topic.pk, skip_returned=skip_returned,
                                 exclude_ids=exclude_ids, gold_ids=gold)
    with connection.cursor() as cursor:
        cursor.execute(f"{sql} ORDER BY q.id LIMIT %s", [*params, CANDIDATE_HITS])
        return [(int(hit_id), int(places), int(live)) for hit_id, places, live in cursor.fetchall()]


def hits_open_count(*, worker: Worker, cap: int) -> int:
    """How many HITs of the sampling topics the worker may still take (not returned ones), up to ``cap`` + 1.

    Approximate: gold repeats are not excluded.
    """
    sql, params = _open_hits_sql(worker_id=worker.pk, topic_id=None, skip_returned=True)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT COUNT(*) FROM ({sql} LIMIT %s) n", [*params, cap + 1])
        return int(cursor.fetchone()[0])


def _topics_to_serve(*, topic: Topic | None) -> list[Topic]:
    """The topic asked for if it is sampling, else every sampling topic with open HITs (oldest first).

    Only built-in-crowd topics: Mechanical Turk manages its HITs' places itself
    (its workers arrive through assignment_claim_for_hit). In SQL, as _open_hits_sql and for the same reason.
    """
    if topic is not None:
        sampling = Topic.objects.filter(pk=topic.pk, status=Topic.Status.ACTIVE, crowd=Topic.Crowd.LOCAL).exists()
        return [topic] if sampling else []
    return list(Topic.objects.raw(
        "SELECT * FROM annotation_topic t WHERE t.status = %s AND t.crowd = %s"
        " AND EXISTS (SELECT 1 FROM annotation_hit h WHERE h.topic_id = t.id AND h.status = %s) ORDER BY t.id",
        [Topic.Status.ACTIVE, Topic.Crowd.LOCAL, Hit.Status.OPEN],
    ))


def _slot_insert(*, hit_id: int, slot: int, worker: Worker, now: datetime,
                 external_assignment_id: str | None = None, hold: bool = False) -> Assignment | None:
    """Take this place of the HIT unless someone holds it; the worker's place in the HIT (HIT and topic loaded).

    INSERT … ON CONFLICT DO NOTHING: a lost race is no error, so no savepoint is needed around it. Read
    back, the worker's live place in the HIT is the one just made, or one they held already (a parallel
    request of theirs: Mechanical Turk's, which does not take the claim lock); None if the place was taken.
    """
    Assignment.objects.bulk_create(
        [Assignment(hit_id=hit_id, worker=worker, slot=slot, deadline=_deadline(now, hold=hold),
                    external_id=external_assignment_id)],
        ignore_conflicts=True,
    )
    return (
        Assignment.objects.select_related("hit__topic")
        .filter(hit_id=hit_id, worker=worker)
        .exclude(status=Assignment.Status.EXPIRED)
        .first()
    )


def _slot_take(*, hit_id: int, max_assignments: int, worker: Worker, now: datetime, live: int | None = None,
               external_assignment_id: str | None = None, hold: bool = False) -> Assignment | None:
    """A free place in the HIT for the worker (HIT and topic loaded); None when others took them all first.

    ``live``: the places held when the caller looked. Places are numbered from 0 and mostly held
    without gaps, so place ``live`` is tried first, blind; only if that fails (an expiry left a gap,
    or a race) are the held places read.
    """
    if live is not None and live < max_assignments:
        assignment = _slot_insert(hit_id=hit_id, slot=live, worker=worker, now=now,
                                  external_assignment_id=external_assignment_id, hold=hold)
        if assignment is not None:
            return assignment
    taken = set(
        Assignment.objects.filter(hit_id=hit_id, status__in=Assignment.LIVE_STATUSES).values_list("slot", flat=True)
    )
    for slot in range(max_assignments):
        if slot in taken or slot == live:
            continue
        assignment = _slot_insert(hit_id=hit_id, slot=slot, worker=worker, now=now,
                                  external_assignment_id=external_assignment_id, hold=hold)
        if assignment is not None:
            return assignment
    return None


_last_lazy_expiry: datetime | None = None


def _expire_lazily(now: datetime) -> None:
    """Expire on claim, at most once a second per process (deadlines are half an hour; the beat task runs each minute)."""
    global _last_lazy_expiry
    last = _last_lazy_expiry
    if last is not None and timedelta(0) <= now - last < LAZY_EXPIRY_INTERVAL:
        return
    assignments_expire(now=now)
    _last_lazy_expiry = now


CLAIM_LOCK_CLASS = 0x636C61  # "cla": the namespace of this module's advisory locks


def _worker_claim_lock(worker: Worker) -> None:
    """Serialise one worker's claims until the transaction ends.

    PostgreSQL: an advisory transaction lock (no row write, so a claim that only
    resumes stays read-only). Elsewhere a row lock on the worker (SQLite runs one
    writer at a time anyway).
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [CLAIM_LOCK_CLASS, worker.pk % 2**31])
    else:
        list(Worker.objects.select_for_update().filter(pk=worker.pk).values_list("pk", flat=True))


def assignment_claim(*, worker: Worker, topic: Topic | None = None, now: datetime | None = None,
                     skip_returned: bool = False) -> Assignment | None:
    """The worker's next assignment: the one in progress, else a slot in an open HIT; None if none is left.

    ``skip_returned``: never a HIT this worker returned (``assignment_release``), so "skip" moves on.
    """
    now = now or timezone.now()
    if worker.blocked:
        raise ClaimRefused(f"You can no longer take HITs: {worker.blocked_reason or 'blocked'}.")
    _expire_lazily(now)
    with transaction.atomic():
        # One claim per worker at a time (a double click on "take the next HIT" must not take two
        # HITs): the worker's own row is the lock, so different workers never wait for each other.
        _worker_claim_lock(worker)
        current = Assignment.objects.filter(
            worker=worker, status=Assignment.Status.CLAIMED, hit__status=Hit.Status.OPEN
        ).select_related("hit__topic")
        if topic is not None:
            current = current.filter(hit__topic=topic)
        resumed = current.order_by("claimed_at").first()
        if resumed is not None:
            # Coming back to a HIT in progress is activity: its hold starts again (never shortened).
            renewed = _hold_until(claimed_at=resumed.claimed_at, now=now)
            if renewed > resumed.deadline:
                Assignment.objects.filter(pk=resumed.pk, status=Assignment.Status.CLAIMED).update(deadline=renewed)
                resumed.deadline = renewed
            return resumed
        for serving in _topics_to_serve(topic=topic):
            assignment = _claim_in_topic(worker=worker, topic=serving, now=now, skip_returned=skip_returned)
            if assignment is not None:
                return assignment
        return None


def _claim_in_topic(*, worker: Worker, topic: Topic, now: datetime, skip_returned: bool) -> Assignment | None:
    tried: set[int] = set()
    for _ in range(CLAIM_ROUNDS):
        candidates = _candidate_hits(worker=worker, topic=topic, exclude_ids=tried, skip_returned=skip_returned)
        if not candidates:
            return None
        # Spread concurrent claimers over the candidates instead of all racing for the first HIT
        # (by worker, not at random, so a seeded simulation replays the same way).
        offset = worker.pk % len(candidates)
        candidates = candidates[offset:] + candidates[:offset]
        for hit_id, max_assignments, live in candidates:
            tried.add(hit_id)
            assignment = _slot_take(hit_id=hit_id, max_assignments=max_assignments, live=live, worker=worker, now=now,
                                    hold=True)
            if assignment is not None:
                return assignment
    return None


def assignment_claim_for_hit(
    *, worker: Worker, hit: Hit, now: datetime | None = None, external_assignment_id: str | None = None
) -> Assignment:
    """A slot in this particular HIT (a crowd platform's worker accepted it there); idempotent.

    ``external_assignment_id``: the platform's id of the assignment (MTurk's AssignmentId).

    Returns the worker's existing assignment for the HIT if there is one.
    """
    now = now or timezone.now()
    if worker.blocked:
        raise ClaimRefused(f"Worker {worker} is blocked: {worker.blocked_reason or 'no reason given'}.")
    _expire_lazily(now)
    existing = Assignment.objects.filter(hit=hit, worker=worker).exclude(status="expired").first()
    if existing is not None:
        if external_assignment_id and existing.external_id != external_assignment_id:
            Assignment.objects.filter(pk=existing.pk).update(external_id=external_assignment_id)
            existing.external_id = external_assignment_id
        return existing
    assignment = _slot_take(hit_id=hit.pk, max_assignments=hit.max_assignments, worker=worker, now=now,
                            external_assignment_id=external_assignment_id or None)
    if assignment is None:
        existing = Assignment.objects.filter(hit=hit, worker=worker).exclude(status="expired").first()
        if existing is not None:
            return existing
        raise ClaimRefused(f"HIT {hit.pk} has no free place left.")
    return assignment


# --------------------------------------------------------------------------- submit


Answer = bool | int | None


def _normalise_answers(
    answers: Mapping, expected: set[int], *, allow_unsure: bool = False, n_classes: int | None = None
) -> dict[int, Answer]:
    """{document id: answer}, one per expected document.

    A single topic (``n_classes`` None): True/False, or None ("unsure") where the topic allows it.
    A topic set with ``n_classes`` = M topics: a class position 0..M (0: none of these), or None where allowed.
    """
    try:
        normalised = {int(doc_id): value for doc_id, value in answers.items()}
    except (TypeError, ValueError, AttributeError):
        raise InvalidAnswers("Answers must be keyed by document id.") from None
    if any(value is None for value in normalised.values()) and not allow_unsure:
        if n_classes is not None:
            raise InvalidAnswers("This topic set has no \"unsure\" answer: choose a topic or “None of these”.")
        raise InvalidAnswers("This topic has no \"unsure\" answer: answer on topic or off topic.")
    if n_classes is not None:
        for value in normalised.values():
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int):
                raise InvalidAnswers("This is a topic set: choose one of its topics, or “None of these”, for each document.")
            if not 0 <= value <= n_classes:
                raise InvalidAnswers(f"Answer {value} is not a choice of this topic set (0 to {n_classes}).")
    elif any(not (isinstance(value, bool) or value is None) for value in normalised.values()):
        raise InvalidAnswers("Each answer must be on topic (true) or off topic (false).")
    missing, unexpected = expected - set(normalised), set(normalised) - expected
    if missing:
        raise InvalidAnswers(f"Please answer every document ({len(missing)} without an answer).")
    if unexpected:
        raise InvalidAnswers("Some answers are for documents that are not in this HIT.")
    return normalised


def topic_answer_classes(*, topic: Topic) -> int | None:
    """M, the number of classes a topic set's answers choose among (0..M); None for a single topic (no query)."""
    if not topic.is_multiclass:
        return None
    return TopicClass.objects.filter(topic=topic).count()


def answers_normalise(*, topic: Topic, answers: Mapping, expected: set[int]) -> dict[int, Answer]:
    """The answers of one assignment checked against the topic's kind (see ``_normalise_answers``)."""
    return _normalise_answers(answers, expected, allow_unsure=topic.allow_unsure,
                              n_classes=topic_answer_classes(topic=topic))


def _answer_field(topic: Topic) -> str:
    """Where a judgment keeps its answer: ``choice`` in a topic set, ``relevant`` otherwise."""
    return "choice" if topic.is_multiclass else "relevant"


def _replay_differs(assignment: Assignment, answers: Mapping) -> bool:
    """Whether a replayed submission's answers differ from the ones recorded first."""
    topic = assignment.hit.topic
    recorded = dict(Judgment.objects.filter(assignment=assignment).values_list("document_id", _answer_field(topic)))
    try:
        given = {int(doc_id): value for doc_id, value in answers.items()}
    except (TypeError, ValueError, AttributeError):
        return True
    if topic.is_multiclass and any(isinstance(value, bool) for value in given.values()):
        return True  # True == 1 in Python: a yes/no answer is never a class
    return given != recorded


def _result(assignment: Assignment, *, replayed: bool, labels_completed=(), differs: bool = False) -> SubmitResult:
    hit = Hit.objects.only("status").get(pk=assignment.hit_id)
    return SubmitResult(
        assignment_id=assignment.pk,
        hit_id=assignment.hit_id,
        judgments=Judgment.objects.filter(assignment=assignment).count(),
        hit_complete=hit.status == Hit.Status.COMPLETE,
        replayed=replayed,
        labels_completed=tuple(labels_completed),
        differs=differs,
    )


def assignment_submit(
    *, assignment_id: int, worker: Worker, answers: Mapping[int, Answer], now: datetime | None = None
) -> SubmitResult:
    """Record one answer per document of the assignment's HIT; idempotent.

    A replay (double click, retried request) of a submitted assignment records
    nothing and returns the stored result (`differs` when its answers are not the
    recorded ones: a stale second tab). An assignment that expired can still
    be submitted while nobody has re-taken its slot; otherwise AssignmentExpired.
    A returned assignment (assignment_release) is AssignmentReleased.
    Another worker's assignment is AssignmentNotFound, as a missing one is.
    """
    now = now or timezone.now()
    with transaction.atomic():
        # Lock the assignment and its HIT (whose counter this transaction updates anyway, so the lock is
        # taken a few statements earlier; what it buys: the HIT's count read here is current). Not the topic.
        assignment = (
            Assignment.objects.select_for_update(of=("self", "hit"))
            .filter(pk=assignment_id, worker=worker)
            .select_related("hit__topic")
            .first()
        )
        if assignment is None:
            raise AssignmentNotFound("This assignment does not exist or is not yours.")
        if assignment.status in DONE:
            return _result(assignment, replayed=True, differs=_replay_differs(assignment, answers))
        if assignment.status == Assignment.Status.EXPIRED and assignment.feedback == RELEASED_FEEDBACK:
            raise AssignmentReleased("You returned this HIT; your answers were not recorded. Take the next HIT.")
        hit = assignment.hit
        if hit.status == Hit.Status.CANCELLED:
            raise SubmitRefused("This HIT was withdrawn; your answers were not recorded.")
        items = list(HitItem.objects.filter(hit_id=hit.pk).values_list("document_id", "is_gold"))
        answers = answers_normalise(topic=hit.topic, answers=answers, expected={doc_id for doc_id, _ in items})

        if assignment.status == Assignment.Status.EXPIRED:
            try:
                with transaction.atomic():
                    Assignment.objects.filter(pk=assignment.pk).update(
                        status=Assignment.Status.SUBMITTED, submitted_at=now
                    )
            except IntegrityError:
                raise AssignmentExpired(
                    "Your time for this HIT ran out and another worker has taken your place; "
                    "your answers were not recorded. Take the next HIT."
                ) from None
        else:
            Assignment.objects.filter(pk=assignment.pk).update(status=Assignment.Status.SUBMITTED, submitted_at=now)

        # One statement; the right-hand side sees the row before the update, hence max − 1.
        Hit.objects.filter(pk=hit.pk).update(
            completed_assignments=F("completed_assignments") + 1,
            status=Case(
                When(
                    status=Hit.Status.OPEN,
                    completed_assignments__gte=F("max_assignments") - 1,
                    then=Value(Hit.Status.COMPLETE),
                ),
                default=F("status"),
            ),
        )
        multiclass = hit.topic.is_multiclass
        try:
            Judgment.objects.bulk_create(
                [
                    Judgment(
                        assignment=assignment,
                        topic_id=hit.topic_id,
                        document_id=doc_id,
                        worker=worker,
                        # A topic set's answer is a class (choice); a single topic's a relevance.
                        relevant=None if multiclass else answers[doc_id],  # type: ignore[misc]
                        choice=answers[doc_id] if multiclass else None,
                    )
                    for doc_id, _ in items
                ]
            )
        except IntegrityError:
            # No savepoint needed: raising leaves the atomic block, which rolls everything back.
            raise SubmitRefused("You have already judged one of these documents; answers not recorded.") from None
        # Counted once committed (the recall_judgments metric, docs/operations.md); a rollback counts nothing.
        transaction.on_commit(partial(judgments_stored, count=len(items), kind=hit.topic.kind))
        topic = hit.topic
        sample_votes = {doc_id: answers[doc_id] for doc_id, is_gold in items if not is_gold}
        completed = labels_votes_add(topic=topic, votes=sample_votes, votes_needed=hit.max_assignments)
        if any(is_gold for _, is_gold in items):
            worker_gold_check_for_topic(worker=worker, topic=topic)
        if completed:
            _labels_changed(topic=topic)
        return SubmitResult(
            assignment_id=assignment.pk,
            hit_id=hit.pk,
            judgments=len(items),
            # The HIT row is locked since it was read: its count then, plus this submission.
            hit_complete=hit.completed_assignments + 1 >= hit.max_assignments,
            labels_completed=tuple(completed),
        )


def _labels_changed(*, topic: Topic) -> None:
    """New complete labels: refresh the D–S posteriors (when the topic uses them) and announce the
    fact after commit (estimation's receivers decide certifications and recompute the report)."""
    if topic.aggregator == Topic.Aggregator.DAWID_SKENE:
        topic_id = topic.pk
        transaction.on_commit(lambda: labels_posteriors_task.delay(topic_id=topic_id), robust=True)
    event_send_on_commit(event=LabelsCompleted(topic_id=topic.pk))


# --------------------------------------------------------------------------- correct


class CorrectionRefused(ApplicationError):
    """The submitted answers can no longer be changed (labels complete, not submitted, not a local HIT)."""


@dataclass(frozen=True)
class CorrectResult:
    assignment_id: int
    hit_id: int
    changed: int  # judgments whose answer changed (0: same answers again, e.g. a double click)


def _correction_problem(*, assignment: Assignment) -> str | None:
    """Why the worker may not change this assignment's answers, None when they may (labels not checked)."""
    if assignment.hit.topic.crowd != Topic.Crowd.LOCAL:
        return "Answers given on Mechanical Turk cannot be changed here."
    if assignment.status != Assignment.Status.SUBMITTED:
        return "Only a submitted HIT's answers can be changed."
    if assignment.hit.status == Hit.Status.CANCELLED:
        return "This HIT was withdrawn; its answers can no longer be changed."
    return None


def judgment_correct(
    *, worker: Worker, assignment_id: int, answers: Mapping[int, Answer]
) -> CorrectResult:
    """Change the worker's own submitted answers for a HIT while none of its labels is complete.

    Locks the assignment row, then the HIT's (non-gold) labels in document order, so
    it serialises with every submit of the same HIT: once another worker's submit
    has given any of these documents its last vote, the majority is final and the
    correction is refused (CorrectionRefused); otherwise the Judgment rows and the
    labels' counters move together (``votes_total`` stays: the place is still
    this worker's). Idempotent: the same answers again change nothing. Another
    worker's assignment is AssignmentNotFound, as a missing one is.
    """
    with transaction.atomic():
        assignment = (
            Assignment.objects.select_for_update(of=("self",))
            .filter(pk=assignment_id, worker=worker)
            .select_related("hit__topic")
            .first()
        )
        if assignment is None:
            raise AssignmentNotFound("This assignment does not exist or is not yours.")
        problem = _correction_problem(assignment=assignment)
        if problem:
            raise CorrectionRefused(problem)
        hit, topic = assignment.hit, assignment.hit.topic
        items = list(HitItem.objects.filter(hit_id=hit.pk).values_list("document_id", "is_gold"))
        new = answers_normalise(topic=topic, answers=answers, expected={doc_id for doc_id, _ in items})
        field_name = _answer_field(topic)
        old = dict(Judgment.objects.filter(assignment=assignment).values_list("document_id", field_name))
        sample_docs = {doc_id for doc_id, is_gold in items if not is_gold}
        changes = {doc_id: (old.get(doc_id), new[doc_id]) for doc_id in sample_docs if old.get(doc_id) != new[doc_id]}
        try:
            # Always locks and checks the labels, even with nothing to change: a repeat after the
            # labels completed says so instead of pretending to have saved.
            labels_votes_change(
                topic=topic,
                changes=changes or {doc_id: (old.get(doc_id), old.get(doc_id)) for doc_id in sample_docs},
                votes_needed=hit.max_assignments,
            )
        except LabelsComplete as exc:
            raise CorrectionRefused(str(exc)) from None
        changed = [doc_id for doc_id, _ in items if old.get(doc_id) != new[doc_id]]
        by_value: dict[Answer, list[int]] = {}
        for doc_id in changed:
            by_value.setdefault(new[doc_id], []).append(doc_id)
        for value, doc_ids in by_value.items():
            Judgment.objects.filter(assignment=assignment, document_id__in=doc_ids).update(**{field_name: value})
        if any(is_gold and doc_id in changed for doc_id, is_gold in items):
            worker_gold_check_for_topic(worker=worker, topic=topic)
        return CorrectResult(assignment_id=assignment.pk, hit_id=hit.pk, changed=len(changed))


def assignment_correctable(*, assignment: Assignment) -> bool:
    """Whether its worker may still change the answers (a read: judgment_correct decides under its locks)."""
    if _correction_problem(assignment=assignment):
        return False
    sample_docs = HitItem.objects.filter(hit_id=assignment.hit_id, is_gold=False).values("document_id")
    return not Label.objects.filter(
        topic_id=assignment.hit.topic_id, document_id__in=sample_docs, votes_total__gte=assignment.hit.max_assignments
    ).exists()


# --------------------------------------------------------------------------- return (skip)


def assignment_release(*, assignment_id: int, worker: Worker, now: datetime | None = None) -> Assignment:
    """Give the HIT back: the slot is free for the next claimer at once; idempotent.

    Locks the assignment row only (the first lock of a submit, so the two cannot
    deadlock) and marks it expired with RELEASED_FEEDBACK: from then on a submit
    of it is AssignmentReleased, and assignment_claim_fresh never offers the HIT
    to this worker again. A submitted assignment cannot be returned (ReleaseRefused);
    another worker's assignment is AssignmentNotFound, as a missing one is.
    """
    now = now or timezone.now()
    with transaction.atomic():
        assignment = Assignment.objects.select_for_update(of=("self",)).filter(pk=assignment_id, worker=worker).first()
        if assignment is None:
            raise AssignmentNotFound("This assignment does not exist or is not yours.")
        if assignment.status in DONE:
            raise ReleaseRefused("This HIT is already submitted; it cannot be returned.")
        if assignment.status == Assignment.Status.EXPIRED and assignment.feedback == RELEASED_FEEDBACK:
            return assignment
        Assignment.objects.filter(pk=assignment.pk).update(
            status=Assignment.Status.EXPIRED, feedback=RELEASED_FEEDBACK, deadline=min(now, assignment.deadline)
        )
        assignment.refresh_from_db()
        return assignment


def assignment_claim_fresh(
    *, worker: Worker, topic: Topic | None = None, now: datetime | None = None
) -> Assignment | None:
    """As assignment_claim (same lock, same resumption), but never a HIT this worker returned.

    The built-in annotator pages claim through this, so "skip" moves on to
    another HIT instead of handing the skipped one straight back.
    """
    return assignment_claim(worker=worker, topic=topic, now=now, skip_returned=True)
