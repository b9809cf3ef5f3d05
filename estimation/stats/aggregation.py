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

Dawid–Skene takes an optional ``strata`` (one stratum index per item) and
then fits one class prior per stratum (ESTIMATION-NOTES §8): one prior across
strata of different prevalence pulls every stratum's posterior mass toward the
average, which biased the pair's recall by −0.047 in simulation (see
docs/aggregation.md).  :func:`label_quality` turns the vote counts into the
agreement figures and the low-agreement warning a report shows.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats
from scipy.special import expit, gammaln

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
    class_priors: the fitted class shares; with ``strata``, the item-weighted
        mixture of the per-stratum priors (the share over all items).
    stratum_priors: with ``strata``, (n_strata × n_classes) the class prior of
        each stratum; None without strata.
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
    stratum_priors: np.ndarray | None = None

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
    strata: ArrayLike | None = None,
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

    strata (one non-negative integer per item; ``n_items`` defaults to its
    length): fit one class prior per stratum, ρ_{g,k} ∝ Σ_{i in g} T_ik + s,
    and use ρ_{g(i)} in item i's E-step; the workers' confusion matrices stay
    shared across strata (ESTIMATION-NOTES §8: the pair's regions A12 ≈ 87%
    and B1/B2 ≈ 50% relevant).  Without ``strata`` the result is exactly the
    single-prior model's.
    """
    if model not in ("one_coin", "full"):
        raise ValueError(f"model must be 'one_coin' or 'full', got {model!r}")
    if smoothing < 0:
        raise ValueError(f"smoothing must be ≥ 0, got {smoothing!r}")
    if max_iter < 1:
        raise ValueError(f"max_iter must be ≥ 1, got {max_iter!r}")
    if strata is not None and n_items is None:
        n_items = int(np.asarray(strata).size)
    data = _validate(items=items, workers=workers, labels=labels, n_items=n_items, n_workers=n_workers, n_classes=n_classes)
    gold_mask, gold_onehot = _gold(gold_items, gold_labels, data)
    stratum_of = _strata(strata, data)

    posterior = majority_vote(items=data.items, labels=data.labels, n_items=data.n_items, n_classes=data.n_classes).posterior
    posterior = np.where(gold_mask[:, None], gold_onehot, posterior)

    previous = -np.inf
    converged = False
    iteration = 0
    for iteration in range(1, max_iter + 1):  # noqa: B007 - read after the loop
        priors, confusion = _m_step(posterior, data, model=model, smoothing=smoothing, strata=stratum_of)
        joint = _log_joint(priors, confusion, data, strata=stratum_of)
        log_likelihood = _log_likelihood(joint, gold_mask, gold_onehot)
        posterior = np.exp(joint - _logsumexp_rows(joint))
        posterior = np.where(gold_mask[:, None], gold_onehot, posterior)
        if abs(log_likelihood - previous) <= tol * (1.0 + abs(log_likelihood)):
            converged = True
            break
        previous = log_likelihood

    stratum_priors = None
    if stratum_of is not None:
        stratum_priors = priors
        priors = priors[stratum_of].mean(axis=0) if data.n_items else priors.mean(axis=0)
    accuracy = np.einsum("k,wkk->w", priors, confusion)
    top = posterior.max(axis=1, keepdims=True)
    exact_tie = (np.isclose(posterior, top, rtol=0, atol=1e-12)).sum(axis=1) > 1
    label = np.where(exact_tie, TIE, posterior.argmax(axis=1))
    return DawidSkeneResult(
        model=model, posterior=posterior, label=label, worker_accuracy=accuracy,
        worker_labels=np.bincount(data.workers, minlength=data.n_workers),
        confusion=confusion if model == "full" else None, class_priors=priors,
        iterations=iteration, converged=converged, log_likelihood=float(log_likelihood),
        stratum_priors=stratum_priors,
    )


def _strata(strata: ArrayLike | None, data: _Labels) -> np.ndarray | None:
    if strata is None:
        return None
    index = _as_index_array(strata, "strata")
    if index.size != data.n_items:
        raise ValueError(f"strata must give one stratum per item ({data.n_items}), got {index.size}")
    return index


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


def _m_step(posterior: np.ndarray, data: _Labels, *, model: str, smoothing: float, strata: np.ndarray | None = None):
    k = data.n_classes
    if strata is None:
        priors = posterior.sum(axis=0) + smoothing
        priors = priors / priors.sum()
    else:
        # One prior per stratum (rows); an empty stratum without smoothing gets the uniform prior.
        sums = np.zeros((int(strata.max()) + 1 if strata.size else 1, k))
        np.add.at(sums, strata, posterior)
        sums += smoothing
        totals = sums.sum(axis=1, keepdims=True)
        priors = np.divide(sums, totals, out=np.full_like(sums, 1.0 / k), where=totals > 0)
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


def _log_joint(priors: np.ndarray, confusion: np.ndarray, data: _Labels, *, strata: np.ndarray | None = None) -> np.ndarray:
    """log ρ_k + Σ log π_w[k, l] for every item and class (ρ of the item's stratum when strata are given)."""
    if strata is None:
        joint = np.tile(np.log(priors), (data.n_items, 1))
    else:
        joint = np.log(priors)[strata]  # fancy indexing: a fresh (n_items × k) array
    np.add.at(joint, data.items, np.log(confusion[data.workers, :, data.labels]))
    return joint


def _logsumexp_rows(joint: np.ndarray) -> np.ndarray:
    """log Σ_k exp(joint[i, k]) per row, as a column: max + log Σ exp(· − max), the same value as scipy's
    logsumexp to rounding, at a tenth of its cost on these small arrays (it was most of an EM fit's time)."""
    top = joint.max(axis=1, keepdims=True) if joint.size else np.zeros((joint.shape[0], 1))
    top = np.where(np.isfinite(top), top, 0.0)  # a row of −inf stays −inf (log 0), as scipy's
    with np.errstate(divide="ignore"):
        return top + np.log(np.exp(joint - top).sum(axis=1, keepdims=True))


def _log_likelihood(joint: np.ndarray, gold_mask: np.ndarray, gold_onehot: np.ndarray) -> float:
    free = _logsumexp_rows(joint[~gold_mask]).sum() if (~gold_mask).any() else 0.0
    anchored = (joint[gold_mask] * gold_onehot[gold_mask]).sum()
    return float(free + anchored)


# =========================================================================== Bayesian Dawid–Skene (draws)

# Prior of a worker's accuracy (one-coin), hierarchical: a_w ~ Beta(μκ, (1−μ)κ), the crowd's mean μ and
# concentration κ drawn each sweep from a grid (uniform prior on it).  μ > 1/2 (a worker is more often right
# than wrong) names the classes: no label switching from the initial EM fit.  With three labels per document
# and dozens of workers each judging a few dozen documents, one accuracy per worker under a flat prior is
# barely identified (the chain put a 2% stratum at 4–8%); pooling them toward the crowd's mean is what lets
# the intervals cover (docstring of :func:`dawid_skene_draws`).
ACCURACY_MEAN_GRID = np.linspace(0.51, 0.99, 49)
ACCURACY_CONCENTRATION_GRID = np.array([2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0])
# Prior of each row of a "full" confusion matrix: Dirichlet(1, …, 1) plus one more on the diagonal.
CONFUSION_DIAGONAL_PRIOR = 1.0


@dataclass(frozen=True)
class DawidSkeneDraws:
    """Result of :func:`dawid_skene_draws`: posterior draws of the Bayesian Dawid–Skene model.

    posterior: (draws × n_items × n_classes) P(true label | labels, the draw's worker confusions and class
        priors) — the EM posterior of :func:`dawid_skene` recomputed at each draw of the parameters, so the
        spread across draws is the uncertainty of the workers' accuracies; gold items one-hot.
    labels: (draws × n_items) the true labels drawn with them (the Gibbs chain's latent classes).
    posterior_mean: (n_items × n_classes) the mean of ``posterior`` over draws.
    worker_accuracy: (draws × n_workers); class_priors: (draws × n_classes), item-weighted over strata.
    point: the EM fit the chain started from.
    """

    model: str
    posterior: np.ndarray
    labels: np.ndarray
    posterior_mean: np.ndarray
    worker_accuracy: np.ndarray
    class_priors: np.ndarray
    burn_in: int
    point: DawidSkeneResult

    @property
    def draws(self) -> int:
        return int(self.posterior.shape[0])

    def as_dict(self) -> dict:
        """Summaries only (the draws are too large for a report): mean posterior and accuracy intervals."""
        low, high = np.quantile(self.worker_accuracy, [0.025, 0.975], axis=0) if self.draws else (None, None)
        return jsonable({"model": self.model, "draws": self.draws, "burn_in": self.burn_in,
                         "posterior_mean": self.posterior_mean,
                         "worker_accuracy_mean": self.worker_accuracy.mean(axis=0),
                         "worker_accuracy_low": low, "worker_accuracy_high": high})


def _dirichlet_rows(rng: np.random.Generator, alpha: np.ndarray) -> np.ndarray:
    """One Dirichlet draw per row of ``alpha`` (last axis), through normalised gamma variates."""
    g = rng.standard_gamma(alpha)
    total = g.sum(axis=-1, keepdims=True)
    return np.where(total > 0, g / np.where(total > 0, total, 1.0), 1.0 / alpha.shape[-1])


def dawid_skene_draws(
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
    strata: ArrayLike | None = None,
    draws: int = 1000,
    burn_in: int = 200,
    seed: int | None = None,
) -> DawidSkeneDraws:
    """Bayesian Dawid & Skene (1979) by Gibbs sampling: posteriors that carry the uncertainty of the workers'
    accuracies (issue 24 item 5).

    The EM fit (:func:`dawid_skene`) gives each item's posterior at the *estimated* accuracies; an interval
    built on it treats those accuracies as known, and with a few dozen labels per worker they are not
    (Reuters `gold`, body classifier: 0.944 (0.939–0.948), missing the truth 0.970).  Here the parameters
    are drawn too — the Bayesian treatment of Dawid–Skene's model (e.g. Paun et al., "Comparing Bayesian
    models of annotation", TACL 2018; Raykar et al., JMLR 2010) — by alternating

    * z_i | θ ~ Categorical(T_i), T_ik ∝ ρ_{g(i),k} Π_j π_{w_j}[k, l_j] (the E-step; gold items fixed);
    * one_coin: a_w | z, μ, κ ~ Beta(μκ + right_w, (1−μ)κ + wrong_w), and (μ, κ) | a from a grid
      (hierarchical prior, :data:`ACCURACY_MEAN_GRID`: the workers' accuracies are pooled toward the
      crowd's as much as the data say they are alike);
      full: π_w[k, ·] | z ~ Dirichlet(1 + counts_w[k, ·], one more on the diagonal);
    * ρ_g | z ~ Dirichlet(1 + class counts of stratum g) (one prior per stratum as :func:`dawid_skene`).

    The chain starts from the EM fit's labels, drops ``burn_in`` sweeps and keeps ``draws``.  Each kept
    draw stores T (Rao–Blackwellised posterior) and z.  A recall interval that uses draw d's labels (or
    posteriors) in its draw d propagates the accuracies' uncertainty; ``posterior_mean`` alone does not.
    """
    if draws < 1 or burn_in < 0:
        raise ValueError(f"draws must be ≥ 1 and burn_in ≥ 0, got {draws!r}, {burn_in!r}")
    point = dawid_skene(items=items, workers=workers, labels=labels, model=model, n_items=n_items,
                        n_workers=n_workers, n_classes=n_classes, gold_items=gold_items, gold_labels=gold_labels,
                        strata=strata)
    if strata is not None and n_items is None:
        n_items = int(np.asarray(strata).size)
    data = _validate(items=items, workers=workers, labels=labels, n_items=n_items, n_workers=n_workers,
                     n_classes=n_classes)
    gold_mask, gold_onehot = _gold(gold_items, gold_labels, data)
    stratum_of = _strata(strata, data)
    rng = np.random.default_rng(seed)
    k = data.n_classes
    n_strata = int(stratum_of.max()) + 1 if stratum_of is not None and stratum_of.size else 1
    group = stratum_of if stratum_of is not None else np.zeros(data.n_items, dtype=np.int64)
    idx = np.arange(k)

    def draw_labels(posterior: np.ndarray) -> np.ndarray:
        cumulative = np.cumsum(posterior, axis=1)
        u = rng.random(data.n_items)[:, None] * cumulative[:, -1:]
        return np.minimum((cumulative < u).sum(axis=1), k - 1)

    z = draw_labels(point.posterior)
    if model == "one_coin" and k == 2:
        return _binary_one_coin_chain(data=data, z=z, group=group, n_strata=n_strata, gold_mask=gold_mask,
                                      gold_onehot=gold_onehot, point=point, rng=rng, draws=draws, burn_in=burn_in)
    kept_posterior = np.empty((draws, data.n_items, k))
    kept_labels = np.empty((draws, data.n_items), dtype=np.int8 if k < 128 else np.int64)
    kept_accuracy = np.empty((draws, data.n_workers))
    kept_priors = np.empty((draws, k))
    n_w = float(data.n_workers)
    grid_k = np.broadcast_to(ACCURACY_CONCENTRATION_GRID[None, :], (ACCURACY_MEAN_GRID.size,
                                                                   ACCURACY_CONCENTRATION_GRID.size))
    grid_a = ACCURACY_MEAN_GRID[:, None] * grid_k
    grid_b = grid_k - grid_a
    hyper_mean = float(np.clip(np.mean(point.worker_accuracy), ACCURACY_MEAN_GRID[0], ACCURACY_MEAN_GRID[-1]))
    hyper_strength = 20.0
    cell_base = data.workers * (k * k) + data.labels  # + k·z gives the (worker, truth, label) cell
    # The grid's constant terms, once (the griddy Gibbs step below reads them every sweep).
    grid_norm = (n_w * (gammaln(grid_k) - gammaln(grid_a) - gammaln(grid_b))).ravel()
    grid_a1, grid_b1 = (grid_a - 1.0).ravel(), (grid_b - 1.0).ravel()
    grid_mean, grid_strength = (grid_a / grid_k).ravel(), grid_k.ravel()
    has_gold = bool(gold_mask.any())
    # The item-weighted mixture of the strata's priors (the uniform mixture without items).
    stratum_share = (np.bincount(group, minlength=n_strata) / data.n_items if data.n_items
                     else np.full(n_strata, 1.0 / n_strata))
    log_confusion = np.empty((data.labels.size, k))
    for sweep in range(burn_in + draws):
        counts = np.bincount(cell_base + k * z[data.items], minlength=data.n_workers * k * k).reshape(
            data.n_workers, k, k).astype(float)
        if model == "full":
            alpha = counts + 1.0
            alpha[:, idx, idx] += CONFUSION_DIAGONAL_PRIOR
            confusion = _dirichlet_rows(rng, alpha)
        else:
            right = np.trace(counts, axis1=1, axis2=2)
            wrong = counts.sum(axis=(1, 2)) - right
            a_prior, b_prior = hyper_mean * hyper_strength, (1.0 - hyper_mean) * hyper_strength
            acc = np.clip(rng.beta(a_prior + right, b_prior + wrong), 1e-9, 1 - 1e-9)
            # Griddy Gibbs for (μ, κ) given the accuracies (Ritter & Tanner 1992).
            log_acc, log_rest = np.log(acc).sum(), np.log1p(-acc).sum()
            log_post = grid_norm + grid_a1 * log_acc + grid_b1 * log_rest
            weights = np.exp(log_post - log_post.max())
            cell = int(np.searchsorted(np.cumsum(weights), rng.random() * weights.sum()))
            cell = min(cell, weights.size - 1)
            hyper_mean, hyper_strength = float(grid_mean[cell]), float(grid_strength[cell])
            confusion = np.repeat(((1.0 - acc) / (k - 1))[:, None, None], k, axis=1).repeat(k, axis=2)
            confusion[:, idx, idx] = acc[:, None]
            # log π_w[c, l_j] of one coin: log a_w where l_j = c, log((1 − a_w)/(k − 1)) elsewhere.
            log_right, log_wrong = np.log(acc)[data.workers], np.log((1.0 - acc) / (k - 1))[data.workers]
            log_confusion = np.where(data.labels[:, None] == idx[None, :], log_right[:, None], log_wrong[:, None])
        sums = np.bincount(group * k + z, minlength=n_strata * k).reshape(n_strata, k).astype(float)
        priors = _dirichlet_rows(rng, sums + 1.0)
        # E-step as _log_joint, with bincount (np.add.at is ~10× slower in this loop).
        if model == "full":
            log_confusion = np.log(confusion[data.workers, :, data.labels])
        joint = np.log(priors)[group] + np.stack(
            [np.bincount(data.items, weights=log_confusion[:, c], minlength=data.n_items) for c in range(k)], axis=1)
        # Normalised in place (scipy's logsumexp cost half of each sweep): exp(joint − row max) / row sum.
        joint -= joint.max(axis=1, keepdims=True)
        np.exp(joint, out=joint)
        joint /= joint.sum(axis=1, keepdims=True)
        posterior = np.where(gold_mask[:, None], gold_onehot, joint) if has_gold else joint
        z = draw_labels(posterior)
        if sweep >= burn_in:
            d = sweep - burn_in
            mixture = stratum_share @ priors
            kept_posterior[d] = posterior
            kept_labels[d] = z
            kept_accuracy[d] = np.einsum("k,wkk->w", mixture, confusion)
            kept_priors[d] = mixture
    return DawidSkeneDraws(model=model, posterior=kept_posterior, labels=kept_labels,
                           posterior_mean=kept_posterior.mean(axis=0), worker_accuracy=kept_accuracy,
                           class_priors=kept_priors, burn_in=int(burn_in), point=point)


def _griddy_hyper(acc: np.ndarray, rng: np.random.Generator, grid: tuple[np.ndarray, ...]) -> tuple[float, float]:
    """One draw of the crowd's (μ, κ) given the accuracies, on the grid (griddy Gibbs, Ritter & Tanner 1992)."""
    norm, a1, b1, mean, strength = grid
    log_post = norm + a1 * float(np.log(acc).sum()) + b1 * float(np.log1p(-acc).sum())
    weights = np.exp(log_post - log_post.max())
    cumulative = np.cumsum(weights)
    cell = min(int(np.searchsorted(cumulative, rng.random() * cumulative[-1])), weights.size - 1)
    return float(mean[cell]), float(strength[cell])


def _binary_one_coin_chain(*, data: _Labels, z: np.ndarray, group: np.ndarray, n_strata: int, gold_mask: np.ndarray,
                           gold_onehot: np.ndarray, point: DawidSkeneResult, rng: np.random.Generator, draws: int,
                           burn_in: int) -> DawidSkeneDraws:
    """:func:`dawid_skene_draws` for two classes and one coin, the same conditionals in log-odds form.

    A worker's vote adds ±logit(a_w) to its item's log-odds of class 1, the stratum's prior adds
    logit(ρ_g1), and the class prior's Dirichlet(1 + counts) is a Beta; about a dozen array operations a sweep
    instead of forty, which keeps a report's chain (300 sweeps on 600 documents × 3 votes) within its budget.
    """
    n_w = float(data.n_workers)
    grid_k = np.broadcast_to(ACCURACY_CONCENTRATION_GRID[None, :], (ACCURACY_MEAN_GRID.size,
                                                                   ACCURACY_CONCENTRATION_GRID.size))
    grid_a = ACCURACY_MEAN_GRID[:, None] * grid_k
    grid_b = grid_k - grid_a
    grid = ((n_w * (gammaln(grid_k) - gammaln(grid_a) - gammaln(grid_b))).ravel(), (grid_a - 1.0).ravel(),
            (grid_b - 1.0).ravel(), (grid_a / grid_k).ravel(), grid_k.ravel())
    hyper_mean = float(np.clip(np.mean(point.worker_accuracy), ACCURACY_MEAN_GRID[0], ACCURACY_MEAN_GRID[-1]))
    hyper_strength = 20.0
    total = np.bincount(data.workers, minlength=data.n_workers).astype(float)
    sign = 2.0 * data.labels - 1.0  # +1 for a vote of class 1, −1 for class 0
    stratum_size = np.bincount(group, minlength=n_strata).astype(float)
    share = stratum_size / data.n_items if data.n_items else np.full(n_strata, 1.0 / n_strata)
    gold = np.flatnonzero(gold_mask)
    gold_one = gold_onehot[gold, 1]
    kept_one = np.empty((draws, data.n_items))
    kept_labels = np.empty((draws, data.n_items), dtype=np.int8)
    kept_accuracy = np.empty((draws, data.n_workers))
    kept_priors = np.empty((draws, 2))
    for sweep in range(burn_in + draws):
        right = np.bincount(data.workers, weights=data.labels == z[data.items], minlength=data.n_workers)
        acc = np.clip(rng.beta(hyper_mean * hyper_strength + right, (1.0 - hyper_mean) * hyper_strength
                               + total - right), 1e-9, 1 - 1e-9)
        hyper_mean, hyper_strength = _griddy_hyper(acc, rng, grid)
        ones = np.bincount(group, weights=z, minlength=n_strata)
        prior_one = np.clip(rng.beta(1.0 + ones, 1.0 + stratum_size - ones), 1e-12, 1 - 1e-12)
        log_odds = np.log(prior_one / (1.0 - prior_one))[group] + np.bincount(
            data.items, weights=sign * np.log(acc / (1.0 - acc))[data.workers], minlength=data.n_items)
        one = expit(log_odds)
        one[gold] = gold_one
        z = (rng.random(data.n_items) < one).astype(np.int64)
        if sweep >= burn_in:
            d = sweep - burn_in
            kept_one[d] = one
            kept_labels[d] = z
            kept_accuracy[d] = acc  # one coin: right with probability a_w whatever the class
            mixture_one = float(share @ prior_one)
            kept_priors[d] = (1.0 - mixture_one, mixture_one)
    posterior = np.stack([1.0 - kept_one, kept_one], axis=2)
    return DawidSkeneDraws(model="one_coin", posterior=posterior, labels=kept_labels,
                           posterior_mean=posterior.mean(axis=0), worker_accuracy=kept_accuracy,
                           class_priors=kept_priors, burn_in=int(burn_in), point=point)


@dataclass(frozen=True)
class DawidSkeneGroupDraws:
    """Result of :func:`dawid_skene_group_draws`: per group of items (a sample's judged documents).

    counts[g]: (draws,) how many of the group's items the chain's latent labels put in ``positive_class``,
        one per kept draw — the joint posterior of the group's count with the workers' accuracies drawn
        too; draw d of every group comes from the same sweep.
    probabilities[g]: (items of g,) P(item in ``positive_class``), averaged over the draws (the point).
    """

    counts: dict[str, np.ndarray]
    probabilities: dict[str, np.ndarray]
    draws: int

    def as_dict(self) -> dict:
        return jsonable(self)


def dawid_skene_group_draws(*, fit: DawidSkeneDraws, groups: Mapping[str, ArrayLike],
                            positive_class: int = 1) -> DawidSkeneGroupDraws:
    """Counts of ``positive_class`` among each group's items, per draw of :func:`dawid_skene_draws`.

    The latent labels z of a Gibbs sweep are a draw from the joint posterior of every item's true class
    (Paun et al., TACL 2018), so Σ_{i in g} z_i^(d) over the kept sweeps d is a draw of the group's count that
    carries both the label noise given the accuracies and the accuracies' own uncertainty; a count built
    from the EM posteriors (:func:`dawid_skene`) carries only the first.  Estimators take these draws as
    imputations of the labels (e.g. ``pair_recall.stratified_pair_recall``'s ``judged_count_draws``).
    """
    if not 0 <= positive_class < fit.posterior.shape[2]:
        raise ValueError(f"positive_class must be a class index below {fit.posterior.shape[2]}, got {positive_class!r}")
    counts: dict[str, np.ndarray] = {}
    probabilities: dict[str, np.ndarray] = {}
    for key, members in groups.items():
        index = np.asarray(members, dtype=np.int64)
        if index.size and (index.min() < 0 or index.max() >= fit.posterior.shape[1]):
            raise ValueError(f"group {key!r} names an item outside 0 … {fit.posterior.shape[1] - 1}")
        counts[key] = (fit.labels[:, index] == positive_class).sum(axis=1).astype(float)
        probabilities[key] = fit.posterior_mean[index, positive_class].copy()
    return DawidSkeneGroupDraws(counts=counts, probabilities=probabilities, draws=fit.draws)


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


# =========================================================================== label quality

# Thresholds of the low-agreement warning (docs/aggregation.md, "Label quality", has the simulations).
#
# The split-vote share is the primary trigger.  Under the one-coin model a document judged by
# three workers of accuracy a gets a split vote with probability 3a(1−a), whatever its true label,
# so the share does not depend on prevalence; 0.35 corresponds to a ≈ 0.865, where the majority of
# three is wrong about 5% of the time (0.9 → 0.27 and 2.8%; 0.8 → 0.48 and 10.4%, notes §3).
# A stratum alone (e.g. hard documents in B2) trips it when its split share is above 0.35 with 95%
# confidence (one-sided Clopper–Pearson lower bound) and it has at least STRATUM_MIN_DOCUMENTS
# documents: a report has five or more strata of 20–100 documents, and the point share of a
# 30-document stratum of 0.9-accurate workers (expected 0.27, standard error 0.08) passed 0.45 in
# 9.5% of simulated five-stratum topics; with the bound it takes about 0.50 at 30 documents, 0.43 at 100.
# Fleiss' κ is depressed at extreme prevalence (0.95-accurate workers on a 1%-prevalence sample
# give κ ≈ 0.14), so κ < 0.4 fires only while the share of relevant votes lies in [0.25, 0.75],
# where κ ≈ (2a−1)² (0.4 ↔ a ≈ 0.82) is not distorted; it adds what the split share misses:
# workers who agree with each other by answering alike regardless of the document.
SPLIT_SHARE_THRESHOLD = 0.35
STRATUM_CONFIDENCE = 0.95
STRATUM_MIN_DOCUMENTS = 20
KAPPA_THRESHOLD = 0.4
KAPPA_BALANCED_SHARE = (0.25, 0.75)


@dataclass(frozen=True)
class StratumAgreement:
    """Agreement within one stratum: documents, Fleiss' κ (None when undefined) and split-vote share."""

    documents: int
    fleiss_kappa: float | None
    split_share: float | None

    def as_dict(self) -> dict:
        return jsonable(self)


@dataclass(frozen=True)
class LabelQuality:
    """Result of :func:`label_quality`.

    fleiss_kappa: over all documents (None when undefined: fewer than one document
        with two votes, or every vote the same).
    split_share: share of documents whose votes were not unanimous (None without documents).
    per_stratum: the same figures per stratum (empty without strata).
    low_agreement: a threshold above was crossed; ``reasons`` says which
        ("split_share", "stratum_split_share:<stratum>", "kappa").
    message: plain words for a manager (None when agreement is adequate).
    majority_error: with three votes per document, the chance that a majority
        label is wrong implied by the split share under the one-coin model
        (None otherwise).
    """

    documents: int
    fleiss_kappa: float | None
    split_share: float | None
    relevant_vote_share: float | None
    per_stratum: Mapping[str, StratumAgreement]
    low_agreement: bool
    reasons: tuple[str, ...]
    message: str | None
    majority_error: float | None
    # "Unsure" answers (docs/aggregation.md): complete documents left undecided, unsure votes, and
    # judged documents with one (their sure votes only are in ``votes``); ``disclosure`` says so in words.
    undecided: int = 0
    unsure_votes: int = 0
    unsure_documents: int = 0
    disclosure: str | None = None

    def as_dict(self) -> dict:
        return jsonable(self)


def _binary_fleiss_kappa(relevant: np.ndarray, total: np.ndarray) -> float | None:
    """Fleiss' κ for two labels, allowing a different number of raters per document.

    P_i = (k_i² + (n_i−k_i)² − n_i)/(n_i(n_i−1)), P̄ their mean, p = Σk_i/Σn_i,
    P̄_e = p² + (1−p)².  With the same n for every document this is
    :func:`fleiss_kappa` exactly.  Documents with fewer than two votes are left out.
    """
    keep = total >= 2
    k, n = relevant[keep].astype(float), total[keep].astype(float)
    if n.size == 0:
        return None
    per_item = (k**2 + (n - k) ** 2 - n) / (n * (n - 1.0))
    p = k.sum() / n.sum()
    p_e = p**2 + (1.0 - p) ** 2
    if math.isclose(p_e, 1.0):
        return None
    return float((per_item.mean() - p_e) / (1.0 - p_e))


def _lower_bound(successes: int, n: int) -> float:
    """One-sided Clopper–Pearson lower confidence bound (level STRATUM_CONFIDENCE) of a proportion."""
    if successes <= 0:
        return 0.0
    return float(stats.beta.ppf(1.0 - STRATUM_CONFIDENCE, successes, n - successes + 1))


def _split(relevant: np.ndarray, total: np.ndarray) -> float | None:
    if relevant.size == 0:
        return None
    return float(np.mean((relevant > 0) & (relevant < total)))


def majority_error_from_split_share(split_share: float) -> float | None:
    """P(majority of three is wrong) implied by a split-vote share under the one-coin model.

    Split share s = 3a(1−a) for workers of accuracy a (≥ 1/2), so
    a = (1 + √(1 − 4s/3))/2 and the majority errs with 3a(1−a)² + (1−a)³
    (notes §3: a = 0.8 → 0.104).  None above s = 0.75, the share of a crowd
    that answers at random (a = 1/2, error 1/2).
    """
    if not 0.0 <= split_share <= 0.75:
        return None
    a = (1.0 + math.sqrt(max(0.0, 1.0 - 4.0 * split_share / 3.0))) / 2.0
    return 3.0 * a * (1.0 - a) ** 2 + (1.0 - a) ** 3


def label_quality(*, votes: Sequence[tuple[int, int]], strata: Sequence[str] | None = None,
                  intervals_widened: bool = False, undecided: int = 0, unsure_votes: int = 0,
                  unsure_documents: int = 0) -> LabelQuality:
    """Agreement of the crowd on complete documents, and a warning when it is too low to trust.

    votes: (relevant votes, total votes) per complete document; strata: the
    document's stratum (e.g. "A12", "B2", "U"), parallel to votes.  Fleiss'
    κ (Fleiss 1971, two labels, see :func:`_binary_fleiss_kappa`) and the
    share of documents with a split vote, overall and per stratum.  The
    thresholds are the module constants above (ESTIMATION-NOTES §3; the issue's
    crowd had κ 0.31–0.36 and raised no warning).

    With "unsure" answers, ``votes`` are the *sure* votes (relevant, on + off topic); the
    undecided documents (no sure vote, or a tie), the unsure votes and the judged documents
    holding one are passed as counts and disclosed in ``disclosure`` (see
    :func:`unsure_disclosure`); they change neither κ nor the split share.
    """
    pairs = [(int(k), int(n)) for k, n in votes]
    if any(n < 1 or not 0 <= k <= n for k, n in pairs):
        raise ValueError("each document needs 0 ≤ relevant votes ≤ total votes and at least one vote")
    if strata is not None and len(strata) != len(pairs):
        raise ValueError(f"strata must be parallel to votes ({len(pairs)} documents), got {len(strata)}")
    relevant = np.array([k for k, _ in pairs], dtype=np.int64)
    total = np.array([n for _, n in pairs], dtype=np.int64)
    kappa = _binary_fleiss_kappa(relevant, total)
    split = _split(relevant, total)
    vote_share = float(relevant.sum() / total.sum()) if total.size else None

    per_stratum: dict[str, StratumAgreement] = {}
    if strata is not None:
        keys = np.array([str(s) for s in strata], dtype=object)
        for key in sorted(set(keys.tolist())):
            mask = keys == key
            per_stratum[key] = StratumAgreement(
                documents=int(mask.sum()),
                fleiss_kappa=_binary_fleiss_kappa(relevant[mask], total[mask]),
                split_share=_split(relevant[mask], total[mask]),
            )

    reasons: list[str] = []
    if split is not None and split > SPLIT_SHARE_THRESHOLD:
        reasons.append("split_share")
    noisy_strata = [
        key for key, s in per_stratum.items()
        if s.documents >= STRATUM_MIN_DOCUMENTS and s.split_share is not None
        and _lower_bound(round(s.split_share * s.documents), s.documents) > SPLIT_SHARE_THRESHOLD
    ]
    reasons.extend(f"stratum_split_share:{key}" for key in noisy_strata)
    low, high = KAPPA_BALANCED_SHARE
    if kappa is not None and kappa < KAPPA_THRESHOLD and vote_share is not None and low <= vote_share <= high:
        reasons.append("kappa")

    three_votes = total.size > 0 and bool(np.all(total == 3))
    majority_error = majority_error_from_split_share(split) if (three_votes and split is not None) else None
    message = _quality_message(
        documents=len(pairs), kappa=kappa, split=split, noisy_strata=noisy_strata, per_stratum=per_stratum,
        kappa_fired="kappa" in reasons, majority_error=majority_error, intervals_widened=intervals_widened,
    ) if reasons else None
    return LabelQuality(
        documents=len(pairs), fleiss_kappa=kappa, split_share=split, relevant_vote_share=vote_share,
        per_stratum=per_stratum, low_agreement=bool(reasons), reasons=tuple(reasons), message=message,
        majority_error=majority_error, undecided=int(undecided), unsure_votes=int(unsure_votes),
        unsure_documents=int(unsure_documents),
        disclosure=unsure_disclosure(judged=len(pairs), undecided=undecided, unsure_votes=unsure_votes,
                                     unsure_documents=unsure_documents),
    )


def unsure_disclosure(*, judged: int, undecided: int, unsure_votes: int, unsure_documents: int) -> str | None:
    """Plain words on the "unsure" answers behind a report's labels; None when there were none.

    Undecided documents (every vote unsure, or the sure votes tied) have no label: every
    estimate leaves them out as if they had not been drawn, which is unbiased only if they
    are like the other documents of their sample — they are the hard ones, so the sentence says so.
    """
    if undecided < 0 or unsure_votes < 0 or unsure_documents < 0:
        raise ValueError("counts of undecided documents and unsure votes must be ≥ 0")
    if not (undecided or unsure_votes):
        return None
    parts = [f"Workers answered \"unsure\" {unsure_votes} {'time' if unsure_votes == 1 else 'times'}; "
             "an unsure answer is left out of the majority, which is taken over the sure answers."]
    if unsure_documents:
        parts.append(f"{unsure_documents} of the {judged} labelled documents rest on fewer than three sure answers, "
                     "and agreement (κ, split votes) is computed without those.")
    if undecided:
        was, verb = ("document was", "is") if undecided == 1 else ("documents were", "are")
        parts.append(
            f"{undecided} {was} left undecided (no sure answer, or the sure answers tied) and {verb} in no "
            "estimate, as if not drawn; if such hard documents differ from the rest (e.g. are more often "
            "relevant), the figures are biased. Clearer instructions, or gold documents like them, reduce the number."
        )
    return " ".join(parts)


def _percent(value: float) -> str:
    return f"{100.0 * value:.0f}%"


def _quality_message(
    *, documents: int, kappa: float | None, split: float | None, noisy_strata: list[str],
    per_stratum: Mapping[str, StratumAgreement], kappa_fired: bool, majority_error: float | None,
    intervals_widened: bool = False,
) -> str:
    parts = []
    kappa_text = f" (Fleiss' κ {kappa:.2f})" if kappa is not None else ""
    if split is not None:
        parts.append(f"The workers disagreed on {_percent(split)} of the {documents} judged documents{kappa_text}.")
    if noisy_strata:
        listed = ", ".join(f"{key} ({_percent(per_stratum[key].split_share or 0.0)} of "
                           f"{per_stratum[key].documents})" for key in noisy_strata)
        parts.append(f"Disagreement is high in {listed}.")
    if kappa_fired and not noisy_strata and (split is None or split <= SPLIT_SHARE_THRESHOLD):
        parts.append("Their answers agree little more than chance would make them agree.")
    if majority_error is not None and majority_error >= 0.01:
        parts.append(f"At this level about 1 majority label in {max(2, round(1.0 / majority_error))} is wrong.")
    parts.append(
        ("The recall intervals allow for these errors (each label counts with the probability its votes give "
         "it), but they rest on a simple model of the workers, so read them with care. "
         if intervals_widened else
         "Wrong labels bias the recall figures, and their intervals count only the sampling error, "
         "so treat them as too narrow. ")
        + "To improve: add gold documents (known answers) so unreliable "
        "workers are found and weighed down, make the instructions clearer with examples of borderline "
        "documents, and, if the topic still uses majority vote, aggregate with Dawid–Skene."
    )
    return " ".join(parts)
