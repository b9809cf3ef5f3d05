"""Analyst page: a retrieved set computed by the team's own engine (Spark, Dask, Ray, pandas), uploaded as a
Roaring bitmap of integer external ids or a Parquet column of ids (annotation/services/classifiers/retrieved_upload.py)."""
from __future__ import annotations

from pathlib import PurePath
from typing import Any

from django import forms
from django.contrib import messages
from django.core.files.uploadedfile import UploadedFile
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from annotation.forms import file_input
from annotation.models import ClassifierBuild, Corpus
from annotation.roles import CONFIGURE, role_required
from annotation.services.classifiers.retrieved_upload import (
    BITMAP_MAX_BYTES,
    UNKNOWN_SHARE_MAX,
    classifier_retrieved_upload_result,
    classifier_retrieved_upload_start,
    parquet_max_rows,
    retrieved_upload_max_bytes,
    retrieved_upload_too_large,
)
from core.errors import ApplicationError
from core.web import form_error

# What a multipart body adds around the file (boundaries, headers, the other fields).
MULTIPART_SLACK = 64 * 1024


class RetrievedUploadForm(forms.Form):
    name = forms.CharField(max_length=200, label="Classifier name")
    file = forms.FileField(label="File", help_text="A serialized Roaring bitmap (.roaring, .bin) or a Parquet file.",
                           widget=file_input(".roaring", ".bin", ".parquet"))
    file_format = forms.ChoiceField(
        label="Format", initial="auto",
        choices=[("auto", "Recognise it (Parquet files start with PAR1)"), ("roaring", "Roaring bitmap"),
                 ("parquet", "Parquet")])
    column = forms.CharField(max_length=200, initial="id", required=False, label="Parquet id column",
                             help_text="Only for Parquet: the column holding the external ids.")

    def __init__(self, *args: Any, max_bytes: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.max_bytes = max_bytes

    def clean_name(self) -> str:
        name = self.cleaned_data["name"].strip()
        if not name:
            raise forms.ValidationError("Enter a name.")
        return name

    def clean_file(self) -> UploadedFile:
        upload = self.cleaned_data["file"]
        if upload.size is not None and upload.size > self.max_bytes:
            raise forms.ValidationError(retrieved_upload_too_large(size=upload.size,
                                                                   name=PurePath(upload.name or "file").name).message)
        return upload


@role_required(CONFIGURE)
def classifier_retrieved_upload(request: HttpRequest, corpus_id: int) -> HttpResponse:
    """Upload a retrieved set: the file is stored and a job resolves it (the build's page polls it); without a
    broker it ran already: the new classifier, or the form with the file's problem."""
    corpus = get_object_or_404(Corpus.objects.defer("documents_bitmap"), pk=corpus_id)
    max_bytes = retrieved_upload_max_bytes()
    context = {"corpus": corpus, "max_bytes": max_bytes, "bitmap_max_bytes": BITMAP_MAX_BYTES,
               "unknown_share_max": UNKNOWN_SHARE_MAX, "parquet_max_rows": parquet_max_rows()}
    if request.method == "POST":
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
        if declared > max_bytes + MULTIPART_SLACK:  # refuse before Django reads the body to disk
            form = RetrievedUploadForm(max_bytes=max_bytes, initial={"file_format": "auto", "column": "id"})
            refused = retrieved_upload_too_large(size=declared, name="The upload").message
            return render(request, "analyst/classifier_retrieved_upload.html",
                          {**context, "form": form, "refused": refused}, status=413)
        form = RetrievedUploadForm(request.POST, request.FILES, max_bytes=max_bytes)
        if form.is_valid():
            upload = form.cleaned_data["file"]
            try:
                build = classifier_retrieved_upload_start(
                    corpus=corpus, name=form.cleaned_data["name"], original_name=PurePath(upload.name or "file").name,
                    chunks=upload.chunks(), file_format=form.cleaned_data["file_format"],
                    column=form.cleaned_data.get("column") or "id", user=request.user)
            except ApplicationError as exc:
                form_error(form, exc)
            else:
                result = classifier_retrieved_upload_result(build=build)
                if result is None and build.status == ClassifierBuild.Status.FAILED:
                    form.add_error(None, build.error)
                elif result is None:  # queued: the build's page polls it
                    messages.info(request, f"“{build.name}”: the file is stored; its ids are being resolved.")
                    return redirect("analyst:classifier_build", build_id=build.pk)
                else:
                    note = ""
                    if result.unknown_count:
                        note = (f" {result.unknown_count:,} ids were no document of the corpus (for example "
                                f"{', '.join(result.unknown_examples[:5])}).")
                    messages.success(request, f"Classifier “{result.classifier.name}”: "
                                              f"{result.classifier.retrieved_count:,} documents retrieved of "
                                              f"{result.read:,} ids read.{note}")
                    return redirect("analyst:classifier", classifier_id=result.classifier.pk)
    else:
        form = RetrievedUploadForm(max_bytes=max_bytes, initial={"file_format": "auto", "column": "id"})
    return render(request, "analyst/classifier_retrieved_upload.html", {**context, "form": form})

