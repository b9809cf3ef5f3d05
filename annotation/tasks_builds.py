"""Celery tasks of classifier builds (annotation/services/classifiers/classifier_builds.py): thin, by build id, safe twice.

`classifier_build_task` starts a build: a keyword build becomes a chord — one `classifier_build_shard_task`
per id range (a group, spread over the workers), then `classifier_build_finish_task` with their results —
and an ids or scores build runs in the task itself. A trained build first fits its model in this task, then
scores the corpus in the same kind of chord. Any exception marks the build failed with a message.
"""
from __future__ import annotations

from typing import Any

from celery import chord, shared_task

from annotation.models import Classifier
from annotation.services.classifiers.classifier_builds import (
    classifier_build_begin,
    classifier_build_fail,
    classifier_build_finish,
    classifier_build_shard,
    classifier_build_shard_ranges,
    classifier_build_train,
    classifier_build_upload_run,
    classifier_builds_stuck_fail,
)


@shared_task(name="annotation.tasks_builds.classifier_build_task")
def classifier_build_task(*, build_id: int) -> dict[str, Any]:
    try:
        build = classifier_build_begin(build_id=build_id)
        if build is None:  # started already, finished or deleted: a second run does nothing
            return {"started": False}
        if build.kind == Classifier.Kind.TRAINED:
            trained_ranges = classifier_build_train(build_id=build_id)
            if trained_ranges is None:  # failed meanwhile: nothing to score
                return {"started": True, "shards": 0}
            ranges = trained_ranges
        elif build.kind != Classifier.Kind.KEYWORDS:
            classifier_build_upload_run(build_id=build_id)
            return {"started": True, "shards": 1}
        else:
            ranges = classifier_build_shard_ranges(corpus=build.corpus, shards=build.shards)
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
