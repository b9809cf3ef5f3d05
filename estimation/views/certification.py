"""Certification pages: plan a certification, lock it (which draws the sample), read the verdict.

Managers certify: every view requires annotation.read_reports.  Views are thin:
the form validates input, the services in estimation.services.certification_plans
do the work, and user mistakes come back as messages, never as 500s.
"""
from __future__ import annotations

from decimal import Decimal, InvalidOperation

from django import forms
from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from annotation.models import Classifier, Topic
from annotation.roles import READ_REPORTS, role_required
from annotation.services.crowd.hits import BudgetExceeded
from annotation.services.sampling.draws import SamplingError
from estimation import limits as plan_limits
from estimation.models import CertificationPlan, CertificationVerdict
from estimation.selectors import certification_lock_preview, certification_plan_describe, certification_summary
from estimation.services.certification_locks import certification_plan_lock
from estimation.services.certification_plans import (
    CONFUSION_MIN_DOCUMENTS,
    CONFUSION_MIN_RELEVANT,
    DEFAULT_DELTA1_BAND,
    CertificationError,
    certification_plan_create,
    certification_plan_create_from_confusion,
    certification_plan_refuse_while_sizing,
    certification_plan_update,
)
from estimation.stats.operating_characteristics import majority_error_rate
from estimation.templatetags.report_extras import plain


class CertificationPlanForm(forms.Form):
    classifier = forms.ModelChoiceField(queryset=Classifier.objects.none(), label="Classifier to certify")
    # The choices in words (no seed references or QBCB: the glossary explains them).
    metric = forms.ChoiceField(choices=[(value, plain(label)) for value, label in CertificationPlan.Metric.choices],
                               initial=CertificationPlan.Metric.PAIR_RECALL)
    target = forms.FloatField(min_value=plan_limits.TARGET[0], max_value=plan_limits.TARGET[1], initial=0.8, label="Target",
                              help_text="The classifier passes if the one-sided lower confidence bound reaches the target.")
    alpha = forms.FloatField(min_value=plan_limits.ALPHA[0], max_value=plan_limits.ALPHA[1], initial=0.05, label="False-pass rate allowed",
                             help_text="The chance that a classifier below the target passes by luck; the confidence "
                                       "is 1 minus this.")
    power = forms.FloatField(min_value=plan_limits.POWER[0], max_value=plan_limits.POWER[1], initial=0.9, label="Power",
                             help_text="Chance of passing if the classifier is as good as the pilot says.")
    monitoring = forms.BooleanField(required=False, label="Monitor continuously (anytime-valid)",
                                    help_text="Look after every batch and stop as soon as the confidence sequence "
                                              "clears the target. The sample is sized four times larger as a ceiling.")
    delta1_low = forms.FloatField(required=False, min_value=plan_limits.DELTA1_LOW[0], max_value=plan_limits.DELTA1_LOW[1], initial=DEFAULT_DELTA1_BAND[0],
                                  label="Dependence band: lowest dependence ratio",
                                  help_text="Pair recall only. A ratio of 1 means the two classifiers find relevant "
                                            "documents independently; the verdict is decided at the least "
                                            "favourable ratio of the band.")
    delta1_high = forms.FloatField(required=False, min_value=plan_limits.DELTA1_HIGH[0], max_value=plan_limits.DELTA1_HIGH[1], initial=DEFAULT_DELTA1_BAND[1],
                                   label="Dependence band: highest dependence ratio",
                                   help_text="Two keyword filters on the same words can reach 1.35 (Reuters "
                                             "'earn'); the sample is sized for the bound to reach the target × this.")
    attempts = forms.IntegerField(required=False, min_value=plan_limits.ATTEMPTS[0], max_value=plan_limits.ATTEMPTS[1], initial=1,
                                  label="Attempts declared",
                                  help_text="If you may certify this classifier again after a fail, declare how "
                                            "many attempts: the false-pass rate is split across them so that all of "
                                            "them together keep it. The count is for the classifier and the metric, "
                                            "whatever the target and the topic; left empty, a classifier already "
                                            "certified on this metric keeps the count its first attempt declared.")

    dependence_check = forms.BooleanField(
        required=False, label="Include a dependence check",
        help_text="Pair recall only: also judge a sample of the documents neither classifier retrieved. The verdict "
                  "then assumes nothing about how the two classifiers depend on each other (the band above is not "
                  "used); it costs more documents.")

    def clean(self):
        data = super().clean() or {}
        # Attempts left empty: the family's declaration (this classifier and metric, any target or topic), or 1.
        defaults = {"delta1_low": DEFAULT_DELTA1_BAND[0], "delta1_high": DEFAULT_DELTA1_BAND[1]}
        for name, default in defaults.items():
            if data.get(name) is None and name not in self.errors:
                data[name] = default
        return data

    def __init__(self, *args, topic: Topic, **kwargs):
        super().__init__(*args, **kwargs)
        classifier = self.fields["classifier"]
        assert isinstance(classifier, forms.ModelChoiceField)  # declared above
        classifier.queryset = Classifier.objects.filter(corpus_id=topic.corpus_id).defer("retrieved_bitmap").order_by("name")


class ConfusionPlanForm(forms.Form):
    """An F1 plan sized from the analyst's cross-validated confusion matrix instead of a labelled pilot
    (seed 004 Sec. 4.4). Posted with the hidden field source=confusion, prefix "cv"."""

    classifier = forms.ModelChoiceField(queryset=Classifier.objects.none(), label="Classifier to certify")
    target = forms.FloatField(min_value=plan_limits.TARGET[0], max_value=plan_limits.TARGET[1], initial=0.8, label="Target F1",
                              help_text="The classifier passes if the one-sided lower confidence bound on F1 "
                                        "reaches the target.")
    alpha = forms.FloatField(min_value=plan_limits.ALPHA[0], max_value=plan_limits.ALPHA[1], initial=0.05, label="False-pass rate allowed")
    power = forms.FloatField(min_value=plan_limits.POWER[0], max_value=plan_limits.POWER[1], initial=0.9, label="Power",
                             help_text="Chance of passing if the classifier is as good as the cross-validation says.")
    attempts = forms.IntegerField(required=False, min_value=plan_limits.ATTEMPTS[0], max_value=plan_limits.ATTEMPTS[1], initial=1, label="Attempts declared")
    tp = forms.IntegerField(min_value=0, label="True positives (TP)",
                            help_text="Relevant documents the classifier retrieved, summed over the folds.")
    fp = forms.IntegerField(min_value=0, label="False positives (FP)",
                            help_text="Documents retrieved that are not relevant.")
    fn = forms.IntegerField(min_value=0, label="False negatives (FN)",
                            help_text="Relevant documents the classifier missed.")
    tn = forms.IntegerField(min_value=0, label="True negatives (TN)",
                            help_text="Documents neither relevant nor retrieved.")
    folds = forms.IntegerField(required=False, min_value=2, max_value=1000, label="Folds",
                               help_text="How many folds the cross-validation used (for the record).")

    prefix = "cv"

    def __init__(self, *args, topic: Topic, **kwargs):
        super().__init__(*args, **kwargs)
        classifier = self.fields["classifier"]
        assert isinstance(classifier, forms.ModelChoiceField)  # declared above
        classifier.queryset = Classifier.objects.filter(corpus_id=topic.corpus_id).defer("retrieved_bitmap").order_by("name")

    def clean(self):
        data = super().clean() or {}
        counts = {name: data.get(name) for name in ("tp", "fp", "fn", "tn")}
        if any(value is None for value in counts.values()):
            return data  # a count is missing or not a whole number ≥ 0: its field already says so
        if counts["tp"] == 0:
            self.add_error("tp", "With no true positive the F1 is 0: no certification could pass.")
        if counts["tp"] + counts["fn"] < CONFUSION_MIN_RELEVANT:
            self.add_error("fn", f"TP + FN is {counts['tp'] + counts['fn']} relevant documents: at least "
                                 f"{CONFUSION_MIN_RELEVANT} are needed.")
        total = sum(counts.values())
        if total < CONFUSION_MIN_DOCUMENTS:
            self.add_error("tn", f"The four counts add up to {total} documents: at least {CONFUSION_MIN_DOCUMENTS} "
                                 "are needed to size a certification from them.")
        return data


def _topic(topic_id: int) -> Topic:
    return get_object_or_404(Topic.objects.select_related("corpus"), pk=topic_id)


def _plan(plan_id: int) -> CertificationPlan:
    return get_object_or_404(CertificationPlan.objects.select_related("topic", "classifier"), pk=plan_id)


@role_required(READ_REPORTS)
@require_http_methods(["GET", "POST"])
def certification_topic(request: HttpRequest, topic_id: int) -> HttpResponse:
    """The topic's certification plans, and the form to plan a new one."""
    topic = _topic(topic_id)
    from_confusion = request.method == "POST" and request.POST.get("source") == "confusion"
    form = CertificationPlanForm(request.POST if request.method == "POST" and not from_confusion else None,
                                 topic=topic)
    confusion_form = ConfusionPlanForm(request.POST if from_confusion else None, topic=topic)
    if request.method == "POST" and not from_confusion and form.is_valid():
        try:
            plan = certification_plan_create(topic=topic, user=request.user, **form.cleaned_data)
        except CertificationError as exc:
            form.add_error(None, str(exc))
        else:
            return redirect("reports:certification_plan", plan_id=plan.pk)
    if from_confusion and confusion_form.is_valid():
        try:
            plan = certification_plan_create_from_confusion(topic=topic, user=request.user,
                                                            **confusion_form.cleaned_data)
        except CertificationError as exc:
            confusion_form.add_error(None, str(exc))
        else:
            return redirect("reports:certification_plan", plan_id=plan.pk)
    summary = certification_summary(topic=topic)
    page = Paginator(summary.get("plans", []), PLANS_PER_PAGE).get_page(request.GET.get("page"))
    return render(request, "certification/topic.html",
                  {"topic": topic, "form": form, "confusion_form": confusion_form, "plans": page.object_list,
                   "page": page,
                   "families": [f for f in summary.get("families", []) if f["attempts"] > 1]},
                  status=400 if request.method == "POST" else 200)


PLANS_PER_PAGE = 50


def _page_context(plan: CertificationPlan) -> dict:
    return {"plan": plan, "topic": plan.topic, "info": certification_plan_describe(plan=plan),
            "preview": certification_lock_preview(plan=plan)}


@role_required(READ_REPORTS)
def certification_plan(request: HttpRequest, plan_id: int) -> HttpResponse:
    plan = _plan(plan_id)
    return render(request, "certification/plan.html", _page_context(plan))


def _confirmed(request: HttpRequest, plan: CertificationPlan) -> bool:
    """The POST confirms the cost shown: ``confirm_cost`` equal to the plan's estimated cost."""
    if plan.estimated_cost is None:
        return False
    try:
        return Decimal(request.POST.get("confirm_cost", "")) == plan.estimated_cost
    except (InvalidOperation, ValueError):
        return False


@role_required(READ_REPORTS)
@require_http_methods(["GET", "POST"])
def certification_plan_lock_view(request: HttpRequest, plan_id: int) -> HttpResponse:
    """GET: what locking will draw and cost.  POST: lock, only with the cost confirmed (a paid step)."""
    plan = _plan(plan_id)
    if request.method == "GET":
        return render(request, "certification/lock.html", _page_context(plan))
    try:
        certification_plan_refuse_while_sizing(plan_id=plan.pk)
    except CertificationError as exc:
        messages.error(request, str(exc))
        return redirect("reports:certification_plan", plan_id=plan.pk)
    if plan.status == CertificationPlan.Status.DRAFT and not _confirmed(request, plan):
        messages.error(request, "Locking draws the certification sample and publishes paid HITs: confirm the "
                                f"cost (${plan.estimated_cost}) to lock the plan. Nothing was drawn.")
        return redirect("reports:certification_lock", plan_id=plan.pk)
    try:
        certification_plan_lock(plan_id=plan.pk, user=request.user)
    except (CertificationError, BudgetExceeded, SamplingError) as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, "Plan locked: the certification sample was drawn and its HITs published. "
                                  "The verdict is computed once, when every document is judged.")
    return redirect("reports:certification_plan", plan_id=plan.pk)


@role_required(READ_REPORTS)
@require_POST
def certification_plan_replan(request: HttpRequest, plan_id: int) -> HttpResponse:
    """Recompute a draft plan from the labels collected since (the pilot may have grown)."""
    plan = _plan(plan_id)
    try:
        certification_plan_update(plan_id=plan.pk, user=request.user)
    except CertificationError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, "The plan is being sized again from the current pilot: its sizes show here once done.")
    return redirect("reports:certification_plan", plan_id=plan.pk)


ASSUMPTIONS: dict[str, list[str]] = {
    CertificationPlan.Metric.PAIR_RECALL: [
        "The pair measures recall as if its two classifiers were conditionally independent on relevant "
        "documents (seed 000, Assumption 1: δ1 = 1). Dependence is a bias that no number of judgments "
        "removes, so the verdict does not rest on δ1 = 1: it is decided at the least favourable δ1 of the band "
        "declared in the plan. If the classifiers depend on each other more than the band allows (two keyword "
        "filters on the same words can reach δ1 = 1.35), the verdict can be wrong; only a sample of the "
        "documents neither classifier retrieved can test that.",
        "The certification sample is a simple random sample of each region (A12 and the region only the other "
        "classifier retrieves), drawn after the plan was locked, from documents the pilot did not use.",
        "The recall certified is that of the documents the pilot did not use (the pilot's few documents are "
        "left out of the regions).",
    ],
    CertificationPlan.Metric.F1: [
        "The certification sample is a simple random sample of the corpus drawn after the plan was locked.",
        "The lower bound is exact: among the sampled documents that are relevant or retrieved, the share of "
        "errors (FP + FN) is bounded by Clopper–Pearson and F1 = 2(1 − e)/(2 − e) follows. Seed 004's normal "
        "approximation (Appendix A) is shown for comparison only: at a true F1 equal to the target it passed "
        "about 6% of the time at α = 5% with 2,000 documents (docs/certification.md).",
    ],
    CertificationPlan.Metric.QBCB_RECALL: [
        "The certification sample is a simple random sample of the corpus drawn after the plan was locked; "
        "recall is the share of its relevant documents the classifier retrieved.",
        "QBCB's threshold is an exact binomial test: no normal approximation.",
    ],
}

COMMON_ASSUMPTIONS = [
    "Labels are the majority of three workers. If each worker is right with probability a, the majority is "
    "wrong with probability 1 − a³ − 3a²(1 − a). Wrong labels bias the certified value (for pair recall "
    "usually downward: wrongly 'relevant' documents in the region only the other classifier retrieves); "
    "the verdict's α does not account for them.",
    "The sample size and test were fixed before the sample was drawn, and the verdict was computed once "
    "(seed 004): there is no sequential-testing bias.",
]


@role_required(READ_REPORTS)
def certification_verdict(request: HttpRequest, plan_id: int) -> HttpResponse:
    plan = _plan(plan_id)
    verdict = CertificationVerdict.objects.filter(plan=plan).first()
    info = certification_plan_describe(plan=plan)
    evaluation = (verdict.inputs or {}).get("evaluation", {}) if verdict else {}
    band = evaluation.get("sensitivity") or []
    changes = None
    if verdict is not None and band:
        changes = any(bool(point.get("passes")) != verdict.passed for point in band)
    assumptions = list(ASSUMPTIONS.get(plan.metric, [])) + COMMON_ASSUMPTIONS
    if evaluation.get("assumes"):
        assumptions.insert(0, evaluation["assumes"])
    if plan.attempts > 1 and plan.family_alpha is not None:
        assumptions.append(f"{plan.attempts} attempts were declared for this classifier and metric (any target, "
                           f"any topic): each tests at α = {plan.alpha:.4f}, so that all of them together pass a classifier below "
                           f"the target with probability at most {plan.family_alpha:g}.")
    if plan.monitoring:
        assumptions.append("Monitoring: the anytime-valid confidence sequence (Waudby-Smith & Ramdas) reads the "
                           "judged documents in an order fixed by the plan's seed; stopping early keeps α. The "
                           "sequence assumes i.i.d. draws, i.e. sampling with replacement or a small sampling "
                           "fraction (sampling without replacement only makes it conservative).")
    label_error = [{"accuracy": a, "error": majority_error_rate(a)} for a in (0.7, 0.8, 0.9, 0.95)]
    return render(request, "certification/verdict.html", {
        "plan": plan, "topic": plan.topic, "verdict": verdict, "info": info, "evaluation": evaluation,
        "band": band, "band_changes_verdict": changes, "assumptions": assumptions, "label_error": label_error,
        "documents": len((verdict.inputs or {}).get("documents", [])) if verdict else 0,
    })
