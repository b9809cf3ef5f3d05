"""Precision extrapolated to a target recall (seed 001), for the report and for the report page.

One function computes it (``precision_extrapolate``): the report builder calls it
with the estimated number of relevant documents, the report page with the stored
report's prevalence at the target recall the analyst picks.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from estimation.stats.extrapolated_precision import (
    ExtrapolationRefused,
    extrapolated_precision,
    reference_curve,
    review_cost,
)

# What the stats library raises on values it cannot use: a refusal with a reason, never a failure.
STATS_ERRORS = (ValueError, ArithmeticError, np.linalg.LinAlgError)


def precision_extrapolate(*, precision: float, recall: float, prevalence: float, target_recall: float,
                          curve_points: int = 0, population: int | None = None) -> dict[str, Any]:
    """Precision extrapolated to ``target_recall`` (seed 001, estimation.stats.extrapolated_precision).

    {"estimate": float | None, "refused": reason | None, "review_documents": float | None}, and with
    ``curve_points`` the reference curve under "curve" (the report page plots it).  ``review_documents`` is
    seed 001's review cost, Eq. 2: n = ρ·N·R_T / P(R_T), the documents a reviewer would read to reach the
    target recall at the extrapolated precision (ρ = ``prevalence``, N = ``population``, the corpus size);
    None without a population or an extrapolated precision.  Refusals carry the reason in words; they
    never raise.
    """
    try:
        value = float(extrapolated_precision(precision=precision, recall=recall, prevalence=prevalence,
                                             target_recall=target_recall))
        estimate = value if math.isfinite(value) else None
        result: dict[str, Any] = {"estimate": estimate, "refused": None, "review_documents": None}
        if estimate is not None and population:
            result["review_documents"] = float(review_cost(prevalence=prevalence, population=int(population),
                                                           recall=target_recall, precision=estimate))
        if curve_points:
            result["curve"] = reference_curve(precision=precision, recall=recall, prevalence=prevalence,
                                              points=curve_points)
    except ExtrapolationRefused as exc:
        return {"estimate": None, "refused": exc.reason, "review_documents": None}
    except STATS_ERRORS as exc:
        return {"estimate": None, "refused": f"The extrapolation failed: {exc}", "review_documents": None}
    return result


def report_extrapolations(*, report: dict[str, Any], target_recall: float) -> tuple[dict[str, dict], dict[str, tuple]]:
    """Per classifier of a stored report: precision extrapolated to ``target_recall`` (with seed 001's review
    cost, ``review_documents``) and its reference curve.

    For the report page, where the analyst picks the target recall: the
    report's prevalence and each classifier's precision and recall go through
    ``precision_extrapolate``, the function the report itself uses.
    """
    prevalence = (report.get("estimated_relevant") or {}).get("prevalence")
    population = report.get("corpus_size")
    values, curves = {}, {}
    for row in report.get("classifiers") or []:
        name = row.get("name", "")
        p = (row.get("precision") or {}).get("estimate")
        recall = row.get("recall") or {}
        r = recall.get("estimate")
        if p is None or r is None or not prevalence:
            withheld = recall.get("withheld_reason")
            refused = (withheld[:1].upper() + withheld[1:] + "." if withheld
                       else "Precision, recall and the prevalence are needed first.")
            values[name] = {"estimate": None, "refused": refused, "review_documents": None}
            continue
        result = precision_extrapolate(precision=p, recall=r, prevalence=prevalence, target_recall=target_recall,
                                       curve_points=61, population=population)
        if "curve" in result:
            curves[name] = result.pop("curve")
        values[name] = result
    return values, curves
