"""Issue 11, items 1–3: certification that cannot be wrong silently.

Plans that can be carried out (fresh capacity, enumerated regions), a verdict only from the sample as
planned, pairs that can carry a verdict (nesting refused, decided at the least favourable δ1 of a declared
band), and every attempt on the record (family-wise false-pass note, declared attempts).
"""
from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.models import ClassifierPair, Label, SampleDraw
from annotation.services.corpora.retrieved_sets import pair_regions
from annotation.services.sampling.draws import region_bitmap, region_sample_draw, samples_draw
from estimation.models import CertificationPlan, CertificationPlanDraw, CertificationVerdict
from estimation.selectors import certification_plan_describe, certification_summary
from estimation.services.certification_locks import certification_plan_lock
from estimation.services.certification_plans import (
    CertificationError,
    _excluded_documents,
    certification_plan_create,
    certification_stratum_key,
)
from estimation.services.certification_verdicts import certification_decide
from tests.factories import (
    ClassifierFactory,
    UserFactory,
    c1,
    certification_ids,
    judge,
    make_pair_world,
    pilot,
    user_with_role,
)

pytestmark = pytest.mark.django_db

Metric = CertificationPlan.Metric
Status = CertificationPlan.Status


@pytest.fixture
def manager():
    return UserFactory.create(username="manager")


@pytest.fixture
def world():
    return make_pair_world(n=4000, prevalence=0.2, recall1=0.85, recall2=0.6, noise=0.01, seed=5)


def _legacy_locked(world, *, planned: dict[str, int], drawn: dict[str, int], seed: int = 17) -> CertificationPlan:
    """A plan locked by the code before issue 11: its draws came back short of its plan and it was locked anyway."""
    plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                     target=0.6, delta1_high=1.0)
    assert plan.pilot["feasible"], plan.pilot["reason"]
    sample_size = {**planned, "total": sum(planned.values())}
    CertificationPlan.objects.filter(pk=plan.pk).update(sample_size=sample_size)
    exclude = _excluded_documents(topic=world.topic)
    draws = []
    for index, (region, k) in enumerate(sorted(drawn.items())):
        if k:
            draws.append(region_sample_draw(
                topic=world.topic, region=region, bitmap=region_bitmap(topic=world.topic, region=region), k=k,
                seed=seed + index, purpose=SampleDraw.Purpose.CERTIFICATION,
                stratum_key=certification_stratum_key(plan_id=plan.pk), exclude=exclude))
    CertificationPlanDraw.objects.bulk_create([CertificationPlanDraw(plan=plan, draw=d) for d in draws])
    CertificationPlan.objects.filter(pk=plan.pk).update(status=Status.LOCKED, seed=seed, locked_at=timezone.now())
    plan.refresh_from_db()
    return plan


# --------------------------------------------------------------------------- 2. verdict only as planned


def test_issue_reproduction_plan_drawn_78_of_163_is_not_decided(world):
    """Issue 11: a plan promised A12 84 + B2 79 = 163, drew 60 + 18, and stored "Passed, estimate 0.831"."""
    pilot(world)
    plan = _legacy_locked(world, planned={"A12": 84, "B2": 79}, drawn={"A12": 60, "B2": 18})
    judge(world, certification_ids(plan))
    assert certification_decide(plan_id=plan.pk) is None
    assert not CertificationVerdict.objects.filter(plan=plan).exists()
    plan.refresh_from_db()
    assert plan.status == Status.LOCKED
    info = certification_plan_describe(plan=plan)
    assert info["state"] == "undecidable"
    assert info["drawn_planned"] == {"A12": {"drawn": 60, "planned": 84}, "B2": {"drawn": 18, "planned": 79}}
    assert "cannot be decided: drawn 78 of 163 planned" in info["note"]
    assert "A12 60 of 84" in info["note"] and "B2 18 of 79" in info["note"]
    summary = certification_summary(topic=world.topic)
    assert summary["latest"]["state"] == "undecidable"
    from estimation.selectors import certification_state

    assert certification_state(topic=world.topic)["state"] == "undecidable"


def test_issue_reproduction_plan_drawn_17_of_68_with_none_in_a12_is_not_decided(world):
    """Issue 11: a plan drew 17 of 68 documents, none in A12, and stored "Failed, estimate 0.000"."""
    pilot(world)
    plan = _legacy_locked(world, planned={"A12": 40, "B2": 28}, drawn={"B2": 17})
    judge(world, certification_ids(plan))
    assert certification_decide(plan_id=plan.pk) is None
    assert not CertificationVerdict.objects.exists()
    info = certification_plan_describe(plan=plan)
    assert info["state"] == "undecidable" and "drawn 17 of 68 planned" in info["note"]
    assert info["drawn_planned"]["A12"] == {"drawn": 0, "planned": 40}


def test_lock_refuses_a_draw_that_comes_back_short_and_the_plan_stays_draft(world, manager):
    pilot(world)
    plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                     target=0.6, user=manager)
    assert plan.pilot["feasible"], plan.pilot["reason"]
    # Between planning and locking, other samples use up B2's fresh documents.
    planned_b2 = plan.sample_size["B2"]
    fresh_b2 = len(region_bitmap(topic=world.topic, region="B2") - _excluded_documents(topic=world.topic))
    samples_draw(topic=world.topic, per_region=40 + fresh_b2 - planned_b2 + 1, seed=9)
    with pytest.raises(CertificationError, match="B2"):
        certification_plan_lock(plan_id=plan.pk, user=manager, seed=4)
    plan.refresh_from_db()
    assert plan.status == Status.DRAFT and plan.seed is None
    assert not CertificationPlanDraw.objects.exists()
    assert not SampleDraw.objects.filter(purpose=SampleDraw.Purpose.CERTIFICATION).exists()


def test_drawn_and_planned_are_shown_for_a_locked_plan(world, manager):
    pilot(world)
    plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                     target=0.6, user=manager)
    draft = certification_plan_describe(plan=plan)
    assert draft["drawn_planned"] == {r: {"drawn": 0, "planned": plan.sample_size[r]} for r in ("A12", "B2")}
    plan = certification_plan_lock(plan_id=plan.pk, user=manager, seed=3)
    info = certification_plan_describe(plan=plan)
    assert info["drawn_planned"] == {r: {"drawn": plan.sample_size[r], "planned": plan.sample_size[r]}
                                     for r in ("A12", "B2")}
    assert info["state"] == "pending"


# --------------------------------------------------------------------------- 1. plans that can be carried out


@pytest.fixture
def small_world():
    # 600 documents, 120 relevant: B2 (C2 only) holds about 20 documents, A12 about 60.
    return make_pair_world(n=600, prevalence=0.2, recall1=0.85, recall2=0.6, noise=0.01, seed=5)


def test_plan_records_fresh_capacity_and_enumerates_a_region_that_runs_out(small_world, manager):
    world = small_world
    pilot(world, per_region=15)
    excluded = _excluded_documents(topic=world.topic)
    fresh = {r: len(region_bitmap(topic=world.topic, region=r) - excluded) for r in ("A12", "B2")}
    plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                     target=0.5, user=manager)
    assert plan.pilot["feasible"], plan.pilot["reason"]
    assert plan.pilot["fresh"] == fresh
    enumerated = plan.pilot["enumerated"]
    assert enumerated, "a region of ~20 documents with 15 in the pilot is taken whole"
    for region in enumerated:
        assert plan.sample_size[region] == fresh[region]
    for region in ("A12", "B2"):
        assert plan.sample_size[region] <= fresh[region]


def test_an_enumerated_region_gives_an_exact_count_pilot_included(small_world, manager):
    world = small_world
    pilot(world, per_region=15)
    plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                     target=0.5, user=manager)
    enumerated = plan.pilot["enumerated"]
    assert enumerated
    plan = certification_plan_lock(plan_id=plan.pk, user=manager, seed=21)
    judge(world, certification_ids(plan))
    verdict = certification_decide(plan_id=plan.pk)
    assert verdict is not None
    counts = verdict.inputs["evaluation"]["counts"]
    regions = pair_regions(c1=world.topic.pair.c1, c2=world.topic.pair.c2)
    for region in enumerated:
        members = set(regions.by_code(region))
        assert counts[region]["population"] == counts[region]["judged"] == len(members)
        assert counts[region]["relevant"] == len(members & world.relevant)  # exact: pilot + new labels
    assert verdict.inputs["evaluation"]["enumerated"] == sorted(enumerated)


def test_a_uniform_plan_larger_than_the_fresh_corpus_is_refused_with_the_shortfall(small_world, manager):
    from tests.factories import uniform_pilot

    world = small_world
    uniform_pilot(world, n=450)
    plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.QBCB_RECALL,
                                     target=0.6, user=manager)
    assert plan.pilot["feasible"] is False
    assert "U needs" in plan.pilot["reason"] and "fresh documents" in plan.pilot["reason"]
    assert f"{plan.pilot['fresh']['U']} remain" in plan.pilot["reason"]


# --------------------------------------------------------------------------- 4. pairs that can carry a verdict


def test_a_nested_pair_is_refused_in_words(manager):
    world = make_pair_world(n=1000, prevalence=0.2, recall1=0.6, recall2=0.8, seed=3)
    # C2 replaced by a partner that contains C1 (A1 ⊆ A2, B1 empty): notes §8, Reuters `earn`.
    container = ClassifierFactory.create(corpus=world.topic.corpus, ids=sorted(world.a1 | world.a2))
    ClassifierPair.objects.filter(topic=world.topic).update(c2=container)
    with pytest.raises(CertificationError, match="also retrieved by"):
        certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                  target=0.7, user=manager)
    identical = ClassifierFactory.create(corpus=world.topic.corpus, ids=sorted(world.a1))
    ClassifierPair.objects.filter(topic=world.topic).update(c2=identical)
    with pytest.raises(CertificationError, match="exactly the same documents"):
        certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                  target=0.7, user=manager)
    assert not CertificationPlan.objects.exists()


def test_the_plan_stores_a_delta1_band_and_the_database_checks_it(world, manager):
    pilot(world)
    plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                     target=0.6, user=manager)
    assert (plan.delta1_low, plan.delta1_high) == (0.8, 1.25)
    for low, high in ((0.0, 1.25), (1.1, 1.25), (0.8, 0.9)):
        with pytest.raises(IntegrityError), transaction.atomic():
            CertificationPlan.objects.filter(pk=plan.pk).update(delta1_low=low, delta1_high=high)
    with pytest.raises(CertificationError, match="δ1"):
        certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                  target=0.6, delta1_low=1.1)


def test_the_plan_is_sized_for_the_least_favourable_delta1(world, manager):
    pilot(world)
    wide = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                     target=0.6, delta1_high=1.25, user=manager)
    independent = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                            target=0.6, delta1_low=1.0, delta1_high=1.0, user=manager)
    assert wide.pilot["sizing_target"] == pytest.approx(0.75)
    assert independent.pilot["sizing_target"] == pytest.approx(0.6)
    assert wide.sample_size["total"] > independent.sample_size["total"]


def test_a_target_the_band_makes_unreachable_is_refused(world, manager):
    pilot(world)
    plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                     target=0.7, delta1_high=1.5, user=manager)  # 0.7 × 1.5 ≥ 1
    assert plan.pilot["feasible"] is False and "0.70 × 1.5 = 1.05" in plan.pilot["reason"]


def test_the_verdict_is_decided_at_the_least_favourable_delta1_and_records_it(world, manager):
    pilot(world)
    plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                     target=0.6, user=manager)
    plan = certification_plan_lock(plan_id=plan.pk, user=manager, seed=12)
    judge(world, certification_ids(plan))
    verdict = certification_decide(plan_id=plan.pk)
    evaluation = verdict.inputs["evaluation"]
    pair_low = evaluation["pair_lower_bound"]
    by_delta1 = {float(d): b for d, b in evaluation["by_delta1"]}
    assert set(by_delta1) >= {0.8, 1.0, 1.25}
    assert by_delta1[1.0] == pytest.approx(pair_low)
    assert evaluation["least_favourable_delta1"] == 1.25
    assert verdict.lower_bound == pytest.approx(min(1.0, pair_low / 1.25))
    assert verdict.passed == (verdict.lower_bound >= 0.6)
    assert evaluation["delta1_band"] == [0.8, 1.25]


# --------------------------------------------------------------------------- 6. every attempt counts


def _decided(world, manager, *, target: float, seed: int, alpha: float = 0.05, attempts: int | None = None,
             relabel_fail: bool = False) -> CertificationPlan:
    plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                     target=target, alpha=alpha, attempts=attempts, user=manager)
    assert plan.pilot["feasible"], plan.pilot["reason"]
    plan = certification_plan_lock(plan_id=plan.pk, user=manager, seed=seed)
    ids = certification_ids(plan)
    if relabel_fail:  # certification documents of A12 judged not relevant, the others relevant: a certain FAIL
        for doc_id in ids:
            relevant = doc_id not in (world.a1 & world.a2)
            Label.objects.update_or_create(topic=world.topic, document_id=doc_id,
                                           defaults={"votes_total": 3, "votes_relevant": 3 * relevant,
                                                     "majority": relevant})
    else:  # true labels, also for the earlier attempts' documents (an enumerated region counts them)
        judge(world, ids | set(Label.objects.filter(topic=world.topic).values_list("document_id", flat=True)))
    verdict = certification_decide(plan_id=plan.pk)
    assert verdict is not None and verdict.passed is (not relabel_fail)
    return plan


def test_a_pass_after_earlier_fails_carries_the_familywise_bound(world, manager):
    pilot(world)
    # Three attempts are allowed only when declared (item 7 of "Every figure honest"): each tests at the Šidák share.
    _decided(world, manager, target=0.6, seed=1, attempts=3, relabel_fail=True)
    _decided(world, manager, target=0.6, seed=2, relabel_fail=True)
    third = _decided(world, manager, target=0.6, seed=3)
    summary = certification_summary(topic=world.topic)
    latest = summary["latest"]
    assert latest["plan_id"] == third.pk and latest["state"] == "pass"
    family = latest["family"]
    assert family["attempts"] == 3 and family["earlier_fails"] == 2
    # Declared 3 at 0.05: each attempt at 1 − 0.95^(1/3), so the three together at 1 − 0.95 = 0.05, "up to 5%".
    assert family["familywise_false_pass"] == pytest.approx(0.05)
    assert "3 attempts: the chance that at least one passes by luck is up to 5%" in family["note"]
    group = [g for g in summary["families"] if g["attempts"] == 3]
    assert len(group) == 1 and group[0]["note"] == family["note"]


def test_the_report_page_shows_a_pass_after_fails_with_its_familywise_note(world, manager, client):
    """Issue 11 item 3: a FAIL then a PASS read as a plain "pass" in the report, with no note."""
    from estimation.services.recompute import topic_snapshot_create

    pilot(world)
    _decided(world, manager, target=0.6, seed=1, attempts=2, relabel_fail=True)
    _decided(world, manager, target=0.6, seed=2)
    topic_snapshot_create(topic_id=world.topic.pk)
    client.force_login(user_with_role("reader", "manager"))
    html = client.get(f"/reports/topics/{world.topic.pk}/").content.decode()
    # Declared 2 at 0.05: each at its Šidák share, the two together at 0.05.
    assert "2 attempts: the chance that at least one passes by luck is up to 5%" in html
    assert 'id="certification-attempts"' in html and "Failed → Passed" in html
    assert 'id="certification-drawn-planned"' in html


def test_locking_freezes_the_certified_classifier(world, manager):
    """Issue 15 item 7: the classifier a locked plan certifies may not change (its verdict certifies it as it is)."""
    from annotation.models import Classifier

    pilot(world)
    plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                     target=0.6, user=manager)
    assert Classifier.objects.get(pk=plan.classifier_id).frozen_reason == ""
    certification_plan_lock(plan_id=plan.pk, user=manager, seed=1)
    assert f"certification plan {plan.pk} (locked)" in Classifier.objects.get(pk=plan.classifier_id).frozen_reason


def test_a_declared_number_of_attempts_splits_alpha(world, manager):
    from estimation.stats.certification import alpha_per_attempt

    pilot(world)
    plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                     target=0.6, alpha=0.05, attempts=3, user=manager)
    assert plan.attempts == 3 and plan.family_alpha == 0.05
    assert plan.alpha == pytest.approx(alpha_per_attempt(alpha=0.05, attempts=3).sidak)
    info = certification_plan_describe(plan=plan)
    assert info["attempts"] == 3 and info["family_alpha"] == 0.05


def test_every_plan_is_listed_without_truncation(world, manager):
    pilot(world)
    base = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                     target=0.6, user=manager)
    # 24 drafts (copies of one plan: the sizing is not what is tested here).
    fields = {f.name: getattr(base, f.name) for f in CertificationPlan._meta.concrete_fields
              if f.name not in ("id", "created_at")}
    CertificationPlan.objects.bulk_create([CertificationPlan(**fields) for _ in range(24)])
    summary = certification_summary(topic=world.topic)
    assert len(summary["plans"]) == 25



# --------------------------------------------------------------------------- 5. dependence check (region N)


@pytest.mark.slow
def test_a_plan_with_a_dependence_check_samples_n_and_is_decided_on_the_design_based_bound(manager):
    from estimation.stats.design_based import design_based_recall

    # Strongly dependent pair (C2 finds mostly what C1 finds) would mislead the band; N measures what both miss.
    world = make_pair_world(n=3000, prevalence=0.1, recall1=0.85, recall2=0.6, noise=0.005, seed=8)
    pilot(world)
    samples_draw(topic=world.topic, per_region=40, complement=300, seed=3)
    judge(world, SampleDraw.objects.filter(topic=world.topic, region="N").values_list(
        "documents__document_id", flat=True))
    plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                     target=0.5, dependence_check=True, user=manager)
    assert plan.pilot["feasible"], plan.pilot["reason"]
    assert set(plan.sample_size) == {"A12", "B1", "B2", "N", "total"} and plan.sample_size["N"] > 0
    assert plan.pilot["sizing_target"] == 0.5  # no δ1 band: nothing to inflate
    assert plan.estimated_cost > 0
    plan = certification_plan_lock(plan_id=plan.pk, user=manager, seed=31)
    drawn = SampleDraw.objects.filter(certification_link__plan=plan)
    assert {d.region for d in drawn} <= {"A12", "B1", "B2", "N"} and "N" in {d.region for d in drawn}
    judge(world, certification_ids(plan))
    verdict = certification_decide(plan_id=plan.pk)
    evaluation = verdict.inputs["evaluation"]
    assert evaluation["dependence_check"] is True and "design-based" in evaluation["method"]
    counts = {r: (c["population"], c["judged"], c["relevant"]) for r, c in evaluation["counts"].items()}
    expected = design_based_recall(a12=counts["A12"], b1=counts["B1"], b2=counts["B2"], u=counts["N"],
                                   confidence=1 - plan.alpha, draws=20_000, seed=31 % 2**32)
    assert verdict.lower_bound == pytest.approx(expected.r1.conservative_lower_bound)
    assert verdict.passed == (verdict.lower_bound >= 0.5)
    assert verdict.lower_bound <= world.true_recall(1) + 0.02
    assert "Nothing about how the two classifiers depend" in evaluation["assumes"]


@pytest.mark.slow
def test_a_target_beyond_the_band_is_plannable_with_a_dependence_check(manager):
    world = make_pair_world(n=3000, prevalence=0.1, recall1=0.9, recall2=0.6, noise=0.005, seed=8)
    pilot(world)
    samples_draw(topic=world.topic, per_region=40, complement=300, seed=3)
    judge(world, SampleDraw.objects.filter(topic=world.topic, region="N").values_list(
        "documents__document_id", flat=True))
    without = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                        target=0.82, user=manager)
    assert without.pilot["feasible"] is False and "1.25" in without.pilot["reason"]
    with_check = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                           target=0.82, dependence_check=True, user=manager)
    assert "1.25" not in (with_check.pilot["reason"] or "")
    with pytest.raises(CertificationError, match="dependence check"):
        certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.F1, target=0.5,
                                  dependence_check=True, user=manager)


def test_a_monitored_pair_plan_reads_its_sequence_at_the_least_favourable_delta1(world, manager):
    pilot(world)
    plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                     target=0.6, monitoring=True, user=manager)
    assert plan.pilot["feasible"], plan.pilot["reason"]
    plan = certification_plan_lock(plan_id=plan.pk, user=manager, seed=5)
    judge(world, certification_ids(plan))
    verdict = certification_decide(plan_id=plan.pk)
    evaluation = verdict.inputs["evaluation"]
    assert evaluation["sequence_delta1"] == 1.25
    assert verdict.lower_bound == pytest.approx(min(1.0, evaluation["pair_sequence_bound"] / 1.25))
    assert verdict.passed == (verdict.lower_bound >= 0.6)
