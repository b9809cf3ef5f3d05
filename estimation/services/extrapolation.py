"""Precision extrapolated to a target recall (seed 001), for the report and for the report page.

One function computes it (``precision_extrapolate``): the report builder calls it
with the estimated number of relevant documents, the report page with the stored
report's prevalence at the target recall the analyst picks.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from estimation.stats.extrapolated_precision import ExtrapolationRefused, extrapolated_precision, reference_curve

# What the stats library raises on values it cannot use: a refusal with a reason, never a failure.
STATS_ERRORS = (ValueError, ArithmeticError, np.linalg.LinAlgError)


def precision_extrapolate(*, precision: float, recall: float, prevalence: float, target_recall: float,
                          curve_points: int = 0) -> dict[str, Any]:
    """Precision extrapolated to ``target_recall`` (seed 001, estimation.stats.extrapolated_precision).

    {"estimate": float | None, "refused": reason | None}, and with ``curve_points``
    the reference curve under "curve" (the report page plots it).  Refusals
    carry the reason in words; they never raise.
    """
    try:
        value = float(extrapolated_precision(precision=precision, recall=recall, prevalence=prevalence,
                                             target_recall=target_recall))
        result: dict[str, Any] = {"estimate": value if math.isfinite(value) else None, "refused": None}
        if curve_points:
            result["curve"] = reference_curve(precision=precision, recall=recall, prevalence=prevalence,
                                              points=curve_points)
    except ExtrapolationRefused as exc:
        return {"estimate": None, "refused": exc.reason}
    except STATS_ERRORS as exc:
        return {"estimate": None, "refused": f"The extrapolation failed: {exc}"}
    return result


def report_extrapolations(*, report: dict[str, Any], target_recall: float) -> tuple[dict[str, dict], dict[str, tuple]]:
    """Per classifier of a stored report: precision extrapolated to ``target_recall`` and its reference curve.

    For the report page, where the analyst picks the target recall: the
    report's prevalence and each classifier's precision and recall go through
    ``precision_extrapolate``, the function the report itself uses.
    """
    prevalence = (report.get("estimated_relevant") or {}).get("prevalence")
    values, curves = {}, {}
    for row in report.get("classifiers") or []:
        name = row.get("name", "")
        p = (row.get("precision") or {}).get("estimate")
        r = (row.get("recall") or {}).get("estimate")
        if p is None or r is None or not prevalence:
            values[name] = {"estimate": None, "refused": "Precision, recall and the prevalence are needed first."}
            continue
        result = precision_extrapolate(precision=p, recall=r, prevalence=prevalence, target_recall=target_recall,
                                       curve_points=61)
        if "curve" in result:
            curves[name] = result.pop("curve")
        values[name] = result
    return values, curves
