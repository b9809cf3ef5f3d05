"""When to stop training and start certifying (seed 004 Sec. 3): the analyst pastes the learning curve, the page
gives the certification size at each point, the fitted curve's projection and the advice.

Analysts and managers (annotation.read_reports, as every certification page). Nothing is stored: the form is
parsed here, ``estimation.services.training_advice.training_stop_advise`` does the work, its errors come back
as form errors (400), never as 500s. The two plots are server-side SVG drawn with estimation.plots' frame.
"""
from __future__ import annotations

from django import forms
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_http_methods

from annotation.roles import READ_REPORTS, role_required
from core.web import form_error
from estimation import limits as plan_limits
from estimation import plots
from estimation.services import training_advice as service
from estimation.stats.training_stop import TrainingStopAdvice

EXAMPLE = "200, 0.62\n400, 0.71\n800, 0.76\n1600, 0.79\n"


class TrainingAdviceForm(forms.Form):
    points = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 8, "placeholder": EXAMPLE}), label="Learning curve",
        help_text="One point per line: the number of training documents, their cross-validated F1, and "
                  "optionally how many documents the cross-validation tested (by default, all of them once).")
    target = forms.FloatField(min_value=plan_limits.TARGET[0], max_value=plan_limits.TARGET[1], initial=0.7,
                              label="Target F1", help_text="The F1 the certification must show.")
    prevalence = forms.FloatField(min_value=service.PREVALENCE[0], max_value=service.PREVALENCE[1], initial=0.1,
                                  label="Prevalence",
                                  help_text="Share of the documents that are relevant (from the training sample).")
    retrieved_fraction = forms.FloatField(
        required=False, min_value=service.PREVALENCE[0], max_value=0.99, label="Share retrieved",
        help_text="Share of the documents the classifier retrieves; left empty, the prevalence (a classifier tuned "
                  "for F1 retrieves about as many documents as are relevant).")
    alpha = forms.FloatField(min_value=plan_limits.ALPHA[0], max_value=plan_limits.ALPHA[1], initial=0.05,
                             label="False-pass rate allowed",
                             help_text="The chance that a classifier below the target passes by luck.")
    power = forms.FloatField(min_value=plan_limits.POWER[0], max_value=plan_limits.POWER[1], initial=0.93,
                             label="Power", help_text="Chance of passing that the certification sample is sized for.")
    margin_confidence = forms.FloatField(
        min_value=service.MARGIN_CONFIDENCE[0], max_value=service.MARGIN_CONFIDENCE[1], initial=0.95,
        label="Safety margin (confidence)",
        help_text="Sizes are computed on this one-sided lower bound of each estimate, not on the estimate itself "
                  "(0.5 = on the estimate). A higher margin costs more documents and passes more often.")
    budget = forms.IntegerField(required=False, min_value=1, max_value=service.MAX_BUDGET,
                                label="Budget (documents to annotate)",
                                help_text="Training and certification documents together; optional.")
    cost_per_annotation = forms.DecimalField(required=False, min_value=0, max_digits=10, decimal_places=4,
                                             label="Cost per annotated document ($)", help_text="Optional.")

    def clean_points(self) -> list:
        try:
            return service.training_points_parse(text=self.cleaned_data["points"])
        except service.TrainingAdviceError as exc:
            raise forms.ValidationError(exc.message) from exc


@role_required(READ_REPORTS)
@require_http_methods(["GET", "POST"])
def training_advice(request: HttpRequest) -> HttpResponse:
    """The form; on POST, the table, the advice and the plots."""
    form = TrainingAdviceForm(request.POST if request.method == "POST" else None)
    advice = None
    if request.method == "POST" and form.is_valid():
        data = dict(form.cleaned_data)
        cost = data.pop("cost_per_annotation")
        try:
            advice = service.training_stop_advise(
                **data, cost_per_annotation=None if cost is None else float(cost))
        except service.TrainingAdviceError as exc:
            form_error(form, exc)
    context = {"form": form, "advice": advice, "example": EXAMPLE}
    if advice is not None:
        context["f1_svg"] = mark_safe(f1_curve_svg(advice))  # built with plots' escaping helpers
        context["cost_svg"] = mark_safe(cost_curve_svg(advice))
    bad = request.method == "POST" and advice is None
    return render(request, "certification/training_advice.html", context, status=400 if bad else 200)


# --------------------------------------------------------------------------- plots


def _shown_projection(advice: TrainingStopAdvice) -> list[tuple[int, float, int | None, int | None]]:
    """The projection up to a little past the farther of the last point and the projected minimum."""
    if advice.fit is None:
        return []
    last = advice.points[-1].size
    end = max(2 * last, int(1.5 * (advice.fit.minimum_size or 0)))
    return [row for row in advice.fit.projection if row[0] <= end]


def f1_curve_svg(advice: TrainingStopAdvice, *, width: int = 520, height: int = 300) -> str:
    """Cross-validated F1 (dots), its lower bound (open dots), the fitted curve (line) and the target (dashed)."""
    projection = _shown_projection(advice)
    sizes = [p.size for p in advice.points] + [row[0] for row in projection]
    x_low, x_high, x_ticks = plots.nice_axis(0.0, float(max(sizes)), count=5)
    space = plots._legend_space(4)
    height += space
    frame = plots._Frame(width=width, height=height, x_range=(x_low, x_high), y_range=(0, 1), top=16 + space)
    _, _, y_ticks = plots.nice_axis(0, 1)
    body = frame.axes(x_label="Training documents", y_label="F1", x_ticks=x_ticks, y_ticks=y_ticks,
                      x_format=plots._tick_format(x_ticks))
    ty = frame.y(advice.target)
    body.append(f'<line class="target-line" x1="{frame.left}" y1="{ty:.1f}" x2="{width - frame.right}" '
                f'y2="{ty:.1f}" stroke="{plots.TARGET_COLOR}" stroke-width="1.5" stroke-dasharray="6 4"/>')
    color, fitted = plots.PALETTE[0], plots.PALETTE[1]
    if projection:
        line = " ".join(f"{frame.x(r):.1f},{frame.y(f):.1f}" for r, f, _, _ in projection)
        body.append(f'<polyline class="fitted" points="{line}" fill="none" stroke="{fitted}" stroke-width="2"/>')
    for p in advice.points:
        x = frame.x(p.size)
        body.append(f'<circle class="estimate" cx="{x:.1f}" cy="{frame.y(p.estimate):.1f}" r="3.5" fill="{color}">'
                    f'<title>{p.size:,} documents: F1 {p.estimate:.3f}</title></circle>')
        body.append(f'<circle class="lower-bound" cx="{x:.1f}" cy="{frame.y(p.lower_bound):.1f}" r="3" fill="#fff" '
                    f'stroke="{color}"><title>lower bound {p.lower_bound:.3f}</title></circle>')
    legend: list[tuple[str, str] | tuple[str, str, str]] = [
        ("cross-validated F1 (dots) and its lower bound (open dots)", color)]
    if projection and advice.fit is not None:
        legend.append((f"fitted curve, levelling off at {advice.fit.a:.3f}", fitted, "line"))
    legend.append((f"target {advice.target:.3f}", plots.TARGET_COLOR, "dash"))
    body += plots._legend(legend, x=frame.left, y=18, max_width=width - frame.left - frame.right)
    return plots._svg(width, height, "Learning curve", body)


def cost_curve_svg(advice: TrainingStopAdvice, *, width: int = 520, height: int = 300) -> str:
    """Total annotations c = r + s if training stopped at r: measured points (dots), projection (line), budget."""
    projection = [row for row in _shown_projection(advice) if row[3] is not None]
    measured = [(p.size, p.total) for p in advice.points if p.total is not None]
    if not projection and not measured:
        return plots.empty_svg("No point can be certified yet: no total to draw.", title="Total annotations")
    totals = [c for _, c in measured] + [row[3] for row in projection if row[3] is not None]
    # A point (or the projection's start) where the test set would be huge would squash the rest: the axis stops
    # at four times the lowest total (or past the budget); the table lists every point.
    cap = 4 * min(totals)
    if advice.budget is not None:
        cap = max(cap, int(advice.budget * 1.15))
    sizes = [p.size for p in advice.points] + [row[0] for row in projection]
    x_low, x_high, x_ticks = plots.nice_axis(0.0, float(max(sizes)), count=5)
    y_low, y_high, y_ticks = plots.nice_axis(0.0, float(min(max(totals), cap)), count=5)
    space = plots._legend_space(3 + (advice.budget is not None))
    height += space
    frame = plots._Frame(width=width, height=height, x_range=(x_low, x_high), y_range=(y_low, y_high),
                         top=16 + space, left=64)
    body = frame.axes(x_label="Training documents (stop here)", y_label="Training + certification documents",
                      x_ticks=x_ticks, y_ticks=y_ticks, x_format=plots._tick_format(x_ticks),
                      y_format=plots._tick_format(y_ticks))
    color, fitted = plots.PALETTE[0], plots.PALETTE[1]
    legend: list[tuple[str, str] | tuple[str, str, str]] = []
    shown = [(r, c) for r, _, _, c in projection if c is not None and c <= y_high]
    if shown:
        line = " ".join(f"{frame.x(r):.1f},{frame.y(c):.1f}" for r, c in shown)
        body.append(f'<polyline class="projected-total" points="{line}" fill="none" stroke="{fitted}" '
                    f'stroke-width="2"/>')
        legend.append(("projected from the fitted curve", fitted, "line"))
    for r, c in measured:
        if c <= y_high:
            body.append(f'<circle class="total" cx="{frame.x(r):.1f}" cy="{frame.y(c):.1f}" r="3.5" fill="{color}">'
                        f'<title>{r:,} training + certification: {c:,}</title></circle>')
    hidden = sum(1 for _, c in measured if c > y_high)
    legend.append(("if training stopped at a measured point"
                   + (f" ({hidden} off the top)" if hidden else ""), color))
    fit = advice.fit
    if fit is not None and fit.minimum_size is not None and fit.minimum_total is not None \
            and fit.minimum_total <= y_high:
        body.append(f'<circle class="projected-minimum" cx="{frame.x(fit.minimum_size):.1f}" '
                    f'cy="{frame.y(fit.minimum_total):.1f}" r="5" fill="none" stroke="{fitted}" stroke-width="2"/>')
        legend.append((f"projected minimum: {fit.minimum_total:,} at {fit.minimum_size:,}", fitted, "none"))
    if advice.budget is not None and advice.budget <= y_high:
        by = frame.y(advice.budget)
        body.append(f'<line class="budget-line" x1="{frame.left}" y1="{by:.1f}" x2="{width - frame.right}" '
                    f'y2="{by:.1f}" stroke="{plots.TARGET_COLOR}" stroke-width="1.5" stroke-dasharray="6 4"/>')
        legend.append((f"budget {advice.budget:,}", plots.TARGET_COLOR, "dash"))
    body += plots._legend(legend, x=frame.left, y=18, max_width=width - frame.left - frame.right)
    return plots._svg(width, height, "Total annotations", body)
