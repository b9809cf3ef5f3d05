"""The dependence check corrected for label error (Rogan–Gladen at the workers' estimated accuracy, notes §3).

Same world as test_report_complement_noise.py: independent classifiers at 2% prevalence, three workers at 0.85,
N about 0.5% relevant, so a majority's false positives (≈ 6% of N) outnumber N's relevant documents.  Before the
correction the design-based recall of C1 was far below the truth; corrected, its interval holds it, and the
headline may lead with it.
"""
from __future__ import annotations

import pytest

from estimation.services.reports import topic_report_build
from tests.factories import judge_with_simulated_votes as _judge
from tests.factories import make_pair_world

pytestmark = pytest.mark.django_db


@pytest.mark.slow
def test_the_corrected_design_block_holds_the_true_recall_and_leads_the_headline():
    from annotation.services.sampling.draws import samples_draw

    world = make_pair_world(n=6000, prevalence=0.02, recall1=0.7, recall2=0.6, noise=0.005, seed=11)
    samples_draw(topic=world.topic, per_region=60, complement=400, seed=3)
    _judge(world, accuracy=0.85, seed=5)
    report = topic_report_build(topic=world.topic, draws=4_000, seed=7)
    block = report["design_based"]
    error = block["label_error"]
    assert error is not None and error["corrected"] is True and error["method"] == "rogan_gladen"
    assert 0.75 < error["worker_accuracy"] < 0.95
    assert "Rogan–Gladen" in block["technical"] and "Rogan–Gladen" in block["C1"]["method"]
    for key, which in (("C1", 1), ("C2", 2)):
        assert block[key]["low"] <= world.true_recall(which) <= block[key]["high"], (key, block[key])
    # Still noise-limited (errors alone could produce N's count): not a test of the assumption ...
    assert block["label_noise_limited"] is True and block["independence_rejected"] is False
    assert "corrected" in block["summary"]
    # ... but a corrected recall, so the headline leads with it and says it was corrected.
    for row in report["classifiers"][:2]:
        h = row["headline"]
        assert h["basis"] == "design", h
        assert "Corrected for the workers' judging errors" in h["statement"]


def test_split_votes_switch_the_correction_on_and_unanimous_ones_leave_the_report_as_it_was():
    from annotation.models import SampleDraw
    from estimation.services import report_dependence
    from estimation.services.inputs import topic_inputs_gather
    from tests.factories import build_topic, make_draw, make_label

    built = build_topic()
    make_draw(built.topic, SampleDraw.Purpose.PAIR, "N", [45, 46, 47, 48, 49], built.docs)
    for position in range(45, 50):
        make_label(built.topic, built.docs[position], relevant=position == 45,
                   votes={45: (2, 3), 46: (1, 3)}.get(position))
    inputs = topic_inputs_gather(topic=built.topic)
    check = report_dependence.dependence_check_run(inputs=inputs, probabilities=None, confidence=0.95,
                                                   draws=2_000, seed=7)
    assert check.corrected and check.label_error is not None
    assert check.label_error.accuracy_point is not None and 0.5 < float(check.label_error.accuracy_point) < 1.0
    report = topic_report_build(topic=built.topic, draws=2_000, seed=7)
    block = report["design_based"]
    assert block["label_error"]["corrected"] is True
    assert block["label_error"]["worker_accuracy"] == pytest.approx(float(check.label_error.accuracy_point))
    assert all(row["headline"]["basis"] == "design" for row in report["classifiers"][:2])
