"""Gold documents: add them from a judged document or a CSV file, and remove an unused one.

A gold document is a Label of the topic carrying a known answer (``Label.gold``);
``annotation.services.crowd.labels.gold_document_add`` writes it and every add here goes
through it. Later HITs each carry one gold document (annotation.services.crowd.hits) and a
worker's answers on gold documents make their gold accuracy
(annotation.services.crowd.workers.worker_gold_score), which blocks them automatically
below ``Topic.min_gold_accuracy``.

What a gold document changes, said on the gold page:

* A judged document used as gold leaves the recall estimate: the report leaves out
  every document whose Label carries a gold answer (estimation.services.inputs).
* Every judgment on a gold document counts towards its workers' gold accuracy,
  the ones made before it became gold included (``worker_gold_score`` reads them all).

A topic set's gold file names a class instead of a yes/no answer (columns ``id`` and ``class``):
the class's name (any case), its position 1..M, or "none", "none of these" or 0.

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
from annotation.selectors import gold_remove_blockers
from annotation.services.crowd.labels import gold_document_add, topic_gold_answers, topic_set_class_names
from annotation.services.crowd.workers import GOLD_MIN_ANSWERS, worker_block, worker_gold_check
from core.errors import ApplicationError

GOLD_CSV_MAX_BYTES = 1_000_000
GOLD_CSV_MAX_ROWS = 5_000
ID_COLUMN = "id"
RELEVANT_COLUMN = "relevant"
CLASS_COLUMN = "class"
_NONE_NAMES = frozenset({"none", "none of these", "0"})
_TRUE = frozenset({"yes", "y", "1", "true"})
_FALSE = frozenset({"no", "n", "0", "false"})
_LOOKUP_CHUNK = 500


class GoldCsvError(ApplicationError):
    """The whole file cannot be read (too large, not text, no id/relevant (topic set: id/class) header)."""


class GoldDocumentRefused(ApplicationError):
    """A gold document that cannot be added or removed; the message says why."""


@dataclass(frozen=True)
class GoldCsvLine:
    """A good line: the document it names and the known answer (``relevant``, or a topic set's ``gold_class``)."""

    line: int
    external_id: str
    document_id: int
    relevant: bool | None  # None in a topic set
    previous: bool | int | None  # the known answer (a class in a topic set) it replaces, None when not gold yet
    gold_class: int | None = None  # a topic set's known class 0..M (0: none of these); None for a single topic

    @property
    def answer(self) -> bool | int:
        """The known answer: a topic set's class, else relevant (True/False)."""
        return self.gold_class if self.gold_class is not None else bool(self.relevant)


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


def _class_lookup(topic: Topic) -> tuple[dict[str, int], list[str]]:
    """({lower-case name, none words: position}, the names by position) of a topic set's classes."""

    names = topic_set_class_names(topic=topic)
    positions = {" ".join(name.split()).lower(): position for position, name in enumerate(names) if position}
    positions.update(dict.fromkeys(_NONE_NAMES, 0))
    return positions, names


def _class_of(raw: str, *, positions: dict[str, int], count: int) -> int | str:
    """The class position a cell names, or why it names none (a reason for the problem list)."""
    value = " ".join(raw.split()).lower()
    by_name = positions.get(value)
    if value.isdigit() and value.isascii():
        number = int(value)
        if by_name is not None and by_name != number:
            return f"class {_short(raw.strip())!r} is both the name of class {by_name} and the number of class {number}"
        if number <= count:
            return number
    if by_name is not None:
        return by_name
    return ""


def gold_csv_parse(*, topic: Topic, data: bytes) -> GoldCsvParse:
    """Read a gold CSV (columns ``id`` = a document's external id, ``relevant`` = yes/no/1/0/true/false;
    in a topic set ``class`` = a class name (any case), its position 1..M, or none / none of these / 0).

    Nothing is written. Raises GoldCsvError when the file as a whole is unusable; a bad line
    (empty id, an answer that is not yes/no or not a class of the topic set, an id not in the
    topic's corpus, an id given twice) is a problem with its line number, and the other lines are still read.
    """
    multiclass = topic.is_multiclass
    answer_column = CLASS_COLUMN if multiclass else RELEVANT_COLUMN
    positions: dict[str, int] = {}
    class_names: list[str] = []
    if multiclass:
        positions, class_names = _class_lookup(topic)
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
    if ID_COLUMN not in columns or answer_column not in columns:
        kind = (" (a topic set's gold documents take one of its topics, by name or number, or none)"
                if multiclass else "")
        raise GoldCsvError(f"The first line must name the columns {ID_COLUMN!r} and {answer_column!r}{kind} "
                           f"(found: {', '.join(repr(_short(c)) for c in columns) or 'nothing'}).")
    id_at, relevant_at = columns.index(ID_COLUMN), columns.index(answer_column)

    problems: list[GoldCsvProblem] = []
    wanted: list[tuple[int, str, bool | int]] = []
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
        answer: bool | int | None
        if not external_id:
            problems.append(GoldCsvProblem(line, "the id is empty"))
            continue
        if multiclass:
            found_class = _class_of(raw_answer, positions=positions, count=len(class_names) - 1)
            if isinstance(found_class, str):
                problems.append(GoldCsvProblem(line, found_class or (
                    f"class is {_short(raw_answer.strip())!r}, not a class of this topic set; write one of "
                    + ", ".join(repr(_short(name)) for name in class_names[1:])
                    + f", none of these, or a class number 0 to {len(class_names) - 1}")))
                continue
            answer = found_class
        else:
            answer = _answer(raw_answer)
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
        if multiclass:
            lines.append(GoldCsvLine(line=line, external_id=external_id, document_id=document_id, relevant=None,
                                     previous=current.get(document_id), gold_class=int(answer)))
        else:
            lines.append(GoldCsvLine(line=line, external_id=external_id, document_id=document_id,
                                     relevant=bool(answer), previous=current.get(document_id)))
    return GoldCsvParse(lines=tuple(lines), problems=tuple(sorted(problems, key=lambda p: p.line)))


def _documents_by_external_id(*, topic: Topic, external_ids: Sequence[str]) -> dict[str, int]:
    found: dict[str, int] = {}
    for start in range(0, len(external_ids), _LOOKUP_CHUNK):
        chunk = external_ids[start:start + _LOOKUP_CHUNK]
        found.update(Document.objects.filter(corpus_id=topic.corpus_id, external_id__in=chunk)
                     .values_list("external_id", "pk"))
    return found


def _gold_answers_of(*, topic: Topic, document_ids: Iterable[int]) -> dict[int, bool | int]:
    ids = list(document_ids)
    answers: dict[int, bool | int] = {}
    for start in range(0, len(ids), _LOOKUP_CHUNK):
        chunk = Label.objects.filter(topic=topic, document_id__in=ids[start:start + _LOOKUP_CHUNK])
        if topic.is_multiclass:
            classes = chunk.filter(gold_class__isnull=False).values_list("document_id", "gold_class")
            answers.update({doc_id: gold_class for doc_id, gold_class in classes if gold_class is not None})
        else:
            rows = chunk.filter(gold__isnull=False).values_list("document_id", "gold")
            answers.update({doc_id: bool(gold) for doc_id, gold in rows})
    return answers


def gold_csv_apply(*, topic: Topic, answers: Sequence[tuple[int, bool | int]]) -> int:
    """Add the confirmed lines ((document id, known answer) pairs) as gold, all or none; returns how many.

    The known answer is relevant (True/False) for a single topic, a class position 0..M for a topic set."""
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
            if topic.is_multiclass:
                if isinstance(relevant, bool):
                    raise GoldDocumentRefused("A topic set's gold document takes a class, not yes/no; nothing was "
                                              "added. Upload the file again.")
                gold_document_add(topic=topic, document=document, gold_class=int(relevant))
            else:
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


def gold_document_remove(*, topic: Topic, document_id: int) -> None:
    """Make a gold document an ordinary one again, unless a decision rests on it (GoldDocumentRefused says which).

    A judged document goes back to its sample (the report counts it again); a gold document the
    crowd never saw is forgotten (its empty Label is deleted, so a certification draw may pick it).
    """
    with transaction.atomic():
        # Lock order as in the HIT and sampling services: topic first, then its rows. HIT creation
        # holds the topic lock, so no HIT can take the document as its gold check meanwhile.
        Topic.objects.select_for_update().filter(pk=topic.pk).values_list("pk", flat=True).first()
        known = {"gold_class__isnull": False} if topic.is_multiclass else {"gold__isnull": False}
        label = (Label.objects.select_for_update().filter(topic=topic, document_id=document_id, **known)
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
        elif topic.is_multiclass:
            label.gold_class = None
            label.save(update_fields=["gold_class", "updated_at"])
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
    ``annotation.services.crowd.workers.worker_gold_check``, comparing classes in a topic set); returns whether blocked."""
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
