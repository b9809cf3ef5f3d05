"""A simulated crowd: answers a topic's open HITs through the same services as real annotators.

Truth comes from document metadata: a document is on topic when
metadata[truth_field] equals truth_value or, for a list, contains it. Honest
simulated workers answer correctly with probability `accuracy`; spammers answer
at random. Each simulated worker is a local account `sim-worker-NN`, so
claims, expiry, idempotence, gold checks and blocking all apply as for people.
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

import numpy as np
from django.contrib.auth import get_user_model
from django.db import transaction

from annotation.models import Document, HitItem, Topic, Worker
from annotation.services.assignments import ClaimRefused, assignment_claim, assignment_submit
from core.errors import ApplicationError

SIMULATED_USER_PREFIX = "sim-worker-"


@dataclass(frozen=True)
class SimulationSummary:
    judgments: int
    assignments: int
    workers: int
    cost: Decimal
    blocked: int

    def __str__(self) -> str:
        return (
            f"{self.judgments} judgments in {self.assignments} assignments by {self.workers} simulated workers; "
            f"cost ${self.cost:.2f}; {self.blocked} blocked"
        )


class SimulationError(ApplicationError):
    """A simulation that cannot run as asked; the message says why."""


def document_is_on_topic(*, metadata: dict, truth_field: str, truth_value: str) -> bool:
    value = metadata.get(truth_field) if isinstance(metadata, dict) else None
    if isinstance(value, list):
        return truth_value in value
    return value == truth_value


def simulated_workers_ensure(*, count: int, start: int = 1) -> list[Worker]:
    """Accounts sim-worker-01… (unusable passwords: nobody signs in as them)."""
    User = get_user_model()
    workers = []
    for number in range(start, start + count):
        username = f"{SIMULATED_USER_PREFIX}{number:02d}"
        with transaction.atomic():
            user, created = User.objects.get_or_create(username=username)
            if created:
                user.set_unusable_password()
                user.save(update_fields=["password"])
            worker, _ = Worker.objects.get_or_create(user=user)
        workers.append(worker)
    return workers


def crowd_simulate(
    *,
    topic: Topic,
    truth_field: str,
    truth_value: str | None = None,
    accuracy: float = 0.9,
    workers: int = 30,
    spammers: int = 0,
    seed: int = 1,
) -> SimulationSummary:
    """Answer every open assignment of the topic the simulated workers can take."""
    if not 0.0 <= accuracy <= 1.0:
        raise SimulationError(f"accuracy must be between 0 and 1, got {accuracy!r}")
    if topic.crowd != Topic.Crowd.LOCAL:
        raise SimulationError(
            f"Topic {topic.name!r} is published to {topic.get_crowd_display()}; "
            "only built-in-crowd topics can be simulated."
        )
    if workers < 0 or spammers < 0 or workers + spammers < 3:
        raise SimulationError("a HIT needs three distinct workers: simulate at least 3 workers in all")
    truth_value = topic.name if truth_value is None else truth_value
    rng = np.random.default_rng(seed)
    crowd = simulated_workers_ensure(count=workers + spammers)
    is_spammer = {w.pk: i >= workers for i, w in enumerate(crowd)}
    truth_cache: dict[int, bool] = {}

    def truth(doc_ids: list[int]) -> dict[int, bool]:
        missing = [d for d in doc_ids if d not in truth_cache]
        for doc_id, metadata in Document.objects.filter(pk__in=missing).values_list("pk", "metadata"):
            truth_cache[doc_id] = document_is_on_topic(metadata=metadata, truth_field=truth_field, truth_value=truth_value)
        return {d: truth_cache[d] for d in doc_ids}

    judgments = assignments = 0
    cost = Decimal("0")
    active = list(crowd)
    while active:
        still_active = []
        # Round-robin, so HITs get three different workers instead of one worker draining the queue.
        for worker in active:
            worker.refresh_from_db(fields=["blocked", "blocked_reason"])
            try:
                assignment = assignment_claim(worker=worker, topic=topic)
            except ClaimRefused:
                continue
            if assignment is None:
                continue
            doc_ids = list(HitItem.objects.filter(hit_id=assignment.hit_id).values_list("document_id", flat=True))
            if is_spammer[worker.pk]:
                answers = {d: bool(rng.random() < 0.5) for d in doc_ids}
            else:
                answers = {d: (t if rng.random() < accuracy else not t) for d, t in truth(doc_ids).items()}
            result = assignment_submit(assignment_id=assignment.pk, worker=worker, answers=answers)
            if not result.replayed:
                judgments += result.judgments
                assignments += 1
                cost += assignment.hit.reward
            still_active.append(worker)
        active = still_active
    blocked = Worker.objects.filter(pk__in=[w.pk for w in crowd], blocked=True).count()
    return SimulationSummary(judgments=judgments, assignments=assignments, workers=len(crowd), cost=cost, blocked=blocked)
