"""Real threads against PostgreSQL: annotators racing for the last places of the HITs.

Skipped on SQLite (it serialises writers, so there is no race to test) — but a
failure, not a skip, when REQUIRE_POSTGRES=1.
"""
import threading
from collections import Counter
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from annotation.models import Assignment, Hit, HitItem, Judgment, Label
from annotation.services.crowd.assignments import assignment_claim, assignment_submit, assignments_expire
from annotation.services.sampling.draws import samples_launch
from tests.factories import make_pair_world, make_worker, require_postgres

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def _postgres_only():
    require_postgres()


@pytest.fixture(autouse=True)
def _count_recomputes(monkeypatch):
    # The recompute itself is the estimation code's (and eager in tests); here only the scheduling matters.
    calls = Counter()
    lock = threading.Lock()

    def schedule(*, topic_id):
        with lock:
            calls[topic_id] += 1

    monkeypatch.setattr("estimation.receivers.topic_recompute_schedule", schedule)
    return calls


def _race(workers, topic, *, now=None, errors):
    barrier = threading.Barrier(len(workers))
    done = Counter()

    def annotate(worker):
        try:
            barrier.wait()
            while True:
                assignment = assignment_claim(worker=worker, topic=topic, now=now)
                if assignment is None:
                    return
                docs = HitItem.objects.filter(hit_id=assignment.hit_id).values_list("document_id", flat=True)
                answers = {d: d % 2 == 0 for d in docs}
                result = assignment_submit(assignment_id=assignment.pk, worker=worker, answers=answers, now=now)
                # A double click from the same worker at the same time: must not record twice.
                assignment_submit(assignment_id=assignment.pk, worker=worker, answers=answers, now=now)
                done[worker.pk] += result.judgments
        except Exception as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(repr(exc))
        finally:
            connection.close()

    threads = [threading.Thread(target=annotate, args=(w,)) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "an annotator thread hung"
    return done


def _assert_every_hit_judged_exactly_three_times(topic):
    for hit in Hit.objects.filter(topic=topic):
        submitted = Assignment.objects.filter(hit=hit, status="submitted")
        assert submitted.count() == 3, f"HIT {hit.pk} has {submitted.count()} submitted assignments"
        assert len({a.worker_id for a in submitted}) == 3
        assert hit.completed_assignments == 3 and hit.status == Hit.Status.COMPLETE
    per_doc = Counter(Judgment.objects.filter(topic=topic).values_list("document_id", flat=True))
    sampled = set(HitItem.objects.filter(topic=topic).values_list("document_id", flat=True))
    assert set(per_doc) == sampled  # none lost
    assert set(per_doc.values()) == {3}  # none judged more than three times
    pairs = Counter(Judgment.objects.filter(topic=topic).values_list("worker_id", "document_id"))
    assert max(pairs.values()) == 1  # no worker judged a document twice
    assert set(Label.objects.filter(topic=topic).values_list("votes_total", flat=True)) == {3}
    assert not Label.objects.filter(topic=topic, majority__isnull=True).exists()


def test_fifty_annotators_race_for_the_last_slots(_count_recomputes):
    world = make_pair_world(n=800, prevalence=0.2, seed=12)
    launch = samples_launch(topic=world.topic, per_region=10, seed=1)  # 30 documents → 6 HITs → 18 places
    # Two places of every HIT already taken: the racers fight over the last one.
    early = [make_worker() for _ in range(2)]
    for w in early:
        while (a := assignment_claim(worker=w, topic=world.topic)) is not None:
            docs = HitItem.objects.filter(hit_id=a.hit_id).values_list("document_id", flat=True)
            assignment_submit(assignment_id=a.pk, worker=w, answers=dict.fromkeys(docs, True))
    assert Assignment.objects.filter(status="submitted").count() == 2 * len(launch.hits)

    racers = [make_worker() for _ in range(50)]
    errors: list[str] = []
    done = _race(racers, world.topic, errors=errors)
    assert errors == []
    _assert_every_hit_judged_exactly_three_times(world.topic)
    assert sum(1 for v in done.values() if v) == len(launch.hits)  # one place per HIT was left
    assert _count_recomputes[world.topic.pk] == len(launch.hits)


def test_racing_from_scratch_with_abandoned_assignments_expiring():
    world = make_pair_world(n=800, prevalence=0.2, seed=13)
    samples_launch(topic=world.topic, per_region=20, seed=2)  # 60 documents → 12 HITs → 36 places
    now = timezone.now()
    quitters = [make_worker() for _ in range(8)]
    abandoned = [assignment_claim(worker=w, topic=world.topic, now=now) for w in quitters]
    assert all(abandoned)
    later = now + timedelta(hours=1)
    errors: list[str] = []
    _race([make_worker() for _ in range(50)], world.topic, now=later, errors=errors)
    assert errors == []
    assert assignments_expire(now=later) == 0  # the claims already expired them lazily
    assert Assignment.objects.filter(pk__in=[a.pk for a in abandoned], status="expired").count() == 8
    _assert_every_hit_judged_exactly_three_times(world.topic)


def test_double_click_on_take_next_hit_takes_one_hit():
    world = make_pair_world(n=800, prevalence=0.2, seed=14)
    samples_launch(topic=world.topic, per_region=10, seed=3)
    worker = make_worker()
    barrier = threading.Barrier(6)
    claimed, errors = [], []

    def click():
        try:
            barrier.wait()
            claimed.append(assignment_claim(worker=worker, topic=world.topic).pk)
        except Exception as exc:  # noqa: BLE001
            errors.append(repr(exc))
        finally:
            connection.close()

    threads = [threading.Thread(target=click) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert errors == []
    assert len(claimed) == 6 and len(set(claimed)) == 1
    assert Assignment.objects.filter(worker=worker).count() == 1
