"""PPI++ per stratum and the stratified recall (estimation/stats/ppi.py): formulas checked by hand, the
small-count rules, the concordance table.  Coverage in test_ppi_coverage.py."""
import math

import numpy as np
import pytest

from estimation.stats.ppi import JudgedStratum, judge_concordance, ppi_pair_recall, ppi_stratum


def _stratum(y, f, g, size=10_000, region="A12"):
    return JudgedStratum(region=region, size=size, human=np.array(y, float), judge_on_human=np.array(f, float),
                         judge_only=np.array(g, float))


def test_two_phase_difference_estimator_by_hand():
    # 40 human labels: the judge agrees on 36 (20 relevant, 16 not), says relevant on 2 humans said not, and not
    # on 2 humans said relevant.  The judge alone read 160 more documents and called 100 of them relevant.
    y = [1] * 20 + [0] * 16 + [0] * 2 + [1] * 2
    f = [1] * 20 + [0] * 16 + [1] * 2 + [0] * 2
    g = [1] * 100 + [0] * 60
    r = ppi_stratum(_stratum(y, f, g), lam=1.0)
    # θ̂ = f̄_m + mean(y − f) = (22 + 100)/200 + 0/40
    assert r.point == pytest.approx(122 / 200)
    # S²_d with the ¼ pseudo-observations at ±1: d has two +1 and two −1, mean 0 → (4 + 0.25 + 0.25)/40
    s2d = 4.5 / 40
    ybar = 22 / 40
    s2y = (22 * (1 - ybar) ** 2 + 18 * ybar ** 2) / 39
    s2y_floor = (s2y * 39 + 0.5 * (ybar ** 2 + (1 - ybar) ** 2)) / 40
    assert r.variance == pytest.approx((1 / 200 - 1 / 10_000) * s2y_floor + (1 / 40 - 1 / 200) * s2d)
    assert r.human_variance == pytest.approx((1 / 40 - 1 / 10_000) * s2y_floor)
    assert r.method == "ppi++"


def test_lambda_is_the_regression_slope_clipped():
    rng = np.random.default_rng(3)
    y = (rng.random(200) < 0.4).astype(float)
    f = np.clip(0.5 * y + 0.25 + 0.1 * rng.standard_normal(200), 0, 1)
    r = ppi_stratum(_stratum(y, f, rng.random(800)))
    slope = np.cov(y, f, ddof=1)[0, 1] / np.var(f, ddof=1)
    assert r.lam == pytest.approx(min(1.0, slope))
    assert r.correlation == pytest.approx(np.corrcoef(y, f)[0, 1])


def test_a_judge_that_never_disagrees_keeps_a_variance_floor():
    y = [1] * 30 + [0] * 30
    r = ppi_stratum(_stratum(y, y, [1] * 300 + [0] * 300), lam=1.0)
    assert r.method == "ppi++"
    # S²_d = (0.25 + 0.25)/60, never 0
    assert r.variance >= (1 / 60 - 1 / 660) * (0.5 / 60) - 1e-12
    assert r.variance > 0


def test_small_counts_and_useless_judges_fall_back_to_human_only():
    few = ppi_stratum(_stratum([1, 0] * 10, [1, 0] * 10, [1] * 100))
    assert few.method == "human-only" and "fewer than 30" in few.reason
    rng = np.random.default_rng(5)
    y = (rng.random(300) < 0.5).astype(float)
    coin = ppi_stratum(_stratum(y, (rng.random(300) < 0.5).astype(float), (rng.random(3000) < 0.5).astype(float)))
    assert coin.method == "human-only"
    assert coin.point == pytest.approx(y.mean())
    alone = ppi_stratum(_stratum(y, y, []))
    assert alone.method == "human-only" and "no other document" in alone.reason
    full = ppi_stratum(_stratum([1, 0, 1], [1, 1, 1], [], size=3))
    assert full.method == "enumerated" and full.point == pytest.approx(2 / 3) and full.variance == 0


def test_refuses_what_is_not_a_stratum():
    with pytest.raises(ValueError, match="region"):
        JudgedStratum(region="X", size=5, human=np.ones(1), judge_on_human=np.ones(1), judge_only=np.ones(0))
    with pytest.raises(ValueError, match="size"):
        _stratum([1, 0], [1, 0], [1, 1], size=3)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        _stratum([2], [1], [])
    with pytest.raises(ValueError, match="missing"):
        ppi_pair_recall([_stratum([1], [1], [])])


def test_recall_is_t_own_over_n_and_enumerated_regions_are_exact():
    def full(region, size, relevant):
        y = np.array([1.0] * relevant + [0.0] * (size - relevant))
        return JudgedStratum(region=region, size=size, human=y, judge_on_human=y, judge_only=np.zeros(0))

    res = ppi_pair_recall([full("A12", 50, 40), full("B1", 30, 10), full("B2", 40, 20), full("U", 100, 10)], draws=500)
    assert res.r1.point == pytest.approx(50 / 80)
    assert res.r2.point == pytest.approx(60 / 80)
    assert res.r1.low == pytest.approx(50 / 80) and res.r1.high == pytest.approx(50 / 80)
    assert res.human_labels == 220 and res.human_labels_saved == 0


def test_concordance_table_and_kappa():
    human = np.array([1, 1, 1, 0, 0, 0, 0, 1])
    judge = np.array([0.9, 0.8, 0.2, 0.1, 0.7, 0.0, 0.3, 0.6])
    c = judge_concordance(region="B1", human=human, judge=judge)
    assert (c.both_relevant, c.judge_only, c.human_only, c.neither) == (3, 1, 1, 3)
    assert c.agreement == pytest.approx(0.75)
    # p_e = (4·4 + 4·4)/64 = 0.5 → κ = 0.5
    assert c.kappa == pytest.approx(0.5)
    assert math.isclose(c.total, 8)
