"""Faults on the production-like stack, real processes on loopback (issue 15).

(a) the Celery worker SIGKILLed while a recompute is in flight; (b) Redis stopped while annotators
submit; (c) database connections dropped (pg_terminate_backend) during page views and during an
import; (d) gunicorn restarted (SIGHUP) under concurrent submits. Each ends with the database
invariants: no duplicate judgment, at most three per document, every acknowledged submit stored.

The module's stack uses a private `redis-server --save ''` (test (b) stops and restarts it), so
nothing queued survives a Redis restart: what was lost must be repaired by the beat sweeps.
"""
from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable

import psycopg
import pytest

from tests.e2e.conftest import (
    AnnotatorRun,
    Client,
    Corpus,
    PrivateRedis,
    Stack,
    annotate,
    annotator_session,
    corpus_prepare,
    corpus_upload,
    corpus_write,
    judgment_invariants,
    judgments_stored,
    postgres_admin_url,
    report_catches_up,
    report_judgments,
    running_stack,
    topic_create,
    topic_launch,
    upload_wait,
    wait_for,
)

ANNOTATORS = [f"crowd{i}" for i in range(1, 9)]
USERS = {"ana": "analyst", "manny": "manager", **dict.fromkeys(ANNOTATORS, "annotator")}
# The beat sweep (refresh-stale-snapshots) runs every 60 s: a report repaired by it needs up to a minute.
SWEEP_WAIT = 130
TIMINGS: dict[str, dict[str, object]] = {}


@pytest.fixture(scope="module")
def private_redis(tmp_path_factory):
    postgres_admin_url()  # skip (or fail under REQUIRE_POSTGRES=1) before starting anything
    server = PrivateRedis(tmp_path_factory.mktemp("redis"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def stack(private_redis):
    with running_stack(redis_url=private_redis.url + "/0", users=USERS) as running:
        yield running
    print(f"\ne2e fault timings (s): {TIMINGS}")


@pytest.fixture(scope="module")
def analyst(stack):
    client = Client(stack, retries=3)
    client.login("ana")
    return client


@pytest.fixture(scope="module")
def manager(stack):
    client = Client(stack, retries=3)
    client.login("manny")
    return client


@pytest.fixture(scope="module")
def corpus(stack, analyst, tmp_path_factory) -> Corpus:
    return corpus_prepare(stack, analyst, tmp_path_factory.mktemp("corpus"))


_topics = iter(range(1, 100))


def new_topic(stack: Stack, analyst: Client, corpus: Corpus, *, half_width: float = 0.2, hit_size: int = 5) -> int:
    topic_id = topic_create(analyst, corpus_id=corpus.id, name=f"Coffee fault {next(_topics)}", c1=corpus.c1,
                            c2=corpus.c2, hit_size=hit_size)
    topic_launch(analyst, stack, topic_id=topic_id, half_width=half_width)
    return topic_id


def crowd(stack: Stack, corpus: Corpus, names: list[str], *, retries: int = 0, pause: float = 0.0,
          stop: Callable[[], bool] = lambda: False, limit: int | None = None,
          ) -> tuple[list[threading.Thread], list[AnnotatorRun]]:
    runs = [AnnotatorRun() for _ in names]
    sessions = [annotator_session(stack, name, retries=retries) for name in names]
    threads = [threading.Thread(target=_annotate_logged, args=(session, corpus, run, pause, stop, limit),
                                daemon=True)
               for session, run in zip(sessions, runs)]
    for thread in threads:
        thread.start()
    return threads, runs


def _annotate_logged(client: Client, corpus: Corpus, run: AnnotatorRun, pause: float, stop, limit) -> None:
    try:
        annotate(client, corpus.truth.__getitem__, run, pause=pause, stop=stop, limit=limit)
    except Exception as exc:  # noqa: BLE001 - reported by the test as a failure of this annotator
        run.failures.append(f"{type(exc).__name__}: {exc}")


def join(threads: list[threading.Thread], timeout: float = 240) -> None:
    deadline = time.monotonic() + timeout
    for thread in threads:
        thread.join(max(0.1, deadline - time.monotonic()))
    assert not any(thread.is_alive() for thread in threads), "annotators still running"


def test_worker_sigkill_mid_recompute_is_repaired(stack, analyst, manager, corpus):
    started = time.monotonic()
    topic_id = new_topic(stack, analyst, corpus)
    threads, runs = crowd(stack, corpus, ANNOTATORS[:3], limit=2)  # part of the sample: labels left to complete
    join(threads)
    assert all(not run.failures for run in runs), [run.failures for run in runs]
    report_catches_up(manager, stack, topic_id, timeout=SWEEP_WAIT)
    versions_before = stack.sql("SELECT max(version) FROM estimation_estimatesnapshot WHERE topic_id = %s",
                                (topic_id,))[0][0]

    # Hold the topic row (FOR NO KEY UPDATE: submits' foreign-key checks pass): a recompute computes the
    # report, then waits for the row lock it stores the snapshot under — in flight, for sure.
    with psycopg.connect(stack.database_url.replace("postgres://", "postgresql://", 1)) as blocker:
        blocker.execute("SELECT id FROM annotation_topic WHERE id = %s FOR NO KEY UPDATE", (topic_id,))
        threads, runs2 = crowd(stack, corpus, ANNOTATORS[3:6])
        join(threads)
        assert all(not run.failures for run in runs2), [run.failures for run in runs2]
        waiting = wait_for(lambda: stack.sql(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s AND wait_event_type = 'Lock' "
            "AND query ILIKE %s", (stack.database, "%FROM \"annotation_topic\"%FOR %UPDATE%")),
            "a recompute blocked on the topic row it stores its snapshot under", timeout=60)
        assert waiting
        stack.stop("worker", sig=signal.SIGKILL)  # main process and pool child, mid-task
        blocker.rollback()
    stored = judgments_stored(stack, topic_id)
    assert report_judgments(manager, topic_id) != stored, "the killed recompute stored nothing"
    stack.mark_log("worker")
    stack.start("worker")
    TIMINGS["a_sigkill"] = {"catch_up_after_restart": report_catches_up(manager, stack, topic_id, timeout=SWEEP_WAIT)}
    versions_after = stack.sql("SELECT max(version) FROM estimation_estimatesnapshot WHERE topic_id = %s",
                               (topic_id,))[0][0]
    assert versions_after > versions_before
    judgment_invariants(stack, runs + runs2)
    TIMINGS["a_sigkill"]["total"] = round(time.monotonic() - started, 1)


def test_redis_stopped_while_annotators_submit(stack, analyst, manager, corpus, private_redis):
    started = time.monotonic()
    topic_id = new_topic(stack, analyst, corpus)
    threads, runs = crowd(stack, corpus, ANNOTATORS[:4], pause=0.05)
    wait_for(lambda: sum(len(run.acknowledged) for run in runs) >= 4, "a few submits before the outage", timeout=60)
    private_redis.stop()
    try:
        acknowledged_at_stop = sum(len(run.acknowledged) for run in runs)
        join(threads)
        assert all(not run.failures for run in runs), [run.failures for run in runs]
        during = sum(len(run.acknowledged) for run in runs) - acknowledged_at_stop
        assert during > 0, "annotators submitted while Redis was down"
        judgment_invariants(stack, runs)  # nothing acknowledged was lost while the broker was away
    finally:  # the module's later tests need the broker whatever happened here
        private_redis.start()
    TIMINGS["b_redis"] = {"submits_during_outage": during,
                          "catch_up_after_restart": report_catches_up(manager, stack, topic_id, timeout=SWEEP_WAIT)}
    judgment_invariants(stack, runs)
    TIMINGS["b_redis"]["total"] = round(time.monotonic() - started, 1)


def test_database_connections_dropped_during_page_views(stack, analyst, manager, corpus):
    started = time.monotonic()
    # Not launched: its HITs would join the queue of the next test's annotators.
    topic_id = topic_create(analyst, corpus_id=corpus.id, name="Coffee pages", c1=corpus.c1, c2=corpus.c2,
                            hit_size=5)
    pages = ["/analyst/", f"/analyst/topics/{topic_id}/", f"/analyst/corpora/{corpus.id}/", "/analyst/corpora/"]
    # One page after each drop, from each gunicorn worker's point of view: a stale connection must be replaced.
    first_after_drop: list[int] = []
    for _ in range(4):
        assert stack.terminate_backends() >= 0
        for page in pages:
            first_after_drop.append(analyst.get(page).status_code)
    assert set(first_after_drop) == {200}, first_after_drop

    # Concurrent readers while connections drop every second and a half: a request whose connection dies
    # under it (in flight: CONN_HEALTH_CHECKS checks only at a request's start) may fail; retried, it succeeds.
    stop = threading.Event()
    outcomes: list[tuple[int, int]] = []

    def reader(client: Client) -> None:
        i = 0
        while not stop.is_set():
            page = pages[i % len(pages)]
            first = status = client.get(page).status_code
            for _ in range(3):
                if status < 500:
                    break
                time.sleep(0.3)
                status = client.get(page).status_code
            outcomes.append((first, status))
            i += 1

    readers = [Client(stack, retries=3) for _ in range(3)]
    for client in readers:
        client.login("ana")
    threads = [threading.Thread(target=reader, args=(client,), daemon=True) for client in readers]
    for thread in threads:
        thread.start()
    drops = 0
    for _ in range(5):
        time.sleep(1.5)
        drops += stack.terminate_backends()
    stop.set()
    for thread in threads:
        thread.join(60)
    first_failures = sum(1 for first, _ in outcomes if first >= 500)
    assert all(retry == 200 for _, retry in outcomes), [o for o in outcomes if o != (200, 200)]
    assert first_failures <= drops
    TIMINGS["c_pages"] = {"requests": len(outcomes), "backends_terminated": drops, "5xx_then_retried": first_failures,
                          "total": round(time.monotonic() - started, 1)}


def test_database_connections_dropped_during_an_import(stack, analyst, tmp_path):
    started = time.monotonic()
    path, _ = corpus_write(tmp_path, documents=20000, seed=16, prevalence=0.05)
    upload_id = corpus_upload(analyst, path, name="e2e import under drops")
    wait_for(lambda: stack.sql("SELECT status FROM annotation_corpusupload WHERE id = %s",
                               (upload_id,))[0][0] != "pending", "the import to start", timeout=60, interval=0.1)
    drops = 0
    for _ in range(3):
        drops += stack.terminate_backends()
        time.sleep(0.3)
    state = upload_wait(analyst, upload_id, timeout=180)
    assert state["status"] in ("done", "failed"), state
    if state["status"] == "failed":
        assert state["error_problem"], state  # a reason, never a silent failure
    else:
        n = stack.sql("SELECT count(*) FROM annotation_document WHERE corpus_id = %s", (state["corpus_id"],))[0][0]
        assert n == 20000
    TIMINGS["c_import"] = {"backends_terminated": drops, "outcome": state["status"], "reason": state["error_problem"],
                           "total": round(time.monotonic() - started, 1)}
    # The import's COPY runs on the raw psycopg connection; its errors are wrapped into Django's, so a dropped
    # connection is an OperationalError the task retries, never an "unexpected error" that fails the upload.
    assert "unexpected error" not in (state["error_problem"] or ""), state


def test_gunicorn_restart_under_concurrent_submits(stack, analyst, manager, corpus):
    started = time.monotonic()
    topic_id = new_topic(stack, analyst, corpus, half_width=0.15, hit_size=2)
    threads, runs = crowd(stack, corpus, ANNOTATORS, retries=5)
    wait_for(lambda: sum(len(run.acknowledged) for run in runs) >= 8, "submits before the restart", timeout=60)
    stack.signal("web", signal.SIGHUP)  # gunicorn reloads: new workers, old ones finish their requests
    time.sleep(2)
    stack.signal("web", signal.SIGHUP)
    join(threads)
    # Any 5xx, or a connection error past the client's retries, is a failure of its annotator.
    assert all(not run.failures for run in runs), [run.failures for run in runs]
    judgment_invariants(stack, runs)
    sampled = stack.sql("SELECT count(*) FROM annotation_sampleddocument WHERE topic_id = %s", (topic_id,))[0][0]
    assert judgments_stored(stack, topic_id) == 3 * sampled
    TIMINGS["d_sighup"] = {"submits": sum(run.submits for run in runs),
                           "catch_up": report_catches_up(manager, stack, topic_id, timeout=SWEEP_WAIT),
                           "total": round(time.monotonic() - started, 1)}
