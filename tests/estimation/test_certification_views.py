"""Certification pages: roles, CSRF-protected POSTs, the plan → lock → verdict flow, escaping."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from annotation.models import Classifier
from annotation.roles import roles_ensure
from estimation.models import CertificationPlan
from estimation.services.certification_verdicts import certification_decide
from tests.factories import c1, certification_ids, judge, make_pair_world, pilot

pytestmark = pytest.mark.django_db

HOSTILE = "<script>alert(1)</script>"


def login(role: str | None, username: str) -> Client:
    user = get_user_model().objects.create_user(username=username, password="pw-for-tests-1")
    if role:
        user.groups.add(roles_ensure()[role])
    client = Client(enforce_csrf_checks=False)
    client.force_login(user)
    return client


@pytest.fixture
def world():
    world = make_pair_world(n=4000, prevalence=0.2, recall1=0.85, recall2=0.6, noise=0.01, seed=5)
    Classifier.objects.filter(pk=world.topic.pair.c1_id).update(name="title filter " + HOSTILE)
    pilot(world)
    return world


def test_roles_are_enforced(world, client):
    url = reverse("reports:certification", kwargs={"topic_id": world.topic.pk})
    response = client.get(url)
    assert response.status_code == 302 and "/accounts/login" in response["Location"]
    assert login("annotator", "ann").get(url).status_code == 403
    assert login("manager", "max").get(url).status_code == 200
    assert login("analyst", "ana").get(url).status_code == 200


def test_manager_plans_locks_and_reads_the_verdict(world):
    manager = login("manager", "max")
    url = reverse("reports:certification", kwargs={"topic_id": world.topic.pk})
    response = manager.post(url, {"classifier": c1(world).pk, "metric": "pair_recall", "target": "0.6",
                                  "alpha": "0.05", "power": "0.9"})
    plan = CertificationPlan.objects.get()
    assert response.status_code == 302 and response["Location"].endswith(f"/certification/{plan.pk}/")
    page = manager.get(response["Location"]).content.decode()
    assert "Lock the plan" in page and HOSTILE not in page and "&lt;script&gt;" in page
    lock = reverse("reports:certification_lock", kwargs={"plan_id": plan.pk})
    # Issue 11: GET shows what locking draws and costs (it was 405); the POST must confirm the cost.
    confirm = manager.get(lock).content.decode()
    assert f"${plan.estimated_cost}" in confirm and "confirm_cost" in confirm
    assert manager.post(lock).status_code == 302
    plan.refresh_from_db()
    assert plan.status == CertificationPlan.Status.DRAFT  # no confirmation: nothing drawn
    assert manager.post(lock, {"confirm_cost": str(plan.estimated_cost)}).status_code == 302
    plan.refresh_from_db()
    assert plan.status == CertificationPlan.Status.LOCKED
    page = manager.get(reverse("reports:certification_plan", kwargs={"plan_id": plan.pk})).content.decode()
    assert "Pending" in page and "do not certify" in page
    judge(world, certification_ids(plan))
    certification_decide(plan_id=plan.pk)
    page = manager.get(reverse("reports:certification_verdict", kwargs={"plan_id": plan.pk})).content.decode()
    assert "Passed" in page and "conditionally independent" in page and "δ1" in page
    assert "Majority of three wrong" in page and HOSTILE not in page
    # Locking twice is refused with a message, not an error page.
    response = manager.post(lock, {"confirm_cost": str(plan.estimated_cost)}, follow=True)
    assert response.status_code == 200 and "already" in response.content.decode()


def test_infeasible_plan_is_shown_with_its_reason(world):
    manager = login("manager", "max")
    url = reverse("reports:certification", kwargs={"topic_id": world.topic.pk})
    response = manager.post(url, {"classifier": c1(world).pk, "metric": "pair_recall", "target": "0.97",
                                  "alpha": "0.05", "power": "0.9"}, follow=True)
    page = response.content.decode()
    assert response.status_code == 200
    assert "No certification sample can reach the power" in page and "not above the target" in page
    assert "Lock the plan" not in page


def test_bad_input_redisplays_the_form(world):
    manager = login("manager", "max")
    url = reverse("reports:certification", kwargs={"topic_id": world.topic.pk})
    other = Classifier.objects.create(corpus=world.topic.corpus, name="elsewhere", kind="ids", fingerprint="x",
                                      retrieved_bitmap=b"")
    response = manager.post(url, {"classifier": other.pk, "metric": "pair_recall", "target": "0.6",
                                  "alpha": "0.05", "power": "0.9"})
    assert response.status_code == 400 and "one of the topic" in response.content.decode()
    response = manager.post(url, {"classifier": c1(world).pk, "metric": "pair_recall", "target": "7"})
    assert response.status_code == 400
    assert not CertificationPlan.objects.exists()


def test_lock_requires_csrf(world):
    manager = login("manager", "max")
    plan_url = reverse("reports:certification", kwargs={"topic_id": world.topic.pk})
    manager.post(plan_url, {"classifier": c1(world).pk, "metric": "pair_recall", "target": "0.6", "alpha": "0.05",
                            "power": "0.9"})
    plan = CertificationPlan.objects.get()
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(get_user_model().objects.get(username="max"))
    response = strict.post(reverse("reports:certification_lock", kwargs={"plan_id": plan.pk}),
                           {"confirm_cost": str(plan.estimated_cost)})
    assert response.status_code == 403
    plan.refresh_from_db()
    assert plan.status == CertificationPlan.Status.DRAFT


def test_the_topic_report_shows_the_verdict_from_the_summary(world):
    from estimation.services.recompute import topic_snapshot_create

    manager = login("manager", "max")
    manager.post(reverse("reports:certification", kwargs={"topic_id": world.topic.pk}),
                 {"classifier": c1(world).pk, "metric": "pair_recall", "target": "0.6", "alpha": "0.05",
                  "power": "0.9"})
    plan = CertificationPlan.objects.get()
    manager.post(reverse("reports:certification_lock", kwargs={"plan_id": plan.pk}),
                 {"confirm_cost": str(plan.estimated_cost)})
    topic_snapshot_create(topic_id=world.topic.pk)
    page = manager.get(reverse("reports:topic", kwargs={"topic_id": world.topic.pk})).content.decode()
    assert 'id="certification"' in page and "Passed:" not in page
    judge(world, certification_ids(plan))
    certification_decide(plan_id=plan.pk)
    topic_snapshot_create(topic_id=world.topic.pk)
    response = manager.get(reverse("reports:topic", kwargs={"topic_id": world.topic.pk}))
    assert response.status_code == 200
    assert "Passed:" in response.content.decode()


def test_f1_verdict_page_shows_the_exact_bound_and_appendix_a_for_comparison(world):
    from tests.factories import uniform_pilot

    uniform_pilot(world)
    manager = login("manager", "max")
    url = reverse("reports:certification", kwargs={"topic_id": world.topic.pk})
    response = manager.post(url, {"classifier": c1(world).pk, "metric": "f1", "target": "0.6",
                                  "alpha": "0.05", "power": "0.9"})
    plan = CertificationPlan.objects.get()
    assert response.status_code == 302
    assert manager.post(reverse("reports:certification_lock", kwargs={"plan_id": plan.pk}),
                        {"confirm_cost": str(plan.estimated_cost)}).status_code == 302
    judge(world, certification_ids(plan))
    verdict = certification_decide(plan_id=plan.pk)
    page = manager.get(reverse("reports:certification_verdict", kwargs={"plan_id": plan.pk})).content.decode()
    assert f"{verdict.lower_bound:.3f}" in page and "Clopper-Pearson" in page
    appendix = verdict.inputs["evaluation"]["appendix_a_lower_bound"]
    assert f"Appendix A, for comparison only): {appendix:.3f}" in page
    assert "The lower bound is exact" in page and HOSTILE not in page


# --------------------------------------------------------------------------- issue 11


def test_lock_without_confirming_the_cost_is_refused_with_a_message(world):
    manager = login("manager", "max")
    manager.post(reverse("reports:certification", kwargs={"topic_id": world.topic.pk}),
                 {"classifier": c1(world).pk, "metric": "pair_recall", "target": "0.6", "alpha": "0.05",
                  "power": "0.9"})
    plan = CertificationPlan.objects.get()
    lock = reverse("reports:certification_lock", kwargs={"plan_id": plan.pk})
    page = manager.get(lock).content.decode()
    for region in ("A12", "B2"):
        assert region in page
    assert f"{plan.sample_size['total']} documents in" in page and "HITs" in page and "crowd" in page
    for data in ({}, {"confirm_cost": "0.01"}, {"confirm_cost": "yes"}):
        response = manager.post(lock, data, follow=True)
        assert response.status_code == 200 and "confirm the cost" in response.content.decode()
        plan.refresh_from_db()
        assert plan.status == CertificationPlan.Status.DRAFT and plan.seed is None
    assert not certification_ids(plan)


def test_the_plan_pages_show_drawn_over_planned_and_the_band(world):
    manager = login("manager", "max")
    manager.post(reverse("reports:certification", kwargs={"topic_id": world.topic.pk}),
                 {"classifier": c1(world).pk, "metric": "pair_recall", "target": "0.6", "alpha": "0.05",
                  "power": "0.9", "delta1_low": "0.9", "delta1_high": "1.2", "attempts": "2"})
    plan = CertificationPlan.objects.get()
    assert (plan.delta1_low, plan.delta1_high, plan.attempts, plan.family_alpha) == (0.9, 1.2, 2, 0.05)
    manager.post(reverse("reports:certification_lock", kwargs={"plan_id": plan.pk}),
                 {"confirm_cost": str(plan.estimated_cost)})
    n = plan.sample_size["A12"]
    page = manager.get(reverse("reports:certification_plan", kwargs={"plan_id": plan.pk})).content.decode()
    assert f"found by both: {n} / {n}" in page and "0.9 to 1.2" in page
    topic_page = manager.get(reverse("reports:certification", kwargs={"topic_id": world.topic.pk})).content.decode()
    assert f"found by both {n}/{n}" in topic_page
    judge(world, certification_ids(plan))
    certification_decide(plan_id=plan.pk)
    verdict = manager.get(reverse("reports:certification_verdict", kwargs={"plan_id": plan.pk})).content.decode()
    assert "What this verdict assumes" in verdict and "least favourable" in verdict and "ratio of 1.2" in verdict
    assert "2 attempts were declared" in verdict


def test_the_topic_page_lists_every_plan_on_pages(world):
    from estimation.services.certification_plans import certification_plan_create

    base = certification_plan_create(topic=world.topic, classifier=c1(world), metric="pair_recall", target=0.6)
    fields = {f.name: getattr(base, f.name) for f in CertificationPlan._meta.concrete_fields
              if f.name not in ("id", "created_at")}
    CertificationPlan.objects.bulk_create([CertificationPlan(**fields) for _ in range(59)])
    manager = login("manager", "max")
    url = reverse("reports:certification", kwargs={"topic_id": world.topic.pk})
    first = manager.get(url).content.decode()
    second = manager.get(url + "?page=2").content.decode()
    ids = sorted(CertificationPlan.objects.values_list("pk", flat=True))
    shown = [pk for pk in ids if f"/certification/{pk}/\"" in first or f"/certification/{pk}/\"" in second]
    assert shown == ids and "60 plans" in first


def test_a_plan_drawn_short_of_its_plan_shows_why_it_has_no_verdict(world):
    """Issue 11's first reproduction, on the pages: planned A12 84 + B2 79, drawn 60 + 18 (locked before the lock
    checked its draws)."""
    from django.utils import timezone

    from annotation.models import SampleDraw
    from annotation.services.sampling.draws import region_bitmap, region_sample_draw
    from estimation.models import CertificationPlanDraw
    from estimation.services.certification_plans import (
        _excluded_documents,
        certification_plan_create,
        certification_stratum_key,
    )

    plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric="pair_recall", target=0.6)
    CertificationPlan.objects.filter(pk=plan.pk).update(sample_size={"A12": 84, "B2": 79, "total": 163})
    exclude = _excluded_documents(topic=world.topic)
    draws = [region_sample_draw(topic=world.topic, region=region, k=k, seed=3 + k,
                                bitmap=region_bitmap(topic=world.topic, region=region),
                                purpose=SampleDraw.Purpose.CERTIFICATION,
                                stratum_key=certification_stratum_key(plan_id=plan.pk), exclude=exclude)
             for region, k in (("A12", 60), ("B2", 18))]
    CertificationPlanDraw.objects.bulk_create([CertificationPlanDraw(plan=plan, draw=d) for d in draws])
    CertificationPlan.objects.filter(pk=plan.pk).update(status="locked", seed=3, locked_at=timezone.now())
    judge(world, certification_ids(plan))
    assert certification_decide(plan_id=plan.pk) is None
    manager = login("manager", "max")
    page = manager.get(reverse("reports:certification_plan", kwargs={"plan_id": plan.pk})).content.decode()
    assert "cannot be decided: drawn 78 of 163 planned" in page and "found by both: 60 / 84" in page
    assert "Read the verdict" not in page
    topic_page = manager.get(reverse("reports:certification", kwargs={"topic_id": world.topic.pk})).content.decode()
    assert "undecidable" in topic_page and "found by both 60/84" in topic_page
