"""Forms that both apps' pages use."""
from __future__ import annotations

from django import forms


class ListSearchForm(forms.Form):
    """Search (name contains) and the "show archived" toggle of the topics, classifiers, corpora and reports lists."""

    q = forms.CharField(required=False, max_length=200, label="Name contains")
    archived = forms.BooleanField(required=False, label="Show archived")
