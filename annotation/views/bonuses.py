"""Bonuses of a topic's workers (issue 27): the form, the confirmation of its cost, the list with each status.

Analysts only (configure role). The worker-quality page links here with a small form (templates/analyst/
_bonus_form.html). Parse, call annotation/services/crowd/bonuses.py (the API calls the same), render:
POST …/bonuses/confirm/ shows the quote (each worker by public id, amount, fee, total) with a fresh idempotency
key; POST …/bonuses/grant/ grants it with the confirmed total (refused, with the fresh quote, when it changed).
"""
from __future__ import annotations

import uuid
from decimal import Decimal

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import path
from django.views.decorators.http import require_GET, require_POST

from annotation.models import Topic, WorkerBonus
from annotation.roles import CONFIGURE, role_required
from annotation.services.crowd.bonuses import (
    AMOUNT_MAX,
    KEY_MAX_CHARS,
    REASON_MAX_CHARS,
    BonusCostChanged,
    BonusQuote,
    bonus_grant,
    bonus_quote,
    topic_bonuses,
)
from annotation.services.crowd.workers import worker_public_id
from core.errors import ApplicationError

LIST_SHOWN = 500


class BonusForm(forms.Form):
    rule = forms.ChoiceField(choices=WorkerBonus.Rule.choices, initial=WorkerBonus.Rule.PER_WORKER,
                             label="Counted")
    amount = forms.DecimalField(min_value=Decimal("0.01"), max_value=AMOUNT_MAX, max_digits=8, decimal_places=2,
                                label="Amount ($)", help_text="Per worker, or per judgment.")
    reason = forms.CharField(max_length=REASON_MAX_CHARS, widget=forms.Textarea(attrs={"rows": 2}),
                             help_text="Shown to the workers.")
    workers = forms.CharField(required=False, max_length=20000, label="Only these workers",
                              help_text="Worker ids as on the worker-quality page, separated by spaces or commas; "
                                        "empty: every worker with a counted judgment.")

    def worker_ids(self) -> list[str] | None:
        text = self.cleaned_data.get("workers", "")
        ids = [w for w in text.replace(",", " ").split() if w]
        return ids or None


class BonusGrantForm(BonusForm):
    confirm_total = forms.DecimalField(max_digits=12, decimal_places=2, widget=forms.HiddenInput)
    idempotency_key = forms.CharField(max_length=KEY_MAX_CHARS, widget=forms.HiddenInput)


def _topic(topic_id: int) -> Topic:
    return get_object_or_404(Topic.objects.select_related("corpus").defer("corpus__documents_bitmap"), pk=topic_id)


def _form_problem(form: forms.Form) -> ApplicationError:
    words = "; ".join(f"{'' if name == '__all__' else name + ': '}{' '.join(str(e) for e in errors)}"
                      for name, errors in form.errors.items())
    return ApplicationError(f"The bonus was not quoted: {words}")


def _confirm_page(request: HttpRequest, topic: Topic, form: BonusForm, quote: BonusQuote, *, key: str,
                  changed: str = "", status: int = 200) -> HttpResponse:
    return render(request, "analyst/bonus_confirm.html", {
        "topic": topic, "quote": quote, "changed": changed, "key": key,
        "rule": form.cleaned_data["rule"], "amount": form.cleaned_data["amount"],
        "reason": form.cleaned_data["reason"], "workers": form.cleaned_data.get("workers", ""),
        "rule_name": WorkerBonus.Rule(form.cleaned_data["rule"]).label,
    }, status=status)


@role_required(CONFIGURE)
@require_GET
def topic_bonuses_page(request: HttpRequest, topic_id: int) -> HttpResponse:
    topic = _topic(topic_id)
    rows = [(b, worker_public_id(worker_id=b.worker_id, external_id=b.worker.external_id))
            for b in topic_bonuses(topic=topic, limit=LIST_SHOWN)]
    return render(request, "analyst/bonuses.html", {"topic": topic, "form": BonusForm(), "rows": rows,
                                                     "shown": LIST_SHOWN})


@role_required(CONFIGURE)
@require_POST
def bonus_confirm(request: HttpRequest, topic_id: int) -> HttpResponse:
    topic = _topic(topic_id)
    form = BonusForm(request.POST)
    if not form.is_valid():
        raise _form_problem(form)
    quote = bonus_quote(topic=topic, rule=form.cleaned_data["rule"], amount=form.cleaned_data["amount"],
                        workers=form.worker_ids())
    if not quote.lines:
        raise ApplicationError("No worker has a counted judgment on this topic: there is nobody to pay.")
    return _confirm_page(request, topic, form, quote, key=uuid.uuid4().hex)


@role_required(CONFIGURE)
@require_POST
def bonus_grant_view(request: HttpRequest, topic_id: int) -> HttpResponse:
    topic = _topic(topic_id)
    form = BonusGrantForm(request.POST)
    if not form.is_valid():
        raise _form_problem(form)
    data = form.cleaned_data
    try:
        grant = bonus_grant(topic=topic, rule=data["rule"], amount=data["amount"], reason=data["reason"],
                            confirm_total=data["confirm_total"], idempotency_key=data["idempotency_key"],
                            user=request.user, workers=form.worker_ids())
    except BonusCostChanged as exc:
        return _confirm_page(request, topic, form, exc.quote, key=uuid.uuid4().hex, changed=exc.message, status=409)
    count, total = len(grant.bonuses), grant.quote.total
    if not grant.created:
        messages.info(request, f"These bonuses were already granted ({count} workers, ${total:.2f}): nothing was "
                               "paid again.")
    elif grant.quote.paid_through_platform:
        messages.success(request, f"{count} bonuses (${total:.2f} with fees) are being paid on Mechanical Turk; "
                                  "their status is below.")
    else:
        messages.success(request, f"{count} bonuses (${total:.2f}) are recorded as granted: the built-in crowd "
                                  "moves no money, pay them through your payroll.")
    return redirect("analyst:bonuses", topic_id=topic.pk)


# Included in annotation/urls_analyst.py by one line: path("", include("annotation.views.bonuses")).
urlpatterns = [
    path("topics/<int:topic_id>/bonuses/", topic_bonuses_page, name="bonuses"),
    path("topics/<int:topic_id>/bonuses/confirm/", bonus_confirm, name="bonus_confirm"),
    path("topics/<int:topic_id>/bonuses/grant/", bonus_grant_view, name="bonus_grant"),
]
