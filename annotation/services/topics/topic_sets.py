"""Topic sets (seed 002): M mutually exclusive topics plus "none of these", judged on a uniform sample.

A topic set is a Topic of kind "multiclass" with M classes (TopicClass, positions 1..M; position 0,
NONE_OF_THESE, means "none of these topics" and has no row). It has no classifier pair: its sample is
a simple random sample of the whole corpus (SampleDraw purpose "uniform", region "U"), judged by
three workers who each choose one class (or "unsure" where the topic allows it) in ordinary HITs.
Routers (annotation.services.classifiers.routers) are its multi-class classifiers; the report compares their
predictions with the sample's labels.

The launch goes through the same machinery as a binary topic (``samples_launch``: topic row lock,
budget check in ``hits_create_for_draws``, one transaction), asking only for a uniform sample.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from django.db import IntegrityError, transaction

from annotation.models import NONE_OF_THESE, Corpus, Hit, Router, Topic, TopicClass
from annotation.selectors import topic_set_uniform_sample
from annotation.services.corpora.retrieved_sets import corpus_documents
from annotation.services.crowd.crowds import crowd_cost_per_assignment
from annotation.services.crowd.hits import BudgetExceeded, topic_committed_cost
from annotation.services.crowd.labels import NONE_OF_THESE_NAME, topic_gold_document_ids, topic_set_class_names
from annotation.services.sampling.draws import Launch, samples_launch
from core.errors import ApplicationError

MIN_CLASSES = 2
MAX_CLASSES = 20
MAX_CLASS_NAME = 200
MAX_HIT_SIZE = 50
# Names that would read as the "none of these" answer: a class may not take them.
_RESERVED_NAMES = {"none", "none of these", "none of the above", "0"}


class TopicSetError(ApplicationError):
    """A topic set that cannot be created or launched as asked; the message says why."""


class TopicSetBudgetExceeded(TopicSetError, BudgetExceeded):
    """The launch would spend more than the topic set's budget (caught as either parent)."""


def _decimal(value: Decimal | int | str | float | None, *, what: str) -> Decimal | None:
    if value is None or value == "":
        return None
    try:
        amount = Decimal(str(value))
    except (InvalidOperation, ValueError):
        raise TopicSetError(f"the {what} {value!r} is not an amount of dollars") from None
    if not amount.is_finite() or amount < 0:
        raise TopicSetError(f"the {what} must be a non-negative amount, got {value}")
    if amount != amount.quantize(Decimal("0.01")):
        raise TopicSetError(f"the {what} has at most two decimals (cents), got {value}")
    return amount


def _classes_clean(classes: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    cleaned: list[tuple[str, str]] = []
    seen: dict[str, int] = {}
    for index, entry in enumerate(classes, start=1):
        try:
            name, description = entry
        except (TypeError, ValueError):
            raise TopicSetError(f"class {index} must be a (name, description) pair") from None
        name = " ".join(str(name or "").split())
        description = str(description or "").strip()
        if not name:
            raise TopicSetError(f"class {index} needs a name")
        if len(name) > MAX_CLASS_NAME:
            raise TopicSetError(f"class {index}: a class name is at most {MAX_CLASS_NAME} characters")
        if name.lower() in _RESERVED_NAMES:
            raise TopicSetError(
                f"class {index}: {name!r} is reserved for the answer “{NONE_OF_THESE_NAME}”, which every topic set "
                "offers already; name the class after its topic"
            )
        if name.lower() in seen:
            raise TopicSetError(f"class {index}: the name {name!r} is already class {seen[name.lower()]}")
        seen[name.lower()] = index
        cleaned.append((name, description))
    if not MIN_CLASSES <= len(cleaned) <= MAX_CLASSES:
        raise TopicSetError(
            f"a topic set has between {MIN_CLASSES} and {MAX_CLASSES} topics, {len(cleaned)} given "
            f"(“{NONE_OF_THESE_NAME}” is added for you)"
        )
    return cleaned


def topic_set_create(
    *,
    corpus: Corpus,
    name: str,
    classes: Sequence[tuple[str, str]],
    instructions: str = "",
    allow_unsure: bool = False,
    aggregator: str = Topic.Aggregator.MAJORITY,
    hit_size: int = 5,
    reward_per_hit: Decimal | None = None,
    budget: Decimal | None = None,
) -> Topic:
    """Create a draft topic set over `corpus` with its M classes (name, description), 2 <= M <= 20.

    Class positions follow the given order (1..M); "none of these" (position 0) is implied. No
    classifier pair: routers are added afterwards (annotation.services.classifiers.routers).
    """
    name = (name or "").strip()
    if not name:
        raise TopicSetError("the topic set needs a name")
    if len(name) > 200:
        raise TopicSetError("a topic set's name is at most 200 characters")
    cleaned = _classes_clean(classes)
    if aggregator not in Topic.Aggregator.values:
        raise TopicSetError(f"unknown aggregator {aggregator!r}: choose {' or '.join(Topic.Aggregator.values)}")
    try:
        hit_size = int(hit_size)
    except (TypeError, ValueError):
        raise TopicSetError(f"the HIT size {hit_size!r} is not a whole number") from None
    if not 1 <= hit_size <= MAX_HIT_SIZE:
        raise TopicSetError(f"a HIT holds between 1 and {MAX_HIT_SIZE} documents, got {hit_size}")
    reward = _decimal(reward_per_hit, what="reward per HIT")
    budget_amount = _decimal(budget, what="budget")
    if Topic.objects.filter(name=name).exists():
        raise TopicSetError(f"a topic named {name!r} already exists")
    fields = {"reward_per_hit": reward} if reward is not None else {}
    try:
        with transaction.atomic():
            topic = Topic.objects.create(
                corpus=corpus,
                kind=Topic.Kind.MULTICLASS,
                name=name,
                instructions=instructions or "",
                allow_unsure=bool(allow_unsure),
                aggregator=aggregator,
                hit_size=hit_size,
                budget=budget_amount,
                **fields,
            )
            TopicClass.objects.bulk_create(
                TopicClass(topic=topic, position=position, name=class_name, description=description)
                for position, (class_name, description) in enumerate(cleaned, start=1)
            )
    except IntegrityError as exc:  # a concurrent create with the same name
        raise TopicSetError(f"a topic named {name!r} already exists") from exc
    return topic


def _ensure_topic_set(topic: Topic) -> None:
    if not topic.is_multiclass:
        raise TopicSetError(f"Topic {topic.name!r} is a single topic, not a topic set.")


def topic_set_classes(*, topic: Topic) -> list[TopicClass]:
    """The topic set's classes in position order (1..M); "none of these" (0) has no row."""
    return list(TopicClass.objects.filter(topic=topic).order_by("position"))


def topic_set_class_count(*, topic: Topic) -> int:
    """M, the number of classes (positions 1..M); choices run over 0..M."""
    return TopicClass.objects.filter(topic=topic).count()


# --------------------------------------------------------------------------- launch


@dataclass(frozen=True)
class LaunchPreview:
    """What launching a uniform sample of `documents` (in all) would add and cost, and whether it is refused."""

    new_documents: int
    hits: int
    judgments: int
    cost: Decimal
    committed: Decimal
    budget: Decimal | None
    budget_left: Decimal | None
    refused: str | None

    @property
    def fingerprint(self) -> str:
        """What the confirmation showed, besides the cost: a change in any of it asks again."""
        return f"{self.new_documents}:{self.hits}:{self.committed}:{self.budget}"


def _documents_check(documents: int) -> int:
    try:
        wanted = int(documents)
    except (TypeError, ValueError):
        raise TopicSetError(f"the sample size {documents!r} is not a whole number") from None
    if wanted < 1:
        raise TopicSetError(f"the sample size must be at least 1 document, got {wanted}")
    return wanted


def topic_set_launch_preview(*, topic: Topic, documents: int) -> LaunchPreview:
    """The launch of a uniform sample of `documents` in all, priced: a repeat draws only the difference.

    A sample larger than the corpus is the corpus. `refused` carries the budget message (with the
    amounts) when the budget is short; nothing is written.
    """
    _ensure_topic_set(topic)
    wanted = _documents_check(documents)
    corpus_size = len(corpus_documents(corpus_id=topic.corpus_id))
    new_documents = max(0, min(wanted, corpus_size) - topic_set_uniform_sample(topic=topic).count())
    hits = math.ceil(new_documents / topic.hit_size) if new_documents else 0
    gold_per_hit = 1 if hits and topic_gold_document_ids(topic=topic) else 0
    per_assignment = crowd_cost_per_assignment(topic)
    cost = per_assignment * Hit.ASSIGNMENTS_PER_HIT * hits
    committed = topic_committed_cost(topic=topic)
    budget = topic.budget
    budget_left = None if budget is None else budget - committed
    refused = None
    if budget is not None and committed + cost > budget:
        refused = (
            f"Topic set {topic.name!r}: {hits} new HITs would cost ${cost:.2f} "
            f"({Hit.ASSIGNMENTS_PER_HIT} assignments each at ${per_assignment:.2f}), bringing the total to "
            f"${committed + cost:.2f} — over the budget of ${budget:.2f} (${committed:.2f} already committed, "
            f"${max(budget_left or Decimal('0'), Decimal('0')):.2f} left). Raise the budget or sample fewer documents."
        )
    return LaunchPreview(
        new_documents=new_documents,
        hits=hits,
        judgments=Hit.ASSIGNMENTS_PER_HIT * (new_documents + gold_per_hit * hits),
        cost=cost,
        committed=committed,
        budget=budget,
        budget_left=budget_left,
        refused=refused,
    )


# A class's interval is "usable" when the planned uniform sample is expected to hold at least this many of its
# documents. 20: the coverage simulations of the report's latent-class model (tests/estimation/
# test_multiclass_noise.py: 100 studies per worker accuracy 0.8 and 0.9, 90-96% "none") ran at about 20
# sampled documents per topic and covered the true corpus F1 in >= 97% of them; at about 5 per topic the
# interval is mostly the prior's (a 600-document sample with 96% "none": macro-F1 coverage 30-75%).
USABLE_PER_CLASS = 20


@dataclass(frozen=True)
class ExpectedClass:
    position: int
    name: str
    share: float  # share of the corpus the router sends to the class
    expected: float  # expected documents of the class in the planned uniform sample
    usable: bool  # expected >= USABLE_PER_CLASS


@dataclass(frozen=True)
class ExpectedPerClass:
    """Expected documents per class in a planned uniform sample, from a router's predicted class shares."""

    router: str | None  # the router whose shares are used; None when the set has no live router yet
    documents: int  # the planned sample size (in all)
    corpus_size: int
    classes: tuple[ExpectedClass, ...]  # topics 1..M, then "none of these"
    usable_per_class: int
    needed: int | None  # the sample size giving every topic >= usable_per_class expected documents
    unreachable: tuple[str, ...]  # topics the router sends no document to: no sample size helps

    @property
    def thin(self) -> tuple[ExpectedClass, ...]:
        return tuple(c for c in self.classes if c.position != NONE_OF_THESE and not c.usable)


def topic_set_expected_per_class(*, topic: Topic, documents: int) -> ExpectedPerClass:
    """Expected documents per class in a uniform sample of ``documents`` (in all), and the size that would
    give every topic a usable interval (at least USABLE_PER_CLASS expected documents).

    A uniform sample of n from a corpus of N holds n x share_k documents of class k in expectation. The true
    shares are unknown before judging; the newest live router's predicted shares (its corpus documents per
    class) stand in for them, so a router that misses a topic understates it. The size needed is
    ceil(USABLE_PER_CLASS / smallest topic share), at most the corpus.
    """
    _ensure_topic_set(topic)
    wanted = _documents_check(documents)
    names = topic_set_class_names(topic=topic)
    corpus_size = int(topic.corpus.document_count or 0)
    planned = min(wanted, corpus_size) if corpus_size else wanted
    router = (Router.objects.filter(topic=topic, archived_at__isnull=True).order_by("-created_at", "-pk").first())
    counts = [float(x) for x in (router.predicted_counts if router else [])][: len(names)]
    counts += [0.0] * (len(names) - len(counts))
    total = sum(counts)
    if router is None or total <= 0:
        return ExpectedPerClass(router=router.name if router else None, documents=planned, corpus_size=corpus_size,
                                classes=(), usable_per_class=USABLE_PER_CLASS, needed=None, unreachable=())
    order = (*range(1, len(names)), NONE_OF_THESE)
    rows = tuple(ExpectedClass(position=k, name=names[k], share=counts[k] / total,
                               expected=planned * counts[k] / total,
                               usable=planned * counts[k] / total >= USABLE_PER_CLASS) for k in order)
    topic_shares = [c.share for c in rows if c.position != NONE_OF_THESE and c.share > 0]
    unreachable = tuple(c.name for c in rows if c.position != NONE_OF_THESE and c.share <= 0)
    needed = None
    if topic_shares:
        needed = math.ceil(USABLE_PER_CLASS / min(topic_shares) - 1e-9)
        if corpus_size:
            needed = min(needed, corpus_size)
    return ExpectedPerClass(router=router.name, documents=planned, corpus_size=corpus_size, classes=rows,
                            usable_per_class=USABLE_PER_CLASS, needed=needed, unreachable=unreachable)


def topic_set_launch(*, topic: Topic, documents: int, seed: int | None = None, publish: bool = True) -> Launch:
    """Draw the topic set's uniform sample up to `documents` in all, queue the new ones in HITs, publish.

    One transaction under the topic row lock (``samples_launch``): a budget too small refuses the whole
    launch (TopicSetBudgetExceeded, with the amounts) and records no draw. The set must have its classes.
    """
    _ensure_topic_set(topic)
    wanted = _documents_check(documents)
    if topic_set_class_count(topic=topic) < MIN_CLASSES:
        raise TopicSetError(f"Topic set {topic.name!r} needs at least {MIN_CLASSES} topics before sampling.")
    try:
        return samples_launch(topic=topic, publish=publish, per_region=0, uniform=wanted, seed=seed)
    except BudgetExceeded as exc:
        if isinstance(exc, TopicSetError):
            raise
        raise TopicSetBudgetExceeded(exc.message, extra=exc.extra) from exc


__all__ = [
    "NONE_OF_THESE",
    "NONE_OF_THESE_NAME",
    "USABLE_PER_CLASS",
    "ExpectedClass",
    "ExpectedPerClass",
    "LaunchPreview",
    "TopicSetBudgetExceeded",
    "TopicSetError",
    "topic_set_class_count",
    "topic_set_class_names",
    "topic_set_classes",
    "topic_set_create",
    "topic_set_expected_per_class",
    "topic_set_launch",
    "topic_set_launch_preview",
]
