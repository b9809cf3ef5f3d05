"""Score strata, Neyman allocation and the staged plan of estimation/stats/stratified.py (issue 23)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from estimation.stats.design_based import (
    REGIONS,
    complement_prior_prevalences,
    dependent_pair_corpus,
    design_based_recall,
)
from estimation.stats.stratified import (
    Stratum,
    StratumGuess,
    assign_score_strata,
    score_strata_bounds,
    scored_pair_strata,
    simulate_staged_plan,
    stratified_design_recall,
    stratified_sample_plan,
)

WORKED = ({"A12": 5000, "B1": 3000, "B2": 20000, "U": 972000}, {"A12": 4500, "B1": 1500, "B2": 2000, "U": 667})


def _reuters_like(delta1):
    pc = dependent_pair_corpus(relevant=10_000, recall1=0.6, recall2=0.5, delta1=delta1, corpus_size=1_000_000)
    return pc.sizes, pc.relevant


def _truth_plan(strata, **kw):
    return stratified_sample_plan(strata=[StratumGuess(s.region, s.size, s.relevant_true / s.size if s.size else 0.0,
                                                       s.key) for s in strata], **kw)


def test_quantile_bounds_split_evenly_and_ties_stay_together():
    assert score_strata_bounds(np.arange(100), strata=4, method="quantile") == (24.5, 49.5, 74.5)
    assert score_strata_bounds(np.ones(50), strata=5) == ()
    assert score_strata_bounds([], strata=5) == ()
    labels = assign_score_strata(np.arange(100), (24.5, 49.5, 74.5))
    assert np.bincount(labels).tolist() == [25, 25, 25, 25]
    tied = score_strata_bounds(np.r_[np.zeros(90), np.arange(10) + 1.0], strata=4, method="quantile")
    assert all(c > 0 for c in tied)  # the 90 tied zeros stay in one stratum


def test_geometric_bounds_make_the_top_stratum_smallest():
    scores = np.random.default_rng(0).standard_normal(100_000)
    sizes = np.bincount(assign_score_strata(scores, score_strata_bounds(scores, strata=4, method="geometric", ratio=10)))
    assert sizes.tolist() == sorted(sizes.tolist(), reverse=True)
    assert sizes[-1] == pytest.approx(100_000 / 1111, rel=0.05)


def test_dalenius_hodges_bounds_give_the_requested_number_of_strata():
    scores = np.random.default_rng(1).standard_normal(10_000)
    assert len(score_strata_bounds(scores, strata=5, method="cum_sqrt_f")) == 4


def test_without_a_scorer_the_plan_is_todays_unstratified_design():
    """One stratum per region: the plan judges a simple random sample of each region, and its sample is read by
    stratified_design_recall exactly as design_based_recall reads it."""
    sizes, relevant = WORKED
    strata = scored_pair_strata(sizes=sizes, relevant=relevant, auc=None)
    assert [s.key for s in strata] == ["all"] * 4
    plan = _truth_plan(strata)
    assert plan.feasible and max(plan.expected_half_width) <= 0.05 + 1e-9
    judged = {a.region: a.planned for a in plan.strata}
    found = {h: round(judged[h] * relevant[h] / sizes[h]) for h in REGIONS}
    ours = stratified_design_recall(strata=[Stratum(h, sizes[h], judged[h], found[h]) for h in REGIONS], seed=3,
                                    draws=2000)
    theirs = design_based_recall(a12=(sizes["A12"], judged["A12"], found["A12"]),
                                 b1=(sizes["B1"], judged["B1"], found["B1"]), b2=(sizes["B2"], judged["B2"], found["B2"]),
                                 u=(sizes["U"], judged["U"], found["U"]), seed=3, draws=2000)
    assert ours.r1 == theirs.r1 and ours.r2 == theirs.r2


@pytest.mark.parametrize("corpus", ["worked", "delta0.6", "delta1.3"])
def test_a_useless_scorer_costs_at_most_ten_percent_more_than_none(corpus):
    """Same ±0.05 target on both classifiers, the plan at the strata's true prevalences (every judged document
    counts: a staged design's pilot is part of its plan); random scores (AUC 0.5) cut the same 5 strata per region."""
    sizes, relevant = WORKED if corpus == "worked" else _reuters_like(0.6 if corpus == "delta0.6" else 1.3)
    none = _truth_plan(scored_pair_strata(sizes=sizes, relevant=relevant, auc=None)).total
    useless = _truth_plan(scored_pair_strata(sizes=sizes, relevant=relevant, auc=0.5, seed=7)).total
    good = _truth_plan(scored_pair_strata(sizes=sizes, relevant=relevant, auc=0.95, seed=7)).total
    assert useless <= 1.10 * none, (useless, none)
    assert good < 0.8 * none, (good, none)


def test_floors_caps_and_what_is_already_judged():
    guesses = [StratumGuess("A12", 50, 0.9), StratumGuess("B1", 0, 0.5), StratumGuess("B2", 8, 0.5),
               StratumGuess("U", 10_000, 0.001, "low", judged=400, relevant=0), StratumGuess("U", 300, 0.2, "high")]
    plan = stratified_sample_plan(strata=guesses, half_width=0.1, min_per_stratum=10)
    by = {(a.region, a.key): a for a in plan.strata}
    assert by[("B1", "")].planned == 0
    assert by[("B2", "")].planned == 8  # capped at the stratum's size (the floor of 10 would exceed it)
    assert by[("U", "low")].planned >= 400 and by[("U", "low")].top_up == by[("U", "low")].planned - 400
    assert all(a.planned >= min(a.size, 10) for a in plan.strata)
    assert plan.total == sum(a.planned for a in plan.strata)
    assert by[("U", "low")].prevalence == pytest.approx(0.5 / 401)  # the pilot's Jeffreys mean replaces the guess


def test_an_unreachable_target_judges_everything_and_says_so():
    guesses = [StratumGuess("A12", 20, 0.5), StratumGuess("B1", 20, 0.5), StratumGuess("B2", 20, 0.5),
               StratumGuess("U", 20, 0.5)]
    plan = stratified_sample_plan(strata=guesses, half_width=0.001)
    assert plan.total == 80 and plan.top_up == 80


def test_the_staged_plan_reaches_the_half_width_when_the_pairs_own_recall_is_a_third_of_the_truth():
    """δ1 = 0.35: the pair's r1* = 0.35·r1.  The prior on U is notes §9's (a third of what the pair found, never
    the pair's recall); the staged plan stops only when the report's interval of BOTH recalls is within ±0.05."""
    pc = dependent_pair_corpus(relevant=2_000, recall1=0.6, recall2=0.5, delta1=0.35, corpus_size=200_000)
    t_p = 0.9 * pc.sizes["A12"] + 0.5 * pc.sizes["B1"] + 0.5 * pc.sizes["B2"]
    prior_u = complement_prior_prevalences(pair_relevant=t_p, size_u=pc.sizes["U"])[1]
    prior = {"A12": 0.9, "B1": 0.5, "B2": 0.5, "U": prior_u}
    for auc in (None, 0.9):
        strata = scored_pair_strata(sizes=pc.sizes, relevant=pc.relevant, auc=auc, seed=2)
        for seed in range(4):
            out = simulate_staged_plan(strata=strata, prior=prior, half_width=0.05, seed=seed, draws=2000)
            assert out.reached and max(out.half_width) <= 0.05, out
            assert out.total > out.pilot


@pytest.mark.slow
def test_zero_found_in_strata_of_several_sizes_bounds_t_u():
    """Zero found in U strata of 500, 20,000 and 500,000 documents: a finite upper bound on T_U that holds the
    truth in ≥ 95% of seeded studies (α + 3 s.e.), and a report that treats it as evidence, not as unknown."""
    rng = np.random.default_rng(11)
    sizes, truth, judged = (500, 20_000, 500_000), (1, 4, 15), (60, 400, 1500)
    base = [Stratum("A12", 1000, 1000, 900), Stratum("B1", 500, 500, 250), Stratum("B2", 800, 800, 300)]
    first = stratified_design_recall(strata=base + [Stratum("U", m, n, 0, f"s{j}") for j, (m, n) in
                                                    enumerate(zip(sizes, judged, strict=True))], draws=4000, seed=0)
    assert first.t_u.upper_bound is not None and math.isfinite(first.t_u.upper_bound)
    assert first.r1.point == pytest.approx(1150 / 1450) and first.r1.conservative_lower_bound is not None
    assert "none_found_in_complement" in first.codes
    studies, held = 300, 0
    for i in range(studies):
        found = [int(rng.hypergeometric(t, m - t, n)) for m, t, n in zip(sizes, truth, judged, strict=True)]
        res = stratified_design_recall(strata=base + [Stratum("U", m, n, k, f"s{j}") for j, (m, n, k) in
                                                      enumerate(zip(sizes, judged, found, strict=True))],
                                       draws=2000, seed=i)
        held += res.t_u.upper_bound >= sum(truth)
    limit = 0.05 + 3 * math.sqrt(0.05 * 0.95 / studies)
    assert 1 - held / studies <= limit, held


def test_the_cost_curve_draws_the_stratified_design_beside_the_unstratified_one():
    from estimation.stats.cost_curve import design_based_cost_against_prevalence

    curve = design_based_cost_against_prevalence(size_a12=5000, size_b1=3000, size_b2=20000, p12=0.9, p_b1=0.5,
                                                 p_b2=0.1, corpus_size=1_000_000, prevalences=[0.002, 0.01, 0.05],
                                                 scorer_auc=0.95)
    assert [p.prevalence for p in curve] == [0.002, 0.01, 0.05]
    for point in curve:
        assert point.score_stratified is not None and point.score_stratified < point.unstratified
    # rarer topics cost more judged documents, with or without a scorer
    assert curve[0].unstratified > curve[1].unstratified > curve[2].unstratified
