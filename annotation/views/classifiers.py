"""Analyst pages: keyword filters with a live preview, uploaded ids/scores, thresholds."""
from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path, PurePath

from django.contrib import messages
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from annotation.forms import (
    ClassifierUploadForm,
    KeywordClassifierForm,
    KeywordPreviewForm,
    NeighbourTermsForm,
    ThresholdForm,
)
from annotation.models import Classifier, Corpus
from annotation.roles import CONFIGURE, role_required
from annotation.services.classifiers import (
    KeywordPreview,
    PreviewDocument,
    classifier_create_from_ids,
    classifier_create_from_scores,
    classifier_create_keywords,
    classifier_set_threshold,
    keyword_preview,
    neighbour_terms_suggest,
)
from annotation.services.retrieved_sets import classifier_bitmap
from annotation.views.highlight import highlight_pieces
from core.errors import ApplicationError
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
    classifiers = Classifier.objects.filter(corpus=corpus).order_by("pk").values_list("pk", "fingerprint")
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
    try:
        preview = _cached_preview(corpus=corpus, terms=terms, fields=fields)
    except ApplicationError as exc:  # a malformed term: shown where the preview would be, next to the input
        return {"preview": None, "preview_message": exc.message}
    overlaps = [{"name": o.classifier_name, "count": o.overlap, "retrieved": o.retrieved_count}
                for o in preview.overlaps]
    return {"preview": {"count": preview.retrieved, "samples": [_sample_context(s) for s in preview.sample],
                        "overlaps": overlaps, "estimated": preview.estimated, "scanned": preview.scanned,
                        "corpus_size": preview.corpus_size}, "preview_message": ""}


@role_required(CONFIGURE)
def classifier_keywords_new(request: HttpRequest, corpus_id: int) -> HttpResponse:
    """Build a keyword filter; "Preview" re-renders with the preview, "Create" saves it."""
    corpus = get_object_or_404(Corpus.objects.defer("documents_bitmap"), pk=corpus_id)
    creating = request.method == "POST" and "create" in request.POST
    if request.method == "POST" and not creating:
        # Preview only: keep what was typed without complaining about a name not chosen yet.
        form = KeywordClassifierForm(corpus=corpus, initial={
            "name": request.POST.get("name", ""), "terms": request.POST.get("terms", ""),
            "fields": request.POST.getlist("fields") or ["title", "text"]})
    else:
        form = KeywordClassifierForm(request.POST or None, corpus=corpus)
    suggest_form = NeighbourTermsForm(prefix="suggest")
    context: dict = {"corpus": corpus, "form": form, "suggest_form": suggest_form, "preview": None}
    if request.method == "POST":
        preview_form = KeywordPreviewForm(request.POST)
        if preview_form.is_valid():
            context.update(keyword_preview_context(corpus=corpus, terms=preview_form.cleaned_data["terms"],
                                                   fields=preview_form.cleaned_data["fields"]))
        if creating and form.is_valid():
            try:
                classifier = classifier_create_keywords(
                    corpus=corpus, name=form.cleaned_data["name"], terms=form.cleaned_data["terms"],
                    fields=form.cleaned_data["fields"])
            except ApplicationError as exc:
                form_error(form, exc)
            else:
                messages.success(request, f"Classifier “{classifier.name}” retrieves {classifier.retrieved_count} documents.")
                return redirect("analyst:classifier", classifier_id=classifier.pk)
    return render(request, "analyst/classifier_keywords.html", context)


@role_required(CONFIGURE)
@require_GET
def keyword_preview_fragment(request: HttpRequest, corpus_id: int) -> HttpResponse:
    """The preview as an HTML fragment (escaped by the template) for the page's live update."""
    corpus = get_object_or_404(Corpus.objects.defer("documents_bitmap"), pk=corpus_id)
    form = KeywordPreviewForm(request.GET)
    form.is_valid()
    context = keyword_preview_context(corpus=corpus, terms=form.cleaned_data.get("terms", []),
                                      fields=form.cleaned_data.get("fields") or ["title", "text"])
    return render(request, "analyst/_keyword_preview.html", context)


@role_required(CONFIGURE)
@require_GET
def neighbour_terms(request: HttpRequest, corpus_id: int) -> HttpResponse:
    """Terms that occur near the seed terms, as a fragment (or a page without JavaScript)."""
    corpus = get_object_or_404(Corpus.objects.defer("documents_bitmap"), pk=corpus_id)
    form = NeighbourTermsForm(request.GET, prefix="suggest")
    suggestions, message = [], ""
    if form.is_valid():
        try:
            suggestions = neighbour_terms_suggest(
                corpus=corpus, seed_terms=form.cleaned_data["seed_terms"], k=form.cleaned_data["k"],
                measure=form.cleaned_data["measure"])
        except ApplicationError as exc:  # shown next to the suggestion form, with its input kept
            message = exc.message
    else:
        message = "; ".join(str(e) for errors in form.errors.values() for e in errors)
    template = "analyst/_neighbour_terms.html" if request.GET.get("fragment") else "analyst/neighbour_terms.html"
    return render(request, template, {"corpus": corpus, "suggest_form": form, "suggestions": suggestions,
                                      "message": message})


def _without_path(message: str, path: Path) -> str:
    """Service errors start with the (temporary) file path; the analyst knows the file as "line N"."""
    prefix = str(path)
    if message.startswith(prefix + ":"):
        rest = message[len(prefix) + 1:]
        head, sep, tail = rest.partition(":")
        return f"Line {head}:{tail}" if sep and head.isdigit() else rest.strip()
    return message.replace(prefix, "the file")


@role_required(CONFIGURE)
def classifier_upload(request: HttpRequest, corpus_id: int) -> HttpResponse:
    corpus = get_object_or_404(Corpus.objects.defer("documents_bitmap"), pk=corpus_id)
    form = ClassifierUploadForm(request.POST or None, request.FILES or None, corpus=corpus)
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        suffix = "".join(PurePath(upload.name).suffixes)[-20:]
        # Streamed to a temporary file: the services read paths, and big files never sit in memory.
        with tempfile.NamedTemporaryFile(suffix=suffix, prefix="classifier-") as tmp:
            for chunk in upload.chunks():
                tmp.write(chunk)
            tmp.flush()
            path = Path(tmp.name)
            try:
                if form.cleaned_data["kind"] == Classifier.Kind.IDS:
                    result = classifier_create_from_ids(corpus=corpus, name=form.cleaned_data["name"], path=path)
                else:
                    result = classifier_create_from_scores(
                        corpus=corpus, name=form.cleaned_data["name"], path=path,
                        threshold=form.cleaned_data["threshold"])
            except ApplicationError as exc:  # includes the services' file errors with line numbers
                form.add_error("file", _without_path(exc.message, path))
            else:
                classifier = result.classifier
                messages.success(request, f"Classifier “{classifier.name}” retrieves {classifier.retrieved_count} documents.")
                if result.unknown_count:
                    unknown = result.unknown_count
                    examples = ", ".join(result.unknown_examples[:5])
                    messages.warning(request, f"{unknown} ids in the file are not documents of this corpus (e.g. {examples}); they were skipped.")
                return redirect("analyst:classifier", classifier_id=classifier.pk)
    return render(request, "analyst/classifier_upload.html", {"corpus": corpus, "form": form})


@role_required(CONFIGURE)
def classifier_detail(request: HttpRequest, classifier_id: int) -> HttpResponse:
    classifier = get_object_or_404(Classifier.objects.select_related("corpus"), pk=classifier_id)
    mine = classifier_bitmap(classifier=classifier)
    overlaps = []
    for other in Classifier.objects.filter(corpus_id=classifier.corpus_id).exclude(pk=classifier.pk).order_by("name"):
        both = mine.intersection_cardinality(classifier_bitmap(classifier=other))
        overlaps.append({"classifier": other, "both": both})
    threshold_form = None
    if classifier.kind == Classifier.Kind.SCORES:
        threshold_form = ThresholdForm(initial={"threshold": classifier.definition.get("threshold")})
    return render(request, "analyst/classifier_detail.html",
                  {"classifier": classifier, "overlaps": overlaps, "threshold_form": threshold_form,
                   "terms": classifier.definition.get("terms", []), "fields": classifier.definition.get("fields", [])})


@role_required(CONFIGURE)
@require_POST
def classifier_threshold(request: HttpRequest, classifier_id: int) -> HttpResponse:
    classifier = get_object_or_404(Classifier, pk=classifier_id)
    form = ThresholdForm(request.POST)
    if classifier.kind != Classifier.Kind.SCORES:
        messages.error(request, "Only a classifier built from scores has a threshold.")
    elif form.is_valid():
        classifier = classifier_set_threshold(classifier=classifier, threshold=form.cleaned_data["threshold"])
        messages.success(request, f"Threshold set; “{classifier.name}” now retrieves {classifier.retrieved_count} documents.")
    else:
        messages.error(request, "Enter a number for the threshold.")
    return redirect("analyst:classifier", classifier_id=classifier_id)
