"""Hostile corpus files (issue 15 item 5): each ends in a line and a reason, never "unexpected error", and a
line of any length is refused after reading at most IMPORT_MAX_RECORD_BYTES."""
from __future__ import annotations

import gzip
import json
import re
import tracemalloc
import zlib
from pathlib import Path

import pytest

from annotation.models import Corpus, CorpusUpload, Document
from annotation.services.corpora import corpus_uploads
from annotation.services.corpora.corpus_import import MAX_JSON_DEPTH, CorpusImportError, corpus_import

pytestmark = pytest.mark.django_db

GOOD = b'{"id": "a", "title": "t", "body": "b"}\n'
ROOT = Path(__file__).resolve().parents[2]


def _import_error(path: Path, **kwargs) -> CorpusImportError:
    with pytest.raises(CorpusImportError) as caught:
        corpus_import(path=path, corpus_name="hostile", **kwargs)
    assert not Document.objects.exists()  # all or nothing
    return caught.value


def _upload_run(path: Path, text_fields=("title", "body")) -> CorpusUpload:
    """Through the browser path: the row must carry the line and the problem, never the generic message."""
    upload = corpus_uploads.corpus_upload_create(
        corpus_name="hostile", original_name=path.name, chunks=iter([path.read_bytes()]), id_field="id",
        text_fields=list(text_fields))
    result = corpus_uploads.corpus_upload_run(upload_id=upload.pk)
    assert result is not None and result.status == "failed"
    assert "unexpected" not in result.error_problem
    return result


def test_corrupt_gzip_names_the_line_and_the_reason(tmp_path):
    packed = gzip.compress(GOOD * 100)
    # A valid header and trailer around a damaged deflate stream: zlib.error, not an OSError.
    damaged = packed[:20] + bytes(b ^ 0x5A for b in packed[20:40]) + packed[40:]
    path = tmp_path / "corrupt.jsonl.gz"
    path.write_bytes(damaged)
    error = _import_error(path)
    assert error.line == 1 and error.problem.startswith("corrupt compressed data")
    upload = _upload_run(path)
    assert upload.error_line == 1 and "corrupt compressed data" in upload.error_problem


def test_truncated_gzip_names_the_line(tmp_path):
    packed = gzip.compress(GOOD * 1000)
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(packed[: len(packed) // 2])
    error = _import_error(path)
    assert error.line is not None and "corrupt compressed data" in error.problem


def test_json_nested_100000_deep_is_refused_before_parsing(tmp_path):
    path = tmp_path / "deep.jsonl"
    path.write_bytes(GOOD + b'{"id": "d", "title": "t", "body": "b", "m": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n")
    error = _import_error(path)
    assert error.line == 2 and error.problem == f"JSON nested deeper than {MAX_JSON_DEPTH} levels"
    assert _upload_run(path).error_line == 2


def test_nesting_up_to_the_limit_and_brackets_inside_strings_are_accepted(tmp_path):
    depth = MAX_JSON_DEPTH - 1  # the record object itself is one level
    nested = "[" * depth + "]" * depth
    brackets = "[" * 500 + "{" * 500  # inside a string: not nesting
    path = tmp_path / "ok.jsonl"
    path.write_text(json.dumps({"id": "n", "title": brackets, "body": "b"})[:-1] + f', "m": {nested}}}\n')
    assert corpus_import(path=path, corpus_name="fine").created == 1
    assert Document.objects.get(external_id="n").title == brackets


def test_a_lone_surrogate_escape_is_refused_with_its_line(tmp_path):
    path = tmp_path / "surrogate.jsonl"
    path.write_bytes(GOOD + b'{"id": "s", "title": "t", "body": "fine \\ud800 not"}\n')
    error = _import_error(path)
    assert error.line == 2 and "lone UTF-16 surrogate (\\ud800)" in error.problem
    assert _upload_run(path).error_line == 2


def test_a_surrogate_pair_is_one_character_and_is_accepted(tmp_path):
    path = tmp_path / "pair.jsonl"
    path.write_bytes(b'{"id": "p", "title": "t", "body": "smile \\ud83d\\ude00", "k\\uD83D\\uDE00": 1}\n')
    corpus_import(path=path, corpus_name="fine")
    document = Document.objects.get(external_id="p")
    assert document.text == "smile \U0001F600" and document.metadata == {"k\U0001F600": 1}


def test_a_lone_surrogate_in_a_metadata_key_is_refused(tmp_path):
    path = tmp_path / "key.jsonl"
    path.write_bytes(b'{"id": "k", "title": "t", "body": "b", "\\uDC00": 1}\n')
    error = _import_error(path)
    assert error.line == 1 and "\\udc00" in error.problem


def test_invalid_utf8_names_the_line_and_the_byte(tmp_path):
    path = tmp_path / "latin1.jsonl"
    bad = b'{"id": "u", "title": "t", "body": "caf\xe9"}\n'
    path.write_bytes(GOOD + bad)
    error = _import_error(path)
    position = bad.index(0xE9) + 1
    assert (error.line, error.problem) == (2, f"not valid UTF-8 (byte {position} of the line)")
    assert _upload_run(path).error_line == 2


def test_a_csv_field_of_200000_characters_is_within_the_documented_limit(tmp_path, settings):
    assert settings.IMPORT_MAX_FIELD_CHARS == 1_000_000
    path = tmp_path / "big.csv"
    path.write_text("id,title,body\n1,t," + "x" * 200_000 + "\n")
    assert corpus_import(path=path, corpus_name="big").created == 1
    assert len(Document.objects.get().text) == 200_000


def test_a_csv_field_over_the_limit_names_the_line_and_the_limit(tmp_path, settings):
    settings.IMPORT_MAX_FIELD_CHARS = 1000
    path = tmp_path / "over.csv"
    path.write_text("id,title,body\n1,t,short\n2,t," + "x" * 1001 + "\n")
    error = _import_error(path)
    assert error.line == 3 and error.problem == "a field has more than 1,000 characters, the limit (IMPORT_MAX_FIELD_CHARS)"
    # Exactly at the limit is accepted: the csv module's own cap follows the setting.
    path.write_text("id,title,body\n1,t," + "x" * 1000 + "\n")
    assert corpus_import(path=path, corpus_name="edge").created == 1


def test_the_readme_documents_the_limit_the_code_applies():
    readme = (ROOT / "README.md").read_text()
    row = next(line for line in readme.splitlines() if "IMPORT_MAX_FIELD_CHARS" in line)
    documented = int(re.search(r"`(\d[\d,]*)`", row).group(1).replace(",", ""))
    from django.conf import settings

    assert documented == settings.IMPORT_MAX_FIELD_CHARS == 1_000_000


def test_an_open_quote_cannot_grow_a_csv_record_past_the_record_limit(tmp_path, settings):
    settings.IMPORT_MAX_RECORD_BYTES = 10_000
    path = tmp_path / "quote.csv"
    # Each line is short, but the quote never closes: one record keeps growing line after line.
    path.write_text('id,title,body\n1,t,"open\n' + "more text on another line\n" * 2000)
    error = _import_error(path)
    assert error.line is not None and error.line < 500 and "limit for one record" in error.problem


def _one_line_bomb(path: Path, *, expanded: int) -> None:
    """A gzip file whose single line expands to `expanded` bytes (a few hundred KiB on disk)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = b"a" * (1 << 20)
    with path.open("wb") as out:
        out.write(packer.compress(b'{"id": "z", "title": "t", "body": "'))
        for _ in range(expanded // len(chunk)):
            out.write(packer.compress(chunk))
        out.write(packer.compress(b'"}\n'))
        out.write(packer.flush())


def test_a_gzip_bomb_is_refused_after_reading_the_record_limit_with_bounded_memory(tmp_path, settings):
    settings.IMPORT_MAX_RECORD_BYTES = 4 * 1024 * 1024
    path = tmp_path / "bomb.jsonl.gz"
    _one_line_bomb(path, expanded=128 * 1024 * 1024)
    assert path.stat().st_size < 1024 * 1024
    tracemalloc.start()
    try:
        error = _import_error(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert error.line == 1 and "longer than 4,194,304 bytes" in error.problem
    # Before the fix the whole 128 MiB line (and its decoded copy) was built; now about the limit, twice.
    assert peak < 24 * 1024 * 1024, peak


def test_a_line_just_under_the_record_limit_is_read(tmp_path, settings):
    line = b'{"id": "x", "title": "t", "body": "' + b"y" * 900 + b'"}\n'
    settings.IMPORT_MAX_RECORD_BYTES = len(line)
    path = tmp_path / "edge.jsonl"
    path.write_bytes(line)
    assert corpus_import(path=path, corpus_name="edge").created == 1
    settings.IMPORT_MAX_RECORD_BYTES = len(line) - 1
    with pytest.raises(CorpusImportError) as caught:
        corpus_import(path=path, corpus_name="edge")
    assert caught.value.line == 1 and "longer than" in caught.value.problem
    assert Corpus.objects.get(name="edge").document_count == 1
