"""The built-in annotator pages: progress, take the next HIT, judge its documents, submit or return it.

Thin: each view reads through annotation.selectors and writes through
annotation.services.assignments. A worker only ever reaches their own
assignments (anyone else's is a 404, like a missing one).

The HIT page's script (static/js/annotator.js) keeps the answers in the
browser until the server acknowledges them and submits with
``Accept: application/json``: the submit view then answers with JSON
(``{"ok", "location", "error"}``) instead of a redirect, so the script knows
the answers were recorded before it forgets them. Without the script the form
posts as usual.
"""
from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from annotation.models import Assignment, Worker
from annotation.roles import ANNOTATE, role_required
from annotation.selectors import (
    annotator_correctable,
    annotator_progress,
    annotator_queue,
    assignment_answers,
    assignment_for_worker,
    assignment_items,
)
from annotation.services.assignments import (
    RELEASED_FEEDBACK,
    AssignmentExpired,
    AssignmentNotFound,
    ClaimRefused,
    CorrectionRefused,
    ReleaseRefused,
    SubmitRefused,
    assignment_claim_fresh,
    assignment_correctable,
    assignment_release,
    assignment_submit,
    judgment_correct,
)
from annotation.services.workers import worker_for_user
from annotation.views.highlight import paragraphs

# "u" (unsure) is accepted only where the topic allows it (the service refuses it otherwise).
ANSWER_VALUES: dict[str, bool | None] = {"1": True, "0": False, "u": None}
ANSWER_CODES = {value: code for code, value in ANSWER_VALUES.items()}
STALE_TAB_MESSAGE = (
    "This HIT had already been submitted (from another tab or window) with different answers. "
    "The answers submitted first are the ones recorded; the ones you just sent were not."
)


def _worker(request: HttpRequest) -> Worker:
    """The signed-in user's worker: role_required admits signed-in users only."""
    assert request.user.is_authenticated
    return worker_for_user(user=request.user)


def _wants_json(request: HttpRequest) -> bool:
    return "application/json" in request.headers.get("Accept", "")


@role_required(ANNOTATE)
def annotator_home(request: HttpRequest) -> HttpResponse:
    worker = _worker(request)
    return render(
        request,
        "annotator/home.html",
        {
            "progress": annotator_progress(worker=worker),
            "worker": worker,
            "correctable": annotator_correctable(worker=worker),
        },
    )


def _claim_next(request: HttpRequest, worker: Worker) -> Assignment | None:
    """The worker's next HIT (the one in progress, else a fresh one); None, with a message, if there is none."""
    try:
        assignment = assignment_claim_fresh(worker=worker)
    except ClaimRefused as exc:
        messages.error(request, str(exc))
        return None
    if assignment is None:
        messages.info(request, "No HITs are available right now. Please come back later.")
    return assignment


@role_required(ANNOTATE)
@require_POST
def annotator_next(request: HttpRequest) -> HttpResponse:
    assignment = _claim_next(request, _worker(request))
    if assignment is None:
        return redirect("annotator:home")
    return redirect("annotator:assignment", assignment_id=assignment.pk)


def _chosen_answers(post) -> dict[str, str]:
    return {key[4:]: value for key, value in post.items() if key.startswith("doc-") and value in ANSWER_VALUES}


def _submit(request: HttpRequest, worker: Worker, assignment_id: int, chosen: dict[str, str]) -> HttpResponse | str:
    """Record the answers; a response to send, or the message of a refusal to show above the form."""
    answers = {int(doc_id): ANSWER_VALUES[value] for doc_id, value in chosen.items() if doc_id.isdigit()}
    try:
        result = assignment_submit(assignment_id=assignment_id, worker=worker, answers=answers)
    except AssignmentNotFound:
        raise Http404("No such assignment.") from None
    except AssignmentExpired as exc:
        messages.error(request, str(exc))
        if _wants_json(request):
            return JsonResponse({"ok": False, "error": str(exc), "location": reverse("annotator:home")}, status=409)
        return redirect("annotator:home")
    except SubmitRefused as exc:
        return str(exc)
    if result.replayed and result.differs:
        messages.warning(request, STALE_TAB_MESSAGE)
    elif not result.replayed:
        messages.success(
            request,
            f"Thank you: {result.judgments} answers recorded. Until the other workers have finished these "
            "documents you can change them (\"Change my answers\" on the Annotate page).",
        )
    if request.POST.get("then") != "next":
        location = reverse("annotator:home")
    else:
        # Submit and take the next HIT in this one request (issue 15 item 8): the claim runs here.
        upcoming = _claim_next(request, worker)
        if upcoming is None:
            location = reverse("annotator:home")
        elif not _wants_json(request):
            # The form (no script): the next HIT's page is the answer to this POST, with no
            # redirect and no second request; its form posts to its own address.
            return _hit_page(request, worker, upcoming)
        else:
            location = reverse("annotator:assignment", args=[upcoming.pk])
    if _wants_json(request):
        return JsonResponse({"ok": True, "replayed": result.replayed, "location": location})
    return redirect(location)


@role_required(ANNOTATE)
@require_http_methods(["GET", "POST"])
def annotator_assignment(request: HttpRequest, assignment_id: int) -> HttpResponse:
    worker = _worker(request)
    chosen: dict[str, str] = {}
    error = ""
    status = 200
    if request.method == "POST":
        # The submit service finds (and locks) the worker's own assignment itself: no lookup before it.
        chosen = _chosen_answers(request.POST)
        outcome = _submit(request, worker, assignment_id, chosen)
        if isinstance(outcome, HttpResponse):
            return outcome
        if _wants_json(request):
            return JsonResponse({"ok": False, "error": outcome}, status=400)
        error, status = outcome, 400
    try:
        assignment = assignment_for_worker(worker=worker, assignment_id=assignment_id)
    except Assignment.DoesNotExist:
        raise Http404("No such assignment.") from None
    if request.method != "POST" and assignment.status != Assignment.Status.CLAIMED:
        recorded = assignment_answers(assignment=assignment)
        chosen = {str(doc_id): ANSWER_CODES[value] for doc_id, value in recorded.items()}
    return _hit_page(request, worker, assignment, chosen=chosen, error=error, status=status)


def _hit_page(request: HttpRequest, worker: Worker, assignment: Assignment, *, chosen: dict[str, str] | None = None,
              error: str = "", status: int = 200) -> HttpResponse:
    """The HIT's page (`assignment` with its HIT and topic loaded): three queries, the documents and the queue."""
    chosen = chosen or {}
    if not Assignment._meta.get_field("hit").is_cached(assignment):  # a fresh claim: its HIT and topic
        assignment = assignment_for_worker(worker=worker, assignment_id=assignment.pk)
    items = assignment_items(assignment=assignment)
    rows = [(item, chosen.get(str(item.document_id), ""), paragraphs(item.document.text)) for item in items]
    returned = assignment.status == Assignment.Status.EXPIRED and assignment.feedback == RELEASED_FEEDBACK
    queue = annotator_queue(worker=worker)
    return render(
        request,
        "annotator/assignment.html",
        {
            "assignment": assignment,
            "topic": assignment.hit.topic,
            "rows": rows,
            "answered": sum(1 for _, value, _ in rows if value),
            "error": error,
            "returned": returned,
            "progress": queue,
            # "HIT 4 of about 30": the HITs done, this one, and those still open for this worker.
            "queue_position": queue.hits_done + 1,
            "queue_total": queue.hits_done + 1 + queue.hits_left,
            # An expired assignment may still be submitted while its place is free (the service decides).
            "editable": assignment.status == Assignment.Status.CLAIMED
            or (assignment.status == Assignment.Status.EXPIRED and not returned),
            "allow_unsure": assignment.hit.topic.allow_unsure,
            "correctable": assignment.status == Assignment.Status.SUBMITTED
            and assignment_correctable(assignment=assignment),
        },
        status=status,
    )


@role_required(ANNOTATE)
@require_http_methods(["GET", "POST"])
def annotator_correct(request: HttpRequest, assignment_id: int) -> HttpResponse:
    """Change my answers: the submitted HIT's form again, until any of its documents has all its votes."""
    worker = _worker(request)
    try:
        assignment = assignment_for_worker(worker=worker, assignment_id=assignment_id)
    except Assignment.DoesNotExist:
        raise Http404("No such assignment.") from None
    error, status = "", 200
    if request.method == "POST":
        chosen = _chosen_answers(request.POST)
        answers = {int(doc_id): ANSWER_VALUES[value] for doc_id, value in chosen.items() if doc_id.isdigit()}
        try:
            result = judgment_correct(worker=worker, assignment_id=assignment.pk, answers=answers)
        except AssignmentNotFound:
            raise Http404("No such assignment.") from None
        except CorrectionRefused as exc:
            messages.error(request, str(exc))
            if _wants_json(request):
                location = reverse("annotator:assignment", args=[assignment.pk])
                return JsonResponse({"ok": False, "error": str(exc), "location": location}, status=409)
            return redirect("annotator:assignment", assignment_id=assignment.pk)
        except SubmitRefused as exc:  # an answer missing or not allowed: the form again, with the message
            if _wants_json(request):
                return JsonResponse({"ok": False, "error": str(exc)}, status=400)
            error, status = str(exc), 400
        else:
            messages.success(
                request,
                f"Your answers were changed ({result.changed} changed)." if result.changed
                else "Your answers were already these; nothing changed.",
            )
            if _wants_json(request):
                return JsonResponse({"ok": True, "location": reverse("annotator:home")})
            return redirect("annotator:home")
    else:
        if not assignment_correctable(assignment=assignment):
            messages.error(request, "These answers can no longer be changed: the other workers have finished "
                                    "these documents, or the HIT is not a submitted one of yours.")
            return redirect("annotator:assignment", assignment_id=assignment.pk)
        chosen = {str(doc_id): ANSWER_CODES[value] for doc_id, value in assignment_answers(assignment=assignment).items()}
    items = assignment_items(assignment=assignment)
    rows = [(item, chosen.get(str(item.document_id), ""), paragraphs(item.document.text)) for item in items]
    return render(
        request,
        "annotator/assignment.html",
        {
            "assignment": assignment,
            "topic": assignment.hit.topic,
            "rows": rows,
            "answered": sum(1 for _, value, _ in rows if value),
            "error": error,
            "returned": False,
            "progress": None,
            "editable": True,
            "correcting": True,
            "allow_unsure": assignment.hit.topic.allow_unsure,
            "correctable": False,
        },
        status=status,
    )


@role_required(ANNOTATE)
@require_POST
def annotator_release(request: HttpRequest, assignment_id: int) -> HttpResponse:
    """Skip: give the HIT back (its place is free at once), then take another one or go home."""
    worker = _worker(request)
    try:
        assignment_release(assignment_id=assignment_id, worker=worker)
    except AssignmentNotFound:
        raise Http404("No such assignment.") from None
    except ReleaseRefused as exc:
        messages.error(request, str(exc))
        return redirect("annotator:assignment", assignment_id=assignment_id)
    messages.info(request, "You returned the HIT: it goes to someone else, and it will not be offered to you again.")
    if request.POST.get("then") == "next":
        upcoming = _claim_next(request, worker)
        if upcoming is not None:
            return redirect("annotator:assignment", assignment_id=upcoming.pk)
    return redirect("annotator:home")
