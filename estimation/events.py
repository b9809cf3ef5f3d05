"""Facts the estimation app announces; the bus that delivers them after commit is ``core.events``.

The same bus as annotation's events: the same on-commit queue, the same "an
equal event is queued once per transaction", the same robust delivery where a
failing subscriber is logged and never fails the request.  Services fire these
with ``core.events.event_send_on_commit``; subscribers (``webhooks/receivers.py``)
register with ``core.events.event_subscribe``.
"""
from __future__ import annotations

from dataclasses import dataclass


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

__all__ = ["CertificationDecided", "EstimationEvent", "ReportUpdated"]
