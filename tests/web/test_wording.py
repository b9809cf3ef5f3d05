"""Issue 26 items 1 and 2, on the rendered pages: the words a new analyst and a manager read.

One name per region on every page ("found by both", "found only by <classifier>", "found by neither"), the codes
(A12, B1, N, R:…), the statistics' jargon (HDI, Dirichlet, seed papers, "the paper's separate samples", model
selection) and raw values (a metric's code, an ISO timestamp) only under a "Details" fold or in the JSON; prevalence
printed one way (a percentage); the launch review's breadcrumb names the topic; forms whose help text a screen reader
finds (every aria-describedby id exists), whose file inputs say what they accept, and whose keyword fields are never
ticked for the analyst; `add_classifier --keywords` reads no field it was not told to."""
from __future__ import annotations

import html as html_lib
import re

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

pytestmark = pytest.mark.django_db

# Codes and jargon a manager must not meet outside a "Details" fold (issue 26 item 2).
FORBIDDEN = (
    (r"\bA12\b", "a region code"),
    (r"\bB[12]\b", "a region code"),
    (r"\b[Rr]egion N\b", "a region code"),
    (r"\bR:\d", "a further classifier's region code"),
    (r"\bHDI\b", "HDI"),
    (r"Dirichlet", "Dirichlet"),
    (r"\b[Ss]eed \d{3}", "a seed paper's number"),
    (r"the paper's", "the paper's separate samples"),
    (r"\bMth\b|\bAIC\b", "model selection"),
    (r"pair_recall|qbcb_recall", "a metric's code"),
    (r"\br1/r2\b|\br[12]: ±", "r1/r2"),
    (r"both classifiers”|classifier only|“neither classifier”", "an old region name"),
    (r"Warning:", "a Warning: label"),
    (r"\d{4}-\d\d-\d\dT\d\d:\d\d", "an ISO timestamp"),
    (r"\b(?:of|in|for) N\b|(?<![\w“])N (?:may|holds|has)\b|\bN's\b", "the complement's letter N"),
    (r"[Pp]osterior|monte-carlo|Clopper", "the statistics' jargon"),
)


def visible_text(page: str) -> str:
    """The page's text outside <details> folds (innermost first, so nested folds go too), scripts and styles."""
    page = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S)
    while True:
        stripped = re.sub(r"<details\b(?:(?!<details\b).)*?</details>", " ", page, flags=re.S)
        if stripped == page:
            break
        page = stripped
    text = re.sub(r"<[^>]+>", " ", page)
    return re.sub(r"\s+", " ", html_lib.unescape(text))


def assert_plain(page: str, where: str) -> str:
    text = visible_text(page)
    for pattern, what in FORBIDDEN:
        found = re.search(pattern, text)
        assert not found, f"{where}: {what} outside Details: …{text[max(0, found.start() - 80):found.end() + 80]}…"
    return text


def assert_prevalence_in_percent(text: str, where: str, *, at_least: int = 1) -> None:
    """Every prevalence the text prints is a percentage ("prevalence ≈ 0.89%"), never a bare share."""
    # (A number followed by more numbers is a plot's axis after its title "… against prevalence", not a figure.)
    printed = re.findall(r"prevalence(?: of| is)?(?: ≈| =)? (\d+(?:[.,]\d+)*)(?![\d.,])(%?)(?! [\d,]+ )", text)
    assert len(printed) >= at_least, (where, printed)
    assert all(sign == "%" for _, sign in printed), (where, printed)


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def reported(world):
    from estimation.services.recompute import topic_snapshot_create

    topic_snapshot_create(topic_id=world["topic"].pk)
    return world


# --------------------------------------------------------------------------- regions, jargon, prevalence


def test_report_names_regions_in_plain_words_and_prints_prevalence_as_a_percentage(reported):
    world = reported
    page = client_for(world["accounts"]["manager"]).get(reverse("reports:topic", args=[world["topic"].pk]))
    assert page.status_code == 200
    html = page.content.decode()
    text = assert_plain(html, "report")
    c1, c2 = world["c1"].name, world["c2"].name
    # The region table and the legend use the one vocabulary, with the classifiers' names.
    regions = visible_text(html[html.index("<h2>Regions</h2>"):html.index("<h2>Certification</h2>")])
    for name in ("found by both", f"found only by {c1}", f"found only by {c2}"):
        assert name in regions, name
    assert f"“found only by {c1}”" in text and "“found by neither”: documents neither retrieved" in text
    # The Venn plot's captions use the same words.
    venn = html[html.index('id="plot-venn"'):]
    assert "found by both" in venn and "found only by" in venn
    assert_prevalence_in_percent(text, "report", at_least=2)  # the relevant-count card and the cost curve
    # The codes stay available where they belong: the glossary's fold.
    technical = html[html.index('id="glossary-technical"'):]
    assert "A12" in technical and "seed 000" in technical


def test_what_to_know_follows_what_the_figures_rest_on_and_puts_errors_first(reported):
    from django.template.loader import render_to_string

    world = reported
    html = client_for(world["accounts"]["manager"]).get(
        reverse("reports:topic", args=[world["topic"].pk])).content.decode()
    order = [html.find(f'id="{card}"') for card in ("headlines", "assumptions", "diagnostics")]
    present = [i for i in order if i >= 0]
    assert present == sorted(present) and order[0] >= 0 and order[1] > order[0], order

    diagnostics = [
        {"code": "few_relevant", "severity": "warning",
         "message": "Only 4.11367 of the 8 judged documents in region B1 (C1 only) were relevant."},
        {"code": "capture_recapture_dependence", "severity": "warning", "message": "Model Mth (re-selected by AIC)."},
        {"code": "no_relevant", "severity": "error", "message": "No judged document of region A12 was relevant."},
    ]
    body = render_to_string("reports/_report_body.html", {
        "topic": world["topic"], "report": {"pair": {"c1": "Title words", "c2": "Body words"}, "regions": []},
        "snapshot": {"version": 1}, "diagnostics": diagnostics, "certification": {},
        "certification_state": {"state": "none"}})
    card = re.search(r'<div class="card" id="diagnostics">(.*?)</div>', body, re.S).group(1)
    items = re.findall(r"<li[^>]*>(.*?)</li>", re.search(r'<ul id="diagnostics-main">(.*?)</ul>', card, re.S).group(1))
    assert len(items) == 2 and items[0].startswith("<strong>Not reliable:</strong>"), items
    assert "“found by both”" in html_lib.unescape(items[0])
    assert html_lib.unescape(items[1]) == ("Only about 4.1 of the 8 judged documents in the region “found only by "
                                           "Title words” were relevant.")
    assert_plain(card, "What to know")
    assert "Model Mth" in card[card.index("<details"):]  # the method's notes, folded


def test_topic_plan_and_launch_review_use_the_same_region_names(world):
    world_topic = world["topic"]
    client = client_for(world["accounts"]["analyst"])
    html = client.get(reverse("analyst:topic", args=[world_topic.pk])).content.decode()
    plan = html[html.index('id="plan"'):html.index('id="plan-summary"')]
    rows = dict(re.findall(r'<td data-region="(\w+)">(.*?)(?:<span|</td>)', plan, re.S))
    assert html_lib.unescape(rows["A12"]).strip() == "found by both"
    assert html_lib.unescape(rows["B1"]).strip() == f"found only by {world['c1'].name}"
    assert html_lib.unescape(rows["B2"]).strip() == f"found only by {world['c2'].name}"
    if "N" in rows:
        assert html_lib.unescape(rows["N"]).strip() == "found by neither"
    plan_text = visible_text(html[html.index('id="plan"'):])
    for pattern, what in FORBIDDEN:
        assert not re.search(pattern, plan_text), what
    assert_prevalence_in_percent(plan_text, "plan")


def test_launch_review_names_regions_and_its_breadcrumb_names_the_topic(accounts):
    from annotation.services.topics.topic import topic_create
    from tests.factories import ClassifierFactory, corpus_build

    corpus, ids = corpus_build(size=80)
    c1 = ClassifierFactory.create(corpus=corpus, name="Title words", ids=ids[0:30])
    c2 = ClassifierFactory.create(corpus=corpus, name="Body words", ids=ids[15:45])
    topic = topic_create(corpus=corpus, name="Oil news", c1=c1, c2=c2, instructions="Oil?")
    client = client_for(accounts["analyst"])
    page = client.post(reverse("analyst:topic_launch", args=[topic.pk]), {"half_width": "0.2"})
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="launch-quote"' in html
    text = assert_plain(html, "launch review")
    parts = visible_text(html[html.index("<tbody>"):html.index("</tbody>")])
    assert "“found by both”" in parts and "“found only by Title words”" in parts
    assert "“found only by Body words”" in parts
    crumb = re.search(r'<p class="muted">(.*?)</p>', html[html.index("<main"):], re.S).group(1)
    assert f'href="{reverse("analyst:topic", args=[topic.pk])}">Oil news</a>' in crumb
    assert corpus.name not in html_lib.unescape(crumb)
    assert "Oil news" in text


# --------------------------------------------------------------------------- certification


@pytest.fixture
def certified(accounts):
    """A pair topic with two locked attempts on the same classifier and metric: the first decided (a verdict),
    the second still sampling (so the attempts' family is listed)."""
    from estimation.models import CertificationPlan
    from estimation.services.certification_locks import certification_plan_lock
    from estimation.services.certification_plans import certification_plan_create
    from estimation.services.certification_verdicts import certification_decide
    from estimation.services.recompute import topic_snapshot_create
    from tests.factories import c1, certification_ids, judge, make_pair_world, pilot

    world = make_pair_world(n=4000, prevalence=0.2, recall1=0.85, recall2=0.6, noise=0.01, seed=5)
    pilot(world)
    manager = accounts["manager"]
    first = certification_plan_create(topic=world.topic, classifier=c1(world), attempts=2, target=0.6,
                                      metric=CertificationPlan.Metric.PAIR_RECALL, user=manager)
    first = certification_plan_lock(plan_id=first.pk, user=manager, seed=1234)
    judge(world, certification_ids(first))
    certification_decide(plan_id=first.pk)
    second = certification_plan_create(topic=world.topic, classifier=c1(world), target=0.65,
                                       metric=CertificationPlan.Metric.PAIR_RECALL, user=manager)
    certification_plan_lock(plan_id=second.pk, user=manager, seed=99)
    topic_snapshot_create(topic_id=world.topic.pk)
    first.refresh_from_db()
    return world, first


def test_certification_pages_show_no_metric_code_and_dates_in_the_page_format(certified, accounts):
    world, plan = certified
    client = client_for(accounts["manager"])
    stamp = r"\d{4}-\d\d-\d\d \d\d:\d\d UTC"

    report = client.get(reverse("reports:topic", args=[world.topic.pk])).content.decode()
    card = report[report.index('id="certification"'):report.index('id="glossary"')]
    card_text = assert_plain(card, "report's certification card")
    assert re.search(rf"Locked {stamp}", card_text), card_text
    assert "Recall (two classifiers)" in card_text  # the attempts' table names the metric in words
    assert re.search(r"found by both \d+ / \d+", card_text), card_text

    topic_page = client.get(reverse("reports:certification", args=[world.topic.pk])).content.decode()
    text = assert_plain(topic_page, "certification page")
    assert "Recall (two classifiers) (targets" in text

    plan_page = client.get(reverse("reports:certification_plan", args=[plan.pk])).content.decode()
    text = assert_plain(plan_page, "certification plan")
    assert re.search(rf"since {stamp}", text), text

    verdict = client.get(reverse("reports:certification_verdict", args=[plan.pk])).content.decode()
    assert_plain(verdict, "verdict")
    assert re.search(rf"Computed once on {stamp}", visible_text(verdict.replace("<details", "<div")
                                                                .replace("</details>", "</div>")))


def test_report_csv_gives_the_region_codes_a_legend(reported):
    import csv
    import io

    world = reported
    body = client_for(world["accounts"]["manager"]).get(
        reverse("reports:topic_csv", args=[world["topic"].pk])).content.decode()
    metadata = {row[0]: row[1] for row in csv.reader(io.StringIO(body)) if row and row[0].startswith("#")}
    assert metadata["#region.A12"] == "found by both"
    assert metadata["#region.B1"].startswith("found only by ") and "kw" in metadata["#region.B1"]
    assert metadata["#region.B2"].startswith("found only by ") and "model" in metadata["#region.B2"]


# --------------------------------------------------------------------------- the filters behind the words


def test_prevalence_has_one_format_with_sensible_digits():
    from core.numbers import percent_text
    from estimation.templatetags.report_extras import percent

    assert [percent_text(v) for v in (0.2087, 0.012, 0.0089, 0.00048, 0.0)] == [
        "20.9%", "1.2%", "0.89%", "0.048%", "0%"]
    assert percent(None) == "—" and percent("0.5") == "50.0%"


def test_plain_puts_statistics_sentences_into_the_pages_words():
    from estimation.templatetags.report_extras import metric_name, plain, region_legend, when

    pair = {"c1": "coffee (title keywords)", "c2": "coffee (body keywords)"}
    assert plain("Region B1 (“coffee (title keywords)” only) is expected to hold few relevant documents.", pair) == (
        "The region “found only by coffee (title keywords)” is expected to hold few relevant documents.")
    assert plain("pair region A12: 19 documents, $1.14", pair) == "The region “found by both”: 19 documents, $1.14"
    assert plain("judge 33 documents (the paper's separate samples would need 57); a uniform sample at prevalence "
                 "0.00475278 would need 2,828.") == (
        "judge 33 documents (the original method's samples would need 57); a uniform sample at prevalence "
        "0.48% would need 2,828.")
    assert metric_name("pair_recall") == "Recall (two classifiers)" and metric_name("f1") == "F1 (uniform test set)"
    legend = region_legend(pair)
    assert legend.startswith("Regions: “found by both”: documents both coffee (title keywords) and")
    assert "A12" not in legend and "B1" not in legend
    assert when("2026-11-28T01:47:12.5+00:00").minute == 47 and when("not a time") == "not a time"


# --------------------------------------------------------------------------- forms (item 1)


def test_every_aria_describedby_names_an_element_of_the_page_and_file_inputs_say_what_they_accept(world):
    from tests.factories import make_topic_set

    topic_set = make_topic_set(corpus=world["corpus"])
    analyst = client_for(world["accounts"]["analyst"])
    corpus, topic = world["corpus"], world["topic"]
    urls = [
        reverse("analyst:topic_new"), reverse("analyst:topic_edit", args=[topic.pk]),
        reverse("analyst:topic", args=[topic.pk]), reverse("analyst:corpus_upload"),
        reverse("analyst:classifier_keywords", args=[corpus.pk]),
        reverse("analyst:classifier_upload", args=[corpus.pk]), reverse("analyst:gold", args=[topic.pk]),
        reverse("analyst:topic_set_new"), reverse("analyst:router_keywords", args=[topic_set.pk]),
        reverse("analyst:router_upload", args=[topic_set.pk]),
    ]
    described = files = 0
    for url in urls:
        page = analyst.get(url)
        assert page.status_code == 200, url
        html = page.content.decode()
        ids = set(re.findall(r'\bid="([^"]+)"', html))
        for names in re.findall(r'aria-describedby="([^"]+)"', html):
            for name in names.split():
                assert name in ids, (url, name)
                described += 1
        for file_input in re.findall(r'<input[^>]*type="file"[^>]*>', html):
            assert "accept=" in file_input, (url, file_input)
            files += 1
    assert described > 10 and files >= 3, (described, files)


def test_router_rules_help_is_announced_for_every_rule(accounts):
    from tests.factories import make_topic_set

    topic_set = make_topic_set()
    html = client_for(accounts["analyst"]).get(reverse("analyst:router_keywords", args=[topic_set.pk])).content.decode()
    ids = set(re.findall(r'\bid="([^"]+)"', html))
    described = [n for names in re.findall(r'aria-describedby="([^"]+)"', html) for n in names.split()]
    terms = [n for n in described if n.endswith("-terms_helptext")]
    assert len(terms) == 3 and all(n in ids for n in terms), (terms, sorted(ids))


def test_keyword_form_ticks_no_field_and_the_topic_form_offers_unsure(world):
    analyst = client_for(world["accounts"]["analyst"])
    html = analyst.get(reverse("analyst:classifier_keywords", args=[world["corpus"].pk])).content.decode()
    boxes = re.findall(r'<input[^>]*type="checkbox"[^>]*name="fields"[^>]*>', html)
    assert len(boxes) >= 2 and not any("checked" in box for box in boxes), boxes
    html = analyst.get(reverse("analyst:topic_new")).content.decode()
    assert re.search(r'<input[^>]*type="checkbox"[^>]*name="allow_unsure"', html)
    # The checkbox sits inside its label, before its words.
    assert re.search(r'<label class="choice" for="id_allow_unsure"><input[^>]*name="allow_unsure"[^>]*> <span>', html)


def test_add_classifier_reads_no_field_it_was_not_told_to():
    from annotation.models import Classifier
    from tests.factories import CorpusFactory, make_documents

    corpus = CorpusFactory.create()
    make_documents(corpus, 3, texts=["coffee in the body", "tea", "tea"])
    with pytest.raises(CommandError, match="--keywords needs --fields"):
        call_command("add_classifier", "--corpus", corpus.name, "--name", "k", "--keywords", "coffee")
    assert not Classifier.objects.filter(name="k").exists()
    call_command("add_classifier", "--corpus", corpus.name, "--name", "k", "--keywords", "coffee", "--fields", "title")
    assert Classifier.objects.get(name="k").retrieved_count == 0  # "coffee" is in a body, not in a title
    with pytest.raises(CommandError, match="--fields only goes with --keywords"):
        call_command("add_classifier", "--corpus", corpus.name, "--name", "i", "--ids", "x.txt", "--fields", "title")


def test_model_judge_form_names_the_regions_as_every_page_does(world):
    html = client_for(world["accounts"]["analyst"]).get(
        reverse("analyst:topic_judge", args=[world["topic"].pk])).content.decode()
    labels = [html_lib.unescape(label) for label in re.findall(r'<label for="id_(?:a12|b1|b2|n)">(.*?):?</label>', html)]
    assert labels == ["Found by both", f"Found only by {world['c1'].name}", f"Found only by {world['c2'].name}",
                      "Found by neither"], labels
    assert_plain(html, "model judge page")
