"""The Mechanical Turk side of the crowd interface (annotation.services.crowds loads this module).

Thin: the work is done by annotation.services.mturk.
"""
from __future__ import annotations

from decimal import Decimal

from annotation.models import Hit, Topic
from annotation.services.mturk import mturk_cost_per_assignment, mturk_hit_publish_on_commit


def hit_publish(*, hit: Hit) -> None:
    """Publish after the creating transaction commits; failures are retried by the reconcile task."""
    mturk_hit_publish_on_commit(hit=hit)


def cost_per_assignment(*, topic: Topic, reward: Decimal | None = None) -> Decimal:
    """Reward plus Amazon's commission, in cents, for one assignment of one of the topic's HITs."""
    return mturk_cost_per_assignment(
        reward=topic.reward_per_hit if reward is None else Decimal(reward),
        assignments=Hit.ASSIGNMENTS_PER_HIT,
    )
