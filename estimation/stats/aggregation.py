"""Turning several crowd workers' labels into one label (or a probability) per document.

Seed 000 Sec. 4.1 takes the simplest scheme: three workers per document,
majority vote.  ESTIMATION-NOTES §3: a majority of three 80%-accurate workers
is wrong 10.4% of the time, more than the effect being measured at low
prevalence, so this module also offers Dawid–Skene (Dawid & Skene 1979;
one-coin and full confusion matrices, EM started from majority vote) with
gold (known-answer) items, Fleiss' kappa and per-worker agreement.

Input convention, used by every function here: the labels are three parallel
integer arrays of equal length, one entry per judgment,

    items[j]   index of the judged item (0 … n_items−1)
    workers[j] index of the worker who gave it (0 … n_workers−1)
    labels[j]  the label given (0 … n_classes−1; for relevance 1 = relevant)

A worker may label an item at most once.  Counts default to max index + 1.

Ties are never broken silently: a tied item gets the uniform posterior over
its tied labels, hard label −1 and ``tied = True`` (crowd-kit breaks ties
toward the first label; the notes say not to copy that).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import logsumexp

from .proportions import jsonable

TIE = -1


# =========================================================================== input


@dataclass(frozen=True)
class _Labels:
    items: np.ndarray
    workers: np.ndarray
    labels: np.ndarray
    n_items: int
    n_workers: int
    n_classes: int


def _as_index_array(values: ArrayLike, name: str) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(f"{name} must be a one-dimensional array, got shape {array.shape}")
    if array.size and not np.issubdtype(array.dtype, np.integer):
        if not np.all(np.equal(np.mod(array, 1), 0)):
            raise ValueError(f"{name} must hold integer indices")
    array = array.astype(np.int64)
    if array.size and array.min() < 0:
        raise ValueError(f"{name} must be ≥ 0 (found {array.min()})")
    return array


def _count(declared: int | None, array: np.ndarray, name: str) -> int:
    needed = int(array.max()) + 1 if array.size else 0
    if declared is None:
        return needed
    if declared < needed:
        raise ValueError(f"{name}={declared} but an index {needed - 1} occurs")
    return int(declared)


def _validate(*, items, workers, labels, n_items=None, n_workers=None, n_classes=None, check_duplicates=True) -> _Labels:
    it = _as_index_array(items, "items")
    lab = _as_index_array(labels, "labels")
    wk = _as_index_array(workers, "workers") if workers is not None else np.zeros_like(it)
    if not (it.size == lab.size == wk.size):
        raise ValueError(f"items, workers and labels must have equal length, got {it.size}, {wk.size}, {lab.size}")
    data = _Labels(
        items=it, workers=wk, labels=lab,
        n_items=_count(n_items, it, "n_items"),
        n_workers=_count(n_workers, wk, "n_workers"),
        n_classes=max(2, _count(n_classes, lab, "n_classes")),
    )
    if check_duplicates and workers is not None and it.size:
        pairs = it * data.n_workers + wk
        if np.unique(pairs).size != pairs.size:
            raise ValueError("a worker labelled the same item more than once; keep one judgment per (item, worker)")
    return data


def label_counts(*, items: ArrayLike, labels: ArrayLike, n_items: int | None = None, n_classes: int | None = None) -> np.ndarray:
    """Matrix (n_items × n_classes) of how many workers gave each label to each item."""
    data = _validate(items=items, workers=None, labels=labels, n_items=n_items, n_classes=n_classes, check_duplicates=False)
    counts = np.zeros((data.n_items, data.n_classes))
    np.add.at(counts, (data.items, data.labels), 1.0)
    return counts


# =========================================================================== majority vote


@dataclass(frozen=True)
class MajorityVote:
    """Result of :func:`majority_vote`.

    posterior[i] is uniform over the labels that tie for the most votes (a
    one-hot vector when there is a clear winner; uniform over all classes
    for an item nobody labelled).  label[i] is −1 for a tie or no labels.
    """

    posterior: np.ndarray
    label: np.ndarray
    tied: np.ndarray
    votes: np.ndarray

    @property
    def n_ties(self) -> int:
        return int(self.tied.sum())

    def as_dict(self) -> dict:
        return {**jsonable(self), "n_ties": self.n_ties}


def majority_vote(
    *, items: ArrayLike, labels: ArrayLike, n_items: int | None = None, n_classes: int | None = None
) -> MajorityVote:
    """Majority vote per item (seed 000 Sec. 4.1), binary or multi-class.

    A tie gives the uniform posterior over the tied labels (0.5/0.5 for a
    binary tie), hard label −1 and ``tied=True`` — never the first label.
    """
    votes = label_counts(items=items, labels=labels, n_items=n_items, n_classes=n_classes)
    top = votes.max(axis=1, keepdims=True)
    winners = (votes == top) & (top > 0)
    unlabelled = top[:, 0] == 0
    winners[unlabelled] = True
    posterior = winners / winners.sum(axis=1, keepdims=True)
    n_winners = winners.sum(axis=1)
    tied = (n_winners > 1) & ~unlabelled
    label = np.where(n_winners == 1, votes.argmax(axis=1), TIE)
    return MajorityVote(posterior=posterior, label=label, tied=tied, votes=votes)


# =========================================================================== Dawid–Skene


@dataclass(frozen=True)
class DawidSkeneResult:
    """Result of :func:`dawid_skene`.

    posterior: (n_items × n_classes) P(true label | all labels); gold items are one-hot.
    label: argmax of the posterior, −1 where the top classes tie exactly.
    worker_accuracy: P(worker's label is right), averaged over the class priors.
    confusion: for model "full", confusion[w][k][l] = P(worker w says l | truth k); None for "one_coin".
    """

    model: str
    posterior: np.ndarray
    label: np.ndarray
    worker_accuracy: np.ndarray
    worker_labels: np.ndarray  # how many labels each worker gave
    confusion: np.ndarray | None
    class_priors: np.ndarray
    iterations: int
    converged: bool
    log_likelihood: float

    def as_dict(self) -> dict:
        return jsonable(self)


def dawid_skene(
    *,
    items: ArrayLike,
    workers: ArrayLike,
    labels: ArrayLike,
    model: Literal["one_coin", "full"] = "one_coin",
    n_items: int | None = None,
    n_workers: int | None = None,
    n_classes: int | None = None,
    gold_items: ArrayLike | None = None,
    gold_labels: ArrayLike | None = None,
    smoothing: float = 1.0,
    max_iter: int = 200,
    tol: float = 1e-7,
) -> DawidSkeneResult:
    """Dawid & Skene (1979) EM for crowd labels, started from majority vote.

    model "one_coin": each worker w is right with probability a_w and
    otherwise picks one of the other labels uniformly.  model "full": each
    worker has a confusion matrix π_w[k, l] = P(says l | truth k).

    gold_items/gold_labels (parallel arrays): items whose true label is known.
    Their posterior is fixed to the known label (anchors), and because the
    M-step uses every item's posterior they also inform the workers'
    accuracies.  ``smoothing`` adds pseudo-counts to every worker's counts
    (and to the class priors) so a worker with few labels never gets an
    accuracy of exactly 0 or 1.

    E-step: log T_ik = log ρ_k + Σ_j log π_{w_j}[k, l_j] over item i's labels.
    M-step: ρ_k ∝ Σ_i T_ik + s;  π_w[k, l] ∝ Σ_{j by w, label l} T_{i_j k} + s.
    """
    if model not in ("one_coin", "full"):
        raise ValueError(f"model must be 'one_coin' or 'full', got {model!r}")
    if smoothing < 0:
        raise ValueError(f"smoothing must be ≥ 0, got {smoothing!r}")
    if max_iter < 1:
        raise ValueError(f"max_iter must be ≥ 1, got {max_iter!r}")
    data = _validate(items=items, workers=workers, labels=labels, n_items=n_items, n_workers=n_workers, n_classes=n_classes)
    gold_mask, gold_onehot = _gold(gold_items, gold_labels, data)

    posterior = majority_vote(items=data.items, labels=data.labels, n_items=data.n_items, n_classes=data.n_classes).posterior
    posterior = np.where(gold_mask[:, None], gold_onehot, posterior)

    previous = -np.inf
    converged = False
    iteration = 0
    for iteration in range(1, max_iter + 1):  # noqa: B007 - read after the loop
        priors, confusion = _m_step(posterior, data, model=model, smoothing=smoothing)
        joint = _log_joint(priors, confusion, data)
        log_likelihood = _log_likelihood(joint, gold_mask, gold_onehot)
        posterior = np.exp(joint - logsumexp(joint, axis=1, keepdims=True))
        posterior = np.where(gold_mask[:, None], gold_onehot, posterior)
        if abs(log_likelihood - previous) <= tol * (1.0 + abs(log_likelihood)):
            converged = True
            break
        previous = log_likelihood

    accuracy = np.einsum("k,wkk->w", priors, confusion)
    top = posterior.max(axis=1, keepdims=True)
    exact_tie = (np.isclose(posterior, top, rtol=0, atol=1e-12)).sum(axis=1) > 1
    label = np.where(exact_tie, TIE, posterior.argmax(axis=1))
    return DawidSkeneResult(
        model=model, posterior=posterior, label=label, worker_accuracy=accuracy,
        worker_labels=np.bincount(data.workers, minlength=data.n_workers),
        confusion=confusion if model == "full" else None, class_priors=priors,
        iterations=iteration, converged=converged, log_likelihood=float(log_likelihood),
    )


def _gold(gold_items, gold_labels, data: _Labels) -> tuple[np.ndarray, np.ndarray]:
    mask = np.zeros(data.n_items, dtype=bool)
    onehot = np.zeros((data.n_items, data.n_classes))
    if gold_items is None and gold_labels is None:
        return mask, onehot
    if gold_items is None or gold_labels is None:
        raise ValueError("give both gold_items and gold_labels, or neither")
    g_items = _as_index_array(gold_items, "gold_items")
    g_labels = _as_index_array(gold_labels, "gold_labels")
    if g_items.size != g_labels.size:
        raise ValueError("gold_items and gold_labels must have equal length")
    if g_items.size and (g_items.max() >= data.n_items or g_labels.max() >= data.n_classes):
        raise ValueError("a gold item or gold label is out of range")
    if np.unique(g_items).size != g_items.size:
        raise ValueError("an item appears twice among the gold items")
    mask[g_items] = True
    onehot[g_items, g_labels] = 1.0
    return mask, onehot


def _m_step(posterior: np.ndarray, data: _Labels, *, model: str, smoothing: float):
    k = data.n_classes
    priors = posterior.sum(axis=0) + smoothing
    priors = priors / priors.sum()
    # counts[w, k, l] = expected number of times worker w said l when the truth was k.
    counts = np.zeros((data.n_workers, k, k))
    # numpy's stub types ufunc.at indices as integer arrays only; a tuple with a slice is valid numpy indexing.
    np.add.at(counts, (data.workers, slice(None), data.labels), posterior[data.items])  # type: ignore[arg-type]
    if model == "full":
        smoothed = counts + smoothing
        confusion = smoothed / smoothed.sum(axis=2, keepdims=True)
    else:
        right = np.trace(counts, axis1=1, axis2=2)
        total = counts.sum(axis=(1, 2))
        # Beta(1+s, 1+s)-style shrinkage toward 1/2 keeps a_w strictly inside (0, 1).
        acc = (right + smoothing) / (total + 2.0 * smoothing) if smoothing > 0 else right / np.maximum(total, 1e-300)
        acc = np.clip(acc, 1e-9, 1 - 1e-9)
        off = (1.0 - acc) / (k - 1)
        confusion = np.repeat(off[:, None, None], k, axis=1).repeat(k, axis=2)
        idx = np.arange(k)
        confusion[:, idx, idx] = acc[:, None]
    return priors, confusion


def _log_joint(priors: np.ndarray, confusion: np.ndarray, data: _Labels) -> np.ndarray:
    """log ρ_k + Σ log π_w[k, l] for every item and class."""
    joint = np.tile(np.log(priors), (data.n_items, 1))
    np.add.at(joint, data.items, np.log(confusion[data.workers, :, data.labels]))
    return joint


def _log_likelihood(joint: np.ndarray, gold_mask: np.ndarray, gold_onehot: np.ndarray) -> float:
    free = logsumexp(joint[~gold_mask], axis=1).sum() if (~gold_mask).any() else 0.0
    anchored = (joint[gold_mask] * gold_onehot[gold_mask]).sum()
    return float(free + anchored)


# =========================================================================== agreement


def fleiss_kappa(*, counts: ArrayLike) -> float:
    """Fleiss' kappa (Fleiss 1971) for a fixed number m of raters per item.

    counts: (n_items × n_classes) matrix, row i = how many raters gave each
    label to item i (see :func:`label_counts`); every row must sum to m ≥ 2.
    κ = (P̄ − P̄_e)/(1 − P̄_e) with P̄ the mean pairwise agreement per item and
    P̄_e = Σ_k p_k² the agreement expected by chance.
    """
    matrix = np.asarray(counts, dtype=float)
    if matrix.ndim != 2 or matrix.shape[0] == 0:
        raise ValueError("counts must be a non-empty 2-D matrix (items × classes)")
    if (matrix < 0).any():
        raise ValueError("counts must be ≥ 0")
    raters = matrix.sum(axis=1)
    if not np.allclose(raters, raters[0]):
        raise ValueError("Fleiss' kappa needs the same number of raters for every item")
    m = raters[0]
    if m < 2:
        raise ValueError("Fleiss' kappa needs at least 2 raters per item")
    per_item = ((matrix**2).sum(axis=1) - m) / (m * (m - 1))
    p_bar = per_item.mean()
    shares = matrix.sum(axis=0) / matrix.sum()
    p_e = float((shares**2).sum())
    if np.isclose(p_e, 1.0):
        raise ValueError("every rater used the same single label: kappa is undefined")
    return float((p_bar - p_e) / (1.0 - p_e))


@dataclass(frozen=True)
class WorkerAgreement:
    """Per worker: labels given, and agreement with the majority of the other workers on the same items."""

    labels: np.ndarray
    compared: np.ndarray
    agreement: np.ndarray  # NaN (None in as_dict) when no item had other workers

    def as_dict(self) -> dict:
        return jsonable(self)


def worker_agreement(
    *, items: ArrayLike, workers: ArrayLike, labels: ArrayLike,
    n_items: int | None = None, n_workers: int | None = None, n_classes: int | None = None,
) -> WorkerAgreement:
    """Per-worker agreement with the majority of the *other* workers on each item.

    Leaving the worker out matters: with three workers, counting one's own
    vote makes everyone agree with the majority at least 1/3 of the time by
    construction.  A tie among the others counts as a fractional agreement
    (the worker's label's share of the tied labels), not as 0 or 1.
    """
    data = _validate(items=items, workers=workers, labels=labels, n_items=n_items, n_workers=n_workers, n_classes=n_classes)
    votes = np.zeros((data.n_items, data.n_classes))
    np.add.at(votes, (data.items, data.labels), 1.0)
    others = votes[data.items].copy()
    others[np.arange(data.items.size), data.labels] -= 1.0
    top = others.max(axis=1, keepdims=True)
    has_others = top[:, 0] > 0
    winners = (others == top) & has_others[:, None]
    share = np.where(has_others, winners[np.arange(data.items.size), data.labels] / np.maximum(winners.sum(axis=1), 1), 0.0)
    compared = np.bincount(data.workers, weights=has_others.astype(float), minlength=data.n_workers)
    agreed = np.bincount(data.workers, weights=share, minlength=data.n_workers)
    with np.errstate(invalid="ignore", divide="ignore"):
        agreement = np.where(compared > 0, agreed / np.maximum(compared, 1), np.nan)
    return WorkerAgreement(
        labels=np.bincount(data.workers, minlength=data.n_workers), compared=compared.astype(int), agreement=agreement
    )
