"""The figure a report leads with: a recall interval that holds whatever the two classifiers' dependence.

ESTIMATION-NOTES §8 and §9: the pair's interval (seed 000 Eq. 1) targets r* = T12/(T12 + T_other), which is the
corpus recall only when the classifiers are conditionally independent (δ1 = 1). On Reuters-21578 it held the
corpus recall in 8 of 24 cases while the design with a judged sample of the complement N held it in 10 of 10.
So a headline comes, in order of preference, from

* ``"design"``: the design-based interval over A12, B1, B2 and N (no assumption on δ1);
* ``"band"``: the widest interval of the pair's recall read under every δ1 of a declared band (default 0.8 to
  1.25: r = r*/δ1, capped at 1) — it holds whenever δ1 lies in the band, which is assumed, not measured;
* ``"pair_model"``: the pair's own interval (δ1 = 1 assumed and untested).

Pure: numbers in, a frozen ``HeadlineFigure`` out. The wording belongs to the caller.
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass

from estimation.stats.pair_recall import recall_under_delta1

BASES = ("design", "band", "pair_model")
DEFAULT_BAND = (0.8, 1.25)


@dataclass(frozen=True)
class HeadlineFigure:
    """A recall figure and its interval, clipped to [0, 1] with the estimate inside [low, high].

    ``basis``: "design" | "band" | "pair_model"; ``judged``: the judged documents it rests on. All of
    ``estimate``, ``low``, ``high`` are None when there is nothing to show.
    """

    estimate: float | None
    low: float | None
    high: float | None
    basis: str
    judged: int

    def as_dict(self) -> dict:
        return asdict(self)

    @property
    def available(self) -> bool:
        return self.estimate is not None


def _finite(value: float | None) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def headline_figure(*, estimate: float | None, low: float | None, high: float | None, basis: str,
                    judged: int) -> HeadlineFigure:
    """The figure with every number in [0, 1], low ≤ high, and the estimate clipped into [low, high].

    A missing end leaves the interval out (both ends None); a missing estimate leaves everything out.
    """
    if basis not in BASES:
        raise ValueError(f"basis must be one of {BASES}, got {basis!r}")
    point, lo, hi = (_finite(v) for v in (estimate, low, high))
    if point is None:
        return HeadlineFigure(estimate=None, low=None, high=None, basis=basis, judged=int(judged))
    point = min(1.0, max(0.0, point))
    if lo is None or hi is None:
        return HeadlineFigure(estimate=point, low=None, high=None, basis=basis, judged=int(judged))
    lo, hi = min(1.0, max(0.0, lo)), min(1.0, max(0.0, hi))
    lo, hi = min(lo, hi), max(lo, hi)
    return HeadlineFigure(estimate=min(hi, max(lo, point)), low=lo, high=hi, basis=basis, judged=int(judged))


def band_figure(*, points: Iterable[tuple[float, float | None, float | None, float | None]], judged: int,
                band: tuple[float, float] = DEFAULT_BAND) -> HeadlineFigure:
    """The recall over a δ1 band from the sensitivity points ``(delta1, estimate, low, high)``.

    The interval is [min low, max high] over the points with δ1 in the band (ends included); the estimate is the
    point at δ1 = 1 (the pair's own), else the middle point of the band's points. Returns an unavailable
    figure when no point of the band has both ends.
    """
    lo_band, hi_band = band
    inside = [(d, e, lo, hi) for d, e, lo, hi in points
              if lo_band - 1e-12 <= d <= hi_band + 1e-12 and _finite(lo) is not None and _finite(hi) is not None]
    if not inside:
        return HeadlineFigure(estimate=None, low=None, high=None, basis="band", judged=int(judged))
    low = min(float(lo) for _, _, lo, _ in inside if lo is not None)
    high = max(float(hi) for _, _, _, hi in inside if hi is not None)
    centre = [e for d, e, _, _ in inside if abs(d - 1.0) < 1e-12 and _finite(e) is not None]
    if centre:
        estimate = centre[0]
    else:
        ordered = sorted(inside, key=lambda p: p[0])
        estimate = ordered[len(ordered) // 2][1]
    return headline_figure(estimate=estimate, low=low, high=high, basis="band", judged=judged)


def band_from_pair_interval(*, estimate: float | None, low: float | None, high: float | None, judged: int,
                            band: tuple[float, float] = DEFAULT_BAND) -> HeadlineFigure:
    """The band for a recall whose pair figure scales as 1/δ1 (r = r*/δ1, capped at 1), from its δ1 = 1 interval.

    A further classifier's recall p_C·|A_C|/n̂ scales so (n̂ = δ1·T1·T2/T12); where n̂ is floored at what was
    found the true scaling is smaller, so these ends are conservative (wider).
    """
    lo_band, hi_band = band
    points = [(d, recall_under_delta1(_finite(estimate), delta1=d), recall_under_delta1(_finite(low), delta1=d),
               recall_under_delta1(_finite(high), delta1=d)) for d in (lo_band, 1.0, hi_band)]
    return band_figure(points=points, judged=judged, band=band)


def ratio_figure(*, found: float | None, found_low: float | None, found_high: float | None,
                 total: float | None, total_low: float | None, total_high: float | None,
                 judged: int, basis: str = "design") -> HeadlineFigure:
    """Recall = found / total, with the interval [found_low/total_high, found_high/total_low] (capped at 1).

    For a further classifier measured against the design-based total: its relevant documents found
    (p_C·|A_C|, from its own precision sample) over the total relevant documents (from A12, B1, B2 and N).
    The two samples are independent, so when each interval holds at confidence c this one holds with
    probability at least c² (conservative: both ends are taken at their extremes together).
    """
    f, t = _finite(found), _finite(total)
    if f is None or t is None or t <= 0:
        return HeadlineFigure(estimate=None, low=None, high=None, basis=basis, judged=int(judged))
    flo, fhi, tlo, thi = (_finite(v) for v in (found_low, found_high, total_low, total_high))
    if flo is None or fhi is None or tlo is None or thi is None or thi <= 0:
        return headline_figure(estimate=f / t, low=None, high=None, basis=basis, judged=judged)
    low = max(0.0, flo) / thi
    high = 1.0 if tlo <= 0 else fhi / tlo
    return headline_figure(estimate=f / t, low=low, high=high, basis=basis, judged=judged)
