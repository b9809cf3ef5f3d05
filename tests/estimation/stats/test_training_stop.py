"""When to stop training (seed 004 Sec. 3.3 and Sec. 6): s_j, c_j, the fitted curve, the advice, and the
sequential-bias margin measured by simulation.

Expected sizes are computed here from the normal-approximation formula of notes §6, written out by hand
(D = (z_{1−α} + z_{1−β})² F(1 − F)(2 − F) / (F − τ)² relevant-or-retrieved documents, (π + ρ) of them per
document), never by calling the code under test.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from estimation.stats.certification import certification_passes
from estimation.stats.training_stop import (
    CONTINUE,
    NOT_REACHABLE,
    STOP,
    LearningPoint,
    certification_size_for_f1,
    f1_lower_bound,
    point_sizing,
    training_stop_advice,
)


def hand_size(f: float, tau: float, alpha: float, power: float, per_document: float) -> int:
    z = norm.ppf(1 - alpha) + norm.ppf(power)
    return math.ceil(z * z * f * (1 - f) * (2 - f) / (f - tau) ** 2 / per_document)


def hand_low(f: float, cv: int, per_document: float, confidence: float) -> float:
    return f - norm.ppf(confidence) * math.sqrt(f * (1 - f) * (2 - f) / (per_document * cv))


def curve(r: float) -> float:
    """A synthetic learning curve: F(r) = 0.85 − 0.9 r^(−1/2) (0.76 at 100 documents, 0.832 at 2,500)."""
    return 0.85 - 0.9 * r ** -0.5


def true_minimum(confidence: float) -> tuple[int, int]:
    """(r, c) at the lowest c(r) = r + s(r) along the true curve, by hand on a 5-document grid."""
    grid = range(100, 16_001, 5)
    totals: list[float] = []
    for r in grid:
        low = hand_low(curve(r), r, 0.2, confidence)
        totals.append(r + hand_size(low, 0.75, 0.05, 0.93, 0.2) if low > 0.75 else math.inf)
    best = min(range(len(totals)), key=totals.__getitem__)
    return grid[best], int(totals[best])


# ------------------------------------------------------------------ one point, by hand


def test_size_at_a_known_f1_is_the_normal_approximation_formula():
    # F = 0.80, τ = 0.75, α = 0.05, power 0.93, π = ρ = 0.1 (0.2 relevant-or-retrieved per document):
    # z = 1.6449 + 1.4758 = 3.1207; D = 9.739 × 0.8·0.2·1.2 / 0.0025 = 747.9; / 0.2 → 3,740 documents.
    assert hand_size(0.80, 0.75, 0.05, 0.93, 0.2) == 3740
    got = certification_size_for_f1(f1=0.80, target=0.75, alpha=0.05, power=0.93, prevalence=0.1,
                                    retrieved_fraction=0.1)
    assert abs(got - 3740) <= 1  # the pseudo-counts round F1 at the 1e-9 level


def test_a_classifier_retrieving_more_than_is_relevant_needs_fewer_documents_per_d():
    # π = 0.1, ρ = 0.3: 0.4 relevant-or-retrieved per document, half the documents of the ρ = 0.1 case.
    got = certification_size_for_f1(f1=0.30, target=0.25, alpha=0.05, power=0.9, prevalence=0.1,
                                    retrieved_fraction=0.3)
    assert abs(got - hand_size(0.30, 0.25, 0.05, 0.9, 0.4)) <= 1


def test_an_f1_impossible_at_the_prevalence_is_refused():
    # π = 0.1, ρ = 0.3: TP ≤ 0.1 so F1 ≤ 2·0.1 / 0.4 = 0.5.
    with pytest.raises(ValueError, match="impossible"):
        certification_size_for_f1(f1=0.6, target=0.5, alpha=0.05, power=0.9, prevalence=0.1, retrieved_fraction=0.3)


def test_point_sizing_uses_the_lower_bound_of_the_cross_validated_estimate():
    # 2,000 training documents, F̂ = 0.82, π = ρ = 0.1: D = 400; sd = sqrt(0.82·0.18·1.18/400) = 0.02085;
    # the 90% bound is 0.82 − 1.2816 × 0.02085 = 0.7933.
    low = hand_low(0.82, 2000, 0.2, 0.90)
    assert low == pytest.approx(0.7933, abs=1e-4)
    sized = point_sizing(point=LearningPoint(2000, 0.82), target=0.75, alpha=0.05, power=0.93, prevalence=0.1,
                         retrieved_fraction=0.1, margin_confidence=0.90, budget=10_000, cost_per_annotation=2.0)
    assert sized.lower_bound == pytest.approx(low, abs=1e-9)
    assert abs(sized.test_size - hand_size(low, 0.75, 0.05, 0.93, 0.2)) <= 1
    assert abs(sized.test_size_at_estimate - hand_size(0.82, 0.75, 0.05, 0.93, 0.2)) <= 1
    assert sized.test_size > sized.test_size_at_estimate
    assert sized.total == 2000 + sized.test_size
    assert sized.total_cost == pytest.approx(2.0 * sized.total)
    assert sized.within_budget is (sized.total <= 10_000)


def test_fewer_cross_validation_documents_widen_the_bound():
    # Five-fold CV scored on 400 of the 2,000 (one fold held out): D = 80, so a wider margin.
    wide = point_sizing(point=LearningPoint(2000, 0.82, cv_documents=400), target=0.75, alpha=0.05, power=0.93,
                        prevalence=0.1, retrieved_fraction=0.1, margin_confidence=0.90)
    assert wide.lower_bound == pytest.approx(hand_low(0.82, 400, 0.2, 0.90), abs=1e-9)
    assert wide.cv_documents == 400


def test_a_point_at_or_below_the_target_has_no_size_and_says_why():
    below = point_sizing(point=LearningPoint(300, 0.70), target=0.75, alpha=0.05, power=0.93, prevalence=0.1,
                         retrieved_fraction=0.1, margin_confidence=0.9)
    assert below.test_size is None and below.test_size_at_estimate is None and below.total is None
    assert "not above the target" in below.unsized
    uncertain = point_sizing(point=LearningPoint(300, 0.78), target=0.75, alpha=0.05, power=0.93, prevalence=0.1,
                             retrieved_fraction=0.1, margin_confidence=0.9)
    assert uncertain.test_size is None and uncertain.test_size_at_estimate is not None
    assert "lower bound" in uncertain.unsized


def test_the_lower_bound_is_the_estimate_at_confidence_one_half():
    assert f1_lower_bound(estimate=0.8, cv_documents=500, prevalence=0.1, retrieved_fraction=0.1,
                          confidence=0.5) == pytest.approx(0.8)


# ------------------------------------------------------------------ the curve and the advice


def test_the_fit_recovers_a_noiseless_inverse_power_curve_and_its_cost_minimum():
    sizes = [100, 200, 400, 800, 1600]
    advice = training_stop_advice(points=[LearningPoint(r, curve(r)) for r in sizes], target=0.75,
                                  prevalence=0.1, margin_confidence=0.9)
    fit = advice.fit
    assert fit is not None
    assert (fit.a, fit.b, fit.c) == pytest.approx((0.85, 0.9, 0.5), rel=1e-3)
    best, lowest = true_minimum(0.9)
    assert fit.minimum_size == pytest.approx(best, rel=0.03)
    assert fit.minimum_total == pytest.approx(lowest, rel=0.01)
    # At 1,600 the total still falls: continue; the reason names the projected minimum.
    assert advice.action == CONTINUE and advice.test_size is None
    assert f"{fit.minimum_total:,}" in advice.reason


def test_past_the_minimum_the_advice_is_to_stop_with_the_last_points_size():
    sizes = [2000, 4000, 8000, 16000]
    advice = training_stop_advice(points=[LearningPoint(r, curve(r)) for r in sizes], target=0.75,
                                  prevalence=0.1, margin_confidence=0.9)
    last = advice.points[-1]
    assert advice.action == STOP and advice.test_size == last.test_size
    assert abs(last.test_size - hand_size(hand_low(curve(16000), 16000, 0.2, 0.9), 0.75, 0.05, 0.93, 0.2)) <= 1
    assert advice.fit.minimum_size < 16000
    assert any("already behind" in note for note in advice.notes)
    assert "Stop training and certify with" in advice.reason


def test_a_plateau_below_the_target_is_not_reachable():
    # F(r) = 0.70 − 0.5 r^(−0.4): never above 0.70.
    points = [LearningPoint(r, 0.70 - 0.5 * r ** -0.4) for r in (100, 300, 900, 2700)]
    advice = training_stop_advice(points=points, target=0.75, prevalence=0.1)
    assert advice.action == NOT_REACHABLE and advice.test_size is None
    assert advice.fit.a == pytest.approx(0.70, abs=0.01)
    assert "levels off" in advice.reason and "0.750" in advice.reason


def test_fewer_than_three_points_give_no_projection_and_say_so():
    one = training_stop_advice(points=[LearningPoint(4000, 0.85)], target=0.75, prevalence=0.1)
    assert one.fit is None
    assert any("at least three" in note for note in one.notes)
    assert one.action == STOP and one.test_size == one.points[0].test_size
    assert "no projection" in one.reason
    two = training_stop_advice(points=[LearningPoint(200, 0.70), LearningPoint(400, 0.74)], target=0.75,
                               prevalence=0.1)
    assert two.fit is None and two.action == CONTINUE and "not above the target" in two.reason


def test_with_a_budget_the_first_affordable_point_is_not_enough_when_the_projection_cannot_fit():
    # A budget below the training already done: nothing left to certify with.
    advice = training_stop_advice(points=[LearningPoint(r, curve(r)) for r in (1000, 2000, 4000)], target=0.75,
                                  prevalence=0.1, budget=3000)
    assert advice.action == NOT_REACHABLE and "whole budget" in advice.reason
    # A budget below the projected minimum total.
    tight = training_stop_advice(points=[LearningPoint(r, curve(r)) for r in (200, 400, 800)], target=0.75,
                                 prevalence=0.1, budget=1500)
    assert tight.action == NOT_REACHABLE and "above the budget of 1,500" in tight.reason


def test_noisy_non_monotone_points_are_fitted_and_flagged():
    rng = np.random.default_rng(3)
    sizes = [250 * k for k in range(1, 13)]
    points = [LearningPoint(r, float(curve(r) + rng.normal(0, 0.01))) for r in sizes]
    assert any(b.estimate < a.estimate for a, b in zip(points, points[1:]))  # the fixture is noisy
    advice = training_stop_advice(points=points, target=0.75, prevalence=0.1)
    assert any("go down" in note for note in advice.notes)
    # The level is poorly pinned down by noisy points (0.92 here against 0.85), and the page says so; the
    # cost minimum, which is what the advice rests on, is close to the true curve's.
    assert advice.fit is not None and 0.80 < advice.fit.a <= 1.0
    assert any("do not pin down" in note for note in advice.notes)
    best, lowest = true_minimum(0.95)
    assert advice.fit.minimum_size == pytest.approx(best, rel=0.25)
    assert advice.fit.minimum_total == pytest.approx(lowest, rel=0.15)
    assert advice.action == STOP  # 3,000 documents are past the true minimum
    assert advice.caveat and "79%" in advice.caveat


def test_points_are_ordered_by_size_and_duplicates_refused():
    advice = training_stop_advice(points=[LearningPoint(800, curve(800)), LearningPoint(200, curve(200)),
                                          LearningPoint(400, curve(400))], target=0.75, prevalence=0.1)
    assert [p.size for p in advice.points] == [200, 400, 800]
    with pytest.raises(ValueError, match="twice"):
        training_stop_advice(points=[LearningPoint(200, 0.7), LearningPoint(200, 0.72)], target=0.75,
                             prevalence=0.1)
    with pytest.raises(ValueError, match="between 0 and 1"):
        training_stop_advice(points=[LearningPoint(200, float("nan"))], target=0.75, prevalence=0.1)


def test_as_dict_is_json_ready():
    import json

    advice = training_stop_advice(points=[LearningPoint(r, curve(r)) for r in (100, 200, 400, 800)], target=0.75,
                                  prevalence=0.1, cost_per_annotation=1.5)
    data = json.loads(json.dumps(advice.as_dict()))
    assert data["action"] == advice.action and len(data["points"]) == 4
    assert set(data["fit"]["projection"][0]) == {"size", "estimate", "test_size", "total"}


# ------------------------------------------------------------------ the sequential bias, measured


def _first_within_budget_pass_rate(*, use_bound: bool, runs: int, seed: int, budget: int) -> tuple[float, float]:
    """Seed 004 Sec. 6.1's policy on a synthetic curve: stop at the first r whose c = r + s fits the budget,
    then draw the certification sample from the truth and decide it with the product's verdict.

    Cross-validated estimates: the true F1 at r plus AR(1) noise (correlation 0.9 between steps: nested
    training sets) with Appendix A's standard error at D = 0.2 r. Returns (pass rate, mean total).
    """
    rng = np.random.default_rng(seed)
    passes = stops = 0
    totals = []
    for _ in range(runs):
        e = rng.standard_normal()
        for r in range(100, 6001, 100):
            e = 0.9 * e + math.sqrt(1 - 0.81) * rng.standard_normal()
            f = curve(r)
            sd = math.sqrt(f * (1 - f) * (2 - f) / (0.2 * r))
            sized = point_sizing(point=LearningPoint(r, float(np.clip(f + sd * e, 0, 1))), target=0.75, alpha=0.05,
                                 power=0.93, prevalence=0.1, retrieved_fraction=0.1, margin_confidence=0.95)
            s = sized.test_size if use_bound else sized.test_size_at_estimate
            if s is not None and r + s <= budget:
                stops += 1
                totals.append(r + s)
                tp, fp, fn, tn = rng.multinomial(s, [0.1 * f, 0.1 * (1 - f), 0.1 * (1 - f), 1 - 0.1 * (2 - f)])
                passes += certification_passes(tp=int(tp), fp=int(fp), fn=int(fn), tn=int(tn), target=0.75,
                                               alpha=0.05)
                break
    return passes / stops, float(np.mean(totals))


def test_sizing_on_the_lower_bound_brings_the_pass_rate_back_toward_the_planned_power():
    # Measured (seed 11, 600 runs, budget 12,000): on the point estimate 0.500 pass, mean total 4,143 (seed 004
    # Sec. 6.1 saw 0.79 on RCV1); on the 95% lower bound 0.858, mean total 7,088, against 0.93 planned. Sized on
    # the true F1 (no estimate, no selection) the same policy passes 0.908: the closed form's normal approximation
    # against the exact verdict costs the last few points, whatever the margin.
    at_estimate, cost_estimate = _first_within_budget_pass_rate(use_bound=False, runs=600, seed=11, budget=12_000)
    on_bound, cost_bound = _first_within_budget_pass_rate(use_bound=True, runs=600, seed=11, budget=12_000)
    print(f"pass rate on the estimate {at_estimate:.3f} (mean total {cost_estimate:,.0f}); "
          f"on the lower bound {on_bound:.3f} (mean total {cost_bound:,.0f})")
    assert at_estimate < 0.70
    assert on_bound > at_estimate + 0.2
    assert on_bound > 0.82
    assert cost_bound > cost_estimate  # the margin is paid for in documents
