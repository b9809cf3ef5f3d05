"""manage.py classifier_import_retrieved: a Roaring bitmap or a Parquet file of ids on the server."""
from __future__ import annotations

from io import StringIO

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.core.management import CommandError, call_command
from pyroaring import BitMap

from annotation.models import Classifier
from tests.factories import CorpusFactory, DocumentFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def corpus():
    corpus = CorpusFactory(name="ints")
    for i in range(40):
        DocumentFactory(corpus=corpus, external_id=str(3000 + i))
    corpus.document_count = 40
    corpus.save(update_fields=["document_count"])
    return corpus


def run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("classifier_import_retrieved", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_bitmap_file_becomes_a_classifier(corpus, tmp_path):
    path = tmp_path / "r.roaring"
    path.write_bytes(BitMap([3000, 3001, 3039]).serialize())
    out, err = run("--corpus", "ints", "--name", "ray", str(path))
    classifier = Classifier.objects.get(corpus=corpus, name="ray")
    assert classifier.retrieved_count == 3 and classifier.definition["format"] == "roaring"
    assert "3 documents retrieved of 3 ids read" in out and classifier.fingerprint in out and err == ""


def test_parquet_with_a_column_and_a_few_unknown_ids_reported(corpus, tmp_path):
    path = tmp_path / "part-0.parquet"
    ids = [str(3000 + i) for i in range(40)] * 3 + ["x-1"]  # repeats count once: 1 unknown of 41 ids read (2.4 %) is refused
    pq.write_table(pa.table({"doc": ids}), path)
    with pytest.raises(CommandError, match="1 of the 41 ids"):
        run("--corpus", "ints", "--name", "p", "--column", "doc", str(path))
    assert not Classifier.objects.exists()
    pq.write_table(pa.table({"doc": [str(3000 + i) for i in range(40)] * 3}), path)
    out, _ = run("--corpus", str(corpus.pk), "--name", "p", "--column", "doc", "--format", "parquet", str(path))
    assert Classifier.objects.get(name="p").retrieved_count == 40 and "40 documents retrieved" in out


def test_no_upload_size_limit_on_the_server(corpus, tmp_path, settings):
    settings.RETRIEVED_UPLOAD_MAX_BYTES = 1
    path = tmp_path / "r.roaring"
    path.write_bytes(BitMap(range(3000, 3040)).serialize())
    run("--corpus", "ints", "--name", "big", str(path))
    assert Classifier.objects.get(name="big").retrieved_count == 40


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--corpus", "nope", "--name", "x"], "no corpus named 'nope'"),
        (["--corpus", "ints", "--name", "x", "--format", "parquet"], "not a readable Parquet file"),
        (["--corpus", "ints", "--name", "x"], "not a serialized 32-bit Roaring bitmap"),
    ],
)
def test_bad_input_is_a_command_error_and_creates_nothing(corpus, tmp_path, args, message):
    path = tmp_path / "junk.bin"
    path.write_bytes(b"junk junk junk")
    with pytest.raises(CommandError, match=message):
        run(*args, str(path))
    assert not Classifier.objects.exists()


def test_missing_file(corpus, tmp_path):
    with pytest.raises(CommandError, match="absent.roaring: cannot open"):
        run("--corpus", "ints", "--name", "x", str(tmp_path / "absent.roaring"))
