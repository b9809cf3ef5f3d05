"""Field-value filters (seed 000 §6.1.3, social signals): documents whose metadata field takes a listed value.

Semantics (what a field-value classifier is measured against):
- the field is a key of Document.metadata (every field of the imported file other than the id and the
  text fields, e.g. ``author`` or ``mentions``);
- a document is retrieved if the field's value equals one of the listed values, compared exactly after
  trimming surrounding whitespace and Unicode case folding ("@BarackObama" matches "@barackobama",
  "obama" does not match "@barackobama" nor "barack obama");
- for a list-valued field (``"mentions": ["@a", "@b"]``) a document is retrieved if any element matches;
- numbers compare by their written form (``42`` matches "42"), booleans as "true"/"false"; a missing
  field, ``null`` or a nested object never matches.

The scan reads only the chosen key of each document's metadata, in chunks (memory stays flat).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from django.db.models.fields.json import KeyTransform
from pyroaring import BitMap

from annotation.models import Classifier, Corpus, Document
from annotation.services.classifiers.classifier import (
    PREVIEW_SAMPLE_DOCUMENTS,
    PREVIEW_SEED,
    ClassifierError,
    classifier_store,
)
from annotation.services.corpora.retrieved_sets import corpus_bitmap

SCAN_CHUNK_DOCUMENTS = 5000
ID_CHUNK = 900  # below SQLite's default limit on query parameters
MAX_VALUES = 10_000
MAX_VALUE_CHARS = 500
MAX_FIELD_CHARS = 200
KEYS_SAMPLE_DOCUMENTS = 500
KEY_EXAMPLES = 5


def value_normalize(value: object) -> str | None:
    """The comparable form of one metadata value (None: never matches)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value.strip().casefold()
    if isinstance(value, (int, float)):
        return str(value).casefold()
    return None


def values_normalize(values: Iterable[str]) -> list[str]:
    """Trimmed, case-folded, de-duplicated values in their given order; blank lines dropped."""
    seen: dict[str, None] = {}
    for value in values:
        normalized = str(value).strip().casefold()
        if normalized:
            seen.setdefault(normalized, None)
    return list(seen)


def _matched(raw: object, wanted: frozenset[str]) -> str | None:
    """The first listed value the field's raw value matches, or None."""
    elements = raw if isinstance(raw, list) else [raw]
    for element in elements:
        normalized = value_normalize(element)
        if normalized is not None and normalized in wanted:
            return normalized
    return None


# --- the corpus's metadata keys ---------------------------------------------


@dataclass(frozen=True)
class MetadataKey:
    name: str
    documents: int  # documents of the sample that have the key
    list_valued: bool  # some sampled value is a list
    examples: list[str]  # a few distinct sampled values, as text


def corpus_metadata_keys(*, corpus: Corpus, sample_size: int = KEYS_SAMPLE_DOCUMENTS) -> list[MetadataKey]:
    """The metadata keys found in a fixed uniform sample of the corpus's documents, most frequent first."""
    all_docs = corpus_bitmap(corpus=corpus)
    if len(all_docs) > sample_size:
        rng = np.random.default_rng(PREVIEW_SEED)
        positions = np.sort(rng.choice(len(all_docs), size=sample_size, replace=False))
        pks = [all_docs[int(i)] for i in positions]
    else:
        pks = list(all_docs)
    counts: Counter[str] = Counter()
    lists: set[str] = set()
    examples: dict[str, dict[str, None]] = {}
    for start in range(0, len(pks), ID_CHUNK):
        for metadata in Document.objects.filter(pk__in=pks[start:start + ID_CHUNK]).values_list("metadata", flat=True):
            if not isinstance(metadata, dict):
                continue
            for key, value in metadata.items():
                counts[key] += 1
                if isinstance(value, list):
                    lists.add(key)
                shown = examples.setdefault(key, {})
                for element in (value if isinstance(value, list) else [value]):
                    if len(shown) < KEY_EXAMPLES and value_normalize(element) is not None:
                        shown.setdefault(str(element)[:80], None)
    return [MetadataKey(name=key, documents=n, list_valued=key in lists, examples=list(examples.get(key, {})))
            for key, n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]


# --- validation and scan ------------------------------------------------------


def _check(*, corpus: Corpus, field: str, values: Sequence[str]) -> tuple[str, list[str]]:
    field = (field or "").strip()
    if not field:
        raise ClassifierError("choose the field whose values select documents")
    if len(field) > MAX_FIELD_CHARS:
        raise ClassifierError(f"the field name is longer than {MAX_FIELD_CHARS} characters")
    normalized = values_normalize(values)
    if not normalized:
        raise ClassifierError("give at least one value (one per line)")
    if len(normalized) > MAX_VALUES:
        raise ClassifierError(f"{len(normalized)} values: at most {MAX_VALUES} are allowed")
    too_long = [v for v in normalized if len(v) > MAX_VALUE_CHARS]
    if too_long:
        raise ClassifierError(f"a value is longer than {MAX_VALUE_CHARS} characters: {too_long[0][:40]}…")
    if not Document.objects.filter(corpus=corpus, metadata__has_key=field).exists():
        known = ", ".join(k.name for k in corpus_metadata_keys(corpus=corpus)[:10]) or "none"
        raise ClassifierError(f"no document of corpus “{corpus.name}” has a field “{field}” (fields found: {known})")
    return field, normalized


def _field_rows(*, field: str, pks: Sequence[int] | None, corpus: Corpus) -> Iterator[tuple[int, object]]:
    """(pk, raw value of metadata[field]) for the corpus (pks None) or the given documents."""
    annotated = Document.objects.annotate(field_value=KeyTransform(field, "metadata")).order_by()
    if pks is None:
        yield from (annotated.filter(corpus=corpus, metadata__has_key=field).values_list("pk", "field_value")
                    .iterator(chunk_size=SCAN_CHUNK_DOCUMENTS))
        return
    for start in range(0, len(pks), ID_CHUNK):
        yield from annotated.filter(pk__in=pks[start:start + ID_CHUNK]).values_list("pk", "field_value")


def field_values_scan(*, corpus: Corpus, field: str, values: Sequence[str],
                      pks: Sequence[int] | None = None) -> tuple[BitMap, Counter[str]]:
    """Retrieved documents (of the corpus, or of ``pks`` only) and how many matched each listed value."""
    wanted = frozenset(values_normalize(values))
    found = BitMap()
    per_value: Counter[str] = Counter()
    for pk, raw in _field_rows(field=field, pks=pks, corpus=corpus):
        hit = _matched(raw, wanted)
        if hit is not None:
            found.add(pk)
            per_value[hit] += 1
    return found, per_value


def classifier_create_field_values(*, corpus: Corpus, name: str, field: str, values: Sequence[str]) -> Classifier:
    """A field-value filter over the whole corpus (semantics in this module's docstring)."""
    field, normalized = _check(corpus=corpus, field=field, values=values)
    retrieved, _ = field_values_scan(corpus=corpus, field=field, values=normalized)
    definition = {"field": field, "values": normalized}
    return classifier_store(corpus=corpus, name=name, kind=Classifier.Kind.FIELD_VALUES, definition=definition,
                            retrieved=retrieved)


# --- preview ------------------------------------------------------------------


@dataclass(frozen=True)
class FieldValuesDocument:
    external_id: str
    title: str
    value: str  # the listed value it matched


@dataclass(frozen=True)
class FieldValuesPreview:
    field: str
    values: list[str]
    retrieved: int  # exact when `estimated` is False, else scaled up from the scanned sample
    estimated: bool
    scanned: int
    corpus_size: int
    per_value: list[tuple[str, int]]  # every listed value with its (sample) count: 0 flags a typo
    sample: list[FieldValuesDocument]


def field_values_preview(*, corpus: Corpus, field: str, values: Sequence[str],
                         sample_size: int = 10) -> FieldValuesPreview:
    """What a field-value filter would retrieve; above PREVIEW_SAMPLE_DOCUMENTS documents, estimated on a sample."""
    field, normalized = _check(corpus=corpus, field=field, values=values)
    all_docs = corpus_bitmap(corpus=corpus)
    total = len(all_docs)
    pks: list[int] | None = None
    scale, scanned = 1.0, total
    if total > PREVIEW_SAMPLE_DOCUMENTS:
        rng = np.random.default_rng(PREVIEW_SEED)
        positions = np.sort(rng.choice(total, size=PREVIEW_SAMPLE_DOCUMENTS, replace=False))
        pks = [all_docs[int(i)] for i in positions]
        scale, scanned = total / PREVIEW_SAMPLE_DOCUMENTS, PREVIEW_SAMPLE_DOCUMENTS
    found, per_value = field_values_scan(corpus=corpus, field=field, values=normalized, pks=pks)
    wanted = frozenset(normalized)
    sample_pks = list(found)[:sample_size]
    sample = []
    rows = Document.objects.filter(pk__in=sample_pks).annotate(field_value=KeyTransform(field, "metadata"))
    for external_id, title, raw in rows.order_by("pk").values_list("external_id", "title", "field_value"):
        sample.append(FieldValuesDocument(external_id=external_id, title=title, value=_matched(raw, wanted) or ""))
    return FieldValuesPreview(
        field=field, values=normalized, retrieved=round(len(found) * scale), estimated=scale != 1.0,
        scanned=scanned, corpus_size=total, per_value=[(v, round(per_value[v] * scale)) for v in normalized],
        sample=sample)
