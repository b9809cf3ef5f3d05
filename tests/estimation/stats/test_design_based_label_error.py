"""The Rogan–Gladen label-error correction of the design-based recall (notes §3; design_based.LabelError).

Rogan & Gladen (1978): with se = 1 − fn and sp = 1 − fp of the labels, a region's true share is
π = (q + sp − 1)/(se + sp − 1), q the labelled share.  Coverage under simulated crowds:
test_design_based_coverage.py.
"""
import numpy as np
import pytest

from estimation.stats.design_based import (
    design_based_recall,
    design_based_recall_arrays,
    label_error_from_accuracy,
    label_error_from_votes,
    majority_false_positive_rate,
)

REGIONS_IN = {"a12": (400, 100, 90), "b1": (300, 100, 50), "b2": (300, 100, 50), "u": (19_000, 1_000, 64)}


def test_perfect_workers_reduce_exactly_to_the_plain_estimate():
    plain = design_based_recall(**REGIONS_IN, draws=3_000, seed=5)
    votes = [(3, 3)] * 50 + [(0, 3)] * 50  # unanimous: accuracy 1, fp = fn = 0
    error = label_error_from_votes(votes=votes, draws=3_000, seed=1)
    assert error is not None and error.perfect and error.accuracy_point == 1.0
    corrected = design_based_recall(**REGIONS_IN, draws=3_000, seed=5, label_error=error)
    assert corrected.as_dict() == plain.as_dict()
    sizes = {"A12": 400, "B1": 300, "B2": 300, "U": 19_000}
    judged = {"A12": 100, "B1": 100, "B2": 100, "U": 1_000}
    found = {"A12": 90, "B1": 50, "B2": 50, "U": 64}
    a = design_based_recall_arrays(sizes=sizes, judged=judged, relevant=found, draws=2_000,
                                   rng=np.random.default_rng(3))
    b = design_based_recall_arrays(sizes=sizes, judged=judged, relevant=found, draws=2_000,
                                   rng=np.random.default_rng(3),
                                   label_error=label_error_from_accuracy(accuracy_draws=np.ones(2_000),
                                                                         accuracy_point=1.0))
    assert (a.low, a.high, a.point) == (b.low, b.high, b.point)


def test_the_point_is_rogan_gladen_by_hand():
    # Three workers at 0.85: fp = fn = 3·0.15²·0.85 + 0.15³ = 0.06075.  N: q = 64/1,000 → π = (0.064 − 0.06075)/
    # (1 − 0.1215) = 0.0036995; A12: q = 0.9 → (0.9 − 0.06075)/0.8785 = 0.95532; B1 = B2: (0.5 − 0.06075)/0.8785 = 0.5.
    fp = majority_false_positive_rate(accuracy=0.85)
    assert fp == pytest.approx(0.06075)
    error = label_error_from_accuracy(accuracy_draws=np.full(4_000, 0.85), accuracy_point=0.85)
    result = design_based_recall(**REGIONS_IN, draws=4_000, seed=2, label_error=error)
    t12, t1, t2, tu = 400 * (0.9 - fp) / (1 - 2 * fp), 150.0, 150.0, 19_000 * (0.064 - fp) / (1 - 2 * fp)
    assert result.r1.point == pytest.approx((t12 + t1) / (t12 + t1 + t2 + tu))
    assert result.elusion.point == pytest.approx((0.064 - fp) / (1 - 2 * fp))
    plain = design_based_recall(**REGIONS_IN, draws=4_000, seed=2)
    assert plain.r1.point < 0.45 < result.r1.point  # 1,216 labelled relevant in N against ~70 true
    assert result.r1.low <= result.r1.point <= result.r1.high
    assert "Rogan–Gladen" in result.r1.method
    # Truncation: a labelled share below fp gives π = 0, never negative.
    low = design_based_recall(**{**REGIONS_IN, "u": (19_000, 1_000, 20)}, draws=4_000, seed=2, label_error=error)
    assert low.t_u.point == 0.0 and low.t_u.low == 0.0


def test_accuracy_from_votes_and_its_uncertainty():
    rng = np.random.default_rng(0)
    right = rng.binomial(3, 0.85, size=2_000)
    truly = rng.random(2_000) < 0.3
    votes = [(int(r) if t else 3 - int(r), 3) for r, t in zip(right, truly, strict=True)]
    error = label_error_from_votes(votes=votes, draws=4_000, seed=1)
    assert error is not None
    assert error.accuracy_point == pytest.approx(0.85, abs=0.01)
    assert float(np.mean(error.false_positive)) == pytest.approx(0.06075, abs=0.008)
    assert 0.002 < float(np.std(error.false_positive)) < 0.01
    assert np.array_equal(error.false_positive, error.false_negative)
    assert label_error_from_votes(votes=[(1, 1)], draws=10) is None


def test_label_error_needs_one_draw_per_monte_carlo_draw():
    error = label_error_from_accuracy(accuracy_draws=np.full(10, 0.9), accuracy_point=0.9)
    with pytest.raises(ValueError, match="draws"):
        design_based_recall(**REGIONS_IN, draws=500, seed=0, label_error=error)
