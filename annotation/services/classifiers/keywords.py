"""Keyword matching over a corpus: the semantics of a keyword filter, and a fast scan.

Semantics (the definition every keyword classifier is measured against):
- a document matches if any term occurs in any of the chosen fields: title, text, or any
  named field the import kept in the document's metadata (issue 13: `author`, `mentions`,
  `article`...); a metadata value that is a string is searched as it is, a list is searched
  item by item (its strings, numbers as written; a phrase never spans two items), and a
  document without the field, or with another kind of value there, simply does not match on it;
- matching is case-insensitive (Unicode lower-casing);
- a term matches only as a whole word or phrase: the characters just before and
  just after it must not be word characters (letters, digits, underscore), so
  "cat" does not match "category" or "bobcat" but matches "cat," and "(cat)";
- inside a phrase, any run of whitespace (spaces, tabs, newlines) matches the
  single space of the term: "green coffee" matches "Green  coffee" and
  "green\\ncoffee", but not "green-coffee";
- a phrase never spans two fields (the title and the text, say).

Why a scan and not an index: measured in bench/bench_classifier.py (see
docs/benchmarks.md). Each term's first word is searched with `str.find` (C
speed) in large lower-cased chunks of documents, and only the hits are checked
with a regular expression; after a hit the rest of that document is skipped.
That is several times faster than one alternation regex, and building a token
index at import time would have cost more than the import itself.

One pass for all terms instead of one `str.find` pass per term was measured again
for issue 15 (20,000 documents, 10 terms, same results): one regex over the terms'
first words took 1.5 s against 0.7 s (rare terms) and 1.0 s against 0.3 s (frequent
words); a C Aho–Corasick automaton (pyahocorasick) 0.63 s against 0.71 s on rare terms
but 1.2 s against 0.2 s on frequent words (it reports every hit, where `find` stops at
the first per document). So the per-term `find` stays; a build scales out instead, by
scanning id-range shards in parallel (annotation/services/classifiers/classifier_builds.py).
"""
from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from pyroaring import BitMap

from annotation.models import Corpus, Document
from core.errors import ApplicationError

FIELDS = ("title", "text")
SCAN_CHUNK_DOCUMENTS = 5000
# Between the title and the text of one document, and between documents: neither
# is whitespace or a word character, so phrases and boundaries never cross them.
FIELD_SEPARATOR = "\x01"
DOCUMENT_SEPARATOR = "\x00"
_WORD_CHAR = re.compile(r"\w")
_WHITESPACE = re.compile(r"\s+")


class KeywordError(ApplicationError):
    pass


def terms_normalize(terms: Iterable[str]) -> list[str]:
    """Lower-cased, whitespace-collapsed, de-duplicated terms in their given order."""
    seen: dict[str, None] = {}
    for term in terms:
        normalized = _WHITESPACE.sub(" ", str(term)).strip().lower()
        if normalized:
            seen.setdefault(normalized, None)
    return list(seen)


def terms_parse(text: str) -> list[str]:
    """Terms from a comma- or newline-separated string, as typed by an analyst."""
    return terms_normalize(re.split(r"[,\n]", text))


MAX_FIELD_NAME = 100


def _field_name(name: str) -> str:
    name = str(name).strip()
    return name.lower() if name.lower() in FIELDS else name  # title/text in any case; metadata keys as written


def fields_normalize(fields: Iterable[str] | None, *, available: Iterable[str] | None = None) -> list[str]:
    """title and text first (in that order), then metadata field names in the order given.

    Without `available` only title and text are accepted (what every caller had before issue 13); with it, any
    name in `available` (the corpus's fields, `corpus_keyword_fields`) is.
    """
    chosen = list(dict.fromkeys(_field_name(f) for f in (fields or FIELDS) if str(f).strip()))
    allowed = list(dict.fromkeys([*FIELDS, *(available or ())]))
    unknown = [f for f in chosen if f not in allowed]
    if unknown:
        raise KeywordError(f"unknown field(s) {', '.join(unknown)}: choose among {', '.join(allowed)}")
    if not chosen:
        raise KeywordError(f"choose at least one field among {', '.join(allowed)}")
    too_long = [f for f in chosen if len(f) > MAX_FIELD_NAME]
    if too_long:
        raise KeywordError(f"a field name is at most {MAX_FIELD_NAME} characters")
    return [f for f in FIELDS if f in chosen] + [f for f in chosen if f not in FIELDS]


# Documents read to learn a corpus's metadata fields (the first ones by id: cheap, and an import writes
# every record with the same fields in practice); a field only later documents carry is still found by
# `corpus_has_field`, which the services ask before refusing a name.
FIELD_SAMPLE_DOCUMENTS = 1000


def _searchable(value: object) -> bool:
    if isinstance(value, str):
        return True
    return isinstance(value, list) and any(isinstance(item, (str, int, float)) for item in value)


def corpus_keyword_fields(*, corpus: Corpus, sample: int = FIELD_SAMPLE_DOCUMENTS) -> list[str]:
    """title, text and the metadata keys holding text (strings or lists) in the first `sample` documents."""
    keys: dict[str, None] = {}
    rows = Document.objects.filter(corpus=corpus).order_by("pk").values_list("metadata", flat=True)[:sample]
    for metadata in rows:
        if isinstance(metadata, dict):
            for key, value in metadata.items():
                if key not in FIELDS and _searchable(value):
                    keys.setdefault(key, None)
    return [*FIELDS, *sorted(keys)]


def corpus_has_field(*, corpus: Corpus, name: str) -> bool:
    return name in FIELDS or Document.objects.filter(corpus=corpus, metadata__has_key=name).exists()


def fields_for_corpus(fields: Iterable[str] | None, *, corpus: Corpus) -> list[str]:
    """fields_normalize against the corpus's fields: a sampled field, or one some document has."""
    available = corpus_keyword_fields(corpus=corpus)
    wanted = [_field_name(f) for f in (fields or FIELDS) if str(f).strip()]
    extra = [f for f in wanted if f not in available and len(f) <= MAX_FIELD_NAME and corpus_has_field(corpus=corpus, name=f)]
    return fields_normalize(fields, available=[*available, *extra])


def _body(term: str) -> str:
    return r"\s+".join(re.escape(word) for word in term.split(" "))


@dataclass(frozen=True)
class _Term:
    term: str
    first_word: str
    pattern: re.Pattern  # anchored at the start of the first word, checks the end boundary


class KeywordMatcher:
    """Matches normalised terms in lower-cased text according to the semantics above."""

    def __init__(self, terms: Sequence[str]) -> None:
        normalized = terms_normalize(terms)
        if not normalized:
            raise KeywordError("give at least one non-empty term")
        self.terms = normalized
        self._terms = [
            _Term(
                term=term,
                first_word=term.split(" ")[0],
                pattern=re.compile(_body(term) + (r"(?!\w)" if _WORD_CHAR.match(term[-1]) else "")),
            )
            for term in normalized
        ]
        self._any = re.compile(
            "|".join(
                (r"(?<!\w)" if _WORD_CHAR.match(t.term[0]) else "") + t.pattern.pattern
                for t in sorted(self._terms, key=lambda t: -len(t.term))
            )
        )

    @staticmethod
    def _starts_word(text: str, pos: int, term_first: str) -> bool:
        # The term itself may start with a non-word character ("#apple"): then no check is needed.
        if pos == 0 or not _WORD_CHAR.match(term_first[0]):
            return True
        return not _WORD_CHAR.match(text[pos - 1])

    def matching_pieces(self, text: str, starts: list[int]) -> set[int]:
        """Indices of the pieces (documents) of `text` that match; `starts` are their start offsets."""
        found: set[int] = set()
        count = len(starts)
        ends = [*starts[1:], len(text)]
        for term in self._terms:
            unfound = count - len(found)
            if unfound == 0:
                break
            if unfound * 4 < count:
                # Most documents already match (frequent words): search only the others, one by one.
                for piece in range(count):
                    if piece not in found and self._first_match(text, term, starts[piece], ends[piece]) != -1:
                        found.add(piece)
                continue
            pos = text.find(term.first_word)
            while pos != -1:
                piece = bisect_right(starts, pos) - 1
                if piece in found or (self._starts_word(text, pos, term.first_word) and term.pattern.match(text, pos)):
                    found.add(piece)
                    # The rest of this document cannot add anything.
                    pos = text.find(term.first_word, ends[piece])
                else:
                    pos = text.find(term.first_word, pos + 1)
        return found

    def _first_match(self, text: str, term: _Term, start: int, end: int) -> int:
        pos = text.find(term.first_word, start, end)
        while pos != -1:
            match = term.pattern.match(text, pos, end)
            if match and self._starts_word(text, pos, term.first_word):
                return pos
            pos = text.find(term.first_word, pos + 1, end)
        return -1

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Non-overlapping (start, end) offsets of matches in `text` (any case), for highlighting."""
        lowered = text.lower()
        if len(lowered) != len(text):
            # Rare scripts change length when lower-cased; offsets would be wrong, so do not highlight.
            return []
        return [match.span() for match in self._any.finditer(lowered)]

    def matches(self, text: str) -> bool:
        return bool(self.matching_pieces(text.lower(), [0]))


def _metadata_text(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return FIELD_SEPARATOR.join(str(item) for item in value
                                    if isinstance(item, (str, int, float)) and not isinstance(item, bool))
    return ""


def _columns(fields: Sequence[str]) -> list[str]:
    columns = [f for f in FIELDS if f in fields]
    if any(f not in FIELDS for f in fields):
        columns.append("metadata")
    return columns


def _pieces(rows: Iterable[tuple], fields: Sequence[str]) -> Iterator[tuple[int, str]]:
    """rows: (pk, *_columns(fields)); yields (pk, the lower-cased searchable text of the document)."""
    columns = _columns(fields)
    if columns == ["title", "text"] and len(fields) == 2:  # the common case, kept as fast as before
        for pk, title, text in rows:
            yield pk, f"{(title or '').lower()}{FIELD_SEPARATOR}{(text or '').lower()}"
        return
    if len(columns) == 1 and columns[0] in FIELDS:
        for pk, value in rows:
            yield pk, (value or "").lower()
        return
    extra = [f for f in fields if f not in FIELDS]
    for pk, *values in rows:
        parts = [value or "" for value in values[:-1]]  # title/text, then the metadata dict
        metadata = values[-1] if isinstance(values[-1], dict) else {}
        parts.extend(_metadata_text(metadata.get(key)) for key in extra)
        yield pk, FIELD_SEPARATOR.join(parts).lower()


def _scan_rows(matcher: KeywordMatcher, rows: Iterable[tuple], fields: Sequence[str],
               progress: Callable[[int], None] | None = None) -> BitMap:
    """rows: (pk, *_columns(fields)); returns the pks that match. `progress(n)` after each chunk of n documents."""
    found = BitMap()
    chunk_ids: list[int] = []
    pieces: list[str] = []

    def flush() -> None:
        starts = []
        offset = 0
        for piece in pieces:
            starts.append(offset)
            offset += len(piece) + 1
        big = DOCUMENT_SEPARATOR.join(pieces)
        for index in matcher.matching_pieces(big, starts):
            found.add(chunk_ids[index])
        if progress is not None:
            progress(len(pieces))

    for pk, piece in _pieces(rows, fields):
        chunk_ids.append(pk)
        pieces.append(piece)
        if len(pieces) >= SCAN_CHUNK_DOCUMENTS:
            flush()
            chunk_ids, pieces = [], []
    if pieces:
        flush()
    return found


def keyword_scan(*, corpus: Corpus, terms: Sequence[str], fields: Sequence[str] = FIELDS,
                 pk_range: tuple[int, int] | None = None, progress: Callable[[int], None] | None = None) -> BitMap:
    """Document pks of the corpus matching any term, by one streaming pass over the chosen fields.

    `fields` must be normalised already when they name metadata fields (fields_for_corpus); `pk_range`
    (lo, hi) restricts the scan to lo <= pk < hi (one shard of a build); `progress(n)` is called after
    every chunk of n documents scanned.
    """
    fields = fields_normalize(fields, available=fields)
    matcher = KeywordMatcher(terms)
    documents = Document.objects.filter(corpus=corpus)
    if pk_range is not None:
        documents = documents.filter(pk__gte=pk_range[0], pk__lt=pk_range[1])
    rows = documents.order_by().values_list("pk", *_columns(fields)).iterator(chunk_size=SCAN_CHUNK_DOCUMENTS)
    return _scan_rows(matcher, rows, fields, progress)


def keyword_scan_documents(*, pks: Sequence[int], terms: Sequence[str], fields: Sequence[str] = FIELDS) -> BitMap:
    """Like keyword_scan, restricted to the given document pks (fetched in chunks)."""
    fields = fields_normalize(fields, available=fields)
    matcher = KeywordMatcher(terms)
    columns = _columns(fields)

    def rows() -> Iterator[tuple]:
        for start in range(0, len(pks), 900):
            chunk = pks[start:start + 900]
            yield from Document.objects.filter(pk__in=chunk).order_by().values_list("pk", *columns)

    return _scan_rows(matcher, rows(), fields)
