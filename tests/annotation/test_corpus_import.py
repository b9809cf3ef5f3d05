import gzip
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Corpus, Document
from annotation.services.corpora.corpus_import import CorpusImportError, corpus_import
from annotation.services.corpora.retrieved_sets import corpus_bitmap

pytestmark = pytest.mark.django_db

RECORDS = [
    {"id": "r1", "title": "Coffee prices rise", "body": "Arabica futures rose.", "topics": ["coffee"], "date": "1987-02-26"},
    {"id": "r2", "title": "Gold steady", "body": "Bullion was unchanged.", "topics": ["gold"], "date": "1987-02-27"},
    {"id": "r3", "title": "", "body": "No title here.", "topics": [], "date": "1987-02-28"},
]


def write_jsonl(path: Path, records, *, gz: bool = False) -> Path:
    data = "".join(json.dumps(r) + "\n" for r in records).encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def snapshot(name: str):
    corpus = Corpus.objects.filter(name=name).first()
    if corpus is None:
        return None
    docs = sorted(Document.objects.filter(corpus=corpus).values_list("external_id", "title", "text", "metadata", "content_hash"))
    return corpus.document_count, bytes(corpus.documents_bitmap), [(*d[:3], json.dumps(d[3], sort_keys=True), d[4]) for d in docs]


def test_jsonl_import_maps_fields_and_keeps_metadata(tmp_path):
    summary = corpus_import(path=write_jsonl(tmp_path / "c.jsonl", RECORDS), corpus_name="news")
    assert (summary.read, summary.created, summary.unchanged, summary.conflicts) == (3, 3, 0, 0)
    corpus = Corpus.objects.get(name="news")
    assert corpus.document_count == 3
    doc = Document.objects.get(corpus=corpus, external_id="r1")
    assert doc.title == "Coffee prices rise"
    assert doc.text == "Arabica futures rose."
    assert doc.metadata == {"topics": ["coffee"], "date": "1987-02-26"}
    assert set(corpus_bitmap(corpus=corpus)) == set(Document.objects.filter(corpus=corpus).values_list("pk", flat=True))


def test_more_than_two_text_fields_join_with_blank_line(tmp_path):
    path = write_jsonl(tmp_path / "c.jsonl", [{"id": 1, "h": "Head", "a": "First.", "b": "Second.", "x": 5}])
    corpus_import(path=path, corpus_name="news", text_fields=("h", "a", "b"))
    doc = Document.objects.get(external_id="1")
    assert (doc.title, doc.text, doc.metadata) == ("Head", "First.\n\nSecond.", {"x": 5})


def test_single_text_field_becomes_text(tmp_path):
    path = write_jsonl(tmp_path / "c.jsonl", [{"id": "a", "body": "Only a body."}])
    corpus_import(path=path, corpus_name="news", text_fields=("body",))
    doc = Document.objects.get(external_id="a")
    assert (doc.title, doc.text) == ("", "Only a body.")


def test_gzip_detected_by_magic_bytes_and_extension(tmp_path):
    corpus_import(path=write_jsonl(tmp_path / "c.jsonl.gz", RECORDS, gz=True), corpus_name="a")
    # Gzipped content under a plain .jsonl name is still recognised.
    corpus_import(path=write_jsonl(tmp_path / "d.jsonl", RECORDS, gz=True), corpus_name="b")
    assert Corpus.objects.get(name="a").document_count == 3
    assert Corpus.objects.get(name="b").document_count == 3


def test_csv_import_with_quoted_multiline_field(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text('id,title,body,lang\nx1,Hello,"two\nlines",en\nx2,Bye,plain,fr\n', encoding="utf-8")
    summary = corpus_import(path=path, corpus_name="csvc")
    assert summary.created == 2
    doc = Document.objects.get(external_id="x1")
    assert (doc.title, doc.text, doc.metadata) == ("Hello", "two\nlines", {"lang": "en"})


def test_reimport_creates_nothing(tmp_path):
    path = write_jsonl(tmp_path / "c.jsonl", RECORDS)
    corpus_import(path=path, corpus_name="news")
    before = snapshot("news")
    summary = corpus_import(path=path, corpus_name="news")
    assert (summary.read, summary.created, summary.unchanged, summary.conflicts) == (3, 0, 3, 0)
    assert snapshot("news") == before


def test_reimport_adds_only_new_documents(tmp_path):
    corpus_import(path=write_jsonl(tmp_path / "a.jsonl", RECORDS[:2]), corpus_name="news")
    summary = corpus_import(path=write_jsonl(tmp_path / "b.jsonl", RECORDS), corpus_name="news")
    assert (summary.created, summary.unchanged) == (1, 2)
    assert Corpus.objects.get(name="news").document_count == 3


def test_conflict_is_reported_and_not_overwritten(tmp_path, capsys):
    corpus_import(path=write_jsonl(tmp_path / "a.jsonl", RECORDS), corpus_name="news")
    changed = [dict(RECORDS[0]), {**RECORDS[1], "body": "Bullion fell sharply."}, {"id": "r4", "title": "New", "body": "x"}]
    path = write_jsonl(tmp_path / "b.jsonl", changed)
    call_command("import_corpus", str(path), "--corpus", "news")
    err = capsys.readouterr().err
    assert "1 document(s) already exist with different content" in err
    assert "line 2: id 'r2'" in err
    assert Document.objects.get(external_id="r2").text == "Bullion was unchanged."
    assert Document.objects.filter(external_id="r4").exists()
    summary = corpus_import(path=path, corpus_name="news")
    assert (summary.created, summary.unchanged, summary.conflicts, summary.conflict_examples) == (0, 2, 1, [(2, "r2")])


BAD_INPUTS = {
    "undecodable": (b'{"id": "a", "title": "ok", "body": "ok"}\n{"id": "b", "title": "caf\xe9", "body": ""}\n', 2, "not valid UTF-8"),
    "malformed_json": (b'{"id": "a", "title": "ok", "body": "ok"}\n{"id": "b", "title": \n', 2, "malformed JSON"),
    "not_an_object": (b'{"id": "a", "title": "ok", "body": "ok"}\n["b", "c"]\n', 2, "expected one JSON object per line"),
    "missing_id": (b'{"id": "a", "title": "ok", "body": "ok"}\n\n{"title": "no id", "body": ""}\n', 3, "missing id"),
    "duplicate_id": (
        b'{"id": "a", "title": "ok", "body": "ok"}\n{"id": "b", "title": "x", "body": ""}\n{"id": "a", "title": "again", "body": ""}\n',
        3, "duplicate id 'a' (first seen on line 1)",
    ),
    "oversized": (b'{"id": "a", "title": "ok", "body": "ok"}\n{"id": "b", "title": "x", "body": "' + b"y" * 101 + b'"}\n', 2,
                  "field 'body' has 101 characters, more than the limit 100"),
}


@pytest.mark.parametrize("existing", [False, True], ids=["new-corpus", "existing-corpus"])
@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_jsonl_fails_with_location_and_changes_nothing(tmp_path, settings, case, existing):
    settings.IMPORT_MAX_FIELD_CHARS = 100
    if existing:
        corpus_import(path=write_jsonl(tmp_path / "good.jsonl", RECORDS), corpus_name="news")
    before = snapshot("news")
    content, line, problem = BAD_INPUTS[case]
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    with pytest.raises(CommandError) as excinfo:
        call_command("import_corpus", str(path), "--corpus", "news")
    message = str(excinfo.value)
    assert f"{path}:{line}: " in message
    assert problem in message
    assert snapshot("news") == before
    if not existing:
        assert not Corpus.objects.filter(name="news").exists()


@pytest.mark.parametrize("existing", [False, True], ids=["new-corpus", "existing-corpus"])
def test_malformed_csv_row_fails_with_line(tmp_path, existing):
    if existing:
        corpus_import(path=write_jsonl(tmp_path / "good.jsonl", RECORDS), corpus_name="news")
    before = snapshot("news")
    path = tmp_path / "bad.csv"
    path.write_text("id,title,body\na,t,b\nb,t\n", encoding="utf-8")
    with pytest.raises(CommandError) as excinfo:
        call_command("import_corpus", str(path), "--corpus", "news")
    assert f"{path}:3: expected 3 fields, found 2" in str(excinfo.value)
    assert snapshot("news") == before


def test_csv_unterminated_quote_is_an_error(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text('id,title,body\na,"t,b\n', encoding="utf-8")
    with pytest.raises(CorpusImportError) as excinfo:
        corpus_import(path=path, corpus_name="news")
    assert excinfo.value.path == path and excinfo.value.line == 2
    assert not Corpus.objects.filter(name="news").exists()


@pytest.mark.parametrize("content", [b"", b"\n\n"], ids=["zero-bytes", "blank-lines"])
def test_empty_file_is_an_error(tmp_path, content):
    corpus_import(path=write_jsonl(tmp_path / "good.jsonl", RECORDS), corpus_name="news")
    before = snapshot("news")
    path = tmp_path / "empty.jsonl"
    path.write_bytes(content)
    with pytest.raises(CommandError) as excinfo:
        call_command("import_corpus", str(path), "--corpus", "news")
    assert str(path) in str(excinfo.value)
    assert "the file contains no documents" in str(excinfo.value)
    assert snapshot("news") == before


def test_truncated_gzip_is_an_error(tmp_path):
    data = gzip.compress("".join(json.dumps(r) + "\n" for r in RECORDS * 1).encode())
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CorpusImportError) as excinfo:
        corpus_import(path=path, corpus_name="news")
    assert "corrupt compressed data" in excinfo.value.problem
    assert not Corpus.objects.filter(name="news").exists()


def test_error_attributes(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"id": "a"}\n{"id": \n')
    with pytest.raises(CorpusImportError) as excinfo:
        corpus_import(path=path, corpus_name="news")
    assert (excinfo.value.path, excinfo.value.line) == (path, 2)
    assert excinfo.value.problem.startswith("malformed JSON")


def test_unknown_extension_is_an_error(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("x")
    with pytest.raises(CorpusImportError, match="cannot tell the format"):
        corpus_import(path=path, corpus_name="news")


def test_non_text_field_is_an_error(tmp_path):
    path = write_jsonl(tmp_path / "c.jsonl", [{"id": "a", "title": ["a", "list"], "body": ""}])
    with pytest.raises(CorpusImportError, match="field 'title' must be text"):
        corpus_import(path=path, corpus_name="news")


def test_progress_callback_and_batches(tmp_path, monkeypatch):
    monkeypatch.setattr("annotation.services.corpora.corpus_import.BATCH_SIZE", 2)
    seen = []
    records = [{"id": str(i), "title": f"t{i}", "body": "b"} for i in range(5)]
    corpus_import(path=write_jsonl(tmp_path / "c.jsonl", records), corpus_name="news", progress=seen.append)
    assert seen == [2, 4, 5]
    assert Corpus.objects.get(name="news").document_count == 5


def test_command_prints_summary(tmp_path, capsys):
    call_command("import_corpus", str(write_jsonl(tmp_path / "c.jsonl", RECORDS)), "--corpus", "news")
    out = capsys.readouterr().out
    assert "read 3, created 3, unchanged 0, conflicts 0" in out


def test_custom_id_and_text_fields_flags(tmp_path):
    path = write_jsonl(tmp_path / "c.jsonl", [{"doc": "k1", "headline": "H", "content": "C", "id": "ignored"}])
    call_command("import_corpus", str(path), "--corpus", "news", "--id-field", "doc", "--text-fields", "headline,content")
    doc = Document.objects.get(external_id="k1")
    assert (doc.title, doc.text, doc.metadata) == ("H", "C", {"id": "ignored"})
