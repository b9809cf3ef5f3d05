"""Issue 11: the complement sample N (documents neither classifier retrieved) reaches the report's
dependence check through the gathering code (tests/factories.build_topic: C1 = 0..29, C2 = 20..44 of 60)."""
from __future__ import annotations

import pytest

from annotation.models import SampleDraw
from estimation.services.inputs import topic_inputs_gather
from estimation.services.reports import topic_report_build
from estimation.stats import design_based
from tests.factories import build_topic, make_draw, make_label

pytestmark = pytest.mark.django_db


def test_the_complement_sample_is_gathered_with_its_size_and_feeds_the_design_based_block():
    built = build_topic()
    # |N| = 60 − |A1 ∪ A2| = 60 − 45 = 15 (documents 45..59); judged: 45..49, relevant 45 only; 44 is in C2.
    make_draw(built.topic, SampleDraw.Purpose.PAIR, "N", [45, 46, 47, 48, 49], built.docs)
    for position in range(45, 50):
        make_label(built.topic, built.docs[position], relevant=position == 45)
    inputs = topic_inputs_gather(topic=built.topic)
    sample = inputs.sample("N")
    assert sample is not None and (sample.size, sample.judged, sample.relevant) == (15, 5, 1.0)
    assert inputs.region_sizes["N"] == 15
    assert sample.votes == ((3, 3),) + ((0, 3),) * 4
    report = topic_report_build(topic=built.topic, draws=2_000, seed=7)
    assert {r["name"]: (r["size"], r["judged"]) for r in report["regions"]}["N"] == (15, 5)
    expected = design_based.design_based_recall(a12=(10, 6, 5.0), b1=(20, 9, 3.0), b2=(15, 7, 3.0), u=(15, 5, 1.0),
                                                confidence=0.95, draws=2_000, seed=7)
    block = report["design_based"]
    assert (block["C1"]["estimate"], block["C1"]["low"], block["C1"]["high"]) == (
        expected.r1.point, expected.r1.low, expected.r1.high)
    assert block["delta1"]["estimate"] == expected.delta1.point
    assert block["elusion"]["found"] == 1.0 and block["elusion"]["judged"] == 5
    assert report["assumptions"]["tested"] is True
    from estimation.services.report_csv import topic_report_csv

    rows = [line.split(",") for line in topic_report_csv(report=report).splitlines()]
    design_rows = [row for row in rows if row[0] == "design_based"]
    assert [row[2] for row in design_rows] == ["c1", "c2"]
    assert float(design_rows[0][9]) == pytest.approx(expected.r1.point, rel=1e-5)


def test_without_a_complement_sample_the_report_says_what_it_assumes():
    built = build_topic()
    report = topic_report_build(topic=built.topic, draws=2_000, seed=7)
    assert report["design_based"] is None
    assert report["assumptions"]["tested"] is False
    assert "dependence_band" not in {d["code"] for d in report["diagnostics"]}
