"""Cost against prevalence (seed 000 Fig. 1, Sec. 4.3 and 7.4): the paper's numbers, the topic on its curve,
and by simulation that each design's planned size reaches the half-width at prevalences the seed gives no number
for. Also the SVG of estimation.plots.cost_curve_svg."""
from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from estimation import plots
from estimation.stats.cost_curve import cost_against_prevalence
from estimation.stats.planning import plan_pair_sample

SVG = "{http://www.w3.org/2000/svg}"
TOPIC = dict(size_a12=5000, size_b1=3000, size_b2=20000, p12=0.9, p_b1=0.3, p_b2=0.1, corpus_size=2_000_000)


def _at(curve, prevalence):
    return next(p for p in curve.points if math.isclose(p.prevalence, prevalence))


def test_uniform_cost_is_the_papers_figure_1():
    # Seed 000 Sec. 4.3: "using a margin of error of 0.05, we calculate the number of samples necessary to be 384.
    # For a margin of error of 0.025, we require 1537 samples." Sec. 4.3.2: "If the topic occurs frequently, say
    # |T|/|U| = 0.1, then approximately 3840 documents would need to be labeled, at a cost of $190. For topics with
    # lower frequency of occurrence, say |T|/|U| <= 0.01, this cost becomes a prohibitive $1900."
    # The paper's s² = 0.25 is our worst case (recall 0.5); infinite corpus, as the paper's formula.
    curve = cost_against_prevalence(**TOPIC, prevalences=[0.01, 0.1, 0.999999], finite_population=False)
    assert _at(curve, 0.1).uniform_worst_case == 3842  # 1.96²·0.25/(0.05²·0.1) = 3841.6: "approximately 3840"
    assert round(_at(curve, 0.1).uniform_worst_case * 0.05, -1) == 190  # "$190" at $0.05 a document
    assert _at(curve, 0.01).uniform_worst_case == 38415  # the notes' 38,415; "$1900" = 38,000 at $0.05
    assert 1900 <= _at(curve, 0.01).uniform_worst_case * 0.05 < 1930
    assert _at(curve, 0.999999).uniform_worst_case == 385  # 384.15 rounded up: the paper's "384"
    narrow = cost_against_prevalence(**TOPIC, prevalences=[0.999999], half_width=0.025, finite_population=False)
    assert narrow.points[0].uniform_worst_case == 1537  # "For a margin of error of 0.025, we require 1537"


def test_uniform_cost_grows_as_one_over_prevalence_and_the_pair_far_more_slowly():
    curve = cost_against_prevalence(**TOPIC, finite_population=False)
    prevalences = [p.prevalence for p in curve.points]
    assert prevalences == sorted(prevalences) and len(prevalences) == 41
    assert prevalences[0] == pytest.approx(1e-4) and prevalences[-1] == pytest.approx(0.5)
    uniform = [p.uniform for p in curve.points]
    assert all(a >= b for a, b in zip(uniform, uniform[1:]))
    # n·π is constant for the uniform design (Fig. 1's hyperbola), up to rounding up.
    assert max(p.uniform * p.prevalence for p in curve.points) - min(p.uniform * p.prevalence for p in curve.points) < 1
    # Sec. 7.4: at prevalence 0.01 or less the pair is more than 10× cheaper, and the gap widens as π falls.
    rare = [p for p in curve.points if p.prevalence <= 0.01]
    assert all(p.uniform > 10 * p.stratified and p.uniform > 10 * p.paper_design for p in rare)
    gaps = [p.uniform / p.stratified for p in rare]
    assert gaps[0] > gaps[-1]
    # The stratified design never needs more than the paper's (notes §2: A12 lies inside A2).
    assert all(p.stratified <= p.paper_design for p in curve.points)


def test_the_topic_sits_on_its_own_curve_as_its_plan_says():
    curve = cost_against_prevalence(**TOPIC)
    t12, t1, t2 = 5000 * 0.9, 5000 * 0.9 + 3000 * 0.3, 5000 * 0.9 + 20000 * 0.1
    assert curve.topic_prevalence == pytest.approx(t1 * t2 / t12 / 2_000_000)  # n̂ = T1·T2/T12 (Sec. 6)
    plan = plan_pair_sample(size_a12=5000, size_b1=3000, size_b2=20000, p12=0.9, p_b1=0.3, p_b2=0.1,
                            prevalence=curve.topic_prevalence, corpus_size=2_000_000)
    assert curve.topic.stratified == plan.stratified_total
    assert curve.topic.paper_design == plan.paper_design_total
    assert curve.topic.uniform == plan.uniform_total
    assert curve.recall == pytest.approx(4500 / 6500)
    # The model rebuilt at the topic's prevalence gives the same plan as the topic's own regions.
    rebuilt = cost_against_prevalence(**TOPIC, prevalences=[curve.topic_prevalence])
    assert rebuilt.points[0].stratified == curve.topic.stratified
    assert rebuilt.points[0].paper_design == curve.topic.paper_design
    assert f"{plan.uniform_total:,}" in curve.summary and f"{plan.stratified_total:,}" in curve.summary


def _model_regions(prevalence):
    """The cost model's regions at `prevalence` (module docstring of estimation.stats.cost_curve)."""
    sizes, precision = {"A12": 5000, "B1": 3000, "B2": 20000}, {"A12": 0.9, "B1": 0.3, "B2": 0.1}
    universe = TOPIC["corpus_size"]
    relevant = {h: sizes[h] * precision[h] for h in sizes}
    total = (relevant["A12"] + relevant["B1"]) * (relevant["A12"] + relevant["B2"]) / relevant["A12"]
    t = prevalence * universe
    out = {}
    for h in sizes:
        rel = relevant[h] / total * t
        off = sizes[h] * (1 - precision[h]) / (universe - total) * (universe - t)
        out[h] = (rel + off, rel / (rel + off))
    return out


@pytest.mark.parametrize("prevalence", [0.0005, 0.02])
def test_planned_sizes_reach_the_half_width_by_simulation(prevalence):
    """At prevalences the seed prints no number for: draw each design's planned sample (without replacement, from
    the regions the cost model gives) many times and check that recall lands within ±0.05 of the truth about 95% of
    the time."""
    curve = cost_against_prevalence(**TOPIC, prevalences=[prevalence], min_per_region=0)
    point = curve.points[0]
    regions = {h: (round(size), round(size) * p) for h, (size, p) in _model_regions(prevalence).items()}
    good = {h: round(relevant) for h, (_, relevant) in regions.items()}
    size = {h: n for h, (n, _) in regions.items()}
    truth = good["A12"] / (good["A12"] + good["B2"])
    assert truth == pytest.approx(curve.recall, abs=1e-3)
    rng = np.random.default_rng(2026_13)
    runs = 4000

    def drawn(h, n, ngood=None, total=None):
        ngood = good[h] if ngood is None else ngood
        total = size[h] if total is None else total
        return rng.hypergeometric(ngood, total - ngood, n, runs) / n * total

    # Stratified: samples of A12 and B2 with the plan's allocation (planning.plan_pair_sample, target r1).
    plan = plan_pair_sample(size_a12=size["A12"], size_b1=size["B1"], size_b2=size["B2"],
                            p12=good["A12"] / size["A12"], p_b1=good["B1"] / size["B1"], p_b2=good["B2"] / size["B2"],
                            prevalence=prevalence, corpus_size=TOPIC["corpus_size"], min_per_region=0)
    assert plan.stratified_total == pytest.approx(point.stratified, rel=0.01)  # whole relevant counts here
    est12, estb2 = drawn("A12", plan.stratified["A12"]), drawn("B2", plan.stratified["B2"])
    within = np.mean(np.abs(est12 / (est12 + estb2) - truth) <= 0.05)
    assert 0.93 <= within <= 0.975

    # The paper's design: Eq. 1, r1 = p12·|A12| / (p2·|A2|), separate samples of A12 and A2.
    assert plan.paper_design_total == pytest.approx(point.paper_design, rel=0.01)
    eq1 = drawn("A12", plan.paper_design["A12"]) / np.maximum(
        drawn("A2", plan.paper_design["A2"], ngood=good["A12"] + good["B2"], total=size["A12"] + size["B2"]), 1)
    within = np.mean(np.abs(eq1 - truth) <= 0.05)
    assert 0.93 <= within <= 0.975

    # Uniform sampling of U (without replacement): n documents, about n·π relevant, recall a proportion among them.
    universe = TOPIC["corpus_size"]
    relevant = round(prevalence * universe)
    retrieved = round(truth * relevant)
    found = rng.hypergeometric(relevant, universe - relevant, point.uniform, runs)
    hits = np.array([rng.hypergeometric(retrieved, relevant - retrieved, f) if f else 0 for f in found])
    within = np.mean(np.abs(hits / np.maximum(found, 1) - truth) <= 0.05)
    assert 0.93 <= within <= 0.975


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="size_a12"):
        cost_against_prevalence(**{**TOPIC, "size_a12": 0})
    with pytest.raises(ValueError, match="p_b2"):
        cost_against_prevalence(**{**TOPIC, "p_b2": 0.0})
    with pytest.raises(ValueError, match="corpus_size"):
        cost_against_prevalence(**{**TOPIC, "corpus_size": 20000})
    with pytest.raises(ValueError, match="prevalence"):
        cost_against_prevalence(**TOPIC, prevalences=[0.0])


# --------------------------------------------------------------------------- the plot


HOSTILE = '<script>alert(1)</script>'


def _report():
    return {"corpus_size": 200_000, "parameters": {"confidence": 0.95},
            "pair": {"c1": HOSTILE, "c2": "b"},
            "regions": [{"name": "A12", "size": 500, "judged": 60, "relevant": 54},
                        {"name": "B1", "size": 300, "judged": 40, "relevant": 12},
                        {"name": "B2", "size": 2000, "judged": 60, "relevant": 6}]}


def test_cost_curve_svg_draws_three_designs_marks_the_topic_and_keeps_the_legend_outside():
    curve = plots.cost_curve_from_report(_report())
    assert curve is not None
    svg = plots.cost_curve_svg(curve)
    root = ET.fromstring(svg)
    lines = {p.get("class"): p for p in root.iter(f"{SVG}polyline")}
    assert set(lines) == {"cost-uniform", "cost-paper_design", "cost-stratified"}
    dots = [c for c in root.iter(f"{SVG}circle") if c.get("class") == "cost-topic"]
    assert len(dots) == 3
    marker = next(line for line in root.iter(f"{SVG}line") if line.get("class") == "topic-prevalence")
    # The marker is at the topic's prevalence on the log axis running from 10^x_low to 1.
    axis = next(line for line in root.iter(f"{SVG}line")
                if line.get("stroke") == "#1d2330" and line.get("y1") == line.get("y2"))
    left, right = float(axis.get("x1")), float(axis.get("x2"))
    x_low = math.floor(math.log10(curve["points"][0]["prevalence"]))
    expected = left + (math.log10(curve["topic_prevalence"]) - x_low) / (0 - x_low) * (right - left)
    assert float(marker.get("x1")) == pytest.approx(expected, abs=0.1)
    # x ticks are powers of ten ending at 100% (prevalence as the pages print it: a percentage, issue 26); the
    # legend sits above the plotting area.
    ticks = [t.text for t in root.iter(f"{SVG}text") if t.get("text-anchor") == "middle" and t.get("fill") == "#5b6477"]
    assert ticks[-1] == "100%" and ticks[-2] == "10%"
    top = float(next(line for line in root.iter(f"{SVG}line")
                     if line.get("stroke") == "#1d2330" and line.get("x1") == line.get("x2")).get("y1"))
    boxes = [tuple(float(v) for v in g.get("data-box").split()) for g in root.iter(f"{SVG}g")
             if g.get("class") == "legend-item"]
    assert len(boxes) == 4 and all(y + h <= top for _, y, _, h in boxes)
    # The uniform line lies above the pair's at the topic's prevalence (its dot is higher on the page).
    by_title = {c.find(f"{SVG}title").text.split(",")[0]: float(c.get("cy")) for c in dots}
    assert by_title["This topic: uniform sample of the corpus"] < by_title["This topic: this product's pair samples"]
    assert HOSTILE not in svg


def test_cost_curve_needs_judged_regions():
    report = _report()
    report["regions"][2]["judged"] = 0
    assert plots.cost_curve_from_report(report) is None
    assert plots.cost_curve_from_report({"regions": []}) is None
    assert "No cost curve yet" in plots.cost_curve_svg(None)


def test_the_report_include_shows_the_plot_and_the_sentence():
    from django.template.loader import render_to_string
    from django.utils.safestring import mark_safe

    curve = plots.cost_curve_from_report(_report())
    html = render_to_string("reports/_cost_curve.html",
                            {"cost_curve": curve, "svg": mark_safe(plots.cost_curve_svg(curve))})
    assert 'id="plot-cost-curve"' in html and "<svg" in html
    assert "uniform sample of the corpus needs" in html and f"{curve['topic']['uniform']:,}" in html
    empty = render_to_string("reports/_cost_curve.html",
                             {"cost_curve": None, "svg": mark_safe(plots.cost_curve_svg(None))})
    assert "No cost curve yet" in empty and "cost-curve-summary" not in empty
