"""estimation.plots: well-formed SVG, points where the numbers say, hostile names escaped, empty states."""
from __future__ import annotations

import xml.etree.ElementTree as ET

from estimation import plots

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = '<script>alert(1)</script>" onmouseover="alert(1)'


def _report(**overrides):
    report = {
        "corpus_size": 10000,
        "pair": {"c1": "kw " + HOSTILE, "c2": "model"},
        "classifiers": [
            {"name": "kw " + HOSTILE, "precision": {"estimate": 0.8, "low": 0.7, "high": 0.9},
             "recall": {"estimate": 0.5, "low": 0.4, "high": 0.6}},
            {"name": "model", "precision": {"estimate": 0.4, "low": 0.3, "high": 0.5},
             "recall": {"estimate": 0.75, "low": 0.7, "high": 0.8}},
        ],
        "regions": [{"name": "A12", "size": 120, "judged": 30, "relevant": 27},
                    {"name": "B1", "size": 340, "judged": 40, "relevant": 10},
                    {"name": "B2", "size": 560, "judged": 40, "relevant": 4}],
        "posterior": {"edges": [i / 4 for i in range(5)], "C1": {"counts": [0, 10, 80, 10]},
                      "C2": {"counts": [0, 0, 20, 80]}},
    }
    report.update(overrides)
    return report


def _parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)  # raises on malformed XML, e.g. an unescaped name


def test_precision_recall_points_sit_at_their_estimates_with_error_bars():
    svg = plots.precision_recall_svg(_report())
    root = _parse(svg)
    circles = root.findall(f".//{SVG}circle")
    assert len(circles) == 2
    # Frame: x from 52 to 520-16; y from the bottom (height-44) up to the top margin, 16 plus the legend's
    # 16 px per line + 8 above the plot (two lines: 40); the drawing grows by the legend's height.
    height, top = 420 + 40, 16 + 40
    x = 52 + 0.5 * (520 - 52 - 16)
    y = height - 44 - 0.8 * (height - 44 - top)
    assert abs(float(circles[0].get("cx")) - x) < 0.2 and abs(float(circles[0].get("cy")) - y) < 0.2
    # Horizontal error bar of the first classifier spans recall 0.4..0.6.
    xs = {round(float(line.get("x1")), 1) for line in root.findall(f".//{SVG}line")}
    assert round(52 + 0.4 * 452, 1) in xs and round(52 + 0.6 * 452, 1) in xs


def test_reference_curves_are_drawn_when_given():
    svg = plots.precision_recall_svg(_report(), curves={"model": ([0, 0.5, 1], [1, 0.6, 0.1])})
    paths = _parse(svg).findall(f".//{SVG}path")
    assert len(paths) == 1 and paths[0].get("d").startswith("M52.0,")


def test_hostile_names_are_escaped_in_every_plot():
    history = {"kw " + HOSTILE: [{"judgments": 10, "estimate": 0.5, "low": 0.3, "high": 0.7},
                                 {"judgments": 40, "estimate": 0.55, "low": 0.45, "high": 0.65}]}
    for svg in (plots.precision_recall_svg(_report()), plots.regions_venn_svg(_report()),
                plots.posterior_histogram_svg(_report()), plots.recall_history_svg(history)):
        root = _parse(svg)
        assert "<script" not in svg
        assert all(not attr.startswith("on") for el in root.iter() for attr in el.attrib)


def test_venn_shows_region_sizes_and_judged_counts():
    svg = plots.regions_venn_svg(_report())
    texts = [t.text for t in _parse(svg).iter(f"{SVG}text")]
    assert {"120", "340", "560"} <= set(texts)
    assert "30 judged" in texts and "27 relevant" in texts and "corpus: 10,000 documents" in texts
    # The regions carry the one plain name they have on every page, never A1/A2 codes.
    # B1 and B2 as "found only by <name>" on two lines (the name shortened to fit in its circle).
    assert texts.count("found only by") == 2 and "found by both" in texts and "model" in texts
    assert not any(t and ("A1" in t or "A2" in t) for t in texts)


def test_posterior_bars_are_proportional_to_counts():
    root = _parse(plots.posterior_histogram_svg(_report()))
    heights = sorted(float(r.get("height")) for r in root.findall(f".//{SVG}rect") if r.get("fill-opacity") == ".45")
    # C1 bars 10, 80, 10 and C2 bars 20, 80 (shares of 100): the two 80s are equal and tallest.
    assert abs(heights[-1] - heights[-2]) < 0.2 and abs(heights[-1] / heights[0] - 8) < 0.1


def test_history_draws_a_band_and_a_line_per_classifier():
    series = {"a": [{"judgments": j, "estimate": 0.5, "low": 0.4, "high": 0.6} for j in (10, 20, 30)],
              "b": [{"judgments": 20, "estimate": 0.7, "low": None, "high": None}]}
    root = _parse(plots.recall_history_svg(series))
    assert len(root.findall(f".//{SVG}polygon")) == 1 and len(root.findall(f".//{SVG}polyline")) == 2


def test_empty_reports_give_placeholders_not_errors():
    empty = {"classifiers": [], "regions": [], "posterior": None}
    for svg in (plots.precision_recall_svg(empty), plots.regions_venn_svg(empty), plots.posterior_histogram_svg(empty),
                plots.recall_history_svg({})):
        root = _parse(svg)
        assert root.find(f"{SVG}title") is not None and "stroke-dasharray" in svg


def test_pages_load_nothing_from_other_sites():
    """Offline use: no template or static file refers to a CDN or any other host."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    offenders = []
    for folder in ("templates", "static"):
        for path in (root / folder).rglob("*"):
            if path.suffix in {".html", ".css", ".js"}:
                text = path.read_text(encoding="utf-8")
                for match in re.finditer(r"""(?:src|href|url)\s*[=(]\s*["']?(?:https?:)?//""", text):
                    offenders.append(f"{path.relative_to(root)}: {text[match.start():match.end() + 30]}")
    assert not offenders, offenders


# --------------------------------------------------------------------------- issue 12 item 10


def _tick_labels(root, *, anchor: str) -> list[str]:
    """Axis tick labels: y ticks are end-anchored, x ticks middle-anchored, both 11 px grey."""
    return [t.text for t in root.iter(f"{SVG}text") if t.get("text-anchor") == anchor and t.get("fill") == "#5b6477"
            and t.get("font-size") == "11"]


def _legend_boxes(root) -> list[tuple[float, ...]]:
    """(x, y, width, height) of each legend entry."""
    return [tuple(float(v) for v in g.get("data-box").split()) for g in root.iter(f"{SVG}g")
            if g.get("class") == "legend-item"]


def _plot_top(root) -> float:
    """The y of the top of the plotting area: the y axis runs from it down to the x axis."""
    axis = next(line for line in root.iter(f"{SVG}line")
                if line.get("stroke") == "#1d2330" and line.get("x1") == line.get("x2"))
    return float(axis.get("y1"))


def _intersect(a, b) -> bool:
    ax, ay, aw, ah = a
    bx, by, bw, bh = b
    return ax < bx + bw and bx < ax + aw and ay < by + bh and by < ay + ah


def test_nice_axis_uses_1_2_5_steps_and_covers_the_data():
    assert plots.nice_axis(0, 426) == (0, 500, [0, 100, 200, 300, 400, 500])
    assert plots.nice_axis(0, 37) == (0, 40, [0, 10, 20, 30, 40])
    assert plots.nice_axis(0, 1) == (0.0, 1.0, [0.0, 0.2, 0.4, 0.6, 0.8, 1.0])
    assert plots.nice_axis(0, 0.26, cap=1.0) == (0.0, 0.3, [0.0, 0.1, 0.2, 0.3])
    low, high, ticks = plots.nice_axis(0, 0.99, cap=1.0)
    assert high == 1.0 and ticks[-1] == 1.0  # a share axis stops at 1, never 1.04
    for span in (3, 17, 129, 426, 5_000, 123_456):
        step = plots.nice_step(span)
        mantissa = step / 10 ** __import__("math").floor(__import__("math").log10(step))
        assert round(mantissa, 9) in (1, 2, 5) and 2 <= span / step <= 5 + 1e-9


def test_history_ticks_are_round_numbers_from_zero():
    series = {"a": [{"judgments": j, "estimate": 0.5, "low": 0.4, "high": 0.6} for j in (30, 129, 228, 327, 426)]}
    root = _parse(plots.recall_history_svg(series))
    assert _tick_labels(root, anchor="middle") == ["0", "100", "200", "300", "400", "500"]
    assert _tick_labels(root, anchor="end") == ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"]


def test_posterior_share_axis_ends_at_a_nice_value_never_above_one():
    concentrated = _report(posterior={"edges": [i / 4 for i in range(5)], "C1": {"counts": [0, 0, 0, 100]},
                                      "C2": {"counts": [0, 0, 2, 98]}})
    root = _parse(plots.posterior_histogram_svg(concentrated))
    labels = _tick_labels(root, anchor="end")
    assert labels[0] == "0.0" and labels[-1] == "1.0" and all(float(v) <= 1 for v in labels)
    spread = _parse(plots.posterior_histogram_svg(_report()))
    assert _tick_labels(spread, anchor="end") == ["0.0", "0.2", "0.4", "0.6", "0.8"]
    assert _tick_labels(spread, anchor="middle") == ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"]


def test_recall_plots_draw_the_target_line_where_the_target_is():
    root = _parse(plots.precision_recall_svg(_report(), target=0.8))
    line = next(e for e in root.iter(f"{SVG}line") if e.get("class") == "target-line")
    assert float(line.get("x1")) == float(line.get("x2")) == round(52 + 0.8 * 452, 1)
    assert any(t.text == "target recall 0.80" for t in root.iter(f"{SVG}text"))
    series = {"a": [{"judgments": j, "estimate": 0.5, "low": 0.4, "high": 0.6} for j in (10, 20)]}
    root = _parse(plots.recall_history_svg(series, target=0.8))
    line = next(e for e in root.iter(f"{SVG}line") if e.get("class") == "target-line")
    top, bottom = _plot_top(root), float(line.get("y1"))
    axis_bottom = max(float(e.get("y1")) for e in root.iter(f"{SVG}line") if e.get("stroke") == "#1d2330")
    assert line.get("y1") == line.get("y2") and abs(bottom - (axis_bottom - 0.8 * (axis_bottom - top))) < 0.2
    assert not any(e.get("class") == "target-line" for e in _parse(plots.recall_history_svg(series)).iter(f"{SVG}line"))


def test_legends_sit_outside_the_plot_and_never_overlap():
    long = "a classifier with a rather long name indeed"
    report = _report(classifiers=[
        {"name": f"{long} {i}", "precision": {"estimate": 0.2 + i / 10, "low": 0.1, "high": 0.9},
         "recall": {"estimate": 0.3 + i / 10, "low": 0.2, "high": 0.95}} for i in range(5)])
    curves = {f"{long} {i}": ([0, 0.5, 1], [1, 0.6, 0.1]) for i in range(5)}
    history = {f"{long} {i}": [{"judgments": 10, "estimate": 0.5}, {"judgments": 90, "estimate": 0.6}] for i in range(3)}
    for svg in (plots.precision_recall_svg(report, curves=curves, target=0.8),
                plots.recall_history_svg(history, target=0.7, certification_judgments=25),
                plots.posterior_histogram_svg(_report())):
        root = _parse(svg)
        boxes = _legend_boxes(root)
        assert len(boxes) >= 2
        width = float(root.get("width"))
        top = _plot_top(root)
        for i, box in enumerate(boxes):
            x, y, w, h = box
            assert y + h <= top, "a legend entry covers the plotting area"
            assert x >= 0 and x + w <= width, "a legend entry runs off the drawing"
            for other in boxes[i + 1:]:
                assert not _intersect(box, other)
    pr = _parse(plots.precision_recall_svg(report, curves=curves, target=0.8))
    assert len(_legend_boxes(pr)) == 5 + 2  # five classifiers, the target, the reference curves
    # A label too long for the drawing is cut, not run off it.
    cut = _parse(plots.recall_history_svg({"x" * 200: [{"judgments": 1, "estimate": 0.5}]}))
    (x, _, w, _), = _legend_boxes(cut)
    assert x + w <= 520 - 16 and any("…" in (t.text or "") for t in cut.iter(f"{SVG}text"))
    fitted = plots._fit("y" * 200, 300)
    assert fitted.endswith("…") and plots._text_width(fitted) <= 300


def test_history_shows_certification_judgments_apart_from_the_axis():
    series = {"a": [{"judgments": j, "estimate": 0.5, "low": 0.4, "high": 0.6} for j in (10, 40)]}
    root = _parse(plots.recall_history_svg(series, certification_judgments=300))
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "certification: 300 judgments counted apart, not in this history" in texts
    assert _tick_labels(root, anchor="middle")[-1] == "40"  # the axis counts the estimation sample only
    plain = _parse(plots.recall_history_svg(series))
    assert not any("certification" in (t.text or "") for t in plain.iter(f"{SVG}text"))
