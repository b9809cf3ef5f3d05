"""The latent true class (Dawid & Skene 1979, Bayesian) joined to seed 002's router model."""
from __future__ import annotations

import numpy as np

from estimation.stats.latent_class import latent_class_fit
from estimation.stats.multiclass import confusion_matrix, multiclass_posterior, multiclass_posterior_latent

K = 4


def _votes(classes: np.ndarray, accuracy: float, rng: np.random.Generator) -> np.ndarray:
    n = classes.size
    votes = np.zeros((n, K))
    for _ in range(3):
        answer = np.where(rng.random(n) < accuracy, classes, (classes + rng.integers(1, K, n)) % K)
        votes[np.arange(n), answer] += 1
    return votes


def test_unanimous_votes_give_back_the_voted_classes():
    rng = np.random.default_rng(1)
    z = rng.choice(K, size=400, p=[0.7, 0.1, 0.1, 0.1])
    votes = np.eye(K)[z] * 3
    fit = latent_class_fit(votes=votes, predicted=z, classes=K, seed=3)
    assert fit.identified and fit.reason is None
    assert np.allclose(fit.expected_true_counts, np.bincount(z, minlength=K), atol=0.5)
    assert fit.states.shape == (fit.chains * fit.kept, K, K)
    assert fit.accuracy[1] > 0.95


def test_gold_documents_keep_their_class():
    votes = np.eye(K)[[0, 1, 2, 3] * 20] * 3
    predicted = np.array([0, 1, 2, 3] * 20)
    fit = latent_class_fit(votes=votes, predicted=predicted, classes=K, seed=3,
                           gold_true=np.array([2, 2]), gold_predicted=np.array([1, 2]))
    assert np.all(fit.states[:, 2, 1] >= 1) and np.all(fit.states[:, 2, 2] >= 21)


def test_workers_at_chance_are_not_identified_and_say_why():
    rng = np.random.default_rng(7)
    z = rng.choice(K, size=500, p=[0.85, 0.05, 0.05, 0.05])
    votes = _votes(z, 1.0 / K, rng)  # every answer equally likely: no information about the class
    fit = latent_class_fit(votes=votes, predicted=z, classes=K, seed=7)
    assert not fit.identified
    assert "agree too little" in (fit.reason or "")
    post = multiclass_posterior_latent(votes=votes, predicted=z, classes=K, draws=2000, seed=7, per_class=False)
    assert post.latent is not None and not post.latent.identified


def test_noise_widens_the_interval_instead_of_shifting_it():
    """Same router and true classes; noisy workers: a wider interval around about the same point."""
    rng = np.random.default_rng(11)
    z = rng.choice(K, size=1500, p=[0.85, 0.05, 0.05, 0.05])
    predicted = np.where(rng.random(z.size) < 0.9, z, rng.integers(0, K, z.size))
    clean = multiclass_posterior_latent(votes=np.eye(K)[z] * 3, predicted=predicted, classes=K, draws=4000,
                                        seed=1, per_class=False)
    noisy = multiclass_posterior_latent(votes=_votes(z, 0.8, rng), predicted=predicted, classes=K, draws=4000,
                                        seed=1, per_class=False)
    clean_width = clean.macro.hdi.high - clean.macro.hdi.low
    noisy_width = noisy.macro.hdi.high - noisy.macro.hdi.low
    assert noisy_width > clean_width
    assert abs(noisy.macro.median - clean.macro.median) < clean_width / 2


def test_cocoa_point_outside_its_interval_reproduced_then_fixed():
    """The defect: "Cocoa F1 1.000 [0.256, 0.995]": one Cocoa document, routed right, the plug-in score 1
    sits above its own 95% interval. The median of the same draws lies inside by construction."""
    matrix = confusion_matrix(true=[0] * 280 + [1] * 12 + [2] * 7 + [3],
                              predicted=[0] * 276 + [1, 2, 1, 2] + [1] * 10 + [0, 2] + [2] * 6 + [0] + [3],
                              classes=K)
    post = multiclass_posterior(confusion=matrix, draws=4000, seed=5)
    cocoa = post.per_class[3]
    assert cocoa.f1 == 1.0 and cocoa.f1 > cocoa.f1_hdi.high  # reproduced: the plug-in point is outside
    for c in post.per_class:
        for point, interval in ((c.f1_median, c.f1_hdi), (c.precision_median, c.precision_hdi),
                                (c.recall_median, c.recall_hdi)):
            assert interval.low <= point <= interval.high
    for average in (post.micro, post.macro):
        assert average.hdi.low <= average.median <= average.hdi.high
