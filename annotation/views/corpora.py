"""Analyst pages: corpora and browser uploads."""
from django.db.models import Count
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from annotation.forms import CorpusUploadForm
from annotation.models import Corpus, CorpusUpload, Topic
from annotation.roles import CONFIGURE, role_required
from annotation.services.corpus_uploads import corpus_upload_create, corpus_upload_enqueue


@role_required(CONFIGURE)
def corpora_list(request: HttpRequest) -> HttpResponse:
    corpora = Corpus.objects.annotate(n_classifiers=Count("classifiers", distinct=True)).defer("documents_bitmap")
    uploads = CorpusUpload.objects.exclude(status=CorpusUpload.Status.DONE)[:10]
    return render(request, "analyst/corpora_list.html", {"corpora": corpora, "uploads": uploads})


@role_required(CONFIGURE)
def corpus_upload(request: HttpRequest) -> HttpResponse:
    form = CorpusUploadForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        upload_file = form.cleaned_data["file"]
        upload = corpus_upload_create(
            corpus_name=form.cleaned_data["corpus_name"], original_name=upload_file.name,
            chunks=upload_file.chunks(), id_field=form.cleaned_data["id_field"].strip(),
            text_fields=form.cleaned_data["text_fields"], user=request.user,
        )
        return redirect("analyst:upload", upload_id=upload.pk)
    return render(request, "analyst/corpus_upload.html", {"form": form})


def _upload_state(upload: CorpusUpload) -> dict:
    return {
        "id": upload.pk, "status": upload.status, "status_label": upload.get_status_display(),
        "progress": upload.progress, "finished": upload.status in (CorpusUpload.Status.DONE, CorpusUpload.Status.FAILED),
        "error_line": upload.error_line, "error_problem": upload.error_problem,
        "corpus_id": upload.corpus_id, "summary": upload.summary,
    }


@role_required(CONFIGURE)
def upload_detail(request: HttpRequest, upload_id: int) -> HttpResponse:
    upload = get_object_or_404(CorpusUpload, pk=upload_id)
    return render(request, "analyst/upload_detail.html", {"upload": upload, "state": _upload_state(upload)})


@role_required(CONFIGURE)
@require_GET
def upload_status(request: HttpRequest, upload_id: int) -> JsonResponse:
    upload = get_object_or_404(CorpusUpload, pk=upload_id)
    return JsonResponse(_upload_state(upload))


@role_required(CONFIGURE)
@require_POST
def upload_retry(request: HttpRequest, upload_id: int) -> HttpResponse:
    """Queue a waiting upload again (after the task queue was down)."""
    upload = get_object_or_404(CorpusUpload, pk=upload_id)
    if upload.status == CorpusUpload.Status.PENDING:
        corpus_upload_enqueue(upload_id=upload.pk)
    return redirect("analyst:upload", upload_id=upload.pk)


@role_required(CONFIGURE)
def corpus_detail(request: HttpRequest, corpus_id: int) -> HttpResponse:
    corpus = get_object_or_404(Corpus.objects.defer("documents_bitmap"), pk=corpus_id)
    classifiers = corpus.classifiers.defer("retrieved_bitmap").order_by("name")
    topics = Topic.objects.filter(corpus=corpus).order_by("name")
    return render(request, "analyst/corpus_detail.html", {"corpus": corpus, "classifiers": classifiers, "topics": topics})
