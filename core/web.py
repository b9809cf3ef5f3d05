"""The one place an ``ApplicationError`` becomes something a person sees.

* A view that handles a form calls ``form_error(form, exc)``: the message shows
  above the form, with the user's input kept.
* Anything else lets the error propagate: ``ApplicationErrorMiddleware`` turns it
  into a flash message and sends the browser back where it came from (the same
  page for a GET, the referring page of this site for a POST), so a user mistake
  never renders a 500 or a debug page.
* A request refused by the CSRF check gets ``csrf_failure`` (``CSRF_FAILURE_VIEW``):
  a page saying what happened with a way back, or JSON for a script, never
  Django's debug page.
"""
from __future__ import annotations

from collections.abc import Callable

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import render
from django.utils.http import url_has_allowed_host_and_scheme

from core.errors import ApplicationError


def form_error(form: forms.BaseForm, exc: ApplicationError) -> None:
    """Show the error's message above the form (a non-field error)."""
    form.add_error(None, exc.message)


def _safe_referer(request: HttpRequest) -> str | None:
    referer = request.META.get("HTTP_REFERER")
    if referer and url_has_allowed_host_and_scheme(
        referer, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return referer
    return None


def _back(request: HttpRequest) -> str | None:
    """Where a failed POST goes back to: the page it came from.  None for GETs (redirecting a GET to itself
    would loop) and for a POST without a usable referer (its own URL may accept POST only): those render
    the error page instead."""
    if request.method in ("GET", "HEAD"):
        return None
    return _safe_referer(request)


class ApplicationErrorMiddleware:
    """Flash the message of an uncaught ApplicationError and go back; GETs render an error page (400)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, ApplicationError):
            return None
        target = _back(request)
        if target is not None:
            messages.error(request, exception.message)
            return HttpResponseRedirect(target)
        return render(request, "errors/application.html",
                      {"message": exception.message, "back_url": _safe_referer(request)}, status=400)


CSRF_MESSAGE = (
    "This page was out of date, so nothing was sent (you may have signed in again in another tab). "
    "Your answers are kept in this browser: reload the page and submit again."
)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """CSRF_FAILURE_VIEW: a 403 that explains itself and leads back (JSON for the HIT page's script)."""
    if "application/json" in request.headers.get("Accept", ""):
        return JsonResponse({"ok": False, "error": CSRF_MESSAGE, "csrf": True}, status=403)
    referer = request.META.get("HTTP_REFERER")
    back = referer if referer and url_has_allowed_host_and_scheme(
        referer, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ) else "/"
    return render(request, "errors/csrf.html", {"back": back}, status=403)
