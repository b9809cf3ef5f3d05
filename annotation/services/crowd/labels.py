"""Labels: a judged document's votes, its majority and (optionally) its Dawid–Skene posterior.

Label rows are created with the HITs (annotation.services.crowd.hits), so a submission
only increments counters under a row lock; the majority is set when the
document has all its votes. Labels are per (topic, document): a document in
several samples of the topic is judged once and the label serves them all.
"""
from __future__ import annotations

from collections.abc import Collection, Mapping

import numpy as np
from django.db import transaction

from annotation.models import Document, Hit, Judgment, Label, Region, SampledDocument, SampleDraw, Topic, TopicClass
from annotation.selectors import topic_gold_answers, topic_gold_document_ids  # reads of the gold answers
from core.errors import ApplicationError
from estimation.stats.aggregation import dawid_skene

NONE_OF_THESE_NAME = "None of these"


def _majority(*, relevant: int, unsure: int, total: int) -> bool | None:
    """The majority over the sure votes: None when there is none, or the sure votes tie (never broken silently)."""
    sure = total - unsure
    if sure <= 0 or 2 * relevant == sure:
        return None
    return 2 * relevant > sure


def _majority_class(class_votes: list[int]) -> int | None:
    """The class with strictly more votes than every other class (sure votes only); None on a tie or no vote."""
    if not class_votes or max(class_votes) <= 0:
        return None
    top = max(class_votes)
    winners = [position for position, count in enumerate(class_votes) if count == top]
    return winners[0] if len(winners) == 1 else None


def _class_votes_counted(label: Label, position: int, delta: int) -> None:
    """Add `delta` votes to class `position` of a topic set's label, growing the counter list if it is short."""
    votes = list(label.class_votes or [])
    if len(votes) <= position:
        votes.extend([0] * (position + 1 - len(votes)))
    votes[position] += delta
    if votes[position] < 0:
        raise ValueError(f"label {label.pk}: class {position} would have a negative vote count")
    label.class_votes = votes


def labels_votes_add(
    *, topic: Topic, votes: Mapping[int, bool | int | None], votes_needed: int = Hit.ASSIGNMENTS_PER_HIT
) -> list[int]:
    """Count one worker's votes; returns the documents whose label just became complete.

    A vote is True (on topic), False (off topic) or None ("unsure"). An unsure vote fills the
    worker's place (``votes_total``; the label still completes at ``votes_needed`` votes) and is
    counted in ``votes_unsure``; the majority is taken over the sure votes only, so no sure vote,
    or a tie among them, leaves the complete label undecided (``majority`` NULL; docs/aggregation.md).

    In a topic set (``topic.is_multiclass``) a vote is a class position 0..M (0: none of these) or None
    (unsure): it is counted in ``class_votes[position]``, and a complete label's ``majority_class`` is
    the class with strictly more sure votes than every other, NULL on a tie or without a sure vote;
    ``majority`` and ``votes_relevant`` stay unset.

    Rows are locked in document order — the same order for every submitter — so
    concurrent submissions cannot deadlock.
    """
    if not votes:
        return []
    doc_ids = sorted(votes)
    labels = _labels_locked(topic=topic, doc_ids=doc_ids)
    completed = []
    multiclass = topic.is_multiclass
    for label in labels:
        vote = votes[label.document_id]
        if multiclass:
            was_complete = label.votes_total >= votes_needed
            label.votes_total += 1
            if vote is None:
                label.votes_unsure += 1
            else:
                _class_votes_counted(label, int(vote), 1)
            if not was_complete and label.votes_total >= votes_needed:
                label.majority_class = _majority_class(label.class_votes)
                completed.append(label.document_id)
            continue
        label.votes_total += 1
        label.votes_relevant += int(vote is True)
        label.votes_unsure += int(vote is None)
        if label.votes_total >= votes_needed and label.majority is None:
            label.majority = _majority(
                relevant=label.votes_relevant, unsure=label.votes_unsure, total=label.votes_total
            )
            completed.append(label.document_id)
    _labels_counts_save(labels, multiclass=multiclass)
    return completed


def _labels_locked(*, topic: Topic, doc_ids: list[int]) -> list[Label]:
    """The labels of these documents, row-locked in document order (created first if missing)."""
    labels = list(
        Label.objects.select_for_update().filter(topic=topic, document_id__in=doc_ids).order_by("document_id")
    )
    missing = set(doc_ids) - {label.document_id for label in labels}
    if missing:  # documents queued before labels were created with HITs; not expected otherwise
        Label.objects.bulk_create([Label(topic=topic, document_id=d) for d in missing], ignore_conflicts=True)
        labels = list(
            Label.objects.select_for_update().filter(topic=topic, document_id__in=doc_ids).order_by("document_id")
        )
    return labels


def _labels_counts_save(labels: list[Label], *, multiclass: bool = False) -> None:
    # One plain UPDATE per distinct new value (usually two): much cheaper than bulk_update's CASE.
    if multiclass:
        class_groups: dict[tuple, list[int]] = {}
        for label in labels:
            class_key = (label.votes_total, label.votes_unsure, tuple(label.class_votes), label.majority_class)
            class_groups.setdefault(class_key, []).append(label.pk)
        for (total, unsure, class_votes, majority_class), pks in class_groups.items():
            Label.objects.filter(pk__in=pks).update(
                votes_total=total, votes_unsure=unsure, class_votes=list(class_votes), majority_class=majority_class
            )
        return
    groups: dict[tuple[int, int, int, bool | None], list[int]] = {}
    for label in labels:
        key = (label.votes_total, label.votes_relevant, label.votes_unsure, label.majority)
        groups.setdefault(key, []).append(label.pk)
    for (total, relevant, unsure, majority), pks in groups.items():
        Label.objects.filter(pk__in=pks).update(
            votes_total=total, votes_relevant=relevant, votes_unsure=unsure, majority=majority
        )


class LabelsComplete(ApplicationError):
    """A vote can no longer change: the label already has all its votes."""


def labels_votes_change(
    *, topic: Topic, changes: Mapping[int, tuple[bool | int | None, bool | int | None]],
    votes_needed: int = Hit.ASSIGNMENTS_PER_HIT,
) -> None:
    """Move one worker's votes ({document id: (old vote, new vote)}) while no label is complete.

    Locks the labels in document order (as ``labels_votes_add`` does) and refuses with
    LabelsComplete when any of them already has ``votes_needed`` votes: a complete label's
    majority is final (reports and certification read it). ``votes_total`` does not move.
    """
    if not changes:
        return
    labels = _labels_locked(topic=topic, doc_ids=sorted(changes))
    if any(label.votes_total >= votes_needed for label in labels):
        raise LabelsComplete("The other workers have finished these documents; your answers can no longer be changed.")
    multiclass = topic.is_multiclass
    for label in labels:
        old, new = changes[label.document_id]
        if multiclass:  # class positions (None: unsure)
            if old is not None:
                _class_votes_counted(label, int(old), -1)
            if new is not None:
                _class_votes_counted(label, int(new), 1)
        else:
            label.votes_relevant += int(new is True) - int(old is True)
        label.votes_unsure += int(new is None) - int(old is None)
    _labels_counts_save(labels, multiclass=multiclass)


class GoldDocumentError(ApplicationError):
    """A gold document that cannot be added; the message says why."""


def gold_document_add(
    *, topic: Topic, document: Document, relevant: bool | None = None, gold_class: int | None = None
) -> Label:
    """Mark a document of the topic's corpus as gold (known answer); later HITs each carry one gold item.

    A single topic takes ``relevant`` (True/False); a topic set ``gold_class``, a class position 0..M
    (0: none of these).
    """
    if document.corpus_id != topic.corpus_id:
        raise GoldDocumentError(f"Document {document.pk} is not in the corpus of topic {topic.name!r}.")
    if topic.is_multiclass:

        n_classes = TopicClass.objects.filter(topic=topic).count()
        if relevant is not None or gold_class is None or isinstance(gold_class, bool) \
                or not isinstance(gold_class, int) or not 0 <= gold_class <= n_classes:
            raise GoldDocumentError(
                f"Topic set {topic.name!r}: a gold document's known answer is one of its topics (1 to {n_classes}) "
                "or 0, none of these."
            )
        label, created = Label.objects.get_or_create(
            topic=topic, document=document, defaults={"gold_class": gold_class, "class_votes": [0] * (n_classes + 1)}
        )
        if not created and label.gold_class != gold_class:
            label.gold_class = gold_class
            label.save(update_fields=["gold_class", "updated_at"])
        return label
    if relevant is None or gold_class is not None:
        raise GoldDocumentError(f"Topic {topic.name!r}: a gold document's known answer is on topic or off topic.")
    label, created = Label.objects.get_or_create(topic=topic, document=document, defaults={"gold": bool(relevant)})
    if not created and label.gold != bool(relevant):
        label.gold = bool(relevant)
        label.save(update_fields=["gold", "updated_at"])
    return label


# =========================================================================== strata

GOLD_STRATUM = "G"
UNSAMPLED_STRATUM = "-"  # judged but in no sample (not expected: HITs are made from samples)

# When a document was sampled by several strata it takes the first of this order (then the
# smallest key): the pair's regions and N partition the corpus and carry the headline figures, so
# each keeps every document it sampled; certification samples are drawn fresh and rarely overlap;
# the paper design's A1/A2, a further classifier's precision sample and the uniform sample span
# several regions, so they give way.
_STRATUM_RANK: dict[str, int] = {Region.A12: 1, Region.B1: 1, Region.B2: 1, Region.NEITHER: 2, Region.A1: 4, Region.A2: 4,
                 Region.RETRIEVED: 5, Region.UNIFORM: 6}
_CERTIFICATION_RANK = 3
_OTHER_RANK = 7


def _stratum_of_draw(*, region: str, purpose: str, classifier_id: int | None, stratum_key: str) -> tuple[int, str]:
    """(rank, key) of the stratum a draw samples; the key reads like estimation's sample keys."""
    if region == Region.GOLD:
        return 0, GOLD_STRATUM
    if purpose == SampleDraw.Purpose.CERTIFICATION:
        # A plan samples several regions (A12 and B2) whose shares differ: one stratum per region.
        return _CERTIFICATION_RANK, f"{stratum_key or 'certification'}/{region}"
    if region == Region.RETRIEVED:
        return _STRATUM_RANK[Region.RETRIEVED], f"R:{classifier_id}"
    return _STRATUM_RANK.get(region, _OTHER_RANK), str(region)


def labels_strata(*, topic: Topic, document_ids: Collection[int] | None = None) -> dict[int, str]:
    """{document id: stratum key} of the topic's sampled (and gold) documents, optionally only these.

    The stratum is the sample that drew the document: "A12", "B1", "B2", "N", "A1", "A2",
    "R:<classifier id>" (a further classifier's precision sample), "U" (the uniform sample),
    "<stratum_key>/<region>" for a certification draw, "G" for gold documents. A document drawn
    by several samples takes one by the fixed rule of ``_STRATUM_RANK`` (pair regions, then N,
    certification, A1/A2, R, U; ties to the smallest key), so the result never depends on the
    order rows come back in. Dawid–Skene fits one class prior per stratum (docs/aggregation.md).
    """
    wanted = None if document_ids is None else set(document_ids)
    best: dict[int, tuple[int, str]] = {}
    rows = SampledDocument.objects.filter(topic=topic).values_list(
        "document_id", "region", "draw__purpose", "draw__classifier_id", "draw__stratum_key"
    )
    for document_id, region, purpose, classifier_id, stratum_key in rows.iterator(chunk_size=5000):
        if wanted is not None and document_id not in wanted:
            continue
        candidate = _stratum_of_draw(region=region, purpose=purpose, classifier_id=classifier_id, stratum_key=stratum_key)
        current = best.get(document_id)
        if current is None or candidate < current:
            best[document_id] = candidate
    strata = {document_id: key for document_id, (_, key) in best.items()}
    for document_id in topic_gold_document_ids(topic=topic):
        if wanted is None or document_id in wanted:
            strata[document_id] = GOLD_STRATUM  # known answers are not a sample of any region
    return strata


def labels_posteriors_recompute(*, topic: Topic) -> int:
    """Dawid–Skene (one-coin) posteriors over all the topic's judgments; returns labels updated.

    Gold documents anchor the model with their known answer. Only complete labels
    get a posterior (an incomplete one would mix in a partial vote count). The class
    prior is fitted per stratum (:func:`labels_strata`: the sample that drew the
    document), the workers' accuracies across all strata: one prior across A12
    (mostly relevant) and B1/B2 (about half) biased the pair's recall (issue 11).
    An "unsure" judgment is a missing observation (left out of the model); an undecided
    label (no sure vote, or the sure votes tie) gets no posterior, as under majority vote.
    """
    if topic.is_multiclass:
        return _labels_class_posteriors_recompute(topic=topic)
    rows = list(
        Judgment.objects.filter(topic=topic).order_by("document_id", "worker_id")
        .values_list("document_id", "worker_id", "relevant")
    )
    if not any(relevant is not None for _, _, relevant in rows):
        return 0
    doc_index: dict[int, int] = {}
    worker_index: dict[int, int] = {}
    items, workers, answers = [], [], []
    for doc_id, worker_id, relevant in rows:
        if relevant is None:
            continue  # "unsure": a missing observation, not a vote for either class
        items.append(doc_index.setdefault(doc_id, len(doc_index)))
        workers.append(worker_index.setdefault(worker_id, len(worker_index)))
        answers.append(int(relevant))
    gold = {doc_id: answer for doc_id, answer in topic_gold_answers(topic=topic).items() if doc_id in doc_index}
    stratum_of = labels_strata(topic=topic, document_ids=doc_index)
    stratum_keys = sorted({stratum_of.get(d, UNSAMPLED_STRATUM) for d in doc_index})
    stratum_index = {key: i for i, key in enumerate(stratum_keys)}
    result = dawid_skene(
        items=np.array(items),
        workers=np.array(workers),
        labels=np.array(answers),
        n_classes=2,
        gold_items=np.array([doc_index[d] for d in gold], dtype=np.int64) if gold else None,
        gold_labels=np.array([int(g) for g in gold.values()], dtype=np.int64) if gold else None,
        strata=np.array([stratum_index[stratum_of.get(d, UNSAMPLED_STRATUM)] for d in doc_index], dtype=np.int64),
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


def _labels_class_posteriors_recompute(*, topic: Topic) -> int:
    """A topic set's Dawid–Skene (one-coin) posteriors over its M + 1 classes; returns labels updated.

    ``estimation.stats.aggregation.dawid_skene`` with n_classes = M + 1 (class 0: none of these) and one
    stratum: the topic set's sample is one uniform sample of the corpus. An "unsure" judgment is a
    missing observation; gold documents (``Label.gold_class``) anchor the model with their known class.
    Only complete labels with a majority class get a posterior (``Label.class_posterior``, a list 0..M),
    as under majority vote.
    """
    n_classes = TopicClass.objects.filter(topic=topic).count() + 1
    rows = list(
        Judgment.objects.filter(topic=topic, choice__isnull=False).order_by("document_id", "worker_id")
        .values_list("document_id", "worker_id", "choice")
    )
    observed = [(doc_id, worker_id, int(choice)) for doc_id, worker_id, choice in rows
                if choice is not None and 0 <= choice < n_classes]
    if not observed:
        return 0
    doc_index: dict[int, int] = {}
    worker_index: dict[int, int] = {}
    items, workers, answers = [], [], []
    for doc_id, worker_id, choice in observed:
        items.append(doc_index.setdefault(doc_id, len(doc_index)))
        workers.append(worker_index.setdefault(worker_id, len(worker_index)))
        answers.append(choice)
    gold = dict(
        Label.objects.filter(topic=topic, gold_class__isnull=False, gold_class__lt=n_classes,
                             document_id__in=list(doc_index)).values_list("document_id", "gold_class")
    )
    result = dawid_skene(
        items=np.array(items),
        workers=np.array(workers),
        labels=np.array(answers),
        n_items=len(doc_index),
        n_classes=n_classes,
        gold_items=np.array([doc_index[d] for d in gold], dtype=np.int64) if gold else None,
        gold_labels=np.array(list(gold.values()), dtype=np.int64) if gold else None,
    )
    with transaction.atomic():
        labels = list(
            Label.objects.select_for_update()
            .filter(topic=topic, majority_class__isnull=False, document_id__in=list(doc_index))
            .order_by("document_id")
        )
        for label in labels:
            label.class_posterior = [float(p) for p in result.posterior[doc_index[label.document_id]]]
        Label.objects.bulk_update(labels, ["class_posterior"], batch_size=2000)
    return len(labels)


class TopicClassesBroken(ApplicationError):
    """A topic set whose class positions are not 1..M without gaps (never guessed around)."""


def topic_set_class_names(*, topic: Topic) -> list[str]:
    """Names indexed by class position: [0] "None of these", then the classes 1..M."""
    names = [NONE_OF_THESE_NAME]
    for position, class_name in TopicClass.objects.filter(topic=topic).order_by("position").values_list(
        "position", "name"
    ):
        if position != len(names):  # positions are 1..M without gaps (topic_set_create); never guess otherwise
            raise TopicClassesBroken(f"Topic set {topic.name!r} has no class at position {len(names)}.")
        names.append(class_name)
    return names
