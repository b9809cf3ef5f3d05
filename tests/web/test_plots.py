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
