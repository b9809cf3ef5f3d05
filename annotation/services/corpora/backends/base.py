"""The corpus backend interface: the five operations that touch a whole corpus, and its snapshot.

Only five operations ever read the whole corpus (issue 29): its size, the region counts of
classifiers (the Venn cells of a pair and of further classifiers), seeded uniform draws inside
a region (or a score stratum of it), a classifier evaluated as a query, and fetching the sampled
documents' text.  A backend runs them where the corpus lives (the app's database, DuckDB over
Parquet files, Spark); PostgreSQL stores only what was sampled.

Draws are reproducible from the seed and the snapshot alone, and identical on every engine:
the documents of a region are ordered by ``md5("<seed>:<id>")`` (hex, then the id as the tie-break)
and the first n are taken.  md5 exists with the same definition in PostgreSQL, DuckDB, Spark and
Python's hashlib, and no engine's own sampler (TABLESAMPLE, rand()) is used: those depend on the
engine, its version and the file layout.  A prefix of a hash order is a simple random sample
(every n-subset equally likely for a uniformly random seed), and a top-up that excludes the
documents already drawn takes the next ones of the same order, so the union stays an SRS.

The snapshot names the state of the corpus a count or draw measured (the files' names, sizes and
modification times; the database corpus's bitmap of document ids), is stored with every draw, and
a change between plan and draw is refused with the difference spelled out (``snapshot_explain``).
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Protocol, runtime_checkable

from core.errors import ApplicationError


class BackendError(ApplicationError):
    """The corpus's engine cannot do what was asked (unknown field, unreachable files); the message says why."""


class CorpusChangedError(ApplicationError):
    """The corpus changed between the plan and the draw: the sample would not measure the planned corpus."""

    http_status: ClassVar[int] = 409
    code: ClassVar[str] = "conflict"


# --------------------------------------------------------------------------- classifiers as queries


@dataclass(frozen=True)
class KeywordQuery:
    """Any of ``terms`` as a whole word or phrase, case-insensitively, in any of ``fields``
    (annotation.services.classifiers.keywords gives the semantics). The terms are normalised already
    (keywords.terms_normalize, as a keyword classifier's definition stores them): the engines compile them as given."""

    terms: tuple[str, ...]
    fields: tuple[str, ...] = ("title", "text")


@dataclass(frozen=True)
class FieldValueQuery:
    """The field's value, trimmed and lower-cased, is one of ``values`` (annotation.services.classifiers.field_values)."""

    field: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class IdsQuery:
    """An uploaded retrieved set: the documents whose id is listed (joined by id in the engine)."""

    ids: tuple[str, ...]


@dataclass(frozen=True)
class ScoresQuery:
    """Uploaded scores joined by id: retrieved when score >= threshold."""

    scores: tuple[tuple[str, float], ...]
    threshold: float


@dataclass(frozen=True)
class StoredClassifierQuery:
    """A classifier already evaluated in the app's database (its bitmap): the database backend only."""

    classifier_id: int


ClassifierQuery = KeywordQuery | FieldValueQuery | IdsQuery | ScoresQuery | StoredClassifierQuery


@dataclass(frozen=True)
class ScoreRange:
    """A score stratum: documents whose uploaded score s satisfies low <= s < high (None: unbounded)."""

    scores: ScoresQuery
    low: float | None
    high: float | None


@dataclass(frozen=True)
class RegionQuery:
    """A region: membership (True: retrieved, False: not, None: either) in each classifier, optionally one score stratum.

    The pair's regions: A12 = (T, T), B1 = (T, F), B2 = (F, T), N = (F, F), A1 = (T, None), A2 = (None, T);
    a further classifier's R = (T,); the corpus U = no classifiers.
    """

    classifiers: tuple[ClassifierQuery, ...] = ()
    membership: tuple[bool | None, ...] = ()
    stratum: ScoreRange | None = None

    def __post_init__(self) -> None:
        if len(self.classifiers) != len(self.membership):
            raise ValueError("one membership per classifier")


PAIR_MEMBERSHIP: Mapping[str, tuple[bool | None, bool | None]] = {
    "A12": (True, True), "B1": (True, False), "B2": (False, True), "N": (False, False),
    "A1": (True, None), "A2": (None, True),
}


def pair_region(*, c1: ClassifierQuery, c2: ClassifierQuery, code: str, stratum: ScoreRange | None = None) -> RegionQuery:
    try:
        membership = PAIR_MEMBERSHIP[code]
    except KeyError:
        raise BackendError(f"Region {code!r} is not a region of a pair (use one of {', '.join(PAIR_MEMBERSHIP)}).") from None
    return RegionQuery(classifiers=(c1, c2), membership=membership, stratum=stratum)


def pair_counts(cells: Mapping[tuple[bool, ...], int]) -> dict[str, int]:
    """The pair's region sizes from the four cells of (in c1, in c2): A1, A2, A12, B1, B2, N."""
    tt, tf = cells.get((True, True), 0), cells.get((True, False), 0)
    ft, ff = cells.get((False, True), 0), cells.get((False, False), 0)
    return {"A1": tt + tf, "A2": tt + ft, "A12": tt, "B1": tf, "B2": ft, "N": ff}


# --------------------------------------------------------------------------- snapshots


@dataclass(frozen=True)
class Snapshot:
    """Which state of the corpus was measured: ``token`` is compared; ``manifest`` explains a difference.

    manifest: (name, size in bytes, modification time in ns) per file for file corpora; for the database,
    one row ("documents", count, 0) — its token is a hash of the corpus's document ids.
    """

    engine: str
    token: str
    manifest: tuple[tuple[str, int, int], ...] = field(default=())


def snapshot_token(engine: str, manifest: Iterable[tuple[str, int, int]]) -> str:
    digest = hashlib.sha256()
    for name, size, mtime in sorted(manifest):
        digest.update(f"{name}\x00{size}\x00{mtime}\n".encode())
    return f"{engine}:{digest.hexdigest()[:32]}"


def snapshot_explain(*, before: Sequence[Sequence], after: Snapshot) -> list[str]:
    """What changed between a recorded manifest and the current snapshot, in words (files added, removed, rewritten)."""
    old = {str(row[0]): (int(row[1]), int(row[2])) for row in before}
    new = {name: (size, mtime) for name, size, mtime in after.manifest}
    changes = [f"{name} added ({new[name][0]} bytes)" for name in sorted(new.keys() - old.keys())]
    changes += [f"{name} removed" for name in sorted(old.keys() - new.keys())]
    for name in sorted(old.keys() & new.keys()):
        if old[name] != new[name]:
            if old[name][0] != new[name][0]:
                changes.append(f"{name} rewritten ({old[name][0]} -> {new[name][0]} bytes)")
            else:
                changes.append(f"{name} rewritten (same size, modified since)")
    return changes


# --------------------------------------------------------------------------- draws


def draw_key(*, seed: int, document_id: str) -> str:
    """The sort key of a document in the draw of ``seed``: md5 of "<seed>:<id>" in hex (the SQL engines compute the same)."""
    return hashlib.md5(f"{int(seed)}:{document_id}".encode(), usedforsecurity=False).hexdigest()


def hash_order_take(*, seed: int, ids: Iterable[str], n: int, exclude: Iterable[str] = ()) -> list[str]:
    """The first n of ``ids`` (minus ``exclude``) in the draw order of ``seed`` — the reference every engine matches."""
    excluded = set(exclude)
    keyed = sorted((draw_key(seed=seed, document_id=i), i) for i in ids if i not in excluded)
    return [i for _, i in keyed[: max(0, n)]]


@dataclass(frozen=True)
class DocumentRecord:
    """A sampled document's content, to be stored in the app's database for annotators."""

    external_id: str
    title: str
    text: str
    metadata: dict


# --------------------------------------------------------------------------- the interface


@runtime_checkable
class CorpusBackend(Protocol):
    """The five whole-corpus operations plus the snapshot. Ids are the corpus's own document ids, as text."""

    engine: str

    def snapshot(self) -> Snapshot:
        """The identity of the corpus's current state."""
        ...

    def size(self) -> int:
        """1. The number of documents."""
        ...

    def region_counts(self, classifiers: Sequence[ClassifierQuery]) -> dict[tuple[bool, ...], int]:
        """2. The count of every non-empty membership cell of the classifiers (one pass over the corpus)."""
        ...

    def region_size(self, region: RegionQuery) -> int:
        """2'. The number of documents of one region (or score stratum)."""
        ...

    def draw(self, region: RegionQuery, *, n: int, seed: int, exclude: Sequence[str] = ()) -> list[str]:
        """3. The first n ids of the region (minus ``exclude``) in the order of md5("<seed>:<id>"), in that order."""
        ...

    def classifier_count(self, query: ClassifierQuery) -> int:
        """4. A classifier evaluated as a query: how many documents it retrieves."""
        ...

    def fetch(self, ids: Sequence[str]) -> list[DocumentRecord]:
        """5. The sampled documents' content, in the order of ``ids`` (missing ids are left out)."""
        ...


# --------------------------------------------------------------------------- keyword terms as engine regexes

_ASCII_WORD = re.compile(r"[A-Za-z0-9_]")
_WORD_CHAR = re.compile(r"\w")
# A word character for RE2 (DuckDB) and Java (Spark) alike: letters, digits (any script) and the underscore.
_ENGINE_WORD = r"\p{L}\p{N}_"


def _engine_escape(text: str) -> str:
    # Escape ASCII punctuation only: both RE2 and Java read "\<punctuation>" as the literal character.
    return "".join(("\\" + ch) if ch.isascii() and not ch.isalnum() and ch != "_" else ch for ch in text)


def keyword_prefilter_regex(terms: Sequence[str]) -> str:
    """The terms without their word boundaries: a superset of ``keyword_regex``'s matches that RE2 scans much
    faster (a case-folded literal search); the exact regex runs only on the documents it selects."""
    return "|".join(r"\s+".join(_engine_escape(word) for word in term.split(" ")) for term in terms)


def keyword_regex(terms: Sequence[str]) -> str:
    """One engine regex (RE2 / Java syntax, case-insensitivity added by the dialect) for normalised terms:
    each term as a whole word or phrase, runs of whitespace matching the term's single spaces."""
    parts = []
    for term in terms:
        body = r"\s+".join(_engine_escape(word) for word in term.split(" "))
        left = f"(?:^|[^{_ENGINE_WORD}])" if _WORD_CHAR.match(term[0]) else ""
        right = f"(?:$|[^{_ENGINE_WORD}])" if _WORD_CHAR.match(term[-1]) else ""
        parts.append(f"{left}{body}{right}")
    return "|".join(f"(?:{p})" for p in parts)
