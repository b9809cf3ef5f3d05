"""Raw judgments of a topic as CSV and JSON Lines (issue 12 item 9; columns in docs/report.md).

One row per Judgment: the document's external id, the worker (MTurk WorkerId where it exists, else a stable
pseudonymous local id — never a username or e-mail), the answer, when it was submitted, the HIT and assignment (MTurk
ids where they exist), the region and sample draw that brought the document in, the document's label majority and
whether it is a gold document. Column names follow Mechanical Turk's batch results where one exists (HITId,
AssignmentId, WorkerId, AssignmentStatus, SubmitTime, Input.*, Answer.*).

Both exports are generators: rows are read in chunks of CHUNK judgments (one query for the judgments' chunk, one
each for the chunk's sample draws, labels and gold items), so a topic with 100k judgments streams in constant memory.
"""
from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator
from datetime import datetime
from itertools import islice
from typing import Any

from annotation.models import (
    NONE_OF_THESE,
    REGION_NAMES,
    HitItem,
    Judgment,
    Label,
    SampledDocument,
    Topic,
    TopicClass,
)
from annotation.services.crowd.workers import worker_public_id
from estimation.services.report_csv import csv_cell

CHUNK = 2000

# MTurk batch-results names where one exists; the rest are ours.
EXPORT_COLUMNS = [
    "HITId", "AssignmentId", "WorkerId", "AssignmentStatus", "SubmitTime", "Input.document_id", "Answer.relevance",
    "region", "region_name", "sample_purpose", "sample_draw", "label_majority", "gold",
    "local_hit_id", "local_assignment_id", "judgment_id",
    # Topic sets (kind "multiclass"): the class position chosen and the label's majority class (0: none of these).
    # Answer.relevance and label_majority then hold the class names ("unsure", "" as for binary topics).
    "Answer.class", "label_class",
]


def worker_pseudonym(*, worker_id: int) -> str:
    """A stable id for a worker without a platform worker id: a keyed hash of the local id (the same in every export of
    this deployment, not reversible to the account without the secret key). The rule is
    annotation.services.crowd.adjudication.worker_public_id, which the worker-quality page and the API show too."""
    return worker_public_id(worker_id=worker_id, external_id=None)


def _answer(relevant: bool | None) -> str:
    return "unsure" if relevant is None else ("relevant" if relevant else "not relevant")


def _majority(majority: bool | None) -> str:
    return "" if majority is None else ("relevant" if majority else "not relevant")


def _class_names(*, topic: Topic) -> dict[int, str]:
    names = {NONE_OF_THESE: "None of these"}
    names.update(TopicClass.objects.filter(topic=topic).values_list("position", "name"))
    return names


def _class_answer(choice: int | None, names: dict[int, str]) -> str:
    return "unsure" if choice is None else names.get(choice, str(choice))


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _chunks(rows: Iterable[tuple], size: int) -> Iterator[list[tuple]]:
    iterator = iter(rows)
    while chunk := list(islice(iterator, size)):
        yield chunk


def judgment_export_rows(*, topic: Topic, chunk_size: int = CHUNK) -> Iterator[dict[str, Any]]:
    """The topic's judgments, oldest first, as dicts keyed by EXPORT_COLUMNS (typed values: None, bool, str, int)."""
    multiclass = topic.is_multiclass
    names = _class_names(topic=topic) if multiclass else {}
    judgments = (Judgment.objects.filter(topic=topic).order_by("id").values_list(
        "id", "document_id", "document__external_id", "relevant", "choice", "created_at", "worker_id",
        "worker__external_id", "assignment_id", "assignment__external_id", "assignment__status",
        "assignment__submitted_at", "assignment__hit_id", "assignment__hit__external_id")
        .iterator(chunk_size=chunk_size))
    for chunk in _chunks(judgments, chunk_size):
        documents = {row[1] for row in chunk}
        hits = {row[12] for row in chunk}
        draws: dict[int, tuple[int | None, str, str]] = {}
        for document_id, sampled_draw, sampled_region, sampled_purpose in (
                SampledDocument.objects.filter(topic=topic, document_id__in=documents)
                .order_by("draw_id").values_list("document_id", "draw_id", "region", "draw__purpose")):
            draws.setdefault(document_id, (sampled_draw, sampled_region, sampled_purpose))  # the earliest draw that brought it in
        labels = {document_id: (majority, gold if not multiclass else gold_class, majority_class)
                  for document_id, majority, gold, majority_class, gold_class in
                  Label.objects.filter(topic=topic, document_id__in=documents)
                  .values_list("document_id", "majority", "gold", "majority_class", "gold_class")}
        gold_items = set(HitItem.objects.filter(hit_id__in=hits, document_id__in=documents, is_gold=True)
                         .values_list("hit_id", "document_id"))
        for (judgment_id, document_id, external_id, relevant, choice, created_at, worker_id, mturk_worker,
             assignment_id, mturk_assignment, status, submitted_at, hit_id, mturk_hit) in chunk:
            draw_id, region, purpose = draws.get(document_id, (None, "", ""))
            majority, gold, majority_class = labels.get(document_id, (None, None, None))
            yield {
                "HITId": mturk_hit or str(hit_id),
                "AssignmentId": mturk_assignment or "",
                "WorkerId": worker_public_id(worker_id=worker_id, external_id=mturk_worker),
                "AssignmentStatus": status,
                "SubmitTime": _iso(submitted_at or created_at),
                "Input.document_id": external_id,
                "Answer.relevance": _class_answer(choice, names) if multiclass else _answer(relevant),
                "region": region,
                "region_name": REGION_NAMES.get(region, region) if region else "",
                "sample_purpose": purpose,
                "sample_draw": draw_id,
                "label_majority": (names.get(majority_class, str(majority_class)) if majority_class is not None
                                   else "") if multiclass else _majority(majority),
                "gold": gold is not None or (hit_id, document_id) in gold_items or region == "G",
                "local_hit_id": hit_id,
                "local_assignment_id": assignment_id,
                "judgment_id": judgment_id,
                "Answer.class": choice if multiclass else None,
                "label_class": majority_class if multiclass else None,
            }


class _Line:
    """A file-like object whose write returns the line: csv.writer then yields strings (Django's streaming CSV)."""

    def write(self, value: str) -> str:
        return value


def _csv_value(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    return csv_cell(value)


def judgments_csv_stream(*, topic: Topic, chunk_size: int = CHUNK) -> Iterator[str]:
    """The raw judgments as CSV lines: a header row, then one row per judgment. Every text cell starting with
    = + - @ tab or CR is prefixed with ' so no spreadsheet runs it as a formula."""
    writer = csv.writer(_Line(), lineterminator="\n")
    yield writer.writerow(EXPORT_COLUMNS)
    for row in judgment_export_rows(topic=topic, chunk_size=chunk_size):
        yield writer.writerow([_csv_value(row[column]) for column in EXPORT_COLUMNS])


def judgments_jsonl_stream(*, topic: Topic, chunk_size: int = CHUNK) -> Iterator[str]:
    """The raw judgments as JSON Lines: one object per judgment with the CSV's keys, typed values, no formula
    neutralisation (JSON readers do not evaluate cells)."""
    for row in judgment_export_rows(topic=topic, chunk_size=chunk_size):
        yield json.dumps(row, ensure_ascii=False) + "\n"
