"""Where HITs go once created: the crowd interface (local pages or Mechanical Turk).

The sampling and HIT services know nothing about a particular crowd; they call
the two functions below, which dispatch on `topic.crowd`:

* `crowd_publish(hit=...)` — called inside the transaction that created the HIT.
  The local crowd needs nothing (annotators find open HITs on /annotate/).
  Mechanical Turk publishing is deferred with `transaction.on_commit`
  (`annotation.services.crowd.mturk.mturk_hit_publish_on_commit`): a rolled-back HIT
  must never reach MTurk, and a failed publication is retried by the reconcile job.
* `crowd_cost_per_assignment(topic)` — what one assignment costs the requester,
  used by the budget check before any HIT is created. For Mechanical Turk this is
  the reward plus Amazon's commission, priced by the one function that does it,
  `annotation.services.crowd.mturk.mturk_cost_per_assignment`.
"""
from __future__ import annotations

from decimal import Decimal

from annotation.models import Hit, Topic
from annotation.services.crowd.mturk import mturk_cost_per_assignment, mturk_hit_publish_on_commit
from core.errors import ApplicationError


class CrowdUnavailable(ApplicationError):
    """The topic's crowd cannot take HITs (an unknown crowd)."""


def crowd_publish(*, hit: Hit) -> None:
    """Offer a newly created HIT to its topic's crowd (inside the creating transaction)."""
    crowd = hit.topic.crowd
    if crowd == Topic.Crowd.LOCAL:
        return  # open HITs are handed out by assignment_claim
    if crowd == Topic.Crowd.MTURK:
        mturk_hit_publish_on_commit(hit=hit)
        return
    raise CrowdUnavailable(f"unknown crowd {crowd!r}")


def crowd_cost_per_assignment(topic: Topic, *, reward: Decimal | None = None) -> Decimal:
    """Requester cost of one assignment of one of the topic's HITs, in dollars.

    `reward` prices HITs created earlier at another reward (default: the topic's).
    """
    reward = Decimal(topic.reward_per_hit if reward is None else reward)
    if topic.crowd == Topic.Crowd.LOCAL:
        return reward
    if topic.crowd == Topic.Crowd.MTURK:
        return mturk_cost_per_assignment(reward=reward, assignments=Hit.ASSIGNMENTS_PER_HIT)
    raise CrowdUnavailable(f"unknown crowd {topic.crowd!r}")
