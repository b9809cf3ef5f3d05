"""The built-in annotator pages: progress, take the next HIT, judge its documents, submit.

Thin: each view reads through annotation.selectors and writes through
annotation.services.assignments. A worker only ever reaches their own
assignments (anyone else's is a 404, like a missing one).
"""
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from annotation.models import Assignment, Worker
from annotation.roles import ANNOTATE, role_required
from annotation.selectors import annotator_progress, assignment_answers, assignment_for_worker, assignment_items
from annotation.services.assignments import (
    AssignmentExpired,
    AssignmentNotFound,
    ClaimRefused,
    SubmitRefused,
    assignment_claim,
    assignment_submit,
)
from annotation.services.workers import worker_for_user

ANSWER_VALUES = {"1": True, "0": False}


def _worker(request: HttpRequest) -> Worker:
    """The signed-in user's worker: role_required admits signed-in users only."""
    assert request.user.is_authenticated
    return worker_for_user(user=request.user)


@role_required(ANNOTATE)
def annotator_home(request: HttpRequest) -> HttpResponse:
    worker = _worker(request)
    return render(
        request, "annotator/home.html", {"progress": annotator_progress(worker=worker), "worker": worker}
    )


@role_required(ANNOTATE)
@require_POST
def annotator_next(request: HttpRequest) -> HttpResponse:
    worker = _worker(request)
    try:
        assignment = assignment_claim(worker=worker)
    except ClaimRefused as exc:
        messages.error(request, str(exc))
        return redirect("annotator:home")
    if assignment is None:
        messages.info(request, "No HITs are available right now. Please come back later.")
        return redirect("annotator:home")
    return redirect("annotator:assignment", assignment_id=assignment.pk)


def _chosen_answers(post) -> dict[str, str]:
    return {key[4:]: value for key, value in post.items() if key.startswith("doc-") and value in ANSWER_VALUES}


@role_required(ANNOTATE)
@require_http_methods(["GET", "POST"])
def annotator_assignment(request: HttpRequest, assignment_id: int) -> HttpResponse:
    worker = _worker(request)
    try:
        assignment = assignment_for_worker(worker=worker, assignment_id=assignment_id)
    except Assignment.DoesNotExist:
        raise Http404("No such assignment.") from None
    items = assignment_items(assignment=assignment)
    chosen: dict[str, str] = {}
    error = ""
    status = 200
    if request.method == "POST":
        chosen = _chosen_answers(request.POST)
        answers = {int(doc_id): ANSWER_VALUES[value] for doc_id, value in chosen.items() if doc_id.isdigit()}
        try:
            result = assignment_submit(assignment_id=assignment.pk, worker=worker, answers=answers)
        except AssignmentNotFound:
            raise Http404("No such assignment.") from None
        except AssignmentExpired as exc:
            messages.error(request, str(exc))
            return redirect("annotator:home")
        except SubmitRefused as exc:
            error, status = str(exc), 400
        else:
            if not result.replayed:
                messages.success(request, f"Thank you: {result.judgments} answers recorded.")
            if request.POST.get("then") == "next":
                return annotator_next(request)
            return redirect("annotator:home")
    elif assignment.status != Assignment.Status.CLAIMED:
        recorded = assignment_answers(assignment=assignment)
        chosen = {str(doc_id): "1" if value else "0" for doc_id, value in recorded.items()}
    rows = [(item, chosen.get(str(item.document_id), "")) for item in items]
    return render(
        request,
        "annotator/assignment.html",
        {
            "assignment": assignment,
            "topic": assignment.hit.topic,
            "rows": rows,
            "error": error,
            # An expired assignment may still be submitted while its place is free (the service decides).
            "editable": assignment.status in (Assignment.Status.CLAIMED, Assignment.Status.EXPIRED),
        },
        status=status,
    )
