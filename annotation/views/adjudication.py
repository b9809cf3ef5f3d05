"""The adjudication queue of a topic (issue 27): split and disputed documents, their votes, a final answer.

Analysts only (configure role). The page parses and renders; the rule is
annotation.services.crowd.adjudication.document_adjudicate, which the API calls too.
"""
from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from annotation.models import Adjudication, Document, Topic
from annotation.roles import CONFIGURE, role_required
from annotation.services.crowd.adjudication import (
    QUEUE_LIMIT,
    REASON_MAX_CHARS,
    document_adjudicate,
    topic_adjudication_queue,
)
from core.errors import ApplicationError

RECENT_SHOWN = 50


def _topic(topic_id: int) -> Topic:
    return get_object_or_404(Topic.objects.select_related("corpus").defer("corpus__documents_bitmap"), pk=topic_id)


@role_required(CONFIGURE)
@require_GET
def adjudication_queue(request: HttpRequest, topic_id: int) -> HttpResponse:
    topic = _topic(topic_id)
    recent = (Adjudication.objects.filter(topic=topic).select_related("document", "user")
              .order_by("-updated_at")[:RECENT_SHOWN])
    return render(request, "analyst/adjudication.html", {
        "topic": topic, "items": topic_adjudication_queue(topic=topic), "limit": QUEUE_LIMIT,
        "recent": recent, "reason_max": REASON_MAX_CHARS,
    })


@role_required(CONFIGURE)
@require_POST
def adjudication_record(request: HttpRequest, topic_id: int) -> HttpResponse:
    topic = _topic(topic_id)
    document_id, answer = request.POST.get("document", ""), request.POST.get("label", "")
    if not document_id.isdigit() or answer not in ("yes", "no"):
        raise ApplicationError("Choose a document and whether it is on topic (yes) or off topic (no).")
    document = get_object_or_404(Document, pk=int(document_id), corpus_id=topic.corpus_id)
    adjudication, changed = document_adjudicate(topic=topic, document=document, label=answer == "yes",
                                                reason=request.POST.get("reason", ""), user=request.user)
    words = "on topic" if adjudication.relevant else "off topic"
    if changed:
        messages.success(request, f"Document {document.external_id!r} is adjudicated {words}; the report counts it "
                                  "with this answer from its next recompute.")
    else:
        messages.info(request, f"Document {document.external_id!r} was already adjudicated {words} with this reason: "
                               "nothing changed.")
    return redirect(reverse("analyst:adjudication", args=[topic.pk]))
