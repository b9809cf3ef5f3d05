"""Routers of a topic set: CSV uploads (every bad line named), keyword rules (first match wins), reads, clean-up."""
import hashlib

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.models import Document, Label, Router, RouterPrediction, Topic
from annotation.services.classifiers.routers import (
    RouterError,
    router_archive,
    router_create_from_csv,
    router_create_from_keywords,
    router_delete,
    router_predictions,
    routers_for_topic,
)
from annotation.services.topics.topic import topic_delete
from tests.factories import HOSTILE, CorpusFactory, make_documents, make_pair_world, make_topic_set

pytestmark = pytest.mark.django_db


@pytest.fixture
def topic():
    return make_topic_set(documents=10)  # documents d0..d9, classes Sport(1), Politics(2), Science(3)


def _ids(topic):
    return dict(Document.objects.filter(corpus=topic.corpus).values_list("external_id", "pk"))


def test_csv_router_by_name_position_and_none(topic):
    ids = _ids(topic)
    data = b"id,class\nd0,Sport\nd1,2\nd2,science\nd3,0\nd4,none\nd5,\n\nd6,  POLITICS \n"
    router = router_create_from_csv(topic=topic, name="desk router", data=data, source_name="pred.csv")
    assert router.kind == Router.Kind.UPLOAD
    assert router.definition["source"] == "pred.csv"
    assert router.definition["sha256"] == hashlib.sha256(data).hexdigest()
    stored = dict(RouterPrediction.objects.filter(router=router).values_list("document_id", "predicted"))
    assert stored == {ids["d0"]: 1, ids["d1"]: 2, ids["d2"]: 3, ids["d6"]: 2}
    # 10 documents: 1 Sport, 2 Politics, 1 Science, the other 6 (listed as none or not listed) none of these.
    assert router.predicted_counts == [6, 1, 2, 1]
    every = router_predictions(router=router, document_ids=[ids[f"d{i}"] for i in range(10)])
    assert every[ids["d0"]] == 1 and every[ids["d3"]] == 0 and every[ids["d9"]] == 0 and len(every) == 10


def test_csv_header_with_bom_and_crlf(topic):
    data = "\ufeffID,Class\r\nd0,Sport\r\n".encode()
    router = router_create_from_csv(topic=topic, name="r", data=data, source_name="x.csv")
    assert router.predicted_counts == [9, 1, 0, 0]


def test_csv_every_bad_line_is_named_and_nothing_is_stored(topic):
    data = (
        b"id,class\n"
        b"d0,Sport\n"            # 2 good
        b"d1,Cooking\n"          # 3 unknown class
        b"d2\n"                  # 4 one field
        b"d0,Politics\n"         # 5 duplicate of line 2
        b"nope,Sport\n"          # 6 unknown id
        b",Sport\n"              # 7 empty id
        b"d3,7\n"                # 8 position out of range
        b"d4,\"Sp\"ort\"\n"      # 9 malformed CSV
    ) + b"d5,\xff\xfe\n"  # 10 not UTF-8
    with pytest.raises(RouterError) as caught:
        router_create_from_csv(topic=topic, name="bad", data=data, source_name="bad.csv")
    lines = dict(caught.value.lines)
    assert sorted(lines) == [3, 4, 5, 6, 7, 8, 9, 10]
    assert "unknown class 'Cooking'" in lines[3]
    assert "two fields" in lines[4]
    assert "listed twice (first on line 2)" in lines[5]
    assert "not a document" in lines[6]
    assert "empty" in lines[7]
    assert "unknown class '7'" in lines[8]
    assert "CSV" in lines[9]
    assert "UTF-8" in lines[10]
    assert "line 3:" in caught.value.message and "8 bad line(s)" in caught.value.message
    assert not Router.objects.exists() and not RouterPrediction.objects.exists()


@pytest.mark.parametrize("data, fragment", [
    (b"", "empty"),
    (b"\n\n", "empty"),
    (b"document,label\nd0,Sport\n", "header"),
    (b"id,class\n", "no document"),
])
def test_csv_empty_or_headerless(topic, data, fragment):
    with pytest.raises(RouterError, match=fragment):
        router_create_from_csv(topic=topic, name="r", data=data, source_name="f.csv")


def test_csv_hostile_text_and_huge_cells(topic):
    hostile = f"id,class\n{HOSTILE.replace(',', ';')},Sport\nd1,{'x' * 50_000}\nd2,a\x00b\n".encode()
    with pytest.raises(RouterError) as caught:
        router_create_from_csv(topic=topic, name="r", data=hostile, source_name=HOSTILE)
    lines = dict(caught.value.lines)
    assert sorted(lines) == [2, 3, 4]
    assert "not a document" in lines[2] and "longer" in lines[3] and "NUL" in lines[4]
    # Quoted long values are cut short in the message.
    assert "x" * 100 not in caught.value.message


def test_csv_refuses_a_taken_name_and_a_binary_topic(topic):
    router_create_from_csv(topic=topic, name="r", data=b"id,class\nd0,1\n", source_name="a.csv")
    with pytest.raises(RouterError, match="already has a router"):
        router_create_from_csv(topic=topic, name=" r ", data=b"id,class\nd0,1\n", source_name="a.csv")
    world = make_pair_world(n=50)
    with pytest.raises(RouterError, match="single topic"):
        router_create_from_csv(topic=world.topic, name="r", data=b"id,class\nd0,1\n", source_name="a.csv")


def test_fingerprint_names_the_predictions(topic):
    first = router_create_from_csv(topic=topic, name="a", data=b"id,class\nd0,1\nd1,2\n", source_name="a.csv")
    same = router_create_from_csv(topic=topic, name="b", data=b"id,class\r\nd1,Politics\r\nd0,Sport\r\n",
                                  source_name="b.csv")
    other = router_create_from_csv(topic=topic, name="c", data=b"id,class\nd0,1\nd1,3\n", source_name="c.csv")
    assert len(first.fingerprint) == 64
    assert first.fingerprint == same.fingerprint  # same predictions, whatever the file looked like
    assert first.fingerprint != other.fingerprint


# --------------------------------------------------------------------------- keywords


@pytest.fixture
def four_field_topic():
    """A corpus whose documents carry title, text and two metadata fields (desk: string, tags: list)."""
    corpus = CorpusFactory.create()
    rows = [
        # (title, text, desk, tags)
        ("Cup final tonight", "The football match", "sports", ["match"]),             # d0 Sport (title)
        ("Vote count", "parliament debates the football budget", "", []),            # d1 Politics wins over Sport? no: rule order
        ("Quiet day", "nothing happened", "science", []),                            # d2 Science via desk metadata
        ("Telescope", "a new comet", "", ["astronomy", "election"]),                 # d3 Politics via tags (rule 1)
        ("Other", "unrelated text", "", []),                                         # d4 none
        ("Footballer", "footballers are not football?", "", ["x"]),                  # d5 Sport: whole word in text
        ("FOOTBALL", "", "", []),                                                    # d6 Sport: case
    ]
    docs = [
        Document(corpus=corpus, external_id=f"d{i}", title=title, text=text,
                 metadata={"desk": desk, "tags": tags}, content_hash=hashlib.sha256(f"{i}".encode()).hexdigest())
        for i, (title, text, desk, tags) in enumerate(rows)
    ]
    Document.objects.bulk_create(docs)
    from annotation.services.corpora.retrieved_sets import bitmap_from_ids, bitmap_to_bytes

    pks = list(Document.objects.filter(corpus=corpus).order_by("pk").values_list("pk", flat=True))
    corpus.documents_bitmap = bitmap_to_bytes(bitmap_from_ids(pks))
    corpus.document_count = len(pks)
    corpus.save()
    return make_topic_set(corpus)


def test_keyword_rules_first_match_wins(four_field_topic):
    topic = four_field_topic
    ids = _ids(topic)
    rules = [
        {"class": 2, "terms": ["parliament", "election"], "fields": ["text", "tags"]},
        {"class": 1, "terms": ["football"], "fields": ["title", "text"]},
        {"class": "Science", "terms": ["science"], "fields": ["desk"]},
    ]
    router = router_create_from_keywords(topic=topic, name="kw", rules=rules)
    got = router_predictions(router=router, document_ids=ids.values())
    expected = {"d0": 1, "d1": 2, "d2": 3, "d3": 2, "d4": 0, "d5": 1, "d6": 1}
    assert {ext: got[pk] for ext, pk in ids.items()} == expected
    assert router.predicted_counts == [1, 3, 2, 1]
    assert router.definition["rules"][2]["class"] == 3

    # The same rules in another order send d1 (football and parliament) to Sport instead.
    swapped = router_create_from_keywords(topic=topic, name="kw2", rules=[rules[1], rules[0], rules[2]])
    got = router_predictions(router=swapped, document_ids=[ids["d1"]])
    assert got == {ids["d1"]: 1}
    assert swapped.fingerprint != router.fingerprint


def test_keyword_router_reads_the_corpus_once(four_field_topic, monkeypatch):
    from annotation.services.classifiers import routers

    monkeypatch.setattr(routers, "SCAN_CHUNK_DOCUMENTS", 3)  # several chunks, still one query
    chunks: list[int] = []
    with CaptureQueriesContext(connection) as queries:
        routers.router_keyword_predictions(topic=four_field_topic, rules=[
            {"class": 1, "terms": ["football"], "fields": ["title", "text"]},
            {"class": 3, "terms": ["science"], "fields": ["desk"]},
        ], progress=chunks.append)
    document_table = Document._meta.db_table
    reads = [q for q in queries.captured_queries if document_table in q["sql"]]
    assert len(reads) == 1
    assert chunks == [3, 3, 1]  # seven documents in chunks of three


@pytest.mark.parametrize("rules, fragment", [
    ([], "at least one rule"),
    ([{"class": 9, "terms": ["a"]}], "not one of the topics"),
    ([{"class": 0, "terms": ["a"]}], "not one of the topics"),
    ([{"class": True, "terms": ["a"]}], "not one of the topics"),
    ([{"class": 1, "terms": []}], "at least one"),
    ([{"class": 1, "terms": "football"}], "must be a list"),
    ([{"class": 1, "terms": ["a"], "fields": ["nowhere"]}], "unknown field"),
    (["not a rule"], "must give"),
])
def test_keyword_rules_refused(four_field_topic, rules, fragment):
    with pytest.raises(RouterError, match=fragment):
        router_create_from_keywords(topic=four_field_topic, name="kw", rules=rules)
    assert not Router.objects.exists()


# --------------------------------------------------------------------------- reads and clean-up


def test_archive_hides_and_delete_refused_once_judged(topic):
    a = router_create_from_csv(topic=topic, name="a", data=b"id,class\nd0,1\n", source_name="a.csv")
    b = router_create_from_csv(topic=topic, name="b", data=b"id,class\nd1,1\n", source_name="b.csv")
    router_archive(router=a)
    assert [r.name for r in routers_for_topic(topic=topic)] == ["b"]
    assert [r.name for r in routers_for_topic(topic=topic, include_archived=True)] == ["a", "b"]
    router_delete(router=a)
    assert not Router.objects.filter(pk=a.pk).exists() and not RouterPrediction.objects.filter(router_id=a.pk).exists()
    doc = Document.objects.filter(corpus=topic.corpus).first()
    Label.objects.create(topic=topic, document=doc, votes_total=1, class_votes=[1, 0, 0, 0])
    with pytest.raises(RouterError, match="1 judged document"):
        router_delete(router=b)
    assert Router.objects.filter(pk=b.pk).exists()


def test_routers_do_not_block_deleting_an_unjudged_topic_set(topic):
    router_create_from_csv(topic=topic, name="a", data=b"id,class\nd0,1\n", source_name="a.csv")
    topic_delete(topic=topic)
    assert not Topic.objects.filter(pk=topic.pk).exists() and not Router.objects.exists()


def test_a_large_upload_is_stored_in_batches():
    corpus = CorpusFactory.create()
    make_documents(corpus, 12_000)
    topic = make_topic_set(corpus)
    body = "\n".join(f"d{i},{1 + i % 3}" for i in range(11_000))
    router = router_create_from_csv(topic=topic, name="big", data=f"id,class\n{body}\n".encode(), source_name="b.csv")
    assert RouterPrediction.objects.filter(router=router).count() == 11_000
    assert router.predicted_counts == [1000, 3667, 3667, 3666]


def test_keyword_router_agrees_with_the_keyword_classifier_scan(four_field_topic):
    """The router's class for each document is the first rule whose keyword_scan (an independent pass per rule,
    the classifiers' scan) retrieves it; none of these when no rule does."""
    from annotation.services.classifiers.keywords import keyword_scan

    topic = four_field_topic
    rules = [
        {"class": 3, "terms": ["comet", "science"], "fields": ["text", "desk"]},
        {"class": 1, "terms": ["football", "match"], "fields": ["title", "tags"]},
        {"class": 2, "terms": ["vote", "football"], "fields": ["title", "text"]},
    ]
    router = router_create_from_keywords(topic=topic, name="cross-check", rules=rules)
    scans = [set(keyword_scan(corpus=topic.corpus, terms=rule["terms"], fields=rule["fields"])) for rule in rules]
    ids = _ids(topic).values()
    expected = {}
    for doc in ids:
        hits = [rule["class"] for rule, found in zip(rules, scans, strict=True) if doc in found]
        expected[doc] = hits[0] if hits else 0
    assert router_predictions(router=router, document_ids=ids) == expected
    assert sorted(set(expected.values())) == [0, 1, 2, 3]  # every branch of the rule order is exercised
