"""Design-based recall with a complement sample (ESTIMATION-NOTES §8, issue 11).

Expected numbers are derived by hand in comments or are the known truth of a
simulated population with a chosen dependence δ1 = T12·N/(T1·T2).
"""
import json
import math

import numpy as np
import pytest

from estimation.stats.design_based import (
    REGIONS,
    complement_sample_size,
    dependent_pair_corpus,
    design_based_recall,
    design_based_recall_arrays,
    design_based_sample_plan,
)
from estimation.stats.pair_recall import stratified_pair_recall

# Notes §2's worked example with the regions completed: |A12| = 5,000 (4,500 relevant), |B1| = 3,000
# (1,500), |B2| = 20,000 (2,000), all enumerated; |U| = 972,000 with 0 relevant in 3,000 judged.
WORKED = {"a12": (5000, 5000, 4500), "b1": (3000, 3000, 1500), "b2": (20000, 20000, 2000), "u": (972_000, 3000, 0)}


def test_worked_example_by_hand():
    result = design_based_recall(**WORKED, draws=20_000, seed=1)
    # r1 = (4500 + 1500)/(4500 + 1500 + 2000 + 0) = 0.75; the pair measures 4500/6500 = 0.692; δ1 = 0.692/0.75.
    assert result.r1.point == pytest.approx(0.75)
    assert result.r1.pair_estimand == pytest.approx(4500 / 6500)
    assert result.delta1.point == pytest.approx((4500 / 6500) / 0.75)
    assert result.r2.point == pytest.approx(6500 / 8000)
    # Exact one-sided 95% Clopper–Pearson bound for 0 of 3,000: 1 − 0.05^(1/3000) = 0.000998 (≈ 3/m).
    cp = 1.0 - 0.05 ** (1 / 3000)
    assert cp == pytest.approx(2.995 / 3000, rel=0.01)
    assert result.t_u.upper_bound == pytest.approx(969_000 * cp)
    assert result.elusion.upper_bound == pytest.approx(969_000 * cp / 972_000)
    assert result.elusion.point == 0.0
    # Other regions exact, so the conservative bound is r1 at T_U's exact bound: 6000/(8000 + 967.1) = 0.669
    # (up to the Monte Carlo and the binomial noise of the 969,000 unjudged documents).
    assert result.r1.conservative_lower_bound == pytest.approx(6000 / (8000 + 969_000 * cp), abs=0.003)
    assert result.r1.conservative_lower_bound < result.r1.lower_bound < result.r1.point
    assert "none_found_in_complement" in result.codes
    json.dumps(result.as_dict())


def test_fully_enumerated_corpus_is_exact():
    result = design_based_recall(a12=(50, 50, 40), b1=(30, 30, 10), b2=(20, 20, 5), u=(900, 900, 45), draws=500, seed=0)
    # N = 100, r1 = 50/100, r2 = 45/100, δ1 = 40·100/(50·45) = 1.778: known without error.
    for estimate, truth in ((result.r1, 0.5), (result.r2, 0.45)):
        assert estimate.point == estimate.low == estimate.high == estimate.conservative_lower_bound == pytest.approx(truth)
    assert result.delta1.point == pytest.approx(40 * 100 / (50 * 45))
    assert result.independence_rejected and "independence_rejected" in result.codes
    assert result.t_u.upper_bound == 45.0


def test_unjudged_complement_gives_none():
    result = design_based_recall(a12=(50, 20, 16), b1=(30, 10, 3), b2=(20, 10, 2), u=(900, 0, 0), draws=500, seed=0)
    assert result.r1.point is None and result.r1.conservative_lower_bound is None
    assert result.delta1.point is None and not result.independence_rejected
    assert "unjudged_region" in result.codes
    json.dumps(result.as_dict())


def test_dependent_pair_corpus_has_the_asked_dependence():
    corpus = dependent_pair_corpus(relevant=10_000, recall1=0.7, recall2=0.7, delta1=1.0, corpus_size=1_000_000)
    # T12 = 4,900, T_B1 = T_B2 = 2,100, T_U = 900 (the union finds 91%).
    assert corpus.relevant == {"A12": 4900, "B1": 2100, "B2": 2100, "U": 900}
    assert corpus.sizes["A12"] == 5444 and sum(corpus.sizes.values()) == 1_000_000
    dependent = dependent_pair_corpus(relevant=5000, recall1=0.7, recall2=0.6, delta1=1.35, corpus_size=500_000)
    assert dependent.delta1 == pytest.approx(1.35, abs=1e-3) and dependent.recall1 == pytest.approx(0.7)
    with pytest.raises(ValueError):
        dependent_pair_corpus(relevant=100, recall1=0.9, recall2=0.9, delta1=1.35, corpus_size=10_000)


def _studies(delta1, *, runs, draws, seed, which="r1"):
    corpus = dependent_pair_corpus(relevant=5000, recall1=0.7, recall2=0.6, delta1=delta1, corpus_size=500_000,
                                   precision_a12=0.9, precision_b1=0.5, precision_b2=0.4)
    rng = np.random.default_rng(seed)
    judged = {"A12": 200, "B1": 200, "B2": 200, "U": 2000}
    relevant = {h: rng.hypergeometric(corpus.relevant[h], corpus.sizes[h] - corpus.relevant[h], judged[h], size=runs)
                for h in REGIONS}
    arrays = design_based_recall_arrays(sizes=corpus.sizes, judged=judged, relevant=relevant, which=which,
                                        confidence=0.95, draws=draws, rng=rng)
    return corpus, arrays


@pytest.mark.parametrize("delta1", [0.8, 1.0, 1.25, 1.35])
def test_coverage_of_corpus_recall_whatever_the_dependence(delta1):
    """800 simulated studies per δ1 (seed 11): 5,000 relevant in 500,000 documents, r1 = 0.7, r2 = 0.6,
    precisions 0.9/0.5/0.4, 200 judged in each retrieved region and 2,000 in U (expected relevant found
    there: 0.7 at δ1 = 0.8 … 5.4 at 1.35).  Measured here (δ1 = 0.8/1/1.25/1.35): two-sided coverage
    0.975/0.941/0.958/0.954; δ1 interval coverage 0.968/0.943/0.954/0.953; conservative bound above the truth
    0.000/0.000/0.015/0.029 (the Jeffreys one-sided bound alone: 0.000/0.074/0.050/0.043 — hence the
    conservative bound for certification); independence rejected in 0.84/0.06/0.83/0.97 of the studies.
    """
    runs = 800
    corpus, arrays = _studies(delta1, runs=runs, draws=1500, seed=11)
    truth = corpus.recall1
    covered = np.mean((arrays.low <= truth) & (truth <= arrays.high))
    assert covered >= 0.93, covered
    assert np.mean((arrays.delta1_low <= corpus.delta1) & (corpus.delta1 <= arrays.delta1_high)) >= 0.9
    se = math.sqrt(0.05 * 0.95 / runs)
    assert np.mean(arrays.conservative_lower_bound > truth) <= 0.05 + 3 * se
    assert np.all((arrays.low >= 0) & (arrays.high <= 1))
    if delta1 in (0.8, 1.35):  # a complement sample of 2,000 detects this much dependence most of the time
        assert np.mean((arrays.delta1_low > 1) | (arrays.delta1_high < 1)) > 0.75


def test_design_based_holds_where_the_pair_does_not():
    # Census of a δ1 = 1.35 corpus except U: the pair's recall of C1 is r1* = 1.35·0.7 = 0.945 with no width
    # at all (notes §8: narrow is not right); the design-based interval covers the true 0.7.
    corpus = dependent_pair_corpus(relevant=5000, recall1=0.7, recall2=0.6, delta1=1.35, corpus_size=500_000)
    census = {h.lower(): (corpus.sizes[h], corpus.sizes[h], corpus.relevant[h]) for h in ("A12", "B1", "B2")}
    pair = stratified_pair_recall(**census, draws=500, seed=0)
    assert pair.r1.low == pytest.approx(1.35 * 0.7, abs=0.002)
    found = round(2000 * corpus.prevalence_u)
    result = design_based_recall(**census, u=(corpus.sizes["U"], 2000, found), draws=4000, seed=0)
    assert result.r1.low <= 0.7 <= result.r1.high
    assert result.independence_rejected and result.delta1.low > 1.0


def test_complement_sample_size_meets_the_margin():
    plan = {"size_a12": 5000, "precision_a12": 0.9, "judged_a12": 300, "size_b1": 3000, "precision_b1": 0.5,
            "judged_b1": 300, "size_b2": 20000, "precision_b2": 0.1, "judged_b2": 400, "size_u": 972_000,
            "prevalence_u": 667 / 972_000, "margin": 0.10, "draws": 2000, "seed": 3}
    sized = complement_sample_size(**plan)
    assert sized.feasible and sized.truth == pytest.approx(6000 / 8667, abs=1e-3)
    assert sized.truth - sized.planned_lower_bound <= 0.10
    # A much smaller complement sample does not meet the margin.
    from estimation.stats.design_based import _planned_bound

    sizes = {"A12": 5000, "B1": 3000, "B2": 20000, "U": 972_000}
    shares = {"A12": 0.9, "B1": 0.5, "B2": 0.1, "U": 667 / 972_000}
    smaller = _planned_bound(sizes=sizes, precisions=shares, judged={"A12": 300, "B1": 300, "B2": 400,
                             "U": sized.judged_u // 2}, which="r1", confidence=0.95, draws=2000, seed=3)
    assert sized.truth - smaller > 0.10
    # Tiny samples elsewhere make it infeasible whatever U's sample.
    tiny = complement_sample_size(**{**plan, "judged_a12": 3, "judged_b1": 3, "judged_b2": 3})
    assert not tiny.feasible and tiny.judged_u is None and "A12" in tiny.reason


def test_sample_plan_total_is_within_fifty_over_prevalence():
    # Bench setting (bench/bench_design_based.py): ρ = 1% of 1,000,000, r1 = r2 = 0.7, δ1 = 1 → the union
    # finds 91%.  Target: at most 50/ρ = 5,000 judged documents in all (uniform sampling needs ~400/ρ).
    corpus = dependent_pair_corpus(relevant=10_000, recall1=0.7, recall2=0.7, delta1=1.0, corpus_size=1_000_000)
    shares = {h: corpus.relevant[h] / corpus.sizes[h] for h in REGIONS}
    plan = design_based_sample_plan(size_a12=corpus.sizes["A12"], precision_a12=shares["A12"],
                                    size_b1=corpus.sizes["B1"], precision_b1=shares["B1"],
                                    size_b2=corpus.sizes["B2"], precision_b2=shares["B2"],
                                    size_u=corpus.sizes["U"], prevalence_u=shares["U"], draws=2000, seed=0)
    assert plan.total <= 5000
    assert plan.truth - plan.planned_lower_bound <= 0.10
    assert plan.judged["U"] > max(plan.judged[h] for h in ("A12", "B1", "B2"))
