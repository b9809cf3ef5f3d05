"""Issue 25: a refusal caused by a locked (or decided) plan answers 409, as docs/api.md promises, not 400.

CertificationError (estimation/services/certification_plans.py) carries http_status 409 / code conflict
since commit 7b8aa03; this pins the behaviour through the API for locking a plan twice.
"""
from __future__ import annotations

from estimation.services.certification_locks import certification_plan_lock
from estimation.services.certification_plans import certification_plan_create
from tests.factories import UserFactory, c1, make_pair_world, pilot


def test_locking_a_locked_plan_is_a_conflict(manager, db):
    world = make_pair_world(n=4000, prevalence=0.2, recall1=0.85, recall2=0.6, noise=0.01, seed=5)
    pilot(world)
    plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric="pair_recall", target=0.6,
                                     user=UserFactory.create(username="boss"))
    certification_plan_lock(plan_id=plan.pk, user=plan.created_by, seed=1)
    plan.refresh_from_db()
    answer = manager.client.post(f"/api/v1/certification-plans/{plan.pk}/lock/",
                                 {"confirm_cost": str(plan.estimated_cost)}, format="json")
    assert answer.status_code == 409, answer.content
    body = answer.json()
    assert "locked" in body["detail"] and "conflict" in body.get("type", "")
