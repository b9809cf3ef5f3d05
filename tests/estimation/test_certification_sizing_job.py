"""Certification sizing runs as a job (issues 23/25): the request stores the plan as "sizing", a task sizes it.

The broker is switched off here (CELERY_TASK_ALWAYS_EAGER False for the services, `delay` recorded), so the
plan is seen while it is being sized; the worker's part is played by calling the task with the queued id.
"""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.models import SampledDocument
from annotation.roles import roles_ensure
from estimation import tasks_sizing
from estimation.models import CertificationPlan, CertificationSizing
from estimation.services import certification_plans
from estimation.services.certification_locks import certification_plan_lock
from estimation.services.certification_plans import (
    CertificationError,
    CertificationPlanSizing,
    certification_plan_create,
    certification_plan_update,
    certification_sizings_stuck_fail,
)
from estimation.stats import certification_sizing, planning
from estimation.tasks_sizing import certification_sizing_task
from tests.factories import UserFactory, c1, make_pair_world, pilot

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    # 4,000 documents, 20% relevant; C1 finds 85% of them, C2 60%, independently (as the service tests).
    world = make_pair_world(n=4000, prevalence=0.2, recall1=0.85, recall2=0.6, noise=0.01, seed=5)
    pilot(world)
    return world


@pytest.fixture
def queued(settings, monkeypatch, django_capture_on_commit_callbacks):
    """A broker: services queue after commit, `delay` records the sizing ids; `run()` commits and works them."""
    settings.CELERY_TASK_ALWAYS_EAGER = False
    sent: list[int] = []
    monkeypatch.setattr(certification_sizing_task, "delay", lambda *, sizing_id: sent.append(sizing_id))

    class Queue:
        ids = sent

        @staticmethod
        def commit(callbacks):
            for callback in callbacks:
                callback()

        @staticmethod
        def work() -> list[str | None]:
            done = [certification_sizing_task(sizing_id=sizing_id) for sizing_id in sent]
            sent.clear()
            return done

    return Queue


def login(username: str) -> Client:
    user = get_user_model().objects.create_user(username=username, password="pw-for-tests-1")
    user.groups.add(roles_ensure()["manager"])
    client = Client()
    client.force_login(user)
    return client


def expected_pair_sizes(world, plan: CertificationPlan) -> dict[str, int]:
    """The sizes the synchronous sizing gave: estimation.stats called directly on the world's regions and the
    pilot's labels (counted here from the world's truth), with the plan's recorded planning seed."""
    a12 = world.a1 & world.a2
    b2 = world.a2 - world.a1  # C1's recall is measured against the documents only C2 found
    pilot_docs = {region: set(SampledDocument.objects.filter(topic=world.topic, region=region)
                              .values_list("document_id", flat=True)) for region in ("A12", "B2")}
    judged = {region: len(ids) for region, ids in pilot_docs.items()}
    relevant = {region: len(ids & world.relevant) for region, ids in pilot_docs.items()}
    sizes = certification_sizing.pair_recall_calibrated_size(
        size_a12=len(a12), size_other=len(b2),
        p12=planning.precision_guess_from_pilot(relevant=relevant["A12"], judged=judged["A12"]),
        p_other=planning.precision_guess_from_pilot(relevant=relevant["B2"], judged=judged["B2"]),
        target=plan.target * plan.delta1_high, alpha=plan.alpha, power=plan.power, which="r1",
        draws=certification_plans.PLAN_BOUND_DRAWS, seed=int(plan.pilot["planning_seed"]) % (2**32),
        pilot={"A12": (judged["A12"], relevant["A12"]), "other": (judged["B2"], relevant["B2"])})
    return {"A12": int(sizes["A12"]), "B2": int(sizes["B2"])}


def test_the_page_stores_the_plan_as_sizing_and_the_task_sizes_it_as_the_statistics_do(world, queued,
                                                                                        django_capture_on_commit_callbacks):
    manager = login("max")
    with django_capture_on_commit_callbacks() as callbacks:
        response = manager.post(reverse("reports:certification", kwargs={"topic_id": world.topic.pk}),
                                {"classifier": c1(world).pk, "metric": "pair_recall", "target": "0.6",
                                 "alpha": "0.05", "power": "0.9"})
    plan = CertificationPlan.objects.get()
    assert response.status_code == 302 and response["Location"].endswith(f"/certification/{plan.pk}/")
    assert plan.sample_size == {} and plan.estimated_cost is None
    assert queued.ids == []  # nothing is queued before the plan is committed
    queued.commit(callbacks)
    assert queued.ids == [plan.sizings.get().pk]
    page = manager.get(response["Location"]).content.decode()
    assert "Sizing…" in page and '<meta http-equiv="refresh"' in page and "<progress" in page
    assert "Lock the plan" not in page
    topic_page = manager.get(reverse("reports:certification", kwargs={"topic_id": world.topic.pk})).content.decode()
    assert '<span class="badge sizing">Sizing…</span>' in topic_page  # its state in words, not the code

    assert queued.work() == ["done"]
    plan.refresh_from_db()
    expected = expected_pair_sizes(world, plan)
    assert {k: v for k, v in plan.sample_size.items() if k != "total"} == expected
    assert plan.sample_size["total"] == sum(expected.values()) > 0
    page = manager.get(response["Location"]).content.decode()
    assert "Sizing…" not in page and 'http-equiv="refresh"' not in page and "Lock the plan" in page
    assert f"total {sum(expected.values())}" in page
    topic_page = manager.get(reverse("reports:certification", kwargs={"topic_id": world.topic.pk})).content.decode()
    assert '<span class="badge draft">Draft</span>' in topic_page


def test_the_api_answers_202_sizing_and_get_shows_the_sizes_when_ready(world, queued, django_capture_on_commit_callbacks):
    user = UserFactory.create(username="api-max")
    user.groups.add(roles_ensure()["manager"])
    api = APIClient()
    api.force_authenticate(user)
    with django_capture_on_commit_callbacks() as callbacks:
        created = api.post(f"/api/v1/topics/{world.topic.pk}/certification-plans/",
                           {"classifier": c1(world).pk, "target": 0.6}, format="json")
    assert created.status_code == 202, created.content
    body = created.json()
    assert body["state"] == "sizing" and body["sizing"] == {"status": "pending", "percent": 0, "message": None}
    assert body["sample_size"] == {} and body["estimated_cost"] is None
    assert created["Location"] == f"/api/v1/certification-plans/{body['plan_id']}/"
    queued.commit(callbacks)
    assert api.get(created["Location"]).json()["state"] == "sizing"
    queued.work()
    ready = api.get(created["Location"]).json()
    assert ready["state"] == "draft" and ready["sizing"]["status"] == "done" and ready["sizing"]["percent"] == 100
    expected = expected_pair_sizes(world, CertificationPlan.objects.get(pk=body["plan_id"]))
    assert {k: v for k, v in ready["sample_size"].items() if k != "total"} == expected
    assert ready["estimated_cost"] is not None


def test_lock_is_refused_while_the_plan_is_sizing_page_api_and_service(world, queued, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric="pair_recall", target=0.6)
    queued.commit(callbacks)
    with pytest.raises(CertificationPlanSizing) as refused:
        certification_plan_lock(plan_id=plan.pk, user=None, seed=1, publish=False)
    assert refused.value.code == "plan-sizing" and "still being sized" in refused.value.message

    manager = login("max")
    response = manager.post(reverse("reports:certification_lock", kwargs={"plan_id": plan.pk}),
                            {"confirm_cost": "1.00"}, follow=True)
    assert "still being sized" in response.content.decode()

    api = APIClient()
    api.force_login(get_user_model().objects.get(username="max"))
    answer = api.post(f"/api/v1/certification-plans/{plan.pk}/lock/", {"confirm_cost": "1.00"}, format="json")
    assert answer.status_code == 409 and answer["Content-Type"].startswith("application/problem+json")
    assert answer.json()["type"].endswith("plan-sizing") and "still being sized" in answer.json()["detail"]
    plan.refresh_from_db()
    assert plan.status == CertificationPlan.Status.DRAFT

    queued.work()  # sized: now it locks
    plan.refresh_from_db()
    locked = certification_plan_lock(plan_id=plan.pk, user=None, seed=1, publish=False)
    assert locked.status == CertificationPlan.Status.LOCKED


def test_a_second_delivery_of_a_sized_plan_does_nothing(world, queued, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric="pair_recall", target=0.6)
    queued.commit(callbacks)
    sizing_id = queued.ids[0]
    assert queued.work() == ["done"]
    plan.refresh_from_db()
    stored = (plan.sample_size, plan.pilot["planned_at"])
    assert certification_sizing_task(sizing_id=sizing_id) is None
    plan.refresh_from_db()
    assert (plan.sample_size, plan.pilot["planned_at"]) == stored


def test_an_edit_while_sizing_discards_the_late_result_and_sizes_the_latest_parameters(
        world, queued, monkeypatch, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric="pair_recall", target=0.6)
    queued.commit(callbacks)
    first = queued.ids.pop()
    real_fill = certification_plans._fill
    edits: list = []

    def fill(draft, step=None):
        real_fill(draft, step)
        if not edits:  # the analyst edits the target while the worker sizes the first version
            with django_capture_on_commit_callbacks() as later:
                edits.append(certification_plan_update(plan_id=plan.pk, target=0.55))
            queued.commit(later)

    monkeypatch.setattr(certification_plans, "_fill", fill)
    assert certification_sizing_task(sizing_id=first) is None  # its result is discarded
    plan.refresh_from_db()
    assert plan.target == 0.55 and plan.sample_size == {}  # nothing of the 0.6 sizing was stored
    old = CertificationSizing.objects.get(pk=first)
    assert old.status == "failed" and old.error == certification_plans.SIZING_SUPERSEDED
    assert certification_sizing_task(sizing_id=first) is None  # a late second delivery: still nothing

    assert queued.work() == ["done"]
    plan.refresh_from_db()
    assert plan.pilot["sizing_target"] == pytest.approx(0.55 * 1.25)
    assert {k: v for k, v in plan.sample_size.items() if k != "total"} == expected_pair_sizes(world, plan)


def test_the_sweep_fails_a_stuck_sizing_and_the_page_says_why(world, queued, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric="pair_recall", target=0.6)
    queued.commit(callbacks)  # queued, but no worker ever takes it
    now = timezone.now()
    assert certification_sizings_stuck_fail(now=now + timedelta(minutes=14)) == 0
    assert certification_sizings_stuck_fail(now=now + timedelta(minutes=16)) == 1
    sizing = plan.sizings.get()
    assert sizing.status == "failed" and "no sign of life for 15 minutes" in sizing.error
    page = login("max").get(reverse("reports:certification_plan", kwargs={"plan_id": plan.pk})).content.decode()
    assert "The sizing failed." in page and "no sign of life for 15 minutes" in page
    assert 'http-equiv="refresh"' not in page
    assert queued.work() == [None]  # the worker shows up late: the failed sizing is not run
    # Recomputing sizes it again.
    with django_capture_on_commit_callbacks() as callbacks:
        certification_plan_update(plan_id=plan.pk)
    queued.commit(callbacks)
    assert queued.work() == ["done"]
    plan.refresh_from_db()
    assert plan.sample_size["total"] > 0


def test_the_stuck_sweep_is_on_the_beat():
    entry = django_settings.CELERY_BEAT_SCHEDULE["fail-stuck-certification-sizings"]
    assert entry["task"] == tasks_sizing.certification_sizings_stuck_task.name
    assert entry["schedule"] <= 600


def test_a_failed_sizing_shows_its_message_and_an_unexpected_one_points_to_the_log(
        world, queued, monkeypatch, django_capture_on_commit_callbacks):
    def refused(**_):
        raise CertificationError("The pair's regions changed: refused for this test's reason.")

    monkeypatch.setattr(certification_plans, "_plan_sizes", refused)
    with django_capture_on_commit_callbacks() as callbacks:
        plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric="pair_recall", target=0.6)
    queued.commit(callbacks)
    assert queued.work() == ["failed"]
    info = login("max").get(reverse("reports:certification_plan", kwargs={"plan_id": plan.pk})).content.decode()
    assert "The sizing failed." in info and "refused for this test&#x27;s reason" in info
    sizing = plan.sizings.get()
    assert sizing.status == "failed" and sizing.error.endswith("refused for this test's reason.")

    def broken(**_):
        raise ZeroDivisionError("bug")

    monkeypatch.setattr(certification_plans, "_plan_sizes", broken)
    with django_capture_on_commit_callbacks() as callbacks:
        certification_plan_update(plan_id=plan.pk)
    queued.commit(callbacks)
    with pytest.raises(ZeroDivisionError):
        queued.work()
    latest = plan.sizings.order_by("-pk").first()
    assert latest.status == "failed" and latest.error == certification_plans.SIZING_UNEXPECTED


def test_an_infeasible_plan_keeps_its_reason_in_words_after_the_task(world, queued,
                                                                     django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric="pair_recall",
                                         target=0.97)
    queued.commit(callbacks)
    assert queued.work() == ["done"]
    plan.refresh_from_db()
    assert plan.pilot["feasible"] is False and "not above the target" in plan.pilot["reason"]
    page = login("max").get(reverse("reports:certification_plan", kwargs={"plan_id": plan.pk})).content.decode()
    assert "No certification sample can reach the power asked for." in page and "not above the target" in page
