"""Crowd-label aggregation: majority vote, Dawid–Skene, Fleiss' kappa (ESTIMATION-NOTES §3).

Expected values come from the notes, from Fleiss' published example, from
hand counts in comments, or from the planted truth of simulated crowds.
"""
import json

import numpy as np
import pytest

from estimation.stats.aggregation import (
    dawid_skene,
    fleiss_kappa,
    label_counts,
    majority_vote,
    worker_agreement,
)


def simulate_crowd(*, rng, n_items, accuracies, per_item=3, prevalence=0.3, spammers=()):
    """Binary crowd: each item judged by `per_item` distinct random workers.

    A worker with accuracy a gives the true label with probability a; a
    spammer answers 1 or 0 at random, whatever the truth.
    """
    n_workers = len(accuracies)
    truth = (rng.random(n_items) < prevalence).astype(int)
    items, workers, labels = [], [], []
    for i in range(n_items):
        for w in rng.choice(n_workers, per_item, replace=False):
            if w in spammers:
                label = int(rng.random() < 0.5)
            else:
                label = truth[i] if rng.random() < accuracies[w] else 1 - truth[i]
            items.append(i)
            workers.append(w)
            labels.append(label)
    return truth, np.array(items), np.array(workers), np.array(labels)


# --------------------------------------------------------------------------- majority vote


@pytest.mark.parametrize(("accuracy", "expected_error"), [(0.8, 0.104), (0.9, 0.028)])
def test_majority_of_three_error_rate_matches_notes(accuracy, expected_error):
    # Notes §3: three workers at 80% → majority wrong 10.4% of the time; at 90% → 2.8%.
    rng = np.random.default_rng(3)
    truth, items, workers, labels = simulate_crowd(rng=rng, n_items=20000, accuracies=[accuracy] * 3)
    vote = majority_vote(items=items, labels=labels)
    error = np.mean(vote.label != truth)
    assert error == pytest.approx(expected_error, abs=0.006)  # binomial SE ≈ 0.002 at n = 20,000


def test_binary_tie_is_soft_not_first_label():
    vote = majority_vote(items=[0, 0, 1, 1, 1], labels=[1, 0, 1, 1, 0])
    assert vote.tied.tolist() == [True, False]
    assert vote.label.tolist() == [-1, 1]
    assert vote.posterior[0].tolist() == [0.5, 0.5]


def test_multiclass_tie_is_uniform_over_tied_labels():
    vote = majority_vote(items=[0, 0, 0, 0], labels=[2, 0, 2, 0], n_classes=3)
    assert vote.posterior[0].tolist() == [0.5, 0.0, 0.5]
    assert vote.label[0] == -1 and vote.tied[0]
    # An item nobody labelled: uniform, not tied, label −1.
    vote = majority_vote(items=[1], labels=[0], n_items=2, n_classes=3)
    assert vote.posterior[0].tolist() == pytest.approx([1 / 3] * 3)
    assert vote.label[0] == -1 and not vote.tied[0]
    json.dumps(vote.as_dict())


# --------------------------------------------------------------------------- Dawid–Skene


@pytest.mark.parametrize("model", ["one_coin", "full"])
def test_dawid_skene_recovers_planted_accuracies(model):
    """30 workers with accuracies in [0.65, 0.95], ~200 labels each, truth hidden from the estimator.

    Two yardsticks.  (1) Each worker's realised hit rate on these items (the
    simulation truth for this sample): Dawid–Skene only has to infer the true
    labels, so the errors are small — mean < 0.03, worst < 0.09.  (2) The
    planted accuracies: these also carry the binomial noise of 200 labels
    (SE ≈ 0.03, mean absolute ≈ 0.025), so mean < 0.05 and worst < 0.13.
    """
    rng = np.random.default_rng(11)
    accuracies = rng.uniform(0.65, 0.95, size=30)
    truth, items, workers, labels = simulate_crowd(rng=rng, n_items=2000, accuracies=accuracies)
    realised = np.array([np.mean(labels[workers == w] == truth[items[workers == w]]) for w in range(30)])
    result = dawid_skene(items=items, workers=workers, labels=labels, model=model)
    against_realised = np.abs(result.worker_accuracy - realised)
    against_planted = np.abs(result.worker_accuracy - accuracies)
    assert against_realised.mean() < 0.03 and against_realised.max() < 0.09
    assert against_planted.mean() < 0.05 and against_planted.max() < 0.13
    assert result.converged
    assert np.mean(result.label == truth) > np.mean(majority_vote(items=items, labels=labels).label == truth) - 0.005


@pytest.mark.parametrize("model", ["one_coin", "full"])
def test_dawid_skene_beats_majority_vote_with_spammers(model):
    # One worker in three answers at random; the others are 85% accurate.
    rng = np.random.default_rng(5)
    n_workers = 30
    spammers = set(range(0, n_workers, 3))
    accuracies = [0.85] * n_workers
    truth, items, workers, labels = simulate_crowd(
        rng=rng, n_items=3000, accuracies=accuracies, spammers=spammers
    )
    vote = majority_vote(items=items, labels=labels)
    result = dawid_skene(items=items, workers=workers, labels=labels, model=model)
    mv_accuracy = np.mean(vote.label == truth)
    ds_accuracy = np.mean(result.label == truth)
    assert ds_accuracy > mv_accuracy + 0.04  # measured: 0.83 → 0.90
    # The spammers are recognised as such: accuracy near 0.5 (one-coin) / prior-weighted (full).
    assert np.abs(result.worker_accuracy[sorted(spammers)] - 0.5).max() < 0.12


def test_full_model_recovers_asymmetric_confusion():
    # Every worker finds 90% of relevant documents but passes 30% of the non-relevant ones.
    rng = np.random.default_rng(8)
    n_items, n_workers = 3000, 10
    truth = (rng.random(n_items) < 0.4).astype(int)
    items, workers, labels = [], [], []
    for i in range(n_items):
        for w in rng.choice(n_workers, 3, replace=False):
            says_relevant = rng.random() < (0.9 if truth[i] else 0.3)
            items.append(i)
            workers.append(w)
            labels.append(int(says_relevant))
    result = dawid_skene(items=items, workers=workers, labels=labels, model="full")
    assert np.abs(result.confusion[:, 1, 1] - 0.9).max() < 0.08
    assert np.abs(result.confusion[:, 0, 1] - 0.3).max() < 0.08
    assert result.class_priors[1] == pytest.approx(0.4, abs=0.04)


def test_gold_items_are_anchors_and_inform_accuracy():
    # Three workers all say 0 on item 0, whose known answer is 1.
    items = [0, 0, 0, 1, 1, 1, 2, 2, 2]
    workers = [0, 1, 2, 0, 1, 2, 0, 1, 2]
    labels = [0, 0, 0, 1, 1, 0, 0, 0, 1]
    result = dawid_skene(items=items, workers=workers, labels=labels, gold_items=[0], gold_labels=[1])
    assert result.posterior[0].tolist() == [0.0, 1.0]
    assert result.label[0] == 1
    without_gold = dawid_skene(items=items, workers=workers, labels=labels)
    # Workers 0 and 1 were wrong on the gold item: their estimated accuracy must drop.
    assert result.worker_accuracy[0] < without_gold.worker_accuracy[0]
    json.dumps(result.as_dict())


def test_smoothing_keeps_accuracy_strictly_inside_zero_one():
    # Worker 3 gave a single label, which agrees with a clear majority.
    items = [0, 0, 0, 1, 1, 1, 0]
    workers = [0, 1, 2, 0, 1, 2, 3]
    labels = [1, 1, 1, 0, 0, 0, 1]
    for model in ("one_coin", "full"):
        result = dawid_skene(items=items, workers=workers, labels=labels, model=model)
        assert 0.0 < result.worker_accuracy.min() and result.worker_accuracy.max() < 1.0


def test_em_log_likelihood_does_not_decrease_without_smoothing():
    rng = np.random.default_rng(2)
    _, items, workers, labels = simulate_crowd(rng=rng, n_items=300, accuracies=rng.uniform(0.6, 0.9, 8))
    values = [
        dawid_skene(items=items, workers=workers, labels=labels, smoothing=0.0, max_iter=k, tol=0.0).log_likelihood
        for k in range(1, 8)
    ]
    assert all(b >= a - 1e-9 for a, b in zip(values, values[1:]))


# --------------------------------------------------------------------------- agreement


def test_fleiss_kappa_published_example():
    # Fleiss (1971) as reproduced on Wikipedia: 10 subjects, 14 raters, 5 categories → κ = 0.210.
    counts = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
    assert fleiss_kappa(counts=counts) == pytest.approx(0.210, abs=0.0005)


def test_fleiss_kappa_from_parallel_arrays_and_perfect_agreement():
    counts = label_counts(items=[0, 0, 0, 1, 1, 1], labels=[1, 1, 1, 0, 0, 0])
    assert fleiss_kappa(counts=counts) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        fleiss_kappa(counts=[[2, 1], [1, 1]])  # unequal raters per item


def test_worker_agreement_leaves_the_worker_out():
    # Item 0: workers 0, 1, 2 say 1, 1, 0.  Item 1: all say 0.
    # Worker 0 on item 0: others {1, 0} tie → 1/2; on item 1 others {0, 0} → 1.  Mean 0.75.
    # Worker 2 on item 0: others {1, 1} → 0; on item 1 → 1.  Mean 0.5.
    agreement = worker_agreement(items=[0, 0, 0, 1, 1, 1], workers=[0, 1, 2, 0, 1, 2], labels=[1, 1, 0, 0, 0, 0])
    assert agreement.agreement.tolist() == pytest.approx([0.75, 0.75, 0.5])
    assert agreement.compared.tolist() == [2, 2, 2]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"items": [0, 1], "workers": [0], "labels": [1, 0]},
        {"items": [0, -1], "workers": [0, 1], "labels": [1, 0]},
        {"items": [0, 0], "workers": [1, 1], "labels": [1, 0]},  # same worker twice on one item
        {"items": [0, 1], "workers": [0, 1], "labels": [1, 0], "model": "two_coin"},
        {"items": [0, 1], "workers": [0, 1], "labels": [1, 0], "gold_items": [0]},
    ],
)
def test_invalid_input_raises(kwargs):
    with pytest.raises(ValueError):
        dawid_skene(**kwargs)
