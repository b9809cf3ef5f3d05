"""Analyst pages: topics — instructions, the pair, the sample plan, launch, pause, top-up.

Launch and top-up spend money: each shows what it draws and costs and acts only on a confirmation.
"""
from __future__ import annotations

from dataclasses import dataclass

from django import forms
from django.contrib import messages
from django.db import transaction
from django.db.models import Count, Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from annotation.forms import (
    HALF_WIDTH_MAX,
    HALF_WIDTH_MIN,
    LaunchForm,
    PlanForm,
    TopicForm,
    TopicSettingsForm,
    TopUpForm,
)
from annotation.models import Classifier, ClassifierPair, Corpus, Document, Hit, Topic
from annotation.roles import CONFIGURE, role_required
from annotation.selectors import topic_launch_quote, topic_progress
from annotation.services.complement import DEFAULT_COMPLEMENT_MARGIN
from annotation.services.hits import hits_budget_check, topic_committed_cost
from annotation.services.retrieved_sets import classifier_bitmap
from annotation.services.sampling import samples_launch_enqueue
from annotation.services.topic_settings import topic_pause, topic_resume, topic_settings_update
from annotation.services.topics import topic_create
from annotation.views.highlight import paragraphs
from annotation.views.plan import topic_plan_context
from core.errors import ApplicationError
from core.web import form_error

HALF_WIDTH_MESSAGE = f"Enter a half-width between {HALF_WIDTH_MIN} and {HALF_WIDTH_MAX}."
COMPLEMENT_MESSAGE = "Enter the dependence check's size as a whole number of documents, 0 or more."


def _form_message(form: LaunchForm | TopUpForm) -> str:
    return HALF_WIDTH_MESSAGE if "half_width" in form.errors else COMPLEMENT_MESSAGE


def _topic_queryset():
    return Topic.objects.select_related("corpus", "pair__c1", "pair__c2").defer(
        "corpus__documents_bitmap", "pair__c1__retrieved_bitmap", "pair__c2__retrieved_bitmap")


@role_required(CONFIGURE)
def topics_list(request: HttpRequest) -> HttpResponse:
    topics = _topic_queryset().annotate(
        n_hits=Count("hits", filter=~Q(hits__status=Hit.Status.CANCELLED), distinct=True))
    return render(request, "analyst/topics_list.html", {"topics": topics,
                                                        "has_corpus": Corpus.objects.exists()})


def _topic_form(request: HttpRequest, *, initial: dict | None = None) -> TopicForm:
    form = TopicForm(request.POST or None, initial=initial or {})
    corpus_id = request.POST.get("corpus") or (initial or {}).get("corpus")
    if corpus_id and str(corpus_id).isdigit():
        # Only the chosen corpus's classifiers are offered once a corpus is known.
        for name in ("c1", "c2", "extra"):
            field = form.fields[name]
            assert isinstance(field, forms.ModelChoiceField)  # TopicForm declares all three as classifier choices
            field.queryset = (Classifier.objects.filter(corpus_id=int(corpus_id)).select_related("corpus")
                                          .defer("retrieved_bitmap", "corpus__documents_bitmap"))
    return form


@role_required(CONFIGURE)
def topic_new(request: HttpRequest) -> HttpResponse:
    initial = {}
    if request.GET.get("corpus", "").isdigit():
        initial["corpus"] = int(request.GET["corpus"])
    form = _topic_form(request, initial=initial)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            with transaction.atomic():
                topic = topic_create(
                    corpus=data["corpus"], name=data["name"], instructions=data["instructions"],
                    c1=data["c1"], c2=data["c2"], extra_classifiers=list(data["extra"]),
                    target_recall=data["target_recall"], seed_terms=data["seed_terms"],
                )
                topic = topic_settings_update(
                    topic=topic, confidence=data["confidence"], crowd=data["crowd"], aggregator=data["aggregator"],
                    hit_size=data["hit_size"], reward_per_hit=data["reward_per_hit"], budget=data["budget"],
                )
        except ApplicationError as exc:
            form_error(form, exc)
        else:
            messages.success(request, f"Topic “{topic.name}” created. Check the sample plan, then launch.")
            return redirect("analyst:topic", topic_id=topic.pk)
    return render(request, "analyst/topic_form.html", {"form": form, "has_classifiers": Classifier.objects.exists()})


@role_required(CONFIGURE)
def topic_detail(request: HttpRequest, topic_id: int) -> HttpResponse:
    topic = get_object_or_404(_topic_queryset(), pk=topic_id)
    plan_form = PlanForm(request.GET or None)
    valid = plan_form.is_bound and plan_form.is_valid()
    half_width = plan_form.cleaned_data["half_width"] if valid else 0.05
    margin = (plan_form.cleaned_data.get("margin") if valid else None) or DEFAULT_COMPLEMENT_MARGIN
    context = {"topic": topic, "plan_form": plan_form if plan_form.is_bound else PlanForm(),
               "topup_form": TopUpForm(), "progress": topic_progress(topic=topic), "half_width": half_width,
               "extra": [link.classifier for link in topic.extra_classifiers.select_related("classifier")
                         .defer("classifier__retrieved_bitmap")]}
    if topic.crowd == Topic.Crowd.MTURK:
        # Publishing happens after commit and is retried by the reconcile job; say when it has not happened yet.
        context["mturk_unpublished"] = Hit.objects.filter(topic=topic, status=Hit.Status.OPEN,
                                                          mturk_hit_id__isnull=True).count()
    context.update(topic_plan_context(topic=topic, half_width=half_width, margin=margin))
    return render(request, "analyst/topic_detail.html", context)


@role_required(CONFIGURE)
def topic_edit(request: HttpRequest, topic_id: int) -> HttpResponse:
    topic = get_object_or_404(_topic_queryset(), pk=topic_id)
    initial = {name: getattr(topic, name) for name in TopicSettingsForm.base_fields}
    form = TopicSettingsForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            topic_settings_update(topic=topic, **form.cleaned_data)
        except ApplicationError as exc:
            form_error(form, exc)
        else:
            messages.success(request, "Topic settings saved.")
            return redirect("analyst:topic", topic_id=topic.pk)
    return render(request, "analyst/topic_edit.html",
                  {"topic": topic, "form": form, "committed": topic_committed_cost(topic=topic)})


def _launch(request: HttpRequest, topic: Topic, form: LaunchForm | TopUpForm, *, step: str) -> HttpResponse:
    """Show what a launch or top-up draws and costs; draw (in a task) only once that is confirmed unchanged.

    The first POST renders the confirmation page (nothing is drawn). The second carries the cost
    and the figures shown; they are compared with a fresh quote, and a changed plan or budget is
    refused with the new figures instead of spending a different amount. The checks raise the
    same errors the task would (SamplingError, BudgetExceeded), so a launch that cannot happen is
    refused on the page instead of failing unseen in a worker.
    """
    half_width = form.cleaned_data["half_width"]
    complement = form.cleaned_data["complement"]
    quote = topic_launch_quote(topic=topic, half_width=half_width, complement=complement)
    if not quote.documents:
        messages.warning(request, f"Nothing to draw: every region already holds the documents the plan at "
                                  f"±{half_width:g} asks for, so no HIT would be created and nothing spent. "
                                  "Choose a narrower half-width (or a larger dependence check) to add documents.")
        return redirect("analyst:topic", topic_id=topic.pk)
    hits_budget_check(topic=topic, new_hits=quote.hits)
    context = {"topic": topic, "quote": quote, "step": step, "changed": None,
               "action": reverse(f"analyst:topic_{step}", args=[topic.pk])}
    if not form.confirming:
        return render(request, "analyst/topic_launch_confirm.html", context)
    shown_cost = form.cleaned_data["confirm_cost"]
    if shown_cost != quote.cost or form.cleaned_data["confirm_fingerprint"] != quote.fingerprint:
        context["changed"] = (f"Nothing was drawn: the figures changed since the confirmation page "
                              f"(it showed ${shown_cost:.2f}; now ${quote.cost:.2f}, with the budget and plan "
                              "below). Check them and confirm again.")
        return render(request, "analyst/topic_launch_confirm.html", context, status=409)
    options: dict = {"half_width": half_width}
    if complement:
        options["complement"] = complement
    samples_launch_enqueue(topic=topic, **options)
    detail = f" ({quote.check_documents} of them for the dependence check)" if quote.check_documents else ""
    bound = "" if quote.exact else "at most "
    messages.success(request, f"The sample is being drawn: {bound}{quote.documents} documents{detail} into "
                              f"{bound}{quote.hits} HITs, ${quote.cost:.2f} if every assignment is done. "
                              "The HITs count on this page shows them once they are created.")
    return redirect("analyst:topic", topic_id=topic.pk)


@role_required(CONFIGURE)
@require_POST
def topic_launch(request: HttpRequest, topic_id: int) -> HttpResponse:
    """First POST: the confirmation page with documents, judgments, HITs and cost; second POST: the launch."""
    topic = get_object_or_404(_topic_queryset(), pk=topic_id)
    form = LaunchForm(request.POST)
    if not form.is_valid():
        messages.error(request, _form_message(form))
    elif topic.status not in (Topic.Status.DRAFT, Topic.Status.ACTIVE):
        messages.error(request, f"The topic is {topic.get_status_display().lower()}; resume it before launching.")
    else:
        return _launch(request, topic, form, step="launch")
    return redirect("analyst:topic", topic_id=topic_id)


@role_required(CONFIGURE)
@require_POST
def topic_topup(request: HttpRequest, topic_id: int) -> HttpResponse:
    """Top-up in the same two steps as the launch."""
    topic = get_object_or_404(_topic_queryset(), pk=topic_id)
    form = TopUpForm(request.POST)
    if not form.is_valid():
        messages.error(request, _form_message(form))
    elif topic.status == Topic.Status.DRAFT:
        messages.error(request, "Launch the topic first.")
    else:
        return _launch(request, topic, form, step="topup")
    return redirect("analyst:topic", topic_id=topic_id)


@role_required(CONFIGURE)
@require_POST
def topic_pause_or_resume(request: HttpRequest, topic_id: int) -> HttpResponse:
    """Pause (or resume, with action=resume) the topic: paused topics hand out no HITs."""
    topic = get_object_or_404(Topic, pk=topic_id)
    if request.POST.get("action") == "resume":
        topic_resume(topic=topic)
        messages.success(request, "Sampling resumed.")
    else:
        topic_pause(topic=topic)
        messages.success(request, "Sampling paused: no new HITs are handed out.")
    return redirect("analyst:topic", topic_id=topic_id)


@dataclass(frozen=True)
class _PreviewItem:
    """Stands in for a HitItem in the annotator's template."""

    document: Document

    @property
    def document_id(self) -> int:
        return self.document.pk


@role_required(CONFIGURE)
def topic_hit_preview(request: HttpRequest, topic_id: int) -> HttpResponse:
    """The HIT as a worker will see it: the annotator's own template over documents of the pair's overlap.

    Answers given here go nowhere: a POST just shows the page again.
    """
    topic = get_object_or_404(_topic_queryset(), pk=topic_id)
    documents = []
    try:
        pair = topic.pair
    except ClassifierPair.DoesNotExist:
        pair = None
    if pair is not None:
        both = classifier_bitmap(classifier=pair.c1) & classifier_bitmap(classifier=pair.c2)
        ids = list(both[: topic.hit_size]) if len(both) else []
        documents = list(Document.objects.filter(pk__in=ids).only("external_id", "title", "text"))
    if not documents:
        documents = list(Document.objects.filter(corpus=topic.corpus).only("external_id", "title", "text")
                         .order_by("pk")[: topic.hit_size])
    messages.info(request, "Preview of a HIT as annotators see it (documents from the pair's overlap). "
                           "Nothing you answer here is recorded.")
    context = {"topic": topic, "rows": [(_PreviewItem(d), "", paragraphs(d.text)) for d in documents], "editable": True,
               "assignment": None, "error": None, "preview": True, "documents": documents}
    return render(request, "annotator/assignment.html", context)
