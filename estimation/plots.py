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

PALETTE = ("#2456a6", "#c2571a", "#1e7a46", "#7b3fa0", "#a52a2a", "#5b6477", "#b08800", "#00838f")
FONT = 'font-family="system-ui, sans-serif"'


def _text(value) -> str:
    return escape(str(value), quote=True)


def _short(value, limit: int = 28) -> str:
    """Long user-given names would run over the drawing; the full name stays in the page's tables."""
    value = str(value)
    return value if len(value) <= limit else value[: limit - 1] + "…"


def _num(value) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _unit(value: float | None) -> float | None:
    """A proportion clipped to [0, 1] (None stays None)."""
    return None if value is None else min(1.0, max(0.0, value))


def _fmt(value: float, digits: int = 2) -> str:
    return f"{value:.{digits}f}"


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


def _legend_space(count: int) -> int:
    """Pixels above the plotting area for `count` legend lines, so the legend never covers data."""
    return 16 * count + 8


def _legend(items: Sequence[tuple[str, str]], *, x: float, y: float) -> list[str]:
    parts = []
    for i, (label, color) in enumerate(items):
        yy = y + i * 16
        parts.append(f'<rect x="{x:.1f}" y="{yy - 9:.1f}" width="10" height="10" fill="{color}"/>')
        parts.append(f'<text x="{x + 14:.1f}" y="{yy:.1f}" font-size="11">{_text(label)}</text>')
    return parts


# --------------------------------------------------------------------------- precision–recall plane


def precision_recall_svg(report: dict, *, curves: dict[str, tuple[Sequence[float], Sequence[float]]] | None = None,
                         width: int = 520, height: int = 420) -> str:
    """Each classifier at (recall, precision) with its intervals as error bars.

    `curves` maps a classifier name to the (R, X) arrays of its seed 001 reference
    curve (estimation.stats.extrapolated_precision.reference_curve), computed by the caller.
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
    space = _legend_space(len(points))
    height += space
    frame = _Frame(width=width, height=height, x_range=(0, 1), y_range=(0, 1), top=16 + space)
    ticks = [i / 5 for i in range(6)]
    body = frame.axes(x_label="Recall", y_label="Precision", x_ticks=ticks, y_ticks=ticks)
    legend = []
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
    body += _legend(legend, x=frame.left, y=18)
    if curves:
        body.append(f'<text x="{width - frame.right}" y="18" text-anchor="end" font-size="10" fill="#5b6477">dashed: reference curves X(R; ρ, β), seed 001</text>')
    return _svg(width, height, "Classifiers on the precision–recall plane", body)


# --------------------------------------------------------------------------- recall over time


def recall_history_svg(series: Mapping[str, Sequence[Mapping[str, Any]]], *, width: int = 520,
                       height: int = 320) -> str:
    """Recall estimate (line) and interval (band) against judgments collected, one series per classifier.

    `series` maps a classifier name to points {"judgments", "estimate", "low", "high"}.
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
    min_j = min(row[0] for rows in clean.values() for row in rows)
    if max_j == min_j:
        min_j, max_j = 0.0, max(1.0, max_j)
    space = _legend_space(len(clean))
    height += space
    frame = _Frame(width=width, height=height, x_range=(min_j, max_j), y_range=(0, 1), top=16 + space)
    x_ticks = [min_j + (max_j - min_j) * i / 4 for i in range(5)]
    body = frame.axes(x_label="Judgments collected", y_label="Recall", x_ticks=x_ticks,
                      y_ticks=[i / 5 for i in range(6)], x_format=lambda v: f"{v:,.0f}")
    legend = []
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
    body += _legend(legend, x=frame.left, y=18)
    return _svg(width, height, "Recall estimate against judgments collected", body)


# --------------------------------------------------------------------------- regions


def regions_venn_svg(report: dict, *, width: int = 520, height: int = 300) -> str:
    """The pair's regions as two overlapping circles: |A1∖A2|, |A1∩A2|, |A2∖A1|, with judged counts."""
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
        f'<text x="{left_x - radius * 0.5:.1f}" y="{cy - radius - 6:.1f}" text-anchor="middle" font-size="12" fill="{PALETTE[0]}" font-weight="600">A1: {_text(_short(c1, 24))}</text>',
        f'<text x="{right_x + radius * 0.5:.1f}" y="{cy - radius - 6:.1f}" text-anchor="middle" font-size="12" fill="{PALETTE[1]}" font-weight="600">A2: {_text(_short(c2, 24))}</text>',
    ]
    body += caption(left_x - radius * 0.45, "B1")
    body += caption(width / 2, "A12")
    body += caption(right_x + radius * 0.45, "B2")
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
        return empty_svg("No posterior yet: it needs judged documents in the pair's regions.",
                         title="Posterior distribution of recall")
    densities = []
    for key, data in series:
        counts = [float(c) for c in data.get("counts") or []]
        total = sum(counts) or 1.0
        densities.append((key, [c / total for c in counts]))
    top = max((max(d) for _, d in densities if d), default=1.0) or 1.0
    space = _legend_space(len(densities))
    height += space
    frame = _Frame(width=width, height=height, x_range=(float(edges[0]), float(edges[-1])), y_range=(0, top * 1.1),
                   top=16 + space)
    body = frame.axes(x_label="Recall", y_label="Share of draws", x_ticks=[i / 5 for i in range(6)],
                      y_ticks=[top * 1.1 * i / 4 for i in range(5)], y_format=lambda v: f"{v:.2f}")
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
    body += _legend(legend, x=frame.left, y=18)
    return _svg(width, height, "Posterior distribution of recall", body)
