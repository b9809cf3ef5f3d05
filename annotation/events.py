"""Facts the annotation app announces; the bus that delivers them after commit is ``core.events``.

Annotation never imports the code that reacts to what happens here (estimation
recomputes reports and decides certifications; webhooks send deliveries): a
service fires one of these events with ``core.events.event_send_on_commit``
inside the transaction that wrote the fact, and the subscribers registered in
other apps' ``receivers`` modules run once that transaction has committed.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LabelsCompleted:
    """Documents of a topic received their last judgment: their labels are complete."""

    topic_id: int


@dataclass(frozen=True)
class LabelPosteriorsUpdated:
    """The topic's Dawid–Skene posteriors were recomputed from all its judgments."""

    topic_id: int


@dataclass(frozen=True)
class SampleDrawn:
    """New documents of a topic were drawn (and queued as HITs) for the given stratum key."""

    topic_id: int
    stratum_key: str = ""


@dataclass(frozen=True)
class ImportFinished:
    """A corpus upload finished importing (``succeeded``) or failed; ``corpus_id`` is None on failure."""

    upload_id: int
    corpus_id: int | None
    succeeded: bool


@dataclass(frozen=True)
class ModelJudgeFinished:
    """A model judge's run over a topic's sampled documents finished (issue 28): the report's judge block is stale."""

    topic_id: int
    run_id: int


Event = LabelsCompleted | LabelPosteriorsUpdated | SampleDrawn | ImportFinished | ModelJudgeFinished

__all__ = ["Event", "ImportFinished", "LabelPosteriorsUpdated", "LabelsCompleted", "SampleDrawn"]
