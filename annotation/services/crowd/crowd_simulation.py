"""A simulated crowd: answers a topic's open HITs through the same services as real annotators.

Truth comes from document metadata: a document is on topic when
metadata[truth_field] equals truth_value or, for a list, contains it. For a topic
set, a document's true class is the first class (in position order) whose name
the field equals or contains, ignoring case, and "none of these" otherwise.
Honest simulated workers answer correctly with probability `accuracy` (a wrong
answer of a topic set is any other class, uniformly); spammers answer at random. Each simulated worker is a local account `sim-worker-NN`, so
claims, expiry, idempotence, gold checks and blocking all apply as for people.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

import numpy as np
from django.contrib.auth import get_user_model
from django.db import transaction

from annotation.models import NONE_OF_THESE, Document, HitItem, Topic, TopicClass, Worker
from annotation.services.crowd.assignments import ClaimRefused, assignment_claim, assignment_submit
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


def document_true_class(*, metadata: dict, truth_field: str, classes: Sequence[str]) -> int:
    """The class position (1..M) of a topic set's first class the truth field names, else 0 (none of these)."""
    value = metadata.get(truth_field) if isinstance(metadata, dict) else None
    values = value if isinstance(value, list) else [value]
    named = {str(v).strip().casefold() for v in values if v is not None}
    for position, name in enumerate(classes, start=1):
        if name.strip().casefold() in named:
            return position
    return NONE_OF_THESE


def _class_answer(*, truth: int, accuracy: float, n_classes: int, rng: np.random.Generator) -> int:
    """One honest worker's answer among n_classes positions: the truth with probability accuracy, else another."""
    if rng.random() < accuracy:
        return truth
    others = [c for c in range(n_classes) if c != truth]
    return int(others[int(rng.integers(len(others)))])


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
    classes = list(TopicClass.objects.filter(topic=topic).order_by("position").values_list("name", flat=True))
    n_classes = len(classes) + 1  # with "none of these"
    truth_cache: dict[int, bool | int] = {}

    def truth(doc_ids: list[int]) -> dict[int, bool | int]:
        missing = [d for d in doc_ids if d not in truth_cache]
        for doc_id, metadata in Document.objects.filter(pk__in=missing).values_list("pk", "metadata"):
            if topic.is_multiclass:
                truth_cache[doc_id] = document_true_class(metadata=metadata, truth_field=truth_field, classes=classes)
            else:
                truth_cache[doc_id] = document_is_on_topic(
                    metadata=metadata, truth_field=truth_field, truth_value=truth_value
                )
        return {d: truth_cache[d] for d in doc_ids}

    def answer(value: bool | int, spammer: bool) -> bool | int:
        if topic.is_multiclass:
            if spammer:
                return int(rng.integers(n_classes))
            return _class_answer(truth=int(value), accuracy=accuracy, n_classes=n_classes, rng=rng)
        if spammer:
            return bool(rng.random() < 0.5)
        return value if rng.random() < accuracy else not value

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
            answers = {d: answer(t, is_spammer[worker.pk]) for d, t in truth(doc_ids).items()}
            result = assignment_submit(assignment_id=assignment.pk, worker=worker, answers=answers)
            if not result.replayed:
                judgments += result.judgments
                assignments += 1
                cost += assignment.hit.reward
            still_active.append(worker)
        active = still_active
    blocked = Worker.objects.filter(pk__in=[w.pk for w in crowd], blocked=True).count()
    return SimulationSummary(judgments=judgments, assignments=assignments, workers=len(crowd), cost=cost, blocked=blocked)
