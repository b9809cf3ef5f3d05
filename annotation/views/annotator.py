"""The built-in annotator pages: progress, take the next HIT, judge its documents, submit or return it.

Thin: each view reads through annotation.selectors and writes through
annotation.services.crowd.assignments. A worker only ever reaches their own
assignments (anyone else's is a 404, like a missing one).

The HIT page's script (static/js/annotator.js) keeps the answers in the
browser until the server acknowledges them and submits with
``Accept: application/json``: the submit view then answers with JSON
(``{"ok", "location", "error"}``) instead of a redirect, so the script knows
the answers were recorded before it forgets them. "Submit and take the next HIT"
answers, when the script asks for it (``swap=1``), with the next HIT's content too
(``"next"``: its address, deadline, queue line and documents as plain strings, and
``"notice"``, the thank-you line), which the script swaps into the page in place:
one request per HIT, no page to parse (issue 30). Without the script the form
posts as usual and the answer is the next HIT's page.

The page's CSS and script are static files (hashed names and far-future caching
with WhiteNoise's manifest storage in production), fetched once per browser, not
inlined into every page.
"""
from __future__ import annotations

import re
from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from annotation.models import Assignment, Topic, Worker
from annotation.roles import ANNOTATE, role_required
from annotation.selectors import assignment_answers, assignment_for_worker, assignment_items
from annotation.services.crowd.annotator import annotator_correctable, annotator_progress, annotator_queue
from annotation.services.crowd.assignments import (
    RELEASED_FEEDBACK,
    AssignmentExpired,
    AssignmentNotFound,
    ClaimRefused,
    CorrectionRefused,
    ReleaseRefused,
    SubmitRefused,
    assignment_claim_fresh,
    assignment_correctable,
    assignment_hold_renew,
    assignment_release,
    assignment_submit,
    judgment_correct,
)
from annotation.services.crowd.workers import worker_for_user
from annotation.services.topics.topic_sets import topic_set_classes
from annotation.views.highlight import paragraphs

# "u" (unsure) is accepted only where the topic allows it (the service refuses it otherwise).
ANSWER_VALUES: dict[str, bool | None] = {"1": True, "0": False, "u": None}
ANSWER_CODES = {value: code for code, value in ANSWER_VALUES.items()}
# A topic set's answers are "c<position>" (0: none of these; "u" is unsure there too): the POST can be read
# without knowing the topic, and a binary "1" is never taken for class 1.
CLASS_CODE = re.compile(r"c(\d{1,2})")
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
    return {
        key[4:]: value for key, value in post.items()
        if key.startswith("doc-") and (value in ANSWER_VALUES or CLASS_CODE.fullmatch(value))
    }


def _answer(code: str) -> bool | int | None:
    """A form value as the services take it: True/False (binary), a class position (topic set), None (unsure)."""
    match = CLASS_CODE.fullmatch(code)
    return int(match.group(1)) if match else ANSWER_VALUES[code]


def _answers(chosen: dict[str, str]) -> dict[int, bool | int | None]:
    return {int(doc_id): _answer(value) for doc_id, value in chosen.items() if doc_id.isdigit()}


def _codes(topic: Topic, recorded: dict) -> dict[str, str]:
    """Recorded answers as form values (assignment_answers gives class positions for a topic set)."""
    if topic.is_multiclass:
        return {str(doc_id): "u" if value is None else f"c{int(value)}" for doc_id, value in recorded.items()}
    return {str(doc_id): ANSWER_CODES[value] for doc_id, value in recorded.items()}


def _submit(request: HttpRequest, worker: Worker, assignment_id: int, chosen: dict[str, str]) -> HttpResponse | str:
    """Record the answers; a response to send, or the message of a refusal to show above the form."""
    answers = _answers(chosen)
    json_answer = _wants_json(request)
    try:
        result = assignment_submit(assignment_id=assignment_id, worker=worker, answers=answers)
    except AssignmentNotFound:
        raise Http404("No such assignment.") from None
    except AssignmentExpired as exc:
        messages.error(request, str(exc))
        if json_answer:
            return JsonResponse({"ok": False, "error": str(exc), "location": reverse("annotator:home")}, status=409)
        return redirect("annotator:home")
    except SubmitRefused as exc:
        return str(exc)
    notice: tuple[int, str] | None = None
    if result.replayed and result.differs:
        notice = (messages.WARNING, STALE_TAB_MESSAGE)
    elif not result.replayed:
        notice = (messages.SUCCESS,
                  f"Thank you: {result.judgments} answers recorded. Until the other workers have finished these "
                  "documents you can change them (\"Change my answers\" on the Annotate page).")
    upcoming = None
    if request.POST.get("then") == "next":
        # Submit and take the next HIT in this one request (issue 15 item 8): the claim runs here.
        upcoming = _claim_next(request, worker)
    if upcoming is not None and json_answer and request.POST.get("swap") == "1":
        # The script swaps the next HIT in place: the notice goes with it (not to a page shown later).
        payload: dict[str, Any] = {"ok": True, "replayed": result.replayed,
                                   "location": reverse("annotator:assignment", args=[upcoming.pk]),
                                   "next": _hit_payload(worker, upcoming)}
        if notice is not None:
            payload["notice"] = notice[1]
        return JsonResponse(payload)
    if notice is not None:
        messages.add_message(request, *notice)
    if upcoming is not None and json_answer:
        return JsonResponse({"ok": True, "replayed": result.replayed,
                             "location": reverse("annotator:assignment", args=[upcoming.pk])})
    if upcoming is not None:
        # The form (no script): the next HIT's page is the answer to this POST, with no
        # redirect and no second request; its form posts to its own address.
        return _hit_page(request, worker, upcoming)
    location = reverse("annotator:home")
    if json_answer:
        return JsonResponse({"ok": True, "replayed": result.replayed, "location": location})
    return redirect(location)


def _queue_line(worker: Worker) -> tuple[Any, str]:
    """The worker's queue, and the line the HIT page shows of it: "HIT 4 of about 30 for you"."""
    queue = annotator_queue(worker=worker)
    # The HITs done, this one, and those still open for this worker.
    total = queue.hits_done + 1 + min(queue.hits_left, queue.cap)
    return queue, f"HIT {queue.hits_done + 1} of {'more than' if queue.hits_left_capped else 'about'} {total} for you"


def _hit_payload(worker: Worker, assignment: Assignment) -> dict[str, Any]:
    """A freshly claimed HIT as the script swaps it into the page: plain strings, placed with textContent."""
    if not Assignment._meta.get_field("hit").is_cached(assignment):
        assignment = assignment_for_worker(worker=worker, assignment_id=assignment.pk)
    _queue, line = _queue_line(worker)
    return {
        "assignment": assignment.pk,
        "topic": assignment.hit.topic_id,
        "action": reverse("annotator:assignment", args=[assignment.pk]),
        "release": reverse("annotator:release", args=[assignment.pk]),
        "deadline": assignment.deadline.isoformat() if assignment.deadline else "",
        "queue": line,
        "documents": [
            {"id": item.document_id, "title": item.document.title or "", "paragraphs": paragraphs(item.document.text)}
            for item in assignment_items(assignment=assignment)
        ],
    }


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
        chosen = _codes(assignment.hit.topic, assignment_answers(assignment=assignment))
    return _hit_page(request, worker, assignment, chosen=chosen, error=error, status=status)


def _topic_context(topic: Topic) -> dict:
    """What the HIT page needs of its topic: a topic set's classes are read here, once (no query per document)."""
    return {
        "topic": topic,
        "allow_unsure": topic.allow_unsure,
        "multiclass": topic.is_multiclass,
        "classes": topic_set_classes(topic=topic) if topic.is_multiclass else [],
    }


def _hit_page(request: HttpRequest, worker: Worker, assignment: Assignment, *, chosen: dict[str, str] | None = None,
              error: str = "", status: int = 200) -> HttpResponse:
    """The HIT's page (`assignment` with its HIT and topic loaded): three queries, the documents and the queue."""
    chosen = chosen or {}
    if not Assignment._meta.get_field("hit").is_cached(assignment):  # a fresh claim: its HIT and topic
        assignment = assignment_for_worker(worker=worker, assignment_id=assignment.pk)
    items = assignment_items(assignment=assignment)
    rows = [(item, chosen.get(str(item.document_id), ""), paragraphs(item.document.text)) for item in items]
    returned = assignment.status == Assignment.Status.EXPIRED and assignment.feedback == RELEASED_FEEDBACK
    queue, queue_line = _queue_line(worker)
    return render(
        request,
        "annotator/assignment.html",
        {
            **_topic_context(assignment.hit.topic),
            "assignment": assignment,
            "rows": rows,
            "answered": sum(1 for _, value, _ in rows if value),
            "error": error,
            "returned": returned,
            "progress": queue,
            "queue_line": queue_line,
            # An expired assignment may still be submitted while its place is free (the service decides).
            "editable": assignment.status == Assignment.Status.CLAIMED
            or (assignment.status == Assignment.Status.EXPIRED and not returned),
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
        answers = _answers(chosen)
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
        chosen = _codes(assignment.hit.topic, assignment_answers(assignment=assignment))
    items = assignment_items(assignment=assignment)
    rows = [(item, chosen.get(str(item.document_id), ""), paragraphs(item.document.text)) for item in items]
    return render(
        request,
        "annotator/assignment.html",
        {
            **_topic_context(assignment.hit.topic),
            "assignment": assignment,
            "rows": rows,
            "answered": sum(1 for _, value, _ in rows if value),
            "error": error,
            "returned": False,
            "progress": None,
            "editable": True,
            "correcting": True,
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


@role_required(ANNOTATE)
@require_POST
def annotator_hold(request: HttpRequest, assignment_id: int) -> JsonResponse:
    """The HIT page renews its hold while the annotator is active (annotator.js): JSON, never a redirect."""
    try:
        result = assignment_hold_renew(assignment_id=assignment_id, worker=_worker(request))
    except AssignmentNotFound:
        raise Http404("No such assignment.") from None
    return JsonResponse({"held": result.held, "deadline": result.deadline.isoformat() if result.deadline else "",
                         "message": result.message})
