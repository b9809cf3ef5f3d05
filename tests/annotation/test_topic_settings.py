"""Topic settings after creation, and pause/resume."""
from decimal import Decimal

import pytest

from annotation.models import Topic
from annotation.services.topics.topic_settings import TopicStatusError, topic_pause, topic_resume, topic_settings_update
from tests.factories import TopicFactory

SETTINGS = dict(confidence=0.9, crowd="mturk", aggregator="dawid_skene", hit_size=8, reward_per_hit=Decimal("0.25"),
                budget=Decimal("40"))


@pytest.mark.django_db
def test_a_draft_takes_every_setting():
    topic = topic_settings_update(topic=TopicFactory.create(), instructions="Read carefully", target_recall=0.7, **SETTINGS)
    assert (topic.crowd, topic.hit_size, topic.budget, topic.instructions, topic.target_recall) == \
        ("mturk", 8, Decimal("40.00"), "Read carefully", 0.7)


@pytest.mark.django_db
def test_crowd_and_hit_size_are_fixed_once_sampling_started():
    topic = TopicFactory.create(status=Topic.Status.ACTIVE)
    with pytest.raises(TopicStatusError):
        topic_settings_update(topic=topic, **SETTINGS)
    topic.refresh_from_db()
    assert topic.crowd == "local" and topic.hit_size == 5
    same = {**SETTINGS, "crowd": "local", "hit_size": 5}
    assert topic_settings_update(topic=topic, **same).budget == Decimal("40.00")


@pytest.mark.django_db
def test_unknown_choices_are_refused():
    with pytest.raises(TopicStatusError):
        topic_settings_update(topic=TopicFactory.create(), **{**SETTINGS, "crowd": "pigeons"})


@pytest.mark.django_db
def test_pause_and_resume_are_idempotent_and_refused_for_a_draft():
    topic = TopicFactory.create(status=Topic.Status.ACTIVE)
    assert topic_pause(topic=topic).status == "paused"
    assert topic_pause(topic=topic).status == "paused"
    assert topic_resume(topic=topic).status == "active"
    assert topic_resume(topic=topic).status == "active"
    with pytest.raises(TopicStatusError):
        topic_pause(topic=TopicFactory.create())


@pytest.mark.django_db
def test_a_budget_below_what_the_hits_commit_is_refused_with_both_amounts():
    # Issue 12 item 5: it used to save silently. Four local HITs at $0.10 × 3 assignments commit $1.20.
    from annotation.models import Hit

    topic = TopicFactory.create(status=Topic.Status.ACTIVE)
    for _ in range(4):
        Hit.objects.create(topic=topic, reward=Decimal("0.10"), max_assignments=3)
    Hit.objects.create(topic=topic, reward=Decimal("0.10"), max_assignments=3, status=Hit.Status.CANCELLED)
    same = {**SETTINGS, "crowd": "local", "hit_size": 5}
    with pytest.raises(TopicStatusError, match=r"\$1\.00 is below the \$1\.20 already committed"):
        topic_settings_update(topic=topic, **{**same, "budget": Decimal("1.00")})
    topic.refresh_from_db()
    assert topic.budget is None
    assert topic_settings_update(topic=topic, **{**same, "budget": Decimal("1.20")}).budget == Decimal("1.20")
    assert topic_settings_update(topic=topic, **{**same, "budget": None}).budget is None
