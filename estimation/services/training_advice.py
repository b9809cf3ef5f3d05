"""When to stop training and start certifying: the analyst's learning curve in, the advice out (seed 004 Sec. 3).

One service for the page (estimation/views/training_advice.py) and the API (api/views/training_advice.py):
``training_stop_advise`` checks what was asked and wraps ``estimation.stats.training_stop`` (which holds the
statistics: the power analysis per point, the fitted learning curve, the sequential-bias margin). It reads and
writes nothing: the learning curve is the analyst's own, measured outside the application.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from core.errors import ApplicationError
from estimation import limits as plan_limits
from estimation.stats.training_stop import LearningPoint, TrainingStopAdvice, training_stop_advice

MAX_POINTS = 200
MAX_TRAINING_SIZE = 100_000_000
MARGIN_CONFIDENCE = (0.5, 0.999)
PREVALENCE = (0.0001, 0.5)
MAX_BUDGET = 1_000_000_000
MAX_COST_PER_ANNOTATION = 10_000.0


class TrainingAdviceError(ApplicationError):
    """The learning curve or a parameter cannot be used; the message says which and why."""


def _number(name: str, value: Any, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise TrainingAdviceError(f"The {name} must be a number (got {value!r}).")
    if not low <= value <= high:
        raise TrainingAdviceError(f"The {name} must lie between {low:g} and {high:g} (got {value:g}).")
    return float(value)


def _whole(name: str, value: Any, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
            or int(value) != value:
        raise TrainingAdviceError(f"The {name} must be a whole number (got {value!r}).")
    if not low <= value <= high:
        raise TrainingAdviceError(f"The {name} must lie between {low:,} and {high:,} (got {int(value):,}).")
    return int(value)


def _is_number(field: str) -> bool:
    try:
        float(field)
    except ValueError:
        return False
    return True


def training_points_parse(*, text: str) -> list[LearningPoint]:
    """Learning-curve points pasted one per line: ``size, F1`` or ``size, F1, cross-validation documents``.

    Commas, semicolons, tabs or spaces separate the numbers; blank lines and lines starting with ``#`` are
    skipped; a first line that is not numbers (a header) is skipped too. Raises TrainingAdviceError naming
    the line at fault.
    """
    points: list[LearningPoint] = []
    seen_line = False
    lines = text.splitlines()
    if len(lines) > MAX_POINTS + 50:
        raise TrainingAdviceError(f"Give at most {MAX_POINTS} points (got {len(lines):,} lines).")
    for number, line in enumerate(lines, start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        fields = [f for f in line.replace(",", " ").replace(";", " ").split() if f]
        try:
            values = [float(f) for f in fields]
        except ValueError:
            if not points and not seen_line and not any(_is_number(f) for f in fields):
                seen_line = True
                continue  # a header line: words only
            raise TrainingAdviceError(f"Line {number}: expected numbers, e.g. \"500, 0.72\" (got {line[:60]!r}).")\
                from None
        if len(values) not in (2, 3):
            raise TrainingAdviceError(f"Line {number}: expected a training size and an F1, optionally the "
                                      f"cross-validation documents (got {len(values)} numbers).")
        seen_line = True
        size = _whole(f"training size on line {number}", values[0], 1, MAX_TRAINING_SIZE)
        estimate = _number(f"F1 on line {number}", values[1], 0.0, 1.0)
        cv = None if len(values) == 2 else _whole(f"cross-validation documents on line {number}", values[2], 1,
                                                  MAX_TRAINING_SIZE)
        points.append(LearningPoint(size=size, estimate=estimate, cv_documents=cv))
    return points


def training_stop_advise(*, points: Sequence[LearningPoint], target: float, prevalence: float,
                         alpha: float = 0.05, power: float = 0.93, retrieved_fraction: float | None = None,
                         margin_confidence: float = 0.95, budget: int | None = None,
                         cost_per_annotation: float | None = None) -> TrainingStopAdvice:
    """Continue training, or stop and certify with s documents, from the analyst's learning curve.

    Checks every input against the same bounds as a certification plan's (``estimation/limits.py``: target,
    α, power) and this page's own (prevalence, margin, budget, cost, at most MAX_POINTS points), then calls
    ``estimation.stats.training_stop.training_stop_advice``. Raises TrainingAdviceError (a 400 on the API, a
    form error on the page) with the reason; a ValueError from the statistics (an F1 impossible at this
    prevalence, a size given twice) becomes one too.
    """
    if not points:
        raise TrainingAdviceError("Give at least one learning-curve point: a training size and its "
                                  "cross-validated F1.")
    if len(points) > MAX_POINTS:
        raise TrainingAdviceError(f"Give at most {MAX_POINTS} points (got {len(points):,}).")
    checked = [LearningPoint(size=_whole("training size", p.size, 1, MAX_TRAINING_SIZE),
                             estimate=_number("F1", p.estimate, 0.0, 1.0),
                             cv_documents=None if p.cv_documents is None
                             else _whole("number of cross-validation documents", p.cv_documents, 1,
                                         MAX_TRAINING_SIZE))
               for p in points]
    target = _number("target", target, *plan_limits.TARGET)
    alpha = _number("false-pass rate (alpha)", alpha, *plan_limits.ALPHA)
    power = _number("power", power, *plan_limits.POWER)
    prevalence = _number("prevalence", prevalence, *PREVALENCE)
    rho = None if retrieved_fraction is None else _number("retrieved fraction", retrieved_fraction,
                                                          PREVALENCE[0], 0.99)
    margin = _number("margin confidence", margin_confidence, *MARGIN_CONFIDENCE)
    budget_checked = None if budget is None else _whole("budget", budget, 1, MAX_BUDGET)
    cost = None if cost_per_annotation is None else _number("cost per annotation", cost_per_annotation, 0.0,
                                                            MAX_COST_PER_ANNOTATION)
    try:
        return training_stop_advice(points=checked, target=target, alpha=alpha, power=power,
                                    prevalence=prevalence, retrieved_fraction=rho, margin_confidence=margin,
                                    budget=budget_checked, cost_per_annotation=cost)
    except ValueError as exc:  # the statistics' own checks: the message is for the analyst
        message = str(exc)
        raise TrainingAdviceError(message[:1].upper() + message[1:] + ".") from exc
