"""Celery tasks of the crowd workflow: thin wrappers that take ids and call services.

Each is safe to run twice: a launch draws up to totals (a second run draws
nothing new), expiry only touches assignments past their deadline, posteriors
are recomputed from all judgments.
"""
from celery import shared_task

# The worker autodiscovers `annotation.tasks` only: import the corpus import task so it is registered too.
from annotation.tasks_import import corpus_import_task  # noqa: F401


@shared_task(name="annotation.tasks.samples_draw_task")
def samples_draw_task(topic_id: int, options: dict | None = None) -> dict:
    """Draw, queue and publish a topic's samples; `options` are samples_draw's JSON-able keywords."""
    from annotation.models import Topic
    from annotation.services.sampling import samples_launch

    topic = Topic.objects.get(pk=topic_id)
    launch = samples_launch(topic=topic, **(options or {}))
    return {"draws": [d.pk for d in launch.draws], "hits": len(launch.hits), "documents": launch.documents}


@shared_task(name="annotation.tasks.assignments_expire_task")
def assignments_expire_task() -> int:
    from annotation.services.assignments import assignments_expire

    return assignments_expire()


@shared_task(name="annotation.tasks.labels_posteriors_task")
def labels_posteriors_task(topic_id: int) -> int:
    """Dawid–Skene posteriors of a topic's labels, then a recompute of its estimates."""
    from django.db import transaction

    from annotation.models import Topic
    from annotation.services.labels import labels_posteriors_recompute
    from estimation.services.recompute import topic_recompute_schedule

    topic = Topic.objects.get(pk=topic_id)
    with transaction.atomic():
        updated = labels_posteriors_recompute(topic=topic)
        topic_recompute_schedule(topic_id=topic_id)
    return updated


@shared_task(name="annotation.tasks.mturk_reconcile_task")
def mturk_reconcile_task() -> None:
    # Imported here: the Mechanical Turk services are optional and may be absent.
    from annotation.services.mturk import mturk_reconcile_all

    mturk_reconcile_all()
