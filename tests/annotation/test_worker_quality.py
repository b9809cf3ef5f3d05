"""Worker-quality rows (issue 12 item 7): split votes per worker, block reason; block and unblock act on claims."""
from __future__ import annotations

import pytest

from annotation.models import Judgment
from annotation.selectors import topic_worker_quality_rows
from annotation.services.crowd.assignments import (
    ClaimRefused,
    assignment_claim,
    assignment_claim_for_hit,
    assignment_submit,
)
from annotation.services.crowd.gold import gold_add_from_judged
from annotation.services.crowd.workers import worker_block, worker_unblock
from annotation.services.sampling.draws import samples_launch
from tests.factories import make_pair_world, make_worker

pytestmark = pytest.mark.django_db


@pytest.fixture
def judged():
    """Every HIT of a small launch judged by two right workers and one always wrong; one HIT left open."""
    world = make_pair_world(n=400, prevalence=0.3, seed=21)
    launch = samples_launch(topic=world.topic, per_region=4, seed=1)
    good = [make_worker(f"good{i}") for i in range(2)]
    wrong = make_worker("wrong")
    for hit in launch.hits[:-1]:
        docs = list(hit.items.values_list("document_id", flat=True))
        for worker in good:
            a = assignment_claim_for_hit(worker=worker, hit=hit)
            assignment_submit(assignment_id=a.pk, worker=worker, answers={d: d in world.relevant for d in docs})
        a = assignment_claim_for_hit(worker=wrong, hit=hit)
        assignment_submit(assignment_id=a.pk, worker=wrong, answers={d: d not in world.relevant for d in docs})
    return world, good, wrong


def test_rows_count_split_votes_and_minority_per_worker(judged):
    world, good, wrong = judged
    rows = {r.quality.name: r for r in topic_worker_quality_rows(topic=world.topic)}
    judged_docs = Judgment.objects.filter(topic=world.topic, worker=wrong).count()
    assert judged_docs > 0
    # Every document is split 2–1: each worker has a split vote on all of theirs; only "wrong" is in the minority.
    assert rows["wrong"].split_votes == judged_docs and rows["wrong"].split_minority == judged_docs
    assert all(rows[w.user.username].split_votes == judged_docs and rows[w.user.username].split_minority == 0
               for w in good)
    assert rows["wrong"].quality.agreement == 0.0 and not rows["wrong"].quality.blocked


def test_gold_from_judged_counts_in_the_gold_accuracy(judged):
    world, good, wrong = judged
    doc = Judgment.objects.filter(topic=world.topic, worker=wrong).values_list("document_id", flat=True).first()
    gold_add_from_judged(topic=world.topic, document_id=doc, relevant=doc in world.relevant)
    rows = {r.quality.name: r for r in topic_worker_quality_rows(topic=world.topic)}
    assert (rows["wrong"].quality.gold_answered, rows["wrong"].quality.gold_correct) == (1, 0)
    assert (rows["good0"].quality.gold_answered, rows["good0"].quality.gold_correct) == (1, 1)
    # The gold document leaves the split votes (its label no longer counts).
    assert rows["wrong"].split_votes == Judgment.objects.filter(topic=world.topic, worker=wrong).count() - 1


def test_blocked_worker_cannot_claim_until_unblocked(judged):
    world, _, wrong = judged
    fresh = make_worker("fresh")
    worker_block(worker=fresh, reason="copied answers <b>")
    rows = {r.quality.name: r for r in topic_worker_quality_rows(topic=world.topic)}
    assert "fresh" not in rows  # no judgment in the topic: not a row
    with pytest.raises(ClaimRefused, match="copied answers"):
        assignment_claim(worker=fresh, topic=world.topic)
    worker_unblock(worker=fresh)
    assert assignment_claim(worker=fresh, topic=world.topic) is not None

    worker_block(worker=wrong, reason="always wrong")
    row = next(r for r in topic_worker_quality_rows(topic=world.topic) if r.quality.name == "wrong")
    assert row.quality.blocked and row.blocked_reason == "always wrong"
    before = Judgment.objects.filter(worker=wrong).count()
    with pytest.raises(ClaimRefused):
        assignment_claim(worker=wrong, topic=world.topic)
    assert Judgment.objects.filter(worker=wrong).count() == before  # existing judgments stay
