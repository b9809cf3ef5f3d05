"""Certification sized from a cross-validated confusion matrix (issue 13 item 5, seed 004 Sec. 4.4).

Sizing equals the library's Alg. 2 for the counts given; bad counts are refused (service and form, with field
errors); a plan sized this way locks, draws fresh and decides like any F1 plan, its counts never entering the
verdict.
"""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from annotation.models import Label
from annotation.roles import roles_ensure
from estimation.models import CertificationPlan
from estimation.services.certification_locks import certification_plan_lock
from estimation.services.certification_plans import (
    CONFUSION_SOURCE,
    PLAN_SIMULATIONS,
    CertificationError,
    certification_plan_create_from_confusion,
    certification_plan_update,
)
from estimation.services.certification_verdicts import certification_decide
from estimation.stats import certification as cert_stats
from estimation.views.certification import ConfusionPlanForm
from tests.factories import UserFactory, c1, certification_ids, judge, make_pair_world

pytestmark = pytest.mark.django_db

Metric = CertificationPlan.Metric
# A cross-validation of 1,500 training documents: F1 = 510 / 567 = 0.899.
COUNTS = {"tp": 255, "fp": 12, "fn": 45, "tn": 1188}


@pytest.fixture
def world():
    # 4,000 documents, 20% relevant; C1 finds 85% of them with few false positives (true F1 about 0.9).
    return make_pair_world(n=4000, prevalence=0.2, recall1=0.85, recall2=0.6, noise=0.01, seed=5)


@pytest.fixture
def manager():
    return UserFactory.create(username="manager")


def _library_size(plan, world, counts=COUNTS):
    classifier = c1(world)
    return cert_stats.certification_test_size(
        **counts, target=plan.target, alpha=plan.alpha, power=plan.power, seed=plan.pilot["planning_seed"],
        simulations=PLAN_SIMULATIONS, retrieved_fraction=classifier.retrieved_count / 4000)


def test_the_size_is_the_librarys_for_the_counts_given(world, manager):
    assert not Label.objects.filter(topic=world.topic).exists()  # no labelled pilot at all
    plan = certification_plan_create_from_confusion(topic=world.topic, classifier=c1(world), target=0.8, **COUNTS,
                                                    folds=10, user=manager)
    assert plan.metric == Metric.F1 and plan.pilot["feasible"] is True, plan.pilot["reason"]
    assert plan.pilot["source"] == CONFUSION_SOURCE and plan.pilot["counts"] == COUNTS and plan.pilot["folds"] == 10
    assert plan.pilot["estimate"] == pytest.approx(510 / 567)
    expected = _library_size(plan, world)
    assert plan.sample_size == {"U": expected, "total": expected}
    assert plan.estimated_cost is not None and plan.estimated_cost > 0
    plan.refresh_from_db()
    assert plan.pilot["counts"] == COUNTS  # stored with its source


def test_a_re_plan_keeps_the_counts_and_resizes_from_them(world, manager):
    plan = certification_plan_create_from_confusion(topic=world.topic, classifier=c1(world), target=0.8, **COUNTS,
                                                    user=manager)
    first = plan.sample_size["total"]
    plan = certification_plan_update(plan_id=plan.pk, target=0.84)
    assert plan.pilot["source"] == CONFUSION_SOURCE and plan.pilot["counts"] == COUNTS
    assert plan.sample_size["total"] == _library_size(plan, world) > first  # a higher target needs more
    with pytest.raises(CertificationError, match="F1 plans only"):
        certification_plan_update(plan_id=plan.pk, metric=Metric.QBCB_RECALL)


@pytest.mark.parametrize("counts, message", [
    ({**COUNTS, "fp": -1}, "FP must be a whole number"),
    ({**COUNTS, "tn": 2.5}, "TN must be a whole number"),
    ({**COUNTS, "tp": True}, "TP must be a whole number"),
    ({"tp": 10, "fp": 5, "fn": 5, "tn": 20}, "at least 50"),
    ({"tp": 4, "fp": 5, "fn": 5, "tn": 200}, "at least 10 are needed"),
    ({"tp": 0, "fp": 5, "fn": 20, "tn": 200}, "no true positive"),
])
def test_bad_counts_are_refused_by_the_service(world, manager, counts, message):
    with pytest.raises(CertificationError, match=message):
        certification_plan_create_from_confusion(topic=world.topic, classifier=c1(world), target=0.8, **counts)
    assert not CertificationPlan.objects.exists()


def test_a_matrix_below_the_target_gives_a_plan_that_says_why(world, manager):
    plan = certification_plan_create_from_confusion(topic=world.topic, classifier=c1(world), target=0.95, **COUNTS)
    assert plan.pilot["feasible"] is False and "not above the target" in plan.pilot["reason"]
    with pytest.raises(CertificationError, match="no feasible sample size"):
        certification_plan_lock(plan_id=plan.pk, user=manager)


def test_the_form_refuses_bad_counts_with_field_errors(world):
    base = {"cv-classifier": c1(world).pk, "cv-target": "0.8", "cv-alpha": "0.05", "cv-power": "0.9"}
    form = ConfusionPlanForm({**base, "cv-tp": "-3", "cv-fp": "1.5", "cv-fn": "many", "cv-tn": ""},
                             topic=world.topic)
    assert not form.is_valid()
    assert set(form.errors) == {"tp", "fp", "fn", "tn"}
    form = ConfusionPlanForm({**base, "cv-tp": "0", "cv-fp": "2", "cv-fn": "3", "cv-tn": "10"}, topic=world.topic)
    assert not form.is_valid()
    assert "tp" in form.errors and "fn" in form.errors and "at least 50" in form.errors["tn"][0]
    good = ConfusionPlanForm({**base, **{f"cv-{k}": str(v) for k, v in COUNTS.items()}}, topic=world.topic)
    assert good.is_valid(), good.errors
    # No count declared: the service takes the family's declaration, or 1 (item 7 of "Every figure honest").
    assert good.cleaned_data["attempts"] is None and good.cleaned_data["tp"] == 255


def _manager_client() -> Client:
    user = get_user_model().objects.create_user(username="max", password="pw-for-tests-1")
    user.groups.add(roles_ensure()["manager"])
    client = Client()
    client.force_login(user)
    return client


def test_the_page_posts_counts_and_the_plan_page_says_where_the_size_comes_from(world):
    client = _manager_client()
    url = reverse("reports:certification", args=[world.topic.pk])
    page = client.get(url)
    assert page.status_code == 200 and b'id="confusion-form"' in page.content
    bad = client.post(url, {"source": "confusion", "cv-classifier": c1(world).pk, "cv-target": "0.8",
                            "cv-alpha": "0.05", "cv-power": "0.9", "cv-tp": "-1", "cv-fp": "0", "cv-fn": "0",
                            "cv-tn": "0"})
    assert bad.status_code == 400 and not CertificationPlan.objects.exists()
    assert b'id="field-cv-tp"' in bad.content and b"has-error" in bad.content
    good = client.post(url, {"source": "confusion", "cv-classifier": c1(world).pk, "cv-target": "0.8",
                             "cv-alpha": "0.05", "cv-power": "0.9", "cv-folds": "5",
                             **{f"cv-{k}": str(v) for k, v in COUNTS.items()}})
    plan = CertificationPlan.objects.get()
    assert good.status_code == 302 and good["Location"] == reverse("reports:certification_plan", args=[plan.pk])
    assert plan.pilot["source"] == CONFUSION_SOURCE and plan.pilot["folds"] == 5
    text = client.get(good["Location"]).content.decode()
    assert "cross-validated confusion matrix you entered (5 folds): 255 true positives" in text
    assert "rests on the training data" in text and "Recompute from the same counts" in text


def test_a_plan_sized_from_counts_locks_draws_fresh_and_decides_like_any_plan(world, manager):
    plan = certification_plan_create_from_confusion(topic=world.topic, classifier=c1(world), target=0.8, **COUNTS,
                                                    user=manager)
    plan = certification_plan_lock(plan_id=plan.pk, user=manager, seed=99)
    plan.refresh_from_db()
    assert plan.status == CertificationPlan.Status.LOCKED
    ids = certification_ids(plan)
    assert len(ids) == plan.sample_size["total"]
    judge(world, sorted(ids)[:-1])
    assert certification_decide(plan_id=plan.pk) is None  # pending until the whole sample is judged
    judge(world, ids)
    verdict = certification_decide(plan_id=plan.pk)
    assert verdict is not None
    counts = verdict.inputs["evaluation"]["counts"]
    # The verdict reads the fresh sample only: its counts add up to the sample, not to the entered matrix.
    assert sum(counts.values()) == len(ids) != sum(COUNTS.values())
    exact = cert_stats.f1_exact_lower_bound(tp=counts["tp"], fp=counts["fp"], fn=counts["fn"],
                                            confidence=1 - plan.alpha)
    assert verdict.lower_bound == pytest.approx(exact, abs=1e-12) and verdict.passed == (exact >= 0.8)
    plan.refresh_from_db()
    assert plan.status == CertificationPlan.Status.DECIDED
