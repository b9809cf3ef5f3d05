"""Facts the estimation app announces, delivered to subscribers after commit.

The mechanism is annotation's (``annotation/events.py``): the same on-commit
queue, the same "an equal event is queued once per transaction", the same robust
delivery where a failing subscriber is logged and never fails the request.  Only
the event types are new; estimation may import annotation, so it reuses the bus
instead of copying it.  Subscribers (``webhooks/receivers.py``) register with
``estimation_event_subscribe``.

``annotation.events`` types its functions with annotation's own event union;
these two wrappers widen that typing for estimation's events (the runtime code is
type-agnostic: subscribers are keyed by the event's class).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from annotation import events as _bus


@dataclass(frozen=True)
class ReportUpdated:
    """A new report snapshot of the topic was stored (``topic_snapshot_create``)."""

    topic_id: int
    snapshot_id: int
    version: int


@dataclass(frozen=True)
class CertificationDecided:
    """A certification verdict was stored for the plan (``certification_decide``)."""

    topic_id: int
    plan_id: int
    verdict_id: int


EstimationEvent = ReportUpdated | CertificationDecided
EE = TypeVar("EE", ReportUpdated, CertificationDecided)


def estimation_event_subscribe(event_type: type[EE]) -> Callable[[Callable[[EE], None]], Callable[[EE], None]]:
    """Register ``handler(event)`` for ``event_type`` on annotation's event bus."""
    return cast(Any, _bus.event_subscribe)(event_type)


def estimation_event_send_on_commit(*, event: EstimationEvent) -> None:
    """Deliver ``event`` to its subscribers once the current transaction commits (see annotation.events)."""
    _bus.event_send_on_commit(event=cast(Any, event))
