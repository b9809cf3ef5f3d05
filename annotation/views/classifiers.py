"""Analyst pages: keyword filters with a live preview, uploaded ids/scores, thresholds."""
from __future__ import annotations

import hashlib
from pathlib import PurePath
from typing import cast

from django import forms
from django.contrib import messages
from django.core.cache import cache
from django.core.paginator import Paginator
from django.forms import BaseForm
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from annotation.forms import (
    ClassifierUploadForm,
    KeywordClassifierForm,
    KeywordPreviewForm,
    NeighbourTermsForm,
    RenameForm,
    ThresholdForm,
)
from annotation.models import Classifier, ClassifierBuild, Corpus
from annotation.roles import CONFIGURE, role_required
from annotation.selectors import classifiers_for_list
from annotation.services.classifiers.classifier import (
    ClassifierFileError,
    KeywordPreview,
    PreviewDocument,
    classifier_archive,
    classifier_coverage_warnings,
    classifier_delete,
    classifier_delete_blockers,
    classifier_rename,
    classifier_set_threshold,
    classifier_unarchive,
    keyword_preview,
)
from annotation.services.classifiers.classifier_builds import (
    classifier_build_file_save,
    classifier_build_start,
    classifier_build_state,
)
from annotation.services.classifiers.keywords import corpus_keyword_fields
from annotation.services.classifiers.kinds import kind_get
from annotation.services.classifiers.term_suggestions import MIN_SEED_DOCUMENTS, TermSuggestions, term_suggestions_rank
from annotation.services.corpora.retrieved_sets import classifier_bitmap
from annotation.views.highlight import highlight_pieces
from core.errors import ApplicationError
from core.forms import ListSearchForm
from core.web import form_error


def _sample_context(sample: PreviewDocument) -> dict:
    """One previewed document: title and text cut into pieces (escaped by the template) around the matches."""
    return {"external_id": sample.external_id,
            "title": highlight_pieces(sample.title, sample.title_spans, window=None),
            "text": highlight_pieces(sample.text, sample.text_spans, window=320)}


PREVIEW_CACHE_SECONDS = 120


def _cached_preview(*, corpus: Corpus, terms: list[str], fields: list[str]) -> KeywordPreview:
    """keyword_preview, remembered briefly: typing then pressing Preview asks for the same terms twice.

    The key covers what the answer depends on: the corpus size and the corpus's classifiers (overlaps).
    """
    classifiers = (Classifier.objects.filter(corpus=corpus, archived_at__isnull=True).order_by("pk")
                   .values_list("pk", "fingerprint"))
    raw = repr((corpus.pk, corpus.created_at.isoformat(), corpus.document_count, list(classifiers), sorted(terms),
                sorted(fields)))
    key = "keyword-preview:" + hashlib.sha256(raw.encode()).hexdigest()
    preview = cache.get(key)
    if preview is None:
        preview = keyword_preview(corpus=corpus, terms=terms, fields=fields, sample_size=10)
        cache.set(key, preview, PREVIEW_CACHE_SECONDS)
    return preview


def keyword_preview_context(*, corpus: Corpus, terms: list[str], fields: list[str]) -> dict:
    """Everything the preview fragment shows; a term the service refuses becomes the fragment's message."""
    if not terms:
        return {"preview": None, "preview_message": "Type a term to see what it retrieves."}
    if not fields:  # nothing ticked searches nothing: never every field in the analyst's place
        return {"preview": None, "preview_message": "Tick at least one field under “Search in” to see what the "
                                                    "terms retrieve."}
    try:
        preview = _cached_preview(corpus=corpus, terms=terms, fields=fields)
    except ApplicationError as exc:  # a malformed term: shown where the preview would be, next to the input
        return {"preview": None, "preview_message": exc.message}
    overlaps = [{"name": o.classifier_name, "count": o.overlap, "retrieved": o.retrieved_count}
                for o in preview.overlaps]
    warnings = classifier_coverage_warnings(retrieved=preview.retrieved, corpus_size=preview.corpus_size,
                                            estimated=preview.estimated)
    return {"preview": {"count": preview.retrieved, "samples": [_sample_context(s) for s in preview.sample],
                        "overlaps": overlaps, "estimated": preview.estimated, "scanned": preview.scanned,
                        "corpus_size": preview.corpus_size, "warnings": warnings}, "preview_message": ""}


def _field_choices(corpus: Corpus) -> list[tuple[str, str]]:
    """title, text and the corpus's metadata fields holding text (issue 13: classifiers on any field)."""
    labels = {"title": "Title", "text": "Text"}
    return [(name, labels.get(name, name)) for name in corpus_keyword_fields(corpus=corpus)]


def _offer_fields(form: BaseForm, choices: list[tuple[str, str]]) -> None:
    cast(forms.MultipleChoiceField, form.fields["fields"]).choices = choices


@role_required(CONFIGURE)
def classifier_keywords_new(request: HttpRequest, corpus_id: int) -> HttpResponse:
    """Build a keyword filter; "Preview" re-renders with the preview, "Create" starts its build (a task)."""
    corpus = get_object_or_404(Corpus.objects.defer("documents_bitmap"), pk=corpus_id)
    creating = request.method == "POST" and "create" in request.POST
    if request.method == "POST" and not creating:
        # Preview only: keep what was typed without complaining about a name not chosen yet.
        form = KeywordClassifierForm(corpus=corpus, initial={
            "name": request.POST.get("name", ""), "terms": request.POST.get("terms", ""),
            "fields": request.POST.getlist("fields")})
    else:
        form = KeywordClassifierForm(request.POST or None, corpus=corpus)
    choices = _field_choices(corpus)
    _offer_fields(form, choices)
    suggest_form = NeighbourTermsForm(prefix="suggest")
    context: dict = {"corpus": corpus, "form": form, "suggest_form": suggest_form, "preview": None}
    if request.method == "POST":
        preview_form = KeywordPreviewForm(request.POST)
        _offer_fields(preview_form, choices)
        if preview_form.is_valid():
            context.update(keyword_preview_context(corpus=corpus, terms=preview_form.cleaned_data["terms"],
                                                   fields=preview_form.cleaned_data["fields"]))
        if creating and form.is_valid():
            try:
                build = classifier_build_start(
                    corpus=corpus, name=form.cleaned_data["name"], kind=Classifier.Kind.KEYWORDS,
                    definition={"terms": form.cleaned_data["terms"], "fields": form.cleaned_data["fields"]},
                    user=request.user)
            except ApplicationError as exc:
                form_error(form, exc)
            else:
                return _after_start(request, build)
    return render(request, "analyst/classifier_keywords.html", context)


def _after_start(request: HttpRequest, build: ClassifierBuild) -> HttpResponse:
    """The classifier when the build already finished (no broker: it ran in this request), else its build page."""
    if build.status != ClassifierBuild.Status.DONE or build.classifier is None:
        return redirect("analyst:classifier_build", build_id=build.pk)
    classifier = build.classifier
    messages.success(request, f"Classifier “{classifier.name}” retrieves {classifier.retrieved_count} documents.")
    state = classifier_build_state(build=build)
    if state["unknown_count"]:
        examples = ", ".join(state["unknown_examples"][:5])
        messages.warning(request, f"{state['unknown_count']} ids in the file are not documents of this corpus "
                                  f"(e.g. {examples}); they were skipped.")
    _warn_coverage(request, classifier)
    return redirect("analyst:classifier", classifier_id=classifier.pk)


@role_required(CONFIGURE)
@require_GET
def keyword_preview_fragment(request: HttpRequest, corpus_id: int) -> HttpResponse:
    """The preview as an HTML fragment (escaped by the template) for the page's live update."""
    corpus = get_object_or_404(Corpus.objects.defer("documents_bitmap"), pk=corpus_id)
    form = KeywordPreviewForm(request.GET)
    _offer_fields(form, _field_choices(corpus))
    form.is_valid()
    context = keyword_preview_context(corpus=corpus, terms=form.cleaned_data.get("terms", []),
                                      fields=form.cleaned_data.get("fields") or [])
    return render(request, "analyst/_keyword_preview.html", context)


@role_required(CONFIGURE)
@require_GET
def neighbour_terms(request: HttpRequest, corpus_id: int) -> HttpResponse:
    """Terms that occur near the seed terms, as a fragment (or a page without JavaScript)."""
    corpus = get_object_or_404(Corpus.objects.defer("documents_bitmap"), pk=corpus_id)
    form = NeighbourTermsForm(request.GET, prefix="suggest")
    result: TermSuggestions | None = None
    message = ""
    if form.is_valid():
        try:
            result = term_suggestions_rank(
                corpus=corpus, seed_terms=form.cleaned_data["seed_terms"], k=form.cleaned_data["k"],
                measure=form.cleaned_data["measure"])
        except ApplicationError as exc:  # shown next to the suggestion form, with its input kept
            message = exc.message
    else:
        message = "; ".join(str(e) for errors in form.errors.values() for e in errors)
    template = "analyst/_neighbour_terms.html" if request.GET.get("fragment") else "analyst/neighbour_terms.html"
    return render(request, template, {
        "corpus": corpus, "suggest_form": form, "suggestions": result.terms if result else [], "result": result,
        "too_few_seeds": result is not None and result.seed_documents < MIN_SEED_DOCUMENTS,
        "min_seed_documents": MIN_SEED_DOCUMENTS, "message": message})


def _file_problem(exc: ClassifierFileError) -> str:
    """A file's problem as the analyst knows the file: "Line N: problem" (or the problem alone)."""
    return f"Line {exc.line}: {exc.problem}" if exc.line is not None else exc.problem


@role_required(CONFIGURE)
def classifier_upload(request: HttpRequest, corpus_id: int) -> HttpResponse:
    corpus = get_object_or_404(Corpus.objects.defer("documents_bitmap"), pk=corpus_id)
    form = ClassifierUploadForm(request.POST or None, request.FILES or None, corpus=corpus)
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        # Streamed to MEDIA_ROOT (big files never sit in memory); the build task reads it, then removes it.
        relative = classifier_build_file_save(original_name=upload.name, chunks=upload.chunks())
        definition = {"file": relative, "source": PurePath(upload.name).name,
                      "threshold": form.cleaned_data.get("threshold")}
        try:
            build = classifier_build_start(corpus=corpus, name=form.cleaned_data["name"],
                                           kind=form.cleaned_data["kind"], definition=definition, user=request.user)
        except ClassifierFileError as exc:  # the file's format, with its line (the file is removed)
            form.add_error("file", _file_problem(exc))
        except ApplicationError as exc:  # the name
            form_error(form, exc)
        else:
            return _after_start(request, build)
    return render(request, "analyst/classifier_upload.html", {"corpus": corpus, "form": form})


@role_required(CONFIGURE)
@require_GET
def classifier_build_detail(request: HttpRequest, build_id: int) -> HttpResponse:
    """A classifier being built: progress (the page polls the status), then a link to it, or why it failed."""
    build = get_object_or_404(ClassifierBuild.objects.select_related("corpus").defer("corpus__documents_bitmap"),
                              pk=build_id)
    definition = build.definition if isinstance(build.definition, dict) else {}
    asked = definition.get("request") or (definition.get("build") or {}).get("request") or {}  # a trained build's
    return render(request, "analyst/classifier_build.html",
                  {"build": build, "state": classifier_build_state(build=build), "asked": asked})


@role_required(CONFIGURE)
@require_GET
def classifier_build_status(request: HttpRequest, build_id: int) -> JsonResponse:
    build = get_object_or_404(ClassifierBuild.objects.defer("definition"), pk=build_id)
    state = classifier_build_state(build=build)
    state["classifier_url"] = (reverse("analyst:classifier", args=[build.classifier_id])
                               if build.classifier_id else None)
    return JsonResponse(state)


@role_required(CONFIGURE)
def classifier_detail(request: HttpRequest, classifier_id: int) -> HttpResponse:
    classifier = get_object_or_404(Classifier.objects.select_related("corpus"), pk=classifier_id)
    mine = classifier_bitmap(classifier=classifier)
    overlaps = []
    others = Classifier.objects.filter(corpus_id=classifier.corpus_id, archived_at__isnull=True)
    for other in others.exclude(pk=classifier.pk).order_by("name"):
        both = mine.intersection_cardinality(classifier_bitmap(classifier=other))
        overlaps.append({"classifier": other, "both": both})
    threshold_form = None
    if kind_get(classifier.kind).has_threshold:
        threshold_form = ThresholdForm(initial={"threshold": classifier.definition.get("threshold")})
    return render(request, "analyst/classifier_detail.html",
                  {"classifier": classifier, "overlaps": overlaps, "threshold_form": threshold_form,
                   "terms": classifier.definition.get("terms", []), "fields": classifier.definition.get("fields", []),
                   "warnings": classifier_coverage_warnings(retrieved=classifier.retrieved_count,
                                                            corpus_size=classifier.corpus.document_count)})


@role_required(CONFIGURE)
@require_POST
def classifier_threshold(request: HttpRequest, classifier_id: int) -> HttpResponse:
    classifier = get_object_or_404(Classifier, pk=classifier_id)
    form = ThresholdForm(request.POST)
    if not kind_get(classifier.kind).has_threshold:
        messages.error(request, "Only a classifier built from scores has a threshold.")
    elif form.is_valid():
        classifier = classifier_set_threshold(classifier=classifier, threshold=form.cleaned_data["threshold"])
        messages.success(request, f"Threshold set; “{classifier.name}” now retrieves {classifier.retrieved_count} documents.")
        _warn_coverage(request, classifier)
    else:
        messages.error(request, "Enter a number for the threshold.")
    return redirect("analyst:classifier", classifier_id=classifier_id)


def _warn_coverage(request: HttpRequest, classifier: Classifier) -> None:
    """A classifier matching nothing or most of the corpus is kept, with a warning (issue 12)."""
    for warning in classifier_coverage_warnings(retrieved=classifier.retrieved_count,
                                                corpus_size=classifier.corpus.document_count):
        messages.warning(request, f"“{classifier.name}”: {warning}")


LIST_PAGE_SIZE = 25


@role_required(CONFIGURE)
@require_GET
def classifiers_list(request: HttpRequest) -> HttpResponse:
    """Every classifier, searchable by name, 25 a page; archived ones only with "show archived"."""
    form = ListSearchForm(request.GET)
    form.is_valid()
    search, archived = form.cleaned_data.get("q") or "", bool(form.cleaned_data.get("archived"))
    page = Paginator(classifiers_for_list(search=search, archived=archived), LIST_PAGE_SIZE).get_page(
        request.GET.get("page"))
    return render(request, "analyst/classifier_list.html",
                  {"form": form, "page": page, "search": search, "archived": archived})


def _classifier(classifier_id: int) -> Classifier:
    return get_object_or_404(Classifier.objects.select_related("corpus").defer("retrieved_bitmap",
                                                                              "corpus__documents_bitmap"),
                             pk=classifier_id)


@role_required(CONFIGURE)
def classifier_rename_view(request: HttpRequest, classifier_id: int) -> HttpResponse:
    classifier = _classifier(classifier_id)
    form = RenameForm(request.POST or None, initial={"name": classifier.name})
    if request.method == "POST" and form.is_valid():
        old = classifier.name
        try:
            classifier_rename(classifier=classifier, name=form.cleaned_data["name"])
        except ApplicationError as exc:
            form_error(form, exc)
        else:
            messages.success(request, f"Classifier “{old}” is now called “{classifier.name}”.")
            return redirect("analyst:classifier", classifier_id=classifier.pk)
    return render(request, "analyst/classifier_rename.html", {"classifier": classifier, "form": form})


@role_required(CONFIGURE)
def classifier_archive_view(request: HttpRequest, classifier_id: int) -> HttpResponse:
    """GET: what archiving does, with a Confirm button; POST: archive."""
    classifier = _classifier(classifier_id)
    if request.method == "POST":
        classifier_archive(classifier=classifier)
        messages.success(request, f"Classifier “{classifier.name}” archived: it is hidden from lists and from the "
                                  "new-topic form. Topics using it and their reports are unchanged.")
        return redirect("analyst:classifier", classifier_id=classifier.pk)
    return render(request, "analyst/classifier_archive.html", {"classifier": classifier})


@role_required(CONFIGURE)
def classifier_unarchive_view(request: HttpRequest, classifier_id: int) -> HttpResponse:
    """GET: what unarchiving does, with a Confirm button (issue 12: never on one click); POST: unarchive."""
    classifier = _classifier(classifier_id)
    if request.method == "POST":
        if classifier.archived_at is None:
            messages.info(request, f"Classifier “{classifier.name}” is not archived: nothing changed.")
            return redirect("analyst:classifier", classifier_id=classifier.pk)
        classifier = classifier_unarchive(classifier=classifier)
        messages.success(request, f"Classifier “{classifier.name}” is back in lists and forms.")
        return redirect("analyst:classifier", classifier_id=classifier.pk)
    return render(request, "analyst/classifier_unarchive.html", {"classifier": classifier})


@role_required(CONFIGURE)
def classifier_delete_view(request: HttpRequest, classifier_id: int) -> HttpResponse:
    """GET: what deleting does, or why it is refused; POST: delete (refused with the reason if still in use)."""
    classifier = _classifier(classifier_id)
    if request.method == "POST":
        try:
            classifier_delete(classifier=classifier)
        except ApplicationError as exc:  # taken into use since the page was shown: the page now says why
            messages.error(request, exc.message)
            return redirect("analyst:classifier_delete", classifier_id=classifier.pk)
        messages.success(request, f"Classifier “{classifier.name}” deleted.")
        return redirect("analyst:corpus", corpus_id=classifier.corpus_id)
    return render(request, "analyst/classifier_delete.html",
                  {"classifier": classifier, "blockers": classifier_delete_blockers(classifier=classifier)})
