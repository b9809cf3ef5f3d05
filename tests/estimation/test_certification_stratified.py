"""Issue 23: a design-basis certification plan on a topic with a scorer sizes, draws and decides N by its score
strata (annotation.services.sampling.strata's keys; estimation.stats.stratified's bound).

Before: the plan sized N as one simple random sample, the lock drew it as one, and the verdict took the pilot's
strata for nothing (design_based_recall on N whole) — ``pilot["n_plan"]`` did not exist.
"""
from __future__ import annotations

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from annotation.models import Classifier, ClassifierScore, Region, SampledDocument, SampleDraw
from annotation.roles import roles_ensure
from annotation.services.sampling.draws import samples_draw
from annotation.services.topics.topic import topic_scorer_set
from estimation.models import CertificationPlan
from estimation.services.certification_locks import certification_plan_lock
from estimation.services.certification_plans import (
    certification_plan_create,
    certification_stratum_draw_key,
    certification_stratum_key,
    n_stratum_populations,
)
from estimation.services.certification_verdicts import certification_decide
from estimation.stats.stratified import Stratum, stratified_design_recall
from tests.factories import ClassifierFactory, UserFactory, c1, certification_ids, judge, make_pair_world

pytestmark = pytest.mark.django_db
Metric = CertificationPlan.Metric


def _manager_client() -> Client:
    user = get_user_model().objects.create_user(username="page-manager", password="pw-for-tests-1")
    user.groups.add(roles_ensure()["manager"])
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def manager(db):
    return UserFactory.create(username="manager")


def _scorer(world, *, seed: int) -> Classifier:
    """A binormal scorer (relevant documents shifted by 1.8 sd: AUC ≈ 0.9)."""
    rng = np.random.default_rng(seed)
    scores = {d: float(rng.normal(1.8 if d in world.relevant else 0.0, 1.0)) for d in world.doc_ids}
    scorer = ClassifierFactory.create(corpus=world.topic.corpus, name="model", kind=Classifier.Kind.SCORES,
                                      ids=sorted(d for d, s in scores.items() if s >= 2.5),
                                      definition={"threshold": 2.5})
    ClassifierScore.objects.bulk_create([ClassifierScore(classifier=scorer, document_id=d, score=s)
                                         for d, s in scores.items()])
    return scorer


def _world(*, scorer: bool, seed: int = 5):
    world = make_pair_world(n=4000, prevalence=0.08, recall1=0.85, recall2=0.6, noise=0.005, seed=seed)
    if scorer:
        topic_scorer_set(topic=world.topic, scorer=_scorer(world, seed=seed))
    draws = samples_draw(topic=world.topic, per_region=60, complement=200, seed=seed)
    judge(world, SampledDocument.objects.filter(draw__in=draws).values_list("document_id", flat=True))
    return world


def test_a_plan_on_a_topic_with_a_scorer_is_sized_drawn_and_decided_by_score_strata(manager):
    world = _world(scorer=True)
    plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                     target=0.5, dependence_check=True, user=manager)
    assert plan.pilot["feasible"], plan.pilot["reason"]
    n_plan = plan.pilot["n_plan"]  # before: absent (N sized as one sample)
    populations = n_stratum_populations(topic=world.topic)
    assert len(n_plan) >= 2 and [row["key"] for row in n_plan] == list(populations)
    assert plan.sample_size[Region.NEITHER] == sum(row["planned"] for row in n_plan) > 0
    # each stratum capped at its fresh documents (a small top stratum the pilot judged whole has none left)
    assert all(0 <= row["planned"] <= row["fresh"] <= row["size"] for row in n_plan)
    assert all(row["planned"] > 0 for row in n_plan if row["fresh"] >= 10)
    assert plan.pilot["scorer"]["id"] == world.topic.scorer_id
    assert "score stratum" in plan.pilot["prevalence_n_source"]  # N's pilot weighed by stratum
    page = _manager_client().get(reverse("reports:certification_plan", kwargs={"plan_id": plan.pk})).content.decode()
    assert 'id="n-strata"' in page and f"{n_plan[0]['planned']} of {n_plan[0]['size']}" in page

    plan = certification_plan_lock(plan_id=plan.pk, user=manager, seed=17)
    key = certification_stratum_key(plan_id=plan.pk)
    draws = SampleDraw.objects.filter(certification_link__plan=plan, region=Region.NEITHER)
    by_key = {d.stratum_key: d for d in draws}
    assert len(by_key) == sum(1 for row in n_plan if row["planned"] > 0)
    for position, row in enumerate(n_plan, start=1):
        if not row["planned"]:
            continue
        draw = by_key[certification_stratum_draw_key(plan_key=key, position=position)]
        assert draw.region_size == row["size"] and draw.drawn == row["planned"]
        drawn = set(SampledDocument.objects.filter(draw=draw).values_list("document_id", flat=True))
        assert drawn <= set(populations[row["key"]])  # each stratum drawn from its own documents

    judge(world, certification_ids(plan))
    verdict = certification_decide(plan_id=plan.pk)
    evaluation = verdict.inputs["evaluation"]
    strata_counts = evaluation["n_strata"]
    assert [c["key"] for c in strata_counts] == [row["key"] for row in n_plan]
    assert "score strata" in evaluation["method"] and "score strata" in evaluation["assumes"]
    # The bound is stratified_design_recall's on these strata (the pair's regions one stratum each).
    counts = evaluation["counts"]
    strata = [Stratum(r, counts[r]["population"], counts[r]["judged"], counts[r]["relevant"], r)
              for r in ("A12", "B1", "B2")]
    strata += [Stratum("U", c["population"], c["judged"], c["relevant"], c["key"]) for c in strata_counts]
    from estimation.services.certification_verdicts import VERDICT_DRAWS, _locked_seed
    expected = stratified_design_recall(strata=strata, confidence=1.0 - plan.alpha, draws=VERDICT_DRAWS,
                                        seed=int(_locked_seed(plan)) % (2**32))
    assert evaluation["lower_bound"] == pytest.approx(expected.r1.conservative_lower_bound)
    assert evaluation["lower_bound"] <= world.true_recall(1)


def test_without_a_scorer_the_plan_samples_n_as_one_region(manager):
    world = _world(scorer=False)
    plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                     target=0.5, dependence_check=True, user=manager)
    assert plan.pilot["feasible"], plan.pilot["reason"]
    assert "n_plan" not in plan.pilot and plan.pilot["n_strata"] == []
    plan = certification_plan_lock(plan_id=plan.pk, user=manager, seed=17)
    keys = set(SampleDraw.objects.filter(certification_link__plan=plan).values_list("stratum_key", flat=True))
    assert keys == {certification_stratum_key(plan_id=plan.pk)}
