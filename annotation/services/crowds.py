"""Where HITs go once created: the crowd interface (local pages or Mechanical Turk).

The sampling and HIT services know nothing about a particular crowd; they call
the two functions below, which dispatch on `topic.crowd`:

* `crowd_publish(hit=...)` — called inside the transaction that created the HIT.
  The local crowd needs nothing (annotators find open HITs on /annotate/). The
  Mechanical Turk crowd is `annotation.crowds.mturk` (owned by the MTurk code):
  it must expose `hit_publish(*, hit: Hit) -> None`, which defers the network
  call with `transaction.on_commit` (a rolled-back HIT must never reach MTurk).
* `crowd_cost_per_assignment(topic)` — what one assignment costs the requester,
  used by the budget check before any HIT is created. For Mechanical Turk this is
  the reward plus Amazon's commission (ESTIMATION-NOTES §3: 20%, and 20% more
  for HITs with 10 or more assignments; ours have 3),
  at least $0.01. `annotation.crowds.mturk`
  may override it by exposing `cost_per_assignment(*, topic: Topic, reward: Decimal) -> Decimal`.
"""
from __future__ import annotations

from core.errors import ApplicationError
import importlib
from decimal import ROUND_HALF_UP, Decimal
from types import ModuleType

from annotation.models import Hit, Topic

MTURK_MODULE = "annotation.crowds.mturk"
MTURK_COMMISSION = Decimal("0.20")
MTURK_LARGE_HIT_COMMISSION = Decimal("0.20")  # extra, for HITs with >= 10 assignments
MTURK_LARGE_HIT_ASSIGNMENTS = 10
MTURK_MIN_COMMISSION = Decimal("0.01")  # Amazon's minimum fee per assignment


class CrowdUnavailable(ApplicationError):
    """The topic's crowd cannot take HITs (its integration is not installed or configured)."""


def _mturk_module() -> ModuleType:
    try:
        return importlib.import_module(MTURK_MODULE)
    except ImportError as exc:  # the integration is optional until it is configured
        raise CrowdUnavailable(f"Mechanical Turk integration is not available ({exc})") from exc


def crowd_publish(*, hit: Hit) -> None:
    """Offer a newly created HIT to its topic's crowd (inside the creating transaction)."""
    crowd = hit.topic.crowd
    if crowd == Topic.Crowd.LOCAL:
        return  # open HITs are handed out by assignment_claim
    if crowd == Topic.Crowd.MTURK:
        module = _mturk_module()
        publish = getattr(module, "hit_publish", None)
        if publish is None:
            raise CrowdUnavailable(f"{MTURK_MODULE} has no hit_publish(*, hit)")
        publish(hit=hit)
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
        try:
            override = getattr(_mturk_module(), "cost_per_assignment", None)
        except CrowdUnavailable:
            override = None
        if override is not None:
            return Decimal(override(topic=topic, reward=reward))
        rate = MTURK_COMMISSION
        if Hit.ASSIGNMENTS_PER_HIT >= MTURK_LARGE_HIT_ASSIGNMENTS:
            rate += MTURK_LARGE_HIT_COMMISSION
        commission = max(reward * rate, MTURK_MIN_COMMISSION)
        return (reward + commission).quantize(Decimal("0.0001"), rounding=ROUND_HALF_UP)
    raise CrowdUnavailable(f"unknown crowd {topic.crowd!r}")
