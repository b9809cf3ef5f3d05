"""Topic-set report statistics (seed 002): Table 1 through the topic-set shape, per-class intervals,
"none of these" outside the averages, and the sample size for an HDI width."""
import numpy as np
import pytest
from scipy.stats import beta as beta_dist

from estimation.stats.f1_posterior import average_f1_posterior
from estimation.stats.multiclass import (
    confusion_matrix,
    confusion_matrix_expected,
    multiclass_hdi_width,
    multiclass_posterior,
    multiclass_sample_size,
    probability_above,
)

# Seed 002, Figure 3 (rows: true class, columns: predicted class).
FIGURE_3 = [
    [145, 1, 2, 1, 0],
    [5, 256, 22, 9, 6],
    [5, 24, 234, 36, 19],
    [1, 18, 32, 243, 25],
    [1, 5, 9, 38, 254],
]
# Seed 002, Table 1 (notes §5: alpha = beta = 1).
TABLE_1 = {
    "micro": dict(score=0.814, mean=0.803, sd=0.011, below=0.395, hdi=(0.782, 0.824)),
    "macro": dict(score=0.828, mean=0.815, sd=0.010, below=0.063, hdi=(0.796, 0.834)),
}


def _with_empty_none(matrix):
    """The Figure 3 matrix as a topic set: class 0 ("none of these") neither judged nor predicted."""
    size = len(matrix) + 1
    full = np.zeros((size, size))
    full[1:, 1:] = matrix
    return full


@pytest.fixture(scope="module")
def figure_3():
    # Seed 002's own prior (alpha = beta = 1).
    return multiclass_posterior(confusion=_with_empty_none(FIGURE_3), draws=200_000, seed=2015, reference=0.8,
                                prior="uniform")


@pytest.mark.parametrize("average", ["micro", "macro"])
def test_table_1_reproduced_as_a_topic_set(figure_3, average):
    result, expected = getattr(figure_3, average), TABLE_1[average]
    assert figure_3.none_modelled is False
    assert figure_3.positions == (1, 2, 3, 4, 5)
    assert result.score == pytest.approx(expected["score"], abs=0.0005)
    assert result.mean == pytest.approx(expected["mean"], abs=0.003)
    assert result.sd == pytest.approx(expected["sd"], abs=0.003)
    assert 1.0 - result.above == pytest.approx(expected["below"], abs=0.015)
    assert result.hdi.low == pytest.approx(expected["hdi"][0], abs=0.003)
    assert result.hdi.high == pytest.approx(expected["hdi"][1], abs=0.003)
    # The stored quantiles answer P(> reference) for any other reference as the draws do.
    assert probability_above(quantiles=result.quantiles, reference=0.8) == pytest.approx(result.above, abs=0.002)


def test_recall_interval_is_the_exact_beta_marginal(figure_3):
    # recall_j = theta_jj ~ Beta(1 + c_jj, sum_{k != j} (1 + c_jk)) exactly.
    matrix = np.array(FIGURE_3, dtype=float)
    for j, row in enumerate(figure_3.per_class):
        a = 1 + matrix[j, j]
        b = (matrix[j].sum() - matrix[j, j]) + (len(matrix) - 1)
        assert row.recall_mean == pytest.approx(a / (a + b), abs=0.001)
        assert row.recall_hdi.low > beta_dist.ppf(0.001, a, b)
        assert row.recall_hdi.high < beta_dist.ppf(0.999, a, b)
        # The HDI holds 95% of the Beta's mass.
        mass = beta_dist.cdf(row.recall_hdi.high, a, b) - beta_dist.cdf(row.recall_hdi.low, a, b)
        assert mass == pytest.approx(0.95, abs=0.005)
    # Plug-in precision of class 1 by hand: 145 / (145 + 5 + 5 + 1 + 1).
    assert figure_3.per_class[0].precision == pytest.approx(145 / 157)
    assert figure_3.per_class[0].precision_hdi.low < 145 / 157 < figure_3.per_class[0].precision_hdi.high + 0.02


def test_none_of_these_is_modelled_but_not_averaged():
    # 2 topics + none. Topic 1: tp 40, router sent 10 of its docs to none; none: 30 docs, 5 sent to topic 1.
    full = np.array([[25, 5, 0],
                     [10, 40, 0],
                     [0, 0, 50]], dtype=float)
    result = multiclass_posterior(confusion=full, draws=20_000, seed=3)
    assert result.none_modelled is True
    assert result.averaged == (1, 2)
    f1_topic_1 = 2 * 40 / (2 * 40 + 5 + 10)
    f1_topic_2 = 1.0
    assert result.macro.score == pytest.approx((f1_topic_1 + f1_topic_2) / 2)
    # Micro over the topics: pooled tp 90, fp 5, fn 10.
    assert result.micro.score == pytest.approx(2 * 90 / (2 * 90 + 5 + 10))
    # Not the accuracy over the three classes (115/130), which would count "none" as a topic.
    assert result.micro.score != pytest.approx(115 / 130)


def test_averaged_over_every_class_is_unchanged():
    plain = average_f1_posterior(confusion=FIGURE_3, draws=5_000, seed=4)
    restricted = average_f1_posterior(confusion=FIGURE_3, draws=5_000, seed=4, averaged=range(5))
    assert restricted["micro"]["mean"] == pytest.approx(plain["micro"]["mean"], abs=1e-6)
    assert restricted["macro"]["hdi"] == pytest.approx(plain["macro"]["hdi"], abs=1e-6)


def test_confusion_matrix_from_pairs_and_probabilities():
    matrix = confusion_matrix(true=[0, 1, 1, 2, 2, 2], predicted=[0, 1, 2, 2, 2, 0], classes=3)
    assert matrix.tolist() == [[1, 0, 0], [0, 1, 1], [1, 0, 2]]
    soft = confusion_matrix_expected(probabilities=[[0.5, 0.5, 0], [0, 0.2, 0.8]], predicted=[1, 1], classes=3)
    assert soft[:, 1].tolist() == [0.5, 0.7, 0.8]
    with pytest.raises(ValueError):
        confusion_matrix(true=[3], predicted=[0], classes=3)
    with pytest.raises(ValueError):
        confusion_matrix_expected(probabilities=[[0.5, 0.2, 0]], predicted=[1], classes=3)


def test_sample_size_is_monotone_and_meets_its_width():
    full = _with_empty_none(FIGURE_3)
    wide = multiclass_sample_size(confusion=full, width=0.04)
    narrow = multiclass_sample_size(confusion=full, width=0.02)
    narrower = multiclass_sample_size(confusion=full, width=0.01)
    assert wide.n is not None and narrow.n is not None and narrower.n is not None
    assert wide.n < narrow.n < narrower.n
    # About 1/sqrt(n): half the width costs about four times the sample.
    assert 3.2 < narrow.n / wide.n < 4.8
    for plan in (wide, narrow, narrower):
        assert plan.width_at_n <= plan.width
        assert multiclass_hdi_width(confusion=full, n=int(plan.n * 0.97)).macro > plan.width
    # The Table 1 sample (1,391 documents) has a macro HDI about 0.038 wide; asking for more is free.
    assert wide.current_n == 1391
    assert wide.current_width == pytest.approx(0.038, abs=0.003)
    assert wide.n <= 1391


def test_sample_size_width_checked_by_simulation():
    """Samples of the planned size, drawn from the observed shares, give HDIs about as wide as asked."""
    full = _with_empty_none(FIGURE_3)
    plan = multiclass_sample_size(confusion=full, width=0.03)
    shares = (full / full.sum()).ravel()
    rng = np.random.default_rng(11)
    widths = []
    for _ in range(20):
        counts = rng.multinomial(plan.n, shares).reshape(full.shape)
        result = multiclass_posterior(confusion=counts, draws=4_000, seed=int(rng.integers(1 << 30)))
        widths.append(result.macro.hdi.high - result.macro.hdi.low)
    assert np.mean(widths) == pytest.approx(0.03, rel=0.08)


def test_bad_inputs_refused():
    with pytest.raises(ValueError):
        multiclass_sample_size(confusion=np.zeros((3, 3)), width=0.05)
    with pytest.raises(ValueError):
        multiclass_sample_size(confusion=_with_empty_none(FIGURE_3), width=1.5)
    with pytest.raises(ValueError):
        multiclass_posterior(confusion=[[1, 2], [3, 4]])


def test_the_default_prior_weighs_one_document_per_row():
    full = _with_empty_none(FIGURE_3)
    perks = multiclass_posterior(confusion=full, draws=20_000, seed=5)
    assert perks.prior == pytest.approx(1 / 5)
    # Recall of class 1 ~ Beta(1/5 + 145, 4/5 + 4) exactly.
    a, b = 0.2 + 145, 0.8 + 4
    assert perks.per_class[0].recall_mean == pytest.approx(a / (a + b), abs=0.001)
    # Less prior mass, less pull toward chance: the posterior mean moves toward the plug-in score.
    uniform = multiclass_posterior(confusion=full, draws=20_000, seed=5, prior="uniform")
    assert abs(perks.macro.mean - perks.macro.score) < abs(uniform.macro.mean - uniform.macro.score)
    with pytest.raises(ValueError):
        multiclass_posterior(confusion=full, prior="flat")
