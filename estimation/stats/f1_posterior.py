"""Posterior uncertainty of micro- and macro-averaged F1 (seed 002: Zhang,
Wang, Zhao, "Estimating the Uncertainty of Average F1 Scores", ICTIR 2015).

The seed's model is conjugate (Sec. 2.1): mu ~ Dir(beta + class sizes) and,
for every true class j, theta_j ~ Dir(alpha_j + row j of the confusion
matrix). The seed samples it with Metropolis-Hastings; here the posterior is
sampled exactly with Gamma variates, so there is no burn-in or
autocorrelation and the Monte Carlo error is sd / sqrt(draws).
"""
from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

__all__ = ["hdi", "average_f1_posterior", "average_f1_posterior_mixture", "binary_f1_posterior", "summarise_draws"]

_DEFAULT_DRAWS = 200_000
# Draws are generated in fixed-size blocks, each with its own child stream of
# the seed: memory stays bounded (a block holds block x K x K floats), and
# the blocks can run on several threads (numpy's samplers release the GIL)
# while the result depends only on the seed and the number of draws.
_BLOCK = 25_000
_THREADS = max(1, min(4, os.cpu_count() or 1))


def hdi(draws: np.ndarray, mass: float = 0.95) -> tuple[float, float]:
    """Highest-density interval: the shortest interval holding ``mass`` of the draws.

    Seed 002, Table 1 ("95% HDI"); notes §5: not the 2.5/97.5 percentiles.
    For a unimodal posterior the shortest interval is the HDI.
    """
    return _hdi_sorted(np.sort(np.asarray(draws, dtype=float).ravel()), mass)


def _hdi_sorted(values: np.ndarray, mass: float) -> tuple[float, float]:
    """``hdi`` of draws already sorted ascending."""
    if not 0.0 < mass < 1.0:
        raise ValueError(f"mass must lie strictly between 0 and 1 (got {mass!r})")
    if values.size == 0:
        raise ValueError("hdi needs at least one draw")
    inside = max(1, math.ceil(mass * values.size))
    if inside >= values.size:
        return float(values[0]), float(values[-1])
    widths = values[inside - 1:] - values[: values.size - inside + 1]
    start = int(np.argmin(widths))
    return float(values[start]), float(values[start + inside - 1])


def summarise_draws(draws: np.ndarray, *, score: float, reference: float,
                    mass: float = 0.95) -> dict[str, Any]:
    """The summary of seed 002, Table 1, for one vector of posterior draws."""
    draws = np.asarray(draws, dtype=float)
    sd = float(draws.std(ddof=1)) if draws.size > 1 else 0.0
    return {
        "score": float(score),
        "mean": float(draws.mean()),
        # The median lies inside every interval holding 95% of the draws (at most 5% lie on either side of
        # it), so a point shown as the median is never outside its own interval; the plug-in score can be.
        "median": float(np.median(draws)),
        "sd": sd,
        # Exact independent draws, so the Monte Carlo error of the mean is sd/sqrt(n).
        "mc_error": sd / math.sqrt(draws.size),
        "below": float(np.mean(draws < reference)),
        "above": float(np.mean(draws > reference)),
        "hdi": hdi(draws, mass),
        "reference": float(reference),
        "draws": int(draws.size),
    }


def _as_confusion(confusion: Any) -> np.ndarray:
    matrix = np.asarray(confusion, dtype=float)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or matrix.shape[0] < 2:
        raise ValueError(f"confusion must be a square K x K matrix with K >= 2 (got shape {matrix.shape})")
    if not np.all(np.isfinite(matrix)) or np.any(matrix < 0):
        raise ValueError("confusion counts must be finite and non-negative")
    return matrix


def _prior(value: float | np.ndarray, shape: tuple[int, ...], name: str) -> np.ndarray:
    prior = np.broadcast_to(np.asarray(value, dtype=float), shape)
    if np.any(prior <= 0) or not np.all(np.isfinite(prior)):
        raise ValueError(f"{name} must be positive")
    return prior


def _margins(joint: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(diagonal pi_jj, row sums, column sums) of joint cell probabilities pi[..., j, k]."""
    return np.diagonal(joint, axis1=-2, axis2=-1), joint.sum(axis=-1), joint.sum(axis=-2)


def _f1_from_margins(diagonal: np.ndarray, rows: np.ndarray, cols: np.ndarray,
                     averaged: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Micro and macro F1 from the diagonal and margins of pi[..., j, k] = mu_j theta_jk.

    Seed 002, Sec. 2.1: miF1 = sum_j mu_j theta_jj (single-label, so P = R = accuracy);
    per class F1_j = 2 tp_j / (2 tp_j + fp_j + fn_j) = 2 pi_jj / (row_j + col_j),
    and maF1 is their plain average.

    ``averaged`` (class indices) restricts both averages to some classes, as when a
    "none of these" class is modelled but is not a topic: miF1 = 2 sum_A pi_jj /
    (sum_A row_j + sum_A col_j) over the averaged classes A (pooled precision and
    recall over A; with A = every class it is the accuracy), maF1 = mean over A.
    """
    denominator = rows + cols
    with np.errstate(invalid="ignore", divide="ignore"):
        per_class = np.where(denominator > 0, 2.0 * diagonal / denominator, 0.0)
    if averaged is None:
        total = rows.sum(axis=-1)
        micro = diagonal.sum(axis=-1) / total
        return micro, per_class.mean(axis=-1)
    pooled = denominator[..., averaged].sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        micro = np.where(pooled > 0, 2.0 * diagonal[..., averaged].sum(axis=-1) / pooled, 0.0)
    return micro, per_class[..., averaged].mean(axis=-1)


def _f1_from_joint(joint: np.ndarray, averaged: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Micro and macro F1 from joint cell probabilities (or counts) pi[..., j, k]; see ``_f1_from_margins``."""
    return _f1_from_margins(*_margins(joint), averaged)


def _per_class_from_margins(diagonal: np.ndarray, rows: np.ndarray,
                            cols: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-class precision pi_kk / col_k, recall pi_jj / row_j (= theta_jj) and F1, shape (..., K)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = np.where(cols > 0, diagonal / cols, np.nan)
        recall = np.where(rows > 0, diagonal / rows, np.nan)
        f1 = np.where(rows + cols > 0, 2.0 * diagonal / (rows + cols), np.nan)
    return precision, recall, f1


def _blockwise(*, draws: int, seed: int | None,
               block: Callable[[np.random.Generator, int], np.ndarray], size: int = _BLOCK) -> np.ndarray:
    """Concatenate ``block(rng, count)`` over fixed-size blocks (``size`` draws), one child stream each."""
    starts = list(range(0, draws, size))
    streams = np.random.SeedSequence(seed).spawn(len(starts))

    def run(index: int) -> np.ndarray:
        count = min(size, draws - starts[index])
        return block(np.random.default_rng(streams[index]), count)

    if len(starts) == 1 or _THREADS == 1:
        parts = [run(i) for i in range(len(starts))]
    else:
        with ThreadPoolExecutor(max_workers=_THREADS) as pool:
            parts = list(pool.map(run, range(len(starts))))
    return np.concatenate(parts, axis=-1)


def _sample_joint(rng: np.random.Generator, *, count: int, confusion: np.ndarray,
                  alpha: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """``count`` exact draws of pi = mu_j theta_jk (seed 002, Sec. 2.1 model)."""
    size = confusion.shape[0]
    # Dirichlet by normalised Gammas; float32 halves the time of the K^2
    # Gamma draws and loses nothing at the 3-decimal precision reported.
    rows = rng.standard_gamma(alpha + confusion, size=(count, size, size), dtype=np.float32)
    rows /= rows.sum(axis=-1, keepdims=True)
    classes = rng.standard_gamma(beta + confusion.sum(axis=1), size=(count, size), dtype=np.float32)
    classes /= classes.sum(axis=-1, keepdims=True)
    return rows * classes[:, :, None]


def _sample_margins(rng: np.random.Generator, *, count: int, confusion: np.ndarray, alpha: np.ndarray,
                    beta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The diagonal and margins of ``_sample_joint``'s draws without building pi (same random numbers).

    Rows of pi sum to mu_j (each theta_j sums to 1), columns are mu @ theta, the diagonal mu_j theta_jj:
    a K x K matrix-vector product per draw instead of summing count x K x K cells twice.
    """
    size = confusion.shape[0]
    rows = rng.standard_gamma(alpha + confusion, size=(count, size, size), dtype=np.float32)
    rows /= rows.sum(axis=-1, keepdims=True)
    classes = rng.standard_gamma(beta + confusion.sum(axis=1), size=(count, size), dtype=np.float32)
    classes /= classes.sum(axis=-1, keepdims=True)
    diagonal = np.diagonal(rows, axis1=-2, axis2=-1) * classes
    cols = np.matmul(classes[:, None, :], rows)[:, 0, :]
    return diagonal, classes, cols


def average_f1_posterior(*, confusion: Any, draws: int = _DEFAULT_DRAWS, seed: int | None = None,
                         reference: float = 0.8, alpha: float | np.ndarray = 1.0,
                         beta: float | np.ndarray = 1.0, mass: float = 0.95,
                         averaged: Sequence[int] | None = None, per_class: bool = False,
                         keep_draws: bool = False, block_size: int = _BLOCK) -> dict[str, Any]:
    """Posterior of micro- and macro-averaged F1 from a K x K confusion matrix.

    Seed 002, Sec. 2.1 (model) and Table 1 (summary). Rows are true classes,
    columns predicted classes. ``alpha`` (scalar or K x K) is the Dirichlet
    prior of every row theta_j, ``beta`` (scalar or K) that of the class
    proportions mu; the seed uses 1 for both.

    Returns {"micro": summary, "macro": summary}; each summary holds
    score (plug-in F1 of the observed matrix), mean, sd, mc_error, below and
    above (fractions of draws below/above ``reference``) and hdi (shortest
    interval holding ``mass`` of the draws). A class that is neither present
    nor predicted has an undefined F1; its plug-in score counts as 0.

    ``averaged`` (class indices; default all) restricts the averages to those
    classes while every class stays in the model (see ``_f1_from_joint``).
    ``per_class=True`` adds "per_class": {"precision", "recall", "f1"}, each a
    list over the K classes of {"mean", "sd", "hdi"} from the same draws (the
    marginals of the same posterior; recall_j = theta_jj is exactly
    Beta(alpha_jj + c_jj, sum_k!=j (alpha_jk + c_jk))). ``keep_draws=True``
    adds the draw vectors as "draws_array" to the micro and macro summaries.

    Example (seed 002, Figure 3 matrix, 200,000 draws; notes §5): miF1 score
    0.814, mean 0.803, sd 0.011, 39.5% below 0.8, HDI [0.782, 0.824]; maF1
    score 0.828, mean 0.815, sd 0.010, 6.3% below 0.8, HDI [0.796, 0.834].
    """
    matrix = _as_confusion(confusion)
    if draws < 2:
        raise ValueError(f"draws must be at least 2 (got {draws!r})")
    size = matrix.shape[0]
    alpha_arr = _prior(alpha, (size, size), "alpha")
    beta_arr = _prior(beta, (size,), "beta")
    index: np.ndarray | None = None
    if averaged is not None:
        index = np.asarray(sorted({int(a) for a in averaged}), dtype=int)
        if index.size == 0 or index.min() < 0 or index.max() >= size:
            raise ValueError(f"averaged must name classes among 0..{size - 1} (got {list(averaged)!r})")

    def block(rng: np.random.Generator, count: int) -> np.ndarray:
        margins = _sample_margins(rng, count=count, confusion=matrix, alpha=alpha_arr, beta=beta_arr)
        micro_macro = np.stack(_f1_from_margins(*margins, index)).astype(float)
        if not per_class:
            return micro_macro
        precision, recall, f1 = _per_class_from_margins(*margins)
        return np.concatenate([micro_macro, precision.T.astype(float), recall.T.astype(float),
                               f1.T.astype(float)], axis=0)

    # Smaller blocks let a modest number of draws use both threads; the draws depend on the seed, the
    # number of draws and the block size (each block has its own child stream).
    sampled = _blockwise(draws=draws, seed=seed, block=block, size=block_size)
    micro, macro = sampled[0], sampled[1]

    score_micro, score_macro = _f1_from_joint(matrix, index)
    result: dict[str, Any] = {
        "micro": summarise_draws(micro, score=float(score_micro), reference=reference, mass=mass),
        "macro": summarise_draws(macro, score=float(score_macro), reference=reference, mass=mass),
    }
    if keep_draws:
        result["micro"]["draws_array"] = micro
        result["macro"]["draws_array"] = macro
    if per_class:
        blocks = {"precision": sampled[2:2 + size], "recall": sampled[2 + size:2 + 2 * size],
                  "f1": sampled[2 + 2 * size:2 + 3 * size]}
        result["per_class"] = {
            name: [_class_summary(row, mass) for row in rows]
            for name, rows in blocks.items()
        }
    return result


def _class_summary(row: np.ndarray, mass: float) -> dict[str, Any]:
    """Mean, median, sd and HDI of one class's draws; NaN draws (class absent in a draw) are left out."""
    values = row[np.isfinite(row)]
    narrow = values.astype(np.float32)
    if np.array_equal(narrow, values):  # float32 draws widened (the posteriors' usual case): the same sort, faster
        values = np.sort(narrow).astype(float)
    else:
        values = np.sort(values)
    if values.size < 2:
        return {"mean": math.nan, "median": math.nan, "sd": math.nan, "hdi": (math.nan, math.nan)}
    middle = values.size // 2
    median = values[middle] if values.size % 2 else 0.5 * (values[middle - 1] + values[middle])
    return {"mean": float(values.mean()), "median": float(median), "sd": float(values.std(ddof=1)),
            "hdi": _hdi_sorted(values, mass)}


def _sample_margins_mixture(rng: np.random.Generator, *, count: int, states: np.ndarray, alpha: np.ndarray,
                            beta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``_sample_margins`` with each draw's confusion matrix one of ``states`` (S x K x K), chosen uniformly.

    Same model and margins; the row sums go through a matrix product and the column sums through a batched
    one (sum over j of weight_j · gamma_jk), with theta never normalised in place.  The Gamma shapes are
    computed once per state and gathered per draw (the same float32 shapes as adding the prior to each
    draw's matrix: the same draws, without a float64 (count, K, K) temporary); the column sums' float32
    summation order differs from a sum over the middle axis by at most a few units in the last place.
    """
    size = states.shape[1]
    chosen = rng.integers(0, states.shape[0], size=count)
    cell_shapes = (alpha + states).astype(np.float32)  # (S, K, K)
    share_shapes = (beta + states.sum(axis=-1)).astype(np.float32)  # (S, K)
    gammas = rng.standard_gamma(cell_shapes[chosen], dtype=np.float32)  # theta_j unnormalised
    row_totals = (gammas.reshape(-1, size) @ np.ones(size, dtype=np.float32)).reshape(count, size)
    shares = rng.standard_gamma(share_shapes[chosen], dtype=np.float32)
    shares /= (shares @ np.ones(size, dtype=np.float32))[:, None]
    weights = shares / row_totals  # mu_j / sum_k gamma_jk
    diagonal = np.diagonal(gammas, axis1=-2, axis2=-1) * weights
    cols = (weights[:, None, :] @ gammas)[:, 0, :]
    return diagonal, shares, cols


def average_f1_posterior_mixture(*, states: Any, draws: int = 20_000, seed: int | None = None,
                                 reference: float = 0.8, alpha: float = 1.0, beta: float = 1.0,
                                 mass: float = 0.95, averaged: Sequence[int] | None = None,
                                 per_class: bool = False, keep_draws: bool = False,
                                 block_size: int = _BLOCK) -> dict[str, Any]:
    """Seed 002's posterior of micro/macro F1 when the confusion matrix itself is uncertain.

    ``states`` (S x K x K): confusion matrices drawn from their posterior (the latent true classes of a
    Dawid & Skene (1979) model, ``estimation.stats.latent_class``). Each F1 draw takes one state uniformly
    and draws mu, theta from seed 002's exact Dirichlet posterior given it (Sec. 2.1): the draws are from
    the mixture, i.e. the posterior of F1 with the true classes integrated out. Same result keys as
    ``average_f1_posterior``; "score" is the median of the draws (there is no single observed matrix).
    """
    cube = np.asarray(states, dtype=float)
    if cube.ndim != 3 or cube.shape[1] != cube.shape[2] or cube.shape[1] < 2 or cube.shape[0] < 1:
        raise ValueError(f"states must be S x K x K with K >= 2 (got shape {cube.shape})")
    if draws < 2:
        raise ValueError(f"draws must be at least 2 (got {draws!r})")
    size = cube.shape[1]
    alpha_arr = _prior(alpha, (size, size), "alpha")
    beta_arr = _prior(beta, (size,), "beta")
    index: np.ndarray | None = None
    if averaged is not None:
        index = np.asarray(sorted({int(a) for a in averaged}), dtype=int)
        if index.size == 0 or index.min() < 0 or index.max() >= size:
            raise ValueError(f"averaged must name classes among 0..{size - 1} (got {list(averaged)!r})")

    def block(rng: np.random.Generator, count: int) -> np.ndarray:
        margins = _sample_margins_mixture(rng, count=count, states=cube, alpha=alpha_arr, beta=beta_arr)
        micro_macro = np.stack(_f1_from_margins(*margins, index)).astype(float)
        if not per_class:
            return micro_macro
        precision, recall, f1 = _per_class_from_margins(*margins)
        return np.concatenate([micro_macro, precision.T.astype(float), recall.T.astype(float),
                               f1.T.astype(float)], axis=0)

    sampled = _blockwise(draws=draws, seed=seed, block=block, size=block_size)
    micro, macro = sampled[0], sampled[1]
    result: dict[str, Any] = {
        "micro": summarise_draws(micro, score=float(np.median(micro)), reference=reference, mass=mass),
        "macro": summarise_draws(macro, score=float(np.median(macro)), reference=reference, mass=mass),
    }
    if keep_draws:
        result["micro"]["draws_array"] = micro
        result["macro"]["draws_array"] = macro
    if per_class:
        blocks = {"precision": sampled[2:2 + size], "recall": sampled[2 + size:2 + 2 * size],
                  "f1": sampled[2 + 2 * size:2 + 3 * size]}
        result["per_class"] = {name: [_class_summary(row, mass) for row in rows] for name, rows in blocks.items()}
    return result


def binary_f1_posterior(*, tp: int, fp: int, fn: int, tn: int | None = None,
                        draws: int = _DEFAULT_DRAWS, seed: int | None = None,
                        reference: float = 0.8, alpha: float = 1.0, beta: float = 1.0,
                        mass: float = 0.95) -> dict[str, Any]:
    """Posterior of a binary classifier's F1 for the relevant class.

    With ``tn`` given this is seed 002's model with K = 2 (classes relevant,
    not relevant; confusion [[tp, fn], [fp, tn]]) and the result is the
    relevant class's F1. Without ``tn``, F1 = 2TP / (2TP + FP + FN) does not
    involve TN and the cells (tp, fp, fn) get a Dirichlet(alpha + counts)
    posterior — the two-class model of Goutte & Gaussier that seed 002
    generalises. Returns the same summary keys as each entry of
    ``average_f1_posterior``.
    """
    counts = [tp, fp, fn] + ([] if tn is None else [tn])
    if any(c < 0 for c in counts):
        raise ValueError("confusion counts must be non-negative")
    if draws < 2:
        raise ValueError(f"draws must be at least 2 (got {draws!r})")
    denominator = 2 * tp + fp + fn
    score = 2 * tp / denominator if denominator else 0.0
    if tn is not None:
        matrix = np.array([[tp, fn], [fp, tn]], dtype=float)
        alpha_arr = _prior(alpha, (2, 2), "alpha")
        beta_arr = _prior(beta, (2,), "beta")

        def block(rng: np.random.Generator, count: int) -> np.ndarray:
            joint = _sample_joint(rng, count=count, confusion=matrix, alpha=alpha_arr, beta=beta_arr)
            joint = joint.astype(float)
            return 2.0 * joint[:, 0, 0] / (joint[:, 0, :].sum(-1) + joint[:, :, 0].sum(-1))
    else:
        shape = _prior(alpha, (3,), "alpha") + np.array([tp, fp, fn], dtype=float)

        def block(rng: np.random.Generator, count: int) -> np.ndarray:
            # F1 is scale-free, so unnormalised Gamma cells give the Dirichlet's F1.
            cells = rng.standard_gamma(shape, size=(count, 3))
            return 2.0 * cells[:, 0] / (2.0 * cells[:, 0] + cells[:, 1] + cells[:, 2])

    samples = _blockwise(draws=draws, seed=seed, block=block)
    return summarise_draws(samples, score=score, reference=reference, mass=mass)
