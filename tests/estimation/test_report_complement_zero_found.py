"""Zero found in N is evidence (notes §9): the report gives a bound, never "noise-limited"
(tests/factories.build_topic: C1 = 0..29, C2 = 20..44 of 60, so N = documents 45..59)."""
from __future__ import annotations

import pytest

from annotation.models import SampleDraw
from estimation.services.reports import topic_report_build
from tests.factories import build_topic, make_draw, make_label

pytestmark = pytest.mark.django_db


def test_a_complement_sample_with_nothing_relevant_bounds_n_and_tests_the_assumption():
    built = build_topic()
    make_draw(built.topic, SampleDraw.Purpose.PAIR, "N", list(range(45, 50)), built.docs)
    for position in range(45, 50):
        make_label(built.topic, built.docs[position], relevant=False)
    report = topic_report_build(topic=built.topic, draws=2_000, seed=7)
    block = report["design_based"]
    # Unanimous votes: accuracy 1, so no false negatives and the plain exact bound 1 − 0.05^(1/5) = 0.451.
    assert block["label_noise_limited"] is False
    assert "complement_label_noise" not in {d["code"] for d in report["diagnostics"]}
    bound = block["complement_bound"]
    assert bound["found_none"] is True and bound["judged"] == 5 and bound["false_negative_rate"] == 0.0
    assert bound["elusion_upper_bound"] == pytest.approx(1 - 0.05 ** 0.2)
    assert bound["relevant_upper_bound"] == pytest.approx(15 * (1 - 0.05 ** 0.2))  # 6.8 of |N| = 15
    assert block["summary"].startswith(
        "None of the 5 judged documents neither classifier retrieved was relevant: at most 7 of the 15 "
        "documents neither classifier retrieved are relevant (95% confidence).")
    assert "judging errors" not in block["summary"]
    assert report["assumptions"]["tested"] is True
