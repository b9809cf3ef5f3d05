"""Classifiers of a corpus: keyword filters, uploaded retrieved ids, uploaded scores with a threshold.

A classifier is stored as its definition plus its retrieved set (a Roaring bitmap
of Document pks) and a fingerprint: sha256 over the kind, the canonical
definition and the retrieved set, so a report names exactly what it measured.
"""
from __future__ import annotations

import csv
import hashlib
import json
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from django.db import IntegrityError, models, transaction
from django.db.models import ForeignObjectRel, ProtectedError, Q
from django.utils import timezone
from pyroaring import BitMap

from annotation.models import (
    Classifier,
    ClassifierPair,
    ClassifierScore,
    Corpus,
    Document,
    SampleDraw,
    Topic,
    TopicClassifier,
)
from annotation.services.classifiers import keywords
from annotation.services.classifiers.kind_registry import kind_get
from annotation.services.corpora.id_resolution import document_ids_resolve
from annotation.services.corpora.retrieved_sets import bitmap_from_bytes, bitmap_to_bytes, corpus_bitmap
from core.errors import ApplicationError
from estimation.stats.pair_recall import pair_design_problems

UNKNOWN_EXAMPLES = 10
ID_LOOKUP_CHUNK = 900  # below SQLite's default limit on query parameters
# Above this many documents the live preview scans a uniform sample instead of the corpus.
PREVIEW_SAMPLE_DOCUMENTS = 20_000
PREVIEW_SEED = 20141024  # fixed, so the preview does not jump about while the analyst types


class ClassifierError(ApplicationError):
    """A user mistake in defining a classifier; `line` names the offending line of an uploaded file."""

    def __init__(self, message: str, *, line: int | None = None) -> None:
        self.line = line
        super().__init__(message)


class ClassifierFileError(ClassifierError):
    """A problem of an uploaded ids or scores file, as typed values: `upload` (the path read), `line` (None:
    the file as a whole) and `problem`. The message names the path (for the log and commands); a page or the
    API names the file as the user knows it from the values, never by parsing the message."""

    def __init__(self, *, upload: Path | str, problem: str, line: int | None = None) -> None:
        self.upload = str(upload)
        self.problem = problem
        super().__init__(f"{upload}:{line}: {problem}" if line is not None else f"{upload}: {problem}", line=line)

    @property
    def detail(self) -> dict[str, object]:
        """The machine-readable facts (a failed build's `error_detail`); never the server's path."""
        return {"line": self.line, "problem": self.problem}

    def named(self, source: str) -> str:
        """The problem naming the file as the user sent it: "<source>, line N: problem" or "<source>: problem"."""
        return f"{source}, line {self.line}: {self.problem}" if self.line is not None else f"{source}: {self.problem}"


@dataclass
class ClassifierResult:
    classifier: Classifier
    read: int  # distinct ids read from the file
    unknown_count: int = 0
    unknown_examples: list[str] = field(default_factory=list)


# --- fingerprint ------------------------------------------------------------


def _canonical_definition(kind: str, definition: dict) -> dict:
    """What of the definition decides the classifier's output: each kind says (classifiers/kinds/)."""
    return kind_get(kind).fingerprint_parts(definition)


def classifier_fingerprint(*, kind: str, definition: dict, retrieved: BitMap) -> str:
    digest = hashlib.sha256()
    digest.update(json.dumps({"kind": str(kind), "definition": _canonical_definition(kind, definition)}, sort_keys=True).encode())
    digest.update(b"\n")
    digest.update(np.asarray(retrieved.to_array(), dtype="<u4").tobytes())
    return digest.hexdigest()


def classifier_store(*, corpus: Corpus, name: str, kind: str, definition: dict, retrieved: BitMap) -> Classifier:
    """Store a classifier whose retrieved set is already computed (by a service here, a build task or another app).

    Computes the fingerprint; refuses an empty or taken name with ClassifierError.
    """
    name = name.strip()
    if not name:
        raise ClassifierError("the classifier needs a name")
    if Classifier.objects.filter(corpus=corpus, name=name).exists():
        raise ClassifierError(f"corpus {corpus.name!r} already has a classifier named {name!r}")
    try:
        with transaction.atomic():
            return Classifier.objects.create(
                corpus=corpus,
                name=name,
                kind=kind,
                definition=definition,
                fingerprint=classifier_fingerprint(kind=kind, definition=definition, retrieved=retrieved),
                retrieved_bitmap=bitmap_to_bytes(retrieved),
                retrieved_count=len(retrieved),
            )
    except IntegrityError as exc:  # a concurrent create with the same name
        raise ClassifierError(f"corpus {corpus.name!r} already has a classifier named {name!r}") from exc


_save = classifier_store  # the earlier private name, kept for its callers


# --- keywords ---------------------------------------------------------------


def classifier_create_keywords(
    *, corpus: Corpus, name: str, terms: Sequence[str], fields: Sequence[str] = keywords.FIELDS
) -> Classifier:
    """A keyword filter (semantics in annotation/services/classifiers/keywords.py) and its retrieved set."""
    try:
        normalized_terms = keywords.terms_normalize(terms)
        normalized_fields = keywords.fields_for_corpus(fields, corpus=corpus)
        if not normalized_terms:
            raise ClassifierError("give at least one non-empty term")
        retrieved = keywords.keyword_scan(corpus=corpus, terms=normalized_terms, fields=normalized_fields)
    except keywords.KeywordError as exc:
        raise ClassifierError(str(exc)) from exc
    definition = {"terms": normalized_terms, "fields": normalized_fields}
    return classifier_store(corpus=corpus, name=name, kind=Classifier.Kind.KEYWORDS, definition=definition, retrieved=retrieved)


@dataclass(frozen=True)
class PreviewDocument:
    document_id: int
    external_id: str
    title: str
    text: str
    # (start, end) character offsets of matches, for highlighting (empty for fields not searched).
    title_spans: list[tuple[int, int]]
    text_spans: list[tuple[int, int]]


@dataclass(frozen=True)
class PreviewOverlap:
    classifier_id: int
    classifier_name: str
    retrieved_count: int
    overlap: int  # estimated like `retrieved` when the preview is estimated


@dataclass(frozen=True)
class KeywordPreview:
    terms: list[str]
    fields: list[str]
    retrieved: int  # exact when `estimated` is False, else scaled up from the scanned sample
    estimated: bool
    scanned: int  # documents scanned
    corpus_size: int
    sample: list[PreviewDocument]
    overlaps: list[PreviewOverlap]


def keyword_preview(
    *, corpus: Corpus, terms: Sequence[str], fields: Sequence[str] = keywords.FIELDS, sample_size: int = 10
) -> KeywordPreview:
    """What a keyword filter would retrieve, fast enough to call while the analyst types.

    Corpora above PREVIEW_SAMPLE_DOCUMENTS documents are previewed on a fixed uniform
    sample of that many documents: counts are then estimates (flagged `estimated`);
    the exact set is computed when the classifier is created.
    """
    try:
        normalized_terms = keywords.terms_normalize(terms)
        normalized_fields = keywords.fields_for_corpus(fields, corpus=corpus)
        if not normalized_terms:
            raise ClassifierError("give at least one non-empty term")
        all_docs = corpus_bitmap(corpus=corpus)
        total = len(all_docs)
        if total > PREVIEW_SAMPLE_DOCUMENTS:
            rng = np.random.default_rng(PREVIEW_SEED)
            positions = np.sort(rng.choice(total, size=PREVIEW_SAMPLE_DOCUMENTS, replace=False))
            pks = [all_docs[int(i)] for i in positions]
            found = keywords.keyword_scan_documents(pks=pks, terms=normalized_terms, fields=normalized_fields)
            scale, scanned = total / PREVIEW_SAMPLE_DOCUMENTS, PREVIEW_SAMPLE_DOCUMENTS
        else:
            found = keywords.keyword_scan(corpus=corpus, terms=normalized_terms, fields=normalized_fields)
            scale, scanned = 1.0, total
        matcher = keywords.KeywordMatcher(normalized_terms)
    except keywords.KeywordError as exc:
        raise ClassifierError(str(exc)) from exc

    sample_pks = list(found)[:sample_size]
    docs = {d.pk: d for d in Document.objects.filter(pk__in=sample_pks)}
    sample = [
        PreviewDocument(
            document_id=pk,
            external_id=docs[pk].external_id,
            title=docs[pk].title,
            text=docs[pk].text,
            title_spans=matcher.spans(docs[pk].title) if "title" in normalized_fields else [],
            text_spans=matcher.spans(docs[pk].text) if "text" in normalized_fields else [],
        )
        for pk in sample_pks
        if pk in docs
    ]
    overlaps = [
        PreviewOverlap(
            classifier_id=other.pk,
            classifier_name=other.name,
            retrieved_count=other.retrieved_count,
            overlap=round(found.intersection_cardinality(bitmap_from_bytes(other.retrieved_bitmap)) * scale),
        )
        for other in Classifier.objects.filter(corpus=corpus, archived_at__isnull=True).order_by("name")
    ]
    return KeywordPreview(
        terms=normalized_terms,
        fields=normalized_fields,
        retrieved=round(len(found) * scale),
        estimated=scale != 1.0,
        scanned=scanned,
        corpus_size=total,
        sample=sample,
        overlaps=overlaps,
    )


# --- uploaded ids and scores --------------------------------------------------


def _file_lines(path: Path) -> Iterator[tuple[int, str]]:
    try:
        handle = open(path, "rb")
    except OSError as exc:
        raise ClassifierFileError(upload=path, problem=f"cannot open ({exc.strerror or exc})") from exc
    with handle:
        for line_no, raw in enumerate(handle, start=1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ClassifierFileError(upload=path, line=line_no, problem="not valid UTF-8") from exc
            if line_no == 1:
                text = text.lstrip("\ufeff")
            yield line_no, text


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _resolve_ids(*, corpus: Corpus, external_ids: Sequence[str]) -> dict[str, int]:
    return document_ids_resolve(corpus=corpus, external_ids=external_ids)


Progress = Callable[[int, int], None]  # (ids resolved so far, ids in all)


def _ids_resolve_or_refuse(*, corpus: Corpus, ids: Sequence[str], path: Path,
                           progress: Progress | None) -> tuple[dict[str, int], list[str]]:
    """An uploaded file's ids resolved to the corpus's documents (progress told before and after), and those
    unknown; refused (ClassifierFileError) when none is a document of the corpus. Ids and scores files alike."""
    if progress is not None:
        progress(0, len(ids))
    resolved = _resolve_ids(corpus=corpus, external_ids=ids)
    if progress is not None:
        progress(len(ids), len(ids))
    unknown = [external_id for external_id in ids if external_id not in resolved]
    if not resolved:
        raise ClassifierFileError(upload=path,
                                  problem=f"none of the {len(ids)} ids is a document of corpus {corpus.name!r}")
    return resolved, unknown


def classifier_ids_read(*, path: Path) -> list[str]:
    """The distinct ids of an ids file, in file order; ClassifierError for an unreadable or empty file."""
    path = Path(path)
    ids = list(dict.fromkeys(text.strip() for _, text in _file_lines(path) if text.strip()))
    if not ids:
        raise ClassifierFileError(upload=path, problem="no ids in the file")
    return ids


def classifier_scores_read(*, path: Path) -> dict[str, float]:
    """id → score of a scores CSV; ClassifierError (with the line) for a malformed or empty file."""
    path = Path(path)
    scores = _read_scores(path)
    if not scores:
        raise ClassifierFileError(upload=path, problem="no scores in the file")
    return scores


def classifier_create_from_ids(*, corpus: Corpus, name: str, path: Path, source: str | None = None,
                               progress: Progress | None = None) -> ClassifierResult:
    """Retrieved set = the documents whose external ids are listed, one per line; unknown ids are reported.

    `source` is the file's name as the analyst knows it (default: the path's name); `progress(done, total)`
    is told when the ids are read and when they are resolved.
    """
    path = Path(path)
    ids = classifier_ids_read(path=path)
    resolved, unknown = _ids_resolve_or_refuse(corpus=corpus, ids=ids, path=path, progress=progress)
    definition = {"source": source or path.name, "sha256": _file_sha256(path)}
    classifier = classifier_store(
        corpus=corpus, name=name, kind=Classifier.Kind.IDS, definition=definition,
        retrieved=BitMap(resolved.values()),
    )
    return ClassifierResult(
        classifier=classifier, read=len(ids), unknown_count=len(unknown), unknown_examples=unknown[:UNKNOWN_EXAMPLES]
    )


def _read_scores(path: Path) -> dict[str, float]:
    scores: dict[str, float] = {}
    lines = _file_lines(path)
    reader = csv.reader(text for _, text in lines)
    try:
        for row_no, row in enumerate(reader, start=1):
            if not row or all(not cell.strip() for cell in row):
                continue
            if len(row) != 2:
                raise ClassifierFileError(upload=path, line=reader.line_num, problem=f"expected two fields (id,score), found {len(row)}")
            external_id, raw_score = row[0].strip(), row[1].strip()
            try:
                score = float(raw_score)
            except ValueError:
                if row_no == 1:
                    continue  # a header line
                raise ClassifierFileError(upload=path, line=reader.line_num, problem=f"score {raw_score!r} is not a number") from None
            if not math.isfinite(score):
                raise ClassifierFileError(upload=path, line=reader.line_num, problem=f"score {raw_score!r} is not finite")
            if not external_id:
                raise ClassifierFileError(upload=path, line=reader.line_num, problem="missing id")
            if external_id in scores:
                raise ClassifierFileError(upload=path, line=reader.line_num, problem=f"id {external_id!r} appears twice")
            scores[external_id] = score
    except csv.Error as exc:
        raise ClassifierFileError(upload=path, line=reader.line_num, problem=f"malformed CSV ({exc})") from exc
    return scores


def classifier_threshold_check(threshold: float) -> float:
    try:
        threshold = float(threshold)
    except (TypeError, ValueError):
        raise ClassifierError(f"threshold {threshold!r} is not a number") from None
    if not math.isfinite(threshold):
        raise ClassifierError("the threshold must be a finite number")
    return threshold


def classifier_create_from_scores(*, corpus: Corpus, name: str, path: Path, threshold: float, source: str | None = None,
                                  progress: Progress | None = None) -> ClassifierResult:
    """Scores from a CSV `id,score` (header optional); retrieved = score ≥ threshold. Scores are kept."""
    path = Path(path)
    threshold = classifier_threshold_check(threshold)
    scores = classifier_scores_read(path=path)
    ids = list(scores)
    resolved, unknown = _ids_resolve_or_refuse(corpus=corpus, ids=ids, path=path, progress=progress)
    retrieved = BitMap(pk for external_id, pk in resolved.items() if scores[external_id] >= threshold)
    definition = {"source": source or path.name, "sha256": _file_sha256(path), "threshold": threshold}
    with transaction.atomic():
        classifier = classifier_store(corpus=corpus, name=name, kind=Classifier.Kind.SCORES, definition=definition, retrieved=retrieved)
        ClassifierScore.objects.bulk_create(
            (ClassifierScore(classifier=classifier, document_id=pk, score=scores[external_id]) for external_id, pk in resolved.items()),
            batch_size=5000,
        )
    return ClassifierResult(
        classifier=classifier, read=len(ids), unknown_count=len(unknown), unknown_examples=unknown[:UNKNOWN_EXAMPLES]
    )


def _classifier_sampled(classifier: Classifier) -> bool:
    topic_ids = set(ClassifierPair.objects.filter(c1=classifier).values_list("topic_id", flat=True))
    topic_ids |= set(ClassifierPair.objects.filter(c2=classifier).values_list("topic_id", flat=True))
    topic_ids |= set(TopicClassifier.objects.filter(classifier=classifier).values_list("topic_id", flat=True))
    return SampleDraw.objects.filter(topic_id__in=topic_ids).exists() or SampleDraw.objects.filter(classifier=classifier).exists()


def _refuse_if_pair_breaks(*, classifier: Classifier, retrieved: BitMap, threshold: float) -> None:
    """Refuse a new retrieved set that would make a pair using the classifier nested, identical or disjoint.

    Such a pair measures recall 1 or 0 by construction (``estimation.stats.pair_recall.pair_design_problems``);
    topic creation refuses it, so a threshold move must not produce it afterwards.
    """
    for pair in ClassifierPair.objects.filter(Q(c1=classifier) | Q(c2=classifier)).select_related("c1", "c2", "topic"):
        partner = pair.c2 if pair.c1_id == classifier.pk else pair.c1
        other = bitmap_from_bytes(partner.retrieved_bitmap)
        both = retrieved.intersection_cardinality(other)
        only_this, only_partner = len(retrieved) - both, len(other) - both
        b1, b2 = (only_this, only_partner) if pair.c1_id == classifier.pk else (only_partner, only_this)
        problems = pair_design_problems(size_a12=both, size_b1=b1, size_b2=b2)
        errors = [d for d in problems.problems if d.severity == "error"]
        if errors:
            raise ClassifierError(
                f"at threshold {threshold:g}, {classifier.name!r} and its partner {partner.name!r} in "
                f"topic {pair.topic.name!r} would retrieve {'nothing in common' if both == 0 else 'nested sets (one contains the other)'}: "
                "the pair would measure recall 1 or 0 by construction. Choose another threshold or another classifier."
            )


def classifier_freeze(*, classifier_id: int, reason: str) -> None:
    """Refuse every later change of the classifier, with ``reason`` shown to whoever tries.

    Called by the app that depends on the classifier as it is (estimation, when a certification plan that
    certifies it is locked: a verdict certifies the retrieved set the plan was made for). Annotation does
    not know who froze it; the reason says. Freezing an already frozen classifier keeps the first reason.
    """
    Classifier.objects.filter(pk=classifier_id, frozen_reason="").update(frozen_reason=reason[:300])


def classifier_set_threshold(*, classifier: Classifier, threshold: float) -> Classifier:
    """Move the threshold of a scores or trained classifier (both keep their scores); refused once samples were
    drawn for a topic using it."""
    threshold = classifier_threshold_check(threshold)
    with transaction.atomic():
        classifier = Classifier.objects.select_for_update().get(pk=classifier.pk)
        if not kind_get(classifier.kind).has_threshold:
            raise ClassifierError(f"{classifier.name!r} is a {classifier.get_kind_display().lower()}, it has no threshold")
        if classifier.frozen_reason:
            raise ClassifierError(f"{classifier.name!r} cannot change: {classifier.frozen_reason}")
        if _classifier_sampled(classifier):
            raise ClassifierError(
                f"samples were already drawn with {classifier.name!r}: create a new classifier instead of changing it"
            )
        retrieved = BitMap(classifier.scores.filter(score__gte=threshold).values_list("document_id", flat=True))
        _refuse_if_pair_breaks(classifier=classifier, retrieved=retrieved, threshold=threshold)
        classifier.definition = {**classifier.definition, "threshold": threshold}
        classifier.retrieved_bitmap = bitmap_to_bytes(retrieved)
        classifier.retrieved_count = len(retrieved)
        classifier.fingerprint = classifier_fingerprint(kind=classifier.kind, definition=classifier.definition, retrieved=retrieved)
        classifier.save(update_fields=["definition", "retrieved_bitmap", "retrieved_count", "fingerprint"])
    return classifier


# --- neighbour terms (seed 000, Sec. 6.1.1) ----------------------------------


# --- clean-up: warnings, rename, archive, delete (issue 12 item 6) -------------------------------

# A classifier retrieving more than this share of its corpus is flagged (not refused).
COVERAGE_WARN_SHARE = 0.5
_NAMES_SHOWN = 3


def classifier_coverage_warnings(*, retrieved: int, corpus_size: int, estimated: bool = False) -> list[str]:
    """Warnings for a retrieved set that matches nothing or most of the corpus; empty when it looks usable.

    Never a refusal: a classifier that matches everything may be what the analyst means to
    measure. `estimated` words the counts as estimates (the keyword preview of a large corpus).
    """
    if corpus_size <= 0:
        return []
    about = "about " if estimated else ""
    if retrieved <= 0:
        return [f"It retrieves no document{' in the scanned sample' if estimated else ' of the corpus'}: a topic "
                "pairing it would have no overlap to measure recall from. Check the terms, the fields searched, "
                "the threshold or the ids file."]
    if retrieved > COVERAGE_WARN_SHARE * corpus_size:
        share = retrieved / corpus_size
        return [f"It retrieves {about}{share:.0%} of the corpus ({about}{retrieved} of {corpus_size} documents): a "
                "classifier that matches most documents has a high recall by construction and says little about the "
                "topic. Check that the terms are specific enough."]
    return []


def _names(names: Sequence[str]) -> str:
    shown = ", ".join(f"“{name}”" for name in names[:_NAMES_SHOWN])
    more = len(names) - _NAMES_SHOWN
    return shown + (f" and {more} more" if more > 0 else "")


def rows_referring_to(*, instance: models.Model, ignore: Sequence[type[models.Model]] = ()) -> list[tuple[str, int]]:
    """(name, count) of every row of another model that points at `instance`, other than the `ignore`d models.

    Walks the reverse relations Django knows (hidden ones included), so rows of apps annotation does
    not import (estimation's snapshots and certification plans) are counted without importing them.
    """
    counts = []
    for rel in instance._meta.get_fields(include_hidden=True):
        if not isinstance(rel, ForeignObjectRel) or not (rel.one_to_many or rel.one_to_one):
            continue
        model = rel.related_model
        if model is None or model in ignore:
            continue
        count = model._base_manager.filter(**{rel.field.name: instance}).count()
        if count:
            counts.append((str(model._meta.verbose_name_plural if count != 1 else model._meta.verbose_name), count))
    return counts


def classifier_delete_blockers(*, classifier: Classifier) -> list[str]:
    """Why the classifier cannot be deleted, in words for the page (empty: it can be)."""
    reasons = []
    topic_ids = set(ClassifierPair.objects.filter(Q(c1=classifier) | Q(c2=classifier)).values_list("topic_id", flat=True))
    topic_ids |= set(TopicClassifier.objects.filter(classifier=classifier).values_list("topic_id", flat=True))
    if topic_ids:
        names = list(Topic.objects.filter(pk__in=topic_ids).order_by("name").values_list("name", flat=True))
        reasons.append(f"used by topic{'s' if len(names) != 1 else ''} {_names(names)}")
    if classifier.frozen_reason:
        reasons.append(f"frozen: {classifier.frozen_reason}")
    for name, count in rows_referring_to(instance=classifier, ignore=(ClassifierScore, ClassifierPair, TopicClassifier)):
        reasons.append(f"{count} {name} refer to it" if count != 1 else f"{count} {name} refers to it")
    return reasons


def classifier_delete(*, classifier: Classifier) -> None:
    """Delete a classifier nothing measured depends on; else ClassifierError naming why (archive it instead)."""
    name = classifier.name
    try:
        with transaction.atomic():
            locked = Classifier.objects.select_for_update().defer("retrieved_bitmap").get(pk=classifier.pk)
            reasons = classifier_delete_blockers(classifier=locked)
            if reasons:
                raise ClassifierError(f"“{name}” cannot be deleted: {'; '.join(reasons)}. Archive it instead: "
                                      "it disappears from lists and forms, and nothing measured with it is lost.")
            locked.delete()
    except (ProtectedError, IntegrityError) as exc:  # a topic took it up while we checked
        raise ClassifierError(f"“{name}” cannot be deleted: it is now in use. Archive it instead.") from exc


def classifier_archive(*, classifier: Classifier) -> Classifier:
    """Hide the classifier from lists and forms; topics using it and every report stay as they are. Idempotent."""
    Classifier.objects.filter(pk=classifier.pk, archived_at__isnull=True).update(archived_at=timezone.now())
    classifier.refresh_from_db(fields=["archived_at"])
    return classifier


def classifier_unarchive(*, classifier: Classifier) -> Classifier:
    """Show the classifier in lists and forms again. Idempotent."""
    Classifier.objects.filter(pk=classifier.pk).update(archived_at=None)
    classifier.refresh_from_db(fields=["archived_at"])
    return classifier


def classifier_rename(*, classifier: Classifier, name: str) -> Classifier:
    """Give the classifier a new name, unique in its corpus. The fingerprint (what reports measured) is unchanged."""
    name = (name or "").strip()
    if not name:
        raise ClassifierError("the classifier needs a name")
    if name == classifier.name:
        return classifier
    clash = f"corpus “{classifier.corpus.name}” already has a classifier named “{name}”; choose another name"
    if Classifier.objects.filter(corpus_id=classifier.corpus_id, name=name).exclude(pk=classifier.pk).exists():
        raise ClassifierError(clash)
    try:
        with transaction.atomic():
            Classifier.objects.filter(pk=classifier.pk).update(name=name)
    except IntegrityError as exc:  # a concurrent rename or create took the name
        raise ClassifierError(clash) from exc
    classifier.name = name
    return classifier
