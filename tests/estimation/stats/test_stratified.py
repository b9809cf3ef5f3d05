"""Score-stratified design-based recall (issue 23): the estimator of estimation/stats/stratified.py."""
from __future__ import annotations

import math

import numpy as np
import pytest

from estimation.stats.design_based import (
    REGIONS,
    design_based_recall,
    design_based_recall_arrays,
    label_error_from_votes,
)
from estimation.stats.stratified import Stratum, stratified_design_recall, stratified_design_recall_arrays

CASES = [
    {"A12": (5000, 300, 270), "B1": (3000, 300, 150), "B2": (20000, 400, 40), "U": (972000, 3000, 0)},
    {"A12": (5000, 5000, 4500), "B1": (3000, 3000, 1500), "B2": (20000, 20000, 2000), "U": (972000, 3000, 2)},
    {"A12": (500, 50, 45), "B1": (0, 0, 0), "B2": (200, 0, 0), "U": (9000, 300, 3)},
    {"A12": (500, 50, 45), "B1": (100, 30, 10), "B2": (200, 20, 3), "U": (9000, 300, 13.5)},
]


def _one_per_region(case):
    return [Stratum(region=h, size=case[h][0], judged=case[h][1], relevant=case[h][2], key="all") for h in REGIONS]


def _votes_error(draws):
    return label_error_from_votes(votes=[(3, 3)] * 600 + [(2, 3)] * 300 + [(1, 3)] * 100, draws=draws, seed=3)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("noisy", [False, True])
def test_one_stratum_per_region_is_design_based_recall_draw_for_draw(case, noisy):
    error = _votes_error(4000) if noisy else None
    old = design_based_recall(a12=case["A12"], b1=case["B1"], b2=case["B2"], u=case["U"], draws=4000, seed=11,
                              label_error=error).as_dict()
    new = stratified_design_recall(strata=_one_per_region(case), draws=4000, seed=11, label_error=error).as_dict()
    for field in old:
        if field == "regions":
            for h in REGIONS:
                assert {k: new["regions"][h][k] for k in old["regions"][h]} == old["regions"][h]
                assert [s["key"] for s in new["regions"][h]["strata"]] == ["all"]
        else:
            assert new[field] == old[field], field


@pytest.mark.parametrize("case", CASES)
def test_arrays_with_one_stratum_per_region_equal_design_based_arrays(case):
    sizes = {h: case[h][0] for h in REGIONS}
    judged = {h: case[h][1] for h in REGIONS}
    rel = {h: np.minimum(judged[h], np.arange(4) + case[h][2]).astype(float) for h in REGIONS}
    strata = [Stratum(region=h, size=sizes[h], judged=judged[h], relevant=rel[h]) for h in REGIONS]
    for which in ("r1", "r2"):
        a = design_based_recall_arrays(sizes=sizes, judged=judged, relevant=rel, which=which, draws=1000,
                                       rng=np.random.default_rng(5))
        b = stratified_design_recall_arrays(strata=strata, which=which, draws=1000, rng=np.random.default_rng(5))
        for f in a.__dataclass_fields__:
            assert np.array_equal(getattr(a, f), getattr(b, f), equal_nan=True), f


def _split_u(*, low_found=0):
    return [Stratum("A12", 5000, 5000, 4500), Stratum("B1", 3000, 3000, 1500), Stratum("B2", 20000, 20000, 2000),
            Stratum("U", 940_000, 300, low_found, key="score:low"), Stratum("U", 50_000, 600, 12, key="score:high")]


def test_docstring_example_point_and_bound():
    res = stratified_design_recall(strata=_split_u(), draws=20_000, seed=1)
    assert res.t_u.point == pytest.approx(1000.0)
    # the low stratum's zero bounds it at about 3/300 of 940,000; the sum's bound lies above the high stratum's count
    assert 1000 < res.t_u.upper_bound < 1000 + 1.1 * 940_000 * (1 - 0.05 ** (1 / 300)) + 50_000 * 0.05
    assert res.elusion.found == 12 and res.elusion.judged == 900
    assert res.r1.point == pytest.approx(6000 / (8000 + 1000))
    assert res.r1.low < res.r1.point < res.r1.high
    assert res.r1.conservative_lower_bound < res.r1.lower_bound
    assert [s["key"] for s in res.regions["U"]["strata"]] == ["score:low", "score:high"]
    assert res.regions["U"]["share"] == pytest.approx(1000 / 990_000)


def test_zero_found_in_a_judged_stratum_is_a_bound_not_unknown():
    res = stratified_design_recall(strata=_split_u(low_found=0), draws=5000, seed=2)
    assert res.r1.point is not None and math.isfinite(res.t_u.upper_bound)
    assert "unjudged_region" not in res.codes and "unjudged_stratum" not in res.codes


def test_a_stratum_with_documents_and_none_judged_makes_the_recall_unknown():
    strata = _split_u()[:3] + [Stratum("U", 940_000, 0, 0, key="score:low"), Stratum("U", 50_000, 600, 12, key="hi")]
    res = stratified_design_recall(strata=strata, draws=1000, seed=0)
    assert res.r1.point is None and res.r1.low is None and res.t_u.point is None
    assert "unjudged_stratum" in res.codes
    whole = _split_u()[:3] + [Stratum("U", 990_000, 0, 0)]
    res = stratified_design_recall(strata=whole, draws=1000, seed=0)
    assert res.r1.point is None and "unjudged_region" in res.codes


def test_enumerated_strata_are_exact():
    strata = [Stratum("A12", 100, 100, 90), Stratum("B1", 50, 50, 20, key="a"), Stratum("B1", 30, 30, 5, key="b"),
              Stratum("B2", 40, 40, 10), Stratum("U", 500, 500, 3, key="x"), Stratum("U", 700, 700, 0, key="y")]
    res = stratified_design_recall(strata=strata, draws=1000, seed=0)
    truth = (90 + 25) / (90 + 25 + 10 + 3)
    assert res.r1.point == pytest.approx(truth)
    assert res.r1.low == pytest.approx(truth) and res.r1.high == pytest.approx(truth)
    assert res.r1.conservative_lower_bound == pytest.approx(truth)
    assert res.t_u.upper_bound == pytest.approx(3.0)


def test_empty_stratum_and_validation():
    ok = [Stratum("A12", 100, 10, 9), Stratum("B1", 0, 0, 0), Stratum("B2", 40, 10, 1),
          Stratum("U", 500, 50, 0, key="x"), Stratum("U", 0, 0, 0, key="empty")]
    assert stratified_design_recall(strata=ok, draws=500, seed=0).r1.point == pytest.approx(90 / 94)
    with pytest.raises(ValueError, match="missing"):
        stratified_design_recall(strata=ok[:2], draws=500)
    with pytest.raises(ValueError, match="twice"):
        stratified_design_recall(strata=ok + [Stratum("U", 5, 1, 0, key="x")], draws=500)
    with pytest.raises(ValueError, match="judged"):
        stratified_design_recall(strata=ok + [Stratum("U", 5, 6, 0, key="z")], draws=500)
    with pytest.raises(ValueError, match="relevant"):
        stratified_design_recall(strata=ok + [Stratum("U", 5, 2, 3, key="z")], draws=500)
    with pytest.raises(ValueError, match="region"):
        stratified_design_recall(strata=ok + [Stratum("N", 5, 2, 0, key="z")], draws=500)
