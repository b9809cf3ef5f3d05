"""Manager pages of the webhooks: register, list and delete endpoints; the delivery log; replay a delivery.

Every page needs the manager's permission (annotation.read_reports), as the reports do.
"""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from annotation.roles import READ_REPORTS, role_required
from core.errors import ApplicationError
from core.web import form_error
from webhooks.forms import WebhookEndpointForm
from webhooks.models import WebhookDelivery, WebhookEndpoint
from webhooks.selectors import DELIVERIES_SHOWN, webhook_deliveries_list, webhook_endpoints_list
from webhooks.services.deliveries import webhook_delivery_replay
from webhooks.services.endpoints import webhook_endpoint_create, webhook_endpoint_delete


@role_required(READ_REPORTS)
@require_http_methods(["GET", "POST"])
@never_cache
def endpoints(request: HttpRequest) -> HttpResponse:
    """The endpoints and the registration form; a registration answers with the secret, shown this once."""
    form = WebhookEndpointForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            endpoint = webhook_endpoint_create(url=form.cleaned_data["url"], events=form.cleaned_data["events"],
                                               topic=form.cleaned_data["topic"], secret=form.cleaned_data["secret"],
                                               user=request.user if isinstance(request.user, User) else None)
        except ApplicationError as exc:
            form_error(form, exc)
        else:
            return render(request, "webhooks/created.html", {"endpoint": endpoint, "secret": endpoint.secret},
                          status=201)
    return render(request, "webhooks/endpoints.html", {"form": form, "endpoints": webhook_endpoints_list()})


@role_required(READ_REPORTS)
@require_POST
def endpoint_delete(request: HttpRequest, endpoint_id: int) -> HttpResponse:
    endpoint = get_object_or_404(WebhookEndpoint, pk=endpoint_id)
    webhook_endpoint_delete(endpoint_id=endpoint.pk)
    messages.success(request, f"Endpoint {endpoint.url} removed, with its delivery log.")
    return redirect("webhooks:endpoints")


@role_required(READ_REPORTS)
@require_http_methods(["GET"])
def deliveries(request: HttpRequest) -> HttpResponse:
    endpoint = None
    raw = request.GET.get("endpoint", "")
    if raw.isdigit():
        endpoint = get_object_or_404(WebhookEndpoint, pk=int(raw))
    rows = webhook_deliveries_list(endpoint_id=endpoint.pk if endpoint else None)
    return render(request, "webhooks/deliveries.html",
                  {"deliveries": rows, "endpoint": endpoint, "shown": DELIVERIES_SHOWN})


@role_required(READ_REPORTS)
@require_POST
def delivery_replay(request: HttpRequest, delivery_id: int) -> HttpResponse:
    """Send the delivery's payload again, as a new delivery (the log keeps both)."""
    original = get_object_or_404(WebhookDelivery, pk=delivery_id)
    replay = webhook_delivery_replay(delivery_id=original.pk)
    replay.refresh_from_db()
    messages.success(request, f"Delivery {original.pk} replayed as delivery {replay.pk} "
                              f"({replay.get_status_display().lower()}).")
    return redirect(f"{reverse('webhooks:deliveries')}?endpoint={original.endpoint_id}")
