"""The API's certification plans take the attempt family's declaration when they declare none (issue 24 #7):
the family is the classifier and the metric, whatever the target and the topic."""
from __future__ import annotations

from estimation.models import CertificationPlan
from estimation.services.certification_locks import certification_plan_lock
from estimation.services.certification_plans import certification_plan_create
from tests.factories import UserFactory, c1, make_pair_world, pilot


def test_a_plan_that_declares_no_attempts_takes_the_familys_declaration(manager, db):
    world = make_pair_world(n=4000, prevalence=0.2, recall1=0.85, recall2=0.6, noise=0.01, seed=5)
    pilot(world)
    first = certification_plan_create(topic=world.topic, classifier=c1(world), metric="pair_recall", target=0.6,
                                      user=UserFactory.create(username="boss"), attempts=3)
    certification_plan_lock(plan_id=first.pk, user=first.created_by, seed=1)
    url = f"/api/v1/topics/{world.topic.pk}/certification-plans/"
    created = manager.client.post(url, {"classifier": c1(world).pk, "target": 0.55}, format="json")
    assert created.status_code == 202, created.content  # stored at once, sized by a task
    plan = CertificationPlan.objects.get(pk=created.json()["plan_id"])
    # Before: the serializer sent attempts=1, a declaration the family's lock then refused.
    assert plan.attempts == 3 and plan.family_alpha == first.family_alpha and plan.alpha == first.alpha
