"""When to stop training and start certifying — seed 004, Sec. 3.3–3.4 and Sec. 6.

Seed 004 (Bagdouri, Webber, Lewis, Oard, CIKM 2013), Sec. 3.3: after the j-th
allocation of training examples the practitioner estimates the effectiveness
of a classifier trained on the ``r_j`` examples seen so far (by
cross-validation, Sec. 4.4), does a power analysis for the size ``s_j`` of a
fresh certification test set that would show with power 1 − β that the
classifier meets the target τ, and ``c_j = r_j + s_j`` is the total number of
annotations if training stopped now.  c_j falls while each training example
saves more than one test example, reaches a minimum, and then rises (Fig. 1).

Sec. 6 measures why the obvious rules are optimistic (sequential bias): the
estimate that first brings c_j under the budget, or the lowest c_j, is more
likely an overestimate than an underestimate.  Stopping at the first
c_j ≤ b passed certification 79.46% of the time against the 93% planned
(Sec. 6.1); the "blind oracle" that stops at the lowest c_j failed 27.14% of
the time (Sec. 6.2); waiting for w further points under budget (Sec. 6.3)
brings the rate back toward 93% at the risk of missing the budget.

This module's margin against that bias: each ``s_j`` is sized on the one-sided
lower confidence bound of the cross-validated F1 (its normal approximation,
Var(F̂1) = F(1 − F)(2 − F) / D with D = 2TP + FP + FN the cross-validation
documents that are relevant or retrieved — seed 004 Appendix A, Eq. 1; notes
§6), not on its point value.  The power analysis itself is not reimplemented:
it is ``certification.certification_test_size_closed_form`` (notes §6: the test
set must hold D = (z_{1−α} + z_{1−β})² F(1 − F)(2 − F) / (F − τ)² relevant or
retrieved documents), fed with the confusion proportions an F1 of F implies at
the given prevalence π and retrieved fraction ρ (2TP + FP + FN = relevant +
retrieved, so D per document = π + ρ; TP per document = F(π + ρ)/2).

The learning curve is projected forward by an inverse power law
F(r) = a − b·r^(−c) (a ≤ 1; the usual shape of text-classification learning
curves, seed 004 Sec. 3.3 refs. [22, 30]), fitted by least squares, and c(r)
is computed along it to find the projected minimum.  A projection is a guess
about the future: it says whether more training is expected to pay for
itself, never whether the classifier will pass.
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy.optimize import OptimizeWarning, curve_fit
from scipy.special import ndtri

from .certification import CertificationImpossible, certification_test_size_closed_form

__all__ = [
    "CONTINUE",
    "STOP",
    "NOT_REACHABLE",
    "SEQUENTIAL_BIAS_CAVEAT",
    "LearningPoint",
    "PointSizing",
    "LearningCurveFit",
    "TrainingStopAdvice",
    "f1_lower_bound",
    "certification_size_for_f1",
    "point_sizing",
    "learning_curve_fit",
    "training_stop_advice",
]

CONTINUE = "continue"
STOP = "stop"
NOT_REACHABLE = "not_reachable"

# Pseudo-population for turning (F1, prevalence, retrieved fraction) into the integer confusion counts the
# closed form takes: large enough that rounding moves F1 by less than 1e-7.
_SCALE = 10**9
# How far past the last point the projection looks (a multiple of the largest training size).
DEFAULT_HORIZON = 10.0
_GRID = 400
# The exponent's lower bound: below it, a noisy curve over a short range is fitted as one still climbing
# slowly toward F1 = 1 (a → 1, c → 0), which projects gains no learning curve shows.
_C_LOW = 0.2
# More training is advised only when it is projected to save at least this share of the current total.
_WORTH_IT = 0.01
# A projected minimum within this share of the last training size is "here", not behind or ahead.
_AT_MINIMUM = 0.05

SEQUENTIAL_BIAS_CAVEAT = (
    "Stopping at the first point whose total fits the budget, or at the lowest point of the curve, is optimistic: "
    "the estimate that looks best is more often too high than too low (sequential bias). In seed 004's "
    "experiments, stopping at the first total within budget passed certification 79% of the time against the 93% "
    "planned, and stopping at the lowest total 73%. The test-set sizes here are therefore computed on a lower "
    "confidence bound of each estimate, not on the estimate itself; waiting for a few more points that fit the "
    "budget before stopping (the paper's wait-a-while policy) is a further margin. Whatever is decided here, the "
    "certification itself stays valid: it is decided on a fresh sample drawn after training stops.")


@dataclass(frozen=True)
class LearningPoint:
    """One point of the learning curve the analyst measured.

    ``size`` training documents (r_j); ``estimate`` their cross-validated F1; ``cv_documents`` the documents
    the cross-validation tested on (summed over the folds; None = ``size``, seed 004 Sec. 4.4: every training
    document is tested once).
    """

    size: int
    estimate: float
    cv_documents: int | None = None


@dataclass(frozen=True)
class PointSizing:
    """The certification test set if training stopped at one point (seed 004 Sec. 3.3: s_j and c_j).

    ``test_size_at_estimate`` is s_j sized on the point estimate (the paper's plug-in, optimistic);
    ``test_size`` is s_j sized on ``lower_bound`` (the margin); ``total`` = size + test_size (c_j).
    Sizes are None when no test set can certify (the bound is not above the target); ``unsized`` says why.
    """

    size: int
    estimate: float
    cv_documents: int
    lower_bound: float
    test_size_at_estimate: int | None
    test_size: int | None
    total: int | None
    total_cost: float | None
    within_budget: bool | None
    unsized: str | None


@dataclass(frozen=True)
class LearningCurveFit:
    """F(r) = a − b·r^(−c) fitted to the points, and c(r) = r + s(r) along it.

    ``projection`` holds (r, F(r), s(r) or None, c(r) or None) on a geometric grid from the first point to
    ``horizon`` × the last; ``minimum_*`` is the lowest c(r) on it (None if no r on it can be certified);
    ``certifiable_from`` the first r whose s(r) exists; ``rmse`` the fit's root-mean-square residual.
    """

    a: float
    b: float
    c: float
    rmse: float
    projection: tuple[tuple[int, float, int | None, int | None], ...]
    minimum_size: int | None
    minimum_test_size: int | None
    minimum_total: int | None
    certifiable_from: int | None
    minimum_at_horizon: bool


@dataclass(frozen=True)
class TrainingStopAdvice:
    """What to do next (seed 004 Sec. 3.2's policy actions: continue training, or stop and size the test set).

    ``action`` is CONTINUE, STOP or NOT_REACHABLE; ``test_size`` the certification sample to draw when STOP;
    ``reason`` the reason in plain words; ``notes`` further remarks (noisy points, no projection, ...);
    ``caveat`` the sequential-bias warning (seed 004 Sec. 6), always given.
    """

    action: str
    test_size: int | None
    reason: str
    notes: tuple[str, ...]
    caveat: str
    points: tuple[PointSizing, ...]
    fit: LearningCurveFit | None
    target: float
    alpha: float
    power: float
    margin_confidence: float
    prevalence: float
    retrieved_fraction: float
    budget: int | None
    cost_per_annotation: float | None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: every field, the fit's projection as a list of objects."""
        data = asdict(self)
        if self.fit is not None:
            data["fit"]["projection"] = [
                {"size": r, "estimate": f, "test_size": s, "total": c} for r, f, s, c in self.fit.projection]
        data["notes"] = list(self.notes)
        data["points"] = [asdict(p) for p in self.points]
        return data


# --------------------------------------------------------------------------- checks


def _check_open_unit(name: str, value: float) -> None:
    if not (isinstance(value, int | float) and math.isfinite(value) and 0.0 < value < 1.0):
        raise ValueError(f"{name} must lie strictly between 0 and 1 (got {value!r})")


def _check_design(prevalence: float, retrieved_fraction: float) -> None:
    _check_open_unit("prevalence", prevalence)
    _check_open_unit("retrieved fraction", retrieved_fraction)


def _check_f1_possible(f1: float, prevalence: float, retrieved_fraction: float) -> None:
    # TP per document = F(π + ρ)/2 cannot exceed the relevant (π) nor the retrieved (ρ) share.
    if f1 * (prevalence + retrieved_fraction) / 2.0 > min(prevalence, retrieved_fraction) + 1e-12:
        top = 2.0 * min(prevalence, retrieved_fraction) / (prevalence + retrieved_fraction)
        raise ValueError(f"an F1 of {f1:.3f} is impossible when {prevalence:.3g} of the documents are relevant and "
                         f"{retrieved_fraction:.3g} retrieved (at most {top:.3f})")


# --------------------------------------------------------------------------- one point


def f1_lower_bound(*, estimate: float, cv_documents: int, prevalence: float, retrieved_fraction: float,
                   confidence: float) -> float:
    """One-sided ``confidence`` lower bound on a cross-validated F1 (seed 004 Appendix A, Eq. 1; notes §6).

    F̂ − z_confidence · sqrt(F̂(1 − F̂)(2 − F̂) / D), D = (π + ρ) · cv_documents the expected number of
    cross-validation documents that are relevant or retrieved; clipped to [0, 1]. (It ignores that
    cross-validated classifiers train on (n − 1)/n of the data and so understate F1 — Sec. 4.4 —, which only
    makes the bound lower.)
    """
    if cv_documents < 1:
        raise ValueError(f"cv_documents must be at least 1 (got {cv_documents!r})")
    _check_open_unit("confidence", confidence)
    d = (prevalence + retrieved_fraction) * cv_documents
    sd = math.sqrt(max(0.0, estimate * (1.0 - estimate) * (2.0 - estimate)) / d)
    return min(1.0, max(0.0, estimate - float(ndtri(confidence)) * sd))


def certification_size_for_f1(*, f1: float, target: float, alpha: float, power: float, prevalence: float,
                              retrieved_fraction: float) -> int:
    """Documents to sample uniformly to certify F1 ≥ ``target`` if the classifier's F1 is ``f1``.

    The project's power analysis, ``certification.certification_test_size_closed_form`` (notes §6), given the
    confusion proportions that F1 implies at prevalence π and retrieved fraction ρ: TP = F(π + ρ)/2,
    FP = ρ − TP, FN = π − TP per document. Raises ``CertificationImpossible`` when ``f1`` ≤ ``target``.
    """
    _check_f1_possible(f1, prevalence, retrieved_fraction)
    relevant, retrieved = round(prevalence * _SCALE), round(retrieved_fraction * _SCALE)
    tp = round(f1 * (relevant + retrieved) / 2.0)
    fp, fn = retrieved - tp, relevant - tp
    tn = _SCALE - tp - fp - fn
    return certification_test_size_closed_form(tp=tp, fp=fp, fn=fn, tn=tn, target=target, alpha=alpha,
                                               power=power)


def _size_or_none(**kwargs: float) -> int | None:
    try:
        return certification_size_for_f1(**kwargs)
    except CertificationImpossible:
        return None


def point_sizing(*, point: LearningPoint, target: float, alpha: float, power: float, prevalence: float,
                 retrieved_fraction: float, margin_confidence: float, budget: int | None = None,
                 cost_per_annotation: float | None = None) -> PointSizing:
    """s_j and c_j = r_j + s_j for one learning-curve point (seed 004 Sec. 3.3), sized on the lower bound."""
    cv_documents = point.size if point.cv_documents is None else point.cv_documents
    design = {"prevalence": prevalence, "retrieved_fraction": retrieved_fraction}
    low = f1_lower_bound(estimate=point.estimate, cv_documents=cv_documents, confidence=margin_confidence, **design)
    common = {"target": target, "alpha": alpha, "power": power, **design}
    at_estimate = _size_or_none(f1=point.estimate, **common)
    sized = _size_or_none(f1=low, **common)
    unsized = None
    if sized is None:
        if point.estimate <= target:
            unsized = (f"the estimate {point.estimate:.3f} is not above the target {target:.3f}: no test set of any "
                       "size can certify this classifier")
        else:
            unsized = (f"the estimate {point.estimate:.3f} is above the target {target:.3f}, but its "
                       f"{margin_confidence:.0%} lower bound {low:.3f} is not: too uncertain to size a test set")
    total = None if sized is None else point.size + sized
    return PointSizing(
        size=point.size, estimate=point.estimate, cv_documents=cv_documents, lower_bound=low,
        test_size_at_estimate=at_estimate, test_size=sized, total=total,
        total_cost=None if total is None or cost_per_annotation is None else total * cost_per_annotation,
        within_budget=None if budget is None or total is None else total <= budget,
        unsized=unsized)


# --------------------------------------------------------------------------- the curve


def _inverse_power(r: np.ndarray, a: float, b: float, c: float) -> np.ndarray:
    return a - b * np.power(r, -c)


def learning_curve_fit(*, points: Sequence[LearningPoint], target: float, alpha: float, power: float,
                       prevalence: float, retrieved_fraction: float, margin_confidence: float,
                       horizon: float = DEFAULT_HORIZON) -> LearningCurveFit | None:
    """Fit F(r) = a − b·r^(−c) (0 ≤ a ≤ 1, b ≥ 0, 0.2 ≤ c ≤ 3) and project c(r) = r + s(r) forward.

    Least squares (``scipy.optimize.curve_fit`` with bounds), each point weighted by its standard error
    (seed 004 Appendix A, Eq. 1, from its cross-validation documents). Along the fitted curve, s(r) is sized
    as at a measured point: on the lower bound of an estimate from as many cross-validation documents per
    training document as the last point had. Returns None with fewer than three points or when the fit does
    not converge.
    """
    if len(points) < 3:
        return None
    ordered = sorted(points, key=lambda p: p.size)
    r = np.array([p.size for p in ordered], dtype=float)
    f = np.array([p.estimate for p in ordered], dtype=float)
    cv = np.array([p.size if p.cv_documents is None else p.cv_documents for p in ordered], dtype=float)
    d = (prevalence + retrieved_fraction) * cv
    sigma = np.sqrt(np.maximum(f * (1 - f) * (2 - f), 1e-4) / d)
    a0 = min(1.0, float(f.max()) + 0.02)
    c0 = 0.5
    b0 = max(1e-6, (a0 - float(f.min())) * float(r.min()) ** c0)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", OptimizeWarning)
            params, _ = curve_fit(_inverse_power, r, f, p0=(a0, b0, c0), sigma=sigma,
                                  bounds=([0.0, 0.0, _C_LOW], [1.0, np.inf, 3.0]), maxfev=20_000)
    except (RuntimeError, ValueError):
        return None
    a, b, c = (float(x) for x in params)
    rmse = float(np.sqrt(np.mean((_inverse_power(r, a, b, c) - f) ** 2)))
    cv_per_document = float(cv[-1] / r[-1])
    grid = np.unique(np.concatenate([
        np.round(np.geomspace(r[0], r[-1] * horizon, _GRID)), r]).astype(int))
    projection: list[tuple[int, float, int | None, int | None]] = []
    for size in grid:
        fitted = float(min(1.0, max(0.0, _inverse_power(np.array([size], dtype=float), a, b, c)[0])))
        fitted = min(fitted, 2.0 * min(prevalence, retrieved_fraction) / (prevalence + retrieved_fraction))
        low = f1_lower_bound(estimate=fitted, cv_documents=max(1, round(size * cv_per_document)),
                             prevalence=prevalence, retrieved_fraction=retrieved_fraction,
                             confidence=margin_confidence)
        s = _size_or_none(f1=low, target=target, alpha=alpha, power=power, prevalence=prevalence,
                          retrieved_fraction=retrieved_fraction)
        projection.append((int(size), fitted, s, None if s is None else int(size) + s))
    sized = [row for row in projection if row[3] is not None]
    best = min(sized, key=lambda row: (row[3], row[0])) if sized else None
    return LearningCurveFit(
        a=a, b=b, c=c, rmse=rmse, projection=tuple(projection),
        minimum_size=None if best is None else best[0],
        minimum_test_size=None if best is None else best[2],
        minimum_total=None if best is None else best[3],
        certifiable_from=sized[0][0] if sized else None,
        minimum_at_horizon=best is not None and best[0] == projection[-1][0])


# --------------------------------------------------------------------------- the advice


def _check_points(points: Sequence[LearningPoint], prevalence: float, retrieved_fraction: float) -> None:
    if not points:
        raise ValueError("give at least one learning-curve point (training size, cross-validated F1)")
    seen: set[int] = set()
    for p in points:
        if isinstance(p.size, bool) or not isinstance(p.size, int) or p.size < 1:
            raise ValueError(f"a training size must be a whole number of documents, at least 1 (got {p.size!r})")
        if p.size in seen:
            raise ValueError(f"the training size {p.size} is given twice: one estimate per size")
        seen.add(p.size)
        if not (isinstance(p.estimate, int | float) and math.isfinite(p.estimate) and 0.0 <= p.estimate <= 1.0):
            raise ValueError(f"an F1 estimate must lie between 0 and 1 (got {p.estimate!r} at size {p.size})")
        _check_f1_possible(float(p.estimate), prevalence, retrieved_fraction)
        if p.cv_documents is not None and (isinstance(p.cv_documents, bool) or not isinstance(p.cv_documents, int)
                                           or p.cv_documents < 1):
            raise ValueError(f"cross-validation documents must be a whole number, at least 1 "
                             f"(got {p.cv_documents!r} at size {p.size})")


def training_stop_advice(*, points: Sequence[LearningPoint], target: float, alpha: float = 0.05,
                         power: float = 0.93, prevalence: float, retrieved_fraction: float | None = None,
                         margin_confidence: float = 0.95, budget: int | None = None,
                         cost_per_annotation: float | None = None,
                         horizon: float = DEFAULT_HORIZON) -> TrainingStopAdvice:
    """Continue training, or stop and certify with s documents — seed 004 Sec. 3.3 with the Sec. 6 caveat.

    ``points``: the learning curve measured so far (r_j, cross-validated F1, optionally its cross-validation
    documents); ``target`` τ; ``alpha`` the certification's false-pass rate; ``power`` 1 − β;
    ``prevalence`` and ``retrieved_fraction`` (default: the prevalence, a classifier tuned for F1 retrieves
    about as many documents as are relevant) turn F1 into the counts the power analysis needs;
    ``margin_confidence`` the one-sided confidence of the lower bound each s_j is sized on; ``budget`` b in
    annotations (training + certification documents); ``cost_per_annotation`` prices them.

    The decision, at the last (largest) training size:
    * the fitted plateau a is not above τ and the last point cannot be certified → NOT_REACHABLE;
    * with a budget, no measured or projected total fits it → NOT_REACHABLE;
    * the last point cannot be certified yet, or the projected minimum of c(r) lies ahead and saves at least
      1% of the current total (and fits the budget) → CONTINUE;
    * otherwise → STOP, certify with the last point's s (sized on the lower bound); with fewer than three
      points there is no projection, so this is the paper's first-within-budget rule with the margin.
    """
    rho = prevalence if retrieved_fraction is None else retrieved_fraction
    _check_design(prevalence, rho)
    for name, value in (("target", target), ("alpha", alpha), ("power", power),
                        ("margin confidence", margin_confidence)):
        _check_open_unit(name, value)
    if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int) or budget < 1):
        raise ValueError(f"the budget must be a whole number of annotations, at least 1 (got {budget!r})")
    if cost_per_annotation is not None and not (math.isfinite(cost_per_annotation) and cost_per_annotation >= 0):
        raise ValueError(f"the cost per annotation must be a non-negative number (got {cost_per_annotation!r})")
    if not (math.isfinite(horizon) and horizon >= 1.0):
        raise ValueError(f"the horizon must be at least 1 (got {horizon!r})")
    _check_points(points, prevalence, rho)

    ordered = sorted(points, key=lambda p: p.size)
    common = {"target": target, "alpha": alpha, "power": power, "prevalence": prevalence,
              "retrieved_fraction": rho, "margin_confidence": margin_confidence}
    sized = tuple(point_sizing(point=p, budget=budget, cost_per_annotation=cost_per_annotation, **common)
                  for p in ordered)
    fit = learning_curve_fit(points=ordered, horizon=horizon, **common)
    last = sized[-1]
    notes: list[str] = []
    if len(ordered) < 3:
        notes.append(f"Only {len(ordered)} point{'s' if len(ordered) != 1 else ''}: at least three are needed to "
                     "fit a learning curve, so nothing is projected and whether more training would lower the "
                     "total is unknown.")
    elif fit is None:
        notes.append("The learning curve could not be fitted to these points, so nothing is projected.")
    drops = sum(1 for x, y in zip(ordered, ordered[1:]) if y.estimate < x.estimate)
    if drops:
        notes.append(f"The estimates go down {drops} time{'s' if drops != 1 else ''} as training grows: they are "
                     "noisy, so trust the fitted curve more than any single point.")
    if fit is not None and (fit.c <= _C_LOW * 1.001 or fit.a >= 0.999):
        notes.append(f"These points do not pin down where the curve levels off (the fit sits at the edge of its "
                     f"range: level {fit.a:.3f}, exponent {fit.c:.2f}): the projection beyond the last point is "
                     "uncertain; add points and look again.")
    if fit is not None and fit.rmse > 0.05:
        notes.append(f"The fitted curve misses the points by {fit.rmse:.3f} on average (root mean square): read its "
                     "projection with care.")

    action, test_size, reason = _decide(last=last, fit=fit, target=target, budget=budget,
                                        margin_confidence=margin_confidence, notes=notes)
    return TrainingStopAdvice(
        action=action, test_size=test_size, reason=reason, notes=tuple(notes), caveat=SEQUENTIAL_BIAS_CAVEAT,
        points=sized, fit=fit, target=target, alpha=alpha, power=power, margin_confidence=margin_confidence,
        prevalence=prevalence, retrieved_fraction=rho, budget=budget, cost_per_annotation=cost_per_annotation)


def _decide(*, last: PointSizing, fit: LearningCurveFit | None, target: float,
            budget: int | None, margin_confidence: float, notes: list[str]) -> tuple[str, int | None, str]:
    ahead = fit is not None and fit.minimum_size is not None and fit.minimum_size > last.size
    if fit is not None and fit.a <= target and last.test_size is None:
        return NOT_REACHABLE, None, (
            f"The fitted learning curve levels off at an F1 of about {fit.a:.3f}, not above the target {target:.3f}: "
            "more training of this kind is not expected to reach the target. Change the classifier or its "
            "features, or the target.")
    if fit is not None and fit.minimum_total is None and last.test_size is None:
        return NOT_REACHABLE, None, (
            f"The fitted learning curve levels off at an F1 of about {fit.a:.3f}, too close to the target "
            f"{target:.3f} for its {margin_confidence:.0%} lower bound to clear it within "
            f"{fit.projection[-1][0]:,} training documents: no test set could be sized.")
    if budget is not None and last.size >= budget:
        return NOT_REACHABLE, None, (
            f"Training has already used {last.size:,} annotations, the whole budget of {budget:,}: nothing is left "
            "for the certification sample.")
    if budget is not None and fit is not None and fit.minimum_total is not None and fit.minimum_total > budget \
            and not (last.total is not None and last.total <= budget):
        return NOT_REACHABLE, None, (
            f"The lowest projected total is {fit.minimum_total:,} annotations (training to {fit.minimum_size:,} and "
            f"certifying with {fit.minimum_test_size:,}), above the budget of {budget:,}.")
    if last.test_size is None:
        if fit is not None and fit.certifiable_from is not None:
            return CONTINUE, None, (
                f"Continue training: {last.unsized}. The fitted curve projects that a test set can be sized from "
                f"about {fit.certifiable_from:,} training documents, and the total is lowest at about "
                f"{fit.minimum_size:,} ({fit.minimum_total:,} annotations).")
        return CONTINUE, None, f"Continue training: {last.unsized}."
    assert last.total is not None
    if ahead and fit is not None and fit.minimum_total is not None \
            and fit.minimum_total < last.total * (1.0 - _WORTH_IT) \
            and (budget is None or fit.minimum_total <= budget):
        saving = last.total - fit.minimum_total
        horizon_note = (" (the cost is still falling where the projection ends, so the minimum may lie further)"
                        if fit.minimum_at_horizon else "")
        return CONTINUE, None, (
            f"Continue training: stopping now would take {last.total:,} annotations ({last.size:,} training + "
            f"{last.test_size:,} certification), and the fitted curve projects the total to fall to about "
            f"{fit.minimum_total:,} at {fit.minimum_size:,} training documents{horizon_note} — each training "
            f"document is expected to save more than one certification document (about {saving:,} in all).")
    if budget is not None and last.total > budget:
        if fit is None:
            return CONTINUE, None, (
                f"Continue training: stopping now would take {last.total:,} annotations, above the budget of "
                f"{budget:,}; without a projection it is unknown whether the total will fall within it.")
        return NOT_REACHABLE, None, (
            f"Stopping now would take {last.total:,} annotations, above the budget of {budget:,}, and the fitted "
            f"curve does not project the total to fall below it.")
    if fit is None:
        why = "no projection is possible, so this is the paper's stop-at-the-first-affordable-point rule"
    elif fit.minimum_size is not None and fit.minimum_size < last.size * (1.0 - _AT_MINIMUM):
        notes.append(f"The projected minimum (about {fit.minimum_total:,} annotations at {fit.minimum_size:,} "
                     "training documents) is already behind: that point cannot be gone back to, and every further "
                     "training document now costs more than it saves.")
        why = "the total is past its projected minimum: more training would cost more than it saves"
    elif fit.minimum_size is not None and fit.minimum_size <= last.size * (1.0 + _AT_MINIMUM):
        why = "the total is at its projected minimum"
    else:
        why = "the fitted curve projects no worthwhile saving from more training"
    budget_note = "" if budget is None else f", within the budget of {budget:,}"
    return STOP, last.test_size, (
        f"Stop training and certify with {last.test_size:,} documents (a fresh uniform sample): {why}. The total is "
        f"{last.total:,} annotations ({last.size:,} training + {last.test_size:,} certification){budget_note}. "
        f"The size is computed on the {margin_confidence:.0%} lower bound of the estimate ({last.lower_bound:.3f}); "
        + (f"on the estimate itself ({last.estimate:.3f}) it would be {last.test_size_at_estimate:,}, which "
           "passes less often than planned." if last.test_size_at_estimate is not None else ""))
