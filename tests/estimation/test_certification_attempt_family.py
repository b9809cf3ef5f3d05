"""Issue "Every figure honest", item 7: attempts that count.

The attempt family is the classifier and the metric, whatever the target and the topic; the declared number
of attempts is enforced at lock; a refusal that uses the declared band states its arithmetic in words.
"""
from __future__ import annotations

from typing import Any

import pytest

from annotation.models import ClassifierPair, Topic
from estimation.models import CertificationPlan
from estimation.selectors import certification_summary
from estimation.services.certification_locks import certification_plan_lock
from estimation.services.certification_plans import CertificationError, certification_plan_create
from estimation.stats.certification import alpha_per_attempt
from tests.factories import UserFactory, c1, make_pair_world, pilot

pytestmark = pytest.mark.django_db

Metric = CertificationPlan.Metric


@pytest.fixture
def manager():
    return UserFactory.create(username="manager")


@pytest.fixture
def world():
    return make_pair_world(n=4000, prevalence=0.2, recall1=0.85, recall2=0.6, noise=0.01, seed=5)


def _locked(topic, classifier, manager, *, target: float, seed: int, attempts: int | None = None):
    kwargs: dict[str, Any] = {} if attempts is None else {"attempts": attempts}
    plan = certification_plan_create(topic=topic, classifier=classifier, metric=Metric.PAIR_RECALL,
                                     target=target, user=manager, **kwargs)
    assert plan.pilot["feasible"], plan.pilot["reason"]
    return certification_plan_lock(plan_id=plan.pk, user=manager, seed=seed)


def _second_topic(world):
    """Another topic on the same corpus and the same pair (the same classifier under a new topic)."""
    topic = Topic.objects.create(corpus=world.topic.corpus, name="wheat again", status=Topic.Status.ACTIVE,
                                 hit_size=world.topic.hit_size, crowd=world.topic.crowd)
    ClassifierPair.objects.create(topic=topic, c1=world.topic.pair.c1, c2=world.topic.pair.c2)
    return topic


def test_a_family_that_declared_one_attempt_refuses_a_second_at_another_target(world, manager):
    pilot(world)
    _locked(world.topic, c1(world), manager, target=0.6, seed=1)
    plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                     target=0.599, user=manager)
    assert plan.pilot["feasible"], plan.pilot["reason"]
    with pytest.raises(CertificationError) as refused:
        certification_plan_lock(plan_id=plan.pk, user=manager, seed=2)
    message = str(refused.value)
    assert "declared 1 attempt" in message and "attempt 2" in message
    assert "whatever the target and the topic" in message
    assert CertificationPlan.objects.get(pk=plan.pk).status == CertificationPlan.Status.DRAFT


def test_a_new_topic_does_not_start_a_new_count(world, manager):
    pilot(world)
    _locked(world.topic, c1(world), manager, target=0.6, seed=1)
    other = _second_topic(world)
    pilot_world = type(world)(topic=other, doc_ids=world.doc_ids, relevant=world.relevant, a1=world.a1, a2=world.a2)
    pilot(pilot_world, seed=3)
    plan = certification_plan_create(topic=other, classifier=c1(world), metric=Metric.PAIR_RECALL, target=0.6,
                                     user=manager)
    assert plan.pilot["feasible"], plan.pilot["reason"]
    with pytest.raises(CertificationError, match="declared 1 attempt"):
        certification_plan_lock(plan_id=plan.pk, user=manager, seed=2)


def test_declared_attempts_are_enforced_and_later_plans_take_the_familys_share(world, manager):
    pilot(world)
    first = _locked(world.topic, c1(world), manager, target=0.6, seed=1, attempts=2)
    share = alpha_per_attempt(alpha=0.05, attempts=2).sidak
    assert first.alpha == pytest.approx(share)
    # A later plan of the family, at another target, declares nothing: it takes the family's count and share.
    second = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                       target=0.62, user=manager)
    assert second.attempts == 2 and second.alpha == pytest.approx(share) and second.family_alpha == 0.05
    certification_plan_lock(plan_id=second.pk, user=manager, seed=2)
    third = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                      target=0.6, user=manager)
    with pytest.raises(CertificationError) as refused:
        certification_plan_lock(plan_id=third.pk, user=manager, seed=3)
    assert "declared 2 attempts" in str(refused.value) and "attempt 3" in str(refused.value)


def test_a_plan_declaring_another_count_than_its_family_is_refused_at_lock(world, manager):
    pilot(world)
    _locked(world.topic, c1(world), manager, target=0.6, seed=1, attempts=3)
    plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                     target=0.6, attempts=5, user=manager)
    with pytest.raises(CertificationError, match="declared 3 attempts"):
        certification_plan_lock(plan_id=plan.pk, user=manager, seed=2)


def test_the_summary_groups_attempts_by_classifier_and_metric(world, manager):
    pilot(world)
    _locked(world.topic, c1(world), manager, target=0.6, seed=1, attempts=2)
    _locked(world.topic, c1(world), manager, target=0.599, seed=2)
    families = certification_summary(topic=world.topic)["families"]
    assert len(families) == 1 and families[0]["attempts"] == 2 and families[0]["declared"] == 2


def test_a_band_refusal_states_its_arithmetic(manager):
    """τ = 0.40 under the default band: the sizing needs the pair's bound at 0.40 × 1.25 = 0.50 (the refusal said
    "the target 0.500" without saying why)."""
    weak = make_pair_world(n=4000, prevalence=0.2, recall1=0.55, recall2=0.6, noise=0.01, seed=5)
    pilot(weak, per_region=6)
    plan = certification_plan_create(topic=weak.topic, classifier=c1(weak), metric=Metric.PAIR_RECALL,
                                     target=0.40, power=0.99, user=manager)
    reason = plan.pilot["reason"]
    assert not plan.pilot["feasible"]
    assert ("the pair's bound must reach 0.40 × 1.25 = 0.50, because the verdict is decided at the least "
            "favourable dependence of the declared band 0.8–1.25") in reason, reason


def test_a_band_refusal_on_the_pilot_states_its_arithmetic(world, manager):
    pilot(world)
    plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                     target=0.72, user=manager)
    reason = plan.pilot["reason"]
    assert not plan.pilot["feasible"]
    assert ("the pair's bound must reach 0.72 × 1.25 = 0.90, because the verdict is decided at the least "
            "favourable dependence of the declared band 0.8–1.25") in reason, reason
