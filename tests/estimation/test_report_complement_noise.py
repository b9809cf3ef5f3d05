"""The dependence check under crowd noise (issue 11 review on the demo corpus).

Region N (documents neither classifier retrieved) holds few relevant documents, so judging errors can be as
many as the relevant ones (notes §3: three workers at 0.9 mark 2.8% of irrelevant documents relevant).
On the demo topic, 13 of 400 N documents were majority-relevant while the truth was about 0.3: the report
then claimed "the classifiers tend to find the same relevant documents" and showed a recall of 0.136 for a
classifier whose recall was 0.650.  The check must not read judging errors as dependence.
"""
from __future__ import annotations

import pytest

from annotation.services.sampling.draws import samples_draw
from estimation.services.reports import topic_report_build
from estimation.stats.design_based import complement_noise_floor, majority_false_positive_rate
from tests.factories import judge_with_simulated_votes as _judge
from tests.factories import make_pair_world

pytestmark = pytest.mark.django_db


def test_majority_false_positive_rate_matches_the_notes():
    # Notes §3: a majority of three workers who are each 80% accurate is wrong 10.4% of the time (90%: 2.8%).
    assert majority_false_positive_rate(accuracy=0.8) == pytest.approx(0.104)
    assert majority_false_positive_rate(accuracy=0.9) == pytest.approx(0.028)
    assert majority_false_positive_rate(accuracy=1.0) == 0.0


def test_noise_floor_separates_errors_from_a_real_excess():
    # The demo topic: 13 of 400 at accuracy 0.894 -> about 12.6 expected from errors alone.
    demo = complement_noise_floor(judged=400, majority_relevant=13, worker_accuracy=0.894)
    assert demo.noise_limited and 12 < demo.expected_false_positives < 13.5
    # Forty of 400 is far above what errors give (p < 1e-9).
    real = complement_noise_floor(judged=400, majority_relevant=40, worker_accuracy=0.9)
    assert not real.noise_limited and real.p_value < 1e-9
    with pytest.raises(ValueError):
        complement_noise_floor(judged=10, majority_relevant=11, worker_accuracy=0.9)


@pytest.mark.slow
def test_judging_errors_in_the_complement_are_not_reported_as_dependence():
    # Independent classifiers at 2% prevalence: N holds few relevant documents (about 0.5% of N).
    world = make_pair_world(n=6000, prevalence=0.02, recall1=0.7, recall2=0.6, noise=0.005, seed=11)
    samples_draw(topic=world.topic, per_region=60, complement=400, seed=3)
    _judge(world, accuracy=0.85, seed=5)
    report = topic_report_build(topic=world.topic, draws=4_000, seed=7)
    block = report["design_based"]
    codes = {d["code"] for d in report["diagnostics"]}
    assert block["label_noise_limited"] is True and block["independence_rejected"] is False
    assert "complement_label_noise" in codes and "independence_rejected" not in codes
    assert report["assumptions"]["tested"] is False  # the sample could not test it
    assert block["noise_floor"]["expected_false_positives"] > 10
    # What the majority labels alone said (the behaviour before): N's relevant count read as missed documents.
    from estimation.stats.design_based import design_based_recall

    sizes = {r["name"]: r for r in report["regions"]}
    majority = design_based_recall(
        a12=(sizes["A12"]["size"], sizes["A12"]["judged"], sizes["A12"]["relevant"]),
        b1=(sizes["B1"]["size"], sizes["B1"]["judged"], sizes["B1"]["relevant"]),
        b2=(sizes["B2"]["size"], sizes["B2"]["judged"], sizes["B2"]["relevant"]),
        u=(sizes["N"]["size"], sizes["N"]["judged"], sizes["N"]["relevant"]), draws=4_000, seed=7)
    assert majority.independence_rejected and majority.r1.high < world.true_recall(1) - 0.1


@pytest.mark.slow
def test_a_complement_full_of_unanimously_relevant_documents_is_still_evidence():
    # Classifiers that miss most relevant documents together: N is rich in relevant documents (20% of the
    # corpus is relevant; each classifier finds only 30%), and careful workers (0.97) agree on them.
    world = make_pair_world(n=3000, prevalence=0.2, recall1=0.3, recall2=0.3, noise=0.002, seed=12)
    samples_draw(topic=world.topic, per_region=60, complement=300, seed=3)
    _judge(world, accuracy=0.97, seed=6)
    report = topic_report_build(topic=world.topic, draws=4_000, seed=7)
    assert report["design_based"]["label_noise_limited"] is False
    assert "complement_label_noise" not in {d["code"] for d in report["diagnostics"]}
