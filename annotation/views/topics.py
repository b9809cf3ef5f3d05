"""Analyst pages: topics — instructions, the pair, the sample plan, launch, pause, top-up.

Launch and top-up spend money: each shows what it draws and costs and acts only on a confirmation.
"""
from __future__ import annotations

from dataclasses import dataclass

from django import forms
from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import Count, Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from annotation.forms import (
    HALF_WIDTH_MAX,
    HALF_WIDTH_MIN,
    LaunchForm,
    PlanForm,
    RenameForm,
    TopicForm,
    TopicSettingsForm,
    TopUpForm,
)
from annotation.models import Classifier, ClassifierPair, Corpus, Document, Hit, Topic
from annotation.roles import CONFIGURE, role_required
from annotation.selectors import topic_progress, topics_for_list
from annotation.services.corpora.retrieved_sets import classifier_bitmap
from annotation.services.crowd.hits import topic_committed_cost
from annotation.services.crowd.platforms import platform_get
from annotation.services.sampling.complement import DEFAULT_COMPLEMENT_MARGIN, complement_default
from annotation.services.sampling.plan import topic_plan_describe
from annotation.services.sampling.quote import topic_launch_quote
from annotation.services.topics import launch as launch_service
from annotation.services.topics.topic import (
    topic_archive,
    topic_delete,
    topic_delete_blockers,
    topic_rename,
    topic_unarchive,
)
from annotation.services.topics.topic_sets import topic_set_classes
from annotation.services.topics.topic_settings import (
    TOPIC_SETTINGS,
    topic_create_with_settings,
    topic_pause,
    topic_resume,
    topic_settings_update,
)
from annotation.views.highlight import paragraphs
from core.errors import ApplicationError
from core.forms import ListSearchForm
from core.web import form_error

HALF_WIDTH_MESSAGE = f"Enter a half-width between {HALF_WIDTH_MIN} and {HALF_WIDTH_MAX}."
COMPLEMENT_MESSAGE = "Enter the dependence check's size as a whole number of documents, 0 or more."
TOPIC_SET_LAUNCH_MESSAGE = ("This is a topic set: it is launched from its own page, with the size of its uniform "
                            "sample.")
# Settings of a single topic's recall goal that a topic set (no pair, no recall target) does not have.
MULTICLASS_UNUSED_SETTINGS = ("target_recall", "confidence", "scorer")


def _form_message(form: LaunchForm | TopUpForm) -> str:
    return HALF_WIDTH_MESSAGE if "half_width" in form.errors else COMPLEMENT_MESSAGE


def _topic_queryset():
    return Topic.objects.select_related("corpus", "pair__c1", "pair__c2").defer(
        "corpus__documents_bitmap", "pair__c1__retrieved_bitmap", "pair__c2__retrieved_bitmap")


LIST_PAGE_SIZE = 25


@role_required(CONFIGURE)
@require_GET
def topics_list(request: HttpRequest) -> HttpResponse:
    """Topics, searchable by name, 25 a page; archived ones only with "show archived"."""
    search_form = ListSearchForm(request.GET)
    search_form.is_valid()
    search, archived = search_form.cleaned_data.get("q") or "", bool(search_form.cleaned_data.get("archived"))
    topics = topics_for_list(search=search, archived=archived).select_related(
        "corpus", "pair__c1", "pair__c2").defer(
        "corpus__documents_bitmap", "pair__c1__retrieved_bitmap", "pair__c2__retrieved_bitmap").annotate(
        n_hits=Count("hits", filter=~Q(hits__status=Hit.Status.CANCELLED), distinct=True),
        n_classes=Count("classes", distinct=True))
    page = Paginator(topics, LIST_PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "analyst/topics_list.html", {
        "topics": page.object_list, "page": page, "form": search_form, "search": search, "archived": archived,
        "has_corpus": Corpus.objects.exists(), "any_topic": Topic.objects.exists()})


def _offered_classifiers(corpus_id: int):
    """What the new-topic form offers: the chosen corpus's classifiers that are not archived."""
    return (Classifier.objects.filter(corpus_id=corpus_id, archived_at__isnull=True).select_related("corpus")
            .defer("retrieved_bitmap", "corpus__documents_bitmap"))


def _topic_form(request: HttpRequest, *, corpus: Corpus) -> TopicForm:
    """The form of step two: the corpus is fixed (a disabled field ignores what is posted for it), and only its
    classifiers are offered, so a classifier of another corpus can never be chosen and then refused."""
    form = TopicForm(request.POST or None, initial={"corpus": corpus.pk})
    form.fields["corpus"].disabled = True
    form.fields["corpus"].help_text = "Classifiers are offered for this corpus only."
    for name in ("c1", "c2", "extra"):
        field = form.fields[name]
        assert isinstance(field, forms.ModelChoiceField)  # TopicForm declares all three as classifier choices
        field.queryset = _offered_classifiers(corpus.pk)
    _scorer_offered(form, corpus_id=corpus.pk)
    return form


def _scorer_offered(form: forms.Form, *, corpus_id: int) -> None:
    """Offer as scorer only the corpus's classifiers that store scores (the service checks again)."""
    field = form.fields.get("scorer")
    if isinstance(field, forms.ModelChoiceField) and field.queryset is not None:
        field.queryset = field.queryset.filter(corpus_id=corpus_id)


def _chosen_corpus(request: HttpRequest) -> Corpus | None:
    """The corpus of a new topic: ?corpus= (step one's choice), else a posted corpus, else the only corpus."""
    raw = request.GET.get("corpus") or request.POST.get("corpus") or ""
    corpora = Corpus.objects.defer("documents_bitmap")
    if raw.isdigit():
        return get_object_or_404(corpora, pk=int(raw))
    only = list(corpora[:2])
    return only[0] if len(only) == 1 else None


@role_required(CONFIGURE)
def topic_new(request: HttpRequest) -> HttpResponse:
    """Two steps: pick the corpus (skipped when there is one), then the topic with that corpus's classifiers."""
    corpus = _chosen_corpus(request)
    if corpus is None:
        corpora = Corpus.objects.defer("documents_bitmap").annotate(
            n_classifiers=Count("classifiers", filter=Q(classifiers__archived_at__isnull=True))).order_by("name")
        return render(request, "analyst/topic_form.html", {"step": "corpus", "corpora": corpora})
    form = _topic_form(request, corpus=corpus)
    offered = _offered_classifiers(corpus.pk).count()
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            topic = topic_create_with_settings(
                corpus=data["corpus"], name=data["name"], instructions=data["instructions"],
                c1=data["c1"], c2=data["c2"], extra_classifiers=list(data["extra"]),
                target_recall=data["target_recall"], seed_terms=data["seed_terms"],
                settings={name: data[name] for name in (*TOPIC_SETTINGS, "allow_unsure")}, scorer=data.get("scorer"),
            )
        except ApplicationError as exc:
            form_error(form, exc)
        else:
            messages.success(request, f"Topic “{topic.name}” created. Check the sample plan, then launch.")
            return redirect("analyst:topic", topic_id=topic.pk)
    return render(request, "analyst/topic_form.html", {"step": "topic", "form": form, "corpus": corpus,
                                                       "offered": offered, "several_corpora": Corpus.objects.count() > 1})


@role_required(CONFIGURE)
def topic_detail(request: HttpRequest, topic_id: int) -> HttpResponse:
    topic = get_object_or_404(_topic_queryset(), pk=topic_id)
    if topic.is_multiclass:
        return redirect("analyst:topic_set", topic_id=topic.pk)
    plan_form = PlanForm(request.GET or None)
    valid = plan_form.is_bound and plan_form.is_valid()
    half_width = plan_form.cleaned_data["half_width"] if valid else 0.05
    margin = (plan_form.cleaned_data.get("margin") if valid else None) or DEFAULT_COMPLEMENT_MARGIN
    context = {"topic": topic, "plan_form": plan_form if plan_form.is_bound else PlanForm(),
               "topup_form": TopUpForm(), "progress": topic_progress(topic=topic), "half_width": half_width,
               "extra": [link.classifier for link in topic.extra_classifiers.select_related("classifier")
                         .defer("classifier__retrieved_bitmap")]}
    # Publishing happens after commit and is retried by the reconcile job; say when it has not happened yet.
    context["mturk_unpublished"] = platform_get(topic.crowd).unpublished_count(topic=topic)
    context.update(topic_plan_describe(topic=topic, half_width=half_width, margin=margin))
    context.update(_launch_quotes(topic=topic, half_width=half_width, dependence=context.get("dependence")))
    return render(request, "analyst/topic_detail.html", context)


def _launch_quotes(*, topic: Topic, half_width: float, dependence: dict | None) -> dict:
    """The launch quote the page, its button and the confirmation page all show (one source of the figures):
    the default plan, which includes the dependence check when one is planned, and the same without it (the
    opt-out). A quote that cannot be made says why."""
    if topic.status != Topic.Status.DRAFT:
        return {}
    try:
        quotes: dict = {"launch_quote": topic_launch_quote(topic=topic, half_width=half_width)}
        if quotes["launch_quote"].complement:
            quotes["launch_quote_without_check"] = topic_launch_quote(topic=topic, half_width=half_width,
                                                                      complement=0)
    except ApplicationError as exc:
        return {"launch_quote_error": exc.message}
    return quotes


@role_required(CONFIGURE)
def topic_edit(request: HttpRequest, topic_id: int) -> HttpResponse:
    """The settings that may change; a topic set has no recall goal, so it is not asked for one."""
    topic = get_object_or_404(_topic_queryset(), pk=topic_id)
    initial = {name: getattr(topic, name) for name in TopicSettingsForm.base_fields}
    form = TopicSettingsForm(request.POST or None, initial=initial)
    if topic.is_multiclass:
        for name in MULTICLASS_UNUSED_SETTINGS:
            del form.fields[name]
    _scorer_offered(form, corpus_id=topic.corpus_id)
    if request.method == "POST" and form.is_valid():
        values = {"confidence": topic.confidence, "target_recall": topic.target_recall, **form.cleaned_data}
        try:
            topic_settings_update(topic=topic, **values)
        except ApplicationError as exc:
            form_error(form, exc)
        else:
            messages.success(request, "Topic settings saved.")
            return redirect("analyst:topic", topic_id=topic.pk)
    template = "analyst/topic_set_edit.html" if topic.is_multiclass else "analyst/topic_edit.html"
    return render(request, template, {"topic": topic, "form": form, "committed": topic_committed_cost(topic=topic)})


def _nothing_to_draw_message(*, half_width: float) -> str:
    return (f"Nothing to draw: every region already holds the documents the plan at ±{half_width:g} asks for, so no "
            "HIT would be created and nothing spent. Choose a narrower half-width (or a larger dependence check) "
            "to add documents.")


def _launch(request: HttpRequest, topic: Topic, form: LaunchForm | TopUpForm, *, step: str) -> HttpResponse:
    """Show what a launch or top-up draws and costs; draw (in a task) only once that is confirmed unchanged.

    The first POST renders the confirmation page (nothing is drawn). The second carries the cost
    and the fingerprint of the figures shown; the launch service compares them with a fresh quote
    under the topic's lock, and a changed plan or budget is refused with the new figures instead of
    spending a different amount. The guard (annotation.services.topics.launch) raises the errors the
    task would (SamplingError, BudgetExceeded), so a launch that cannot happen is refused on the page
    instead of failing unseen in a worker.
    """
    half_width = form.cleaned_data["half_width"]
    top_up = step == "topup"
    context: dict = {"topic": topic, "step": step, "changed": None,
                     "action": reverse(f"analyst:topic_{step}", args=[topic.pk])}
    try:
        complement = form.cleaned_data["complement"]
        if complement is None:  # empty: the plan's size, as the page's quote (the check is in the default plan)
            complement = complement_default(topic=topic, half_width=half_width)
        if not form.confirming:
            context["quote"] = launch_service.topic_launch_check(topic_id=topic.pk, half_width=half_width, complement=complement,
                                                  top_up=top_up)
            return render(request, "analyst/topic_launch_confirm.html", context)
        quote = launch_service.topic_launch(topic_id=topic.pk, half_width=half_width, complement=complement,
                             confirm_cost=form.cleaned_data["confirm_cost"],
                             confirm_fingerprint=form.cleaned_data["confirm_fingerprint"] or "", top_up=top_up)
    except launch_service.NothingToDraw:
        messages.warning(request, _nothing_to_draw_message(half_width=half_width))
        return redirect("analyst:topic", topic_id=topic.pk)
    except launch_service.LaunchCostChanged as exc:
        shown_cost, fresh = exc.confirmed_cost, exc.quote
        assert shown_cost is not None and fresh is not None  # the topic's launch sets both
        context["quote"] = fresh
        context["changed"] = (f"Nothing was drawn: the figures changed since the confirmation page "
                              f"(it showed ${shown_cost:.2f}; now ${fresh.cost:.2f}, with the budget and plan "
                              "below). Check them and confirm again.")
        return render(request, "analyst/topic_launch_confirm.html", context, status=409)
    except launch_service.LaunchRefused as exc:  # archived, or a status that takes no launch
        messages.error(request, exc.message)
        return redirect("analyst:topic", topic_id=topic.pk)
    detail = f" ({quote.check_documents} of them for the dependence check)" if quote.check_documents else ""
    bound = "" if quote.exact else "at most "
    messages.success(request, f"The sample is being drawn: {bound}{quote.documents} documents{detail} into "
                              f"{bound}{quote.hits} HITs, ${quote.cost:.2f} if every assignment is done. "
                              "The HITs count on this page shows them once they are created.")
    return redirect("analyst:topic", topic_id=topic.pk)


def _launch_step(request: HttpRequest, topic_id: int, *, step: str) -> HttpResponse:
    topic = get_object_or_404(_topic_queryset(), pk=topic_id)
    if topic.is_multiclass:
        messages.info(request, TOPIC_SET_LAUNCH_MESSAGE)
        return redirect("analyst:topic_set", topic_id=topic.pk)
    form = LaunchForm(request.POST) if step == "launch" else TopUpForm(request.POST)
    if not form.is_valid():
        messages.error(request, _form_message(form))
        return redirect("analyst:topic", topic_id=topic_id)
    return _launch(request, topic, form, step=step)


@role_required(CONFIGURE)
@require_POST
def topic_launch(request: HttpRequest, topic_id: int) -> HttpResponse:
    """First POST: the confirmation page with documents, judgments, HITs and cost; second POST: the launch."""
    return _launch_step(request, topic_id, step="launch")


@role_required(CONFIGURE)
@require_POST
def topic_topup(request: HttpRequest, topic_id: int) -> HttpResponse:
    """Top-up in the same two steps as the launch."""
    return _launch_step(request, topic_id, step="topup")


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
    """The HIT as a worker will see it: the annotator's own template over documents of the pair's overlap
    (a topic set, which has no pair: the first documents of the corpus, with its classes to choose from).

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
    source = "the first documents of the corpus" if topic.is_multiclass else "documents from the pair's overlap"
    messages.info(request, f"Preview of a HIT as annotators see it ({source}). Nothing you answer here is recorded.")
    context = {"topic": topic, "rows": [(_PreviewItem(d), "", paragraphs(d.text)) for d in documents], "editable": True,
               "assignment": None, "error": None, "preview": True, "documents": documents,
               "allow_unsure": topic.allow_unsure, "multiclass": topic.is_multiclass,
               "classes": topic_set_classes(topic=topic) if topic.is_multiclass else []}
    return render(request, "annotator/assignment.html", context)


@role_required(CONFIGURE)
def topic_rename_view(request: HttpRequest, topic_id: int) -> HttpResponse:
    topic = get_object_or_404(Topic, pk=topic_id)
    form = RenameForm(request.POST or None, initial={"name": topic.name})
    if request.method == "POST" and form.is_valid():
        old = topic.name
        try:
            topic_rename(topic=topic, name=form.cleaned_data["name"])
        except ApplicationError as exc:
            form_error(form, exc)
        else:
            messages.success(request, f"Topic “{old}” is now called “{topic.name}”.")
            return redirect("analyst:topic", topic_id=topic.pk)
    return render(request, "analyst/topic_rename.html", {"topic": topic, "form": form})


@role_required(CONFIGURE)
def topic_archive_view(request: HttpRequest, topic_id: int) -> HttpResponse:
    """GET: what archiving does, with a Confirm button; POST: archive (sampling stops, the report stays)."""
    topic = get_object_or_404(Topic, pk=topic_id)
    if request.method == "POST":
        topic_archive(topic=topic)
        messages.success(request, f"Topic “{topic.name}” archived: it hands out no new HITs and takes no new "
                                  "samples. Its report stays readable.")
        return redirect("analyst:topic", topic_id=topic.pk)
    return render(request, "analyst/topic_archive.html",
                  {"topic": topic, "progress": topic_progress(topic=topic)})


@role_required(CONFIGURE)
def topic_unarchive_view(request: HttpRequest, topic_id: int) -> HttpResponse:
    """GET: what unarchiving does, with a Confirm button (issue 12); POST: unarchive (it comes back paused)."""
    topic = get_object_or_404(Topic, pk=topic_id)
    if request.method == "POST":
        if topic.archived_at is None:
            messages.info(request, f"Topic “{topic.name}” is not archived: nothing changed.")
            return redirect("analyst:topic", topic_id=topic.pk)
        topic = topic_unarchive(topic=topic)
        state = "paused: resume it to hand out HITs again" if topic.status == Topic.Status.PAUSED else "a draft"
        messages.success(request, f"Topic “{topic.name}” is back in the list, {state}.")
        return redirect("analyst:topic", topic_id=topic.pk)
    return render(request, "analyst/topic_unarchive.html",
                  {"topic": topic, "progress": topic_progress(topic=topic)})


@role_required(CONFIGURE)
def topic_delete_view(request: HttpRequest, topic_id: int) -> HttpResponse:
    """GET: what deleting does, or why it is refused; POST: delete (refused with the reason if sampling began)."""
    topic = get_object_or_404(Topic, pk=topic_id)
    if request.method == "POST":
        try:
            topic_delete(topic=topic)
        except ApplicationError as exc:  # sampled since the page was shown: the page now says why
            messages.error(request, exc.message)
            return redirect("analyst:topic_delete", topic_id=topic.pk)
        messages.success(request, f"Topic “{topic.name}” deleted.")
        return redirect("analyst:topics")
    return render(request, "analyst/topic_delete.html",
                  {"topic": topic, "blockers": topic_delete_blockers(topic=topic)})
