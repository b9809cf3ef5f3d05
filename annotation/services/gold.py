"""Gold documents: add them from a judged document or a CSV file, and remove an unused one.

A gold document is a Label of the topic carrying a known answer (``Label.gold``);
``annotation.services.labels.gold_document_add`` writes it and every add here goes
through it. Later HITs each carry one gold document (annotation.services.hits) and a
worker's answers on gold documents make their gold accuracy
(annotation.services.workers.worker_gold_score), which blocks them automatically
below ``Topic.min_gold_accuracy``.

What a gold document changes, said on the gold page:

* A judged document used as gold leaves the recall estimate: the report leaves out
  every document whose Label carries a gold answer (estimation.services.inputs).
* Every judgment on a gold document counts towards its workers' gold accuracy,
  the ones made before it became gold included (``worker_gold_score`` reads them all).

A CSV upload is parsed first (``gold_csv_parse``): every bad line is reported with
its line number and nothing is added; the good lines are added only when the user
confirms (``gold_csv_apply``), all in one transaction.
"""
from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.db import transaction

from annotation.models import Document, Hit, HitItem, Judgment, Label, SampledDocument, Topic, Worker
from annotation.services.labels import gold_document_add, topic_gold_answers
from annotation.services.workers import GOLD_MIN_ANSWERS, worker_block, worker_gold_check
from core.errors import ApplicationError

GOLD_CSV_MAX_BYTES = 1_000_000
GOLD_CSV_MAX_ROWS = 5_000
ID_COLUMN = "id"
RELEVANT_COLUMN = "relevant"
_TRUE = frozenset({"yes", "y", "1", "true"})
_FALSE = frozenset({"no", "n", "0", "false"})
_LOOKUP_CHUNK = 500


class GoldCsvError(ApplicationError):
    """The whole file cannot be read (too large, not text, no id/relevant header)."""


class GoldDocumentRefused(ApplicationError):
    """A gold document that cannot be added or removed; the message says why."""


@dataclass(frozen=True)
class GoldCsvLine:
    """A good line: the document it names and the known answer."""

    line: int
    external_id: str
    document_id: int
    relevant: bool
    previous: bool | None  # the known answer it replaces, None when the document is not gold yet


@dataclass(frozen=True)
class GoldCsvProblem:
    line: int
    reason: str


@dataclass(frozen=True)
class GoldCsvParse:
    lines: tuple[GoldCsvLine, ...]
    problems: tuple[GoldCsvProblem, ...]


def _answer(raw: str) -> bool | None:
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    return None


def _short(value: str, limit: int = 60) -> str:
    return value if len(value) <= limit else value[: limit - 1] + "…"


def gold_csv_parse(*, topic: Topic, data: bytes) -> GoldCsvParse:
    """Read a gold CSV (columns ``id`` = a document's external id, ``relevant`` = yes/no/1/0/true/false).

    Nothing is written. Raises GoldCsvError when the file as a whole is unusable; a bad line
    (empty id, an answer that is not yes/no, an id not in the topic's corpus, an id given
    twice) is a problem with its line number, and the other lines are still read.
    """
    if topic.is_multiclass:
        raise GoldCsvError("A gold file gives yes/no answers, and a topic set's gold documents take one of its "
                           "topics: mark them one by one from the judged documents instead.")
    if len(data) > GOLD_CSV_MAX_BYTES:
        raise GoldCsvError(f"The file is {len(data):,} bytes; the limit is {GOLD_CSV_MAX_BYTES:,} bytes. "
                           "Split it into smaller files.")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise GoldCsvError(f"The file is not UTF-8 text (byte {exc.start + 1} cannot be read).") from None
    if "\x00" in text:
        raise GoldCsvError("The file contains NUL bytes: it is not a CSV text file.")
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader, None)
    except csv.Error as exc:
        raise GoldCsvError(f"Line 1 cannot be read as CSV: {exc}.") from None
    columns = [name.strip().lower() for name in header or []]
    if ID_COLUMN not in columns or RELEVANT_COLUMN not in columns:
        raise GoldCsvError(f"The first line must name the columns {ID_COLUMN!r} and {RELEVANT_COLUMN!r} "
                           f"(found: {', '.join(repr(_short(c)) for c in columns) or 'nothing'}).")
    id_at, relevant_at = columns.index(ID_COLUMN), columns.index(RELEVANT_COLUMN)

    problems: list[GoldCsvProblem] = []
    wanted: list[tuple[int, str, bool]] = []
    first_line_of: dict[str, int] = {}
    rows = 0
    while True:
        line = reader.line_num + 1  # where the record starts (a quoted field may span several lines)
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise GoldCsvError(f"Line {line} cannot be read as CSV: {exc}. Nothing was added.") from None
        if not any(cell.strip() for cell in row):
            continue
        rows += 1
        if rows > GOLD_CSV_MAX_ROWS:
            raise GoldCsvError(f"The file has more than {GOLD_CSV_MAX_ROWS:,} lines; split it into smaller files.")
        if len(row) <= max(id_at, relevant_at):
            problems.append(GoldCsvProblem(line, f"has {len(row)} column{'s' if len(row) != 1 else ''}; "
                                                 f"the header names {len(columns)}"))
            continue
        external_id, raw_answer = row[id_at].strip(), row[relevant_at]
        answer = _answer(raw_answer)
        if not external_id:
            problems.append(GoldCsvProblem(line, "the id is empty"))
            continue
        if answer is None:
            problems.append(GoldCsvProblem(line, f"relevant is {_short(raw_answer.strip())!r}; "
                                                 "write yes, no, 1, 0, true or false"))
            continue
        if external_id in first_line_of:
            problems.append(GoldCsvProblem(line, f"the id {_short(external_id)!r} was already given on line "
                                                 f"{first_line_of[external_id]}"))
            continue
        first_line_of[external_id] = line
        wanted.append((line, external_id, answer))

    found = _documents_by_external_id(topic=topic, external_ids=[e for _, e, _ in wanted])
    current = _gold_answers_of(topic=topic, document_ids=found.values())
    lines: list[GoldCsvLine] = []
    for line, external_id, answer in wanted:
        document_id = found.get(external_id)
        if document_id is None:
            problems.append(GoldCsvProblem(line, f"no document with the id {_short(external_id)!r} in the corpus "
                                                 f"{_short(topic.corpus.name)!r}"))
            continue
        lines.append(GoldCsvLine(line=line, external_id=external_id, document_id=document_id, relevant=answer,
                                 previous=current.get(document_id)))
    return GoldCsvParse(lines=tuple(lines), problems=tuple(sorted(problems, key=lambda p: p.line)))


def _documents_by_external_id(*, topic: Topic, external_ids: Sequence[str]) -> dict[str, int]:
    found: dict[str, int] = {}
    for start in range(0, len(external_ids), _LOOKUP_CHUNK):
        chunk = external_ids[start:start + _LOOKUP_CHUNK]
        found.update(Document.objects.filter(corpus_id=topic.corpus_id, external_id__in=chunk)
                     .values_list("external_id", "pk"))
    return found


def _gold_answers_of(*, topic: Topic, document_ids: Iterable[int]) -> dict[int, bool]:
    ids = list(document_ids)
    answers: dict[int, bool] = {}
    for start in range(0, len(ids), _LOOKUP_CHUNK):
        rows = Label.objects.filter(topic=topic, document_id__in=ids[start:start + _LOOKUP_CHUNK],
                                    gold__isnull=False).values_list("document_id", "gold")
        answers.update({doc_id: bool(gold) for doc_id, gold in rows})
    return answers


def gold_csv_apply(*, topic: Topic, answers: Sequence[tuple[int, bool]]) -> int:
    """Add the confirmed lines ((document id, known answer) pairs) as gold, all or none; returns how many."""
    with transaction.atomic():
        documents = {}
        ids = [doc_id for doc_id, _ in answers]
        for start in range(0, len(ids), _LOOKUP_CHUNK):
            documents.update(Document.objects.only("pk", "corpus_id").in_bulk(ids[start:start + _LOOKUP_CHUNK]))
        for doc_id, relevant in answers:
            document = documents.get(doc_id)
            if document is None:
                raise GoldDocumentRefused("A document of the file no longer exists; nothing was added. "
                                          "Upload the file again.")
            gold_document_add(topic=topic, document=document, relevant=bool(relevant))
    return len(answers)


def gold_add_from_judged(
    *, topic: Topic, document_id: int, relevant: bool | None = None, gold_class: int | None = None
) -> Label:
    """Use a document the crowd has fully judged in the topic as gold, with the analyst's known answer.

    A single topic takes ``relevant``; a topic set ``gold_class`` (0..M, 0: none of these), and its document
    needs a complete label (a majority class, or a tie: the known class settles what the crowd could not).
    """
    label = Label.objects.filter(topic=topic, document_id=document_id).select_related("document").first()
    if topic.is_multiclass:
        if label is None or label.votes_total < Hit.ASSIGNMENTS_PER_HIT:
            raise GoldDocumentRefused("Only a document whose judgments are complete can be used as gold from this list.")
        if label.gold_class is not None and label.gold_class == gold_class:
            raise GoldDocumentRefused(f"Document {label.document.external_id!r} is already gold with this answer.")
        return gold_document_add(topic=topic, document=label.document, gold_class=gold_class)
    if label is None or label.majority is None:
        raise GoldDocumentRefused("Only a document whose judgments are complete can be used as gold from this list.")
    if label.gold is not None and label.gold == bool(relevant):
        raise GoldDocumentRefused(f"Document {label.document.external_id!r} is already gold with this answer.")
    return gold_document_add(topic=topic, document=label.document, relevant=relevant)


def gold_remove_blockers(*, topic: Topic, document_ids: Sequence[int]) -> dict[int, list[str]]:
    """Why each gold document cannot be removed ({} entries for the removable ones are left out).

    A gold document stays while a decision rests on it: a HIT carries it as its gold check
    (workers answered or will answer it as one, and the automatic block counts those answers),
    or a worker who judged it is blocked (their gold accuracy counted it).
    """
    reasons: dict[int, list[str]] = {}
    ids = list(document_ids)
    if not ids:
        return reasons
    in_hits: dict[int, int] = {}
    for doc_id in HitItem.objects.filter(topic=topic, is_gold=True, document_id__in=ids).values_list(
            "document_id", flat=True):
        in_hits[doc_id] = in_hits.get(doc_id, 0) + 1
    for doc_id, n in in_hits.items():
        reasons.setdefault(doc_id, []).append(
            f"{n} HIT{'s' if n != 1 else ''} carr{'y' if n != 1 else 'ies'} it as the gold check: workers' gold "
            "accuracy (and any automatic block) counts their answers on it")
    blocked = Judgment.objects.filter(topic=topic, document_id__in=ids, worker__blocked=True).values_list(
        "document_id", flat=True).distinct()
    for doc_id in blocked:
        reasons.setdefault(doc_id, []).append(
            "a blocked worker judged it, and their gold accuracy counted it; unblock them first")
    return reasons


def gold_document_remove(*, topic: Topic, document_id: int) -> None:
    """Make a gold document an ordinary one again, unless a decision rests on it (GoldDocumentRefused says which).

    A judged document goes back to its sample (the report counts it again); a gold document the
    crowd never saw is forgotten (its empty Label is deleted, so a certification draw may pick it).
    """
    with transaction.atomic():
        # Lock order as in the HIT and sampling services: topic first, then its rows. HIT creation
        # holds the topic lock, so no HIT can take the document as its gold check meanwhile.
        Topic.objects.select_for_update().filter(pk=topic.pk).values_list("pk", flat=True).first()
        label = (Label.objects.select_for_update().filter(topic=topic, document_id=document_id, gold__isnull=False)
                 .select_related("document").first())
        if label is None:
            raise GoldDocumentRefused("This document is not a gold document of the topic (any more).")
        reasons = gold_remove_blockers(topic=topic, document_ids=[document_id]).get(document_id)
        if reasons:
            raise GoldDocumentRefused(f"Document {label.document.external_id!r} stays gold: " + "; ".join(reasons) + ".")
        unused = (label.votes_total == 0
                  and not Judgment.objects.filter(topic=topic, document_id=document_id).exists()
                  and not HitItem.objects.filter(topic=topic, document_id=document_id).exists()
                  and not SampledDocument.objects.filter(topic=topic, document_id=document_id).exists())
        if unused:
            label.delete()
        else:
            label.gold = None
            label.save(update_fields=["gold", "updated_at"])


# --------------------------------------------------------------------------- topic sets: worker gold checks


def worker_gold_class_score(*, worker: Worker, topic: Topic) -> tuple[int, int]:
    """(gold items answered, answered correctly) by the worker in a topic set: a judgment's class (``choice``)
    against the gold document's known class (``Label.gold_class``); an "unsure" answer counts as not right."""
    gold = topic_gold_answers(topic=topic)
    if not gold:
        return 0, 0
    answers = Judgment.objects.filter(topic=topic, worker=worker, document_id__in=list(gold)).values_list(
        "document_id", "choice"
    )
    answered = correct = 0
    for doc_id, choice in answers:
        answered += 1
        correct += int(choice is not None and choice == gold[doc_id])
    return answered, correct


def worker_gold_check_for_topic(*, worker: Worker, topic: Topic) -> bool:
    """Block the worker if their gold accuracy in the topic is too low (the rule of
    ``annotation.services.workers.worker_gold_check``, comparing classes in a topic set); returns whether blocked."""
    if not topic.is_multiclass:
        return worker_gold_check(worker=worker, topic=topic)
    answered, correct = worker_gold_class_score(worker=worker, topic=topic)
    if answered >= GOLD_MIN_ANSWERS and correct / answered < topic.min_gold_accuracy:
        worker_block(
            worker=worker,
            reason=f"{correct} of {answered} gold answers right in topic set {topic.name!r} "
            f"(below {topic.min_gold_accuracy:.0%})",
        )
    return worker.blocked
