"""The optional "unsure" answer (issue 12): stored, excluded from the majority, counted in agreement figures."""
import pytest
from django.db import IntegrityError, transaction
from django.urls import reverse

from annotation.models import Assignment, HitItem, Judgment, Label, Region, SampleDraw
from annotation.roles import roles_ensure
from annotation.selectors import topic_fleiss_kappa, topic_split_votes, worker_quality_for_topic
from annotation.services.crowd.assignments import (
    InvalidAnswers,
    assignment_claim,
    assignment_claim_for_hit,
    assignment_submit,
)
from annotation.services.crowd.labels import gold_document_add, labels_posteriors_recompute, labels_votes_add
from annotation.services.crowd.workers import worker_gold_score
from annotation.services.sampling.draws import samples_launch
from estimation.services.inputs import topic_inputs_gather
from estimation.stats.aggregation import label_quality, unsure_disclosure
from tests.factories import UserFactory, build_topic, make_draw, make_pair_world, make_worker

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    world = make_pair_world(n=600, prevalence=0.2, seed=9, allow_unsure=True)
    samples_launch(topic=world.topic, per_region=4, seed=1)  # 12 documents → 3 HITs
    return world


def _label(topic, doc_id):
    return Label.objects.get(topic=topic, document_id=doc_id)


def _vote(topic, doc_id, *votes):
    completed = []
    for vote in votes:
        completed += labels_votes_add(topic=topic, votes={doc_id: vote})
    return completed


# --------------------------------------------------------------------------- counting


@pytest.mark.parametrize(
    ("votes", "majority", "relevant", "unsure"),
    [
        ((True, True, None), True, 2, 1),  # the majority over the sure votes
        ((True, None, None), True, 1, 2),  # one sure vote decides
        ((False, None, False), False, 0, 1),
        ((True, False, None), None, 1, 1),  # a tie among the sure votes: undecided
        ((None, None, None), None, 0, 3),  # no sure vote: undecided
        ((True, False, False), False, 1, 0),  # unchanged without unsure votes
    ],
)
def test_majority_is_taken_over_the_sure_votes(world, votes, majority, relevant, unsure):
    doc = world.doc_ids[0]
    completed = _vote(world.topic, doc, *votes)
    label = _label(world.topic, doc)
    assert (label.votes_total, label.votes_relevant, label.votes_unsure) == (3, relevant, unsure)
    assert label.majority is majority
    assert completed == [doc]  # complete at the third vote, decided or not


def test_an_incomplete_label_stays_undecided_until_its_third_vote(world):
    doc = world.doc_ids[1]
    assert _vote(world.topic, doc, True, True) == []
    assert _label(world.topic, doc).majority is None


def test_constraint_refuses_more_relevant_and_unsure_votes_than_votes(world):
    doc = world.doc_ids[2]
    _vote(world.topic, doc, True, None)
    with pytest.raises(IntegrityError), transaction.atomic():
        Label.objects.filter(topic=world.topic, document_id=doc).update(votes_unsure=2)
    Label.objects.filter(topic=world.topic, document_id=doc).update(votes_unsure=1)  # within bounds: accepted


# --------------------------------------------------------------------------- submitting


def _answers(assignment, value):
    return dict.fromkeys(HitItem.objects.filter(hit=assignment.hit).values_list("document_id", flat=True), value)


def test_unsure_is_refused_unless_the_topic_allows_it(world):
    world.topic.allow_unsure = False
    world.topic.save(update_fields=["allow_unsure"])
    worker = make_worker()
    assignment = assignment_claim(worker=worker, topic=world.topic)
    with pytest.raises(InvalidAnswers, match="unsure"):
        assignment_submit(assignment_id=assignment.pk, worker=worker, answers=_answers(assignment, None))
    assert not Judgment.objects.filter(assignment=assignment).exists()


def test_unsure_answers_fill_the_place_and_are_stored_as_null(world):
    workers = [make_worker() for _ in range(3)]
    first = assignment_claim(worker=workers[0], topic=world.topic)
    hit = first.hit
    values = [None, True, True]
    for worker, value in zip(workers, values, strict=True):
        assignment = first if worker is workers[0] else assignment_claim_for_hit(worker=worker, hit=hit)
        result = assignment_submit(assignment_id=assignment.pk, worker=worker, answers=_answers(assignment, value))
    assert result.hit_complete  # three distinct workers, the unsure one among them
    assert set(Judgment.objects.filter(assignment=first).values_list("relevant", flat=True)) == {None}
    docs = HitItem.objects.filter(hit=hit, is_gold=False).values_list("document_id", flat=True)
    for label in Label.objects.filter(topic=world.topic, document_id__in=list(docs)):
        assert (label.votes_total, label.votes_relevant, label.votes_unsure, label.majority) == (3, 2, 1, True)


# --------------------------------------------------------------------------- readers


def test_dawid_skene_treats_unsure_as_a_missing_observation(world):
    doc_a, doc_b = world.doc_ids[:2]
    workers = [make_worker() for _ in range(3)]
    hit_assignments = []
    for worker in workers:
        assignment = assignment_claim(worker=worker, topic=world.topic)
        hit_assignments.append(assignment)
    # Judgments written directly: D–S reads Judgment rows, labels decide who gets a posterior.
    for worker, votes in zip(workers, [(True, None), (True, None), (None, None)], strict=True):
        assignment = next(a for a in hit_assignments if a.worker_id == worker.pk)
        for doc, vote in zip((doc_a, doc_b), votes, strict=True):
            Judgment.objects.create(assignment=assignment, topic=world.topic, document_id=doc, worker=worker,
                                    relevant=vote)
    _vote(world.topic, doc_a, True, True, None)
    _vote(world.topic, doc_b, None, None, None)
    assert labels_posteriors_recompute(topic=world.topic) == 1  # only doc_a is decided
    label_a, label_b = _label(world.topic, doc_a), _label(world.topic, doc_b)
    assert label_a.posterior is not None and label_a.posterior > 0.5  # two sure "relevant", the unsure one ignored
    assert label_b.posterior is None


def test_an_unsure_answer_on_a_gold_document_is_not_correct(world):
    gold_doc = world.topic.corpus.documents.order_by("-pk").first()
    gold_document_add(topic=world.topic, document=gold_doc, relevant=False)
    worker = make_worker()
    assignment = assignment_claim(worker=worker, topic=world.topic)
    Judgment.objects.create(assignment=assignment, topic=world.topic, document=gold_doc, worker=worker, relevant=None)
    assert worker_gold_score(worker=worker, topic=world.topic) == (1, 0)  # answered, not right (gold is "off")


def test_agreement_figures_count_unsure_as_a_category(world):
    workers = [make_worker() for _ in range(3)]
    assignments = [assignment_claim(worker=w, topic=world.topic) for w in workers]
    docs = world.doc_ids[:4]
    # Doc 0: unanimous unsure; doc 1: two relevant and an unsure; docs 2, 3: unanimous relevant / off.
    table = {docs[0]: (None, None, None), docs[1]: (True, True, None), docs[2]: (True,) * 3, docs[3]: (False,) * 3}
    for doc, votes in table.items():
        for worker, assignment, vote in zip(workers, assignments, votes, strict=True):
            Judgment.objects.create(assignment=assignment, topic=world.topic, document_id=doc, worker=worker,
                                    relevant=vote)
        _vote(world.topic, doc, *votes)
    # Three categories (off, on, unsure): P̄ = (1 + 1/3 + 1 + 1)/4, shares (3, 5, 4)/12.
    p_bar = (1 + 1 / 3 + 1 + 1) / 4
    p_e = (3 / 12) ** 2 + (5 / 12) ** 2 + (4 / 12) ** 2
    assert topic_fleiss_kappa(topic=world.topic) == pytest.approx((p_bar - p_e) / (1 - p_e))
    quality = {q.worker_id: q for q in worker_quality_for_topic(topic=world.topic)}
    # The third worker's unsure on doc 1 disagrees with the others' "relevant"; the rest agree.
    assert quality[workers[2].pk].agreement == pytest.approx(3 / 4)
    # The first worker's "relevant" on doc 1 meets a tie among the others (relevant, unsure): half an agreement.
    assert quality[workers[0].pk].agreement == pytest.approx(3.5 / 4)
    split = {row.document_id: row for row in topic_split_votes(topic=world.topic)}
    assert set(split) == {docs[1]}  # the unanimous unsure document is undecided, not split
    assert split[docs[1]].votes_unsure == 1


# --------------------------------------------------------------------------- the estimators' input


def test_estimators_input_leaves_undecided_documents_out_and_counts_them():
    built = build_topic()
    topic, docs = built.topic, built.docs
    # Two more B1 documents (positions 40, 41 are in B2 by design: 30..44): undecided and unsure-decided.
    make_draw(topic, SampleDraw.Purpose.PAIR, Region.B2, [40, 41, 42], docs)
    Label.objects.create(topic=topic, document_id=docs[40], votes_total=3, votes_relevant=1, votes_unsure=1,
                         majority=None)  # a tie among the sure votes
    Label.objects.create(topic=topic, document_id=docs[41], votes_total=3, votes_relevant=0, votes_unsure=3,
                         majority=None)  # all unsure
    Label.objects.create(topic=topic, document_id=docs[42], votes_total=3, votes_relevant=1, votes_unsure=2,
                         majority=True)  # one sure vote decides
    inputs = topic_inputs_gather(topic=topic)
    b2 = inputs.sample("B2")
    assert b2 is not None
    assert docs[40] not in b2.document_ids and docs[41] not in b2.document_ids  # never read as "not relevant"
    assert b2.undecided == 2
    assert b2.sampled == 13 and b2.judged == 8  # 7 judged before, plus docs[42]
    position = b2.document_ids.index(docs[42])
    assert b2.labels[position] == 1.0
    assert b2.votes[position] == (1, 1)  # the sure votes only
    assert inputs.undecided == 2
    assert inputs.unsure_votes == 1 + 3 + 2
    assert inputs.unsure_documents == 1
    stored = inputs.as_dict()
    assert stored["undecided"] == 2 and stored["samples"]["B2"]["undecided"] == 2


def test_label_quality_discloses_undecided_documents_and_unsure_votes():
    quality = label_quality(votes=[(3, 3), (0, 3), (2, 2)], undecided=2, unsure_votes=4, unsure_documents=1)
    assert quality.undecided == 2 and quality.unsure_votes == 4
    assert quality.disclosure is not None
    assert "2 documents were left undecided" in quality.disclosure
    assert "4 times" in quality.disclosure and "1 of the 3 labelled documents" in quality.disclosure
    assert label_quality(votes=[(3, 3)]).disclosure is None
    one = unsure_disclosure(judged=5, undecided=1, unsure_votes=1, unsure_documents=0)
    assert one is not None and "1 document was left undecided" in one and "is in no estimate" in one
    with pytest.raises(ValueError):
        unsure_disclosure(judged=1, undecided=-1, unsure_votes=0, unsure_documents=0)


# --------------------------------------------------------------------------- the annotator page


def _annotator_on_a_hit(client, world):
    user = UserFactory.create(username="ann-unsure")
    user.groups.add(roles_ensure()["annotator"])
    client.force_login(user)
    client.post("/annotate/next/")
    return Assignment.objects.get(worker__user=user)


def test_the_page_offers_unsure_only_when_the_topic_allows_it(client, world):
    assignment = _annotator_on_a_hit(client, world)
    url = reverse("annotator:assignment", args=[assignment.pk])
    page = client.get(url).content.decode()
    assert 'value="u"' in page and "<kbd>u</kbd>" in page and "Unsure" in page
    world.topic.allow_unsure = False
    world.topic.save(update_fields=["allow_unsure"])
    page = client.get(url).content.decode()
    assert 'value="u"' not in page and "<kbd>u</kbd>" not in page


def test_submitting_unsure_through_the_page_stores_null(client, world):
    assignment = _annotator_on_a_hit(client, world)
    docs = list(HitItem.objects.filter(hit=assignment.hit).values_list("document_id", flat=True))
    data = {f"doc-{d}": "1" for d in docs} | {f"doc-{docs[0]}": "u", "then": "home"}
    response = client.post(reverse("annotator:assignment", args=[assignment.pk]), data)
    assert response.status_code == 302
    assert Judgment.objects.get(assignment=assignment, document_id=docs[0]).relevant is None
    shown = client.get(reverse("annotator:assignment", args=[assignment.pk])).content.decode()
    assert 'value="u" checked' in shown  # the recorded unsure answer is shown back


def test_the_topic_settings_form_turns_unsure_on_and_off(client, world):
    from tests.factories import user_with_role

    client.force_login(user_with_role("unsure-analyst", "analyst"))
    url = reverse("analyst:topic_edit", args=[world.topic.pk])
    assert 'name="allow_unsure"' in client.get(url).content.decode()
    topic = world.topic
    data = {"instructions": topic.instructions, "target_recall": "0.8", "confidence": "0.95", "crowd": "local",
            "aggregator": "majority", "hit_size": str(topic.hit_size), "reward_per_hit": "0.10", "budget": ""}
    assert client.post(url, data).status_code == 302  # an unchecked box: off
    topic.refresh_from_db()
    assert topic.allow_unsure is False
    assert client.post(url, {**data, "allow_unsure": "on"}).status_code == 302
    topic.refresh_from_db()
    assert topic.allow_unsure is True
