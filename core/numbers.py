"""Numbers read back from stored JSON (report snapshots): a finite float or nothing; a share as a percentage."""
from __future__ import annotations

import math
from typing import Any


def finite_or_none(value: Any) -> float | None:
    """``value`` as a finite float; None for None, booleans, non-numbers, NaN and infinities."""
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def percent_text(share: float) -> str:
    """A share (a prevalence, 0–1) as every page prints it (issue 26): a percentage, one decimal from 1% up
    ("20.9%", "1.2%"), two significant digits below ("0.89%", "0.048%")."""
    pct = share * 100
    if pct == 0:
        return "0%"
    if abs(pct) >= 1:
        return f"{pct:.1f}%"
    return f"{float(f'{pct:.2g}'):g}%"
