"""Annotation announces facts after commit (annotation/events.py over core/events.py); here: a launch announces SampleDrawn."""
from __future__ import annotations

import pytest

from annotation.events import SampleDrawn
from annotation.services.sampling.draws import samples_launch
from core import events
from tests.factories import make_pair_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def heard():
    received: list[SampleDrawn] = []

    def listener(event: SampleDrawn) -> None:
        received.append(event)

    events.event_subscribe(SampleDrawn)(listener)
    yield received
    events._subscribers[SampleDrawn].remove(listener)


def test_a_launch_announces_sample_drawn_once_after_commit(heard, django_capture_on_commit_callbacks):
    world = make_pair_world(n=600, prevalence=0.1, seed=4)
    with django_capture_on_commit_callbacks(execute=True):
        launch = samples_launch(topic=world.topic, per_region=5, seed=1, publish=False)
        assert heard == []  # nothing before the commit
    assert launch.documents > 0
    assert heard == [SampleDrawn(topic_id=world.topic.pk, stratum_key="")]


def test_a_launch_that_draws_nothing_announces_nothing(heard, django_capture_on_commit_callbacks):
    world = make_pair_world(n=600, prevalence=0.1, seed=4)
    with django_capture_on_commit_callbacks(execute=True):
        samples_launch(topic=world.topic, per_region=5, seed=1, publish=False)
    heard.clear()
    with django_capture_on_commit_callbacks(execute=True):
        again = samples_launch(topic=world.topic, per_region=5, seed=1, publish=False)  # same totals: no new draw
    assert again.documents == 0 and heard == []


def test_an_event_nobody_listens_to_is_not_queued(django_capture_on_commit_callbacks):
    world = make_pair_world(n=600, prevalence=0.1, seed=4)
    assert not events._subscribers.get(SampleDrawn)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        samples_launch(topic=world.topic, per_region=5, seed=1, publish=False)
    assert not [c for c in callbacks if isinstance(c, events._Delivery)]
