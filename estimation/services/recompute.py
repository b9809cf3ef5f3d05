"""Versioned estimate snapshots, and coalesced recomputes when labels land.

Flow: the crowd code sets a Label and calls `topic_recompute_schedule(topic_id=...)`
inside its transaction.  After commit, one Celery task per burst recomputes the
report and stores an EstimateSnapshot (`topic_snapshot_create`), which is
idempotent: identical inputs never make a new version.

Coalescing (a hundred labels in a second → a few recomputes, not a hundred), and a
bounded rate per topic (issue 30: a recompute per second under load was a third of the
server's CPU):

* within one transaction, a topic is scheduled once (the on_commit list is the
  record, so a rolled-back savepoint forgets its schedule along with its labels);
* after each commit that scheduled a topic, its "labels seen" counter is incremented
  and a "recompute pending" flag per topic is set with SET NX: only the first of a
  burst enqueues the task.  The countdown is short (RECOMPUTE_COUNTDOWN_SECONDS) when
  the topic was not recomputed lately, so a lone label reaches a snapshot within a
  second; otherwise the task waits until the topic's interval has passed since its
  last run: max(MIN_INTERVAL_SECONDS, last run's duration / RECOMPUTE_SHARE), so
  one topic's recomputes take at most RECOMPUTE_SHARE of a core however fast labels
  arrive, and at most one runs per interval;
* the task reads the counter *before* it gathers the inputs, stores the snapshot,
  and only then clears the flag — and only if the counter has not moved (an atomic
  compare-and-delete).  If labels landed meanwhile it keeps the flag and enqueues
  itself once more (after the interval): the last label is always reflected, and a
  worker that dies between the flag and the snapshot leaves the flag set and the
  message unacknowledged (acks_late), so nothing is lost;
* the flag has a TTL (PENDING_TTL_SECONDS) so a lost message cannot block recomputes
  for long; the counter and the flag live in the broker's Redis (the Django cache
  when the broker is not Redis, e.g. in tests);
* with eager Celery (no broker) the task runs in-process after each commit.

The stored snapshot does not depend on when it was computed: it is a function of its
inputs (checksummed; identical inputs never make a new version), so coalescing changes
how many versions are stored, never what a version says.

Redis down: scheduling logs and returns; the label has committed already and is
never affected.  The periodic `snapshots_refresh_stale` sweep (beat, every
minute) recomputes every topic whose judgments or labels moved past its latest
snapshot (snapshots_stale_topic_ids), so nothing is lost for longer than a sweep.
"""
from __future__ import annotations

import logging
import time
from functools import lru_cache
from typing import Any

from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.db.models import Count, F, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce

from annotation.models import Judgment, Label, Topic
from core.events import event_send_on_commit
from estimation.events import ReportUpdated
from estimation.models import EstimateSnapshot
from estimation.selectors import topic_snapshot_latest
from estimation.services.inputs import TopicInputs, topic_inputs_gather
from estimation.services.multiclass_report import (
    MULTICLASS_DRAWS,
    MulticlassInputs,
    multiclass_inputs_gather,
    multiclass_parameters,
    multiclass_report_from_inputs,
)
from estimation.services.reports import (
    DEFAULT_DRAWS,
    DEFAULT_SEED,
    code_version_get,
    report_parameters,
    topic_report_from_inputs,
)

logger = logging.getLogger(__name__)

PENDING_KEY = "estimation:recompute-pending:{topic_id}"
SEEN_KEY = "estimation:recompute-seen:{topic_id}"
LAST_KEY = "estimation:recompute-last:{topic_id}"
PENDING_TTL_SECONDS = 120
# Long enough for a burst of submissions to land, short enough to keep label → snapshot under a second.
RECOMPUTE_COUNTDOWN_SECONDS = 0.25
# While labels keep arriving, a topic is recomputed at most once per interval: at least this many seconds...
MIN_INTERVAL_SECONDS = 2.0
# ...and long enough that its recomputes take at most this share of one core (duration / interval).
RECOMPUTE_SHARE = 0.1
_VERSION_RETRIES = 3


# --------------------------------------------------------------------------- snapshots


def _gather(*, topic: Topic, draws: int | None, seed: int) -> TopicInputs | MulticlassInputs:
    """The topic's typed inputs: a topic set's (seed 002, estimation/services/multiclass_report.py) or a pair's."""
    if topic.is_multiclass:
        return multiclass_inputs_gather(
            topic=topic, parameters=multiclass_parameters(draws=draws or MULTICLASS_DRAWS, seed=seed),
            code_version=code_version_get())
    return topic_inputs_gather(topic=topic, parameters=report_parameters(draws=draws or DEFAULT_DRAWS, seed=seed),
                               code_version=code_version_get())


def _report(inputs: TopicInputs | MulticlassInputs) -> dict[str, Any]:
    if isinstance(inputs, MulticlassInputs):
        return multiclass_report_from_inputs(inputs=inputs)
    return topic_report_from_inputs(inputs=inputs)


def topic_snapshot_create(*, topic_id: int, draws: int | None = None, seed: int = DEFAULT_SEED) -> EstimateSnapshot:
    """Store the topic's current report as the next snapshot version, unless its inputs are unchanged.

    A topic set (topic.is_multiclass) gets the report of estimation/services/multiclass_report.py
    (``report["kind"] == "multiclass"``); draws default per kind (DEFAULT_DRAWS, MULTICLASS_DRAWS).

    The report is computed outside any lock; then, under a short select_for_update
    of the topic row, the inputs are read again (cheap) and compared.  So versions
    only ever move forward in time: a recompute that started earlier can never
    store older inputs over a newer snapshot.  Raises Topic.DoesNotExist.
    """
    topic = Topic.objects.select_related("corpus").get(pk=topic_id)
    inputs = _gather(topic=topic, draws=draws, seed=seed)
    checksum = inputs.checksum()
    latest = topic_snapshot_latest(topic=topic_id)
    if latest is not None and latest.inputs_checksum == checksum:
        return latest
    report = _report(inputs)

    for attempt in range(_VERSION_RETRIES):
        try:
            with transaction.atomic():
                # FOR NO KEY UPDATE of the topic row only: it serialises snapshot versions without blocking the
                # foreign-key checks of judgments being inserted for the topic (nor the corpus row).
                topic = Topic.objects.select_for_update(no_key=True, of=("self",)).select_related("corpus").get(
                    pk=topic_id)
                current = _gather(topic=topic, draws=draws, seed=seed)
                current_checksum = current.checksum()
                latest = topic_snapshot_latest(topic=topic_id)
                if latest is not None and latest.inputs_checksum == current_checksum:
                    return latest
                if current_checksum != checksum:
                    # Labels landed meanwhile: compute on what is committed now (rare; inside the lock).
                    inputs, checksum = current, current_checksum
                    report = _report(inputs)
                snapshot = EstimateSnapshot.objects.create(
                    topic=topic,
                    version=(latest.version + 1) if latest else 1,
                    code_version=inputs.code_version,
                    aggregator=inputs.aggregator,
                    inputs=inputs.as_dict(),
                    inputs_checksum=checksum,
                    report=report,
                    judgments=inputs.judgments,
                )
                # Announced after commit (webhooks: report.updated); a rollback forgets it.
                event_send_on_commit(event=ReportUpdated(
                    topic_id=topic_id, snapshot_id=snapshot.pk, version=snapshot.version))
                return snapshot
        except IntegrityError:
            # Only without row locks (SQLite): another writer took this version number.
            if attempt == _VERSION_RETRIES - 1:
                raise
    raise AssertionError("unreachable")


def topic_snapshot_latest_or_create(*, topic: Topic) -> EstimateSnapshot:
    """The topic's latest snapshot; a topic that has none gets its first one computed now (a write)."""
    snapshot = topic_snapshot_latest(topic=topic)
    return snapshot if snapshot is not None else topic_snapshot_create(topic_id=topic.pk)


def topic_recompute_run(*, topic_id: int) -> int | None:
    """The body of the recompute task: snapshot, then clear the pending flag if no label landed meanwhile.

    Returns the version stored (or found unchanged).  Safe to run twice: identical inputs make no new
    version.  Labels seen after the counter was read make it enqueue one more run (after the topic's
    interval) instead of clearing the flag.
    """
    seen = _seen_get(topic_id)
    started = time.time()
    try:
        version = topic_snapshot_create(topic_id=topic_id).version
    except Topic.DoesNotExist:
        logger.info("recompute skipped: topic %s no longer exists", topic_id)
        _pending_clear(topic_id)
        return None
    duration = time.time() - started
    _last_set(topic_id, started=started, duration=duration)
    if not _pending_clear_if_unchanged(topic_id, seen):
        # Labels landed after `seen` was read: the flag stays set (so they enqueue nothing) and this
        # run asks for the next one, after the interval.
        _send(topic_id, countdown=max(RECOMPUTE_COUNTDOWN_SECONDS, _interval(duration) - duration))
    return version


def snapshots_stale_topic_ids() -> list[int]:
    """Topics whose latest snapshot is behind the database.

    Stale when the topic has judgments but no snapshot, when its number of
    judgments differs from the latest snapshot's (every new judgment — and so
    every completed label — changes it; the count is part of the inputs, so the
    refresh always makes a new version and the topic stops being stale), or
    when a counting label (majority set, or a gold answer: a judged document made gold
    keeps its sample place with the known answer) was saved after the snapshot.
    """
    judgments = (
        Judgment.objects.filter(topic=OuterRef("pk")).order_by().values("topic").annotate(n=Count("id")).values("n")
    )
    labels = Label.objects.filter(Q(majority__isnull=False) | Q(gold__isnull=False) | Q(majority_class__isnull=False)
                                  | Q(gold_class__isnull=False), topic=OuterRef("pk"))
    latest = EstimateSnapshot.objects.filter(topic=OuterRef("pk")).order_by("-version")
    return list(
        Topic.objects.annotate(
            n_judgments=Coalesce(Subquery(judgments[:1]), 0),
            last_label=Subquery(labels.order_by("-updated_at").values("updated_at")[:1]),
            snapshot_judgments=Subquery(latest.values("judgments")[:1]),
            snapshot_at=Subquery(latest.values("created_at")[:1]),
        )
        .filter(Q(n_judgments__gt=0) | Q(last_label__isnull=False))
        .filter(
            Q(snapshot_at__isnull=True)
            | ~Q(n_judgments=F("snapshot_judgments"))
            | Q(last_label__gt=F("snapshot_at"))
        )
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def snapshots_refresh_stale() -> list[int]:
    """Recompute every stale topic (see snapshots_stale_topic_ids); returns the topics refreshed.

    A label re-saved with unchanged values leaves its topic "stale" by time but
    produces no new version; it is recomputed once per sweep until the next
    snapshot — cheap, and only for such topics.
    """
    refreshed = []
    for topic_id in snapshots_stale_topic_ids():
        try:
            topic_snapshot_create(topic_id=topic_id)
        except Topic.DoesNotExist:
            continue
        except Exception:  # one broken topic must not stop the sweep
            logger.exception("stale snapshot refresh failed for topic %s", topic_id)
            continue
        refreshed.append(topic_id)
    return refreshed


# --------------------------------------------------------------------------- scheduling


class _RecomputeOnCommit:
    """The on_commit callback; carries its topic id so a transaction schedules a topic once."""

    def __init__(self, topic_id: int):
        self.recompute_topic_id = topic_id

    def __call__(self) -> None:
        recompute_enqueue(topic_id=self.recompute_topic_id)


def topic_recompute_schedule(*, topic_id: int) -> None:
    """Ask for a recompute of `topic_id` once the current transaction commits.

    Called by the crowd code inside the transaction that sets a label.  Never
    raises because of the broker: the label must commit whatever Redis does.
    """
    connection = transaction.get_connection()
    if connection.in_atomic_block:
        for _savepoints, callback, *_rest in connection.run_on_commit:
            if getattr(callback, "recompute_topic_id", None) == topic_id:
                return  # already scheduled by this transaction
    transaction.on_commit(_RecomputeOnCommit(topic_id), robust=True)


def recompute_enqueue(*, topic_id: int) -> bool:
    """Enqueue the recompute task unless one is already pending; True when a task was sent (or run eagerly)."""
    from estimation.tasks import topic_recompute_task  # noqa: PLC0415 — a task module imports this service

    app = topic_recompute_task.app
    if app.conf.task_always_eager:
        try:
            topic_recompute_task.apply(kwargs={"topic_id": topic_id})
        except Exception:  # the commit happened; the sweep will retry
            logger.exception("eager recompute of topic %s failed", topic_id)
        return True
    try:
        if not _seen_and_pending_set(topic_id):
            return False  # a queued (or running) task will read this label, or run once more for it
        countdown = _countdown(topic_id)
    except Exception:  # Redis down: the sweep picks the topic up
        logger.warning("recompute of topic %s not scheduled: flag store unavailable", topic_id, exc_info=True)
        return False
    if not _send(topic_id, countdown=countdown):
        try:
            _pending_clear(topic_id)
        except Exception:  # noqa: BLE001
            pass
        return False
    return True


def _send(topic_id: int, *, countdown: float) -> bool:
    from estimation.tasks import topic_recompute_task  # noqa: PLC0415 — a task module imports this service

    try:
        topic_recompute_task.apply_async(kwargs={"topic_id": topic_id}, countdown=countdown, retry=False)
    except Exception:  # broker down: the sweep picks the topic up
        logger.warning("recompute of topic %s not enqueued: broker unavailable", topic_id, exc_info=True)
        return False
    return True


def _interval(duration: float) -> float:
    """Seconds between two runs for one topic whose last recompute took `duration` seconds."""
    return max(MIN_INTERVAL_SECONDS, duration / RECOMPUTE_SHARE)


def _countdown(topic_id: int) -> float:
    """Short after a quiet spell (a lone label is in a snapshot within a second); else wait out the interval."""
    last = _last_get(topic_id)
    if last is None:
        return RECOMPUTE_COUNTDOWN_SECONDS
    started, duration = last
    return max(RECOMPUTE_COUNTDOWN_SECONDS, started + _interval(duration) - time.time())


@lru_cache(maxsize=4)
def _redis_client(url: str):
    import redis  # noqa: PLC0415 — optional: only when the broker is Redis

    # Short timeouts: this runs right after a label commit, inside a web request.
    return redis.Redis.from_url(url, socket_timeout=0.5, socket_connect_timeout=0.5)


def _flag_store() -> Any:
    from estimation.tasks import topic_recompute_task  # noqa: PLC0415 — a task module imports this service

    url = str(topic_recompute_task.app.conf.broker_url or "")
    if url.startswith(("redis://", "rediss://")):
        return _redis_client(url)
    return None


def _keys(topic_id: int) -> tuple[str, str, str]:
    return (PENDING_KEY.format(topic_id=topic_id), SEEN_KEY.format(topic_id=topic_id),
            LAST_KEY.format(topic_id=topic_id))


# Clear the pending flag only if the counter still holds what the run read before gathering its inputs;
# else hold it anew (full TTL: a long burst must not let it expire and start a second chain of runs).
_CLEAR_IF_UNCHANGED = """
local seen = redis.call('GET', KEYS[2]) or '0'
if seen == ARGV[1] then redis.call('DEL', KEYS[1]) return 1 end
redis.call('SET', KEYS[1], '1', 'EX', ARGV[2])
return 0
"""


def _seen_and_pending_set(topic_id: int) -> bool:
    """Count this commit's labels as seen, then try to take the pending flag; True when this call took it."""
    pending, seen, _last = _keys(topic_id)
    client = _flag_store()
    if client is None:
        cache.add(seen, 0, timeout=None)
        cache.incr(seen)
        return bool(cache.add(pending, 1, timeout=PENDING_TTL_SECONDS))
    pipe = client.pipeline(transaction=True)
    pipe.incr(seen)
    pipe.expire(seen, 24 * 3600)
    pipe.set(pending, b"1", nx=True, ex=PENDING_TTL_SECONDS)
    return bool(pipe.execute()[2])


def _seen_get(topic_id: int) -> str:
    _pending, seen, _last = _keys(topic_id)
    try:
        client = _flag_store()
        value = cache.get(seen) if client is None else client.get(seen)
    except Exception:  # the flag store is down: the run compares against nothing and runs again
        logger.warning("could not read the recompute counter of topic %s", topic_id, exc_info=True)
        return "unknown"
    if value is None:
        return "0"
    return value.decode() if isinstance(value, bytes) else str(value)


def _pending_clear_if_unchanged(topic_id: int, seen: str) -> bool:
    """Clear the flag if no label was seen since `seen` was read; False when one was (or the store is down)."""
    pending, seen_key, _last = _keys(topic_id)
    try:
        client = _flag_store()
        if client is None:
            now = cache.get(seen_key)
            if str(now if now is not None else 0) != seen:
                cache.set(pending, 1, timeout=PENDING_TTL_SECONDS)
                return False
            cache.delete(pending)
            return True
        return bool(client.eval(_CLEAR_IF_UNCHANGED, 2, pending, seen_key, seen, PENDING_TTL_SECONDS))
    except Exception:  # a stuck flag expires after PENDING_TTL_SECONDS; the sweep covers the rest
        logger.warning("could not clear the recompute flag of topic %s", topic_id, exc_info=True)
        return True


def _last_set(topic_id: int, *, started: float, duration: float) -> None:
    _pending, _seen, last = _keys(topic_id)
    value = f"{started:.3f} {duration:.3f}"
    try:
        client = _flag_store()
        if client is None:
            cache.set(last, value, timeout=3600)
        else:
            client.set(last, value.encode(), ex=3600)
    except Exception:  # only the rate limit is lost
        logger.warning("could not record the recompute time of topic %s", topic_id, exc_info=True)


def _last_get(topic_id: int) -> tuple[float, float] | None:
    _pending, _seen, last = _keys(topic_id)
    client = _flag_store()
    value = cache.get(last) if client is None else client.get(last)
    if value is None:
        return None
    text = value.decode() if isinstance(value, bytes) else str(value)
    started, duration = text.split()
    return float(started), float(duration)


def _pending_clear(topic_id: int) -> None:
    pending, _seen, _last = _keys(topic_id)
    try:
        client = _flag_store()
        if client is None:
            cache.delete(pending)
        else:
            client.delete(pending)
    except Exception:  # a stuck flag expires after PENDING_TTL_SECONDS
        logger.warning("could not clear the recompute flag of topic %s", topic_id, exc_info=True)
