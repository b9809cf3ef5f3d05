"""The one place an ``ApplicationError`` becomes something a person sees.

* A view that handles a form calls ``form_error(form, exc)``: the message shows
  above the form, with the user's input kept.
* Anything else lets the error propagate: ``ApplicationErrorMiddleware`` turns it
  into a flash message and sends the browser back where it came from (the same
  page for a GET, the referring page of this site for a POST), so a user mistake
  never renders a 500 or a debug page.
"""
from __future__ import annotations

from collections.abc import Callable

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.utils.http import url_has_allowed_host_and_scheme

from core.errors import ApplicationError


def form_error(form: forms.BaseForm, exc: ApplicationError) -> None:
    """Show the error's message above the form (a non-field error)."""
    form.add_error(None, exc.message)


def _back(request: HttpRequest) -> str | None:
    if request.method in ("GET", "HEAD"):
        return None  # redirecting a GET to itself would loop
    referer = request.META.get("HTTP_REFERER")
    if referer and url_has_allowed_host_and_scheme(
        referer, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return referer
    return request.path


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
        return render(request, "errors/application.html", {"message": exception.message}, status=400)
