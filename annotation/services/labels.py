"""Labels: a judged document's votes, its majority and (optionally) its Dawid–Skene posterior.

Label rows are created with the HITs (annotation.services.hits), so a submission
only increments counters under a row lock; the majority is set when the
document has all its votes. Labels are per (topic, document): a document in
several samples of the topic is judged once and the label serves them all.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from django.db import transaction

from annotation.models import Document, Hit, Judgment, Label, Topic
from core.errors import ApplicationError


def labels_votes_add(*, topic: Topic, votes: Mapping[int, bool], votes_needed: int = Hit.ASSIGNMENTS_PER_HIT) -> list[int]:
    """Count one worker's votes; returns the documents whose label just became complete.

    Rows are locked in document order — the same order for every submitter — so
    concurrent submissions cannot deadlock.
    """
    if not votes:
        return []
    doc_ids = sorted(votes)
    labels = list(
        Label.objects.select_for_update().filter(topic=topic, document_id__in=doc_ids).order_by("document_id")
    )
    missing = set(doc_ids) - {label.document_id for label in labels}
    if missing:  # documents queued before labels were created with HITs; not expected otherwise
        Label.objects.bulk_create([Label(topic=topic, document_id=d) for d in missing], ignore_conflicts=True)
        labels = list(
            Label.objects.select_for_update().filter(topic=topic, document_id__in=doc_ids).order_by("document_id")
        )
    completed = []
    for label in labels:
        label.votes_total += 1
        label.votes_relevant += int(bool(votes[label.document_id]))
        if label.votes_total >= votes_needed and label.majority is None:
            # Three votes never tie; an even count that ties stays undecided (never broken silently).
            if 2 * label.votes_relevant != label.votes_total:
                label.majority = 2 * label.votes_relevant > label.votes_total
            completed.append(label.document_id)
    # One plain UPDATE per distinct new value (usually two): much cheaper than bulk_update's CASE.
    groups: dict[tuple, list[int]] = {}
    for label in labels:
        groups.setdefault((label.votes_total, label.votes_relevant, label.majority), []).append(label.pk)
    for (total, relevant, majority), pks in groups.items():
        Label.objects.filter(pk__in=pks).update(votes_total=total, votes_relevant=relevant, majority=majority)
    return completed


def topic_gold_answers(*, topic: Topic) -> dict[int, bool]:
    """{document id: known answer} of the topic's gold documents, in document order."""
    rows = Label.objects.filter(topic=topic, gold__isnull=False).order_by("document_id").values_list("document_id", "gold")
    return {document_id: gold for document_id, gold in rows if gold is not None}


def topic_gold_document_ids(*, topic: Topic) -> list[int]:
    """The topic's gold documents (known answers), sorted by id."""
    return list(topic_gold_answers(topic=topic))


class GoldDocumentError(ApplicationError):
    """A gold document that cannot be added; the message says why."""


def gold_document_add(*, topic: Topic, document: Document, relevant: bool) -> Label:
    """Mark a document of the topic's corpus as gold (known answer); later HITs each carry one gold item."""
    if document.corpus_id != topic.corpus_id:
        raise GoldDocumentError(f"Document {document.pk} is not in the corpus of topic {topic.name!r}.")
    label, created = Label.objects.get_or_create(topic=topic, document=document, defaults={"gold": bool(relevant)})
    if not created and label.gold != bool(relevant):
        label.gold = bool(relevant)
        label.save(update_fields=["gold", "updated_at"])
    return label


def labels_posteriors_recompute(*, topic: Topic) -> int:
    """Dawid–Skene (one-coin) posteriors over all the topic's judgments; returns labels updated.

    Gold documents anchor the model with their known answer. Only complete labels
    get a posterior (an incomplete one would mix in a partial vote count).
    """
    from estimation.stats.aggregation import dawid_skene

    rows = list(Judgment.objects.filter(topic=topic).values_list("document_id", "worker_id", "relevant"))
    if not rows:
        return 0
    doc_index: dict[int, int] = {}
    worker_index: dict[int, int] = {}
    items, workers, answers = [], [], []
    for doc_id, worker_id, relevant in rows:
        items.append(doc_index.setdefault(doc_id, len(doc_index)))
        workers.append(worker_index.setdefault(worker_id, len(worker_index)))
        answers.append(int(relevant))
    gold = {doc_id: answer for doc_id, answer in topic_gold_answers(topic=topic).items() if doc_id in doc_index}
    result = dawid_skene(
        items=np.array(items),
        workers=np.array(workers),
        labels=np.array(answers),
        n_classes=2,
        gold_items=np.array([doc_index[d] for d in gold], dtype=np.int64) if gold else None,
        gold_labels=np.array([int(g) for g in gold.values()], dtype=np.int64) if gold else None,
    )
    with transaction.atomic():
        labels = list(
            Label.objects.select_for_update()
            .filter(topic=topic, majority__isnull=False, document_id__in=list(doc_index))
            .order_by("document_id")
        )
        for label in labels:
            label.posterior = float(result.posterior[doc_index[label.document_id], 1])
        Label.objects.bulk_update(labels, ["posterior"], batch_size=2000)
    return len(labels)
