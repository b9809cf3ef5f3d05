"""Celery tasks of the annotation app: thin wrappers that take ids (as keywords) and call services.

Each is safe to run twice: a launch draws up to totals (a second run draws
nothing new), expiry only touches assignments past their deadline, posteriors
are recomputed from all judgments, an upload that is no longer pending is left
alone.  Task names are kept stable so messages queued by an older release still
find their task.
"""
from __future__ import annotations

from celery import shared_task

from annotation.services.crowd.assignments import assignments_expire
from annotation.services.crowd.bonuses import bonuses_pay_pending
from annotation.services.crowd.crowds import crowd_reconcile_all


@shared_task(name="annotation.tasks.assignments_expire_task")
def assignments_expire_task() -> int:
    return assignments_expire()


@shared_task(name="annotation.tasks.crowd_reconcile_task")
def crowd_reconcile_task() -> None:
    """Every registered crowd platform's reconcile (Mechanical Turk: publish, confirm, pay, expire), then bonuses."""
    crowd_reconcile_all()
    bonuses_pay_pending()


# Classifier builds (issue 15) live in their own module; imported here so Celery's autodiscovery registers them.
from annotation.tasks_bonuses import bonus_pay_task, bonuses_pending_task  # noqa: E402,F401
from annotation.tasks_builds import (  # noqa: E402,F401
    classifier_build_finish_task,
    classifier_build_shard_task,
    classifier_build_task,
    classifier_builds_stuck_task,
)

# A topic's draw and its labels' posteriors likewise (annotation/tasks_sampling.py, annotation/tasks_labels.py): the
# services that queue them import only their own task module, never every task of the app.
from annotation.tasks_corpora import corpus_delete_task, corpus_deletions_stuck_task  # noqa: E402,F401
from annotation.tasks_external import external_pair_count_task  # noqa: E402,F401
from annotation.tasks_judge import model_judge_run_task  # noqa: E402,F401
from annotation.tasks_labels import labels_posteriors_task  # noqa: E402,F401

# Router builds (issue 15, topic sets) likewise: annotation/tasks_routers.py.
from annotation.tasks_retrieved import classifier_retrieved_upload_task  # noqa: E402,F401
from annotation.tasks_routers import router_build_task, router_builds_stuck_task  # noqa: E402,F401
from annotation.tasks_sampling import samples_draw_task  # noqa: E402,F401

# Corpus uploads' import and sweep likewise: annotation/tasks_uploads.py (the upload service queues its task
# without importing every task of the app).
from annotation.tasks_uploads import IMPORT_RETRIES, corpus_import_task, corpus_uploads_stuck_task  # noqa: E402,F401
