"""The one background-job base (core/jobs.py): queue after commit, start once, progress, fail once with one
cut length, finish, the stuck sweep and the retry — on two concrete jobs whose column names differ (a
classifier build's `processed`/`error`, a corpus upload's `progress`/`error_problem`)."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import ClassifierBuild, CorpusUpload
from core.jobs import (
    MESSAGE_MAX_CHARS,
    JobStatus,
    job_begin,
    job_enqueue,
    job_enqueue_on_commit,
    job_fail,
    job_finish,
    job_progress_add,
    job_retry,
    jobs_stuck_fail,
)
from tests.factories import CorpusFactory

pytestmark = pytest.mark.django_db


def _build(**fields) -> ClassifierBuild:
    return ClassifierBuild.objects.create(corpus=CorpusFactory.create(), name="b", kind="keywords",
                                          definition={"terms": ["oil"], "fields": ["title"]}, **fields)


def _upload(**fields) -> CorpusUpload:
    return CorpusUpload.objects.create(corpus_name="c", original_name="c.jsonl", file_path="corpus-uploads/x",
                                       **fields)


def test_enqueue_waits_for_the_commit_and_a_rollback_forgets_it(settings, django_capture_on_commit_callbacks):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    job = _build(total=10)
    sent: list[int] = []
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        job_enqueue_on_commit(job=job, enqueue=lambda: sent.append(job.pk))
    assert sent == [] and len(callbacks) == 1
    callbacks[0]()
    assert sent == [job.pk]


def test_without_a_broker_the_job_is_sent_at_once(settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    job = _build(total=10)
    sent: list[int] = []

    def send() -> None:
        sent.append(job.pk)
        ClassifierBuild.objects.filter(pk=job.pk).update(status="done")

    job_enqueue_on_commit(job=job, enqueue=send)
    assert sent == [job.pk] and job.status == "done"  # refreshed


def test_a_queue_that_is_down_fails_the_job_or_leaves_it_waiting(settings):
    settings.CELERY_TASK_ALWAYS_EAGER = False

    def down() -> None:
        raise ConnectionError("broker unreachable")

    build = _build()
    assert not job_enqueue(model=ClassifierBuild, job_id=build.pk, send=down, queue_down="queue down")
    build.refresh_from_db()
    assert build.status == "failed" and build.error == "queue down"

    upload = _upload()
    assert not job_enqueue(model=CorpusUpload, job_id=upload.pk, send=down, queue_down="queue down",
                           wait_when_down=True)
    upload.refresh_from_db()
    assert upload.status == "pending" and upload.error_problem == "queue down"
    assert job_enqueue(model=CorpusUpload, job_id=upload.pk, send=lambda: None, queue_down="queue down")
    upload.refresh_from_db()
    assert upload.error_problem == ""  # queued after all: the message goes


def test_begin_once_progress_never_past_the_total_and_a_heartbeat():
    build = _build(total=10)
    assert job_begin(model=ClassifierBuild, job_id=build.pk)
    assert not job_begin(model=ClassifierBuild, job_id=build.pk)  # a second run of the task does nothing
    build.refresh_from_db()
    assert build.status == "running" and build.started_at and build.heartbeat_at
    beat = build.heartbeat_at
    assert job_progress_add(model=ClassifierBuild, job_id=build.pk, count=4)
    assert job_progress_add(model=ClassifierBuild, job_id=build.pk, count=40)
    build.refresh_from_db()
    assert build.processed == 10 and build.heartbeat_at >= beat

    upload = _upload(total=5)
    job_begin(model=CorpusUpload, job_id=upload.pk)
    job_progress_add(model=CorpusUpload, job_id=upload.pk, count=3)
    upload.refresh_from_db()
    assert upload.progress == 3 and upload.job_percent == 60


def test_fail_once_with_one_cut_length_and_a_detail():
    build = _build()
    assert job_fail(model=ClassifierBuild, job_id=build.pk, message="x" * (MESSAGE_MAX_CHARS + 50),
                    detail={"line": 7, "problem": "bad"})
    assert not job_fail(model=ClassifierBuild, job_id=build.pk, message="again")  # failed already
    build.refresh_from_db()
    assert build.status == "failed" and len(build.error) == MESSAGE_MAX_CHARS and build.finished_at
    assert build.error_detail == {"line": 7, "problem": "bad"}

    upload = _upload()
    job_fail(model=CorpusUpload, job_id=upload.pk, message="y" * (MESSAGE_MAX_CHARS + 1))
    upload.refresh_from_db()
    assert len(upload.error_problem) == MESSAGE_MAX_CHARS  # the same cut for every kind of job


def test_finish_sets_the_progress_to_the_total():
    build = _build(total=12)
    job_begin(model=ClassifierBuild, job_id=build.pk)
    build.refresh_from_db()
    job_finish(job=build, details={"retrieved": 3})
    build.refresh_from_db()
    assert build.status == "done" and build.processed == 12 and build.details == {"retrieved": 3}
    assert build.job_finished and build.job_percent == 100
    assert not job_fail(model=ClassifierBuild, job_id=build.pk, message="late")  # done stays done


def test_the_sweep_fails_jobs_without_a_sign_of_life_only():
    now = timezone.now()
    lost = _build()
    ClassifierBuild.objects.filter(pk=lost.pk).update(status="running", started_at=now - timedelta(hours=2),
                                                      heartbeat_at=now - timedelta(hours=1))
    alive = _build()
    ClassifierBuild.objects.filter(pk=alive.pk).update(status="running", started_at=now - timedelta(hours=2),
                                                       heartbeat_at=now - timedelta(seconds=30))
    legacy = _build()  # an older release's heartbeat in the details keeps it alive too
    ClassifierBuild.objects.filter(pk=legacy.pk).update(status="running", started_at=now - timedelta(hours=2),
                                                        details={"heartbeat": now.isoformat()})
    waiting = _build()
    ClassifierBuild.objects.filter(pk=waiting.pk).update(created_at=now - timedelta(hours=3))
    done = _build()
    ClassifierBuild.objects.filter(pk=done.pk).update(status="done", created_at=now - timedelta(days=1))

    failed = jobs_stuck_fail(model=ClassifierBuild, older_than=timedelta(minutes=10), message="stuck", now=now)
    assert sorted(failed) == sorted([lost.pk, waiting.pk])
    states = dict(ClassifierBuild.objects.values_list("pk", "status"))
    assert states == {lost.pk: "failed", alive.pk: "running", legacy.pk: "running", waiting.pk: "failed",
                      done.pk: "done"}
    assert jobs_stuck_fail(model=ClassifierBuild, older_than=timedelta(minutes=10), message="stuck", now=now) == []


def test_a_failed_job_can_be_retried_once():
    upload = _upload(total=9)
    job_begin(model=CorpusUpload, job_id=upload.pk)
    job_progress_add(model=CorpusUpload, job_id=upload.pk, count=4)
    job_fail(model=CorpusUpload, job_id=upload.pk, message="stuck", detail={"why": "no heartbeat"})
    assert job_retry(model=CorpusUpload, job_id=upload.pk)
    assert not job_retry(model=CorpusUpload, job_id=upload.pk)  # somebody retried it first
    upload.refresh_from_db()
    assert upload.status == JobStatus.PENDING and upload.error_problem == "" and upload.error_detail is None
    assert upload.progress == 0 and upload.finished_at is None and upload.started_at is None
