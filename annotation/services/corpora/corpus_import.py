"""Import a corpus from JSON lines or CSV (optionally gzipped), all or nothing.

Pipeline (reader → parser → validator → staging writer → SQL merge):

1. `_open_lines` yields (line number, decoded line) from the file, gunzipping
   when the file starts with the gzip magic bytes; undecodable bytes name their line.
   A line is read with a length cap (`IMPORT_MAX_RECORD_BYTES`): a longer one (a
   gzip bomb expanding to one 1 GiB line) is refused after reading the cap, never
   built in memory. Corrupt compressed data, JSON nested deeper than
   `MAX_JSON_DEPTH`, lone UTF-16 surrogates (`"\\ud800"`) and CSV fields over
   `IMPORT_MAX_FIELD_CHARS` are refused with their line and the reason.
2. `_jsonl_records` / `_csv_records` turn lines into raw dicts.
3. `_document_row` maps fields to Document columns and validates them.
4. Rows are written in batches to a temporary staging table (COPY on
   PostgreSQL, executemany on SQLite), so memory stays flat however large the
   file: no Python set of all ids is ever built.
5. Duplicate ids inside the file and conflicts with existing documents are
   found by SQL over the staging table; new documents are copied over with one
   INSERT … SELECT; the corpus's document count and bitmap are refreshed.

Everything happens in one transaction: a bad file leaves the corpus (and, for a
first import, the absence of the corpus) exactly as it was.

Field mapping: with `text_fields=("title", "body")` the first field becomes
Document.title and the remaining ones, joined by a blank line, Document.text.
With a single text field it becomes Document.text and the title stays empty.
Every other field except the id goes to Document.metadata unchanged (lists stay
lists; CSV values are strings).

Re-importing: a document whose id already exists with the same content is
counted as unchanged; one with different content is a *conflict*: it is
skipped (never overwritten), counted and listed with its line number in the
summary, and the import still succeeds.
"""
from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import logging
import re
import time
import uuid
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.db import DatabaseError, connection, transaction

from annotation.models import Corpus, Document
from annotation.services.corpora.retrieved_sets import bitmap_from_ids, bitmap_to_bytes
from core.errors import ApplicationError

logger = logging.getLogger(__name__)

BATCH_SIZE = 5000
CONFLICT_EXAMPLES = 20
JSONL_EXTENSIONS = (".jsonl", ".json", ".ndjson")
CSV_EXTENSIONS = (".csv",)
GZIP_MAGIC = b"\x1f\x8b"
MAX_EXTERNAL_ID_CHARS = 255
SQLITE_CACHE_KIB = 65536
# Deeper JSON is refused before json.loads recurses into it (metadata is never legitimately this deep).
MAX_JSON_DEPTH = 64


def max_record_bytes() -> int:
    """The longest line (or CSV record) read, in bytes: IMPORT_MAX_RECORD_BYTES, by default 16 bytes per
    character of IMPORT_MAX_FIELD_CHARS (room for a title, a body and metadata at the limit, escaped)."""
    configured = getattr(settings, "IMPORT_MAX_RECORD_BYTES", None)
    return int(configured) if configured else 16 * settings.IMPORT_MAX_FIELD_CHARS


class CorpusImportError(ApplicationError):
    """A bad input file; nothing was written. `line` is None when no line is to blame."""

    def __init__(self, *, path: Path | str, line: int | None, problem: str) -> None:
        self.path = Path(path)
        self.line = line
        self.problem = problem
        where = f"{self.path}:{line}" if line is not None else f"{self.path}"
        super().__init__(f"{where}: {problem}")


@dataclass
class ImportSummary:
    corpus_id: int
    corpus_name: str
    path: Path
    read: int = 0
    created: int = 0
    unchanged: int = 0
    conflicts: int = 0
    # (line, external id) of the first conflicts, in file order.
    conflict_examples: list[tuple[int, str]] = field(default_factory=list)
    document_count: int = 0

    def describe(self) -> str:
        return (
            f"{self.path}: read {self.read}, created {self.created}, unchanged {self.unchanged}, "
            f"conflicts {self.conflicts} (corpus {self.corpus_name!r} now has {self.document_count} documents)"
        )


# --- reading -----------------------------------------------------------------


def _detect_format(path: Path, file_format: str | None) -> str:
    if file_format:
        if file_format not in ("jsonl", "csv"):
            raise CorpusImportError(path=path, line=None, problem=f"unknown format {file_format!r} (jsonl or csv)")
        return file_format
    name = path.name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    if name.endswith(JSONL_EXTENSIONS):
        return "jsonl"
    if name.endswith(CSV_EXTENSIONS):
        return "csv"
    raise CorpusImportError(
        path=path, line=None, problem="cannot tell the format: name the file .jsonl, .json, .ndjson or .csv (optionally .gz)"
    )


def _open_binary(path: Path) -> io.BufferedIOBase:
    try:
        raw = open(path, "rb")
    except OSError as exc:
        raise CorpusImportError(path=path, line=None, problem=f"cannot open: {exc.strerror or exc}") from exc
    if raw.peek(2)[:2] == GZIP_MAGIC:
        return gzip.GzipFile(fileobj=raw, mode="rb")
    return raw


def _open_lines(path: Path, *, max_bytes: int) -> Iterator[tuple[int, str]]:
    """Decoded lines (with their line ending) and 1-based numbers; bad bytes or gzip data name the line.

    Each line is read with a cap of `max_bytes`: decompression stops there, so a line of any length costs
    at most `max_bytes` of memory before it is refused.
    """
    stream = _open_binary(path)
    line_no = 0
    try:
        with stream:
            while True:
                try:
                    raw = stream.readline(max_bytes + 1)
                except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
                    raise CorpusImportError(path=path, line=line_no + 1, problem=f"corrupt compressed data ({exc})") from exc
                if not raw:
                    return
                line_no += 1
                if len(raw) > max_bytes:
                    raise CorpusImportError(
                        path=path, line=line_no,
                        problem=f"the line is longer than {max_bytes:,} bytes, the limit for one record "
                        "(IMPORT_MAX_RECORD_BYTES); the rest of it was not read",
                    )
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise CorpusImportError(
                        path=path, line=line_no, problem=f"not valid UTF-8 (byte {exc.start + 1} of the line)"
                    ) from exc
                if line_no == 1 and text.startswith("\ufeff"):
                    text = text[1:]
                yield line_no, text
    finally:
        stream.close()


# A JSON string (escapes included) or a bracket: strings are skipped when counting nesting.
_JSON_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')
# An escaped UTF-16 surrogate; decoded alone (not as half of a pair) it is not valid Unicode.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _json_depth_exceeds(text: str, limit: int) -> bool:
    """True when the JSON text nests arrays/objects deeper than `limit` (cheap unless it has many brackets)."""
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    for match in _JSON_TOKEN.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > limit:
                return True
        elif token in "]}":
            depth -= 1
    return False


def _lone_surrogate(value: dict) -> str | None:
    """The first unpaired surrogate in the decoded record, as its JSON escape, or None."""
    try:
        _CANONICAL_ENCODER.encode(value).encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"\\u{ord(exc.object[exc.start]):04x}"
    return None


def _jsonl_records(path: Path, lines: Iterator[tuple[int, str]]) -> Iterator[tuple[int, dict]]:
    for line_no, text in lines:
        if not text.strip():
            continue
        if _json_depth_exceeds(text, MAX_JSON_DEPTH):
            raise CorpusImportError(
                path=path, line=line_no, problem=f"JSON nested deeper than {MAX_JSON_DEPTH} levels"
            )
        try:
            value = _DECODER.decode(text)
        except json.JSONDecodeError as exc:
            raise CorpusImportError(path=path, line=line_no, problem=f"malformed JSON ({exc.msg} at column {exc.colno})") from exc
        except RecursionError as exc:  # the depth check above should make this unreachable
            raise CorpusImportError(path=path, line=line_no, problem="JSON nested too deeply") from exc
        if _SURROGATE_ESCAPE.search(text) and (escape := _lone_surrogate(value)) is not None:
            raise CorpusImportError(
                path=path, line=line_no,
                problem=f"a lone UTF-16 surrogate ({escape}) in a string: it is not a character; "
                "write the character itself or a complete surrogate pair",
            )
        if not isinstance(value, dict):
            raise CorpusImportError(
                path=path, line=line_no, problem=f"expected one JSON object per line, found {type(value).__name__}"
            )
        yield line_no, value


class _LineCounter:
    """Feeds csv.reader while remembering the physical line it is on and the size of the record so far
    (a quoted field may run over many lines: the record, not only the line, is capped)."""

    def __init__(self, lines: Iterator[tuple[int, str]], *, path: Path, max_chars: int) -> None:
        self._lines = lines
        self._path = path
        self._max_chars = max_chars
        self.line_no = 0
        self.record_chars = 0

    def __iter__(self) -> _LineCounter:
        return self

    def __next__(self) -> str:
        self.line_no, text = next(self._lines)
        self.record_chars += len(text)
        if self.record_chars > self._max_chars:
            raise CorpusImportError(
                path=self._path, line=self.line_no,
                problem=f"the CSV record is longer than {self._max_chars:,} characters, the limit for one record "
                "(IMPORT_MAX_RECORD_BYTES); is a quote left open?",
            )
        return text


_CSV_FIELD_LIMIT_ERROR = "field larger than field limit"


def _csv_records(path: Path, lines: Iterator[tuple[int, str]], *, max_field_chars: int,
                 max_record_chars: int) -> Iterator[tuple[int, dict]]:
    counter = _LineCounter(lines, path=path, max_chars=max_record_chars)
    reader = csv.reader(counter, strict=True)
    # The csv module's own cap (131,072 characters by default) would refuse fields the documented limit
    # allows; it is process-wide, so it is set for this reader and put back when the file is done.
    previous_limit = csv.field_size_limit(max_field_chars)
    try:
        header = next(reader, None)
        if header is None:
            return
        header = [name.strip() for name in header]
        if len(set(header)) != len(header) or any(not name for name in header):
            raise CorpusImportError(path=path, line=1, problem="the CSV header has empty or repeated column names")
        start = counter.line_no + 1
        counter.record_chars = 0
        for row in reader:
            record_line = start
            start = counter.line_no + 1
            counter.record_chars = 0
            if not row:
                continue
            if len(row) != len(header):
                raise CorpusImportError(
                    path=path, line=record_line, problem=f"expected {len(header)} fields, found {len(row)}"
                )
            yield record_line, dict(zip(header, row))
    except csv.Error as exc:
        if str(exc).startswith(_CSV_FIELD_LIMIT_ERROR):
            raise CorpusImportError(
                path=path, line=counter.line_no,
                problem=f"a field has more than {max_field_chars:,} characters, the limit (IMPORT_MAX_FIELD_CHARS)",
            ) from exc
        raise CorpusImportError(path=path, line=counter.line_no, problem=f"malformed CSV ({exc})") from exc
    finally:
        csv.field_size_limit(previous_limit)


# --- validating ----------------------------------------------------------------


def _as_text(value: object, *, name: str, path: Path, line: int) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise CorpusImportError(path=path, line=line, problem=f"field {name!r} must be text, found {type(value).__name__}")


def content_hash(*, title: str, text: str, metadata_json: str) -> str:
    """sha256 over title, text and the canonical (sorted-key) metadata JSON, NUL-separated."""
    return hashlib.sha256(f"{title}\x00{text}\x00{metadata_json}".encode("utf-8", "surrogatepass")).hexdigest()


_CANONICAL_ENCODER = json.JSONEncoder(ensure_ascii=False, sort_keys=True)
_DECODER = json.JSONDecoder()


def metadata_canonical(metadata: dict) -> str:
    return _CANONICAL_ENCODER.encode(metadata)


def _document_row(
    record: dict, *, path: Path, line: int, id_field: str, text_fields: Sequence[str], max_chars: int
) -> tuple[int, str, str, str, str, str]:
    raw_id = record.get(id_field)
    if raw_id is None or (isinstance(raw_id, str) and not raw_id.strip()):
        raise CorpusImportError(path=path, line=line, problem=f"missing id (field {id_field!r})")
    if isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)):
        raise CorpusImportError(path=path, line=line, problem=f"id field {id_field!r} must be a string or an integer")
    external_id = str(raw_id).strip()
    if len(external_id) > MAX_EXTERNAL_ID_CHARS:
        raise CorpusImportError(path=path, line=line, problem=f"id longer than {MAX_EXTERNAL_ID_CHARS} characters")

    texts = []
    for name in text_fields:
        value = record.get(name)
        if value.__class__ is not str:
            value = _as_text(value, name=name, path=path, line=line)
        if len(value) > max_chars:
            _oversized(name, len(value), path=path, line=line, max_chars=max_chars)
        texts.append(value)
    metadata = {key: value for key, value in record.items() if key != id_field and key not in text_fields}
    metadata_json = metadata_canonical(metadata)
    if len(metadata_json) > max_chars:
        # Only now look for the culprit: serialising every value for every record would be slow.
        for key, value in metadata.items():
            size = len(value) if isinstance(value, str) else len(json.dumps(value, ensure_ascii=False))
            if size > max_chars:
                _oversized(key, size, path=path, line=line, max_chars=max_chars)
    if len(texts) == 1:
        title, text = "", texts[0]
    else:
        title, text = texts[0], "\n\n".join(part for part in texts[1:] if part)
    if "\x00" in title or "\x00" in text or "\x00" in external_id or "\\u0000" in metadata_json:
        raise CorpusImportError(path=path, line=line, problem="NUL character in a field")
    return line, external_id, title, text, metadata_json, content_hash(title=title, text=text, metadata_json=metadata_json)


def _oversized(name: str, size: int, *, path: Path, line: int, max_chars: int) -> None:
    raise CorpusImportError(
        path=path, line=line, problem=f"field {name!r} has {size} characters, more than the limit {max_chars}"
    )


def _document_rows(
    *, path: Path, file_format: str, id_field: str, text_fields: Sequence[str]
) -> Iterator[tuple[int, str, str, str, str, str]]:
    max_chars = settings.IMPORT_MAX_FIELD_CHARS
    max_bytes = max_record_bytes()
    lines = _open_lines(path, max_bytes=max_bytes)
    records = (
        _jsonl_records(path, lines) if file_format == "jsonl"
        else _csv_records(path, lines, max_field_chars=max_chars, max_record_chars=max_bytes)
    )
    for line, record in records:
        yield _document_row(record, path=path, line=line, id_field=id_field, text_fields=text_fields, max_chars=max_chars)


# --- writing -------------------------------------------------------------------


class _Staging:
    """A temporary table holding the file's rows for set-based checks."""

    COLUMNS = ("line", "external_id", "title", "text", "metadata", "content_hash")

    def __init__(self) -> None:
        self.table = f"import_staging_{uuid.uuid4().hex[:12]}"
        self.postgres = connection.vendor == "postgresql"

    def create(self, cursor) -> None:
        if self.postgres:
            # metadata is parsed to jsonb by COPY, while Python is still reading the file.
            cursor.execute(
                f"CREATE TEMP TABLE {self.table} (line integer, external_id text, title text, text text, "
                "metadata jsonb, content_hash text) ON COMMIT DROP"
            )
            # Room for the hash aggregate and joins over a million ids without spilling to disk.
            cursor.execute("SET LOCAL work_mem = '64MB'")
        else:
            cursor.execute(
                f"CREATE TEMP TABLE {self.table} (line integer, external_id text, title text, text text, "
                "metadata text, content_hash text)"
            )

    def write(self, cursor, rows: list[tuple]) -> None:
        if self.postgres:
            # The raw psycopg cursor raises psycopg's own errors; wrapped, a dropped connection is Django's
            # OperationalError like everywhere else, so the import task retries it instead of failing the upload.
            with cursor.db.wrap_database_errors, \
                    cursor.cursor.copy(f"COPY {self.table} ({', '.join(self.COLUMNS)}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        else:
            cursor.executemany(f"INSERT INTO {self.table} VALUES (?, ?, ?, ?, ?, ?)", rows)

    def index(self, cursor) -> None:
        if self.postgres:
            # PostgreSQL hashes the staging table for the checks and the merge; it needs row estimates, not an index.
            cursor.execute(f"ANALYZE {self.table}")
        else:
            cursor.execute(f"CREATE INDEX {self.table}_eid ON {self.table} (external_id)")

    def drop(self, cursor) -> None:
        # PostgreSQL drops it at commit. On SQLite a rollback also removes it, so a failure here
        # (the transaction is already broken) must not hide the error that got us here.
        if not self.postgres:
            try:
                cursor.execute(f"DROP TABLE IF EXISTS {self.table}")
            except DatabaseError:
                logger.warning("could not drop staging table %s", self.table)


def corpus_import(
    *,
    path: Path,
    corpus_name: str,
    id_field: str = "id",
    text_fields: Sequence[str] = ("title", "body"),
    progress: Callable[[int], None] | None = None,
    file_format: str | None = None,
) -> ImportSummary:
    """Import documents into the corpus named `corpus_name` (created if new).

    Raises CorpusImportError (nothing written) on any bad record. Conflicting
    documents (known id, different content) are skipped and reported in the summary.
    `progress(records_read)` is called after every batch.
    """
    path = Path(path)
    text_fields = tuple(name.strip() for name in text_fields if name.strip())
    if not corpus_name.strip():
        raise CorpusImportError(path=path, line=None, problem="the corpus name is empty")
    if not text_fields:
        raise CorpusImportError(path=path, line=None, problem="no text fields given")
    if id_field in text_fields:
        raise CorpusImportError(path=path, line=None, problem=f"the id field {id_field!r} is also a text field")
    file_format = _detect_format(path, file_format)
    if not path.is_file():
        raise CorpusImportError(path=path, line=None, problem="no such file")

    staging = _Staging()
    with transaction.atomic(), _sqlite_page_cache():
        corpus, _ = Corpus.objects.get_or_create(name=corpus_name.strip())
        # One import at a time per corpus: the lock is held until commit.
        corpus = Corpus.objects.select_for_update().get(pk=corpus.pk)
        summary = ImportSummary(corpus_id=corpus.pk, corpus_name=corpus.name, path=path)
        with connection.cursor() as cursor:
            staging.create(cursor)
            clock = _StageClock(path)
            try:
                summary.read = _stage_rows(
                    cursor, staging, path=path, file_format=file_format, id_field=id_field,
                    text_fields=text_fields, progress=progress,
                )
                if summary.read == 0:
                    raise CorpusImportError(path=path, line=1 if path.stat().st_size else None, problem="the file contains no documents")
                clock.lap("read, validate and stage")
                staging.index(cursor)
                _reject_duplicates_in_file(cursor, staging, path=path)
                clock.lap("check duplicates")
                _merge(cursor, staging, corpus=corpus, summary=summary)
                clock.lap("merge")
            finally:
                staging.drop(cursor)
        corpus_totals_refresh(corpus=corpus)
        clock.lap("refresh corpus totals")
        summary.document_count = corpus.document_count
    return summary


class _StageClock:
    """Logs how long each stage took (logger annotation.services.corpora.corpus_import, level DEBUG)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.last = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        logger.debug("import %s: %s took %.2f s", self.path.name, stage, now - self.last)
        self.last = now


@contextmanager
def _sqlite_page_cache() -> Iterator[None]:
    """A bounded 64 MiB page cache while importing into SQLite (the default 2 MiB makes the
    index lookups of a million-row merge re-read pages from the OS: measured twice as slow)."""
    if connection.vendor != "sqlite":
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA cache_size")
        (previous,) = cursor.fetchone()
        cursor.execute(f"PRAGMA cache_size = {-SQLITE_CACHE_KIB}")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"PRAGMA cache_size = {int(previous)}")


def _stage_rows(cursor, staging: _Staging, *, path: Path, file_format: str, id_field: str,
                text_fields: Sequence[str], progress: Callable[[int], None] | None) -> int:
    read = 0
    batch: list[tuple] = []
    for row in _document_rows(path=path, file_format=file_format, id_field=id_field, text_fields=text_fields):
        batch.append(row)
        if len(batch) >= BATCH_SIZE:
            staging.write(cursor, batch)
            read += len(batch)
            batch = []
            if progress:
                progress(read)
    if batch:
        staging.write(cursor, batch)
        read += len(batch)
        if progress:
            progress(read)
    return read


def _reject_duplicates_in_file(cursor, staging: _Staging, *, path: Path) -> None:
    cursor.execute(
        f"SELECT external_id, MIN(line) FROM {staging.table} GROUP BY external_id HAVING COUNT(*) > 1 "
        "ORDER BY MIN(line) LIMIT 1"
    )
    duplicate = cursor.fetchone()
    if duplicate is None:
        return
    external_id, first_line = duplicate
    cursor.execute(
        f"SELECT line FROM {staging.table} WHERE external_id = %s AND line > %s ORDER BY line LIMIT 1",
        [external_id, first_line],
    )
    (second_line,) = cursor.fetchone()
    raise CorpusImportError(
        path=path, line=second_line, problem=f"duplicate id {external_id!r} (first seen on line {first_line})"
    )


def _merge(cursor, staging: _Staging, *, corpus: Corpus, summary: ImportSummary) -> None:
    document_table = Document._meta.db_table
    cursor.execute(
        f"SELECT COUNT(*), SUM(CASE WHEN d.content_hash = s.content_hash THEN 1 ELSE 0 END) "
        f"FROM {staging.table} s JOIN {document_table} d ON d.corpus_id = %s AND d.external_id = s.external_id",
        [corpus.pk],
    )
    existing, unchanged = cursor.fetchone()
    summary.unchanged = int(unchanged or 0)
    summary.conflicts = int(existing or 0) - summary.unchanged
    if summary.conflicts:
        cursor.execute(
            f"SELECT s.line, s.external_id FROM {staging.table} s JOIN {document_table} d "
            "ON d.corpus_id = %s AND d.external_id = s.external_id WHERE d.content_hash <> s.content_hash "
            "ORDER BY s.line LIMIT %s",
            [corpus.pk, CONFLICT_EXAMPLES],
        )
        summary.conflict_examples = [(int(line), external_id) for line, external_id in cursor.fetchall()]
    cursor.execute(
        f"INSERT INTO {document_table} (corpus_id, external_id, title, text, metadata, content_hash) "
        f"SELECT %s, s.external_id, s.title, s.text, s.metadata, s.content_hash FROM {staging.table} s "
        # No ORDER BY: staging rows are scanned in insertion (file) order anyway, and sorting a
        # million texts would cost more than the insert.
        f"WHERE NOT EXISTS (SELECT 1 FROM {document_table} d WHERE d.corpus_id = %s AND d.external_id = s.external_id)",
        [corpus.pk, corpus.pk],
    )
    summary.created = summary.read - summary.unchanged - summary.conflicts


def corpus_totals_refresh(*, corpus: Corpus) -> None:
    """Rebuild the corpus bitmap from the table: always right, about a second per million documents."""
    bitmap = bitmap_from_ids([])
    # A plain (server-side on PostgreSQL, so memory stays flat) cursor: model-level iteration
    # costs several seconds per million ids.
    with connection.chunked_cursor() as cursor:
        cursor.execute(f"SELECT id FROM {Document._meta.db_table} WHERE corpus_id = %s", [corpus.pk])
        while rows := cursor.fetchmany(20_000):
            bitmap.update(row[0] for row in rows)
    corpus.documents_bitmap = bitmap_to_bytes(bitmap)
    corpus.document_count = len(bitmap)
    corpus.save(update_fields=["documents_bitmap", "document_count"])


__all__ = ["CorpusImportError", "ImportSummary", "content_hash", "corpus_import", "corpus_totals_refresh", "metadata_canonical"]
