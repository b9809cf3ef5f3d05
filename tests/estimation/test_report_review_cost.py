"""Issue "Every figure honest", item 9 (first half): seed 001's review cost n = ρNR/P (Eq. 2) beside the
extrapolated precision — in the report, on the report page's classifier table and in the CSV export."""
from __future__ import annotations

import csv
import html as html_lib
import io

import pytest
from django.test import Client
from django.urls import reverse

from estimation.services.extrapolation import precision_extrapolate, report_extrapolations
from estimation.services.report_csv import CSV_COLUMNS, topic_report_csv
from tests.web.conftest import accounts, world  # noqa: F401  (fixtures of the page tests)


def test_review_cost_is_seed_001_eq2_at_the_extrapolated_precision():
    # Notes §4's point: ρ = 0.03, P = 0.5 measured at R = 0.75.  Read at R_T = 0.75 the curve returns P = 0.5, so
    # by hand, Eq. 2: n = ρ·N·R/P = 0.03 · 100,000 · 0.75 / 0.5 = 4,500 documents to review.
    result = precision_extrapolate(precision=0.5, recall=0.75, prevalence=0.03, target_recall=0.75,
                                   population=100_000)
    assert result["estimate"] == pytest.approx(0.5)
    assert result["review_documents"] == pytest.approx(4_500.0)
    # At R_T = 1 the curve returns the prevalence (notes §4): everyone reads the whole corpus, n = N.
    whole = precision_extrapolate(precision=0.5, recall=0.75, prevalence=0.03, target_recall=1.0, population=100_000)
    assert whole["estimate"] == pytest.approx(0.03, rel=1e-6)
    assert whole["review_documents"] == pytest.approx(100_000.0, rel=1e-6)
    # No population, or a refusal: no review cost.
    assert precision_extrapolate(precision=0.5, recall=0.75, prevalence=0.03, target_recall=0.75)["review_documents"] is None
    refused = precision_extrapolate(precision=0.995, recall=0.75, prevalence=0.03, target_recall=0.9,
                                    population=100_000)
    assert refused["estimate"] is None and refused["review_documents"] is None


def _report():
    row = {"id": 1, "name": "title filter", "role": "c1", "retrieved": 3_000, "fingerprint": "f1",
           "precision": {"estimate": 0.5, "low": 0.45, "high": 0.55, "judged": 100},
           "recall": {"estimate": 0.75, "low": 0.7, "high": 0.8, "method": "m"},
           "f1": {"estimate": None, "low": None, "high": None},
           "extrapolated_precision": {"target_recall": 0.75, "estimate": 0.5, "refused": None,
                                      "review_documents": 4_500.0}}
    return {"corpus_size": 100_000, "estimated_relevant": {"prevalence": 0.03}, "classifiers": [row], "regions": []}


def test_the_page_helper_and_the_csv_carry_the_review_cost():
    values, _ = report_extrapolations(report=_report(), target_recall=0.75)
    assert values["title filter"]["review_documents"] == pytest.approx(4_500.0)  # by hand, as above
    rows = list(csv.DictReader(io.StringIO(topic_report_csv(report=_report()))))
    assert "review_documents" in CSV_COLUMNS
    assert float(rows[0]["review_documents"]) == pytest.approx(4_500.0)
    assert rows[0]["extrapolated_precision"] == "0.5" and rows[0]["recall_withheld_reason"] == ""


@pytest.mark.django_db
def test_report_page_shows_documents_to_review_beside_extrapolated_precision(world):  # noqa: F811
    from estimation.models import EstimateSnapshot
    from estimation.services.recompute import topic_snapshot_create

    topic = world["topic"]
    topic_snapshot_create(topic_id=topic.pk)
    snapshot = EstimateSnapshot.objects.filter(topic=topic).latest("version")
    report = snapshot.report
    # A stored report with a figure to extrapolate, and a row whose recall the report withheld.
    report["estimated_relevant"]["prevalence"] = 0.03
    report["corpus_size"] = 100_000
    first, second = report["classifiers"][0], report["classifiers"][1]
    first["precision"].update(estimate=0.5, low=0.45, high=0.55)
    first["recall"].update(estimate=0.75, low=0.7, high=0.8)
    second["recall"] = {"estimate": None, "low": None, "high": None, "method": "m",
                        "withheld_reason": "the pair's model estimates fewer relevant documents than were already found"}
    second["headline"] = {"estimate": None, "low": None, "high": None, "basis": "pair_model", "judged": 0,
                          "statement": "If the two classifiers are independent."}
    snapshot.report = report
    snapshot.save(update_fields=["report"])
    client = Client()
    client.force_login(world["accounts"]["manager"])
    html = client.get(reverse("reports:topic", args=[topic.pk]) + "?target_recall=0.75").content.decode()
    table = html[html.index('id="classifiers"'):html.index("</table>", html.index('id="classifiers"'))]
    assert "≈ 4500 documents to review" in table  # 0.03 · 100,000 · 0.75 / 0.5
    assert "Withheld: the pair&#x27;s model estimates fewer relevant documents" in table
    headlines = html_lib.unescape(html[html.index('id="headlines"'):html.index("</ul>", html.index('id="headlines"'))])
    assert (f"{second['name']}: recall withheld — the pair's model estimates fewer relevant documents than were "
            f"already found.") in headlines
