"""Certification services: plan, lock and draw fresh, decide once, and the database's refusals."""
from __future__ import annotations

import pytest
from django.db import DatabaseError, transaction

from annotation.models import Label, SampleDraw
from annotation.services.crowd.labels import gold_document_add
from estimation.models import CertificationPlan, CertificationVerdict
from estimation.selectors import certification_summary
from estimation.services.certification_locks import certification_plan_lock
from estimation.services.certification_plans import (
    CertificationError,
    certification_plan_create,
    certification_plan_update,
)
from estimation.services.certification_verdicts import (
    certification_decide,
    certifications_decide_ready,
    verdict_checksum,
)
from tests.factories import UserFactory, c1, certification_ids, judge, make_pair_world, pilot, uniform_pilot

pytestmark = pytest.mark.django_db

Metric = CertificationPlan.Metric


@pytest.fixture
def world():
    # 4,000 documents, 20% relevant; C1 finds 85% of them, C2 60%, independently.
    return make_pair_world(n=4000, prevalence=0.2, recall1=0.85, recall2=0.6, noise=0.01, seed=5)


@pytest.fixture
def manager():
    return UserFactory.create(username="manager")


# --------------------------------------------------------------------------- plan


def test_plan_sizes_the_pair_recall_sample_from_the_pilot(world, manager):
    pilot(world)
    plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                     target=0.6, alpha=0.05, power=0.9, user=manager)
    assert plan.status == CertificationPlan.Status.DRAFT
    assert plan.pilot["feasible"] is True and plan.pilot["reason"] is None
    assert plan.pilot["regions"]["A12"]["judged"] == 40 and plan.pilot["regions"]["B2"]["judged"] == 40
    assert set(plan.sample_size) == {"A12", "B2", "total"}
    assert plan.sample_size["total"] == plan.sample_size["A12"] + plan.sample_size["B2"] > 0
    assert plan.estimated_cost > 0
    assert plan.pilot["estimate"] > 0.6


def test_plan_with_pilot_at_or_below_the_target_explains_why(world, manager):
    pilot(world)
    plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                     target=0.97, user=manager)
    assert plan.pk is not None  # stored, not an exception
    assert plan.pilot["feasible"] is False
    assert "not above the target" in plan.pilot["reason"]
    assert plan.sample_size == {} and plan.estimated_cost is None
    summary = certification_summary(topic=world.topic)
    assert summary["state"] == "infeasible" and "not above the target" in summary["latest"]["note"]
    with pytest.raises(CertificationError, match="no feasible sample size"):
        certification_plan_lock(plan_id=plan.pk, user=manager)


def test_plan_without_a_pilot_says_what_to_do(world, manager):
    plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.F1, target=0.6,
                                     user=manager)
    assert plan.pilot["feasible"] is False and "uniform pilot" in plan.pilot["reason"]


def test_pair_recall_needs_a_classifier_of_the_pair_and_bad_parameters_are_refused(world, manager):
    from tests.factories import ClassifierFactory

    other = ClassifierFactory.create(corpus=world.topic.corpus, ids=world.doc_ids[:10])
    with pytest.raises(CertificationError, match="one of the topic's pair"):
        certification_plan_create(topic=world.topic, classifier=other, metric=Metric.PAIR_RECALL, target=0.6)
    with pytest.raises(CertificationError, match="α"):
        certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.F1, target=0.6,
                                  alpha=0.7)
    with pytest.raises(CertificationError, match="target"):
        certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.F1, target=1.2)


def test_f1_and_qbcb_plans_use_a_uniform_pilot(world, manager):
    uniform_pilot(world)
    f1 = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.F1, target=0.6,
                                   user=manager)
    assert f1.pilot["feasible"] is True, f1.pilot["reason"]
    assert sum(f1.pilot["counts"].values()) == 600 and set(f1.sample_size) == {"U", "total"}
    qbcb = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.QBCB_RECALL,
                                     target=0.6, user=manager)
    assert qbcb.pilot["feasible"] is True, qbcb.pilot["reason"]
    assert qbcb.sample_size["U"] > 0


def test_draft_plans_can_be_updated(world, manager):
    pilot(world)
    plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                     target=0.6, user=manager)
    first = plan.sample_size["total"]
    # Issue 11: sized at the band's δ1 = 1.25, so a target of 0.7 needs a pair bound of 0.875 (above this
    # pilot's 0.85); 0.65 needs 0.8125.
    plan = certification_plan_update(plan_id=plan.pk, target=0.65)
    assert plan.pilot["feasible"], plan.pilot["reason"]
    assert plan.target == 0.65 and plan.sample_size["total"] > first


# --------------------------------------------------------------------------- lock and draw


@pytest.fixture
def locked(world, manager):
    pilot_ids = pilot(world)
    gold = world.doc_ids[-1]
    gold_document_add(topic=world.topic, document=world.topic.corpus.documents.get(pk=gold), relevant=False)
    plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                     target=0.6, user=manager)
    plan = certification_plan_lock(plan_id=plan.pk, user=manager, seed=1234)
    return plan, pilot_ids, gold


def test_lock_draws_a_fresh_sample_that_shares_nothing_with_the_pilot(world, locked):
    plan, pilot_ids, gold = locked
    plan.refresh_from_db()
    assert plan.status == CertificationPlan.Status.LOCKED and plan.seed == 1234 and plan.locked_at
    ids = certification_ids(plan)
    draws = SampleDraw.objects.filter(certification_link__plan=plan)
    assert {d.purpose for d in draws} == {SampleDraw.Purpose.CERTIFICATION}
    assert {d.region: d.drawn for d in draws} == {"A12": plan.sample_size["A12"], "B2": plan.sample_size["B2"]}
    assert len(ids) == plan.sample_size["total"]
    assert not ids & pilot_ids
    assert gold not in ids
    # Published like any other sample: every certification document is in a HIT.
    from annotation.models import HitItem

    assert set(HitItem.objects.filter(topic=world.topic, is_gold=False, document_id__in=ids)
               .values_list("document_id", flat=True)) == ids


def test_a_locked_plan_cannot_be_edited_by_the_service_or_the_database(world, locked, manager):
    plan, _, _ = locked
    with pytest.raises(CertificationError, match="cannot change"):
        certification_plan_update(plan_id=plan.pk, target=0.5)
    with pytest.raises(CertificationError, match="already"):
        certification_plan_lock(plan_id=plan.pk, user=manager)
    for change in ({"target": 0.5}, {"alpha": 0.2}, {"power": 0.8}, {"seed": 1}, {"sample_size": {"A12": 1}},
                   {"metric": Metric.F1}, {"status": CertificationPlan.Status.DRAFT},
                   {"classifier": world.topic.pair.c2}):
        with pytest.raises(DatabaseError), transaction.atomic():
            CertificationPlan.objects.filter(pk=plan.pk).update(**change)
    with pytest.raises(DatabaseError), transaction.atomic():
        CertificationPlan.objects.filter(pk=plan.pk).delete()
    plan.refresh_from_db()
    assert plan.target == 0.6 and plan.seed == 1234 and plan.status == CertificationPlan.Status.LOCKED


def test_a_draft_plan_can_still_be_changed_in_the_database(world, manager):
    pilot(world)
    plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                     target=0.6, user=manager)
    CertificationPlan.objects.filter(pk=plan.pk).update(target=0.65)  # the trigger only guards locked plans
    plan.refresh_from_db()
    assert plan.target == 0.65


# --------------------------------------------------------------------------- decide once


def test_pending_until_every_certification_document_is_judged(world, locked):
    plan, _, _ = locked
    ids = sorted(certification_ids(plan))
    judge(world, ids[:-1])
    assert certification_decide(plan_id=plan.pk) is None
    summary = certification_summary(topic=world.topic)
    assert summary["state"] == "pending"
    assert summary["latest"]["progress"] == {"judged": len(ids) - 1, "documents": len(ids)}
    assert "do not certify" in summary["latest"]["note"]
    assert not CertificationVerdict.objects.exists()


def test_verdict_is_computed_once_stored_with_inputs_and_never_overwritten(world, locked):
    plan, _, _ = locked
    ids = certification_ids(plan)
    judge(world, ids)
    verdict = certification_decide(plan_id=plan.pk)
    assert verdict is not None
    # True recall of C1 is about 0.85 against a target of 0.6: a clear pass.
    assert verdict.passed is True and verdict.lower_bound >= 0.6 and verdict.estimate > verdict.lower_bound
    assert {row[0] for row in verdict.inputs["documents"]} == ids
    assert all(row[2] == int(row[0] in world.relevant) for row in verdict.inputs["documents"])
    assert verdict.checksum == verdict_checksum(inputs=verdict.inputs, code_version=verdict.code_version)
    plan.refresh_from_db()
    assert plan.status == CertificationPlan.Status.DECIDED

    # Labels change afterwards (say a re-judgment): the verdict does not.
    Label.objects.filter(topic=world.topic, document_id__in=ids).update(majority=False)
    again = certification_decide(plan_id=plan.pk)
    assert again.pk == verdict.pk and again.checksum == verdict.checksum and again.passed is True
    with pytest.raises(DatabaseError), transaction.atomic():
        CertificationVerdict.objects.filter(pk=verdict.pk).update(passed=False)
    with pytest.raises(DatabaseError), transaction.atomic():
        CertificationVerdict.objects.filter(pk=verdict.pk).delete()
    with pytest.raises(DatabaseError), transaction.atomic():
        CertificationPlan.objects.filter(pk=plan.pk).update(status=CertificationPlan.Status.LOCKED)
    summary = certification_summary(topic=world.topic)
    assert summary["state"] == "pass" and summary["latest"]["verdict"]["checksum"] == verdict.checksum


def test_decide_running_twice_at_once_computes_and_stores_one_verdict(world, locked, monkeypatch):
    """The bound is computed outside the plan's lock; the second decide to reach the lock keeps the first verdict."""
    from estimation.services import certification_verdicts

    plan, _, _ = locked
    judge(world, certification_ids(plan))
    real_evaluate = certification_verdicts._evaluate
    evaluations, inner = [], []

    def evaluate(**kwargs):
        evaluations.append(1)
        result = real_evaluate(**kwargs)
        if len(evaluations) == 1:  # while the first run computes its bound, a second run decides
            inner.append(certification_decide(plan_id=plan.pk))
        return result

    monkeypatch.setattr(certification_verdicts, "_evaluate", evaluate)
    outer = certification_decide(plan_id=plan.pk)
    assert inner[0] is not None and outer.pk == inner[0].pk
    assert CertificationVerdict.objects.filter(plan=plan).count() == 1
    assert len(evaluations) == 2  # one per run: the first run's result was not stored over the second's
    assert certification_decide(plan_id=plan.pk).pk == outer.pk and len(evaluations) == 2


def test_labels_that_move_during_the_bound_are_read_again_under_the_lock(world, locked, monkeypatch):
    from estimation.services import certification_verdicts

    plan, _, _ = locked
    ids = sorted(certification_ids(plan))
    judge(world, ids)
    real_evaluate = certification_verdicts._evaluate
    calls = []

    def evaluate(**kwargs):
        calls.append(1)
        result = real_evaluate(**kwargs)
        if len(calls) == 1:  # a re-judgment lands while the first bound is computed
            Label.objects.filter(topic=world.topic, document_id=ids[0]).update(
                majority=ids[0] not in world.relevant)
        return result

    monkeypatch.setattr(certification_verdicts, "_evaluate", evaluate)
    verdict = certification_decide(plan_id=plan.pk)
    assert len(calls) == 2
    first = next(row for row in verdict.inputs["documents"] if row[0] == ids[0])
    assert first[2] == int(ids[0] not in world.relevant)  # the verdict rests on the label as committed


def test_a_draft_edited_while_it_is_sized_stores_the_latest_parameters_sizes(world, manager, monkeypatch):
    # The sizing is a job: an edit while it runs queues a new sizing, and the older one's late result is
    # discarded (it is no longer the plan's latest sizing), so the stored sizes are those of the latest edit.
    from estimation.services import certification_plans

    pilot(world)
    plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                     target=0.6, user=manager)
    real_fill = certification_plans._fill
    fills = []

    def fill(draft, step=None):
        fills.append(draft.target)
        real_fill(draft, step)
        if len(fills) == 1:  # another manager saves a new target while this sizing runs
            certification_plan_update(plan_id=plan.pk, target=0.55, user=manager)

    monkeypatch.setattr(certification_plans, "_fill", fill)
    certification_plan_update(plan_id=plan.pk, alpha=0.1, user=manager)
    assert fills == [0.6, 0.55]
    plan.refresh_from_db()
    assert plan.target == 0.55 and plan.alpha == 0.1
    assert plan.pilot["sizing_target"] == pytest.approx(0.55 * 1.25)  # sized for τ·δ1_high of the latest edit
    sizings = list(plan.sizings.order_by("pk").values_list("status", "error"))
    assert sizings[-1] == ("done", "") and sizings[-2][0] == "failed" and "Superseded" in sizings[-2][1]


def test_the_sweep_decides_ready_plans_only(world, locked):
    plan, _, _ = locked
    assert certifications_decide_ready() == []
    judge(world, certification_ids(plan))
    assert certifications_decide_ready() == [plan.pk]
    assert certifications_decide_ready() == []  # decided plans are not locked any more


def test_a_second_certification_needs_a_new_plan_and_a_new_sample(world, manager):
    # A second attempt on the same classifier and metric is allowed only when the family declared it.
    pilot_ids = pilot(world)
    plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                     target=0.6, attempts=2, user=manager)
    plan = certification_plan_lock(plan_id=plan.pk, user=manager, seed=1234)
    first_ids = certification_ids(plan)
    judge(world, first_ids)
    certification_decide(plan_id=plan.pk)
    second = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                       target=0.6, user=manager)
    second = certification_plan_lock(plan_id=second.pk, user=manager, seed=99)
    second_ids = certification_ids(second)
    assert second_ids and not second_ids & (first_ids | pilot_ids)


def test_monitored_plan_stops_early_when_the_sequence_clears_the_target(world, manager):
    from estimation.services.certification_verdicts import _monitoring_order

    pilot(world)
    plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                     target=0.6, monitoring=True, user=manager)
    plan = certification_plan_lock(plan_id=plan.pk, user=manager, seed=5)
    documents = [{"id": d, "region": None, "label": None} for d in sorted(certification_ids(plan))]
    ordered = [d["id"] for d in _monitoring_order(documents, plan.seed)]
    # A manager looks after every tenth of the sample (judged in the seeded order).
    verdict, judged = None, []
    for look in range(1, 11):
        judged = ordered[: len(ordered) * look // 10]
        judge(world, judged)
        verdict = certification_decide(plan_id=plan.pk)
        if verdict is not None:
            break
    # Recall ~0.85 against 0.6: the sequence clears the target before the sample is exhausted.
    assert verdict is not None and len(judged) < len(ordered)
    assert "confidence sequence" in verdict.inputs["evaluation"]["method"]
    assert verdict.passed is True and verdict.lower_bound >= 0.6
    assert verdict.inputs["early_stop"]["judged"] == len(judged) < verdict.inputs["early_stop"]["planned"]
    assert {row[0] for row in verdict.inputs["documents"]} == set(judged)


def test_monitored_plan_is_pending_while_the_sequence_has_not_cleared_the_target(world, manager):
    from estimation.services.certification_verdicts import _monitoring_order

    pilot(world)
    plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                     target=0.6, monitoring=True, user=manager)
    plan = certification_plan_lock(plan_id=plan.pk, user=manager, seed=6)
    documents = [{"id": d, "region": None, "label": None} for d in sorted(certification_ids(plan))]
    ordered = [d["id"] for d in _monitoring_order(documents, plan.seed)]
    judge(world, ordered[:5])
    assert certification_decide(plan_id=plan.pk) is None


def test_the_immutability_triggers_are_installed_for_this_database():
    from django.db import connection

    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal")
            expected = {"certificationplan_frozen", "certificationverdict_immutable"}
        else:
            cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")
            expected = {"certificationplan_frozen", "certificationplan_no_delete", "certificationverdict_no_update",
                        "certificationverdict_no_delete"}
        names = {row[0] for row in cursor.fetchall()}
    assert expected <= names


@pytest.mark.postgres
def test_postgresql_refuses_to_rewrite_a_verdict(world, locked):
    from tests.factories import require_postgres

    require_postgres()
    plan, _, _ = locked
    judge(world, certification_ids(plan))
    verdict = certification_decide(plan_id=plan.pk)
    with pytest.raises(DatabaseError, match="immutable"), transaction.atomic():
        CertificationVerdict.objects.filter(pk=verdict.pk).update(lower_bound=0.99)
    with pytest.raises(DatabaseError, match="locked"), transaction.atomic():
        CertificationPlan.objects.filter(pk=plan.pk).update(sample_size={"A12": 1, "total": 1})


def test_monitored_f1_plan_reads_the_f1_confidence_sequence(world, manager):
    uniform_pilot(world)
    plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.F1, target=0.5,
                                     monitoring=True, user=manager)
    assert plan.pilot["feasible"] is True, plan.pilot["reason"]
    plan = certification_plan_lock(plan_id=plan.pk, user=manager, seed=8)
    judge(world, certification_ids(plan))
    verdict = certification_decide(plan_id=plan.pk)
    assert "confidence sequence" in verdict.inputs["evaluation"]["method"]
    # The sequence's bound is below the fixed-sample bound on the same documents: the price of peeking.
    assert verdict.lower_bound <= verdict.inputs["evaluation"]["fixed_sample_lower_bound"]


def test_the_second_classifier_of_the_pair_is_certified_from_a12_and_b1(world, manager):
    pilot(world)
    c2 = world.topic.pair.c2
    plan = certification_plan_create(topic=world.topic, classifier=c2, metric=Metric.PAIR_RECALL, target=0.4,
                                     user=manager)
    assert plan.pilot["which"] == "r2" and set(plan.sample_size) == {"A12", "B1", "total"}
    plan = certification_plan_lock(plan_id=plan.pk, user=manager, seed=3)
    judge(world, certification_ids(plan))
    verdict = certification_decide(plan_id=plan.pk)
    # C2's true recall is about 0.6: above 0.4, and the estimate is near the truth.
    assert verdict.passed is True
    assert abs(verdict.estimate - world.true_recall(2)) < 0.15


def test_no_verdict_for_a_classifier_that_changed_after_the_lock(world, locked):
    from annotation.models import Classifier

    plan, _, _ = locked
    judge(world, certification_ids(plan))
    Classifier.objects.filter(pk=plan.classifier_id).update(fingerprint="changed")
    with pytest.raises(CertificationError, match="changed after plan"):
        certification_decide(plan_id=plan.pk)
    assert not CertificationVerdict.objects.exists()
    assert certifications_decide_ready() == []  # the sweep logs it and carries on


def test_a_sample_without_relevant_documents_still_gets_a_stored_verdict(world, locked):
    # Every certification document judged not relevant: the estimate is undefined (0/0), the
    # verdict is a fail, and its inputs hold no NaN (PostgreSQL's jsonb would refuse it).
    import json

    plan, _, _ = locked
    for doc_id in certification_ids(plan):
        Label.objects.update_or_create(topic=world.topic, document_id=doc_id,
                                       defaults={"votes_total": 3, "votes_relevant": 0, "majority": False})
    verdict = certification_decide(plan_id=plan.pk)
    assert verdict.passed is False and verdict.lower_bound == 0.0
    json.dumps(verdict.inputs, allow_nan=False)


def test_the_last_judgment_of_the_sample_decides_the_plan_without_the_sweep(
    world, manager, django_capture_on_commit_callbacks
):
    """The label pipeline's hook: judging the certification HITs through the real submit
    service leaves a verdict (and a report snapshot showing it) with no sweep or manual call."""
    from annotation.models import Label as LabelModel
    from annotation.services.crowd.crowd_simulation import crowd_simulate
    from estimation.selectors import topic_report_latest

    pilot(world)
    plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.PAIR_RECALL,
                                     target=0.6, user=manager)
    plan = certification_plan_lock(plan_id=plan.pk, user=manager, seed=99)
    ids = certification_ids(plan)
    with django_capture_on_commit_callbacks(execute=True):
        summary = crowd_simulate(topic=world.topic, truth_field="topics", truth_value=world.topic.name,
                                 accuracy=1.0, workers=30, seed=3)
    assert summary.judgments >= 3 * len(ids)
    assert LabelModel.objects.filter(topic=world.topic, document_id__in=ids, majority__isnull=False).count() == len(ids)
    plan.refresh_from_db()
    assert plan.status == CertificationPlan.Status.DECIDED
    verdict = CertificationVerdict.objects.get(plan=plan)
    report = topic_report_latest(topic=world.topic)
    assert report["certification"]["latest"]["verdict"]["passed"] == verdict.passed


def test_f1_verdict_uses_the_exact_bound_and_records_appendix_a_for_comparison(world, manager):
    from estimation.stats.certification import f1_exact_lower_bound, f1_interval

    uniform_pilot(world)
    plan = certification_plan_create(topic=world.topic, classifier=c1(world), metric=Metric.F1, target=0.6,
                                     user=manager)
    assert plan.pilot["feasible"] is True, plan.pilot["reason"]
    plan = certification_plan_lock(plan_id=plan.pk, user=manager, seed=77)
    judge(world, certification_ids(plan))
    verdict = certification_decide(plan_id=plan.pk)
    evaluation = verdict.inputs["evaluation"]
    counts = evaluation["counts"]
    assert sum(counts.values()) == len(certification_ids(plan))
    exact = f1_exact_lower_bound(tp=counts["tp"], fp=counts["fp"], fn=counts["fn"], confidence=1 - plan.alpha)
    assert verdict.lower_bound == pytest.approx(exact, abs=1e-12) and "Clopper-Pearson" in evaluation["method"]
    assert verdict.passed == (exact >= plan.target)
    normal = f1_interval(**counts, confidence=1 - plan.alpha, one_sided=True).low
    assert evaluation["appendix_a_lower_bound"] == pytest.approx(normal, abs=1e-12)
    assert exact < normal  # the exact bound is the more cautious one here
