"""The report of a topic set: a router (multi-class classifier) against judged labels (seed 002).

Seed 002 (Zhang, Wang, Zhao, "Estimating the Uncertainty of Average F1 Scores",
ICTIR 2015) models a K-class confusion matrix C (rows true class, columns
predicted) as mu ~ Dir(beta + class sizes), theta_j ~ Dir(alpha_j + row j)
(Sec. 2.1), and summarises micro- and macro-averaged F1 by their posterior
(Table 1). The posterior is sampled exactly by
`estimation.stats.f1_posterior.average_f1_posterior`; this module adds what a
topic-set report needs around it:

* ``confusion_matrix`` / ``confusion_matrix_expected``: C from (true, predicted)
  pairs, or from per-document class probabilities (Dawid–Skene soft labels: the
  expected counts).
* ``multiclass_posterior``: micro/macro F1 (score, mean, sd, 95% HDI, P(> reference),
  quantiles for any other reference, a density) and per-class precision and recall
  with 95% HDIs, all from the same posterior draws.
* ``multiclass_hdi_width`` and ``multiclass_sample_size``: the HDI width expected
  at a sample size n, and the smallest n whose expected width is at most a width
  the analyst gives.

"None of these" (class position 0). A topic set's sample holds documents that
belong to none of its M topics, and a router can send a document to none. Class
0 is in the model (it is one of the mutually exclusive outcomes, and the shares
mu must sum to 1) but not in the averages: micro- and macro-F1 average over the
topics 1..M only. A topic document the router sends to "none" is a false
negative of that topic; a "none" document the router sends to a topic is a false
positive of that topic. When neither the labels nor the router use class 0 in
the sample, class 0 is left out of the model altogether (K = M): an empty class
would still receive prior mass and pull every F1 down, and the report then is
exactly seed 002's model (Table 1 reproduces through the product).

The prior. Seed 002 sets every alpha_jk and beta_j to 1 "if we do not have any prior
knowledge" (Sec. 2.1). Over K^2 cells that is K^2 pseudo-documents spread evenly, which
pulls F1 toward chance; the report uses alpha_jk = beta_j = 1/K (Perks: each row's prior
weighs one document) and shows the seed's uniform prior beside it (``prior_value``).

Per-class intervals are HDIs of the marginals of the same Dirichlet posterior
(not Clopper–Pearson): the recall of class j is theta_jj, exactly
Beta(alpha + c_jj, sum_k!=j (alpha + c_jk)); the precision of class k is
pi_kk / sum_j pi_jk, with pi_jk = mu_j theta_jk, which has no closed form and is
read from the draws. One model for every figure on the page keeps them
consistent (a class's F1 interval is made of the same draws as its precision
and recall).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from estimation.stats.f1_posterior import _f1_from_joint, average_f1_posterior, average_f1_posterior_mixture, hdi
from estimation.stats.latent_class import LatentClassFit, latent_class_fit

__all__ = [
    "AverageF1",
    "ClassMetrics",
    "HdiWidth",
    "MulticlassPosterior",
    "SampleSizePlan",
    "confusion_matrix",
    "confusion_matrix_expected",
    "multiclass_hdi_width",
    "multiclass_posterior",
    "multiclass_posterior_latent",
    "multiclass_sample_size",
    "plug_in_f1",
    "prior_value",
    "probability_above",
]

QUANTILE_POINTS = 1001  # quantiles stored for P(> any reference): resolution 0.1% of the draws
DENSITY_BINS = 60


@dataclass(frozen=True)
class Interval:
    low: float
    high: float


@dataclass(frozen=True)
class AverageF1:
    """Seed 002, Table 1, for one average (micro or macro) of one router."""

    score: float  # plug-in F1 of the observed matrix (latent model: the median of the draws)
    mean: float
    median: float  # the point shown: inside every 95% interval of the draws
    sd: float
    mc_error: float
    hdi: Interval
    reference: float
    above: float  # P(F1 > reference)
    draws: int
    quantiles: tuple[float, ...]  # QUANTILE_POINTS evenly spaced quantiles of the draws (0 .. 1)
    density_edges: tuple[float, ...]
    density: tuple[float, ...]  # histogram of the draws, normalised to a density


@dataclass(frozen=True)
class ClassMetrics:
    """One class's precision, recall and F1: plug-in values and posterior means with 95% HDIs."""

    position: int
    true_count: float  # documents of this class in the sample (row sum)
    predicted_count: float  # documents the router sent to it (column sum)
    correct: float  # the diagonal cell
    precision: float | None  # plug-in; None when the router sent no sampled document to it
    precision_mean: float
    precision_hdi: Interval
    recall: float | None  # plug-in; None when the sample holds no document of the class
    recall_mean: float
    recall_hdi: Interval
    f1: float | None
    f1_mean: float
    f1_hdi: Interval
    precision_median: float = math.nan
    recall_median: float = math.nan
    f1_median: float = math.nan


@dataclass(frozen=True)
class MulticlassPosterior:
    positions: tuple[int, ...]  # class positions of the modelled matrix's rows/columns (0 = none of these)
    averaged: tuple[int, ...]  # positions averaged in micro/macro F1
    none_modelled: bool
    confusion: tuple[tuple[float, ...], ...]
    micro: AverageF1
    macro: AverageF1
    per_class: tuple[ClassMetrics, ...]
    draws: int
    seed: int | None
    mass: float
    prior: float  # alpha_jk = beta_j
    latent: LatentClassFit | None = None  # the crowd model when the true classes are latent


@dataclass(frozen=True)
class HdiWidth:
    n: int
    micro: float
    macro: float


@dataclass(frozen=True)
class SampleSizePlan:
    average: str  # "micro" or "macro"
    width: float  # the HDI width wanted
    n: int | None  # smallest sample size (decided labels) whose expected width is at most `width`; None: above n_max
    width_at_n: float | None
    current_n: int
    current_width: float
    n_max: int
    draws: int
    seed: int


# Draws per block of the sampler (f1_posterior._blockwise): 20,000 draws (the report's default) run as two
# blocks on two threads, 0.16 -> 0.09-0.10 s wall for M = 10 on this 2-core machine.
POSTERIOR_BLOCK = 10_000


def confusion_matrix(*, true: Sequence[int], predicted: Sequence[int], classes: int) -> np.ndarray:
    """Counts C[j, k] of documents of true class j predicted as k (seed 002, Sec. 2, Figure 3).

    ``classes`` = K, positions 0..K-1. Raises ValueError on lengths or positions out of range.
    """
    t = np.asarray(true, dtype=int).ravel()
    p = np.asarray(predicted, dtype=int).ravel()
    if t.shape != p.shape:
        raise ValueError(f"true and predicted differ in length ({t.size} vs {p.size})")
    if classes < 2:
        raise ValueError("a confusion matrix needs at least 2 classes")
    if t.size and (t.min() < 0 or p.min() < 0 or t.max() >= classes or p.max() >= classes):
        raise ValueError(f"class positions must lie in 0..{classes - 1}")
    matrix = np.zeros((classes, classes), dtype=float)
    np.add.at(matrix, (t, p), 1.0)
    return matrix


def confusion_matrix_expected(*, probabilities: Sequence[Sequence[float]], predicted: Sequence[int],
                              classes: int) -> np.ndarray:
    """Expected counts E[C[j, k]] = sum over documents predicted k of P(true class j).

    For soft labels (Dawid–Skene posteriors): each document adds its class
    probabilities to the column of its predicted class. The Dirichlet model of
    seed 002 (Sec. 2.1) takes the fractional counts as they are.
    """
    probs = np.asarray(probabilities, dtype=float)
    p = np.asarray(predicted, dtype=int).ravel()
    if probs.size == 0:
        return np.zeros((classes, classes), dtype=float)
    if probs.ndim != 2 or probs.shape != (p.size, classes):
        raise ValueError(f"probabilities must be (documents x {classes}); got {probs.shape}")
    if p.min() < 0 or p.max() >= classes:
        raise ValueError(f"predicted positions must lie in 0..{classes - 1}")
    if np.any(probs < 0) or not np.allclose(probs.sum(axis=1), 1.0, atol=1e-6):
        raise ValueError("each document's class probabilities must be non-negative and sum to 1")
    matrix = np.zeros((classes, classes), dtype=float)
    for k in range(classes):
        matrix[:, k] = probs[p == k].sum(axis=0)
    return matrix


def probability_above(*, quantiles: Sequence[float], reference: float) -> float:
    """P(F1 > reference) read from evenly spaced quantiles of the draws (error at most 1/(len - 1))."""
    q = np.asarray(quantiles, dtype=float)
    if q.size < 2:
        raise ValueError("need at least two quantiles")
    if reference < q[0]:
        return 1.0
    if reference >= q[-1]:
        return 0.0
    levels = np.linspace(0.0, 1.0, q.size)
    # The CDF at `reference`: the largest level whose quantile is <= reference, interpolated.
    cdf = float(np.interp(reference, q, levels))
    return max(0.0, min(1.0, 1.0 - cdf))


def _average(summary: dict, draws: np.ndarray) -> AverageF1:
    values = np.asarray(draws, dtype=float)
    quantiles = np.quantile(values, np.linspace(0.0, 1.0, QUANTILE_POINTS))
    low, high = float(values.min()), float(values.max())
    if high - low < 1e-9:
        low, high = low - 1e-3, high + 1e-3
    heights, edges = np.histogram(values, bins=DENSITY_BINS, range=(low, high), density=True)
    return AverageF1(
        score=float(summary["score"]), mean=float(summary["mean"]), median=float(summary["median"]),
        sd=float(summary["sd"]),
        mc_error=float(summary["mc_error"]), hdi=Interval(*summary["hdi"]), reference=float(summary["reference"]),
        above=float(summary["above"]), draws=int(summary["draws"]),
        quantiles=tuple(round(float(x), 6) for x in quantiles),
        density_edges=tuple(round(float(x), 6) for x in edges),
        density=tuple(round(float(x), 4) for x in heights),
    )


def _modelled_positions(matrix: np.ndarray) -> tuple[int, ...]:
    """Class 0 (none of these) is modelled only when the labels or the router use it (module docstring)."""
    size = matrix.shape[0]
    none_used = matrix[0, :].sum() > 0 or matrix[:, 0].sum() > 0
    return tuple(range(size)) if none_used else tuple(range(1, size))


PRIORS = ("perks", "uniform")


def prior_value(prior: float | str, classes: int) -> float:
    """The Dirichlet parameter of every cell (alpha_jk) and every class share (beta_j).

    "uniform": 1, seed 002's experiments (Sec. 2.1: "we can simply set ... (1, ..., 1)"). "perks": 1/K,
    so each row's prior weighs one document and the class shares' prior one document. With K^2 cells
    the uniform prior adds K^2 pseudo-documents spread evenly over the matrix and pulls every F1
    toward the chance level: on a 5-class topic set (4 topics + none) with 500 judged documents its
    macro-F1 mean sat 0.035 below the truth and its 95% HDI covered it in 70% of 50 simulated
    samples; with 1/K the bias was 0.011 and coverage 96.5% of 200 (docs/report.md).
    """
    if isinstance(prior, str):
        if prior == "uniform":
            return 1.0
        if prior == "perks":
            return 1.0 / classes
        raise ValueError(f"prior must be one of {PRIORS} or a positive number (got {prior!r})")
    value = float(prior)
    if not value > 0 or not math.isfinite(value):
        raise ValueError(f"prior must be positive (got {prior!r})")
    return value


def _ratio(num: float, den: float) -> float | None:
    return float(num / den) if den > 0 else None


def multiclass_posterior(*, confusion: Sequence[Sequence[float]] | np.ndarray, draws: int = 20_000,
                         seed: int | None = 2015, reference: float = 0.8, prior: float | str = "perks",
                         mass: float = 0.95, per_class: bool = True) -> MulticlassPosterior:
    """Seed 002's posterior (Sec. 2.1, Table 1) for a topic set's (M+1) x (M+1) confusion matrix.

    ``confusion``: rows true class, columns the router's class, position 0 = "none of
    these", 1..M the topics. Micro- and macro-F1 average over the topics 1..M; class 0
    is modelled when used, dropped otherwise (module docstring). Per-class precision
    and recall: plug-in and posterior mean with ``mass`` HDI (``per_class=False``
    leaves them out). Sampled exactly by ``average_f1_posterior`` with alpha = beta =
    ``prior_value(prior, K)``: "uniform" is the seed's 1, "perks" (default) 1/K.

    Example: seed 002's Figure 3 matrix with an empty row and column 0 in front is
    modelled as the 5 x 5 matrix itself; with prior="uniform": maF1 score 0.828, mean
    0.815, 95% HDI [0.796, 0.834] (Table 1).
    """
    full = np.asarray(confusion, dtype=float)
    if full.ndim != 2 or full.shape[0] != full.shape[1] or full.shape[0] < 3:
        raise ValueError(f"confusion must be (M+1) x (M+1) with M >= 2 topics (got shape {full.shape})")
    if not 0.0 <= reference <= 1.0:
        raise ValueError(f"reference must lie in [0, 1] (got {reference!r})")
    positions = _modelled_positions(full)
    matrix = full[np.ix_(positions, positions)]
    averaged = tuple(i for i, pos in enumerate(positions) if pos != 0)
    value = prior_value(prior, len(positions))
    result = average_f1_posterior(confusion=matrix, draws=draws, seed=seed, reference=reference, alpha=value,
                                  beta=value, mass=mass, averaged=averaged, per_class=per_class, keep_draws=True,
                                  block_size=POSTERIOR_BLOCK)
    rows, cols, diag = matrix.sum(axis=1), matrix.sum(axis=0), np.diag(matrix)
    per_class_rows = []
    for i, pos in enumerate(positions if per_class else ()):
        pc = result["per_class"]
        per_class_rows.append(ClassMetrics(
            position=pos, true_count=float(rows[i]), predicted_count=float(cols[i]), correct=float(diag[i]),
            precision=_ratio(diag[i], cols[i]), precision_mean=pc["precision"][i]["mean"],
            precision_hdi=Interval(*pc["precision"][i]["hdi"]),
            recall=_ratio(diag[i], rows[i]), recall_mean=pc["recall"][i]["mean"],
            recall_hdi=Interval(*pc["recall"][i]["hdi"]),
            f1=_ratio(2 * diag[i], rows[i] + cols[i]), f1_mean=pc["f1"][i]["mean"],
            f1_hdi=Interval(*pc["f1"][i]["hdi"]), precision_median=pc["precision"][i]["median"],
            recall_median=pc["recall"][i]["median"], f1_median=pc["f1"][i]["median"],
        ))
    return MulticlassPosterior(
        positions=positions, averaged=tuple(positions[i] for i in averaged), none_modelled=0 in positions,
        confusion=tuple(tuple(float(x) for x in row) for row in full),
        micro=_average(result["micro"], result["micro"]["draws_array"]),
        macro=_average(result["macro"], result["macro"]["draws_array"]),
        per_class=tuple(per_class_rows), draws=draws, seed=seed, mass=mass, prior=value,
    )


def plug_in_f1(confusion: Sequence[Sequence[float]] | np.ndarray) -> tuple[float, float]:
    """Micro- and macro-F1 of an observed (M+1) x (M+1) matrix over the topics 1..M (seed 002, Sec. 2.1)."""
    matrix = np.asarray(confusion, dtype=float)
    micro, macro = _f1_from_joint(matrix, np.arange(1, matrix.shape[0]))
    return float(micro), float(macro)


def latent_share_prior(classes: int) -> float:
    """beta_j of the latent model: 1/K (the class shares' prior weighs one document)."""
    return 1.0 / classes


def latent_cell_prior(classes: int) -> float:
    """alpha_jk of the latent model: 1/K^2 (each router row's prior weighs 1/K of a document)."""
    return 1.0 / classes**2


def multiclass_posterior_latent(*, votes: Sequence[Sequence[float]] | np.ndarray, predicted: Sequence[int],
                                classes: int, gold_true: Sequence[int] = (), gold_predicted: Sequence[int] = (),
                                draws: int = 20_000, seed: int | None = 2015, reference: float = 0.8,
                                mass: float = 0.95, per_class: bool = True) -> MulticlassPosterior:
    """Micro/macro F1 of a router when the true classes are latent (Dawid & Skene 1979 inside seed 002).

    ``votes`` (n x K): the crowd's sure votes per class of each judged document, ``predicted``: the router's
    class of each; ``gold_true``/``gold_predicted``: documents with a known class. The latent classes are
    sampled with the crowd's pooled confusion (``latent_class.latent_class_fit``); each kept state's
    confusion matrix feeds seed 002's exact posterior (``average_f1_posterior_mixture``), with the report's
    prior 1/K. All K = M + 1 classes are modelled (the crowd can answer "none of these"); the averages are
    over the topics 1..M. ``score`` and every point are medians of the draws; ``latent`` carries the crowd
    model and whether it identifies the classes (when not, the caller shows no F1).

    The prior: class shares 1/K each (as "perks"), but every theta cell 1/K^2, so each router row weighs
    1/K of a document. A topic of 20-50 sampled documents is rare enough that "perks" (a row weighing one
    document, 5/6 of it on errors) pulled macro-F1 down: with the true classes known, 60 simulated
    studies (M = 5, 96% none, 1,500-2,500 documents) gave bias -0.04 to -0.06 and 75-87% coverage;
    with 1/K^2 the latent model's 30-study runs gave bias within +-0.015 and 93-100% coverage
    (tests/estimation/test_multiclass_noise.py).
    """
    if classes < 3:
        raise ValueError(f"a topic set needs M >= 2 topics (got {classes} classes)")
    if not 0.0 <= reference <= 1.0:
        raise ValueError(f"reference must lie in [0, 1] (got {reference!r})")
    value = latent_share_prior(classes)
    cell = latent_cell_prior(classes)
    fit = latent_class_fit(votes=np.asarray(votes, dtype=float).reshape(-1, classes),
                           predicted=np.asarray(predicted, dtype=int), classes=classes, seed=seed,
                           gold_true=np.asarray(gold_true, dtype=int), gold_predicted=np.asarray(gold_predicted, dtype=int),
                           alpha=cell, beta=value)
    positions = tuple(range(classes))
    averaged = tuple(range(1, classes))
    result = average_f1_posterior_mixture(states=fit.states, draws=draws, seed=seed, reference=reference,
                                          alpha=cell, beta=value, mass=mass, averaged=averaged,
                                          per_class=per_class, keep_draws=True, block_size=POSTERIOR_BLOCK)
    expected = fit.states.mean(axis=0)
    rows, cols, diag = expected.sum(axis=1), expected.sum(axis=0), np.diag(expected)
    per_class_rows = []
    for i in positions if per_class else ():
        pc = result["per_class"]
        per_class_rows.append(ClassMetrics(
            position=i, true_count=float(rows[i]), predicted_count=float(cols[i]), correct=float(diag[i]),
            precision=pc["precision"][i]["median"], precision_mean=pc["precision"][i]["mean"],
            precision_hdi=Interval(*pc["precision"][i]["hdi"]),
            recall=pc["recall"][i]["median"], recall_mean=pc["recall"][i]["mean"],
            recall_hdi=Interval(*pc["recall"][i]["hdi"]),
            f1=pc["f1"][i]["median"], f1_mean=pc["f1"][i]["mean"], f1_hdi=Interval(*pc["f1"][i]["hdi"]),
            precision_median=pc["precision"][i]["median"], recall_median=pc["recall"][i]["median"],
            f1_median=pc["f1"][i]["median"],
        ))
    return MulticlassPosterior(
        positions=positions, averaged=averaged, none_modelled=True,
        confusion=tuple(tuple(float(x) for x in row) for row in expected),
        micro=_average(result["micro"], result["micro"]["draws_array"]),
        macro=_average(result["macro"], result["macro"]["draws_array"]),
        per_class=tuple(per_class_rows), draws=draws, seed=seed, mass=mass, prior=value, latent=fit,
    )


def _widths(*, shares: np.ndarray, n: int, draws: int, seed: int, mass: float, prior: float | str) -> HdiWidth:
    positions = _modelled_positions(shares)
    matrix = shares[np.ix_(positions, positions)] * n
    averaged = [i for i, pos in enumerate(positions) if pos != 0]
    value = prior_value(prior, len(positions))
    result = average_f1_posterior(confusion=matrix, draws=draws, seed=seed, averaged=averaged, mass=mass,
                                  alpha=value, beta=value)
    micro, macro = result["micro"]["hdi"], result["macro"]["hdi"]
    return HdiWidth(n=n, micro=float(micro[1] - micro[0]), macro=float(macro[1] - macro[0]))


def _shares(confusion: Sequence[Sequence[float]] | np.ndarray) -> np.ndarray:
    matrix = np.asarray(confusion, dtype=float)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or matrix.shape[0] < 3:
        raise ValueError(f"confusion must be (M+1) x (M+1) with M >= 2 topics (got shape {matrix.shape})")
    total = matrix.sum()
    if total <= 0:
        raise ValueError("the confusion matrix is empty: judge some documents first")
    return matrix / total


def multiclass_hdi_width(*, confusion: Sequence[Sequence[float]] | np.ndarray, n: int, draws: int = 4_000,
                         seed: int = 2015, mass: float = 0.95, prior: float | str = "perks") -> HdiWidth:
    """The 95% HDI width of micro- and macro-F1 expected from a sample of n decided labels.

    Seed 002's posterior (Sec. 2.1) of the observed cell shares scaled to n (the
    expected confusion matrix of a uniform sample of n documents when the shares are
    right), with the same prior as the report (``prior_value``); a fixed seed gives common random
    numbers across n, so the width decreases smoothly in n.
    """
    if n < 1:
        raise ValueError(f"n must be at least 1 (got {n!r})")
    return _widths(shares=_shares(confusion), n=int(n), draws=draws, seed=seed, mass=mass, prior=prior)


def multiclass_sample_size(*, confusion: Sequence[Sequence[float]] | np.ndarray, width: float,
                           average: str = "macro", draws: int = 4_000, seed: int = 2015, mass: float = 0.95,
                           n_max: int = 1_000_000, prior: float | str = "perks") -> SampleSizePlan:
    """The smallest sample size n whose expected HDI width (``multiclass_hdi_width``) is at most ``width``.

    Seed 002's model (Sec. 2.1); the width at n is simulated as in
    ``multiclass_hdi_width``. The search doubles n from the current sample size
    until the width is small enough, then bisects over integers (to 1% of n). n
    counts decided labels; None when even n_max is not enough. The HDI width
    shrinks about as 1/sqrt(n), so a quarter of the width costs 16 times the sample.
    """
    if average not in ("micro", "macro"):
        raise ValueError(f"average must be 'micro' or 'macro' (got {average!r})")
    if not 0.0 < width < 1.0:
        raise ValueError(f"the width wanted must lie strictly between 0 and 1 (got {width!r})")
    shares = _shares(confusion)
    current_n = max(1, int(round(float(np.asarray(confusion, dtype=float).sum()))))

    def at(n: int) -> float:
        return float(getattr(_widths(shares=shares, n=n, draws=draws, seed=seed, mass=mass, prior=prior), average))

    current_width = at(current_n)

    def plan(n: int | None, width_at_n: float | None) -> SampleSizePlan:
        return SampleSizePlan(average=average, width=float(width), n=n, width_at_n=width_at_n, current_n=current_n,
                              current_width=current_width, n_max=n_max, draws=draws, seed=seed)

    if current_width <= width:
        # Already narrow enough: search below the current sample.
        low, high, high_width = 1, current_n, current_width
        first = at(1)
        if first <= width:
            return plan(1, first)
    else:
        low, high, high_width = current_n, current_n, current_width
        while high_width > width:
            if high >= n_max:
                return plan(None, None)
            low, high = high, min(n_max, high * 2)
            high_width = at(high)
    # Invariant: width(low) > wanted >= width(high).
    while high - low > max(1, math.ceil(0.01 * high)):
        middle = (low + high) // 2
        middle_width = at(middle)
        if middle_width <= width:
            high, high_width = middle, middle_width
        else:
            low = middle
    return plan(high, high_width)


def hdi_interval(draws: np.ndarray, mass: float = 0.95) -> Interval:
    """The HDI of ``f1_posterior.hdi`` as an Interval."""
    return Interval(*hdi(draws, mass))
