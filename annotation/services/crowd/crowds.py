"""Where HITs go once created: the crowd platform of the topic (annotation.services.crowd.platforms).

The sampling and HIT services know nothing about a particular crowd; they call the
functions below, which ask the topic's platform from the registry:

* `crowd_publish(hit=...)` — called inside the transaction that created the HIT. The
  built-in pages need nothing (annotators find open HITs on /annotate/); Mechanical Turk
  publishes after commit (a rolled-back HIT must never reach MTurk; reconcile retries failures).
* `crowd_cost_per_assignment(topic)` — what one assignment costs the requester, used by
  the budget check before any HIT is created (Mechanical Turk adds Amazon's commission).
* `crowd_assignments_verify(crowd=...)` — confirm a platform's provisional submissions.
* `crowd_reconcile_all()` — every platform's periodic reconcile (Celery beat).
"""
from __future__ import annotations

import logging
from decimal import Decimal

from annotation.models import Hit, Topic
from annotation.services.crowd.platforms import CrowdUnavailable, platform_get, platforms_all
from annotation.services.crowd.provisional import assignments_pending_confirmation

__all__ = [
    "CrowdUnavailable",
    "crowd_assignments_verify",
    "crowd_cost_per_assignment",
    "crowd_publish",
    "crowd_reconcile_all",
]

logger = logging.getLogger(__name__)


def crowd_publish(*, hit: Hit) -> None:
    """Offer a newly created HIT to its topic's crowd (inside the creating transaction)."""
    platform_get(hit.topic.crowd).hit_publish_on_commit(hit=hit)


def crowd_cost_per_assignment(topic: Topic, *, reward: Decimal | None = None) -> Decimal:
    """Requester cost of one assignment of one of the topic's HITs, in dollars.

    `reward` prices HITs created earlier at another reward (default: the topic's).
    """
    reward = Decimal(topic.reward_per_hit if reward is None else reward)
    return platform_get(topic.crowd).cost_per_assignment(reward=reward, assignments=Hit.ASSIGNMENTS_PER_HIT)


def crowd_assignments_verify(*, crowd: str) -> dict[str, int]:
    """Ask the platform about each provisional submission of its topics: counts of each outcome."""
    platform = platform_get(crowd)
    outcomes: dict[str, int] = {}
    pending = assignments_pending_confirmation().filter(hit__topic__crowd=crowd).select_related("worker")
    for assignment in pending.order_by("pk"):
        outcome = platform.assignment_verify(assignment=assignment)
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    return outcomes


def crowd_reconcile_all() -> dict[str, object | None]:
    """Run every registered platform's reconcile; one platform's failure does not stop the others."""
    summaries: dict[str, object | None] = {}
    for platform in platforms_all():
        try:
            summaries[platform.key] = platform.reconcile()
        except Exception:
            logger.exception("crowd: reconcile of %s failed; the next run retries", platform.key)
            summaries[platform.key] = None
    return summaries
