"""Analyst pages: corpora and browser uploads."""
from __future__ import annotations

from django.contrib import messages
from django.core.files.uploadhandler import FileUploadHandler, StopUpload
from django.core.paginator import Paginator
from django.db.models import Count
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_GET, require_POST

from annotation.forms import CorpusUploadForm
from annotation.models import Corpus, CorpusUpload, Topic
from annotation.roles import CONFIGURE, role_required
from annotation.services.corpora.corpus_uploads import (
    CorpusUploadTooLarge,
    corpus_upload_create,
    corpus_upload_delete,
    corpus_upload_message,
    corpus_upload_retry,
    corpus_upload_retryable,
    too_large_message,
    upload_max_bytes,
)
from core.forms import ListSearchForm
from core.web import form_error

LIST_PAGE_SIZE = 25


@role_required(CONFIGURE)
def corpora_list(request: HttpRequest) -> HttpResponse:
    """Corpora, searchable by name, 25 a page; the latest uploads above them."""
    form = ListSearchForm(request.GET)
    form.is_valid()
    search = (form.cleaned_data.get("q") or "").strip()
    corpora = (Corpus.objects.annotate(n_classifiers=Count("classifiers", distinct=True))
               .defer("documents_bitmap").order_by("name", "pk"))
    if search:
        corpora = corpora.filter(name__icontains=search)
    page = Paginator(corpora, LIST_PAGE_SIZE).get_page(request.GET.get("page"))
    uploads = CorpusUpload.objects.defer("summary").order_by("-created_at", "-pk")[:10]
    return render(request, "analyst/corpora_list.html", {
        "corpora": page.object_list, "page": page, "form": form, "search": search, "uploads": uploads,
        "any_corpus": bool(search) or page.paginator.count > 0 or Corpus.objects.exists(),
    })


class _UploadSizeLimit(FileUploadHandler):
    """Stops reading an uploaded file once it passes CORPUS_UPLOAD_MAX_BYTES, before Django spools the rest of
    it to a temporary file (the rest of the request is read and discarded); the view then says so. The
    service checks the limit again while it copies the file to MEDIA_ROOT."""

    def __init__(self, request: HttpRequest, max_bytes: int) -> None:
        super().__init__(request)
        self.max_bytes = max_bytes
        self.exceeded = False
        self.received = 0

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes | None:
        self.received += len(raw_data)
        if self.received > self.max_bytes:
            self.exceeded = True
            raise StopUpload(connection_reset=False)
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None


@role_required(CONFIGURE)
@csrf_exempt  # the size limit must be in place before the CSRF check reads the body; _corpus_upload checks CSRF
def corpus_upload(request: HttpRequest) -> HttpResponse:
    limit = _UploadSizeLimit(request, upload_max_bytes())
    request.upload_handlers.insert(0, limit)
    return _corpus_upload(request, limit)


@csrf_protect
def _corpus_upload(request: HttpRequest, limit: _UploadSizeLimit) -> HttpResponse:
    form = CorpusUploadForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and limit.exceeded:
        # The file (and any field after it) was never kept: only the reason is shown, with the fields read.
        form.is_valid()
        form.errors.clear()
        form_error(form, CorpusUploadTooLarge(too_large_message(limit.max_bytes)))
    elif request.method == "POST" and form.is_valid():
        upload_file = form.cleaned_data["file"]
        try:
            upload = corpus_upload_create(
                corpus_name=form.cleaned_data["corpus_name"], original_name=upload_file.name,
                chunks=upload_file.chunks(), id_field=form.cleaned_data["id_field"].strip(),
                text_fields=form.cleaned_data["text_fields"], user=request.user,
            )
        except CorpusUploadTooLarge as exc:
            form_error(form, exc)
        else:
            return redirect("analyst:upload", upload_id=upload.pk)
    return render(request, "analyst/corpus_upload.html", {"form": form, "max_bytes": limit.max_bytes},
                  status=413 if limit.exceeded else 200)


def _upload_state(upload: CorpusUpload) -> dict:
    return {
        "id": upload.pk, "status": upload.status, "status_label": upload.get_status_display(),
        "progress": upload.progress, "finished": upload.job_finished,
        "error_line": upload.error_line, "error_problem": upload.error_problem,
        "corpus_id": upload.corpus_id,
        "summary": upload.summary if upload.status == CorpusUpload.Status.DONE else {},
        "message": corpus_upload_message(upload=upload) if upload.status == CorpusUpload.Status.DONE else "",
    }


@role_required(CONFIGURE)
def upload_detail(request: HttpRequest, upload_id: int) -> HttpResponse:
    upload = get_object_or_404(CorpusUpload, pk=upload_id)
    return render(request, "analyst/upload_detail.html", {
        "upload": upload, "state": _upload_state(upload), "retryable": corpus_upload_retryable(upload=upload),
    })


@role_required(CONFIGURE)
@require_GET
def upload_status(request: HttpRequest, upload_id: int) -> JsonResponse:
    upload = get_object_or_404(CorpusUpload, pk=upload_id)
    return JsonResponse(_upload_state(upload))


@role_required(CONFIGURE)
@require_POST
def upload_retry(request: HttpRequest, upload_id: int) -> HttpResponse:
    """Queue an upload again: one waiting after the task queue was down, or one whose import was lost."""
    get_object_or_404(CorpusUpload, pk=upload_id)
    corpus_upload_retry(upload_id=upload_id)
    return redirect("analyst:upload", upload_id=upload_id)


@role_required(CONFIGURE)
@require_POST
def upload_delete(request: HttpRequest, upload_id: int) -> HttpResponse:
    """Delete a finished or failed upload record and its file; the corpus it imported stays."""
    get_object_or_404(CorpusUpload, pk=upload_id)
    upload = corpus_upload_delete(upload_id=upload_id)
    kept = " The corpus it imported is kept." if upload.corpus_id else ""
    messages.success(request, f"The upload of “{upload.corpus_name}” ({upload.original_name}) was deleted.{kept}")
    return redirect("analyst:corpora")


@role_required(CONFIGURE)
def corpus_detail(request: HttpRequest, corpus_id: int) -> HttpResponse:
    corpus = get_object_or_404(Corpus.objects.defer("documents_bitmap"), pk=corpus_id)
    # Archived classifiers and topics are listed on their own pages ("show archived"), not here.
    classifiers = corpus.classifiers.filter(archived_at__isnull=True).defer("retrieved_bitmap").order_by("name")
    topics = Topic.objects.filter(corpus=corpus, archived_at__isnull=True).order_by("name")
    return render(request, "analyst/corpus_detail.html", {"corpus": corpus, "classifiers": classifiers, "topics": topics})
