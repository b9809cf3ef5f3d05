"""Celery tasks of classifier builds (annotation/services/classifiers/classifier_builds.py): thin, by build id, safe twice.

`classifier_build_task` starts a build and runs its kind's in-task steps (classifiers/kinds/): a "scan" kind
(keywords) becomes a chord — one `classifier_build_shard_task` per id range (a group, spread over the
workers), then `classifier_build_finish_task` with their results; a "run" kind (ids, scores) is built in the
task itself; a "train" kind fits its model in the task, then scores the corpus in the same kind of chord.
Any exception marks the build failed with a message.
"""
from __future__ import annotations

from typing import Any

from celery import chord, shared_task

from annotation.services.classifiers.classifier_builds import (
    classifier_build_begin,
    classifier_build_fail,
    classifier_build_finish,
    classifier_build_prepare,
    classifier_build_shard,
    classifier_builds_stuck_fail,
)


@shared_task(name="annotation.tasks_builds.classifier_build_task")
def classifier_build_task(*, build_id: int) -> dict[str, Any]:
    try:
        build = classifier_build_begin(build_id=build_id)
        if build is None:  # started already, finished or deleted: a second run does nothing
            return {"started": False}
        ranges = classifier_build_prepare(build_id=build_id)  # the kind's in-task steps
        if not ranges:  # built in this task, or stopped meanwhile: nothing to shard
            return {"started": True, "shards": 0}
        header = [classifier_build_shard_task.si(build_id=build_id, pk_from=lo, pk_to=hi) for lo, hi in ranges]
        chord(header)(classifier_build_finish_task.s(build_id=build_id))
    except Exception as exc:
        classifier_build_fail(build_id=build_id, exc=exc)
        raise
    return {"started": True, "shards": len(ranges)}


@shared_task(name="annotation.tasks_builds.classifier_build_shard_task")
def classifier_build_shard_task(*, build_id: int, pk_from: int, pk_to: int) -> str:
    try:
        return classifier_build_shard(build_id=build_id, pk_from=pk_from, pk_to=pk_to)
    except Exception as exc:
        classifier_build_fail(build_id=build_id, exc=exc)
        raise


@shared_task(name="annotation.tasks_builds.classifier_build_finish_task")
def classifier_build_finish_task(shard_results: list[str], *, build_id: int) -> int | None:
    try:
        build = classifier_build_finish(build_id=build_id, shard_results=shard_results)
    except Exception as exc:
        classifier_build_fail(build_id=build_id, exc=exc)
        raise
    return build.classifier_id if build is not None else None


@shared_task(name="annotation.tasks_builds.classifier_builds_stuck_task")
def classifier_builds_stuck_task() -> int:
    """Fail builds with no sign of life for CLASSIFIER_BUILD_STUCK_SECONDS; beat runs it."""
    return classifier_builds_stuck_fail()
