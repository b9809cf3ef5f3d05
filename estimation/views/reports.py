"""Manager pages: topics at a glance, the topic report with plots, exports, a printable page."""
from __future__ import annotations

import json
import logging

from django import forms
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import NoReverseMatch, reverse
from django.utils.safestring import mark_safe
from django.utils.text import slugify

from annotation.models import Topic
from annotation.roles import READ_REPORTS, role_required
from annotation.selectors import topic_progress, topics_progress
from core.forms import ListSearchForm
from estimation import plots
from estimation.forms import TargetRecallForm
from estimation.selectors import certification_state, recall_history, topic_snapshot_latest
from estimation.services.exports import judgments_csv_stream, judgments_jsonl_stream
from estimation.services.extrapolation import report_extrapolations
from estimation.services.multiclass_report import (
    DEFAULT_REFERENCE,
    MulticlassReportError,
    multiclass_probability_above,
    multiclass_sample_size_plan,
)
from estimation.services.recompute import topic_snapshot_latest_or_create
from estimation.services.report_csv import report_csv_metadata
from estimation.services.report_csv import topic_report_csv as report_csv
from estimation.services.report_headline import PAIR_MODEL_STATEMENT
from estimation.templatetags.report_extras import HEADLINE_BASIS_LABELS, plain, recall_headline

logger = logging.getLogger(__name__)

OVERVIEW_PAGE_SIZE = 25

CERTIFICATION_LABELS = {"pass": "Passed", "fail": "Failed", "pending": "Sampling for the verdict",
                        "draft": "Planned, not locked", "infeasible": "Not feasible", "none": "Not planned",
                        "undecidable": "Cannot be decided (sample short of its plan)"}

# Names the certification pages may register under (theirs); the report links the first that exists.
CERTIFICATION_URL_NAMES = ("reports:certification", "reports:certification_plans", "reports:certification_topic")


def _topics():
    return Topic.objects.select_related("corpus", "pair__c1", "pair__c2").defer(
        "corpus__documents_bitmap", "pair__c1__retrieved_bitmap", "pair__c2__retrieved_bitmap")


def _pair_recalls(report: dict) -> list[dict]:
    """The pair's classifiers' headline recalls (those with an estimate) and what each rests on, for the overview:
    the same figure as the report's "In short" (issue 23), never the independence model's alone."""
    rows = []
    for row in report.get("classifiers") or []:
        headline = row_headline(row)
        if str(row.get("role", "")).lower() in ("c1", "c2") and headline.get("estimate") is not None:
            rows.append({"name": row.get("name"), **headline,
                         "basis_label": HEADLINE_BASIS_LABELS.get(str(headline.get("basis")), "")})
    return rows


def _router_f1(report: dict) -> list[dict]:
    """Macro-F1 (posterior mean and 95% HDI) of each router of a topic set, for the overview."""
    if report.get("kind") != "multiclass":
        return []
    rows = []
    for entry in report.get("routers") or []:
        macro = (entry.get("posterior") or {}).get("macro") or {}
        if macro.get("mean") is not None:
            hdi = macro.get("hdi") or [None, None]
            rows.append({"name": entry.get("name"), "estimate": macro.get("mean"), "low": hdi[0], "high": hdi[1]})
    return rows


@role_required(READ_REPORTS)
def topics_overview(request: HttpRequest) -> HttpResponse:
    """Topics at a glance, searchable by name, OVERVIEW_PAGE_SIZE a page: the page's progress figures in four
    grouped queries (topics_progress), then each topic's latest snapshot and certification state."""
    form = ListSearchForm(request.GET)
    form.is_valid()
    search = (form.cleaned_data.get("q") or "").strip()
    topics = _topics().order_by("name", "pk")
    if search:
        topics = topics.filter(name__icontains=search)
    page = Paginator(topics, OVERVIEW_PAGE_SIZE).get_page(request.GET.get("page"))
    progress = topics_progress(topics=list(page.object_list))
    rows = []
    for topic in page.object_list:
        snapshot = topic_snapshot_latest(topic=topic)
        report = snapshot.report if snapshot else {}
        rows.append({"topic": topic, "progress": progress[topic.pk], "recalls": _pair_recalls(report),
                     "f1": _router_f1(report),
                     "spent": (report.get("cost") or {}).get("spent"), "snapshot": snapshot,
                     "certification": certification_state(topic=topic)})
    return render(request, "reports/topics.html", {
        "rows": rows, "page": page, "form": form, "search": search,
        "any_topic": bool(search) or page.paginator.count > 0})


def _certification_url(topic: Topic) -> str | None:
    for name in CERTIFICATION_URL_NAMES:
        try:
            return reverse(name, kwargs={"topic_id": topic.pk})
        except NoReverseMatch:
            continue
    return None


class ReportUnavailable(Exception):
    pass


def _snapshot_or_unavailable(topic: Topic):
    """The latest snapshot; computing the first one may fail (a bug, a database hiccup): say so, no 500."""
    try:
        return topic_snapshot_latest_or_create(topic=topic)
    except Exception as exc:
        logger.exception("no report for topic %s", topic.pk)
        raise ReportUnavailable(str(exc)) from exc


def _unavailable(request: HttpRequest, topic: Topic, exc: ReportUnavailable) -> HttpResponse:
    return render(request, "reports/unavailable.html", {"topic": topic, "problem": str(exc)}, status=503)


def _report_context(request: HttpRequest, topic: Topic) -> dict:
    snapshot = _snapshot_or_unavailable(topic)
    report = snapshot.report
    form = TargetRecallForm(request.GET or None, initial={"target_recall": topic.target_recall})
    target = form.cleaned_data["target_recall"] if form.is_bound and form.is_valid() else topic.target_recall
    extrapolated, curves = report_extrapolations(report=report, target_recall=target)
    classifiers = []
    stratified = report.get("recall_stratified") or {}
    paper = report.get("recall_paper_design") or {}
    for row in report.get("classifiers") or []:
        key = {"c1": "C1", "c2": "C2"}.get(str(row.get("role", "")).lower())
        classifiers.append({
            **row, "key": key,
            "eq1": (report.get("recall_eq1") or {}).get(key) if key else None,
            "eq2": (report.get("recall_eq2") or {}).get(key) if key else None,
            "stratified": stratified.get(key) if key else None,
            "paper_eq1": (paper.get("eq1") or {}).get(key) if key else None,
            "extrapolated_at_target": extrapolated.get(row.get("name", "")),
        })
    pair = report.get("pair")
    reason = _withheld_reason(report, pair)
    headlines = []
    for row in report.get("classifiers") or []:
        headline = row_headline(row)
        # A row whose recall the report withholds on evidence (the pair's model contradicts what was found) says
        # why in its own words; otherwise the report-wide reason (no pair, no judgments, ...).
        row_reason = (row.get("recall") or {}).get("withheld_reason")
        headlines.append(recall_headline(name=str(row.get("name", "")), recall=headline,
                                         target=float(topic.target_recall), confidence=topic.confidence,
                                         withheld_reason=row_reason or reason, basis=headline["basis"],
                                         statement=headline["statement"], withheld=bool(row_reason)))
    cost_curve = plots.cost_curve_from_report(report)
    svgs = {
        # Our own SVG: every text in it is escaped by estimation.plots.
        "pr": mark_safe(plots.precision_recall_svg(report, curves=curves, target=float(topic.target_recall))),
        "history": mark_safe(plots.recall_history_svg(recall_history(topic=topic), target=float(topic.target_recall),
                                                      certification_judgments=report.get("certification_judgments"))),
        "venn": mark_safe(plots.regions_venn_svg(report)),
        "posterior": mark_safe(plots.posterior_histogram_svg(report)),
        "cost": mark_safe(plots.cost_curve_svg(cost_curve)),
    }
    shown_form = form if form.is_bound else TargetRecallForm(initial={"target_recall": topic.target_recall})
    shown_form.fields["target_recall"].help_text = "Each classifier's precision, read where its recall would reach this."
    return {"topic": topic, "snapshot": snapshot, "report": report, "classifiers": classifiers, "svgs": svgs,
            "headlines": headlines, "cost_curve": cost_curve, "relevant_count": _relevant_count(report),
            # The capture–recapture counts move from "What to know" to the Details of the one count shown.
            "diagnostics": [d for d in report.get("diagnostics") or []
                            if not (isinstance(d, dict) and d.get("code") == "capture_recapture")],
            "target_form": shown_form,
            "target_recall": target, "progress": topic_progress(topic=topic),
            "certification": report.get("certification") or {}, "certification_state": certification_state(topic=topic),
            "certification_labels": CERTIFICATION_LABELS,
            "certification_url": _certification_url(topic)}


def row_headline(row: dict) -> dict:
    """A classifier row's headline (report schema 3); an older snapshot's row falls back to the pair model's
    figure with the pair model's statement."""
    headline = row.get("headline")
    if isinstance(headline, dict) and headline.get("basis"):
        return headline
    recall = row.get("recall") or {}
    return {"estimate": recall.get("estimate"), "low": recall.get("low"), "high": recall.get("high"),
            "basis": "pair_model", "judged": (row.get("precision") or {}).get("judged"),
            "statement": PAIR_MODEL_STATEMENT}


def _relevant_count(report: dict) -> dict:
    """The one count of relevant documents the page shows (issue "Every figure honest" #8): the design-based
    total when the headline is design-based, else the pair's; every other model's count goes under Details."""
    design = report.get("design_based") or {}
    total = design.get("relevant_total") or {}
    design_basis = any((row.get("headline") or {}).get("basis") == "design"
                       for row in report.get("classifiers") or [] if row.get("role") in ("c1", "c2"))
    pair = report.get("estimated_relevant") or {}
    others = [{"label": "The pair, if the two classifiers are independent", "estimate": pair.get("estimate"),
               "low": pair.get("low"), "high": pair.get("high")}] if design_basis else []
    for entry in report.get("dependence") or []:
        if entry.get("summary"):
            others.append({"label": f"Capture–recapture with {entry.get('classifier')}", "text": entry["summary"]})
    if design_basis and total.get("estimate") is not None:
        shown = {"estimate": total.get("estimate"), "low": total.get("low"), "high": total.get("high"),
                 "prevalence": None, "basis": "design",
                 "label": "measured with the documents neither classifier retrieved"}
        size = report.get("corpus_size")
        if size:
            shown["prevalence"] = float(total["estimate"]) / float(size)
    else:
        shown = {"estimate": pair.get("estimate"), "low": pair.get("low"), "high": pair.get("high"),
                 "prevalence": pair.get("prevalence"), "basis": "pair_model",
                 "label": "if the two classifiers are independent",
                 # Withheld when the pair's model contradicts what was found: the page says why, and how many
                 # relevant documents were certainly found (the total is at least that).
                 "withheld_reason": pair.get("withheld_reason"), "floor": pair.get("floor")}
    return {**shown, "others": others}


def _withheld_reason(report: dict, pair) -> str:
    """Why the report shows no recall, in words (the headline of a classifier without an estimate)."""
    codes = {d.get("code"): d for d in report.get("diagnostics") or [] if isinstance(d, dict)}
    if not pair or "no_pair" in codes:
        return "the topic has no classifier pair yet"
    if not report.get("judged_documents") or "no_judgments" in codes:
        return "no document has been judged yet"
    if "estimation_failed" in codes:
        return "the estimate could not be computed: " + plain(codes["estimation_failed"].get("message"), pair)
    return "there are not enough judged documents in the pair's regions to estimate it yet"


class ReferenceForm(forms.Form):
    """The F1 value the page reports P(F1 > value) for (seed 002, Table 1 uses 0.8)."""

    reference = forms.FloatField(min_value=0.0, max_value=1.0, required=False, label="Reference F1",
                                 help_text="The page shows the probability that each F1 exceeds it.")


class HdiWidthForm(forms.Form):
    """The HDI width an analyst wants for a router's average F1; the page answers with a sample size."""

    router = forms.IntegerField(widget=forms.HiddenInput)
    average = forms.ChoiceField(choices=[("macro", "macro-F1"), ("micro", "micro-F1")], initial="macro",
                                label="Average")
    width = forms.FloatField(min_value=0.005, max_value=0.5, label="Width of the 95% range wanted",
                             help_text="Full width of the 95% interval, e.g. 0.05 for ±0.025.")


def _multiclass_context(request: HttpRequest, topic: Topic) -> dict:
    """A topic set's report page (seed 002): per router the heat map, per-class table, F1 summary and densities."""
    snapshot = _snapshot_or_unavailable(topic)
    report = snapshot.report
    reference_form = ReferenceForm(request.GET or None, initial={"reference": DEFAULT_REFERENCE})
    reference = DEFAULT_REFERENCE
    if reference_form.is_bound and reference_form.is_valid() and reference_form.cleaned_data["reference"] is not None:
        reference = float(reference_form.cleaned_data["reference"])
    above = multiclass_probability_above(report=report, reference=reference)
    names = [str(c.get("name", "")) for c in report.get("classes") or []]
    width_bound = "width" in request.GET
    plan = plan_error = None
    plan_router = None
    if width_bound:
        width_form = HdiWidthForm(request.GET)
        if width_form.is_valid():
            plan_router = width_form.cleaned_data["router"]
            try:
                plan = multiclass_sample_size_plan(report=report, router_id=plan_router,
                                                   width=width_form.cleaned_data["width"],
                                                   average=width_form.cleaned_data["average"])
            except MulticlassReportError as exc:
                plan_error = exc.message
        else:
            plan_router = width_form.data.get("router")
    sample = report.get("sample") or {}
    decided_share = None
    settled = (sample.get("judged") or 0) + (sample.get("undecided") or 0)
    if settled:
        decided_share = (sample.get("judged") or 0) / settled
    routers = []
    for entry in report.get("routers") or []:
        router_id = entry.get("id")
        mine = str(plan_router) == str(router_id)
        form = HdiWidthForm(request.GET) if width_bound and mine else HdiWidthForm(
            initial={"router": router_id, "average": "macro", "width": 0.05})
        if width_bound and mine:
            form.is_valid()
        router_plan = plan if mine else None
        routers.append({
            **entry, "above": above.get(int(router_id or 0), {}),
            "heatmap": mark_safe(plots.confusion_heatmap_svg(entry, names)),  # escaped by estimation.plots
            "density": mark_safe(plots.f1_density_svg(entry, reference=reference)),
            "width_form": form, "plan": router_plan, "plan_error": plan_error if mine else None,
            "plan_documents": (None if router_plan is None or router_plan.n is None or not decided_share
                               else int(-(-router_plan.n // decided_share))),
        })
    shown = reference_form if reference_form.is_bound else ReferenceForm(initial={"reference": DEFAULT_REFERENCE})
    return {"topic": topic, "snapshot": snapshot, "report": report, "routers": routers, "class_names": names,
            "reference": reference, "reference_form": shown, "progress": topic_progress(topic=topic)}


def _render_report(request: HttpRequest, topic_id: int, template: str) -> HttpResponse:
    topic = get_object_or_404(_topics(), pk=topic_id)
    try:
        if topic.is_multiclass:
            printable = template.endswith("_print.html")
            context = {**_multiclass_context(request, topic), "printable": printable}
            return render(request, "reports/multiclass.html", context)
        return render(request, template, _report_context(request, topic))
    except ReportUnavailable as exc:
        return _unavailable(request, topic, exc)


@role_required(READ_REPORTS)
def topic_report(request: HttpRequest, topic_id: int) -> HttpResponse:
    return _render_report(request, topic_id, "reports/report.html")


@role_required(READ_REPORTS)
def topic_report_print(request: HttpRequest, topic_id: int) -> HttpResponse:
    return _render_report(request, topic_id, "reports/report_print.html")


def _filename(topic: Topic, version: int, ext: str) -> str:
    return f"{slugify(topic.name) or 'topic'}-report-v{version}.{ext}"


@role_required(READ_REPORTS)
def topic_report_json(request: HttpRequest, topic_id: int) -> HttpResponse:
    topic = get_object_or_404(Topic, pk=topic_id)
    try:
        snapshot = _snapshot_or_unavailable(topic)
    except ReportUnavailable as exc:
        return _unavailable(request, topic, exc)
    body = json.dumps({"snapshot": {"version": snapshot.version, "created_at": snapshot.created_at.isoformat(),
                                    "code_version": snapshot.code_version}, "report": snapshot.report},
                      indent=2, ensure_ascii=False)
    response = HttpResponse(body, content_type="application/json; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{_filename(topic, snapshot.version, "json")}"'
    return response


@role_required(READ_REPORTS)
def topic_report_csv(request: HttpRequest, topic_id: int) -> HttpResponse:
    topic = get_object_or_404(Topic, pk=topic_id)
    try:
        snapshot = _snapshot_or_unavailable(topic)
    except ReportUnavailable as exc:
        return _unavailable(request, topic, exc)
    metadata = report_csv_metadata(report=snapshot.report, snapshot_version=snapshot.version,
                                   snapshot_created_at=snapshot.created_at.isoformat(), corpus=topic.corpus.name,
                                   target_recall=topic.target_recall)
    response = HttpResponse(report_csv(report=snapshot.report, metadata=metadata),
                            content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{_filename(topic, snapshot.version, "csv")}"'
    return response


@role_required(READ_REPORTS)
def topic_judgments_csv(request: HttpRequest, topic_id: int) -> StreamingHttpResponse:
    """Every judgment of the topic, one CSV row each, streamed (estimation.services.exports)."""
    topic = get_object_or_404(Topic, pk=topic_id)
    response = StreamingHttpResponse(judgments_csv_stream(topic=topic), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{slugify(topic.name) or "topic"}-judgments.csv"'
    return response


@role_required(READ_REPORTS)
def topic_judgments_jsonl(request: HttpRequest, topic_id: int) -> StreamingHttpResponse:
    """Every judgment of the topic, one JSON object per line, streamed (estimation.services.exports)."""
    topic = get_object_or_404(Topic, pk=topic_id)
    response = StreamingHttpResponse(judgments_jsonl_stream(topic=topic), content_type="application/x-ndjson; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{slugify(topic.name) or "topic"}-judgments.jsonl"'
    return response
