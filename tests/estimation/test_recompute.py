"""Snapshots (versioned, idempotent, equal to a recompute from scratch) and coalesced scheduling."""
from __future__ import annotations

from unittest import mock

import pytest
from django.db import transaction

from annotation.models import Label, Region, SampleDraw
from config.celery import app as celery_app
from estimation.models import EstimateSnapshot
from estimation.selectors import topic_report_latest
from estimation.services import recompute
from estimation.services.inputs import inputs_checksum, topic_inputs_gather
from estimation.services.reports import code_version_get, report_parameters, topic_report_build
from estimation.tasks import snapshots_refresh_stale_task, topic_recompute_task
from tests.factories import build_topic, make_draw, make_label

DRAWS = 1_000


def _without_time(report: dict) -> dict:
    return {k: v for k, v in report.items() if k != "generated_at"}


def _snapshots(topic):
    return list(EstimateSnapshot.objects.filter(topic=topic).order_by("version"))


@pytest.fixture
def small_draws(monkeypatch):
    """Every snapshot in these tests uses few draws, so they run fast."""
    original = recompute.topic_snapshot_create

    def create(*, topic_id, draws=DRAWS, seed=recompute.DEFAULT_SEED):
        return original(topic_id=topic_id, draws=draws, seed=seed)

    monkeypatch.setattr(recompute, "topic_snapshot_create", create)
    return original


@pytest.fixture
def broker_not_eager(monkeypatch, settings):
    """Celery as in production (not eager) with the in-memory broker; the pending flag lives in the cache."""
    from django.core.cache import cache

    monkeypatch.setitem(celery_app.conf, "CELERY_TASK_ALWAYS_EAGER", False)
    monkeypatch.setitem(celery_app.conf, "CELERY_BROKER_URL", "memory://")
    cache.clear()
    sent = []
    monkeypatch.setattr(topic_recompute_task, "apply_async", lambda *a, **kw: sent.append(kw))
    return sent


# --------------------------------------------------------------------------- snapshots


@pytest.mark.django_db
def test_snapshot_versions_and_idempotence():
    built = build_topic()
    first = recompute.topic_snapshot_create(topic_id=built.topic.pk, draws=DRAWS)
    again = recompute.topic_snapshot_create(topic_id=built.topic.pk, draws=DRAWS)
    assert first.version == 1 and again.pk == first.pk
    assert EstimateSnapshot.objects.filter(topic=built.topic).count() == 1

    make_draw(built.topic, SampleDraw.Purpose.PAIR, Region.B2, [40], built.docs)
    make_label(built.topic, built.docs[40], relevant=True)
    second = recompute.topic_snapshot_create(topic_id=built.topic.pk, draws=DRAWS)
    assert second.version == 2 and second.inputs_checksum != first.inputs_checksum
    regions = {r["name"]: r for r in second.report["regions"]}
    assert (regions["B2"]["judged"], regions["B2"]["relevant"]) == (8, 4.0)


@pytest.mark.django_db
def test_snapshot_records_inputs_checksum_code_version_and_equals_a_fresh_report():
    built = build_topic()
    snapshot = recompute.topic_snapshot_create(topic_id=built.topic.pk, draws=DRAWS, seed=11)
    inputs = topic_inputs_gather(topic=built.topic, parameters=report_parameters(draws=DRAWS, seed=11),
                                 code_version=code_version_get())
    assert snapshot.inputs == inputs.as_dict()
    assert snapshot.inputs_checksum == inputs.checksum()
    snapshot.refresh_from_db()  # the stored JSON gives back the same checksum
    assert inputs_checksum(inputs=snapshot.inputs) == snapshot.inputs_checksum
    assert snapshot.code_version == code_version_get() == snapshot.report["code_version"]
    assert snapshot.aggregator == "majority"
    assert snapshot.inputs["samples"]["A12"]["document_ids"] == [built.docs[p] for p in range(20, 26)]
    assert snapshot.inputs["samples"]["A12"]["labels"] == [1.0] * 5 + [0.0]
    fresh = topic_report_build(topic=built.topic, draws=DRAWS, seed=11)
    assert _without_time(snapshot.report) == _without_time(fresh)

    latest = topic_report_latest(topic=built.topic)
    assert latest["snapshot"]["version"] == 1
    assert _without_time({k: v for k, v in latest.items() if k != "snapshot"}) == _without_time(fresh)


@pytest.mark.django_db
def test_code_version_comes_from_the_environment_first(monkeypatch):
    monkeypatch.setenv("APP_CODE_VERSION", "v1.2.3-test")
    code_version_get.cache_clear()
    try:
        assert code_version_get() == "v1.2.3-test"
        built = build_topic(with_labels=False)
        snapshot = recompute.topic_snapshot_create(topic_id=built.topic.pk, draws=DRAWS)
        assert snapshot.code_version == "v1.2.3-test"
    finally:
        code_version_get.cache_clear()


@pytest.mark.django_db
def test_labels_landing_during_a_recompute_are_in_the_stored_snapshot(monkeypatch):
    """The report is computed outside the lock; inputs that moved meanwhile are re-read under it."""
    built = build_topic()
    original = recompute.topic_report_from_inputs
    calls = []

    def slow_report(*, inputs):
        calls.append(inputs.checksum())
        if len(calls) == 1:  # a label commits while the first report is being computed
            make_draw(built.topic, SampleDraw.Purpose.PAIR, Region.B2, [41], built.docs)
            make_label(built.topic, built.docs[41], relevant=False)
        return original(inputs=inputs)

    monkeypatch.setattr(recompute, "topic_report_from_inputs", slow_report)
    snapshot = recompute.topic_snapshot_create(topic_id=built.topic.pk, draws=DRAWS)
    assert len(calls) == 2
    assert snapshot.version == 1
    assert {r["name"]: r["judged"] for r in snapshot.report["regions"]}["B2"] == 8
    fresh = topic_inputs_gather(topic=built.topic, parameters=report_parameters(draws=DRAWS),
                                code_version=code_version_get())
    assert snapshot.inputs_checksum == fresh.checksum()


@pytest.mark.django_db
def test_recompute_of_a_deleted_topic_is_a_no_op():
    assert recompute.topic_recompute_run(topic_id=987654) is None


# --------------------------------------------------------------------------- scheduling (eager)


@pytest.mark.django_db(transaction=True)
def test_a_hundred_schedules_in_one_transaction_make_one_recompute(small_draws):
    built = build_topic()
    with mock.patch.object(recompute, "topic_snapshot_create", wraps=recompute.topic_snapshot_create) as create:
        with transaction.atomic():
            for _ in range(100):
                recompute.topic_recompute_schedule(topic_id=built.topic.pk)
            assert create.call_count == 0  # nothing before the commit
        assert create.call_count == 1
    assert [s.version for s in _snapshots(built.topic)] == [1]


@pytest.mark.django_db(transaction=True)
def test_a_rolled_back_savepoint_forgets_its_schedule(small_draws):
    built = build_topic()
    with mock.patch.object(recompute, "topic_snapshot_create", wraps=recompute.topic_snapshot_create) as create:
        with transaction.atomic():
            try:
                with transaction.atomic():
                    recompute.topic_recompute_schedule(topic_id=built.topic.pk)
                    raise RuntimeError("the label write failed")
            except RuntimeError:
                pass
            recompute.topic_recompute_schedule(topic_id=built.topic.pk)  # a later label in the same transaction
        assert create.call_count == 1
        with transaction.atomic():
            recompute.topic_recompute_schedule(topic_id=built.topic.pk)
            transaction.set_rollback(True)
        assert create.call_count == 1  # a rolled-back transaction schedules nothing


@pytest.mark.django_db(transaction=True)
def test_burst_of_label_commits_ends_with_the_from_scratch_report(small_draws):
    built = build_topic()
    topic = built.topic
    draw = SampleDraw.objects.filter(topic=topic, region=Region.B2).first()
    from annotation.models import SampledDocument

    for position in range(40, 45):  # five labels, each in its own transaction, each scheduling
        with transaction.atomic():
            SampledDocument.objects.create(draw=draw, topic=topic, document_id=built.docs[position],
                                           region=Region.B2, inclusion_probability=0.5)
            make_label(topic, built.docs[position], relevant=position % 2 == 0)
            recompute.topic_recompute_schedule(topic_id=topic.pk)
    latest = EstimateSnapshot.objects.filter(topic=topic).order_by("-version").first()
    fresh = topic_report_build(topic=topic, draws=DRAWS)
    assert _without_time(latest.report) == _without_time(fresh)
    assert {r["name"]: r["judged"] for r in latest.report["regions"]}["B2"] == 12
    assert latest.version == 5


# --------------------------------------------------------------------------- scheduling (broker)


@pytest.mark.django_db(transaction=True)
def test_schedules_in_many_transactions_coalesce_while_a_task_is_pending(broker_not_eager):
    built = build_topic(with_labels=False)
    topic_id = built.topic.pk
    for _ in range(100):
        with transaction.atomic():
            recompute.topic_recompute_schedule(topic_id=topic_id)
    assert len(broker_not_eager) == 1
    assert broker_not_eager[0]["kwargs"] == {"topic_id": topic_id}
    assert broker_not_eager[0]["countdown"] == recompute.RECOMPUTE_COUNTDOWN_SECONDS

    # The task starts: it clears the flag first, so a label landing while it runs schedules one more.
    with mock.patch.object(recompute, "topic_snapshot_create") as create:
        def during_run(**kwargs):
            with transaction.atomic():
                recompute.topic_recompute_schedule(topic_id=topic_id)
            return mock.Mock(version=1)

        create.side_effect = during_run
        recompute.topic_recompute_run(topic_id=topic_id)
    assert len(broker_not_eager) == 2


@pytest.mark.django_db(transaction=True)
def test_redis_down_the_label_commits_and_the_sweep_repairs_the_snapshot(monkeypatch, small_draws, caplog):
    built = build_topic()
    topic = built.topic
    recompute.topic_snapshot_create(topic_id=topic.pk, draws=DRAWS)
    monkeypatch.setitem(celery_app.conf, "CELERY_TASK_ALWAYS_EAGER", False)
    monkeypatch.setitem(celery_app.conf, "CELERY_BROKER_URL", "redis://127.0.0.1:1/15")  # nothing listens there
    make_draw(topic, SampleDraw.Purpose.PAIR, Region.B2, [42], built.docs)

    with transaction.atomic():
        make_label(topic, built.docs[42], relevant=True)
        recompute.topic_recompute_schedule(topic_id=topic.pk)
    assert Label.objects.filter(topic=topic, document_id=built.docs[42], majority=True).exists()
    assert [s.version for s in _snapshots(topic)] == [1]  # nothing recomputed
    assert "not scheduled" in caplog.text

    assert recompute.snapshots_stale_topic_ids() == [topic.pk]
    assert snapshots_refresh_stale_task.apply().get() == [topic.pk]
    latest = _snapshots(topic)[-1]
    assert latest.version == 2
    assert _without_time(latest.report) == _without_time(topic_report_build(topic=topic, draws=DRAWS))
    assert recompute.snapshots_stale_topic_ids() == []
    assert snapshots_refresh_stale_task.apply().get() == []
    assert [s.version for s in _snapshots(topic)] == [1, 2]


@pytest.mark.django_db(transaction=True)
def test_broker_publish_failure_clears_the_flag_so_the_next_label_tries_again(monkeypatch, broker_not_eager):
    from kombu.exceptions import OperationalError

    built = build_topic(with_labels=False)
    calls = []

    def refuse(*args, **kwargs):
        calls.append(kwargs)
        raise OperationalError("connection refused")

    monkeypatch.setattr(topic_recompute_task, "apply_async", refuse)
    for _ in range(2):
        with transaction.atomic():
            recompute.topic_recompute_schedule(topic_id=built.topic.pk)
    assert len(calls) == 2  # the first failure did not leave a pending flag behind


@pytest.mark.django_db
def test_stale_topics_include_unsnapshotted_and_edited_labels():
    built = build_topic()
    assert recompute.snapshots_stale_topic_ids() == [built.topic.pk]
    recompute.topic_snapshot_create(topic_id=built.topic.pk, draws=DRAWS)
    assert recompute.snapshots_stale_topic_ids() == []
    label = Label.objects.get(topic=built.topic, document_id=built.docs[20])
    label.majority = False
    label.save()
    assert recompute.snapshots_stale_topic_ids() == [built.topic.pk]


@pytest.fixture
def fake_certification(monkeypatch):
    """Stands in for estimation.selectors.certification_summary, as the inputs module calls it."""
    from estimation.services import inputs

    state = {"summary": {"state": "locked", "latest": {"metric": "f1"}}}

    def certification_summary(*, topic):
        if isinstance(state["summary"], Exception):
            raise state["summary"]
        return state["summary"]

    monkeypatch.setattr(inputs, "certification_summary", certification_summary)
    return state


@pytest.mark.django_db
def test_certification_block_is_an_input_of_the_snapshot(fake_certification):
    built = build_topic(with_labels=False)
    first = recompute.topic_snapshot_create(topic_id=built.topic.pk, draws=DRAWS)
    assert first.report["certification"] == {"state": "locked", "latest": {"metric": "f1"}}
    fake_certification["summary"] = {"state": "decided", "latest": {"metric": "f1", "passed": True}}
    second = recompute.topic_snapshot_create(topic_id=built.topic.pk, draws=DRAWS)
    assert second.version == 2 and second.report["certification"]["state"] == "decided"

    fake_certification["summary"] = RuntimeError("bug in the certification code")
    third = recompute.topic_snapshot_create(topic_id=built.topic.pk, draws=DRAWS)
    assert third.report["certification"] == {"state": "unavailable"}
