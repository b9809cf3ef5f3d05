"""Seed 002 (Zhang, Wang, Zhao 2015): posterior of micro/macro-averaged F1."""
import numpy as np
import pytest
from scipy.stats import beta as beta_dist
from scipy.stats import norm

from estimation.stats.f1_posterior import average_f1_posterior, binary_f1_posterior, hdi

# Seed 002, Figure 3 (rows: true class, columns: predicted class).
FIGURE_3 = [
    [145, 1, 2, 1, 0],
    [5, 256, 22, 9, 6],
    [5, 24, 234, 36, 19],
    [1, 18, 32, 243, 25],
    [1, 5, 9, 38, 254],
]

# Notes §5 (Table 1 within Monte Carlo error, alpha = beta = 1, 200,000 draws).
TABLE_1 = {
    "micro": dict(score=0.814, mean=0.803, sd=0.011, below=0.395, hdi=(0.782, 0.824)),
    "macro": dict(score=0.828, mean=0.815, sd=0.010, below=0.063, hdi=(0.796, 0.834)),
}


@pytest.fixture(scope="module")
def figure_3_posterior():
    return average_f1_posterior(confusion=FIGURE_3, draws=200_000, seed=2015, reference=0.8)


@pytest.mark.parametrize("average", ["micro", "macro"])
def test_table_1_reproduced(figure_3_posterior, average):
    result, expected = figure_3_posterior[average], TABLE_1[average]
    assert result["score"] == pytest.approx(expected["score"], abs=0.0005)
    assert result["mean"] == pytest.approx(expected["mean"], abs=0.003)
    assert result["sd"] == pytest.approx(expected["sd"], abs=0.003)
    assert result["below"] == pytest.approx(expected["below"], abs=0.015)
    assert result["above"] == pytest.approx(1.0 - expected["below"], abs=0.015)
    assert result["hdi"][0] == pytest.approx(expected["hdi"][0], abs=0.003)
    assert result["hdi"][1] == pytest.approx(expected["hdi"][1], abs=0.003)
    # Table 1 prints "MC error 0.000".
    assert result["mc_error"] < 0.0005


def test_plug_in_scores_by_hand():
    matrix = np.array(FIGURE_3)
    micro = np.trace(matrix) / matrix.sum()
    per_class = 2 * np.diag(matrix) / (matrix.sum(0) + matrix.sum(1))
    result = average_f1_posterior(confusion=FIGURE_3, draws=1000, seed=1)
    assert result["micro"]["score"] == pytest.approx(micro)
    assert result["macro"]["score"] == pytest.approx(per_class.mean())


def test_micro_posterior_is_beta_when_priors_aggregate():
    # If beta_j + n_j = sum_k (alpha_jk + c_jk) for every j, pi = mu_j theta_jk is
    # Dir(alpha + C) and miF1 = trace(pi) ~ Beta(sum diag, sum off-diag) exactly.
    matrix = np.array([[40, 10], [5, 45]], dtype=float)
    alpha = 1.0
    beta = alpha * 2  # K * alpha
    result = average_f1_posterior(confusion=matrix, draws=200_000, seed=3, alpha=alpha, beta=beta)
    a, b = np.trace(matrix) + 2 * alpha, matrix.sum() - np.trace(matrix) + 2 * alpha
    assert result["micro"]["mean"] == pytest.approx(beta_dist.mean(a, b), abs=0.001)
    assert result["micro"]["sd"] == pytest.approx(beta_dist.std(a, b), abs=0.001)
    low, high = result["micro"]["hdi"]
    assert beta_dist.cdf(high, a, b) - beta_dist.cdf(low, a, b) == pytest.approx(0.95, abs=0.003)


def test_any_k_and_matrix_priors():
    rng = np.random.default_rng(0)
    matrix = rng.integers(0, 50, size=(8, 8)) + np.diag(np.full(8, 200))
    result = average_f1_posterior(confusion=matrix, draws=20_000, seed=1,
                                  alpha=np.ones((8, 8)), beta=np.full(8, 0.5))
    for summary in result.values():
        assert 0.0 < summary["hdi"][0] < summary["mean"] < summary["hdi"][1] < 1.0
        assert summary["below"] + summary["above"] == pytest.approx(1.0)


def test_same_seed_same_result():
    first = average_f1_posterior(confusion=FIGURE_3, draws=60_000, seed=9)
    second = average_f1_posterior(confusion=FIGURE_3, draws=60_000, seed=9)
    assert first == second


def test_hdi_is_shortest_not_percentiles():
    # Skewed draws: the HDI must be shorter than the equal-tailed interval.
    draws = np.random.default_rng(1).exponential(size=200_000)
    low, high = hdi(draws, 0.95)
    # Exact HDI of Exp(1) at 95%: [0, -ln(0.05)].
    assert low == pytest.approx(0.0, abs=0.001)
    assert high == pytest.approx(-np.log(0.05), abs=0.03)
    p_low, p_high = np.percentile(draws, [2.5, 97.5])
    assert high - low < p_high - p_low
    assert np.mean((draws >= low) & (draws <= high)) == pytest.approx(0.95, abs=1e-4)


def test_hdi_of_normal_matches_central_interval():
    draws = np.random.default_rng(2).normal(size=200_000)
    low, high = hdi(draws, 0.95)
    assert low == pytest.approx(norm.ppf(0.025), abs=0.03)
    assert high == pytest.approx(norm.ppf(0.975), abs=0.03)


@pytest.mark.parametrize("tn", [None, 900])
def test_binary_posterior_summary(tn):
    result = binary_f1_posterior(tp=80, fp=20, fn=30, tn=tn, draws=100_000, seed=5, reference=0.8)
    assert result["score"] == pytest.approx(160 / 210)
    assert set(result) >= {"score", "mean", "sd", "mc_error", "below", "above", "hdi"}
    low, high = result["hdi"]
    assert low < result["score"] < high
    assert result["below"] > 0.85  # the plug-in 0.762 is well below the reference


def test_binary_posterior_frequentist_calibration():
    # Over repeated test sets from a known classifier, the 95% HDI of the
    # posterior (tn omitted: Dirichlet on tp/fp/fn) should cover the true F1
    # about 95% of the time at moderate counts.
    rng = np.random.default_rng(11)
    cells = np.array([0.2, 0.05, 0.07, 0.68])  # tp, fp, fn, tn proportions
    truth = 2 * cells[0] / (2 * cells[0] + cells[1] + cells[2])
    hits = 0
    runs = 200
    for run in range(runs):
        tp, fp, fn, _ = rng.multinomial(500, cells)
        low, high = binary_f1_posterior(tp=int(tp), fp=int(fp), fn=int(fn), draws=4000,
                                        seed=run)["hdi"]
        hits += low <= truth <= high
    assert 0.90 <= hits / runs <= 0.99


@pytest.mark.parametrize("confusion", [[[1, 2]], [[1, -1], [0, 1]], [[5]]])
def test_bad_confusion_rejected(confusion):
    with pytest.raises(ValueError):
        average_f1_posterior(confusion=confusion, draws=100)


def test_bad_priors_and_mass_rejected():
    with pytest.raises(ValueError):
        average_f1_posterior(confusion=FIGURE_3, draws=100, alpha=0.0)
    with pytest.raises(ValueError):
        hdi(np.arange(10.0), mass=1.0)
    with pytest.raises(ValueError):
        binary_f1_posterior(tp=-1, fp=0, fn=0, draws=100)
