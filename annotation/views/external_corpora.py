"""Analyst pages of corpora that stay in the team's engine (issue 29): register one, see its size and snapshot,
test the connection. Parse, call annotation.services.corpora.backends.external (the API and the command call
the same), render."""
from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import path
from django.views.decorators.http import require_http_methods, require_POST

from annotation.models import ExternalCorpusSource
from annotation.roles import CONFIGURE, role_required
from annotation.services.corpora.backends.external import external_corpus_check, external_corpus_register
from core.errors import ApplicationError


class ExternalCorpusForm(forms.Form):
    name = forms.CharField(max_length=200)
    engine = forms.ChoiceField(choices=ExternalCorpusSource.Engine.choices, initial=ExternalCorpusSource.Engine.DUCKDB)
    location = forms.CharField(max_length=1000, help_text="A folder of Parquet files (or one file), as the server sees it.")
    id_field = forms.CharField(max_length=200, initial="id")
    title_field = forms.CharField(max_length=200, initial="title", required=False)
    text_fields = forms.CharField(max_length=1000, initial="text", help_text="Comma-separated columns shown to annotators.")
    connection_env = forms.CharField(
        max_length=100, required=False, label="Connection (environment variable name)",
        help_text="The NAME of an environment variable of the server, e.g. SPARK_MASTER_URL — never a password.")
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False)


@role_required(CONFIGURE)
@require_http_methods(["GET", "POST"])
def external_corpus_new(request: HttpRequest) -> HttpResponse:
    form = ExternalCorpusForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            source = external_corpus_register(
                name=data["name"], engine=data["engine"], location=data["location"], id_field=data["id_field"],
                title_field=data["title_field"], text_fields=[f.strip() for f in data["text_fields"].split(",")],
                connection_env=data["connection_env"].strip(), description=data["description"])
        except ApplicationError as exc:
            form.add_error(None, exc.message)
        else:
            messages.success(request, f"Corpus {source.corpus.name!r} registered: {source.document_count:,} documents.")
            return redirect("analyst:external_corpus", corpus_id=source.corpus_id)
    return render(request, "analyst/external_corpus_form.html", {"form": form})


@role_required(CONFIGURE)
@require_http_methods(["GET"])
def external_corpus_detail(request: HttpRequest, corpus_id: int) -> HttpResponse:
    source = get_object_or_404(ExternalCorpusSource.objects.select_related("corpus"), corpus_id=corpus_id)
    return render(request, "analyst/external_corpus_detail.html", {
        "source": source, "corpus": source.corpus, "files": source.snapshot_manifest or [],
        "sampled": source.corpus.documents.count()})


@role_required(CONFIGURE)
@require_POST
def external_corpus_check_view(request: HttpRequest, corpus_id: int) -> HttpResponse:
    source = get_object_or_404(ExternalCorpusSource.objects.select_related("corpus"), corpus_id=corpus_id)
    check = external_corpus_check(source=source)
    if not check.ok:
        messages.error(request, f"The engine could not read the corpus: {check.error}")
    elif check.changes:
        messages.warning(request, f"Connected: {check.size:,} documents. Changed since the last check: "
                                  + "; ".join(check.changes[:10]))
    else:
        messages.success(request, f"Connected: {check.size:,} documents, unchanged.")
    return redirect("analyst:external_corpus", corpus_id=corpus_id)


# Included in annotation/urls_analyst.py by one line: path("", include("annotation.views.external_corpora")).
urlpatterns = [
    path("corpora/external/new/", external_corpus_new, name="external_corpus_new"),
    path("corpora/<int:corpus_id>/external/", external_corpus_detail, name="external_corpus"),
    path("corpora/<int:corpus_id>/external/check/", external_corpus_check_view, name="external_corpus_check"),
]
