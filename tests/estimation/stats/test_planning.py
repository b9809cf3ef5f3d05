"""Sample-size planning (ESTIMATION-NOTES §2, seed 000 Sec. 4.3 / Fig. 1).

Expected values are the notes' worked example, the seed's own sample sizes,
closed forms computed by hand in comments, or simulation truth.
"""
import json

import numpy as np
import pytest

from estimation.stats.planning import (
    neyman_allocation,
    pair_recall_certification_size,
    plan_pair_sample,
    uniform_sample_size,
)

# Notes §2 worked example.
EXAMPLE = {"size_a12": 5000, "size_b2": 20000, "p12": 0.9, "p_b2": 0.1}


def test_notes_worked_example_infinite_regions():
    # Notes §2: stratified Neyman 775, paper's design 3,006, uniform 32,732, worst case 38,415 (±1%).
    plan = plan_pair_sample(**EXAMPLE, prevalence=0.01, finite_population=False)
    assert plan.recall["r1"] == pytest.approx(0.692, abs=0.001)
    assert plan.stratified_total == pytest.approx(775, rel=0.01)
    assert plan.paper_design_total == pytest.approx(3006, rel=0.01)
    assert plan.uniform_total == pytest.approx(32732, rel=0.01)
    assert plan.uniform_worst_case_total == pytest.approx(38415, rel=0.01)
    # "This costs 1/40 of uniform sampling": 775/32,732 = 1/42.
    assert plan.ratio_to_uniform == pytest.approx(775 / 32732, rel=0.01)
    assert "1/42" in plan.summary


def test_neyman_shares_follow_sqrt_q_over_p():
    # n_h ∝ √(q_h/p_h): √(0.9/0.1) / √(0.1/0.9) = 3 / (1/3) = 9.
    plan = plan_pair_sample(**EXAMPLE, prevalence=0.01, finite_population=False)
    assert plan.stratified["B2"] / plan.stratified["A12"] == pytest.approx(9.0, rel=0.02)
    assert plan.stratified["B1"] == 0  # not needed for r1


def test_finite_population_correction_reduces_the_need():
    # By hand: n = (Σ√c_h)² / (V/(r(1−r))² + Σ c_h/N_h), c = q/p:
    # (1/3 + 3)² = 11.111; V = (0.05/1.96)² = 6.508e-4; (r(1−r))² = 0.045378 → 0.014342;
    # Σ c/N = 0.1111/5000 + 9/20000 = 0.000472 → n = 11.111/0.014814 = 750.0.
    plan = plan_pair_sample(**EXAMPLE, prevalence=0.01)
    assert plan.stratified_total == pytest.approx(750, rel=0.01)
    assert plan.stratified_half_width["r1"] <= 0.05


def test_allocation_never_exceeds_region_size():
    # Stratum a would get 10/11 of the sample but has only 5 documents: it is judged in full
    # (no variance left) and b alone must reach the target: n_b = S_b²/V = 1/0.01 = 100 (no FPC).
    allocation = neyman_allocation(
        unit_sd={"a": 10.0, "b": 1.0}, sizes={"a": 5, "b": 10_000}, variance=0.01, finite_population=False
    )
    assert allocation == {"a": 5.0, "b": pytest.approx(100.0)}
    # The per-region floor (30) is capped at the region size too.
    plan = plan_pair_sample(size_a12=20, size_b2=20000, p12=0.5, p_b2=0.05, prevalence=0.01)
    assert plan.stratified["A12"] == 20
    assert plan.stratified["B2"] >= 30
    assert plan.stratified_half_width["r1"] <= 0.05


def test_both_targets_take_the_larger_need_per_region():
    plan = plan_pair_sample(
        size_a12=5000, size_b1=3000, size_b2=20000, p12=0.9, p_b1=0.2, p_b2=0.1, target="both", prevalence=0.01
    )
    only_r1 = plan_pair_sample(**EXAMPLE, prevalence=0.01)
    only_r2 = plan_pair_sample(size_a12=5000, size_b1=3000, p12=0.9, p_b1=0.2, target="r2", prevalence=0.01)
    assert plan.stratified["A12"] == max(only_r1.stratified["A12"], only_r2.stratified["A12"])
    assert plan.stratified["B2"] == only_r1.stratified["B2"]
    assert plan.stratified["B1"] == only_r2.stratified["B1"]
    assert max(plan.stratified_half_width.values()) <= 0.05


def test_uniform_prevalence_from_corpus_size_uses_n_hat():
    # n̂ = T1·T2/T12 = (4500+600)(4500+2000)/4500 = 7366.7; π = 7366.7/736,667 = 0.01.
    plan = plan_pair_sample(
        size_a12=5000, size_b1=3000, size_b2=20000, p12=0.9, p_b1=0.2, p_b2=0.1, corpus_size=736_667,
        finite_population=False,
    )
    assert plan.uniform_prevalence == pytest.approx(0.01, rel=1e-4)


def test_costs_and_json():
    plan = plan_pair_sample(**EXAMPLE, prevalence=0.01, cost_per_judgment=0.05, already_judged={"A12": 30})
    assert plan.costs["stratified"] == pytest.approx(plan.stratified_total * 0.05)
    assert plan.stratified_additional == plan.stratified_total - 30
    json.dumps(plan.as_dict())


def test_seed_000_uniform_sample_sizes():
    # Seed 000 Sec. 4.3: 384 samples for ±0.05 (s² ≤ 0.25), 1,537 for ±0.025,
    # ~3,840 labelled documents at prevalence 0.1; notes §2: 38,415 at prevalence 0.01.
    assert uniform_sample_size(prevalence=1.0) == pytest.approx(384, rel=0.01)
    assert uniform_sample_size(prevalence=1.0, half_width=0.025) == 1537
    assert uniform_sample_size(prevalence=0.1) == pytest.approx(3840, rel=0.01)
    assert uniform_sample_size(prevalence=0.01) == pytest.approx(38415, abs=1)


@pytest.mark.slow
def test_certification_size_gives_the_planned_power():
    """Simulate the planned sample and test recall > τ with the delta-method lower bound.

    Power 0.8 was asked; 2,000 runs give a Monte Carlo error of ±0.009, and
    the delta approximation itself moves it by a point or two: accept 0.75–0.86.
    """
    plan = pair_recall_certification_size(size_a12=5000, size_other=20000, p12=0.9, p_other=0.1, tau=0.6)
    n12, n_b2 = plan.judgments["A12"], plan.judgments["B2"]
    rng = np.random.default_rng(42)
    runs = 2000
    x12 = rng.hypergeometric(4500, 500, n12, size=runs)
    x_b2 = rng.hypergeometric(2000, 18000, n_b2, size=runs)
    t12, t_b2 = 5000 * x12 / n12, 20000 * x_b2 / n_b2
    p12, p_b2 = x12 / n12, x_b2 / n_b2
    var12 = 5000**2 * p12 * (1 - p12) / n12 * (1 - n12 / 5000)
    var_b2 = 20000**2 * p_b2 * (1 - p_b2) / n_b2 * (1 - n_b2 / 20000)
    recall = t12 / (t12 + t_b2)
    se = np.sqrt((t_b2**2 * var12 + t12**2 * var_b2) / (t12 + t_b2) ** 4)
    power = np.mean(recall - 1.6449 * se > 0.6)
    assert 0.75 <= power <= 0.86


@pytest.mark.parametrize(
    "kwargs",
    [
        {**EXAMPLE, "p12": 1.0},
        {**EXAMPLE, "p_b2": 0.0},
        {**EXAMPLE, "size_b2": -5},
        {**EXAMPLE, "target": "r3"},
        {**EXAMPLE, "half_width": 0.0},
        {**EXAMPLE, "confidence": 95},
        {**EXAMPLE, "size_b1": 100, "target": "both"},  # B1 exists but p_b1 is missing
    ],
)
def test_invalid_plans_raise(kwargs):
    with pytest.raises(ValueError):
        plan_pair_sample(**kwargs)


def test_certification_refuses_unreachable_target():
    with pytest.raises(ValueError, match="not above"):
        pair_recall_certification_size(size_a12=5000, size_other=20000, p12=0.9, p_other=0.1, tau=0.75)
