"""The external HIT page Mechanical Turk shows its workers in an iframe.

MTurk opens /mturk/hit/<id>/?assignmentId=…&hitId=…&workerId=…&turkSubmitTo=…
* assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE: a preview (instructions and documents, no form);
* otherwise the worker's assignment is recorded and the form shown; the POST stores the
  judgments (annotation.services.crowd.mturk) and returns a page that hands the assignment back
  to MTurk by POSTing to <turkSubmitTo>/mturk/externalSubmit.

Workers are anonymous here (no Django login). Why Django's CSRF middleware is replaced
for this one view: the page lives in a cross-site iframe, where browsers do not send our
SameSite=Lax CSRF cookie (and Safari/Firefox block third-party cookies altogether), so the
cookie-based check would refuse every honest worker. This view uses no cookie or session
at all — the worker's authority is the MTurk assignment id bound to their worker id — so
the classic CSRF risk (a forged request riding on ambient credentials) does not arise.
In its place, the POST must carry a token we signed when rendering the form (HMAC of the
HIT, the app assignment, the MTurk ids and turkSubmitTo), and a cross-site Origin is refused.

None of this proves the ids are real (MTurk does not sign them): the answers are stored as
provisional and count only after reconcile has confirmed the assignment with MTurk
(annotation.services.crowd.mturk.mturk_assignment_verify). The page says so.
"""
from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from csp.constants import SELF
from csp.decorators import csp_replace
from django.conf import settings
from django.core import signing
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.clickjacking import xframe_options_exempt
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from annotation.crowds.mturk_client import PREVIEW_ASSIGNMENT_ID, WORKER_FRAME_ANCESTORS, WORKER_SUBMIT_HOSTS
from annotation.models import Assignment, Hit, HitItem, Topic
from annotation.services.crowd.assignments import SubmitRefused
from annotation.services.crowd.mturk import (
    UNVERIFIED_MESSAGE,
    MturkPageRefused,
    mturk_assignment_start,
    mturk_assignment_submit,
    mturk_hit_on_offer,
    mturk_submission_summary,
    mturk_submit_url,
)
from annotation.services.crowd.provisional import CrowdSubmission
from annotation.services.topics.topic_sets import topic_set_classes

# A topic set's answer: "c<class position>" (0: none of these), as on the annotator's page.
CLASS_CODE = re.compile(r"c(\d{1,2})")

FORM_SALT = "annotation.mturk.hit-form"
# The site-wide Content-Security-Policy (config/settings/base.py) with two directives replaced:
# X-Frame-Options cannot name two sites, CSP frame-ancestors can (MTurk frames this page);
# the hand-back form posts to MTurk's externalSubmit. Its one inline script carries the nonce.
MTURK_POLICY = {
    "frame-ancestors": [SELF, *WORKER_FRAME_ANCESTORS],
    "form-action": [SELF, *WORKER_SUBMIT_HOSTS],
}


def _page(request: HttpRequest, template: str, context: dict, status: int = 200) -> HttpResponse:
    return render(request, template, context, status=status)


def _refused(request: HttpRequest, message: str, status: int = 400) -> HttpResponse:
    return _page(request, "mturk/refused.html", {"message": message}, status=status)


def _items(hit: Hit) -> list[HitItem]:
    return list(HitItem.objects.filter(hit=hit).select_related("document").order_by("position"))


def _rows(items: list[HitItem], answers: dict[int, Any] | None = None, *, multiclass: bool = False
          ) -> list[tuple[HitItem, str]]:
    """Each item with the answer already chosen, to refill the form after an error.

    A single topic's "1", "0" or ""; a topic set's "c<position>", "u" (unsure) or "".
    """
    answers = answers or {}
    if multiclass:
        return [(item, _class_code(answers, item.document_id)) for item in items]
    chosen: dict[bool | None, str] = {True: "1", False: "0"}
    return [(item, chosen.get(answers.get(item.document_id), "")) for item in items]


def _class_code(answers: dict[int, Any], document_id: int) -> str:
    if document_id not in answers:
        return ""
    value = answers[document_id]
    return "u" if value is None else f"c{value}"


def _topic_context(topic: Topic) -> dict:
    """The topic and, for a topic set, its classes (read once: no query per document)."""
    multiclass = topic.is_multiclass
    return {"topic": topic, "multiclass": multiclass,
            "classes": topic_set_classes(topic=topic) if multiclass else [],
            "allow_unsure": multiclass and topic.allow_unsure}


def _posted_answers(post, items: list[HitItem], *, multiclass: bool, allow_unsure: bool) -> dict[int, Any]:
    """The answers in the POST: yes/no for a single topic; class positions (None: unsure) for a topic set."""
    answers: dict[int, Any] = {}
    for item in items:
        value = post.get(f"doc-{item.document_id}")
        if not multiclass:
            if value in ("1", "0"):
                answers[item.document_id] = value == "1"
        elif value == "u" and allow_unsure:
            answers[item.document_id] = None
        elif value and (match := CLASS_CODE.fullmatch(value)):
            answers[item.document_id] = int(match.group(1))
    return answers


def _form_token(*, hit: Hit, assignment: Assignment, params: dict[str, str]) -> str:
    return signing.dumps(
        [hit.pk, assignment.pk, params["assignmentId"], params["workerId"], params["turkSubmitTo"]], salt=FORM_SALT
    )


def _handback(request: HttpRequest, *, submit_url: str, mturk_assignment_id: str, submission: CrowdSubmission):
    context = {
        "submit_url": submit_url,
        "assignment_id": mturk_assignment_id,
        "judgments": submission.answers,
        "relevant": submission.relevant,
        "counted": submission.counted,
    }
    return _page(request, "mturk/handback.html", context)


def _cross_site(request: HttpRequest) -> bool:
    origin = request.headers.get("Origin")
    if not origin or origin == "null":  # no header (older browsers) or an opaque origin
        return False
    base = urlsplit(settings.MTURK_EXTERNAL_BASE_URL or "")
    ours = {f"{request.scheme}://{request.get_host()}", f"{base.scheme}://{base.netloc}", *settings.CSRF_TRUSTED_ORIGINS}
    return origin not in ours


@csrf_exempt  # replaced by the signed form token and the Origin check (module docstring)
@xframe_options_exempt
@csp_replace(MTURK_POLICY)  # type: ignore[arg-type]  # django-csp types a view as taking only a request
@require_http_methods(["GET", "POST"])
def hit_page(request: HttpRequest, hit_id: int) -> HttpResponse:
    hit = Hit.objects.select_related("topic").filter(pk=hit_id, topic__crowd=Topic.Crowd.MTURK).first()
    if hit is None:
        raise Http404("No such Mechanical Turk HIT.")
    source = request.POST if request.method == "POST" else request.GET
    params = {name: source.get(name, "") for name in ("assignmentId", "hitId", "workerId", "turkSubmitTo")}

    if request.method == "GET" and params["assignmentId"] in ("", PREVIEW_ASSIGNMENT_ID):
        # Only what MTurk itself offers: documents of unpublished, finished or paused
        # HITs are not shown to whoever walks through /mturk/hit/<n>/.
        on_offer = hit.external_id and params["hitId"] in ("", hit.external_id)
        if not on_offer or not mturk_hit_on_offer(hit=hit):
            return _refused(request, "This HIT is not available.", status=404)
        context = {**_topic_context(hit.topic), "rows": _rows(_items(hit)), "preview": True}
        return _page(request, "mturk/hit.html", context)

    try:
        submit_url = mturk_submit_url(turk_submit_to=params["turkSubmitTo"])
    except MturkPageRefused as exc:
        return _refused(request, str(exc))

    if request.method == "POST":
        return _submit(request, hit=hit, params=params, submit_url=submit_url)

    try:
        assignment = mturk_assignment_start(
            hit=hit,
            mturk_hit_id=params["hitId"],
            mturk_assignment_id=params["assignmentId"],
            mturk_worker_id=params["workerId"],
        )
    except MturkPageRefused as exc:
        return _refused(request, str(exc), status=409)
    if assignment.provisional_answers is not None and assignment.status == Assignment.Status.EXPIRED:
        return _refused(request, UNVERIFIED_MESSAGE, status=409)
    if assignment.provisional_answers is not None or assignment.status in (
        Assignment.Status.SUBMITTED, Assignment.Status.APPROVED, Assignment.Status.REJECTED
    ):
        # Stored earlier (the hand-back to MTurk may have failed): offer it again.
        return _handback(
            request,
            submit_url=submit_url,
            mturk_assignment_id=params["assignmentId"],
            submission=mturk_submission_summary(assignment=assignment),
        )
    context = {
        **_topic_context(hit.topic),
        "rows": _rows(_items(hit)),
        "preview": False,
        "params": params,
        "token": _form_token(hit=hit, assignment=assignment, params=params),
    }
    return _page(request, "mturk/hit.html", context)


def _submit(request: HttpRequest, *, hit: Hit, params: dict[str, str], submit_url: str) -> HttpResponse:
    if _cross_site(request):
        return _refused(request, "This form can only be sent from its own page.", status=403)
    assignment = None
    if params["assignmentId"] and params["workerId"]:
        assignment = Assignment.objects.filter(
            external_id=params["assignmentId"], hit=hit, worker__platform=Topic.Crowd.MTURK,
            worker__external_id=params["workerId"],
        ).first()
    try:
        signed = signing.loads(request.POST.get("token", ""), salt=FORM_SALT)
    except signing.BadSignature:
        signed = None
    if assignment is None or signed != [
        hit.pk, assignment.pk, params["assignmentId"], params["workerId"], params["turkSubmitTo"]
    ]:
        return _refused(request, "This form does not belong to your assignment. Reload the HIT.", status=403)

    items = _items(hit)
    topic_context = _topic_context(hit.topic)
    answers = _posted_answers(request.POST, items, multiclass=topic_context["multiclass"],
                              allow_unsure=topic_context["allow_unsure"])
    try:
        submission = mturk_assignment_submit(
            hit=hit,
            mturk_assignment_id=params["assignmentId"],
            mturk_worker_id=params["workerId"],
            answers=answers,
        )
    except SubmitRefused as exc:
        if len(answers) < len(items):  # a missing answer: show the form again with what was chosen
            context = {
                **topic_context,
                "rows": _rows(items, answers, multiclass=topic_context["multiclass"]),
                "preview": False,
                "params": params,
                "token": request.POST.get("token", ""),
                "error": str(exc),
            }
            return _page(request, "mturk/hit.html", context, status=400)
        return _refused(request, str(exc), status=409)
    return _handback(
        request, submit_url=submit_url, mturk_assignment_id=params["assignmentId"], submission=submission
    )
