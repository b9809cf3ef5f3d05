"""Gold documents (issue 12 item 7): CSV parsing with bad lines, all-or-nothing adds, add from a judged
document, removal refused while a decision rests on the document."""
from __future__ import annotations

import pytest

from annotation.models import Hit, HitItem, Judgment, Label
from annotation.selectors import topic_gold_documents
from annotation.services.crowd.assignments import assignment_claim_for_hit, assignment_submit
from annotation.services.crowd.gold import (
    GOLD_CSV_MAX_BYTES,
    GOLD_CSV_MAX_ROWS,
    GoldCsvError,
    GoldDocumentRefused,
    gold_add_from_judged,
    gold_csv_apply,
    gold_csv_parse,
    gold_document_remove,
)
from annotation.services.crowd.labels import GoldDocumentError, gold_document_add
from annotation.services.crowd.workers import worker_block, worker_unblock
from annotation.services.sampling.draws import samples_launch
from tests.factories import DocumentFactory, TopicFactory, make_pair_world, make_worker

pytestmark = pytest.mark.django_db


@pytest.fixture
def topic():
    topic = TopicFactory.create()
    for i in range(6):
        DocumentFactory.create(corpus=topic.corpus, external_id=f"d{i}")
    return topic


def _doc(topic, external_id):
    return topic.corpus.documents.get(external_id=external_id)


# --------------------------------------------------------------------------- CSV parsing


def test_csv_good_lines_name_documents_and_answers(topic):
    data = "\ufeffID , Relevant\nd0,yes\nd1,No\n\n d2 ,1\nd3,false\n".encode()
    parsed = gold_csv_parse(topic=topic, data=data)
    assert parsed.problems == ()
    assert [(line.line, line.external_id, line.relevant) for line in parsed.lines] == [
        (2, "d0", True), (3, "d1", False), (5, "d2", True), (6, "d3", False)]
    assert [line.document_id for line in parsed.lines] == [_doc(topic, e).pk for e in ("d0", "d1", "d2", "d3")]
    assert not Label.objects.filter(topic=topic).exists()  # parsing writes nothing


def test_csv_reports_every_bad_line_with_its_number_and_reason(topic):
    data = (b"relevant,id,note\n"
            b"yes,d0,ok\n"            # 2 good
            b"maybe,d1,x\n"           # 3 bad answer
            b"yes,,x\n"               # 4 empty id
            b"no,nosuch,x\n"          # 5 unknown id
            b"no,d0,x\n"              # 6 repeated id
            b"yes\n"                  # 7 too few columns
            b"no,d2,x\n")    # 8 good
    parsed = gold_csv_parse(topic=topic, data=data)
    assert [line.external_id for line in parsed.lines] == ["d0", "d2"]
    reasons = {p.line: p.reason for p in parsed.problems}
    assert sorted(reasons) == [3, 4, 5, 6, 7]
    assert "'maybe'" in reasons[3] and "yes, no" in reasons[3]
    assert reasons[4] == "the id is empty"
    assert "'nosuch'" in reasons[5] and "corpus" in reasons[5]
    assert "line 2" in reasons[6]
    assert "1 column" in reasons[7]


def test_csv_ids_of_another_corpus_are_unknown(topic):
    other = TopicFactory.create()
    DocumentFactory.create(corpus=other.corpus, external_id="elsewhere")
    parsed = gold_csv_parse(topic=topic, data=b"id,relevant\nelsewhere,yes\n")
    assert parsed.lines == () and [p.line for p in parsed.problems] == [2]


def test_csv_line_numbers_count_quoted_line_breaks(topic):
    parsed = gold_csv_parse(topic=topic, data=b'id,relevant,note\nd0,yes,"two\nlines"\nd1,perhaps,x\n')
    assert [line.line for line in parsed.lines] == [2]  # where the record starts
    assert [p.line for p in parsed.problems] == [4]


@pytest.mark.parametrize("data,words", [
    (b"document,answer\nd0,yes\n", "must name the columns"),
    (b"", "must name the columns"),
    (b"id,relevant\nd0,\xff\xfe\n", "not UTF-8"),
    (b"id,relevant\nd0,y\x00es\n", "NUL"),
    (b"id,relevant\n" + b"d0,yes\n" * (GOLD_CSV_MAX_BYTES // 7 + 1), "limit"),
])
def test_csv_unusable_files_are_refused_whole(topic, data, words):
    with pytest.raises(GoldCsvError, match=words):
        gold_csv_parse(topic=topic, data=data)


def test_csv_row_limit(topic):
    data = ("id,relevant\n" + "d0,yes\n" * (GOLD_CSV_MAX_ROWS + 1)).encode()
    assert len(data) < GOLD_CSV_MAX_BYTES
    with pytest.raises(GoldCsvError, match="more than"):
        gold_csv_parse(topic=topic, data=data)


def test_csv_marks_lines_that_change_a_known_answer(topic):
    gold_document_add(topic=topic, document=_doc(topic, "d0"), relevant=True)
    parsed = gold_csv_parse(topic=topic, data=b"id,relevant\nd0,no\nd1,no\n")
    assert [(line.external_id, line.previous) for line in parsed.lines] == [("d0", True), ("d1", None)]


def test_csv_apply_adds_all_or_nothing(topic):
    ids = [_doc(topic, e).pk for e in ("d0", "d1")]
    assert gold_csv_apply(topic=topic, answers=[(ids[0], True), (ids[1], False)]) == 2
    assert dict(Label.objects.filter(topic=topic).values_list("document_id", "gold")) == {ids[0]: True, ids[1]: False}
    other = DocumentFactory.create(external_id="foreign")  # another corpus: gold_document_add refuses it
    with pytest.raises(GoldDocumentError):
        gold_csv_apply(topic=topic, answers=[(_doc(topic, "d2").pk, True), (other.pk, True)])
    assert not Label.objects.filter(topic=topic, document__external_id="d2").exists()  # rolled back
    with pytest.raises(GoldDocumentRefused, match="no longer exists"):
        gold_csv_apply(topic=topic, answers=[(_doc(topic, "d3").pk, True), (10**9, True)])
    assert not Label.objects.filter(topic=topic, document__external_id="d3").exists()


# --------------------------------------------------------------------------- from judged documents, removal


def _judged_world():
    """A launched topic whose first HIT three workers judged (two right, one wrong)."""
    world = make_pair_world(n=300, prevalence=0.3, seed=11)
    launch = samples_launch(topic=world.topic, per_region=3, seed=1)
    hit = launch.hits[0]
    docs = list(hit.items.values_list("document_id", flat=True))
    workers = [make_worker(f"w{i}") for i in range(3)]
    for i, worker in enumerate(workers):
        assignment = assignment_claim_for_hit(worker=worker, hit=hit)
        assignment_submit(assignment_id=assignment.pk, worker=worker,
                          answers={d: (d in world.relevant) != (i == 2) for d in docs})
    return world, hit, docs, workers


def test_add_from_judged_document_keeps_its_votes_and_scores_its_judges():
    world, _, docs, workers = _judged_world()
    doc = docs[0]
    truth = doc in world.relevant
    label = gold_add_from_judged(topic=world.topic, document_id=doc, relevant=truth)
    assert label.gold is truth and label.votes_total == 3 and label.majority is truth
    row = next(g for g in topic_gold_documents(topic=world.topic) if g.document_id == doc)
    assert (row.seen, row.correct, row.sample_judged, row.blockers) == (3, 2, True, ())
    with pytest.raises(GoldDocumentRefused, match="already gold"):
        gold_add_from_judged(topic=world.topic, document_id=doc, relevant=truth)


def test_add_from_judged_refuses_an_incomplete_or_unknown_document():
    world, _, _, _ = _judged_world()
    waiting = Label.objects.filter(topic=world.topic, votes_total=0).values_list("document_id", flat=True).first()
    assert waiting is not None
    with pytest.raises(GoldDocumentRefused, match="complete"):
        gold_add_from_judged(topic=world.topic, document_id=waiting, relevant=True)
    with pytest.raises(GoldDocumentRefused):
        gold_add_from_judged(topic=world.topic, document_id=10**9, relevant=True)


def test_remove_unused_gold_forgets_it_and_judged_gold_returns_to_the_sample():
    world, _, docs, _ = _judged_world()
    fresh = next(d for d in world.doc_ids if not Label.objects.filter(topic=world.topic, document_id=d).exists())
    gold_document_add(topic=world.topic, document=world.topic.corpus.documents.get(pk=fresh), relevant=True)
    gold_document_remove(topic=world.topic, document_id=fresh)
    assert not Label.objects.filter(topic=world.topic, document_id=fresh).exists()

    gold_add_from_judged(topic=world.topic, document_id=docs[0], relevant=True)
    gold_document_remove(topic=world.topic, document_id=docs[0])
    label = Label.objects.get(topic=world.topic, document_id=docs[0])
    assert label.gold is None and label.votes_total == 3 and label.majority is not None
    with pytest.raises(GoldDocumentRefused, match="not a gold document"):
        gold_document_remove(topic=world.topic, document_id=docs[0])


def test_remove_refused_while_a_hit_carries_it_as_gold_check():
    world, _, _, _ = _judged_world()
    fresh = next(d for d in world.doc_ids if not Label.objects.filter(topic=world.topic, document_id=d).exists())
    gold_document_add(topic=world.topic, document=world.topic.corpus.documents.get(pk=fresh), relevant=False)
    hit = Hit.objects.create(topic=world.topic, reward=world.topic.reward_per_hit)
    HitItem.objects.create(hit=hit, topic=world.topic, document_id=fresh, position=0, is_gold=True)
    with pytest.raises(GoldDocumentRefused, match="1 HIT carries it as the gold check"):
        gold_document_remove(topic=world.topic, document_id=fresh)
    assert Label.objects.get(topic=world.topic, document_id=fresh).gold is False
    row = next(g for g in topic_gold_documents(topic=world.topic) if g.document_id == fresh)
    assert row.blockers and "gold check" in row.blockers[0]


def test_remove_refused_while_a_blocked_worker_judged_it():
    world, _, docs, workers = _judged_world()
    gold_add_from_judged(topic=world.topic, document_id=docs[1], relevant=docs[1] in world.relevant)
    assert Judgment.objects.filter(topic=world.topic, document_id=docs[1], worker=workers[2]).exists()
    worker_block(worker=workers[2], reason="careless")
    with pytest.raises(GoldDocumentRefused, match="blocked worker"):
        gold_document_remove(topic=world.topic, document_id=docs[1])
    worker_unblock(worker=workers[2])
    gold_document_remove(topic=world.topic, document_id=docs[1])
    assert Label.objects.get(topic=world.topic, document_id=docs[1]).gold is None
