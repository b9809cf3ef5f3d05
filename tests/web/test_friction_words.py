"""Issue 26 item 2: one name per region and no symbols in the plain text of the topic page's plan and of the
report's "What to know" (symbols and model selection only under Details)."""
from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import REGION_NAMES

pytestmark = pytest.mark.django_db


def _text(html: str) -> str:
    html = re.sub(r"<details.*?</details>", " ", html, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_topic_plan_names_recall_and_regions_in_words(world):
    client = Client()
    client.force_login(world["accounts"]["analyst"])
    html = client.get(reverse("analyst:topic", args=[world["topic"].pk])).content.decode()
    plan = re.search(r'<div class="card" id="plan">(.*?)<p class="help">', html, re.S).group(1)
    text = _text(plan)
    assert not re.search(r"\br[12]: ±", text), text
    assert "recall of kw" in text  # the classifier by its name
    if 'id="plan-row-n"' in plan:
        row = re.search(r'<tr id="plan-row-n"><td[^>]*>(.*?)<span', plan, re.S).group(1).strip()
        assert row == REGION_NAMES["N"]


def test_report_what_to_know_has_no_warning_labels_and_keeps_method_notes_under_details(world):
    from django.template.loader import render_to_string

    diagnostics = [
        {"code": "eq2_above_one", "severity": "warning", "message": "Eq. 2 gives a recall above 1, shown clamped."},
        {"code": "capture_recapture_dependence", "severity": "warning", "message": "Model Mth (re-selected by AIC)."},
        {"code": "few_relevant", "severity": "warning", "message": "Few relevant documents were found."},
    ]
    html = render_to_string("reports/_report_body.html", {
        "topic": world["topic"], "report": {"pair": None, "regions": []}, "snapshot": {"version": 1},
        "diagnostics": diagnostics, "certification": {}, "certification_state": {"state": "none"}})
    card = re.search(r'<div class="card" id="diagnostics">(.*?)</div>', html, re.S).group(1)
    main = re.search(r'<ul id="diagnostics-main">(.*?)</ul>', card, re.S).group(1)
    assert "Few relevant documents" in main and "Warning:" not in card
    assert "Model Mth" not in main and "clamped" not in main
    method = re.search(r'<details[^>]*id="diagnostics-method">(.*?)</details>', card, re.S).group(1)
    assert "Model Mth" in method and "clamped" in method
