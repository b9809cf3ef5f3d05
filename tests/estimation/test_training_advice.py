"""The training-stop advice (seed 004 Sec. 3) through its service, its page and its API: roles, the parse of pasted
points, bad input as a form error or a 400 problem (never a 500), and the advice rendered and escaped."""
from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from api.services import api_token_create
from estimation.services.training_advice import TrainingAdviceError, training_points_parse, training_stop_advise
from estimation.stats.training_stop import LearningPoint
from tests.factories import user_with_role

pytestmark = pytest.mark.django_db

URL = "/reports/certification/training-advice/"
API = "/api/v1/training-advice/"
CURVE = "# size, F1\n2000, 0.829\n4000, 0.836\n8000, 0.840\n16000, 0.843\n"
FORM = {"points": CURVE, "target": "0.75", "prevalence": "0.1", "alpha": "0.05", "power": "0.93",
        "margin_confidence": "0.95", "budget": "", "cost_per_annotation": "1.50", "retrieved_fraction": ""}


def _page_client(role: str | None) -> Client:
    client = Client()
    client.force_login(user_with_role(f"page-{role}", role))
    return client


def _api_client(role: str | None) -> APIClient:
    user = user_with_role(f"token-{role}", role)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {api_token_create(user=user, name='t').plaintext}")
    return client


# ------------------------------------------------------------------ the service


def test_pasted_points_parse_with_header_comments_and_separators():
    points = training_points_parse(text="size;F1\n\n# a comment\n200\t0.61\n400, 0.70, 80\n800 0.74\n")
    assert points == [LearningPoint(200, 0.61), LearningPoint(400, 0.70, 80), LearningPoint(800, 0.74)]


@pytest.mark.parametrize(("text", "words"), [
    ("200, 0.7\n400, abc\n", "Line 2"),
    ("200, 0.7, 5, 6\n", "4 numbers"),
    ("200.5, 0.7\n", "whole number"),
    ("200, 1.7\n", "between 0 and 1"),
    ("0, 0.7\n", "between 1"),
    ("200, nan\n", "must be a number"),
])
def test_bad_pasted_lines_name_the_line_and_the_reason(text, words):
    with pytest.raises(TrainingAdviceError, match=words):
        training_points_parse(text=text)


def test_the_service_turns_the_statistics_refusals_into_application_errors():
    with pytest.raises(TrainingAdviceError, match="twice"):
        training_stop_advise(points=[LearningPoint(200, 0.7), LearningPoint(200, 0.72)], target=0.75,
                             prevalence=0.1)
    with pytest.raises(TrainingAdviceError, match="impossible"):
        training_stop_advise(points=[LearningPoint(200, 0.9)], target=0.75, prevalence=0.1, retrieved_fraction=0.4)
    with pytest.raises(TrainingAdviceError, match="target"):
        training_stop_advise(points=[LearningPoint(200, 0.8)], target=1.5, prevalence=0.1)
    with pytest.raises(TrainingAdviceError, match="at least one"):
        training_stop_advise(points=[], target=0.75, prevalence=0.1)


# ------------------------------------------------------------------ the page


@pytest.mark.parametrize("role", ["analyst", "manager"])
def test_analysts_and_managers_get_the_advice_table_and_plots(role):
    response = _page_client(role).post(URL, FORM)
    assert response.status_code == 200
    html = response.content.decode()
    assert "Stop and certify with" in html
    assert html.count("<svg") == 2 and "Total annotations" in html
    assert "sequential bias" in html
    assert "$" in html  # the cost column
    assert "16000" in html or "16,000" in html


def test_the_empty_form_renders_for_a_get():
    response = _page_client("analyst").get(URL)
    assert response.status_code == 200 and b"Learning curve" in response.content


@pytest.mark.parametrize("role", ["annotator", None])
def test_other_roles_are_refused(role):
    assert _page_client(role).get(URL).status_code == 403


def test_anonymous_visitors_go_to_sign_in():
    response = Client().get(URL)
    assert response.status_code == 302 and "login" in response["Location"]


@pytest.mark.parametrize(("change", "words"), [
    ({"points": "200, 0.7\n200, 0.72\n"}, "given twice"),
    ({"points": "200, 0.7\n300, x"}, "Line 2"),
    ({"points": ""}, "required"),
    ({"target": "2"}, "less than or equal"),
    ({"prevalence": "0.1", "retrieved_fraction": "0.4", "points": "500, 0.9"}, "impossible"),
    ({"points": "<script>alert(1)</script>, 0.7"}, "Line 1"),
    ({"points": "size, F1\nwords, only"}, "Line 2"),
])
def test_bad_input_is_a_form_error_not_a_500(change, words):
    response = _page_client("analyst").post(URL, {**FORM, **change})
    assert response.status_code == 400
    html = response.content.decode()
    assert words in html
    assert "<script>alert(1)" not in html  # escaped in the error message


def test_the_page_is_linked_from_a_topics_certification_page():
    from tests.factories import make_pair_world

    world = make_pair_world(n=120, prevalence=0.3)
    response = _page_client("analyst").get(reverse("reports:certification", kwargs={"topic_id": world.topic.pk}))
    assert reverse("reports:training_advice") in response.content.decode()


# ------------------------------------------------------------------ the API


def _body(**change):
    body = {"points": [{"size": r, "f1": f} for r, f in ((200, 0.76), (400, 0.80), (800, 0.82), (1600, 0.83))],
            "target": 0.75, "prevalence": 0.1}
    body.update(change)
    return body


@pytest.mark.parametrize("role", ["analyst", "manager"])
def test_the_api_answers_the_advice(role):
    response = _api_client(role).post(API, _body(), format="json")
    assert response.status_code == 200, response.content[:300]
    data = response.json()
    assert data["action"] in ("continue", "stop", "not_reachable")
    assert [p["size"] for p in data["points"]] == [200, 400, 800, 1600]
    assert data["fit"]["minimum_total"] > 0 and data["caveat"]
    assert data["margin_confidence"] == 0.95 and data["power"] == 0.93


def test_the_api_refuses_an_annotator():
    assert _api_client("annotator").post(API, _body(), format="json").status_code == 403


@pytest.mark.parametrize("change", [
    {"points": []},
    {"points": [{"size": 200, "f1": 0.7}, {"size": 200, "f1": 0.71}]},
    {"points": [{"size": -3, "f1": 0.7}]},
    {"points": [{"size": 200, "f1": "NaN"}]},
    {"points": [{"size": 200, "f1": 1e308}]},
    {"points": "200, 0.7"},
    {"points": [{"size": 200, "f1": 0.9}], "retrieved_fraction": 0.4},
    {"target": "high"},
    {"prevalence": 0},
    {"budget": 0},
    {"margin_confidence": 1},
    {"cost_per_annotation": -1},
    {"points": [{"size": r, "f1": 0.8} for r in range(1, 500)]},
])
def test_bad_api_input_is_a_400_problem(change):
    response = _api_client("analyst").post(API, _body(**change), format="json")
    assert response.status_code == 400, (change, response.status_code, response.content[:300])
    assert response["Content-Type"].startswith("application/problem+json")


def test_the_cost_plot_keeps_its_axis_on_the_lowest_totals():
    from estimation.views.training_advice import cost_curve_svg

    points = training_points_parse(text="200, 0.70\n400, 0.76\n800, 0.79\n1200, 0.80\n1600, 0.815\n2400, 0.82\n")
    advice = training_stop_advise(points=points, target=0.72, prevalence=0.1, budget=8000)
    huge = max(p.total for p in advice.points if p.total is not None)
    lowest = min(p.total for p in advice.points if p.total is not None)
    assert huge > 4 * lowest  # the fixture has a point far above the rest (800 documents: about 88,000)
    svg = cost_curve_svg(advice)
    assert svg.count('class="total"') == sum(1 for p in advice.points if p.total is not None) - 1
    assert "1 off the top" in svg and "budget 8,000" in svg
