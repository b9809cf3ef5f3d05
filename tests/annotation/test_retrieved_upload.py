"""Retrieved sets from external engines: Roaring bitmaps of integer external ids and Parquet id columns (issue 15)."""
from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyroaring import BitMap, BitMap64

from annotation.models import Classifier
from annotation.services.classifiers import retrieved_upload
from annotation.services.classifiers.classifier import ClassifierError, classifier_create_from_ids
from annotation.services.classifiers.retrieved_upload import (
    classifier_create_from_bitmap,
    classifier_create_from_parquet,
)
from annotation.services.corpora.retrieved_sets import classifier_bitmap
from tests.factories import CorpusFactory, DocumentFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def corpus():
    """200 documents with integer external ids 1000 … 1199, and an unrelated corpus sharing some ids."""
    corpus = CorpusFactory(name="ints")
    pks = {str(1000 + i): DocumentFactory(corpus=corpus, external_id=str(1000 + i)).pk for i in range(200)}
    other = CorpusFactory(name="other")
    DocumentFactory(corpus=other, external_id="5000")  # an id only the other corpus has
    corpus.pks = pks
    corpus.document_count = 200
    corpus.save(update_fields=["document_count"])
    return corpus


def write_bitmap(path, values, cls=BitMap):
    path.write_bytes(cls(values).serialize())
    return path


def write_parquet(path, columns: dict, row_group_size=None):
    pq.write_table(pa.table(columns), path, row_group_size=row_group_size)
    return path


def test_bitmap_of_integer_external_ids_becomes_an_ids_classifier(corpus, tmp_path):
    wanted = list(range(1000, 1200, 3))
    result = classifier_create_from_bitmap(corpus=corpus, name="spark", path=write_bitmap(tmp_path / "r.roaring", wanted))
    assert result.read == len(wanted) and result.unknown_count == 0
    classifier = result.classifier
    assert classifier.kind == Classifier.Kind.IDS and classifier.retrieved_count == len(wanted)
    assert set(classifier_bitmap(classifier=classifier)) == {corpus.pks[str(v)] for v in wanted}
    assert classifier.definition["format"] == "roaring" and classifier.definition["source"] == "r.roaring"
    # The same set uploaded as a text file of ids is the same classifier (fingerprint over the set).
    (tmp_path / "ids.txt").write_text("\n".join(map(str, wanted)))
    same = classifier_create_from_ids(corpus=corpus, name="text", path=tmp_path / "ids.txt").classifier
    assert same.fingerprint == classifier.fingerprint


def test_a_large_bitmap_is_one_pass_over_the_corpus_testing_the_bitmap_itself(corpus, tmp_path, monkeypatch):
    from annotation.services.corpora import id_resolution

    passes = []
    pairs = id_resolution.corpus_id_pairs

    def spy(*, corpus):
        passes.append(corpus.pk)
        yield from pairs(corpus=corpus)

    monkeypatch.setattr(id_resolution, "corpus_id_pairs", spy)
    monkeypatch.setattr(id_resolution, "document_ids_resolve_chunked", None)  # the pass, not lookups
    # Ids that are not canonical decimals never match a value: "042" is not 42, "７" (full width) is not 7.
    DocumentFactory(corpus=corpus, external_id="042")
    DocumentFactory(corpus=corpus, external_id="７")
    DocumentFactory(corpus=corpus, external_id="99999999999")  # beyond 32 bits
    wanted = [*range(1000, 1100), 42, 7]
    result = classifier_create_from_bitmap(corpus=corpus, name="b", path=write_bitmap(tmp_path / "r.bin", wanted),
                                           unknown_share_max=0.05)
    assert passes == [corpus.pk]  # one pass, whatever the size
    assert set(classifier_bitmap(classifier=result.classifier)) == {corpus.pks[str(v)] for v in range(1000, 1100)}
    assert result.read == 102 and result.unknown_count == 2 and result.unknown_examples == ["7", "42"]


def test_a_small_bitmap_is_looked_up_and_gives_the_same_set(corpus, tmp_path, monkeypatch):
    from annotation.services.corpora import id_resolution

    monkeypatch.setattr(id_resolution, "corpus_id_pairs", None)  # lookups, not the pass
    big = CorpusFactory(name="big")
    big.document_count = 100_000  # 3 ids of a corpus this size: index lookups
    big.save(update_fields=["document_count"])
    pks = {v: DocumentFactory(corpus=big, external_id=str(v)).pk for v in (5, 6, 7)}
    result = classifier_create_from_bitmap(corpus=big, name="s", path=write_bitmap(tmp_path / "s.bin", [5, 7]))
    assert set(classifier_bitmap(classifier=result.classifier)) == {pks[5], pks[7]} and result.unknown_count == 0


def test_a_few_unknown_ids_are_counted_and_named(corpus, tmp_path):
    wanted = [*range(1000, 1200), 5000, 9_999_999]  # 2 unknown of 202 (under 1%): accepted
    result = classifier_create_from_bitmap(corpus=corpus, name="b", path=write_bitmap(tmp_path / "r.bin", wanted))
    assert result.classifier.retrieved_count == 200
    assert result.unknown_count == 2 and result.unknown_examples == ["5000", "9999999"]


def test_too_many_unknown_ids_refuse_with_count_and_examples(corpus, tmp_path):
    wanted = [*range(1000, 1100), *range(7000, 7010)]  # 10 of 110 unknown
    with pytest.raises(ClassifierError) as error:
        classifier_create_from_bitmap(corpus=corpus, name="b", path=write_bitmap(tmp_path / "r.bin", wanted))
    message = str(error.value)
    assert "10 of the 110 ids (9.1%)" in message and "'7000'" in message and "another corpus" in message
    assert not Classifier.objects.filter(name="b").exists()
    # A caller may accept a larger share explicitly.
    result = classifier_create_from_bitmap(
        corpus=corpus, name="b", path=tmp_path / "r.bin", unknown_share_max=0.10
    )
    assert result.unknown_count == 10 and result.classifier.retrieved_count == 100


def test_bitmap_with_no_document_of_the_corpus_is_refused(corpus, tmp_path):
    with pytest.raises(ClassifierError, match="none of the 2 ids is a document of corpus 'ints'"):
        classifier_create_from_bitmap(corpus=corpus, name="b", path=write_bitmap(tmp_path / "r.bin", [5000, 1]))


@pytest.mark.parametrize(
    "content, problem",
    [
        (b"", "the file is empty"),
        (b"\x00" * 3, "not a serialized 32-bit Roaring bitmap"),
        (b"garbage, not a bitmap at all", "not a serialized 32-bit Roaring bitmap"),
        (BitMap(range(0, 100_000, 3)).serialize()[:500], "not a serialized 32-bit Roaring bitmap"),  # truncated
        (BitMap64([1, 2, 3]).serialize(), "not a serialized 32-bit Roaring bitmap"),
        (BitMap([1000, 1001]).serialize() + b"tail", "4 bytes follow the bitmap"),
        (BitMap().serialize(), "the file holds no ids"),
    ],
)
def test_corrupt_or_wrong_bitmap_files_are_refused_clearly(corpus, tmp_path, content, problem):
    path = tmp_path / "bad.roaring"
    path.write_bytes(content)
    with pytest.raises(ClassifierError, match=problem):
        classifier_create_from_bitmap(corpus=corpus, name="b", path=path)
    assert not Classifier.objects.exists()


def test_missing_bitmap_file(corpus, tmp_path):
    with pytest.raises(ClassifierError, match="cannot open"):
        classifier_create_from_bitmap(corpus=corpus, name="b", path=tmp_path / "absent.roaring")


def test_parquet_string_ids_in_several_record_batches(corpus, tmp_path, monkeypatch):
    monkeypatch.setattr(retrieved_upload, "READ_ROWS", 16)
    monkeypatch.setattr(retrieved_upload, "RESOLVE_BATCH", 25)
    ids = [str(v) for v in range(1000, 1150)]
    path = write_parquet(tmp_path / "r.parquet", {"doc": ids + [" 1000 ", "1001"], "score": [0.5] * 152}, row_group_size=40)
    result = classifier_create_from_parquet(corpus=corpus, name="p", path=path, column="doc")
    assert result.classifier.retrieved_count == 150
    assert result.read == 150  # repeats of known ids count once; surrounding spaces are stripped
    assert set(classifier_bitmap(classifier=result.classifier)) == {corpus.pks[i] for i in ids}
    assert result.classifier.definition == {
        "format": "parquet", "column": "doc", "source": "r.parquet", "sha256": result.classifier.definition["sha256"]
    }


def test_parquet_integer_ids_and_dictionary_strings(corpus, tmp_path):
    ints = write_parquet(tmp_path / "i.parquet", {"id": pa.array(range(1000, 1010), type=pa.int64())})
    assert classifier_create_from_parquet(corpus=corpus, name="i", path=ints).classifier.retrieved_count == 10
    dictionary = pa.array([str(v) for v in range(1000, 1005)]).dictionary_encode()
    path = write_parquet(tmp_path / "d.parquet", {"id": dictionary})
    assert classifier_create_from_parquet(corpus=corpus, name="d", path=path).classifier.retrieved_count == 5


def test_parquet_wrong_column_names_the_columns_it_has(corpus, tmp_path):
    path = write_parquet(tmp_path / "r.parquet", {"doc_id": ["1000"], "score": [1.0]})
    with pytest.raises(ClassifierError, match="no column 'id'; the file has 'doc_id', 'score'"):
        classifier_create_from_parquet(corpus=corpus, name="p", path=path)
    with pytest.raises(ClassifierError, match="column 'score' holds double; ids must be strings or integers"):
        classifier_create_from_parquet(corpus=corpus, name="p", path=path, column="score")


def test_parquet_empty_cell_names_its_row(corpus, tmp_path):
    path = write_parquet(tmp_path / "r.parquet", {"id": ["1000", "1001", None, "1003"]})
    with pytest.raises(ClassifierError, match="row 3 of column 'id' has no id"):
        classifier_create_from_parquet(corpus=corpus, name="p", path=path)
    blank = write_parquet(tmp_path / "b.parquet", {"id": ["1000", "  "]})
    with pytest.raises(ClassifierError, match="row 2 of column 'id' has no id"):
        classifier_create_from_parquet(corpus=corpus, name="p", path=blank)


def test_parquet_too_many_unknown_ids_refused(corpus, tmp_path):
    path = write_parquet(tmp_path / "r.parquet", {"id": ["1000", "1001", "d1", "d2"]})
    with pytest.raises(ClassifierError, match=r"2 of the 4 ids \(50.0%\) are not documents of corpus 'ints'.*'d1', 'd2'"):
        classifier_create_from_parquet(corpus=corpus, name="p", path=path)


def test_corrupt_parquet_files_are_refused_clearly(corpus, tmp_path):
    good = write_parquet(tmp_path / "good.parquet", {"id": [str(v) for v in range(1000, 1100)]}).read_bytes()
    not_parquet = tmp_path / "text.parquet"
    not_parquet.write_text("1000\n1001\n")
    with pytest.raises(ClassifierError, match="not a readable Parquet file"):
        classifier_create_from_parquet(corpus=corpus, name="p", path=not_parquet)
    truncated = tmp_path / "truncated.parquet"
    truncated.write_bytes(good[: len(good) // 2] + good[-8:])
    with pytest.raises(ClassifierError, match="not a readable Parquet file|Parquet data is corrupt"):
        classifier_create_from_parquet(corpus=corpus, name="p", path=truncated)
    empty = tmp_path / "empty.parquet"
    empty.write_bytes(b"")
    with pytest.raises(ClassifierError, match="not a readable Parquet file"):
        classifier_create_from_parquet(corpus=corpus, name="p", path=empty)
    # Damaged column data behind an intact footer: found while reading the batches.
    damaged = bytearray(good)
    for at in range(8, len(good) // 3):
        damaged[at] ^= 0xFF
    (tmp_path / "damaged.parquet").write_bytes(bytes(damaged))
    with pytest.raises(ClassifierError, match="the Parquet data is corrupt after row 0 "):
        classifier_create_from_parquet(corpus=corpus, name="p", path=tmp_path / "damaged.parquet")
    assert not Classifier.objects.exists()


def test_taken_name_is_refused_by_the_shared_store(corpus, tmp_path):
    path = write_bitmap(tmp_path / "r.bin", [1000])
    classifier_create_from_bitmap(corpus=corpus, name="same", path=path)
    with pytest.raises(ClassifierError, match="already has a classifier named 'same'"):
        classifier_create_from_parquet(corpus=corpus, name="same", path=write_parquet(tmp_path / "p.parquet", {"id": ["1000"]}))


def test_missing_parquet_file(corpus, tmp_path):
    with pytest.raises(ClassifierError, match="absent.parquet: cannot open"):
        classifier_create_from_parquet(corpus=corpus, name="p", path=tmp_path / "absent.parquet")
