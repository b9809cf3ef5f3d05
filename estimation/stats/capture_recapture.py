"""Log-linear capture–recapture for three classifiers: estimating their dependence.

ESTIMATION-NOTES §1: seed 000's Eq. 1 assumes that C1 and C2 find relevant
documents independently (δ1 = 1), and dependence is bias no number of
judgments removes.  With a third classifier C3 the dependence can be
estimated, the way R's Rcapture (Baillargeon & Rivest 2007) does for three
capture occasions: fit Poisson log-linear models to the counts of relevant
documents caught by each combination of classifiers and compare them by AIC.

Input: the number of relevant documents in each of the seven observable
regions of the three-set Venn diagram, keyed by capture history
"x1x2x3" ("100" = found by C1 only, "110" = by C1 and C2 but not C3, …).
In practice each is |region|·p̂_region from a judged sample of the region, so
fractional counts are accepted (Poisson quasi-likelihood).

Models (columns of the design; k = x1 + x2 + x3, the number of classifiers
that found the document):

    M0        1, k                   every classifier has the same recall
    Mt        1, x1, x2, x3          different recalls, independent classifiers
    Mh        1, k, k²/2             heterogeneity (Darroch's form, as Rcapture's "Mh Darroch")
    Mth       1, x1, x2, x3, k²/2    different recalls + heterogeneity ("Mth Darroch")
    Mt+12 …   Mt plus one pairwise interaction x_i·x_j (dependence of that pair only)

The unseen count (history 000) is exp(intercept); N̂ = observed + exp(û).
Var(N̂) ≈ n̂0 + n̂0²·Var(û): Poisson noise of the unseen cell plus the
parameter uncertainty (the usual large-sample approximation).
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln

from .proportions import jsonable

HISTORIES = tuple("".join(map(str, h)) for h in itertools.product((0, 1), repeat=3) if any(h))
MODELS = ("M0", "Mt", "Mh", "Mth", "Mt+12", "Mt+13", "Mt+23")


@dataclass(frozen=True)
class ModelFit:
    """One log-linear model.  delta_ij = P[Ai ∩ Aj | T] / (P[Ai|T]·P[Aj|T]) implied by the fit."""

    name: str
    n_hat: float | None
    se: float | None
    deviance: float
    df: int
    aic: float
    recall: tuple[float, float, float] | None
    delta12: float | None
    delta13: float | None
    delta23: float | None
    converged: bool

    def as_dict(self) -> dict:
        return jsonable(self)


@dataclass(frozen=True)
class CaptureRecaptureResult:
    """All fitted models, ordered by AIC; ``best`` is the one with the smallest AIC."""

    observed: float
    models: tuple[ModelFit, ...]
    best: str
    summary: str

    def as_dict(self) -> dict:
        return jsonable(self)

    def model(self, name: str) -> ModelFit:
        for fit in self.models:
            if fit.name == name:
                return fit
        raise KeyError(name)


def _design(name: str) -> np.ndarray:
    rows = []
    for history in HISTORIES:
        x = np.array([int(c) for c in history], dtype=float)
        k = x.sum()
        if name == "M0":
            rows.append([1.0, k])
        elif name == "Mt":
            rows.append([1.0, *x])
        elif name == "Mh":
            rows.append([1.0, k, k * k / 2.0])
        elif name == "Mth":
            rows.append([1.0, *x, k * k / 2.0])
        elif name.startswith("Mt+"):
            i, j = int(name[3]) - 1, int(name[4]) - 1
            rows.append([1.0, *x, x[i] * x[j]])
        else:
            raise ValueError(f"unknown model {name!r}; choose from {MODELS}")
    return np.array(rows)


def _poisson_irls(design: np.ndarray, counts: np.ndarray, *, max_iter: int = 100, tol: float = 1e-10):
    """Poisson GLM with log link by iteratively reweighted least squares."""
    beta = np.linalg.lstsq(design, np.log(counts + 0.5), rcond=None)[0]
    converged = False
    for _ in range(max_iter):
        eta = np.clip(design @ beta, -700, 700)
        mu = np.exp(eta)
        z = eta + (counts - mu) / mu
        weighted = design * mu[:, None]
        new_beta = np.linalg.solve(design.T @ weighted, weighted.T @ z)
        if np.max(np.abs(new_beta - beta)) < tol * (1.0 + np.max(np.abs(beta))):
            beta = new_beta
            converged = True
            break
        beta = new_beta
    mu = np.exp(np.clip(design @ beta, -700, 700))
    covariance = np.linalg.inv(design.T @ (design * mu[:, None]))
    return beta, mu, covariance, converged


def _poisson_loglik(counts: np.ndarray, mu: np.ndarray) -> float:
    return float(np.sum(counts * np.log(mu) - mu - gammaln(counts + 1.0)))


def _deviance(counts: np.ndarray, mu: np.ndarray) -> float:
    with np.errstate(divide="ignore", invalid="ignore"):
        term = np.where(counts > 0, counts * np.log(counts / mu), 0.0)
    return float(2.0 * np.sum(term - (counts - mu)))


def _implied(mu_observed: np.ndarray, unseen: float):
    """Full 2×2×2 table of the fit → recalls and pairwise dependence ratios."""
    table = np.zeros((2, 2, 2))
    table[0, 0, 0] = unseen
    for history, value in zip(HISTORIES, mu_observed):
        table[tuple(int(c) for c in history)] = value
    total = table.sum()
    marginal = [table.sum(axis=tuple(a for a in range(3) if a != j))[1] / total for j in range(3)]

    def delta(i: int, j: int) -> float:
        other = tuple(a for a in range(3) if a not in (i, j))
        both = table.sum(axis=other)[1, 1] / total
        return both / (marginal[i] * marginal[j])

    return tuple(marginal), delta(0, 1), delta(0, 2), delta(1, 2)


def capture_recapture(*, counts: Mapping[str, float], models: tuple[str, ...] = MODELS) -> CaptureRecaptureResult:
    """Fit three-classifier log-linear capture–recapture models (Rcapture-style) and rank them by AIC.

    counts: relevant documents per capture history, keys from
    ("100", "010", "001", "110", "101", "011", "111"); missing keys count 0.

    Use: if Mt (independence) is not the AIC-best model, the classifiers are
    dependent and Eq. 1's δ1 = 1 is doubtful; ``delta12`` of the best model
    estimates δ1 for the pair C1, C2, which can replace the 0.8–1.25 band of
    :func:`stratified_pair_recall`.  Heterogeneity models (Mh, Mth) cannot
    tell "dependent classifiers" from "some relevant documents are easy to
    find for everyone"; both inflate δ.
    """
    unknown = set(counts) - set(HISTORIES)
    if unknown:
        raise ValueError(f"unknown capture histories {sorted(unknown)}; use {HISTORIES}")
    y = np.array([float(counts.get(h, 0.0)) for h in HISTORIES])
    if (~np.isfinite(y)).any() or (y < 0).any():
        raise ValueError("counts must be finite and ≥ 0")
    if y.sum() <= 0:
        raise ValueError("no relevant document was found by any classifier")
    fits = []
    for name in models:
        design = _design(name)
        try:
            beta, mu, covariance, converged = _poisson_irls(design, y)
        except np.linalg.LinAlgError:
            continue
        unseen = float(np.exp(beta[0]))
        variance = unseen + unseen**2 * covariance[0, 0]
        finite = math.isfinite(unseen) and unseen < 1e12
        recall, d12, d13, d23 = _implied(mu, unseen) if finite else (None, None, None, None)
        fits.append(ModelFit(
            name=name,
            n_hat=float(y.sum() + unseen) if finite else None,
            se=math.sqrt(variance) if finite and variance >= 0 else None,
            deviance=_deviance(y, mu),
            df=len(HISTORIES) - design.shape[1],
            aic=-2.0 * _poisson_loglik(y, mu) + 2.0 * design.shape[1],
            recall=recall, delta12=d12, delta13=d13, delta23=d23,
            converged=converged,
        ))
    if not fits:
        raise ValueError("no model could be fitted to these counts")
    fits.sort(key=lambda f: f.aic)
    best = fits[0]
    summary = _summary(best, next((f for f in fits if f.name == "Mt"), None))
    return CaptureRecaptureResult(observed=float(y.sum()), models=tuple(fits), best=best.name, summary=summary)


def _summary(best: ModelFit, independent: ModelFit | None) -> str:
    if best.n_hat is None:
        return f"The best model by AIC is {best.name}, but it does not give a finite number of relevant documents."
    text = f"The best model by AIC is {best.name}: about {best.n_hat:,.0f} relevant documents"
    if best.se is not None:
        text += f" (± {best.se:,.0f})"
    if best.delta12 is not None:
        text += f"; the dependence ratio of C1 and C2 is δ1 ≈ {best.delta12:.2f}"
    # A difference in AIC below 2 is conventionally "no real support" for the bigger model.
    if independent is None:
        return text + "."
    if best.name == "Mt" or independent.aic - best.aic < 2.0:
        return text + ". Independent classifiers (model Mt) fit about as well, so δ1 = 1 is plausible."
    return text + (". Independent classifiers (model Mt) fit clearly worse, so the pair estimates of seed 000 "
                   "are probably biased; use the band of δ1 values, or this model's δ1.")
