"""Issue 11: the report's judgment count, cost per judged document and recall history describe the
estimation sample; certification samples (tests/factories.add_samples_and_labels: documents 56..59)
are counted apart, in their own fields and block."""
from __future__ import annotations

from decimal import Decimal

import pytest
from django.utils import timezone

from annotation.models import Assignment, Hit, Judgment, Worker
from estimation.selectors import recall_history
from estimation.services.recompute import topic_snapshot_create
from estimation.services.reports import topic_report_build
from tests.factories import UserFactory, build_topic

pytestmark = pytest.mark.django_db

DRAWS, SEED = 2_000, 7


def _assignment(hit: Hit, slot: int) -> Assignment:
    worker = Worker.objects.create(user=UserFactory.create())
    return Assignment.objects.create(hit=hit, worker=worker, slot=slot, status="submitted", deadline=timezone.now())


def _judge(assignment: Assignment, docs: list[int]) -> None:
    for doc in docs:
        Judgment.objects.create(assignment=assignment, topic=assignment.hit.topic, document_id=doc,
                                worker=assignment.worker, relevant=True)


def _judgments(built):
    """Estimation HIT (0.30, two assignments on documents 20, 21), certification HIT (0.20, one assignment on
    56, 57) and a mixed HIT (0.10, one assignment on 22 and 58).  By hand: estimation judgments 2·2 + 1 = 5,
    certification 2 + 1 = 3; spent 2·0.30 + 0.20 + 0.10 = 0.90, of which certification 0.20 + 0.10·½ = 0.25."""
    docs, topic = built.docs, built.topic
    estimation = Hit.objects.create(topic=topic, reward=Decimal("0.30"))
    certification = Hit.objects.create(topic=topic, reward=Decimal("0.20"))
    mixed = Hit.objects.create(topic=topic, reward=Decimal("0.10"))
    for slot in range(2):
        _judge(_assignment(estimation, slot), [docs[20], docs[21]])
    _judge(_assignment(certification, 0), [docs[56], docs[57]])
    _judge(_assignment(mixed, 0), [docs[22], docs[58]])
    return certification


def test_judgment_count_and_cost_per_document_leave_certification_out():
    built = build_topic()
    _judgments(built)
    report = topic_report_build(topic=built.topic, draws=DRAWS, seed=SEED)
    assert report["schema"] >= 2
    assert report["judgments"] == 5
    assert report["certification_judgments"] == 3
    assert report["judgments_total"] == 8
    cost = report["cost"]
    assert cost["spent"] == pytest.approx(0.90)  # local crowd: no fees
    assert cost["certification_spent"] == pytest.approx(0.25)
    assert cost["estimation_spent"] == pytest.approx(0.65)
    assert cost["per_judged_document"] == pytest.approx(0.65 / report["judged_documents"])


def test_recall_history_counts_only_estimation_judgments():
    built = build_topic()
    certification = _judgments(built)
    topic_snapshot_create(topic_id=built.topic.pk, draws=DRAWS, seed=SEED)
    # More certification judgments: a new snapshot (the topic's total moved) but the estimation sample did not.
    _judge(_assignment(certification, 1), [built.docs[59]])
    second = topic_snapshot_create(topic_id=built.topic.pk, draws=DRAWS, seed=SEED)
    assert second.version == 2 and second.judgments == 9
    history = recall_history(topic=built.topic)
    assert set(history) == {built.c1.name, built.c2.name}
    for points in history.values():
        # One point (the second snapshot moved nothing the estimate uses), at the estimation count.
        assert [p["judgments"] for p in points] == [5]
        assert all(0.0 <= p[key] <= 1.0 for p in points for key in ("estimate", "low", "high"))
