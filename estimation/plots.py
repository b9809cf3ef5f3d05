"""Server-side SVG plots of a topic report: pure functions from report dicts to SVG strings.

No JavaScript chart library: the SVG is inline in the page, works offline and
prints. Every piece of text that reaches the SVG (classifier names come from
users) goes through `_text`, which escapes it; numbers are formatted by us.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from annotation.models import REGION_NAMES
from core.numbers import finite_or_none, percent_text
from estimation.stats.cost_curve import cost_against_prevalence
from estimation.stats.planning import precision_guess_from_pilot

PALETTE = ("#2456a6", "#c2571a", "#1e7a46", "#7b3fa0", "#a52a2a", "#5b6477", "#b08800", "#00838f")
FONT = 'font-family="system-ui, sans-serif"'


def _text(value) -> str:
    return escape(str(value), quote=True)


def _short(value, limit: int = 28) -> str:
    """Long user-given names would run over the drawing; the full name stays in the page's tables."""
    value = str(value)
    return value if len(value) <= limit else value[: limit - 1] + "…"


_num = finite_or_none


def _unit(value: float | None) -> float | None:
    """A proportion clipped to [0, 1] (None stays None)."""
    return None if value is None else min(1.0, max(0.0, value))


def _fmt(value: float, digits: int = 2) -> str:
    return f"{value:.{digits}f}"


def nice_step(span: float, count: int = 5) -> float:
    """The 1, 2 or 5 × 10^k step that cuts `span` into about `count` intervals (never fewer than count // 2)."""
    if not math.isfinite(span) or span <= 0:
        return 1.0
    raw = span / max(1, count)
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if factor * power >= raw - 1e-12 * power:
            return factor * power
    return 10 * power


def nice_axis(low: float, high: float, *, count: int = 5, cap: float | None = None) -> tuple[float, float, list[float]]:
    """(axis low, axis high, ticks): ticks at multiples of a 1/2/5×10^k step, the axis running from the last tick at
    or below `low` to the first at or above `high`; with `cap` the axis never runs past it (a share stops at 1)."""
    if high <= low:
        high = low + 1
    step = nice_step(high - low, count)
    start = round(math.floor(low / step + 1e-9) * step, 12)
    end = round(math.ceil(high / step - 1e-9) * step, 12)
    if cap is not None and end > cap:
        end = cap
    ticks = []
    i = 0
    while start + i * step <= end + step * 1e-9:
        ticks.append(round(start + i * step, 12))
        i += 1
    if cap is not None and ticks[-1] < end - step * 1e-9:
        ticks.append(end)
    return start, end, ticks


def _tick_format(ticks: Sequence[float]):
    """A formatter printing each tick with as many decimals as the step needs (0.2 → "0.2", 500 → "500")."""
    step = min((b - a for a, b in zip(ticks, ticks[1:])), default=1.0)
    decimals = max(0, -math.floor(math.log10(step) + 1e-9)) if step > 0 else 0
    if decimals == 0:
        return lambda v: f"{v:,.0f}"
    return lambda v: f"{v:.{decimals}f}"


class _Frame:
    """A plotting area with margins; maps data coordinates to SVG pixels."""

    def __init__(self, *, width: int, height: int, x_range: tuple[float, float], y_range: tuple[float, float],
                 left: int = 52, right: int = 16, top: int = 16, bottom: int = 44):
        self.width, self.height = width, height
        self.left, self.right, self.top, self.bottom = left, right, top, bottom
        self.x0, self.x1 = x_range
        self.y0, self.y1 = y_range
        if self.x1 <= self.x0:
            self.x1 = self.x0 + 1
        if self.y1 <= self.y0:
            self.y1 = self.y0 + 1

    def x(self, value: float) -> float:
        span = self.width - self.left - self.right
        return self.left + (value - self.x0) / (self.x1 - self.x0) * span

    def y(self, value: float) -> float:
        span = self.height - self.top - self.bottom
        return self.height - self.bottom - (value - self.y0) / (self.y1 - self.y0) * span

    def axes(self, *, x_label: str, y_label: str, x_ticks: Sequence[float], y_ticks: Sequence[float],
             x_format=lambda v: _fmt(v, 1), y_format=lambda v: _fmt(v, 1)) -> list[str]:
        parts = []
        for tick in y_ticks:
            y = self.y(tick)
            parts.append(f'<line x1="{self.left}" y1="{y:.1f}" x2="{self.width - self.right}" y2="{y:.1f}" stroke="#e6e8ee"/>')
            parts.append(f'<text x="{self.left - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11" fill="#5b6477">{_text(y_format(tick))}</text>')
        for tick in x_ticks:
            x = self.x(tick)
            parts.append(f'<line x1="{x:.1f}" y1="{self.top}" x2="{x:.1f}" y2="{self.height - self.bottom}" stroke="#f0f1f5"/>')
            parts.append(f'<text x="{x:.1f}" y="{self.height - self.bottom + 16}" text-anchor="middle" font-size="11" fill="#5b6477">{_text(x_format(tick))}</text>')
        bottom = self.height - self.bottom
        parts.append(f'<line x1="{self.left}" y1="{bottom}" x2="{self.width - self.right}" y2="{bottom}" stroke="#1d2330"/>')
        parts.append(f'<line x1="{self.left}" y1="{self.top}" x2="{self.left}" y2="{bottom}" stroke="#1d2330"/>')
        parts.append(f'<text x="{(self.left + self.width - self.right) / 2:.1f}" y="{self.height - 8}" text-anchor="middle" font-size="12">{_text(x_label)}</text>')
        parts.append(f'<text transform="translate(14 {(self.top + bottom) / 2:.1f}) rotate(-90)" text-anchor="middle" font-size="12">{_text(y_label)}</text>')
        return parts


def _svg(width: int, height: int, title: str, body: Sequence[str]) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
            f'role="img" aria-label="{_text(title)}" {FONT}><title>{_text(title)}</title>' + "".join(body) + "</svg>")


def empty_svg(message: str, *, title: str = "No data", width: int = 520, height: int = 160) -> str:
    """A placeholder saying why there is no plot yet."""
    body = [f'<rect x="1" y="1" width="{width - 2}" height="{height - 2}" fill="#fafbfc" stroke="#d9dde5" stroke-dasharray="4 4"/>',
            f'<text x="{width / 2}" y="{height / 2 + 4}" text-anchor="middle" font-size="13" fill="#5b6477">{_text(message)}</text>']
    return _svg(width, height, title, body)


LEGEND_LINE = 16


def _legend_space(count: int) -> int:
    """Pixels above the plotting area for `count` legend lines, so the legend never covers data."""
    return LEGEND_LINE * count + 8


def _text_width(text: str, size: float = 11) -> float:
    """A generous estimate of the drawn width of `text` (0.62 em per character): legend boxes are laid out with it."""
    return len(text) * size * 0.62


def _fit(label: str, room: float, size: float = 11) -> str:
    """`label` cut with "…" so that its estimated width fits in `room` pixels."""
    if _text_width(label, size) <= room:
        return label
    keep = max(1, int(room / (size * 0.62)) - 1)
    return label[:keep] + "…"


def _legend(items: Sequence[tuple[str, str] | tuple[str, str, str]], *, x: float, y: float,
            max_width: float | None = None) -> list[str]:
    """One legend entry per line above the plotting area (outside it, so it never covers data), each in a
    <g class="legend-item" data-box="x y width height"> giving the box it occupies; lines are LEGEND_LINE apart and
    boxes 12 px tall, so no two entries overlap. An item is (label, colour) for a filled square, or (label, colour,
    "dash") for a dashed line, "line" for a solid line, "none" for text alone."""
    parts = []
    for i, item in enumerate(items):
        label, color = item[0], item[1]
        kind = item[2] if len(item) > 2 else "box"
        if max_width is not None:
            label = _fit(label, max_width - 14)
        yy = y + i * LEGEND_LINE
        width = 14 + _text_width(label)
        parts.append(f'<g class="legend-item" data-box="{x:.1f} {yy - 10:.1f} {width:.1f} 12">')
        if kind == "box":
            parts.append(f'<rect x="{x:.1f}" y="{yy - 9:.1f}" width="10" height="10" fill="{color}"/>')
        elif kind in ("dash", "line"):
            dash = ' stroke-dasharray="4 3"' if kind == "dash" else ""
            parts.append(f'<line x1="{x:.1f}" y1="{yy - 4:.1f}" x2="{x + 10:.1f}" y2="{yy - 4:.1f}" stroke="{color}" stroke-width="2"{dash}/>')
        parts.append(f'<text x="{x + 14:.1f}" y="{yy:.1f}" font-size="11">{_text(label)}</text></g>')
    return parts


TARGET_COLOR = "#a52a2a"


# --------------------------------------------------------------------------- precision–recall plane


def precision_recall_svg(report: dict, *, curves: dict[str, tuple[Sequence[float], Sequence[float]]] | None = None,
                         target: float | None = None, width: int = 520, height: int = 420) -> str:
    """Each classifier at (recall, precision) with its intervals as error bars.

    `curves` maps a classifier name to the (R, X) arrays of its seed 001 reference
    curve (estimation.stats.extrapolated_precision.reference_curve), computed by the caller. `target`: the topic's
    target recall, drawn as a vertical dashed line.
    """
    points = []
    for row in report.get("classifiers") or []:
        precision, recall = row.get("precision") or {}, row.get("recall") or {}
        p, r = _unit(_num(precision.get("estimate"))), _unit(_num(recall.get("estimate")))
        if p is None or r is None:
            continue
        # Clipped to [0, 1]: a stored report from before issue 11 could hold a recall above 1.
        points.append((row.get("name", ""), r, p, _unit(_num(recall.get("low"))), _unit(_num(recall.get("high"))),
                       _unit(_num(precision.get("low"))), _unit(_num(precision.get("high")))))
    if not points:
        return empty_svg("No classifier has both precision and recall estimates yet.", title="Precision and recall")
    target = _num(target)
    target = target if target is not None and 0 <= target <= 1 else None
    has_curves = bool(curves) and any(name in (curves or {}) for name, *_ in points)
    space = _legend_space(len(points) + (target is not None) + has_curves)
    height += space
    frame = _Frame(width=width, height=height, x_range=(0, 1), y_range=(0, 1), top=16 + space)
    _, _, ticks = nice_axis(0, 1)
    body = frame.axes(x_label="Recall", y_label="Precision", x_ticks=ticks, y_ticks=ticks)
    legend: list[tuple[str, str] | tuple[str, str, str]] = []
    if target is not None:
        tx = frame.x(target)
        body.append(f'<line class="target-line" x1="{tx:.1f}" y1="{frame.top}" x2="{tx:.1f}" y2="{frame.height - frame.bottom}" '
                    f'stroke="{TARGET_COLOR}" stroke-width="1.5" stroke-dasharray="6 4"/>')
    for i, (name, r, p, r_lo, r_hi, p_lo, p_hi) in enumerate(points):
        color = PALETTE[i % len(PALETTE)]
        curve = (curves or {}).get(name)
        if curve:
            xs, ys = curve
            path = " ".join(f"{'M' if j == 0 else 'L'}{frame.x(float(a)):.1f},{frame.y(min(1.0, max(0.0, float(b)))):.1f}"
                            for j, (a, b) in enumerate(zip(xs, ys)) if _num(a) is not None and _num(b) is not None)
            if path:
                body.append(f'<path d="{path}" fill="none" stroke="{color}" stroke-width="1.2" stroke-dasharray="5 4" opacity=".75"/>')
        cx, cy = frame.x(r), frame.y(p)
        if r_lo is not None and r_hi is not None:
            body.append(f'<line x1="{frame.x(max(0, r_lo)):.1f}" y1="{cy:.1f}" x2="{frame.x(min(1, r_hi)):.1f}" y2="{cy:.1f}" stroke="{color}" stroke-width="2"/>')
            for end in (r_lo, r_hi):
                xe = frame.x(min(1, max(0, end)))
                body.append(f'<line x1="{xe:.1f}" y1="{cy - 5:.1f}" x2="{xe:.1f}" y2="{cy + 5:.1f}" stroke="{color}" stroke-width="2"/>')
        if p_lo is not None and p_hi is not None:
            body.append(f'<line x1="{cx:.1f}" y1="{frame.y(max(0, p_lo)):.1f}" x2="{cx:.1f}" y2="{frame.y(min(1, p_hi)):.1f}" stroke="{color}" stroke-width="2"/>')
            for end in (p_lo, p_hi):
                ye = frame.y(min(1, max(0, end)))
                body.append(f'<line x1="{cx - 5:.1f}" y1="{ye:.1f}" x2="{cx + 5:.1f}" y2="{ye:.1f}" stroke="{color}" stroke-width="2"/>')
        body.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="5" fill="{color}" stroke="#fff" stroke-width="1.5">'
                    f'<title>{_text(name)}: recall {_fmt(r)}, precision {_fmt(p)}</title></circle>')
        legend.append((f"{_short(name)} (R {_fmt(r)}, P {_fmt(p)})", color))
    if target is not None:
        legend.append((f"target recall {_fmt(target)}", TARGET_COLOR, "dash"))
    if has_curves:
        legend.append(("reference curve through each point", "#5b6477", "dash"))
    body += _legend(legend, x=frame.left, y=18, max_width=width - frame.left - frame.right)
    return _svg(width, height, "Classifiers on the precision–recall plane", body)


# --------------------------------------------------------------------------- recall over time


def recall_history_svg(series: Mapping[str, Sequence[Mapping[str, Any]]], *, target: float | None = None,
                       certification_judgments: int | None = None, width: int = 520, height: int = 320) -> str:
    """Recall estimate (line) and interval (band) against judgments collected, one series per classifier.

    `series` maps a classifier name to points {"judgments", "estimate", "low", "high"} (estimation sample only:
    estimation.selectors.recall_history). `target` draws the target recall as a dashed line;
    `certification_judgments` are shown apart, as a legend line, never added to the judgments axis.
    """
    # (judgments, estimate, low, high); points without a finite judgments count or estimate are dropped.
    clean: dict[str, list[tuple[float, float, float | None, float | None]]] = {}
    for name, points in series.items():
        parsed: list[tuple[float, float, float | None, float | None]] = []
        for p in points:
            estimate = _unit(_num(p.get("estimate")))
            if _num(p.get("judgments")) is None or estimate is None:
                continue
            parsed.append((float(p["judgments"]), estimate, _unit(_num(p.get("low"))), _unit(_num(p.get("high")))))
        rows = sorted(parsed, key=lambda t: t[0])
        if rows:
            clean[name] = rows
    if not clean:
        return empty_svg("No estimate recorded yet: the history starts with the first judged documents.",
                         title="Recall over time")
    max_j = max(row[0] for rows in clean.values() for row in rows)
    x_low, x_high, x_ticks = nice_axis(0.0, max(1.0, max_j), count=5)
    target = _num(target)
    target = target if target is not None and 0 <= target <= 1 else None
    certification = int(_num(certification_judgments) or 0)
    space = _legend_space(len(clean) + (target is not None) + (certification > 0))
    height += space
    frame = _Frame(width=width, height=height, x_range=(x_low, x_high), y_range=(0, 1), top=16 + space)
    _, _, y_ticks = nice_axis(0, 1)
    body = frame.axes(x_label="Judgments collected (estimation sample)", y_label="Recall", x_ticks=x_ticks,
                      y_ticks=y_ticks, x_format=_tick_format(x_ticks))
    legend: list[tuple[str, str] | tuple[str, str, str]] = []
    if target is not None:
        ty = frame.y(target)
        body.append(f'<line class="target-line" x1="{frame.left}" y1="{ty:.1f}" x2="{width - frame.right}" y2="{ty:.1f}" '
                    f'stroke="{TARGET_COLOR}" stroke-width="1.5" stroke-dasharray="6 4"/>')
    for i, (name, rows) in enumerate(clean.items()):
        color = PALETTE[i % len(PALETTE)]
        banded = [(j, lo, hi) for j, _, lo, hi in rows if lo is not None and hi is not None]
        if len(banded) >= 2:
            upper = [f"{frame.x(j):.1f},{frame.y(min(1, hi)):.1f}" for j, _, hi in banded]
            lower = [f"{frame.x(j):.1f},{frame.y(max(0, lo)):.1f}" for j, lo, _ in reversed(banded)]
            body.append(f'<polygon points="{" ".join(upper + lower)}" fill="{color}" opacity=".15"/>')
        elif len(banded) == 1:
            j, lo, hi = banded[0]
            body.append(f'<line x1="{frame.x(j):.1f}" y1="{frame.y(max(0, lo)):.1f}" x2="{frame.x(j):.1f}" y2="{frame.y(min(1, hi)):.1f}" stroke="{color}" stroke-width="2"/>')
        line = " ".join(f"{frame.x(j):.1f},{frame.y(min(1, max(0, e))):.1f}" for j, e, _, _ in rows)
        body.append(f'<polyline points="{line}" fill="none" stroke="{color}" stroke-width="2"/>')
        for j, e, _, _ in rows[-1:]:
            body.append(f'<circle cx="{frame.x(j):.1f}" cy="{frame.y(min(1, max(0, e))):.1f}" r="3.5" fill="{color}"/>')
        legend.append((f"{_short(name)} (latest {_fmt(rows[-1][1])})", color))
    if target is not None:
        legend.append((f"target recall {_fmt(target)}", TARGET_COLOR, "dash"))
    if certification > 0:
        legend.append((f"certification: {certification:,} judgments counted apart, not in this history",
                       "#5b6477", "none"))
    body += _legend(legend, x=frame.left, y=18, max_width=width - frame.left - frame.right)
    return _svg(width, height, "Recall estimate against judgments collected", body)


# --------------------------------------------------------------------------- regions


def regions_venn_svg(report: dict, *, width: int = 520, height: int = 300) -> str:
    """The pair's regions as two overlapping circles: first classifier only, both classifiers, second classifier only
    (|A1∖A2|, |A1∩A2|, |A2∖A1|), with judged counts."""
    regions = {row.get("name"): row for row in report.get("regions") or []}
    if not all(key in regions for key in ("A12", "B1", "B2")):
        return empty_svg("The topic has no classifier pair yet.", title="Regions of the pair")
    pair = report.get("pair") or {}
    c1, c2 = pair.get("c1", "C1"), pair.get("c2", "C2")
    cy, radius = height / 2 + 6, min(width, height) * 0.34
    left_x, right_x = width / 2 - radius * 0.55, width / 2 + radius * 0.55

    def caption(x: float, key: str, anchor: str = "middle") -> list[str]:
        row = regions[key]
        size = int(_num(row.get("size")) or 0)
        judged = int(_num(row.get("judged")) or 0)
        relevant = _num(row.get("relevant"))
        rel = f"{relevant:,.0f}" if relevant is not None and float(relevant).is_integer() else (f"{relevant:,.1f}" if relevant is not None else "—")
        return [f'<text x="{x:.1f}" y="{cy - 4:.1f}" text-anchor="{anchor}" font-size="16" font-weight="700">{size:,}</text>',
                f'<text x="{x:.1f}" y="{cy + 12:.1f}" text-anchor="{anchor}" font-size="10" fill="#5b6477">{judged:,} judged</text>',
                f'<text x="{x:.1f}" y="{cy + 24:.1f}" text-anchor="{anchor}" font-size="10" fill="#5b6477">{_text(rel)} relevant</text>']

    body = [
        f'<circle cx="{left_x:.1f}" cy="{cy:.1f}" r="{radius:.1f}" fill="{PALETTE[0]}" fill-opacity=".18" stroke="{PALETTE[0]}" stroke-width="2"/>',
        f'<circle cx="{right_x:.1f}" cy="{cy:.1f}" r="{radius:.1f}" fill="{PALETTE[1]}" fill-opacity=".18" stroke="{PALETTE[1]}" stroke-width="2"/>',
        f'<text x="{left_x - radius * 0.5:.1f}" y="{cy - radius - 6:.1f}" text-anchor="middle" font-size="12" fill="{PALETTE[0]}" font-weight="600">{_text(_short(c1, 24))}</text>',
        f'<text x="{right_x + radius * 0.5:.1f}" y="{cy - radius - 6:.1f}" text-anchor="middle" font-size="12" fill="{PALETTE[1]}" font-weight="600">{_text(_short(c2, 24))}</text>',
    ]
    body += caption(left_x - radius * 0.4, "B1")
    body += caption(width / 2, "A12")
    body += caption(right_x + radius * 0.4, "B2")
    # The regions' one plain name (annotation.models.REGION_NAMES, as on every page, with the classifier's name as the
    # pages give it: "found only by <name>") under their counts, on two lines to fit inside the circles.
    for x, key, who in ((left_x - radius * 0.4, "B1", c1), (width / 2, "A12", None), (right_x + radius * 0.4, "B2", c2)):
        lines = ["found only by", _short(str(who), 16)] if who else [REGION_NAMES[key]]
        for offset, line in enumerate(lines):
            body.append(f'<text x="{x:.1f}" y="{cy + 40 + 11 * offset:.1f}" text-anchor="middle" font-size="9" '
                        f'font-style="italic" fill="#5b6477">{_text(line)}</text>')
    corpus = _num(report.get("corpus_size"))
    if corpus is not None:
        body.append(f'<text x="{width - 8}" y="{height - 8}" text-anchor="end" font-size="11" fill="#5b6477">corpus: {int(corpus):,} documents</text>')
    return _svg(width, height, "Regions of the classifier pair", body)


# --------------------------------------------------------------------------- posterior


def posterior_histogram_svg(report: dict, *, width: int = 520, height: int = 300) -> str:
    """Histogram of the posterior draws of each classifier's recall (report["posterior"])."""
    posterior = report.get("posterior") or {}
    edges = posterior.get("edges") or []
    pair = report.get("pair") or {}
    names = {"C1": pair.get("c1", "C1"), "C2": pair.get("c2", "C2")}
    series = [(key, posterior[key]) for key in ("C1", "C2") if isinstance(posterior.get(key), dict)]
    if len(edges) < 2 or not series:
        return empty_svg("Not yet: it needs judged documents in the pair's regions.",
                         title="How plausible each recall is")
    densities = []
    for key, data in series:
        counts = [float(c) for c in data.get("counts") or []]
        total = sum(counts) or 1.0
        densities.append((key, [c / total for c in counts]))
    top = max((max(d) for _, d in densities if d), default=1.0) or 1.0
    space = _legend_space(len(densities))
    height += space
    # A share never runs past 1: nice ticks up to the tallest bar, capped at 1.
    y_low, y_high, y_ticks = nice_axis(0.0, min(1.0, top), count=5, cap=1.0)
    x_low, x_high, x_ticks = nice_axis(max(0.0, float(edges[0])), min(1.0, float(edges[-1])), cap=1.0)
    frame = _Frame(width=width, height=height, x_range=(x_low, x_high), y_range=(y_low, y_high), top=16 + space)
    body = frame.axes(x_label="Recall", y_label="Share of draws", x_ticks=x_ticks,
                      y_ticks=y_ticks, x_format=_tick_format(x_ticks), y_format=_tick_format(y_ticks))
    legend = []
    for i, (key, density) in enumerate(densities):
        color = PALETTE[i % len(PALETTE)]
        for j, value in enumerate(density[: len(edges) - 1]):
            if value <= 0:
                continue
            x0, x1 = frame.x(float(edges[j])), frame.x(float(edges[j + 1]))
            y = frame.y(value)
            body.append(f'<rect x="{x0:.1f}" y="{y:.1f}" width="{max(0.5, x1 - x0 - 0.5):.1f}" '
                        f'height="{frame.y(0) - y:.1f}" fill="{color}" fill-opacity=".45"/>')
        legend.append((_short(names[key]), color))
    body += _legend(legend, x=frame.left, y=18, max_width=width - frame.left - frame.right)
    return _svg(width, height, "How plausible each recall is", body)


# --------------------------------------------------------------------------- cost against prevalence (seed 000 Fig. 1)


def cost_curve_from_report(report: dict, *, half_width: float = 0.05) -> dict | None:
    """The topic's cost curve (estimation.stats.cost_curve.cost_against_prevalence, as a dict) from a report's
    regions, or None when the report lacks what it needs (the pair's three regions, each judged, and the corpus size).

    Precision guesses are the Jeffreys means of the judged regions (planning.precision_guess_from_pilot), the
    half-width the paper's ±0.05, the confidence the report's own.
    """
    regions = {row.get("name"): row for row in report.get("regions") or []}
    corpus = _num(report.get("corpus_size"))
    if corpus is None or not all(key in regions for key in ("A12", "B1", "B2")):
        return None
    sizes, guesses = {}, {}
    for key in ("A12", "B1", "B2"):
        row = regions[key]
        size, judged, relevant = _num(row.get("size")), _num(row.get("judged")), _num(row.get("relevant"))
        if size is None or judged is None or relevant is None or (size > 0 and judged <= 0):
            return None
        sizes[key] = int(size)
        guesses[key] = precision_guess_from_pilot(relevant=relevant, judged=int(judged)) if judged else 0.5
    confidence = _num((report.get("parameters") or {}).get("confidence")) or 0.95
    try:
        curve = cost_against_prevalence(
            size_a12=sizes["A12"], size_b1=sizes["B1"], size_b2=sizes["B2"], p12=guesses["A12"],
            p_b1=guesses["B1"], p_b2=guesses["B2"], corpus_size=int(corpus), half_width=half_width,
            confidence=confidence)
    except ValueError:  # a pair that cannot carry an estimate (no overlap, corpus too small): no curve
        return None
    return curve.as_dict()


COST_SERIES = (("uniform", "uniform sample of the corpus", "#a52a2a", "line"),
               ("paper_design", "the original method's samples", PALETTE[1], "dash"),
               ("stratified", "this product's pair samples", PALETTE[0], "line"))


def _decade(value: float) -> str:
    """10^k as plain digits: 0.0001, 0.01, 1, 1,000, 100,000."""
    return f"{value:,.0f}" if value >= 1 else f"{value:.{max(0, -math.floor(math.log10(value) + 1e-9))}f}"


def cost_curve_svg(curve: Mapping[str, Any] | None, *, width: int = 520, height: int = 320) -> str:
    """Judgments needed against prevalence for uniform sampling, the paper's pair design and the stratified pair
    design (seed 000 Fig. 1 and Sec. 7.4), the topic's own prevalence marked.

    `curve` is estimation.stats.cost_curve.CostCurve.as_dict() (cost_curve_from_report). Both axes are logarithmic,
    ticks at whole powers of ten: the uniform cost grows as 1/prevalence, which a linear axis would squash into its
    corner. Prevalence is a share, so its axis stops at 1.
    """
    points = [p for p in (curve or {}).get("points") or [] if (_num(p.get("prevalence")) or 0) > 0]
    topic = (curve or {}).get("topic") or {}
    if not points or _num(topic.get("prevalence")) is None:
        return empty_svg("No cost curve yet: it needs judged documents in each of the pair's three regions.",
                         title="Judgments needed against prevalence")
    values = [_num(p.get(key)) for p in points + [topic] for key, *_ in COST_SERIES]
    positive = [v for v in values if v is not None and v > 0]
    prevalences = [float(p["prevalence"]) for p in points] + [float(topic["prevalence"])]
    x_low = math.floor(math.log10(min(prevalences)) + 1e-9)
    y_low = math.floor(math.log10(min(positive)) + 1e-9) if positive else 0
    y_high = math.ceil(math.log10(max(positive)) - 1e-9) if positive else 1
    y_high = max(y_high, y_low + 1)
    space = _legend_space(len(COST_SERIES) + 1)
    height += space
    frame = _Frame(width=width, height=height, x_range=(x_low, 0), y_range=(y_low, y_high), top=16 + space, left=64)
    x_ticks = list(range(x_low, 1))
    y_ticks = list(range(y_low, y_high + 1))
    body = frame.axes(x_label="Prevalence of the topic (share of the corpus, log scale)",
                      y_label="Documents to judge (log scale)", x_ticks=x_ticks, y_ticks=y_ticks,
                      x_format=lambda v: _decade(10.0 ** (v + 2)) + "%", y_format=lambda v: _decade(10.0 ** v))
    legend: list[tuple[str, str] | tuple[str, str, str]] = []
    for key, label, color, kind in COST_SERIES:
        coords = [(math.log10(float(p["prevalence"])), math.log10(v)) for p in points
                  if (v := _num(p.get(key))) is not None and v > 0]
        if not coords:
            continue
        dash = ' stroke-dasharray="6 4"' if kind == "dash" else ""
        line = " ".join(f"{frame.x(x):.1f},{frame.y(y):.1f}" for x, y in coords)
        body.append(f'<polyline class="cost-{key}" points="{line}" fill="none" stroke="{color}" stroke-width="2"{dash}/>')
        legend.append((label, color, kind))
        v = _num(topic.get(key))
        if v is not None and v > 0:
            cx, cy = frame.x(math.log10(float(topic["prevalence"]))), frame.y(math.log10(v))
            body.append(f'<circle class="cost-topic" cx="{cx:.1f}" cy="{cy:.1f}" r="4.5" fill="{color}" stroke="#fff" '
                        f'stroke-width="1.5"><title>This topic: {_text(label)}, {v:,.0f} documents</title></circle>')
    tx = frame.x(math.log10(float(topic["prevalence"])))
    body.append(f'<line class="topic-prevalence" x1="{tx:.1f}" y1="{frame.top}" x2="{tx:.1f}" '
                f'y2="{frame.height - frame.bottom}" stroke="#5b6477" stroke-width="1.2" stroke-dasharray="2 3"/>')
    legend.append((f"this topic: prevalence {percent_text(float(topic['prevalence']))} (dots)", "#5b6477", "dash"))
    body += _legend(legend, x=frame.left, y=18, max_width=width - frame.left - frame.right)
    return _svg(width, height, "Judgments needed against prevalence", body)


# --------------------------------------------------------------------------- topic sets (seed 002)


def _heat(share: float) -> str:
    """White → PALETTE[0] blue by the share of the row (0..1)."""
    share = min(1.0, max(0.0, share))
    low, high = (255, 255, 255), (0x24, 0x56, 0xA6)
    r, g, b = (round(lo + (hi - lo) * share) for lo, hi in zip(low, high, strict=True))
    return f"#{r:02x}{g:02x}{b:02x}"


def confusion_heatmap_svg(router: Mapping[str, Any], class_names: Sequence[str]) -> str:
    """The confusion matrix of a router against the judged labels as a heat map (seed 002, Figure 3).

    Rows are the true classes (majority labels), columns the router's classes, numbered as the rows;
    each cell is shaded by its share of the row (the row's recall on the diagonal) and shows its count.
    """
    matrix = [[_num(x) or 0.0 for x in row] for row in router.get("confusion") or []]
    title = f"Confusion matrix of {_short(router.get('name', 'the router'), 40)}"
    size = len(matrix)
    if size < 2 or not any(any(row) for row in matrix):
        return empty_svg("No judged document yet.", title=title)
    cell = max(22, min(44, 440 // size))
    label_width = 170
    top, left = 40, label_width + 8
    width = max(440, left + cell * size + 16)
    height = top + cell * size + 40
    body = [f'<text x="8" y="14" font-size="12">{_text("Columns: the router’s class, numbered as the rows")}'
            f'</text>']
    for k in range(size):
        x = left + k * cell + cell / 2
        body.append(f'<text x="{x:.1f}" y="{top - 8}" text-anchor="middle" font-size="11" fill="#5b6477">{k}</text>')
    for j, row in enumerate(matrix):
        y = top + j * cell
        name = str(class_names[j]) if j < len(class_names) else f"Class {j}"
        body.append(f'<text x="{left - 6}" y="{y + cell / 2 + 4:.1f}" text-anchor="end" font-size="11">'
                    f'{_text(_fit(f"{j} {name}", label_width - 8))}</text>')
        total = sum(row) or 1.0
        for k, count in enumerate(row):
            share = count / total
            fill = _heat(share)
            x = left + k * cell
            border = ' stroke="#1d2330" stroke-width="1.5"' if j == k else ' stroke="#ffffff"'
            tip = _text(f"true {name}, routed to {k}: {count:g} ({share:.0%} of the row)")
            body.append(f'<rect class="cell" data-row="{j}" data-col="{k}" x="{x}" y="{y}" width="{cell}" '
                        f'height="{cell}" fill="{fill}"{border}><title>{tip}</title></rect>')
            if count:
                color = "#ffffff" if share > 0.55 else "#1d2330"
                label = f"{count:.0f}" if float(count).is_integer() else f"{count:.1f}"
                body.append(f'<text x="{x + cell / 2:.1f}" y="{y + cell / 2 + 4:.1f}" text-anchor="middle" '
                            f'font-size="{10 if cell < 30 else 11}" fill="{color}">{_text(label)}</text>')
    body.append(f'<text x="8" y="{height - 12}" font-size="11" '
                f'fill="#5b6477">{_text("Rows: the true class (workers’ majority). Shade: share of the row.")}</text>')
    return _svg(width, height, title, body)


def f1_density_svg(router: Mapping[str, Any], *, reference: float | None = None, width: int = 520,
                   height: int = 280) -> str:
    """Posterior densities of micro- and macro-F1 (seed 002, Figure 4), with the reference value as a line."""
    posterior = router.get("posterior") or {}
    title = f"How plausible each average F1 is, {_short(router.get('name', 'router'), 40)}"
    series = []
    for i, average in enumerate(("micro", "macro")):
        density = (posterior.get(average) or {}).get("density") or {}
        raw_edges = [_num(x) for x in density.get("edges") or []]
        edges = [float(e) for e in raw_edges if e is not None]
        heights = [_num(x) or 0.0 for x in density.get("heights") or []]
        if len(edges) >= 2 and len(edges) == len(raw_edges) and len(heights) == len(edges) - 1:
            series.append((f"{average}-F1", PALETTE[i], edges, heights))
    if not series:
        return empty_svg("Not yet: it needs judged documents.", title=title)
    low = min(s[2][0] for s in series)
    high = max(s[2][-1] for s in series)
    if reference is not None and 0 <= reference <= 1:
        low, high = min(low, reference), max(high, reference)
    top_value = max(max(s[3]) for s in series) or 1.0
    space = _legend_space(len(series) + (1 if reference is not None else 0))
    height += space
    x_low, x_high, x_ticks = nice_axis(max(0.0, low), min(1.0, high), cap=1.0)
    y_low, y_high, y_ticks = nice_axis(0.0, top_value, count=4)
    frame = _Frame(width=width, height=height, x_range=(x_low, x_high), y_range=(y_low, y_high), top=16 + space)
    body = frame.axes(x_label="F1", y_label="Density", x_ticks=x_ticks, y_ticks=y_ticks,
                      x_format=_tick_format(x_ticks), y_format=_tick_format(y_ticks))
    legend: list[tuple[str, str] | tuple[str, str, str]] = []
    for label, color, xs, heights in series:
        points = [f"{frame.x(xs[0]):.1f},{frame.y(0):.1f}"]
        for j, value in enumerate(heights):
            middle = (xs[j] + xs[j + 1]) / 2
            points.append(f"{frame.x(middle):.1f},{frame.y(value):.1f}")
        points.append(f"{frame.x(xs[-1]):.1f},{frame.y(0):.1f}")
        body.append(f'<polyline class="density" points="{" ".join(points)}" fill="{color}" fill-opacity=".18" '
                    f'stroke="{color}" stroke-width="1.5"/>')
        legend.append((label, color, "line"))
    if reference is not None and x_low <= reference <= x_high:
        x = frame.x(reference)
        body.append(f'<line class="reference" x1="{x:.1f}" y1="{frame.y(y_high):.1f}" x2="{x:.1f}" '
                    f'y2="{frame.y(0):.1f}" stroke="{TARGET_COLOR}" stroke-dasharray="4 3"/>')
        legend.append((f"reference {reference:g}", TARGET_COLOR, "dash"))
    body += _legend(legend, x=frame.left, y=18, max_width=width - frame.left - frame.right)
    return _svg(width, height, title, body)
