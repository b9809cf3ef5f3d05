"""The analyst's model-judge page (issue 28): the endpoint configured, a plan per region, the quote to confirm,
the runs with their progress, failures by reason, tokens and money.  Parse, call the services of
annotation/services/crowd/model_judge.py (the API calls the same), render."""
from __future__ import annotations

from decimal import Decimal

from django import forms
from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import path
from django.views.decorators.http import require_http_methods

from annotation.models import REGION_NAMES, Classifier, ModelJudgeRun, Topic
from annotation.roles import CONFIGURE, role_required
from annotation.services.crowd.model_judge import (
    JUDGE_REGIONS,
    MAX_PER_REGION,
    JudgeCostChanged,
    model_judge_configured,
    model_judge_launch,
    model_judge_plan_default,
    model_judge_quote,
    model_judge_retry,
    model_judge_run_summary,
)
from core.errors import ApplicationError


class JudgePlanForm(forms.Form):
    kind = forms.ChoiceField(choices=ModelJudgeRun.Kind.choices, initial=ModelJudgeRun.Kind.ENDPOINT)
    classifier = forms.ModelChoiceField(queryset=Classifier.objects.none(), required=False,
                                        help_text="For a scores classifier used as judge.")
    a12 = forms.IntegerField(min_value=0, max_value=MAX_PER_REGION, label="Both classifiers (A12)")
    b1 = forms.IntegerField(min_value=0, max_value=MAX_PER_REGION, label="First classifier only (B1)")
    b2 = forms.IntegerField(min_value=0, max_value=MAX_PER_REGION, label="Second classifier only (B2)")
    n = forms.IntegerField(min_value=0, max_value=MAX_PER_REGION, label="Neither classifier (N)")
    confirm_cost = forms.DecimalField(required=False, widget=forms.HiddenInput, max_digits=12, decimal_places=4)

    def __init__(self, *args, topic: Topic, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["classifier"]
        assert isinstance(field, forms.ModelChoiceField)
        field.queryset = Classifier.objects.filter(
            corpus=topic.corpus, kind=Classifier.Kind.SCORES, archived_at__isnull=True).defer("retrieved_bitmap")
        # The regions by the names every page gives them (issue 26: "found only by <classifier>"), codes nowhere.
        pair = getattr(topic, "pair", None)
        names = {"the first classifier": pair.c1.name, "the second classifier": pair.c2.name} if pair else {}
        for region in JUDGE_REGIONS:
            label = REGION_NAMES[region]
            for generic, name in names.items():
                label = label.replace(generic, name)
            self.fields[region.lower()].label = label[:1].upper() + label[1:]

    def plan(self) -> dict[str, int]:
        return {h: self.cleaned_data[h.lower()] for h in JUDGE_REGIONS}


@role_required(CONFIGURE)
@require_http_methods(["GET", "POST"])
def topic_judge(request: HttpRequest, topic_id: int) -> HttpResponse:
    """GET: the page; POST without confirm_cost: the quote to confirm; POST with it: the launch."""
    topic = get_object_or_404(Topic.objects.select_related("corpus", "pair"), pk=topic_id)
    context: dict = {"topic": topic, "configured": model_judge_configured(), "quote": None}
    if request.method == "POST":
        form = JudgePlanForm(request.POST, topic=topic)
        if form.is_valid():
            kind = form.cleaned_data["kind"]
            classifier = form.cleaned_data["classifier"]
            classifier_id = classifier.pk if classifier is not None else None
            try:
                if form.cleaned_data["confirm_cost"] is None:
                    context["quote"] = model_judge_quote(topic=topic, plan=form.plan(), kind=kind,
                                                         classifier_id=classifier_id)
                else:
                    run = model_judge_launch(topic_id=topic.pk, plan=form.plan(), kind=kind,
                                             classifier_id=classifier_id, user=request.user,
                                             confirm_cost=Decimal(form.cleaned_data["confirm_cost"]))
                    messages.success(request, f"Judge run {run.pk} started: {run.total} documents, "
                                              f"${run.cost_confirmed} confirmed.")
                    return redirect("analyst:topic_judge", topic_id=topic.pk)
            except JudgeCostChanged as exc:
                context["quote"] = exc.quote
                context["changed"] = exc.message
            except ApplicationError as exc:
                form.add_error(None, exc.message)
    else:
        initial: dict = {"kind": ModelJudgeRun.Kind.ENDPOINT}
        if hasattr(topic, "pair") and not topic.is_multiclass:
            initial.update({h.lower(): k for h, k in model_judge_plan_default(topic=topic).items()})
        form = JudgePlanForm(initial=initial, topic=topic)
    context["form"] = form
    context["runs"] = [model_judge_run_summary(run=r) for r in ModelJudgeRun.objects.filter(topic=topic)[:20]]
    context["model"] = getattr(settings, "MODEL_JUDGE_MODEL", "")
    context["base_url"] = getattr(settings, "MODEL_JUDGE_BASE_URL", "")
    return render(request, "analyst/model_judge.html", context)


@role_required(CONFIGURE)
@require_http_methods(["POST"])
def judge_run_retry(request: HttpRequest, run_id: int) -> HttpResponse:
    run = get_object_or_404(ModelJudgeRun, pk=run_id)
    if model_judge_retry(run_id=run.pk):
        messages.success(request, f"Judge run {run.pk} queued again (its failed answers are asked again).")
    else:
        messages.warning(request, "Only a failed run can be retried.")
    return redirect("analyst:topic_judge", topic_id=run.topic_id)


# Included in annotation/urls_analyst.py by one line: path("", include("annotation.views.model_judge")).
urlpatterns = [
    path("topics/<int:topic_id>/judge/", topic_judge, name="topic_judge"),
    path("judge-runs/<int:run_id>/retry/", judge_run_retry, name="judge_run_retry"),
]
