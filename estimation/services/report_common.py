"""Small pieces every block of the report shares: region keys, counts to stats inputs, JSON-safe numbers.

Used by ``reports`` (the builder), ``report_capture`` (pooled recall, capture–recapture) and
``report_dependence`` (the dependence check and what the figures assume).
"""
from __future__ import annotations

import math
from typing import Any

from estimation.services.inputs import SampleInputs
from estimation.stats import pair_recall

PAIR_KEYS = ("A12", "B1", "B2")
NEITHER = "N"  # annotation Region.NEITHER: documents neither classifier of the pair retrieved
# The declared band of dependence the report reads its estimates at (sensitivity, assumptions).
DEPENDENCE_BAND = (0.8, 1.25)


def region_sample(sample: SampleInputs | None, size: int) -> pair_recall.RegionSample:
    """(size, judged, relevant) of a region for the stats; an unsampled region has nothing judged."""
    if sample is None:
        return pair_recall.RegionSample(size=int(size), judged=0, relevant=0.0)
    return pair_recall.RegionSample(size=sample.size, judged=sample.judged, relevant=sample.relevant)


def num(value: Any) -> float | None:
    """A float for JSON, None for None, NaN or infinity (PostgreSQL's jsonb refuses NaN)."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def estimate_dict(estimate: pair_recall.Estimate | None) -> dict[str, Any]:
    if estimate is None:
        return {"estimate": None, "low": None, "high": None, "method": None}
    return {"estimate": num(estimate.point), "low": num(estimate.low), "high": num(estimate.high),
            "method": estimate.method}


def diagnostic(code: str, severity: str, message: str, source: str = "report") -> dict[str, str]:
    return {"code": code, "severity": severity, "message": message, "source": source}
