"""Dawid–Skene with a class prior per stratum (issue 11 item 4; ESTIMATION-NOTES §8).

One class prior across A12 (≈ 87% relevant) and B1/B2 (≈ 50%) pulls each
region's posterior mass toward the average, so the pair's recall
r1* = T12/(T12 + T_B2) computed from the soft labels is biased down (the
issue: −0.03 to −0.06 at worker accuracy 0.8, coverage 32/60 against 50/60
for majority vote; a prior per region: −0.038 → −0.002).  Expected values
are the simulation truth (the planted region counts), never the code's output.
"""
import inspect
import json

import numpy as np
import pytest

from estimation.stats.aggregation import dawid_skene, majority_vote
from estimation.stats.pair_recall import stratified_pair_recall

REGIONS = ("A12", "B1", "B2")
SIZES = {"A12": 1000, "B1": 1000, "B2": 1000}
# Relevant documents per region: the shares of the issue (A12 ≈ 87%, B1/B2 ≈ 50%).
RELEVANT = {"A12": 870, "B1": 500, "B2": 500}
TRUE_R1 = RELEVANT["A12"] / (RELEVANT["A12"] + RELEVANT["B2"])  # r1* = T12/(T12 + T_B2) = 0.635
PER_REGION = 100
WORKERS = 20
ACCURACY = 0.8


def _has_label_noise() -> bool:
    """The pair estimator's label-noise widening (another part of issue 11), when it has landed."""
    return "label_probabilities" in inspect.signature(stratified_pair_recall).parameters


def simulate_study(rng: np.random.Generator, *, accuracy: float = ACCURACY):
    """One study: an SRS of PER_REGION documents from each finite region, 3 distinct workers per document."""
    truth = np.concatenate([
        rng.permutation(np.r_[np.ones(RELEVANT[h]), np.zeros(SIZES[h] - RELEVANT[h])])[:PER_REGION] for h in REGIONS
    ]).astype(int)
    strata = np.repeat(np.arange(len(REGIONS)), PER_REGION)
    items = np.repeat(np.arange(truth.size), 3)
    workers = np.concatenate([rng.choice(WORKERS, 3, replace=False) for _ in range(truth.size)])
    labels = np.where(rng.random(items.size) < accuracy, truth[items], 1 - truth[items])
    return truth, strata, items, workers, labels


def pair_r1(soft: np.ndarray, strata: np.ndarray, *, seed: int, draws: int, label_noise: bool = False):
    """r1 of the pair from soft labels, by the product's estimator."""
    regions = {h: (SIZES[h], PER_REGION, float(soft[strata == s].sum())) for s, h in enumerate(REGIONS)}
    probabilities = {h: soft[strata == s].tolist() for s, h in enumerate(REGIONS)} if label_noise else None
    return stratified_pair_recall(
        a12=regions["A12"], b1=regions["B1"], b2=regions["B2"], seed=seed, draws=draws,
        label_probabilities=probabilities,
    ).r1


@pytest.mark.slow
def test_one_prior_biases_the_pair_recall_and_a_prior_per_stratum_removes_it():
    # 60 studies (the count), seed 20261124.  Measured: majority vote −0.021 (54/60),
    # one prior −0.047 (35/60), a prior per region +0.001 (55/60).
    rng = np.random.default_rng(20261124)
    bias = {"majority": [], "one_prior": [], "per_stratum": []}
    covered = dict.fromkeys(bias, 0)
    for _ in range(60):
        _, strata, items, workers, labels = simulate_study(rng)
        seed = int(rng.integers(2**31))
        fits = {
            "majority": majority_vote(items=items, labels=labels).posterior[:, 1],
            "one_prior": dawid_skene(items=items, workers=workers, labels=labels).posterior[:, 1],
            "per_stratum": dawid_skene(items=items, workers=workers, labels=labels, strata=strata).posterior[:, 1],
        }
        for name, soft in fits.items():
            r1 = pair_r1(soft, strata, seed=seed, draws=2000)
            bias[name].append(r1.point - TRUE_R1)
            covered[name] += r1.low <= TRUE_R1 <= r1.high
    mean = {name: float(np.mean(values)) for name, values in bias.items()}
    se = {name: float(np.std(values) / np.sqrt(len(values))) for name, values in bias.items()}
    # The defect, in the range: one prior biases recall by −0.03 to −0.06 and under-covers.
    assert -0.06 <= mean["one_prior"] <= -0.03
    assert covered["one_prior"] <= 45  # of 60; the issue measured 32
    # The fix: no bias beyond simulation noise (se ≈ 0.003), and better coverage than one prior.
    assert abs(mean["per_stratum"]) < 3 * se["per_stratum"] + 0.002
    assert covered["per_stratum"] > covered["one_prior"] + 10
    assert abs(mean["per_stratum"]) < abs(mean["majority"])


@pytest.mark.slow
@pytest.mark.slow
@pytest.mark.xfail(
    not _has_label_noise(), strict=True,
    reason="soft labels alone under-cover (174/200 = 0.87 at seed 7): the interval needs the pair "
           "estimator's label-noise widening (stratified_pair_recall(label_probabilities=...))",
)
def test_per_stratum_dawid_skene_covers_the_pair_estimand_at_accuracy_0_8():
    """The issue's acceptance test: coverage ≥ 0.9 of r1* over ≥ 200 simulated studies (nominal 0.95).

    Seed 7, 200 studies: bias +0.0025 (se 0.0022).  Soft labels alone (the
    interval counts sampling error only) covered 174/200 = 0.87 (0.887 over 400
    studies of another seed): the label noise is missing from the interval.
    With the pair estimator's ``label_probabilities`` (each region's judged
    count drawn from the posteriors, Poisson-binomial) it covered 186/200 = 0.93.
    """
    rng = np.random.default_rng(7)
    studies, covered, errors = 200, 0, []
    noise = _has_label_noise()
    for _ in range(studies):
        _, strata, items, workers, labels = simulate_study(rng)
        soft = dawid_skene(items=items, workers=workers, labels=labels, strata=strata).posterior[:, 1]
        r1 = pair_r1(soft, strata, seed=int(rng.integers(2**31)), draws=2000, label_noise=noise)
        covered += r1.low <= TRUE_R1 <= r1.high
        errors.append(r1.point - TRUE_R1)
    assert abs(np.mean(errors)) < 3 * np.std(errors) / np.sqrt(studies) + 0.002
    assert covered / studies >= 0.9


def test_one_stratum_is_the_single_prior_model():
    rng = np.random.default_rng(3)
    _, _, items, workers, labels = simulate_study(rng)
    for model in ("one_coin", "full"):
        plain = dawid_skene(items=items, workers=workers, labels=labels, model=model)
        one = dawid_skene(items=items, workers=workers, labels=labels, model=model, strata=np.zeros(300, dtype=int))
        assert plain.stratum_priors is None
        np.testing.assert_allclose(one.posterior, plain.posterior, atol=1e-9)
        np.testing.assert_allclose(one.stratum_priors[0], plain.class_priors, atol=1e-9)
        np.testing.assert_allclose(one.worker_accuracy, plain.worker_accuracy, atol=1e-9)


def test_stratum_priors_recover_the_planted_shares():
    # 0.9-accurate workers, 2,000 items per stratum: shares 0.9 and 0.2 planted.
    rng = np.random.default_rng(12)
    n = 2000
    truth = np.r_[rng.random(n) < 0.9, rng.random(n) < 0.2].astype(int)
    strata = np.repeat([0, 1], n)
    items = np.repeat(np.arange(2 * n), 3)
    workers = np.concatenate([rng.choice(15, 3, replace=False) for _ in range(2 * n)])
    labels = np.where(rng.random(items.size) < 0.9, truth[items], 1 - truth[items])
    result = dawid_skene(items=items, workers=workers, labels=labels, strata=strata)
    realised = [truth[:n].mean(), truth[n:].mean()]
    np.testing.assert_allclose(result.stratum_priors[:, 1], realised, atol=0.02)
    # The mixture over items is the overall share.
    assert result.class_priors[1] == pytest.approx(truth.mean(), abs=0.02)
    json.dumps(result.as_dict())


def test_same_votes_in_two_strata_differ_by_the_prior_log_odds():
    # One-coin E-step: logit P(relevant) = logit ρ_stratum + Σ worker log-likelihood ratios, so two
    # items with the same workers and votes differ by exactly the difference of their priors' log odds.
    rng = np.random.default_rng(4)
    _, strata, items, workers, labels = simulate_study(rng)
    # Items 0 (A12) and 250 (B2): copy item 0's workers and labels onto item 250.
    workers = workers.copy()
    labels = labels.copy()
    workers[750:753] = workers[0:3]
    labels[750:753] = labels[0:3]
    result = dawid_skene(items=items, workers=workers, labels=labels, strata=strata)

    def logit(p):
        return np.log(p / (1.0 - p))

    rho = result.stratum_priors[:, 1]
    difference = logit(result.posterior[0, 1]) - logit(result.posterior[250, 1])
    assert difference == pytest.approx(logit(rho[0]) - logit(rho[2]), abs=1e-9)
    assert rho[0] > rho[2]


def test_gold_items_stay_anchored_with_strata():
    items = [0, 0, 0, 1, 1, 1, 2, 2, 2]
    workers = [0, 1, 2, 0, 1, 2, 0, 1, 2]
    labels = [0, 0, 0, 1, 1, 0, 0, 0, 1]
    result = dawid_skene(items=items, workers=workers, labels=labels, gold_items=[0], gold_labels=[1], strata=[2, 0, 1])
    assert result.posterior[0].tolist() == [0.0, 1.0]
    assert result.stratum_priors.shape == (3, 2)


def test_strata_set_the_number_of_items():
    # The last item has no labels: its posterior is its stratum's prior.
    result = dawid_skene(items=[0, 0, 0], workers=[0, 1, 2], labels=[1, 1, 1], strata=[0, 1])
    assert result.posterior.shape == (2, 2)
    np.testing.assert_allclose(result.posterior[1], result.stratum_priors[1])


@pytest.mark.parametrize(
    "strata",
    [[0, 1], [0, 1, 2, 3], [0, -1, 0], [0.5, 1, 1]],
)
def test_invalid_strata_raise(strata):
    with pytest.raises(ValueError):
        dawid_skene(items=[0, 1, 2], workers=[0, 1, 2], labels=[1, 0, 1], n_items=3, strata=strata)
