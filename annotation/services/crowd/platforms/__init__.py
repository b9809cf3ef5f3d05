"""Crowd platforms: where a topic's HITs are done, one module per `Topic.Crowd` value.

Everything that differs between crowds lives behind `CrowdPlatform`; the other services ask
the registry (`platform_get(crowd)`, `platforms_all()`) instead of branching on `topic.crowd`:

* the price of an assignment (the budget check), * publishing a HIT once the creating
  transaction commits, * whether a submission is provisional until the platform confirms it and
  how to confirm it (the bookkeeping is annotation.services.crowd.provisional), * the periodic
  reconcile (publish what failed, approve and pay, expire), run for every platform by
  `crowd_reconcile_all`, * what the analyst's pages say about publication.

A new platform is a module here defining a subclass, registered with `platform_register`, plus
its import in `PLATFORM_MODULES` below and its `Topic.Crowd` value (a choice that needs no
migration: annotation.models.CrowdField).
"""
from __future__ import annotations

import importlib
from datetime import datetime
from decimal import Decimal
from typing import ClassVar, TypeVar

from annotation.models import Assignment, Hit, Topic
from core.errors import ApplicationError

# The platform modules of this package; importing one registers its platform.
PLATFORM_MODULES = ("builtin", "mturk")


class CrowdUnavailable(ApplicationError):
    """The topic's crowd cannot take HITs (an unknown crowd)."""


class CrowdPlatform:
    """One crowd platform. The defaults are those of a crowd that needs nothing outside the app."""

    key: ClassVar[str]  # the Topic.Crowd value
    # Submissions are stored as provisional answers and count only once the platform confirms them
    # (`assignment_verify`); False: a submission counts at once (assignment_submit).
    provisional: ClassVar[bool] = False

    def cost_per_assignment(self, *, reward: Decimal, assignments: int) -> Decimal:
        """What one assignment costs the requester (reward plus the platform's fees), in dollars."""
        return reward

    def hit_publish_on_commit(self, *, hit: Hit) -> None:
        """Offer a HIT created in the current transaction, once (and only if) it commits."""

    def assignment_verify(self, *, assignment: Assignment, now: datetime | None = None) -> str:
        """Confirm a provisional submission with the platform: VERIFIED, UNVERIFIED or PENDING (provisional)."""
        raise NotImplementedError(f"crowd {self.key!r} has no provisional submissions")

    def reconcile(self) -> object | None:
        """Bring the app and the platform into agreement (periodic; safe to repeat); a summary or None."""
        return None

    def unpublished_count(self, *, topic: Topic) -> int:
        """Open HITs of the topic not yet on offer on the platform (shown on the analyst's pages)."""
        return 0

    def configuration_problem(self) -> str | None:
        """Why HITs cannot be published right now (settings, credentials), or None."""
        return None


_REGISTRY: dict[str, CrowdPlatform] = {}
P = TypeVar("P", bound=CrowdPlatform)


def platform_register(platform: P) -> P:
    """Make `platform` the one answering for its key (a Topic.Crowd value)."""
    _REGISTRY[platform.key] = platform
    return platform


def platform_get(crowd: str) -> CrowdPlatform:
    """The platform of a Topic.Crowd value; CrowdUnavailable for an unknown one."""
    try:
        return _REGISTRY[crowd]
    except KeyError:
        raise CrowdUnavailable(f"unknown crowd {crowd!r}") from None


def platforms_all() -> list[CrowdPlatform]:
    """Every registered platform, in registration order."""
    return list(_REGISTRY.values())


for _module in PLATFORM_MODULES:
    importlib.import_module(f"{__name__}.{_module}")
