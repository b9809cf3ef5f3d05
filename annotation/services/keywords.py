"""Keyword matching over a corpus: the semantics of a keyword filter, and a fast scan.

Semantics (the definition every keyword classifier is measured against):
- a document matches if any term occurs in any of the chosen fields (title, text);
- matching is case-insensitive (Unicode lower-casing);
- a term matches only as a whole word or phrase: the characters just before and
  just after it must not be word characters (letters, digits, underscore), so
  "cat" does not match "category" or "bobcat" but matches "cat," and "(cat)";
- inside a phrase, any run of whitespace (spaces, tabs, newlines) matches the
  single space of the term: "green coffee" matches "Green  coffee" and
  "green\\ncoffee", but not "green-coffee";
- a phrase never spans the title and the text.

Why a scan and not an index: measured in bench/bench_classifier.py (see
docs/benchmarks.md). Each term's first word is searched with `str.find` (C
speed) in large lower-cased chunks of documents, and only the hits are checked
with a regular expression; after a hit the rest of that document is skipped.
That is several times faster than one alternation regex, and building a token
index at import time would have cost more than the import itself.
"""
from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
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


def fields_normalize(fields: Iterable[str] | None) -> list[str]:
    chosen = list(dict.fromkeys(f.strip().lower() for f in (fields or FIELDS) if f.strip()))
    unknown = [f for f in chosen if f not in FIELDS]
    if unknown:
        raise KeywordError(f"unknown field(s) {', '.join(unknown)}: choose among title, text")
    if not chosen:
        raise KeywordError("choose at least one field among title, text")
    return [f for f in FIELDS if f in chosen]


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


def _document_piece(title: str, text: str, fields: Sequence[str]) -> str:
    if len(fields) == 2:
        return f"{title.lower()}{FIELD_SEPARATOR}{text.lower()}"
    return (title if fields[0] == "title" else text).lower()


def _scan_rows(matcher: KeywordMatcher, rows: Iterator[tuple], fields: Sequence[str]) -> BitMap:
    """rows: (pk, title, text); returns the pks that match."""
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

    for pk, title, text in rows:
        chunk_ids.append(pk)
        pieces.append(_document_piece(title or "", text or "", fields))
        if len(pieces) >= SCAN_CHUNK_DOCUMENTS:
            flush()
            chunk_ids, pieces = [], []
    if pieces:
        flush()
    return found


def _columns(fields: Sequence[str]) -> tuple[str, str]:
    return ("title" if "title" in fields else "id"), ("text" if "text" in fields else "id")


def keyword_scan(*, corpus: Corpus, terms: Sequence[str], fields: Sequence[str] = FIELDS) -> BitMap:
    """Document pks of the corpus matching any term, by one streaming pass over the chosen fields."""
    fields = fields_normalize(fields)
    matcher = KeywordMatcher(terms)
    rows = (
        Document.objects.filter(corpus=corpus)
        .order_by()
        .values_list("pk", *fields)
        .iterator(chunk_size=SCAN_CHUNK_DOCUMENTS)
    )
    return _scan_rows(matcher, _as_triples(rows, fields), fields)


def keyword_scan_documents(*, pks: Sequence[int], terms: Sequence[str], fields: Sequence[str] = FIELDS) -> BitMap:
    """Like keyword_scan, restricted to the given document pks (fetched in chunks)."""
    fields = fields_normalize(fields)
    matcher = KeywordMatcher(terms)

    def rows() -> Iterator[tuple]:
        for start in range(0, len(pks), 900):
            chunk = pks[start:start + 900]
            yield from Document.objects.filter(pk__in=chunk).order_by().values_list("pk", *fields)

    return _scan_rows(matcher, _as_triples(rows(), fields), fields)


def _as_triples(rows: Iterable[tuple], fields: Sequence[str]) -> Iterator[tuple]:
    if len(fields) == 2:
        yield from rows
    elif fields[0] == "title":
        for pk, title in rows:
            yield pk, title, ""
    else:
        for pk, text in rows:
            yield pk, "", text
