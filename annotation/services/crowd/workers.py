"""Workers: identities (local account, or a worker id on a crowd platform) and automatic blocking on gold.

A worker who has answered at least GOLD_MIN_ANSWERS gold items of a topic and
is right on fewer than `topic.min_gold_accuracy` of them is blocked: blocked
workers cannot claim HITs (annotation.services.crowd.assignments). What they already
submitted stays; an analyst can review it among the split votes.
"""
from __future__ import annotations

import hashlib
import hmac

from django.conf import settings
from django.contrib.auth.models import User

from annotation.models import Judgment, Topic, Worker
from annotation.services.crowd.labels import topic_gold_answers

GOLD_MIN_ANSWERS = 5


def worker_for_user(*, user: User) -> Worker:
    """The user's worker, created on first use; no query when the user was loaded with it (core.auth)."""
    try:
        return user.worker
    except Worker.DoesNotExist:
        pass
    worker, _ = Worker.objects.get_or_create(user=user)
    return worker


def worker_for_external_id(*, platform: str, external_id: str) -> Worker:
    """The worker a crowd platform (a Topic.Crowd value) knows by `external_id`, created on first use."""
    worker, _ = Worker.objects.get_or_create(platform=platform, external_id=external_id)
    return worker


def worker_block(*, worker: Worker, reason: str) -> None:
    Worker.objects.filter(pk=worker.pk).update(blocked=True, blocked_reason=reason[:255])
    worker.blocked, worker.blocked_reason = True, reason[:255]


def worker_unblock(*, worker: Worker) -> None:
    Worker.objects.filter(pk=worker.pk).update(blocked=False, blocked_reason="")
    worker.blocked, worker.blocked_reason = False, ""


def worker_gold_score(*, worker: Worker, topic: Topic) -> tuple[int, int]:
    """(gold items answered, answered correctly) by the worker in the topic."""
    gold = topic_gold_answers(topic=topic)
    if not gold:
        return 0, 0
    answers = Judgment.objects.filter(topic=topic, worker=worker, document_id__in=list(gold)).values_list(
        "document_id", "relevant"
    )
    answered = correct = 0
    for doc_id, relevant in answers:
        answered += 1
        correct += int(relevant == gold[doc_id])
    return answered, correct


def worker_gold_check(*, worker: Worker, topic: Topic) -> bool:
    """Block the worker if their gold accuracy in the topic is too low; returns whether they are blocked."""
    answered, correct = worker_gold_score(worker=worker, topic=topic)
    if answered >= GOLD_MIN_ANSWERS and correct / answered < topic.min_gold_accuracy:
        worker_block(
            worker=worker,
            reason=f"{correct} of {answered} gold answers right in topic {topic.name!r} "
            f"(below {topic.min_gold_accuracy:.0%})",
        )
    return worker.blocked


# --------------------------------------------------------------------------- the one public id of a worker


def worker_public_id(*, worker_id: int, external_id: str | None) -> str:
    """A worker's stable pseudonymous id: the platform's worker id, else "local-" + a keyed hash of the local id.

    The hash is an HMAC of the Worker's id under SECRET_KEY: the same on every page and export of this
    deployment, not reversible to the account without the secret key.
    """
    if external_id:
        return external_id
    digest = hmac.new(settings.SECRET_KEY.encode(), f"worker:{worker_id}".encode(), hashlib.sha256).hexdigest()
    return "local-" + digest[:16]


def worker_public_ids(*, worker_ids: list[int] | set[int]) -> dict[int, str]:
    """{Worker id: worker_public_id} for these workers, in one query."""
    rows = Worker.objects.filter(pk__in=list(worker_ids)).values_list("pk", "external_id")
    return {pk: worker_public_id(worker_id=pk, external_id=external_id) for pk, external_id in rows}
