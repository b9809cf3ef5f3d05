"""Issue 23: a plan decided on the design basis (a dependence check) sizes N from a conservative prior on
what N could hold — never from the old δ1 = 1.25 prevalence guess — and shows its documents and cost."""
from __future__ import annotations

import pytest

from estimation.models import CertificationPlan
from estimation.services.certification_plans import certification_plan_create
from tests.factories import UserFactory, c1, make_pair_world, pilot

Metric = CertificationPlan.Metric


@pytest.fixture
def manager(db):
    return UserFactory.create(username="manager")


@pytest.mark.slow
def test_design_basis_plan_sizes_n_from_the_conservative_prior(manager):
    world = make_pair_world(n=3000, prevalence=0.1, recall1=0.85, recall2=0.6, noise=0.005, seed=8)
    pilot(world)
    plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                     target=0.5, dependence_check=True, user=manager)
    source = plan.pilot["prevalence_n_source"]
    # Before: "assuming the two classifiers tend to find the same relevant documents (dependence δ1 = 1.25 ...)".
    assert "conservative prior" in source and "δ1" not in source
    assert len(plan.pilot["prevalences_n"]) == 3  # N holding 0.1, 1/3 and 1 times the pair's relevant documents
    assert plan.pilot["feasible"], plan.pilot["reason"]
    sized = plan.pilot["sized_for"]
    assert sized and 0 < plan.sample_size["total"] <= max(s["documents"] for s in sized)  # enumerated regions fit
    assert all(s["truth"] > 0.5 for s in sized)  # power is asked only where passing is right
    assert plan.sample_size["N"] > 0 and plan.estimated_cost > 0


@pytest.mark.slow
def test_design_basis_verdict_corrects_for_the_crowds_label_error(manager):
    import numpy as np

    from annotation.models import Label
    from estimation.services.certification_locks import certification_plan_lock
    from estimation.services.certification_verdicts import certification_decide
    from tests.factories import certification_ids

    world = make_pair_world(n=3000, prevalence=0.1, recall1=0.85, recall2=0.6, noise=0.005, seed=8)
    pilot(world)
    plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                     target=0.5, dependence_check=True, user=manager)
    plan = certification_plan_lock(plan_id=plan.pk, user=manager, seed=31)
    rng = np.random.default_rng(4)
    for doc_id in sorted(certification_ids(plan)):  # three votes, each right with probability 0.85
        truth = doc_id in world.relevant
        votes = int(sum((rng.random() < 0.85) == truth for _ in range(3)))
        Label.objects.update_or_create(topic=world.topic, document_id=doc_id,
                                       defaults={"votes_total": 3, "votes_relevant": votes, "majority": votes >= 2})
    evaluation = certification_decide(plan_id=plan.pk).inputs["evaluation"]
    # Before: the majority labels were taken as right ("It takes the crowd's majority labels as right").
    assert evaluation["label_error"] is not None and not evaluation["label_error"]["perfect"]
    assert "corrected for the error rates" in evaluation["assumes"]
