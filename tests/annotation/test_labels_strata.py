"""Dawid–Skene posteriors with a class prior per stratum, in the product (issue 11 item 4).

labels_strata gives each judged document the stratum of the sample that drew it;
labels_posteriors_recompute fits one class prior per stratum. Expected strata are
read off the hand-written design in tests/factories.py (build_topic); expected
posterior differences follow from the one-coin E-step, not from the code's output.
"""
import math

import numpy as np
import pytest

from annotation.models import Judgment, Label, Region, SampleDraw, Topic
from annotation.services.crowd.assignments import assignment_claim_for_hit, assignment_submit
from annotation.services.crowd.labels import labels_posteriors_recompute, labels_strata
from annotation.services.sampling.draws import samples_launch
from tests.factories import build_topic, make_draw, make_pair_world, make_worker

pytestmark = pytest.mark.django_db


def test_each_document_takes_the_stratum_of_its_sample_by_a_fixed_rule():
    built = build_topic()
    docs = built.docs
    strata = labels_strata(topic=built.topic)
    expected = {}
    expected.update({docs[p]: "A12" for p in range(20, 28)})  # 20, 21 also in a paper-design A12 draw: still "A12"
    expected.update({docs[p]: "B1" for p in range(0, 10)})
    expected[docs[8]] = "G"  # drawn in B1 but a gold document: its own stratum
    expected.update({docs[p]: "B2" for p in range(30, 40)})  # 33 is also in C3's sample: the pair region wins
    expected.update({docs[p]: f"R:{built.c3.pk}" for p in range(10, 16)})
    expected.update({docs[p]: "U" for p in [50, 51, 52, 53, 54, 55, 28]})
    expected[docs[29]] = "G"
    expected.update({docs[p]: "certification/U" for p in range(56, 60)})  # a plan's draw, per region
    assert strata == expected
    # Restricted to some documents; the answer does not depend on the draws' order.
    assert labels_strata(topic=built.topic, document_ids=[docs[33], docs[8]]) == {docs[33]: "B2", docs[8]: "G"}


def test_certification_and_complement_samples_are_strata_of_their_own():
    built = build_topic(with_labels=False)
    docs = built.docs
    plan_a12 = make_draw(built.topic, SampleDraw.Purpose.CERTIFICATION, Region.A12, [20, 21], docs)
    plan_b2 = make_draw(built.topic, SampleDraw.Purpose.CERTIFICATION, Region.B2, [30], docs)
    SampleDraw.objects.filter(pk__in=[plan_a12.pk, plan_b2.pk]).update(stratum_key="certification-plan:7")
    make_draw(built.topic, SampleDraw.Purpose.PAIR, Region.NEITHER, [50, 51], docs)
    make_draw(built.topic, SampleDraw.Purpose.UNIFORM, Region.UNIFORM, [51, 52], docs)
    assert labels_strata(topic=built.topic) == {
        docs[20]: "certification-plan:7/A12", docs[21]: "certification-plan:7/A12", docs[30]: "certification-plan:7/B2",
        docs[50]: "N", docs[51]: "N", docs[52]: "U",
    }


def _logit(p: float) -> float:
    return math.log(p / (1.0 - p))


def test_same_votes_in_a12_and_b2_get_posteriors_as_far_apart_as_the_stratum_priors():
    # A12 mostly relevant, B2 about one third: noise 0.1 lets C1 and C2 retrieve irrelevant documents.
    world = make_pair_world(n=1500, prevalence=0.2, noise=0.1, seed=5)
    world.topic.aggregator = Topic.Aggregator.DAWID_SKENE
    world.topic.save()
    launch = samples_launch(topic=world.topic, per_region=25, seed=3)
    rng = np.random.default_rng(9)
    crowd = [make_worker() for _ in range(3)]  # the same three 80%-accurate workers judge every document
    for hit in launch.hits:
        docs = list(hit.items.values_list("document_id", flat=True))
        for worker in crowd:
            answers = {d: (d in world.relevant) == (rng.random() < 0.8) for d in docs}
            a = assignment_claim_for_hit(worker=worker, hit=hit)
            assignment_submit(assignment_id=a.pk, worker=worker, answers=answers)
    assert labels_posteriors_recompute(topic=world.topic) > 0

    strata = labels_strata(topic=world.topic)
    labels = {label.document_id: label for label in Label.objects.filter(topic=world.topic)}
    # Judgments per document, by worker, to find two documents with the same votes from the same workers.
    votes: dict[int, tuple] = {}
    for doc, worker, relevant in Judgment.objects.filter(topic=world.topic).values_list("document_id", "worker_id", "relevant"):
        votes.setdefault(doc, {})[worker] = relevant
    pattern = {doc: tuple(sorted(v.items())) for doc, v in votes.items()}

    def stratum_prior(key: str) -> float:
        # EM fixed point with smoothing 1: ρ = (Σ posteriors in the stratum + 1)/(documents + 2).
        posteriors = [labels[d].posterior for d, s in strata.items() if s == key]
        return (sum(posteriors) + 1.0) / (len(posteriors) + 2.0)

    rho_a12, rho_b2 = stratum_prior("A12"), stratum_prior("B2")
    # The strata really differ (true precisions ≈ 0.9 and ≈ 0.35), and so do their priors.
    assert rho_a12 - rho_b2 > 0.3
    pairs = [(a, b) for a in strata if strata[a] == "A12" for b in strata if strata[b] == "B2" and pattern[a] == pattern[b]]
    assert pairs, "no A12 and B2 documents with the same votes"
    for a, b in pairs:
        assert labels[a].posterior > labels[b].posterior
        difference = _logit(labels[a].posterior) - _logit(labels[b].posterior)
        assert difference == pytest.approx(_logit(rho_a12) - _logit(rho_b2), abs=1e-4)
