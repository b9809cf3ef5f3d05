"""Form of the webhook pages: input shape only; webhooks.services decides the rest (allowed hosts, events)."""
from __future__ import annotations

from typing import Any

from django import forms

from annotation.models import Topic
from webhooks.models import WebhookEvent


class WebhookEndpointForm(forms.Form):
    url = forms.CharField(max_length=500, label="URL",
                          help_text="http:// or https://. Only hosts the operator listed in WEBHOOK_ALLOWED_HOSTS are "
                                    "accepted, and no private address unless the operator allowed private networks.")
    topic = forms.ModelChoiceField(queryset=Topic.objects.none(), required=False, empty_label="Every topic (global)",
                                   help_text="import.finished has no topic: only global endpoints receive it.")
    events = forms.MultipleChoiceField(choices=WebhookEvent.choices, widget=forms.CheckboxSelectMultiple,
                                       initial=[WebhookEvent.REPORT_UPDATED, WebhookEvent.CERTIFICATION_DECIDED])
    secret = forms.CharField(max_length=128, required=False, label="Secret (optional)",
                             widget=forms.TextInput(attrs={"autocomplete": "off"}),
                             help_text="Signs every delivery. Leave blank to have one generated. It is shown once, "
                                       "after you register, and never again.")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["topic"].queryset = Topic.objects.order_by("name")  # type: ignore[attr-defined]
