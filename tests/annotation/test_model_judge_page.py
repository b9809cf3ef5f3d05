"""The analyst's model-judge page and the report's judge block (templates/reports/_judge.html): quote, confirm,
run; the block shows the concordance table, both intervals, the judgments saved and the assumptions in words.
A scores classifier serves as judge here (no HTTP); the endpoint path is in test_model_judge.py."""
from __future__ import annotations

import pytest
from django.template.loader import render_to_string
from django.urls import reverse

from annotation.models import Classifier, ClassifierScore, ModelJudgeRun, SampledDocument
from annotation.services.sampling.draws import samples_draw
from estimation.services.report_judge import topic_judge_report
from tests.factories import judge, make_pair_world, user_with_role

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    w = make_pair_world(n=1500, prevalence=0.1, noise=0.02, seed=8, topic_name="wheat <b>x</b>")
    draws = samples_draw(topic=w.topic, per_region=40, complement=200, seed=4)
    judge(w, set(SampledDocument.objects.filter(draw__in=draws).values_list("document_id", flat=True)))
    scorer = Classifier.objects.create(corpus=w.topic.corpus, name="judge scores", kind=Classifier.Kind.SCORES,
                                       retrieved_bitmap=w.topic.pair.c1.retrieved_bitmap)
    ClassifierScore.objects.bulk_create([ClassifierScore(classifier=scorer, document_id=d,
                                                         score=0.95 if d in w.relevant else 0.05)
                                         for d in w.doc_ids])
    w.scorer = scorer
    return w


def test_quote_then_confirm_then_the_runs_table(client, world):
    client.force_login(user_with_role("analyst-judge", "analyst"))
    url = reverse("analyst:topic_judge", args=[world.topic.pk])
    page = client.get(url)
    assert page.status_code == 200 and b"none configured" in page.content
    form = {"kind": "classifier", "classifier": world.scorer.pk, "a12": 60, "b1": 60, "b2": 60, "n": 300}
    quote = client.post(url, form)
    assert quote.status_code == 200 and b'id="judge-confirm"' in quote.content
    assert not ModelJudgeRun.objects.exists()
    done = client.post(url, {**form, "confirm_cost": "0"})
    assert done.status_code == 302
    run = ModelJudgeRun.objects.get()
    assert run.status == "done" and 300 < run.total <= 480  # a region smaller than asked is read whole
    page = client.get(url)
    assert f'id="judge-run-{run.pk}"'.encode() in page.content
    assert b"<b>x</b>" not in page.content  # the topic's name is escaped


def test_the_page_needs_the_analyst_role(client, world):
    client.force_login(user_with_role("manager-judge", "manager"))
    assert client.get(reverse("analyst:topic_judge", args=[world.topic.pk])).status_code in (302, 403)


def test_the_report_block_renders_what_a_manager_reads(world):
    from annotation.services.crowd.model_judge import model_judge_launch

    model_judge_launch(topic_id=world.topic.pk, plan={"A12": 60, "B1": 60, "B2": 60, "N": 300}, kind="classifier",
                       classifier_id=world.scorer.pk, confirm_cost=0)
    block = topic_judge_report(topic=world.topic)
    html = render_to_string("reports/_judge.html", {"judge": block, "report": {"pair": {"c1": "A", "c2": "B"}}})
    for region in ("A12", "B1", "B2", "N"):
        assert f'id="judge-concordance-{region}"' in html
    assert 'id="judge-saved"' in html and "nothing about the judge" in html
    assert html.count('class="interval"') == 4
    assert render_to_string("reports/_judge.html", {"judge": None}).strip() == ""
