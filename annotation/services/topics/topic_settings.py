"""Topic settings the analyst pages change after `topic_create`: crowd, reward, budget, goal; pause/resume.

Pausing works because HITs are handed out only for active topics
(annotation.services.crowd.assignments); assignments already claimed may still be submitted.
"""
from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any, ClassVar, Final

from django.db import transaction

from annotation.models import Classifier, Corpus, Topic
from annotation.services.crowd.hits import topic_committed_cost
from annotation.services.topics.topic import topic_create, topic_scorer_set
from core.errors import ApplicationError

# The settings topic_settings_update always sets (the others — instructions, target recall, unsure — only when given).
TOPIC_SETTINGS = ("confidence", "crowd", "aggregator", "hit_size", "reward_per_hit", "budget")


class _Keep(enum.Enum):
    KEEP = "keep"


# topic_settings_update(scorer=KEEP): leave the scorer as it is (None clears it).
KEEP: Final = _Keep.KEEP


class TopicStatusError(ApplicationError):
    http_status: ClassVar[int] = 409
    code: ClassVar[str] = "conflict"


def topic_settings_update(*, topic: Topic, confidence: float, crowd: str, aggregator: str, hit_size: int,
                          reward_per_hit: Decimal, budget: Decimal | None, instructions: str | None = None,
                          target_recall: float | None = None, allow_unsure: bool | None = None,
                          scorer: Classifier | None | _Keep = KEEP) -> Topic:
    """Set the goal, crowd and money settings of a topic (the database's check constraints guard the ranges).

    Instructions may change at any time (new HITs show the new text); the crowd and the
    HIT size only while the topic is a draft, since HITs already exist afterwards. A budget
    below what the topic's HITs already commit is refused with both amounts (issue 12). `scorer`
    (None clears it; KEEP, the default, leaves it) is set by ``topic_scorer_set``, with its checks.
    """
    if crowd not in Topic.Crowd.values:
        raise TopicStatusError(f"unknown crowd {crowd!r}")
    if aggregator not in Topic.Aggregator.values:
        raise TopicStatusError(f"unknown aggregator {aggregator!r}")
    with transaction.atomic():
        locked = Topic.objects.select_for_update().get(pk=topic.pk)
        if locked.status != Topic.Status.DRAFT and (locked.hit_size != hit_size or locked.crowd != crowd):
            raise TopicStatusError("the crowd and the HIT size cannot change once sampling has started")
        if budget is not None:
            # Under the topic's lock, as hits_create_for_draws checks the budget: no launch slips in between.
            committed = topic_committed_cost(topic=locked)
            if budget < committed:
                raise TopicStatusError(
                    f"A budget of ${budget:.2f} is below the ${committed:.2f} already committed to this topic's "
                    f"HITs (their rewards and crowd fees if every assignment is done). Set at least ${committed:.2f}, "
                    "or leave the budget empty for no limit."
                )
        fields = dict(confidence=confidence, crowd=crowd, aggregator=aggregator, hit_size=hit_size,
                      reward_per_hit=reward_per_hit, budget=budget)
        if instructions is not None:
            fields["instructions"] = instructions
        if target_recall is not None:
            fields["target_recall"] = target_recall
        if allow_unsure is not None:  # may change at any time: new HITs offer it (or not) from now on
            fields["allow_unsure"] = allow_unsure
        Topic.objects.filter(pk=topic.pk).update(**fields)
        if not isinstance(scorer, _Keep):
            topic_scorer_set(topic=locked, scorer=scorer)
    topic.refresh_from_db()
    return topic


def topic_settings_change(*, topic: Topic, changes: Mapping[str, Any]) -> Topic:
    """topic_settings_update with only the settings in `changes`: absent ones keep their value."""
    current = {name: getattr(topic, name) for name in TOPIC_SETTINGS}
    given = {name: value for name, value in changes.items() if name in TOPIC_SETTINGS}
    return topic_settings_update(topic=topic, **{**current, **given}, instructions=changes.get("instructions"),
                                 target_recall=changes.get("target_recall"), allow_unsure=changes.get("allow_unsure"),
                                 scorer=changes["scorer"] if "scorer" in changes else KEEP)


def topic_create_with_settings(*, corpus: Corpus, name: str, c1: Classifier, c2: Classifier, instructions: str = "",
                               target_recall: float = 0.8, seed_terms: Sequence[str] = (),
                               extra_classifiers: Sequence[Classifier] = (),
                               settings: Mapping[str, Any] | None = None, scorer: Classifier | None = None) -> Topic:
    """A draft topic (topic_create) with its crowd and money `settings` (topic_settings_change), all or nothing."""
    with transaction.atomic():
        topic = topic_create(corpus=corpus, name=name, c1=c1, c2=c2, instructions=instructions,
                             target_recall=target_recall, seed_terms=seed_terms, extra_classifiers=extra_classifiers,
                             scorer=scorer)
        if settings:
            topic = topic_settings_change(topic=topic, changes=settings)
    return topic


def _move(*, topic: Topic, source: str, target: str, refusal: str) -> Topic:
    with transaction.atomic():
        updated = Topic.objects.filter(pk=topic.pk, status=source).update(status=target)
    topic.refresh_from_db(fields=["status"])
    if not updated and topic.status != target:
        raise TopicStatusError(refusal.format(status=topic.get_status_display().lower()))
    return topic


def topic_pause(*, topic: Topic) -> Topic:
    """Stop handing out HITs of a sampling topic; idempotent."""
    return _move(topic=topic, source=Topic.Status.ACTIVE, target=Topic.Status.PAUSED,
                 refusal="only a topic that is sampling can be paused (this one is {status})")


def topic_resume(*, topic: Topic) -> Topic:
    """Hand out HITs again; idempotent. An archived topic stays closed until it is unarchived."""
    if Topic.objects.filter(pk=topic.pk, archived_at__isnull=False).exists():
        raise TopicStatusError(f"Topic “{topic.name}” is archived: unarchive it first (it comes back paused).")
    return _move(topic=topic, source=Topic.Status.PAUSED, target=Topic.Status.ACTIVE,
                 refusal="only a paused topic can be resumed (this one is {status})")
