import pytest

from annotation.models import HitItem, Judgment, Worker
from annotation.selectors import topic_fleiss_kappa, topic_split_votes, worker_quality_for_topic
from annotation.services.crowd.assignments import (
    ClaimRefused,
    assignment_claim,
    assignment_claim_for_hit,
    assignment_submit,
)
from annotation.services.crowd.labels import gold_document_add
from annotation.services.crowd.workers import (
    GOLD_MIN_ANSWERS,
    worker_for_external_id,
    worker_for_user,
    worker_gold_check,
)
from annotation.services.sampling.draws import samples_launch
from tests.factories import UserFactory, make_pair_world, make_worker

pytestmark = pytest.mark.django_db


def _gold(world, doc_ids):
    for doc_id in doc_ids:
        gold_document_add(topic=world.topic, document=world.topic.corpus.documents.get(pk=doc_id),
                          relevant=doc_id in world.relevant)


def test_worker_identities_are_reused():
    user = UserFactory.create()
    assert worker_for_user(user=user) == worker_for_user(user=user)
    assert worker_for_external_id(platform="mturk", external_id="A1B2") == worker_for_external_id(platform="mturk", external_id="A1B2")


def test_block_only_after_five_gold_answers_below_the_threshold():
    world = make_pair_world(n=600, prevalence=0.2, seed=3, min_gold_accuracy=0.7)
    gold = [d for d in world.doc_ids if d not in world.a1 | world.a2][-8:]  # never also a sample document
    _gold(world, gold)
    samples_launch(topic=world.topic, per_region=20, seed=1)
    w = make_worker()
    answered = 0
    while answered < GOLD_MIN_ANSWERS:
        a = assignment_claim(worker=w, topic=world.topic)
        docs = list(HitItem.objects.filter(hit=a.hit).values_list("document_id", "is_gold"))
        # Always wrong on gold, right elsewhere.
        answers = {d: (d not in world.relevant) if g else (d in world.relevant) for d, g in docs}
        assignment_submit(assignment_id=a.pk, worker=w, answers=answers)
        answered += sum(g for _, g in docs)
        w.refresh_from_db()
        assert w.blocked == (answered >= GOLD_MIN_ANSWERS)
    assert "gold" in w.blocked_reason
    row = next(q for q in worker_quality_for_topic(topic=world.topic) if q.worker_id == w.pk)
    assert row.blocked and row.gold_answered == answered and row.gold_correct == 0 and row.gold_accuracy == 0.0
    with pytest.raises(ClaimRefused):
        assignment_claim(worker=w, topic=world.topic)


def test_a_worker_never_sees_a_gold_document_twice():
    world = make_pair_world(n=600, prevalence=0.2, seed=4)
    _gold(world, [d for d in world.doc_ids if d not in world.a1 | world.a2][-2:])  # two gold documents, many HITs
    samples_launch(topic=world.topic, per_region=20, seed=1)
    w = make_worker()
    taken = 0
    while (a := assignment_claim(worker=w, topic=world.topic)) is not None:
        docs = list(HitItem.objects.filter(hit=a.hit).values_list("document_id", flat=True))
        assignment_submit(assignment_id=a.pk, worker=w, answers={d: d in world.relevant for d in docs})
        taken += 1
    assert taken == 2  # one HIT per gold document, then nothing the worker may take
    judged = list(Judgment.objects.filter(worker=w).values_list("document_id", flat=True))
    assert len(judged) == len(set(judged))


def test_quality_agreement_kappa_and_split_votes():
    world = make_pair_world(n=600, prevalence=0.3, seed=5)
    launch = samples_launch(topic=world.topic, per_region=5, seed=1)
    good = [make_worker(f"good{i}") for i in range(2)]
    contrarian = make_worker("contrarian")
    for hit in launch.hits:
        docs = list(hit.items.values_list("document_id", flat=True))
        for w in good:
            a = assignment_claim_for_hit(worker=w, hit=hit)
            assignment_submit(assignment_id=a.pk, worker=w, answers={d: d in world.relevant for d in docs})
        a = assignment_claim_for_hit(worker=contrarian, hit=hit)
        assignment_submit(assignment_id=a.pk, worker=contrarian, answers={d: d not in world.relevant for d in docs})
    quality = worker_quality_for_topic(topic=world.topic)
    assert quality[0].name == "contrarian" and quality[0].agreement == 0.0
    # The others of a good worker are one good worker and the contrarian: a tie, half an agreement.
    assert all(q.agreement == 0.5 for q in quality[1:])
    assert {q.judgments for q in quality} == {15}
    split = topic_split_votes(topic=world.topic)
    assert len(split) == 15  # every document is 2–1
    assert all(s.votes_total == 3 and s.votes_relevant in (1, 2) for s in split)
    kappa = topic_fleiss_kappa(topic=world.topic)
    assert kappa is not None and kappa < 0  # systematic disagreement: worse than chance


def test_gold_check_without_gold_does_nothing():
    world = make_pair_world(n=300, seed=6)
    w = make_worker()
    assert worker_gold_check(worker=w, topic=world.topic) is False
    assert not Worker.objects.get(pk=w.pk).blocked
