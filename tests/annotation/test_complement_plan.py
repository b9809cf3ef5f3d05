"""Sizing the dependence check (a sample of region N) in the topic's plan (issue 11)."""
import pytest

from annotation.models import ClassifierPair, Label, SampledDocument
from annotation.services.sampling.complement import (
    COMPLEMENT_DELTA1_GUESS,
    complement_plan,
    complement_prevalence_guess,
)
from annotation.services.sampling.draws import samples_draw
from estimation.stats.design_based import complement_sample_size
from tests.factories import ClassifierFactory, CorpusFactory, TopicFactory, make_documents

pytestmark = pytest.mark.django_db

PRIORS = {"A12": 0.8, "B1": 0.2, "B2": 0.2}


def _topic(*, n: int = 3000, a1: slice = slice(0, 500), a2: slice = slice(200, 900)):
    """A12 = 300, B1 = 200, B2 = 400 and N = n − 900 documents by default."""
    corpus = CorpusFactory.create()
    ids = make_documents(corpus, n)
    c1 = ClassifierFactory.create(corpus=corpus, name="title", ids=ids[a1])
    c2 = ClassifierFactory.create(corpus=corpus, name="body", ids=ids[a2])
    topic = TopicFactory.create(corpus=corpus)
    ClassifierPair.objects.create(topic=topic, c1=c1, c2=c2)
    return topic, ids


def test_prevalence_guess_of_n_before_any_judgment_assumes_positive_dependence():
    topic, _ = _topic()
    sizes = {"A12": 300, "B1": 200, "B2": 400, "N": 2100}
    guess, source = complement_prevalence_guess(topic=topic, sizes=sizes, guesses=PRIORS)
    # By hand: T12 = 240, T_B1 = 40, T_B2 = 80, T1 = 280, T2 = 320; at δ1 = 1.25 the relevant total is
    # 1.25·280·320/240 = 466.7, so N holds 466.7 − 360 = 106.7 of its 2,100 documents: 0.0508.
    assert COMPLEMENT_DELTA1_GUESS == 1.25
    assert guess == pytest.approx(106.6667 / 2100, rel=1e-4)
    assert "δ1 = 1.25" in source and "about 107 relevant" in source


def test_prevalence_guess_of_n_comes_from_its_judged_documents_once_ten_are_judged():
    topic, _ = _topic()
    (draw,) = samples_draw(topic=topic, per_region=0, complement=12, seed=3)
    ids = list(SampledDocument.objects.filter(draw=draw).values_list("document_id", flat=True))
    for i, doc in enumerate(ids[:10]):
        Label.objects.create(topic=topic, document_id=doc, votes_total=3, votes_relevant=3 if i < 2 else 0,
                             majority=i < 2)
    guess, source = complement_prevalence_guess(
        topic=topic, sizes={"A12": 300, "B1": 200, "B2": 400, "N": 2100}, guesses=PRIORS)
    assert guess == pytest.approx(2.5 / 11)  # Jeffreys posterior mean (k + ½)/(n + 1)
    assert "2 relevant of 10" in source


def test_the_check_is_sized_for_both_classifiers_from_a_conservative_prior_not_the_pairs_recall():
    topic, _ = _topic()
    judged = {"A12": 60, "B1": 60, "B2": 80}
    plan = complement_plan(topic=topic, judged=judged, margin=0.10)
    assert plan.feasible and plan.size == 2100 and plan.margin == 0.10 and plan.stage == "first"
    # The prior (notes §9): N may hold up to as many relevant documents as the pair's regions, T_P = 240 + 40
    # + 80 = 360 by the guesses, planned at 10%, 33% and 100% of it: 36, 120 and 360 of N's 2,100 documents.
    # No recall and no δ1 enters (the old guess, δ1 = 1.25 on the pair's precisions, planned at 106.7).
    prevalences = (36 / 2100, 120 / 2100, 360 / 2100)
    assert plan.prevalences_considered == pytest.approx(prevalences)
    sizes = {
        (which, p): complement_sample_size(
            size_a12=300, precision_a12=0.8, judged_a12=60, size_b1=200, precision_b1=0.2, judged_b1=60,
            size_b2=400, precision_b2=0.2, judged_b2=80, size_u=2100, prevalence_u=p, which=which, margin=0.10,
            confidence=0.95).judged_u
        for which in ("r1", "r2") for p in prevalences
    }
    assert plan.judged == max(sizes.values())
    assert any(plan.prevalence_guess == pytest.approx(p) for p in prevalences)
    assert "conservative prior" in plan.guess_source and "δ1" not in plan.guess_source
    # At the deciding prevalence each planned bound is within the margin of the recall it implies.
    for which in ("r1", "r2"):
        assert plan.planned_recalls[which] - plan.planned_lower_bounds[which] <= 0.10 + 0.005
    assert plan.expected_relevant_found == pytest.approx(plan.judged * plan.prevalence_guess, rel=1e-3)
    # A wider margin needs fewer documents of N.
    assert complement_plan(topic=topic, judged=judged, margin=0.2).judged < plan.judged


def test_top_ups_are_sized_from_the_judged_documents_of_n():
    topic, _ = _topic()
    (draw,) = samples_draw(topic=topic, per_region=0, complement=12, seed=3)
    ids = list(SampledDocument.objects.filter(draw=draw).values_list("document_id", flat=True))
    for doc in ids[:10]:
        Label.objects.create(topic=topic, document_id=doc, votes_total=3, votes_relevant=0, majority=False)
    plan = complement_plan(topic=topic, judged={"A12": 60, "B1": 60, "B2": 80}, margin=0.10)
    assert plan.stage == "top-up" and "10 documents of N judged so far" in plan.guess_source
    low, mean, high = plan.prevalences_considered
    # 0 of 10: Jeffreys Beta(0.5, 10.5), mean 0.5/11; its 90% interval runs from ~0.0002 to ~0.17.
    assert mean == pytest.approx(0.5 / 11) and low < 0.001 and 0.15 < high < 0.2
    assert plan.feasible and plan.judged is not None


def test_a_check_that_cannot_reach_the_margin_says_why():
    topic, _ = _topic()
    plan = complement_plan(topic=topic, judged={"A12": 2, "B1": 2, "B2": 2}, margin=0.02)
    assert not plan.feasible and plan.judged is None
    assert "too small" in plan.reason


def test_a_pair_covering_the_corpus_needs_no_check():
    topic, _ = _topic(n=900)
    plan = complement_plan(topic=topic, judged={"A12": 60, "B1": 60, "B2": 80})
    assert plan.size == 0 and plan.judged is None and "nothing outside the pair" in plan.reason
