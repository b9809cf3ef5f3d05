"""Routers: the multi-class classifiers of a topic set (seed 002).

A router sends every document of the corpus to one class of the topic set, or to none of them
(position 0, NONE_OF_THESE). It is stored as its definition, one RouterPrediction row per document
sent to a class (a document without a row went to none), the number of documents per predicted
class (``predicted_counts``, 0..M, from the corpus's document count) and a fingerprint: sha256 over
the kind, the canonical definition and the sorted predictions, so a report names exactly what it
measured.

Two kinds:

* **upload** — a CSV with the header ``id,class``: ``id`` a document's external id, ``class`` a class
  name (any case) or position; ``0``, ``none``, "none of these" or empty mean none of these. Every bad
  line (malformed, unknown class, id not in the corpus, id listed twice) is reported with its line
  number and reason, and nothing is stored; documents the file does not list go to none of these.
* **keywords** — rules ``[{"class": position, "terms": [...], "fields": [...]}]`` in precedence order;
  a document goes to the class of the first rule that matches it (the keyword semantics of
  annotation.services.classifiers.keywords: whole words and phrases, case-insensitive, any of title, text and
  the corpus's metadata fields), computed in one pass over the corpus.
"""
from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from annotation.models import NONE_OF_THESE, Document, Label, Router, RouterPrediction, Topic, TopicClass
from annotation.services.classifiers.keywords import (
    DOCUMENT_SEPARATOR,
    FIELD_SEPARATOR,
    FIELDS,
    SCAN_CHUNK_DOCUMENTS,
    KeywordError,
    KeywordMatcher,
    _metadata_text,
    fields_for_corpus,
)
from annotation.services.corpora.id_resolution import document_ids_resolve
from annotation.services.corpora.retrieved_sets import corpus_documents
from core.errors import ApplicationError

PREDICTION_BATCH = 5000
LOOKUP_CHUNK = 900
MAX_RULES = 200
MAX_ERRORS_SHOWN = 20
MAX_ID_CHARS = 255  # Document.external_id
MAX_FIELD_CHARS = 10_000  # a CSV cell longer than this is refused (csv's own limit is far higher)
ROUTER_CSV_MAX_BYTES = 200_000_000
_NONE_WORDS = {"", "0", "none", "none of these", "none of the above"}


class RouterError(ApplicationError):
    """A router that cannot be created or changed; `lines` lists (line, reason) of a bad upload."""

    def __init__(self, message: str, *, lines: Sequence[tuple[int, str]] = ()) -> None:
        self.lines = list(lines)
        super().__init__(message, extra={"lines": [{"line": n, "problem": p} for n, p in self.lines]})


# --------------------------------------------------------------------------- common


def _topic_set_check(topic: Topic) -> dict[str, int]:
    """{lower-cased class name: position} of a topic set; RouterError for a single topic."""
    if not topic.is_multiclass:
        raise RouterError(f"Topic {topic.name!r} is a single topic: routers belong to topic sets.")
    classes = {name.lower(): position for position, name in
               TopicClass.objects.filter(topic=topic).values_list("position", "name")}
    if not classes:
        raise RouterError(f"Topic set {topic.name!r} has no topics yet.")
    return classes


def _name_check(*, topic: Topic, name: str) -> str:
    name = (name or "").strip()
    if not name:
        raise RouterError("the router needs a name")
    if len(name) > 200:
        raise RouterError("a router's name is at most 200 characters")
    if Router.objects.filter(topic=topic, name=name).exists():
        raise RouterError(f"topic set {topic.name!r} already has a router named {name!r}; choose another name")
    return name


def _canonical_definition(kind: str, definition: Mapping[str, Any]) -> dict[str, Any]:
    if kind == Router.Kind.KEYWORDS:
        # Order matters (first matching rule wins): the rules stay in order, each rule's terms sorted.
        return {"rules": [{"class": int(rule["class"]), "terms": sorted(rule["terms"]), "fields": sorted(rule["fields"])}
                          for rule in definition["rules"]]}
    return {}  # upload: the predictions are the whole definition


def router_fingerprint(*, kind: str, definition: Mapping[str, Any], predictions: Mapping[int, int]) -> str:
    """sha256 over the kind, the canonical definition and the predictions sorted by document id."""
    digest = hashlib.sha256()
    digest.update(json.dumps({"kind": str(kind), "definition": _canonical_definition(kind, definition)},
                             sort_keys=True).encode())
    digest.update(b"\n")
    for document_id in sorted(predictions):
        digest.update(f"{document_id}:{predictions[document_id]}\n".encode())
    return digest.hexdigest()


def _router_store(*, topic: Topic, name: str, kind: str, definition: dict[str, Any],
                  predictions: Mapping[int, int], n_classes: int) -> Router:
    """Store a router whose predictions ({document id: class 1..M}, none-of-these left out) are computed."""
    counts = [0] * (n_classes + 1)
    for predicted in predictions.values():
        counts[predicted] += 1
    counts[NONE_OF_THESE] = max(0, len(corpus_documents(corpus_id=topic.corpus_id)) - sum(counts[1:]))
    fingerprint = router_fingerprint(kind=kind, definition=definition, predictions=predictions)
    try:
        with transaction.atomic():
            router = Router.objects.create(
                topic=topic, name=name, kind=kind, definition=definition, predicted_counts=counts,
                fingerprint=fingerprint,
            )
            _predictions_insert(router_id=router.pk, predictions=predictions)
    except IntegrityError as exc:  # a concurrent create with the same name
        raise RouterError(f"topic set {topic.name!r} already has a router named {name!r}; choose another name") from exc
    return router


def _predictions_insert(*, router_id: int, predictions: Mapping[int, int]) -> None:
    """Insert the prediction rows in batches of PREDICTION_BATCH with plain parameterised INSERTs.

    bulk_create builds a model instance and compiles SQL per row: 80,000 predictions took 29 s of a 35 s
    upload in bench/bench_routers.py (SQLite, loaded machine); executemany of the same rows takes a few.
    """
    table = RouterPrediction._meta.db_table
    quote = connection.ops.quote_name
    sql = (f"INSERT INTO {quote(table)} ({quote('router_id')}, {quote('document_id')}, {quote('predicted')}) "
           "VALUES (%s, %s, %s)")
    rows = [(router_id, document_id, predicted) for document_id, predicted in sorted(predictions.items())]
    with connection.cursor() as cursor:
        for start in range(0, len(rows), PREDICTION_BATCH):
            cursor.executemany(sql, rows[start:start + PREDICTION_BATCH])


# --------------------------------------------------------------------------- upload


def _short(value: str, limit: int = 60) -> str:
    return value if len(value) <= limit else value[:limit] + "…"


def _lines(data: bytes) -> Iterator[tuple[int, str | None]]:
    """(line number, text) of each physical line; text None when the line is not UTF-8."""
    for number, raw in enumerate(data.splitlines(), start=1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            yield number, None
            continue
        yield number, text.lstrip("\ufeff") if number == 1 else text


def _cells(text: str) -> list[str] | str:
    """The CSV cells of one line, or the reason it cannot be read."""
    if "\x00" in text:
        return "contains a NUL character"
    if len(text) > 2 * MAX_FIELD_CHARS + 10:
        return f"is longer than {2 * MAX_FIELD_CHARS} characters"
    try:
        rows = list(csv.reader([text], strict=True))
    except csv.Error as exc:
        return f"is not valid CSV ({exc})"
    return rows[0] if rows else []


def _class_of(raw: str, *, classes: Mapping[str, int], n_classes: int) -> int | None:
    value = " ".join(raw.split()).lower()
    if value in _NONE_WORDS:
        return NONE_OF_THESE
    if value.isdigit():
        position = int(value)
        return position if 0 <= position <= n_classes else None
    return classes.get(value)


def router_create_from_csv(*, topic: Topic, name: str, data: bytes, source_name: str) -> Router:
    """A router from an uploaded CSV ``id,class`` (module docstring); all or nothing.

    RouterError lists every bad line (number and reason) in its ``lines`` and the first ones in its message.
    """
    classes = _topic_set_check(topic)
    n_classes = max(classes.values())
    name = _name_check(topic=topic, name=name)
    if len(data) > ROUTER_CSV_MAX_BYTES:
        raise RouterError(f"the file is larger than {ROUTER_CSV_MAX_BYTES // 1_000_000} MB")
    problems: list[tuple[int, str]] = []
    wanted: dict[str, tuple[int, int]] = {}  # external id -> (line, class)
    header_seen = False
    for number, text in _lines(data):
        if text is None:
            problems.append((number, "is not valid UTF-8 text"))
            continue
        if not text.strip():
            continue
        cells = _cells(text)
        if isinstance(cells, str):
            problems.append((number, cells))
            continue
        cells = [cell.strip() for cell in cells]
        if not header_seen:
            header_seen = True
            if [cell.lower() for cell in cells] != ["id", "class"]:
                problems.append((number, "the first line must be the header “id,class”"))
                break
            continue
        if len(cells) != 2:
            problems.append((number, f"expected two fields (id,class), found {len(cells)}"))
            continue
        external_id, raw_class = cells
        if not external_id:
            problems.append((number, "the id is empty"))
            continue
        if len(external_id) > MAX_ID_CHARS or len(raw_class) > MAX_FIELD_CHARS:
            problems.append((number, f"a field is too long (ids have at most {MAX_ID_CHARS} characters)"))
            continue
        position = _class_of(raw_class, classes=classes, n_classes=n_classes)
        if position is None:
            problems.append((number, f"unknown class {_short(raw_class)!r}: give a topic's name, a position 1–"
                                     f"{n_classes}, or 0/none for none of these"))
            continue
        if external_id in wanted:
            problems.append((number, f"id {_short(external_id)!r} is listed twice (first on line {wanted[external_id][0]})"))
            continue
        wanted[external_id] = (number, position)
    if not header_seen and not problems:
        raise RouterError(f"{source_name}: the file is empty; it needs the header “id,class” and one line per document")
    resolved = document_ids_resolve(corpus=topic.corpus, external_ids=wanted.keys()) if wanted else {}
    problems += [(number, f"id {_short(external_id)!r} is not a document of corpus {topic.corpus.name!r}")
                 for external_id, (number, _) in wanted.items() if external_id not in resolved]
    if problems:
        problems.sort()
        shown = "; ".join(f"line {number}: {reason}" for number, reason in problems[:MAX_ERRORS_SHOWN])
        more = f" (and {len(problems) - MAX_ERRORS_SHOWN} more)" if len(problems) > MAX_ERRORS_SHOWN else ""
        raise RouterError(f"{source_name}: {len(problems)} bad line(s), nothing stored — {shown}{more}", lines=problems)
    if not wanted:
        raise RouterError(f"{source_name}: no document is listed under the header “id,class”")
    predictions = {resolved[external_id]: position for external_id, (_, position) in wanted.items()
                   if position != NONE_OF_THESE}
    definition = {"source": source_name[:255], "sha256": hashlib.sha256(data).hexdigest(), "listed": len(wanted)}
    return _router_store(topic=topic, name=name, kind=Router.Kind.UPLOAD, definition=definition,
                         predictions=predictions, n_classes=n_classes)


# --------------------------------------------------------------------------- keywords


def _rules_clean(*, topic: Topic, rules: Sequence[Mapping[str, Any]], classes: Mapping[str, int]) -> list[dict[str, Any]]:
    n_classes = max(classes.values())
    if not rules:
        raise RouterError("give at least one rule (a topic and its terms)")
    if len(rules) > MAX_RULES:
        raise RouterError(f"a router has at most {MAX_RULES} rules")
    cleaned = []
    # Checking fields against the corpus samples its documents: once per distinct field list, not per rule.
    checked_fields: dict[tuple[str, ...], list[str]] = {}
    for index, rule in enumerate(rules, start=1):
        if not isinstance(rule, Mapping):
            raise RouterError(f"rule {index} must give a class, its terms and its fields")
        raw_class = rule.get("class")
        position = None
        if isinstance(raw_class, int) and not isinstance(raw_class, bool):
            position = raw_class if 1 <= raw_class <= n_classes else None
        elif isinstance(raw_class, str):
            position = _class_of(raw_class, classes=classes, n_classes=n_classes) or None
        if position is None:
            raise RouterError(f"rule {index}: class {raw_class!r} is not one of the topics 1–{n_classes}")
        terms = rule.get("terms")
        if isinstance(terms, str) or not isinstance(terms, Iterable):
            raise RouterError(f"rule {index}: the terms must be a list")
        try:
            matcher = KeywordMatcher([str(term) for term in terms])
            # No default: a rule reads only the fields it names (never every field silently).
            asked = rule.get("fields")
            if not asked:
                raise RouterError(f"rule {index}: give its fields, where to look for the terms "
                                  f"({', '.join(FIELDS)} or a metadata field); none is read by default")
            key = tuple(str(f) for f in asked) if isinstance(asked, list | tuple) else (str(asked),)
            if key not in checked_fields:
                checked_fields[key] = fields_for_corpus(asked, corpus=topic.corpus)
            fields = checked_fields[key]
        except KeywordError as exc:
            raise RouterError(f"rule {index}: {exc.message}") from None
        cleaned.append({"class": position, "terms": matcher.terms, "fields": fields})
    return cleaned


def _piece(title: str | None, text: str | None, metadata: Any, fields: Sequence[str]) -> str:
    """The lower-cased searchable text of one document over `fields` (keywords._pieces' layout)."""
    parts = []
    if "title" in fields:
        parts.append(title or "")
    if "text" in fields:
        parts.append(text or "")
    extra = [f for f in fields if f not in FIELDS]
    if extra:
        values = metadata if isinstance(metadata, dict) else {}
        parts.extend(_metadata_text(values.get(key)) for key in extra)
    return FIELD_SEPARATOR.join(parts).lower()


def router_keyword_predictions(
    *, topic: Topic, rules: Sequence[Mapping[str, Any]], progress: Callable[[int], None] | None = None
) -> dict[int, int]:
    """{document id: class} of the corpus's documents some rule matches (first rule wins), in one pass.

    `rules` must be clean (``_rules_clean``). The corpus is read once, in chunks of SCAN_CHUNK_DOCUMENTS
    documents; a document takes the first rule in order that matches it. `progress(n)` is called after
    each chunk of n documents (a build task reports it).
    """
    matchers = [(KeywordMatcher(rule["terms"]), tuple(rule["fields"]), int(rule["class"])) for rule in rules]
    need_metadata = any(f not in FIELDS for _, fields, _ in matchers for f in fields)
    columns = ["pk", "title", "text", *(["metadata"] if need_metadata else [])]
    rows = (Document.objects.filter(corpus_id=topic.corpus_id).order_by()
            .values_list(*columns).iterator(chunk_size=SCAN_CHUNK_DOCUMENTS))
    predictions: dict[int, int] = {}
    chunk: list[tuple] = []

    def flush() -> None:
        # Each distinct set of fields is lower-cased and joined once per chunk; every rule then scans the
        # whole chunk (str.find is cheap next to building the text), and a document takes the first rule
        # in order that matched it.
        texts: dict[tuple[str, ...], tuple[str, list[int]]] = {}
        taken: set[int] = set()
        for matcher, fields, position in matchers:
            if len(taken) == len(chunk):
                break
            if fields not in texts:
                pieces = [_piece(row[1], row[2], row[3] if need_metadata else None, fields) for row in chunk]
                starts, offset = [], 0
                for piece in pieces:
                    starts.append(offset)
                    offset += len(piece) + 1
                texts[fields] = (DOCUMENT_SEPARATOR.join(pieces), starts)
            big, starts = texts[fields]
            for index in matcher.matching_pieces(big, starts):
                if index not in taken:
                    taken.add(index)
                    predictions[chunk[index][0]] = position
        if progress is not None:
            progress(len(chunk))

    for row in rows:
        chunk.append(row)
        if len(chunk) >= SCAN_CHUNK_DOCUMENTS:
            flush()
            chunk = []
    if chunk:
        flush()
    return predictions


def router_create_from_keywords(*, topic: Topic, name: str, rules: Sequence[Mapping[str, Any]]) -> Router:
    """A router from keyword rules in precedence order (module docstring): first matching rule wins."""
    classes = _topic_set_check(topic)
    name = _name_check(topic=topic, name=name)
    cleaned = _rules_clean(topic=topic, rules=rules, classes=classes)
    predictions = router_keyword_predictions(topic=topic, rules=cleaned)
    return _router_store(topic=topic, name=name, kind=Router.Kind.KEYWORDS, definition={"rules": cleaned},
                         predictions=predictions, n_classes=max(classes.values()))


# --------------------------------------------------------------------------- reads and clean-up


def router_predictions(*, router: Router, document_ids: Iterable[int]) -> dict[int, int]:
    """{document id: predicted class} for these documents; 0 (none of these) where the router has no row."""
    ids = list(dict.fromkeys(int(d) for d in document_ids))
    result = dict.fromkeys(ids, NONE_OF_THESE)
    for start in range(0, len(ids), LOOKUP_CHUNK):
        chunk = ids[start:start + LOOKUP_CHUNK]
        result.update(RouterPrediction.objects.filter(router=router, document_id__in=chunk)
                      .order_by().values_list("document_id", "predicted"))
    return result


def routers_for_topic(*, topic: Topic, include_archived: bool = False) -> list[Router]:
    """The topic set's routers by name; archived ones only when asked."""
    routers = Router.objects.filter(topic=topic)
    if not include_archived:
        routers = routers.filter(archived_at__isnull=True)
    return list(routers.order_by("name", "pk"))


def router_archive(*, router: Router) -> Router:
    """Hide the router from lists and from new reports; its predictions stay. Idempotent."""
    Router.objects.filter(pk=router.pk, archived_at__isnull=True).update(archived_at=timezone.now())
    router.refresh_from_db(fields=["archived_at"])
    return router


def router_unarchive(*, router: Router) -> Router:
    Router.objects.filter(pk=router.pk).update(archived_at=None)
    router.refresh_from_db(fields=["archived_at"])
    return router


def router_delete_blockers(*, router: Router) -> list[str]:
    """Why the router cannot be deleted (empty: it can): once the topic set has judged documents, a report
    may have measured it."""
    judged = Label.objects.filter(topic_id=router.topic_id, votes_total__gt=0).count()
    if judged:
        return [f"its topic set has {judged} judged document{'s' if judged != 1 else ''}, so a report may "
                "have measured it"]
    return []


def router_delete(*, router: Router) -> None:
    """Delete a router no report can have measured; else RouterError naming why (archive it instead)."""
    with transaction.atomic():
        Topic.objects.select_for_update().filter(pk=router.topic_id).values_list("pk", flat=True).first()
        reasons = router_delete_blockers(router=router)
        if reasons:
            raise RouterError(f"Router “{router.name}” cannot be deleted: {reasons[0]}. Archive it instead "
                              "(it leaves the lists and new reports; what was measured stays).")
        Router.objects.filter(pk=router.pk).delete()
