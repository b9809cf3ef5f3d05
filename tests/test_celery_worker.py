"""A real Celery worker against Redis: label commits reach the worker and become snapshots.

Runs when REDIS_URL is set (the PostgreSQL CI run sets redis://127.0.0.1:6379/15);
skipped otherwise — except that with REQUIRE_POSTGRES=1 a missing or unreachable
Redis is a failure, so CI never reports this check as passing without running it.
"""
from __future__ import annotations

import os
import time

import pytest
from django.db import transaction

from annotation.models import Region, SampledDocument, SampleDraw
from config.celery import app as celery_app
from estimation.models import EstimateSnapshot
from estimation.services import recompute
from estimation.services.reports import topic_report_build
from tests.factories import build_topic, make_label

WAIT_SECONDS = 30


@pytest.fixture
def redis_url() -> str:
    import redis

    url = os.environ.get("REDIS_URL", "")
    required = os.environ.get("REQUIRE_POSTGRES") == "1"
    if not url:
        if required:
            pytest.fail("REQUIRE_POSTGRES=1 but REDIS_URL is not set: the real-worker test cannot run")
        pytest.skip("REDIS_URL is not set (no broker for a real worker)")
    try:
        redis.Redis.from_url(url, socket_connect_timeout=2).ping()
    except redis.RedisError as exc:
        if required:
            pytest.fail(f"REQUIRE_POSTGRES=1 but Redis at {url} is unreachable: {exc}")
        pytest.skip(f"Redis at {url} is unreachable: {exc}")
    return url


@pytest.fixture
def worker(redis_url, monkeypatch):
    """Tasks go through Redis (eager off) to a worker thread in this process."""
    import redis
    from celery.contrib.testing.worker import start_worker

    monkeypatch.setitem(celery_app.conf, "CELERY_TASK_ALWAYS_EAGER", False)
    monkeypatch.setitem(celery_app.conf, "CELERY_BROKER_URL", redis_url)
    # Pending flags, label counters and last-run times left by an earlier run (topic ids restart with each test
    # database) would hold schedules back: the coalescing interval of issue 30 reads the last run's time.
    client = redis.Redis.from_url(redis_url)
    for pattern in (recompute.PENDING_KEY, recompute.SEEN_KEY, recompute.LAST_KEY):
        for key in client.scan_iter(match=pattern.format(topic_id="*")):
            client.delete(key)
    from celery._state import _set_task_join_will_block, task_join_will_block

    joins_blocked = task_join_will_block()
    try:
        with start_worker(celery_app, pool="solo", concurrency=1, perform_ping_check=False, shutdown_timeout=20,
                          loglevel="WARNING"):
            yield
    finally:
        # Starting a worker marks this process as one (result.get() then refuses to block); the tests after this
        # one are not in a worker, so the flag is put back as it was.
        _set_task_join_will_block(joins_blocked)


def _wait_for(predicate, what: str):
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    pytest.fail(f"timed out after {WAIT_SECONDS}s waiting for {what}")


def _add_label(built, position: int, relevant: bool) -> None:
    draw = SampleDraw.objects.filter(topic=built.topic, region=Region.B2).first()
    assert draw is not None  # build_topic draws region B2
    SampledDocument.objects.create(draw=draw, topic=built.topic, document_id=built.docs[position], region=Region.B2,
                                   inclusion_probability=0.5)
    make_label(built.topic, built.docs[position], relevant=relevant)


def _without_time(report: dict) -> dict:
    return {k: v for k, v in report.items() if k != "generated_at"}


# One test, one worker: a second worker started in the same process does not run ETA
# (countdown) tasks — its timer is left stopped by the first one's shutdown.
@pytest.mark.django_db(transaction=True)
def test_label_commits_reach_a_real_worker_through_redis_and_bursts_coalesce(worker):
    built = build_topic()
    topic = built.topic
    with transaction.atomic():
        _add_label(built, 40, relevant=True)
        recompute.topic_recompute_schedule(topic_id=topic.pk)
        assert not EstimateSnapshot.objects.filter(topic=topic).exists()
    _wait_for(lambda: EstimateSnapshot.objects.filter(topic=topic).exists(), "the first snapshot")
    snapshot = EstimateSnapshot.objects.get(topic=topic)
    assert snapshot.version == 1
    assert _without_time(snapshot.report) == _without_time(topic_report_build(topic=topic))

    for position in range(41, 45):  # four commits within well under a second
        with transaction.atomic():
            _add_label(built, position, relevant=position % 2 == 0)
            recompute.topic_recompute_schedule(topic_id=topic.pk)
    fresh = topic_report_build(topic=topic)

    def settled():
        latest = EstimateSnapshot.objects.filter(topic=topic).order_by("-version").first()
        return latest.report["judged_documents"] == fresh["judged_documents"]

    _wait_for(settled, "a snapshot holding all the labels")
    time.sleep(1.5)  # let any follow-up run finish
    versions = list(EstimateSnapshot.objects.filter(topic=topic).order_by("version").values_list("version", flat=True))
    # One run per burst, plus at most one more if a label landed while it ran — never one per label.
    assert versions in ([1, 2], [1, 2, 3]), versions
    latest = EstimateSnapshot.objects.filter(topic=topic).order_by("-version").first()
    assert _without_time(latest.report) == _without_time(fresh)
