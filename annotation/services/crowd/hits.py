"""HITs: sampled documents grouped by topic.hit_size, each to be judged by three workers.

A document is queued at most once per topic (HitItem's `hit_item_once_per_topic`
constraint): a document drawn by two samples is judged once and its Label serves
both. When the topic has gold documents, each HIT also carries one of them, at a
random position, so workers' accuracy can be checked; gold items are not sample
documents and do not count toward a HIT's size.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

import numpy as np
from django.db import transaction
from django.db.models import Count, Sum

from annotation.models import Hit, HitItem, Label, SampledDocument, SampleDraw, Topic, TopicClass
from annotation.services.crowd.crowds import crowd_cost_per_assignment, crowd_publish
from annotation.services.crowd.labels import topic_gold_document_ids
from core.errors import ApplicationError


class BudgetExceeded(ApplicationError):
    """Creating the HITs would spend more than the topic's budget."""

    http_status = 409
    code = "conflict"


@dataclass(frozen=True)
class BudgetCheck:
    committed: Decimal  # cost of the topic's existing (not cancelled) HITs
    new: Decimal  # cost of the HITs about to be created
    budget: Decimal | None

    @property
    def total(self) -> Decimal:
        return self.committed + self.new


def topic_committed_cost(*, topic: Topic) -> Decimal:
    """What the topic's HITs cost if every assignment is done: reward × assignments (+ crowd fees)."""
    total = Decimal("0")
    rows = (
        Hit.objects.filter(topic=topic)
        .exclude(status=Hit.Status.CANCELLED)
        .values("reward")
        .annotate(assignments_total=Sum("max_assignments"))
    )
    for row in rows:
        total += crowd_cost_per_assignment(topic, reward=row["reward"]) * row["assignments_total"]
    return total


def hits_budget_check(*, topic: Topic, new_hits: int) -> BudgetCheck:
    """Refuse (BudgetExceeded) when `new_hits` more HITs would take the topic over its budget."""
    per_hit = crowd_cost_per_assignment(topic) * Hit.ASSIGNMENTS_PER_HIT
    check = BudgetCheck(committed=topic_committed_cost(topic=topic), new=per_hit * new_hits, budget=topic.budget)
    if check.budget is not None and check.total > check.budget:
        raise BudgetExceeded(
            f"Topic {topic.name!r}: {new_hits} new HITs would cost ${check.new:.2f} "
            f"(${per_hit:.2f} each: {Hit.ASSIGNMENTS_PER_HIT} assignments at ${crowd_cost_per_assignment(topic):.2f}), "
            f"bringing the total to ${check.total:.2f} — over the budget of ${check.budget:.2f} "
            f"(${check.committed:.2f} already committed). Raise the budget or sample fewer documents."
        )
    return check


def _draws_seed(draws: Sequence[SampleDraw]) -> int:
    return int(np.random.SeedSequence([int(d.seed) for d in draws] or [0]).generate_state(1)[0])


def hits_create_for_draws(*, topic: Topic, draws: Sequence[SampleDraw]) -> list[Hit]:
    """Queue the draws' documents not yet queued for the topic into new HITs (budget permitting).

    Documents are shuffled (seeded by the draws) so a HIT mixes regions: a worker
    who sees only B1 documents in a row could drift toward "off topic".
    """
    with transaction.atomic():
        topic = Topic.objects.select_for_update().get(pk=topic.pk)
        queued = set(
            HitItem.objects.filter(topic=topic, is_gold=False).values_list("document_id", flat=True)
        )
        doc_ids = []
        rows = SampledDocument.objects.filter(draw__in=[d.pk for d in draws]).order_by("draw_id", "document_id")
        for doc_id in rows.values_list("document_id", flat=True):
            if doc_id not in queued:
                queued.add(doc_id)
                doc_ids.append(doc_id)
        if not doc_ids:
            return []
        rng = np.random.default_rng(_draws_seed(draws))
        rng.shuffle(doc_ids)
        size = topic.hit_size
        n_hits = math.ceil(len(doc_ids) / size)
        hits_budget_check(topic=topic, new_hits=n_hits)

        hits = Hit.objects.bulk_create(
            [Hit(topic=topic, reward=topic.reward_per_hit, max_assignments=Hit.ASSIGNMENTS_PER_HIT) for _ in range(n_hits)]
        )
        gold_ids = topic_gold_document_ids(topic=topic)
        gold_order = _gold_rotation(topic=topic, gold_ids=gold_ids, rng=rng)
        items = []
        for index, hit in enumerate(hits):
            chunk = doc_ids[index * size : (index + 1) * size]
            documents = [(doc_id, False) for doc_id in chunk]
            if gold_order:
                gold_id = gold_order[index % len(gold_order)]
                if gold_id not in chunk:
                    documents.insert(int(rng.integers(0, len(documents) + 1)), (gold_id, True))
            items += [
                HitItem(hit=hit, topic=topic, document_id=doc_id, position=position, is_gold=is_gold)
                for position, (doc_id, is_gold) in enumerate(documents)
            ]
        HitItem.objects.bulk_create(items, batch_size=2000)
        # Labels exist from the start, so submissions only increment counters (no insert races).
        # A topic set's labels count votes per class 0..M (0: none of these) from the start.
        class_votes = [0] * (TopicClass.objects.filter(topic=topic).count() + 1) if topic.is_multiclass else []
        Label.objects.bulk_create(
            [Label(topic=topic, document_id=doc_id, class_votes=list(class_votes)) for doc_id in doc_ids],
            ignore_conflicts=True, batch_size=2000,
        )
        return hits


def _gold_rotation(*, topic: Topic, gold_ids: list[int], rng: np.random.Generator) -> list[int]:
    """Gold documents, least used first, so each is spread over as many HITs as possible."""
    if not gold_ids:
        return []
    used = dict(
        HitItem.objects.filter(topic=topic, is_gold=True)
        .values("document_id")
        .annotate(n=Count("pk"))
        .values_list("document_id", "n")
    )
    shuffled = list(rng.permutation(gold_ids))
    return sorted((int(g) for g in shuffled), key=lambda g: used.get(g, 0))


def hits_publish(*, hits: Sequence[Hit]) -> None:
    """Offer the HITs to their topic's crowd platform (see annotation.services.crowd.crowds)."""
    for hit in hits:
        crowd_publish(hit=hit)


def hit_cancel(*, hit: Hit) -> None:
    """Stop offering a HIT; submitted judgments stay."""
    Hit.objects.filter(pk=hit.pk, status=Hit.Status.OPEN).update(status=Hit.Status.CANCELLED)
