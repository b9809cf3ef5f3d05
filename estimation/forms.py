"""Forms of the estimation pages."""
from __future__ import annotations

from django import forms


class TargetRecallForm(forms.Form):
    target_recall = forms.FloatField(min_value=0.01, max_value=1.0, initial=0.8, label="Target recall",
                                     help_text="Precision of each classifier extrapolated to this recall (seed 001).")
