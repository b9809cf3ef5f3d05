"""A topic set's gold file (columns ``id`` and ``class``): names, positions and "none" are read, every bad line is
reported with its line number, and the confirmed lines become gold with their class.

The corpus comes from tests.factories.corpus_build (external ids d0..d59); the topic set's classes are
Oil (1) and Wheat (2), so the expected positions are read off the class list, never from the code under test.
"""
from __future__ import annotations

from decimal import Decimal

import pytest

from annotation.models import Document, Label, Topic
from annotation.services.crowd.gold import GoldCsvError, GoldDocumentRefused, gold_csv_apply, gold_csv_parse
from annotation.services.crowd.labels import GoldDocumentError, gold_document_add, topic_gold_answers
from annotation.services.topics.topic import topic_create
from annotation.services.topics.topic_sets import topic_set_create
from tests.factories import ClassifierFactory, corpus_build

pytestmark = pytest.mark.django_db


@pytest.fixture
def topic_set() -> Topic:
    corpus = corpus_build(name="news", size=12)[0]
    return topic_set_create(corpus=corpus, name="Commodities", classes=[("Oil", "crude"), ("Wheat", "grain")],
                            reward_per_hit=Decimal("0.10"), hit_size=5)


def _doc(topic: Topic, external_id: str) -> Document:
    return Document.objects.get(corpus=topic.corpus, external_id=external_id)


def test_names_positions_and_none_are_read(topic_set):
    data = (b"id,class\n"
            b"d0,Oil\n"
            b"d1,  wheat \n"
            b"d2,2\n"
            b"d3,none\n"
            b"d4,None of these\n"
            b"d5,0\n"
            b"d6,OIL\n")
    parsed = gold_csv_parse(topic=topic_set, data=data)
    assert parsed.problems == ()
    assert [(line.line, line.external_id, line.gold_class) for line in parsed.lines] == [
        (2, "d0", 1), (3, "d1", 2), (4, "d2", 2), (5, "d3", 0), (6, "d4", 0), (7, "d5", 0), (8, "d6", 1)]
    assert all(line.relevant is None and line.previous is None for line in parsed.lines)
    assert [line.document_id for line in parsed.lines] == [_doc(topic_set, f"d{i}").pk for i in range(7)]
    assert not Label.objects.filter(topic=topic_set).exists()  # parsing writes nothing


def test_columns_may_come_in_any_order_with_others(topic_set):
    parsed = gold_csv_parse(topic=topic_set, data=b"note,CLASS,Id\nx,wheat,d3\n")
    assert parsed.problems == ()
    assert [(line.external_id, line.gold_class) for line in parsed.lines] == [("d3", 2)]


def test_every_bad_line_is_reported_with_its_number_and_reason(topic_set):
    data = (b"id,class\n"
            b"d0,Oil\n"
            b"d1,Coffee\n"          # unknown name
            b"d2,3\n"               # no class 3 (M = 2)
            b"d0,Wheat\n"           # d0 again
            b",Oil\n"               # empty id
            b"d4\n"                 # a column missing
            b"elsewhere,Oil\n"      # not in the corpus
            b"d5,\n")               # empty class
    parsed = gold_csv_parse(topic=topic_set, data=data)
    assert [(line.line, line.external_id, line.gold_class) for line in parsed.lines] == [(2, "d0", 1)]
    reasons = {p.line: p.reason for p in parsed.problems}
    assert sorted(reasons) == [3, 4, 5, 6, 7, 8, 9]
    assert "'Coffee'" in reasons[3] and "'Oil', 'Wheat'" in reasons[3] and "none of these" in reasons[3]
    assert "'3'" in reasons[4] and "0 to 2" in reasons[4]
    assert "already given on line 2" in reasons[5]
    assert "the id is empty" in reasons[6]
    assert "has 1 column" in reasons[7]
    assert "no document with the id 'elsewhere'" in reasons[8]
    assert "not a class of this topic set" in reasons[9]


def test_a_missing_class_column_or_a_yes_no_file_is_refused(topic_set):
    with pytest.raises(GoldCsvError, match="'id' and 'class'"):
        gold_csv_parse(topic=topic_set, data=b"id,relevant\nd0,yes\n")
    with pytest.raises(GoldCsvError, match="'id' and 'class'"):
        gold_csv_parse(topic=topic_set, data=b"class\nOil\n")


def test_a_current_gold_class_is_the_previous_answer(topic_set):
    gold_document_add(topic=topic_set, document=_doc(topic_set, "d0"), gold_class=1)
    parsed = gold_csv_parse(topic=topic_set, data=b"id,class\nd0,wheat\nd1,oil\n")
    assert [(line.external_id, line.previous, line.gold_class) for line in parsed.lines] == [
        ("d0", 1, 2), ("d1", None, 1)]


def test_apply_adds_the_classes_all_or_none(topic_set):
    d0, d1, d2 = (_doc(topic_set, f"d{i}") for i in range(3))
    parsed = gold_csv_parse(topic=topic_set, data=b"id,class\nd0,Oil\nd1,none\n")
    assert gold_csv_apply(topic=topic_set, answers=[(line.document_id, line.answer) for line in parsed.lines]) == 2
    assert topic_gold_answers(topic=topic_set) == {d0.pk: 1, d1.pk: 0}
    assert set(Label.objects.filter(topic=topic_set).values_list("gold", flat=True)) == {None}
    # A class outside 0..M, or a document gone, leaves everything as it was.
    with pytest.raises(GoldDocumentError, match="0, none of these"):
        gold_csv_apply(topic=topic_set, answers=[(d2.pk, 2), (d0.pk, 5)])
    with pytest.raises(GoldDocumentRefused, match="no longer exists"):
        gold_csv_apply(topic=topic_set, answers=[(d2.pk, 2), (10**9, 1)])
    assert topic_gold_answers(topic=topic_set) == {d0.pk: 1, d1.pk: 0}


def test_a_binary_topic_keeps_its_yes_no_file(topic_set):
    corpus = topic_set.corpus
    ids = list(corpus.documents.order_by("pk").values_list("pk", flat=True))
    topic = topic_create(corpus=corpus, name="oil", c1=ClassifierFactory.create(corpus=corpus, name="a", ids=ids[:4]),
                         c2=ClassifierFactory.create(corpus=corpus, name="b", ids=ids[2:6]))
    with pytest.raises(GoldCsvError, match="'id' and 'relevant'"):
        gold_csv_parse(topic=topic, data=b"id,class\nd0,Oil\n")
    parsed = gold_csv_parse(topic=topic, data=b"id,relevant\nd0,yes\n")
    assert [(line.relevant, line.gold_class, line.answer) for line in parsed.lines] == [(True, None, True)]
