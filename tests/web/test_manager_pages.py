"""Manager pages: overview, report with plots, exports, printable page; pages read snapshots."""
from __future__ import annotations

import csv
import io
import json

import pytest
from django.test import Client
from django.urls import reverse

from estimation.models import EstimateSnapshot


@pytest.fixture
def manager(world):
    client = Client()
    client.force_login(world["accounts"]["manager"])
    return client


def test_overview_lists_topics_with_progress_and_latest_recall(world, manager):
    from estimation.services.recompute import topic_snapshot_create

    topic_snapshot_create(topic_id=world["topic"].pk)
    response = manager.get(reverse("reports:topics"))
    html = response.content.decode()
    assert response.status_code == 200
    assert reverse("reports:topic", args=[world["topic"].pk]) in html
    from annotation.models import Judgment

    judgments = Judgment.objects.filter(topic=world["topic"]).count()
    assert judgments > 0 and f'<td class="num">{judgments}</td>' in html
    assert "Not planned" in html
    from estimation.models import EstimateSnapshot

    report = EstimateSnapshot.objects.get(topic=world["topic"]).report
    for row in report["classifiers"][:2]:  # the pair: both headline recalls with their intervals and basis
        headline = row["headline"]  # issue 23: the overview showed the independence model's recall
        assert f"<strong>{headline['estimate']:.3f}</strong>" in html and f"{headline['low']:.3f}," in html
        assert "Within a declared range of dependence" in html or "Measured, no assumption" in html


def test_report_shows_numbers_intervals_and_four_plots(world, manager):
    response = manager.get(reverse("reports:topic", args=[world["topic"].pk]))
    html = response.content.decode()
    assert response.status_code == 200
    snapshot = EstimateSnapshot.objects.get(topic=world["topic"])  # computed once, stored
    report = snapshot.report
    c1 = report["classifiers"][0]
    assert f"{c1['precision']['estimate']:.3f}" in html and f"{c1['recall']['estimate']:.3f}" in html
    for plot in ("plot-pr", "plot-history", "plot-venn", "plot-posterior"):
        start = html.index(f'id="{plot}"')
        assert "<svg" in html[start:start + 400]
    assert "Recall, Eq. 1" in html and "Recall, Eq. 2" in html and "Recall, stratified" in html
    assert 'id="n-hat"' in html and "Fleiss" in html and "Uniform sampling would need" in html


def test_report_view_does_not_recompute_when_a_snapshot_exists(world, manager, django_assert_max_num_queries):
    manager.get(reverse("reports:topic", args=[world["topic"].pk]))
    assert EstimateSnapshot.objects.filter(topic=world["topic"]).count() == 1
    with django_assert_max_num_queries(25):
        manager.get(reverse("reports:topic", args=[world["topic"].pk]))
    assert EstimateSnapshot.objects.filter(topic=world["topic"]).count() == 1


def test_target_recall_field_changes_the_extrapolation_and_rejects_bad_input(world, manager):
    url = reverse("reports:topic", args=[world["topic"].pk])
    low = manager.get(url, {"target_recall": "0.3"}).content.decode()
    high = manager.get(url, {"target_recall": "0.95"}).content.decode()
    assert "Precision at recall 0.3" in low and "Precision at recall 0.95" in high
    bad = manager.get(url, {"target_recall": "7"})
    assert bad.status_code == 200 and "less than or equal to 1" in bad.content.decode()


def test_exports_csv_and_json_carry_the_snapshot(world, manager):
    topic = world["topic"]
    data = json.loads(manager.get(reverse("reports:topic_json", args=[topic.pk])).content)
    assert data["snapshot"]["version"] == 1 and data["report"]["classifiers"][0]["name"] == world["c1"].name
    response = manager.get(reverse("reports:topic_csv", args=[topic.pk]))
    assert response["Content-Disposition"].startswith("attachment;")
    text = response.content.decode()
    # A leading metadata block of "#key,value" rows (docs/report.md), then the table.
    metadata = dict(row for row in csv.reader(io.StringIO(text)) if row and row[0].startswith("#"))
    assert metadata["#topic"] == topic.name and metadata["#snapshot_version"] == "1"
    assert metadata["#confidence"] == "0.95" and metadata["#target_recall"] == str(topic.target_recall)
    assert metadata["#corpus"] == topic.corpus.name
    assert metadata[f"#fingerprint.c1.{world['c1'].pk}"] == world["c1"].fingerprint
    body = "".join(line for line in text.splitlines(keepends=True) if not line.startswith("#"))
    rows = list(csv.DictReader(io.StringIO(body)))
    assert {r["name"] for r in rows if r["row_type"] == "classifier"} >= {world["c1"].name, world["c2"].name}


def test_printable_page_has_print_css_and_no_forms_in_print(world, manager):
    response = manager.get(reverse("reports:topic_print", args=[world["topic"].pk]))
    assert response.status_code == 200 and b"Recall report:" in response.content
    from pathlib import Path

    css = (Path(__file__).resolve().parents[2] / "static/css/app.css").read_text()
    assert "@media print" in css and ".topbar" in css.split("@media print", 1)[1]


def test_topic_without_judgments_has_an_empty_report_not_an_error(accounts, db):
    from annotation.services.topics.topic import topic_create
    from tests.factories import ClassifierFactory, corpus_build

    corpus, ids = corpus_build(name="fresh", size=10)
    topic = topic_create(corpus=corpus, name="fresh topic", c1=ClassifierFactory.create(corpus=corpus, ids=ids[:5]),
                         c2=ClassifierFactory.create(corpus=corpus, ids=ids[3:8]))
    client = Client()
    client.force_login(accounts["manager"])
    html = client.get(reverse("reports:topic", args=[topic.pk])).content.decode()
    assert "No judgments yet" in html and "No estimate recorded yet" in html
    overview = client.get(reverse("reports:topics")).content.decode()
    assert "fresh topic" in overview and "not enough judgments" in overview


def test_a_failing_first_computation_gives_a_clear_page_not_a_500(world, manager, monkeypatch):
    import estimation.services.recompute as recompute

    def broken(**kwargs):
        raise RuntimeError("stats exploded")

    monkeypatch.setattr(recompute, "topic_snapshot_create", broken)
    for name in ("reports:topic", "reports:topic_print", "reports:topic_csv", "reports:topic_json"):
        response = manager.get(reverse(name, args=[world["topic"].pk]))
        assert response.status_code == 503 and b"could not be computed" in response.content


def test_report_shows_the_certification_verdict_with_its_plan(world, manager):
    from django.utils import timezone

    from estimation.models import CertificationPlan, CertificationVerdict

    plan = CertificationPlan.objects.create(
        topic=world["topic"], classifier=world["c2"], metric="pair_recall", target=0.7, alpha=0.05,
        status="decided", locked_at=timezone.now(), pilot={"feasible": True}, sample_size={"total": 40})
    CertificationVerdict.objects.create(plan=plan, passed=False, estimate=0.66, lower_bound=0.58, inputs={},
                                        code_version="test", checksum="c" * 64)
    html = manager.get(reverse("reports:topic", args=[world["topic"].pk])).content.decode()
    section = html[html.index('id="certification"'):]
    assert "Failed" in section and "0.580" in section and "0.660" in section and "≥ 0.7" in section
    assert "model &lt;script&gt;" in section  # the plan's classifier, escaped
    assert f'href="{reverse("reports:certification", kwargs={"topic_id": world["topic"].pk})}"' in section
    overview = manager.get(reverse("reports:topics")).content.decode()
    assert "Failed" in overview


def test_report_shows_the_dependence_sensitivity_table(world, manager):
    html = manager.get(reverse("reports:topic", args=[world["topic"].pk])).content.decode()
    report = EstimateSnapshot.objects.get(topic=world["topic"]).report
    table = html[html.index('id="sensitivity"'):]
    table = table[: table.index("</table>")]
    assert table.count("<tr>") == len(report["sensitivity"]) + 1 and len(report["sensitivity"]) >= 3
    point = report["sensitivity"][0]
    assert f"{point['delta1']:.2f}" in table


def _visible_text(html: str) -> str:
    """The page's text outside the glossary and the "Details" folds (where symbols are allowed), without tags."""
    import html as html_lib
    import re

    html = re.sub(r"<(script|style|details)\b.*?</\1>", " ", html, flags=re.S)
    html = re.sub(r'<section class="card glossary".*?</section>', " ", html, flags=re.S)
    return html_lib.unescape(re.sub(r"<[^>]+>", " ", html))


def test_report_headline_per_classifier_against_the_topic_target(world, manager):
    from estimation.templatetags.report_extras import recall_headline

    html = manager.get(reverse("reports:topic", args=[world["topic"].pk])).content.decode()
    report = EstimateSnapshot.objects.get(topic=world["topic"]).report
    top = html.index('id="headlines"')
    assert top < html.index('id="classifiers"') and top < html.index("What to know")  # at the top
    block = _visible_text(html[top:html.index("</div>", top)])
    for row in report["classifiers"]:
        # The headline's figure (schema 3), no longer the pair model's interval (which assumes independence).
        expected = recall_headline(name=row["name"], recall=row["headline"], target=world["topic"].target_recall,
                                   confidence=world["topic"].confidence)
        assert expected["text"] in block
        low, high = row["headline"]["low"], row["headline"]["high"]
        state = "meets" if low >= 0.8 else "below" if high < 0.8 else "straddles"
        assert expected["state"] == state


def test_report_uses_plain_region_names_and_words_for_symbols(world, manager):
    html = manager.get(reverse("reports:topic", args=[world["topic"].pk])).content.decode()
    text = _visible_text(html)
    for code in ("A12", "B1", "B2", "A1∩A2", "A1 ∩ A2", "A1 ∖ A2", "δ1", "Eq. 1", "Eq. 2", "seed 00", "Seed 00",
                 "n̂", "τ", "QBCB", "monte-carlo"):
        assert code not in text, code
    assert 'id="region-legend"' in html and "“found by both”: documents both" in text
    assert f"“found only by {world['c1'].name}”" in text and f"“found only by {world['c2'].name}”" in text
    # The method columns are folded under Details, still on the page.
    details = html[html.index('id="classifier-details"'):]
    assert "Recall, Eq. 1" in details and "monte-carlo" in details


def test_every_glossary_link_has_its_anchor(world, manager):
    import re

    for url in (reverse("reports:topic", args=[world["topic"].pk]),
                reverse("reports:certification", kwargs={"topic_id": world["topic"].pk})):
        html = manager.get(url).content.decode()
        links = set(re.findall(r'href="#(glossary-[\w-]+)"', html))
        anchors = set(re.findall(r'id="(glossary-[\w-]+)"', html))
        assert links and links <= anchors, links - anchors
        assert {"glossary-dependence", "glossary-relevant", "glossary-overlap", "glossary-rare", "glossary-target",
                "glossary-alpha", "glossary-beta", "glossary-qbcb", "glossary-seeds", "glossary-regions"} <= anchors
        glossary = html[html.index('id="glossary"'):]
        for symbol in ("δ1", "n̂", "τ", "α", "β", "QBCB", "Eq. 1", "Eq. 2", "seed 000", "seed 004"):
            assert symbol in glossary, symbol
        text = _visible_text(html)
        for symbol in ("δ1", "τ", "α", "β", "QBCB", "seed 00", "Seed 00", "A12"):
            assert symbol not in text, (url, symbol)


def test_report_without_judgments_says_why_no_recall_is_shown(manager):
    from annotation.services.topics.topic import topic_create
    from tests.factories import ClassifierFactory, corpus_build

    corpus, ids = corpus_build(name="other corpus")
    topic = topic_create(corpus=corpus, name="empty", c1=ClassifierFactory.create(corpus=corpus, name="kw", ids=ids[:30]),
                         c2=ClassifierFactory.create(corpus=corpus, name="model", ids=ids[15:45]), instructions="?")
    html = manager.get(reverse("reports:topic", args=[topic.pk])).content.decode()
    text = _visible_text(html)
    assert "kw: recall not shown yet — no document has been judged yet." in text
    assert "model: recall not shown yet — no document has been judged yet." in text
    assert 'data-state="withheld"' in html


def test_report_page_links_the_raw_exports(world, manager):
    html = manager.get(reverse("reports:topic", args=[world["topic"].pk])).content.decode()
    assert reverse("reports:topic_judgments_csv", args=[world["topic"].pk]) in html
    assert reverse("reports:topic_judgments_jsonl", args=[world["topic"].pk]) in html


# --------------------------------------------------------------------------- the headline's basis (schema 3)


def _headline_block(html: str) -> str:
    top = html.index('id="headlines"')
    return _visible_text(html[top:html.index("</div>", top)])


def test_report_headline_shows_its_basis_and_statement_beside_the_figure(world, manager):
    from estimation.templatetags.report_extras import HEADLINE_BASIS_LABELS, plain

    html = manager.get(reverse("reports:topic", args=[world["topic"].pk])).content.decode()
    report = EstimateSnapshot.objects.get(topic=world["topic"]).report
    block = " ".join(_headline_block(html).split())
    for row in report["classifiers"]:
        headline = row["headline"]
        assert headline["basis"] in ("design", "band", "pair_model")
        assert f'data-basis="{headline["basis"]}"' in html
        assert HEADLINE_BASIS_LABELS[headline["basis"]] in block
        assert " ".join(plain(headline["statement"], report["pair"]).split()) in block
    # The pair model's figure stays on the page, labelled as resting on independence.
    assert "Recall if the two classifiers are independent" in html


def test_an_old_snapshot_without_headline_renders_with_the_pair_model_statement(world, manager):
    from estimation.services.report_headline import PAIR_MODEL_STATEMENT
    from estimation.templatetags.report_extras import recall_headline

    manager.get(reverse("reports:topic", args=[world["topic"].pk]))
    snapshot = EstimateSnapshot.objects.get(topic=world["topic"])
    report = snapshot.report
    report["schema"] = 2
    for row in report["classifiers"]:
        row.pop("headline", None)
    EstimateSnapshot.objects.filter(pk=snapshot.pk).update(report=report)
    response = manager.get(reverse("reports:topic", args=[world["topic"].pk]))
    assert response.status_code == 200
    assert EstimateSnapshot.objects.filter(topic=world["topic"]).count() == 1  # read, not recomputed
    html = response.content.decode()
    block = " ".join(_headline_block(html).split())
    assert PAIR_MODEL_STATEMENT in block and 'data-basis="pair_model"' in html
    for row in report["classifiers"]:
        expected = recall_headline(name=row["name"], recall=row["recall"], target=world["topic"].target_recall,
                                   confidence=world["topic"].confidence)
        assert expected["text"] in block
    csv_text = manager.get(reverse("reports:topic_csv", args=[world["topic"].pk])).content.decode()
    assert "\nheadline," not in csv_text and "\nclassifier," in csv_text


@pytest.mark.django_db
def test_a_topic_with_a_judged_complement_sample_leads_with_the_design_based_figure_and_count():
    from annotation.models import SampleDraw
    from tests.factories import build_topic, make_draw, make_label, user_with_role

    built = build_topic()
    make_draw(built.topic, SampleDraw.Purpose.PAIR, "N", [45, 46, 47, 48, 49], built.docs)
    for position in range(45, 50):
        make_label(built.topic, built.docs[position], relevant=position == 45)
    client = Client()
    client.force_login(user_with_role("mia", "manager"))
    html = client.get(reverse("reports:topic", args=[built.topic.pk])).content.decode()
    report = EstimateSnapshot.objects.get(topic=built.topic).report
    block = " ".join(_headline_block(html).split())
    assert "holds whatever the two classifiers' dependence" in block
    assert [row["headline"]["basis"] for row in report["classifiers"][:2]] == ["design", "design"]
    # One count of relevant documents: the design-based total; the pair's and the other models' under Details.
    total = report["design_based"]["relevant_total"]["estimate"]
    card = html[html.index('id="n-hat"'):]
    assert 'data-basis="design"' in card[:40] and f">{total:.0f}<" in card[:80]
    details = card[card.index('id="n-hat-others"'):card.index("</details>")]
    assert "if the two classifiers are independent" in details
    # The capture–recapture counts (e.g. "Model Mth: about … relevant documents") moved from "What to know".
    counts = [d["message"] for d in report["diagnostics"] if d["code"] == "capture_recapture"]
    start = html.find('id="diagnostics"')
    what_to_know = html[start:html.index("</div>", start)] if start >= 0 else ""
    assert "Capture–recapture with" not in what_to_know
    for message in counts:
        assert message[:20] not in what_to_know
    if counts:
        assert "Capture–recapture with model" in details
