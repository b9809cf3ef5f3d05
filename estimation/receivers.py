"""Estimation's subscriptions to annotation's domain events (annotation/events.py, on the bus of core/events.py).

Each receiver only schedules tasks; the work happens in the tasks.  Connected
once, in ``EstimationConfig.ready``.  Deciding certifications is scheduled before
the recompute, so that with in-process tasks the new report already carries a
fresh verdict.
"""
from __future__ import annotations

from annotation.events import LabelPosteriorsUpdated, LabelsCompleted, ModelJudgeFinished
from core.events import event_subscribe
from estimation.services.certification_verdicts import certifications_decide_schedule
from estimation.services.recompute import topic_recompute_schedule


@event_subscribe(LabelsCompleted)
def labels_completed(event: LabelsCompleted) -> None:
    """New complete labels: a locked certification may now be decidable, and the report is stale."""
    certifications_decide_schedule(topic_id=event.topic_id)
    topic_recompute_schedule(topic_id=event.topic_id)


@event_subscribe(LabelPosteriorsUpdated)
def label_posteriors_updated(event: LabelPosteriorsUpdated) -> None:
    """New Dawid–Skene posteriors: the report is stale."""
    topic_recompute_schedule(topic_id=event.topic_id)


@event_subscribe(ModelJudgeFinished)
def model_judge_finished(event: ModelJudgeFinished) -> None:
    """A model judge's run finished: the report's judge block is stale."""
    topic_recompute_schedule(topic_id=event.topic_id)
