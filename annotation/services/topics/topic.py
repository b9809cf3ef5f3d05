"""Topics: a named information need over a corpus, measured with a pair of classifiers."""
from __future__ import annotations

from collections.abc import Sequence

from django.db import IntegrityError, models, transaction
from django.db.models import ProtectedError
from django.utils import timezone

from annotation.models import (
    Classifier,
    ClassifierPair,
    ClassifierScore,
    Corpus,
    Hit,
    HitItem,
    Judgment,
    Label,
    Region,
    Router,
    SampledDocument,
    SampleDraw,
    Topic,
    TopicClass,
    TopicClassifier,
)
from annotation.services.classifiers.classifier import rows_referring_to
from annotation.services.classifiers.keywords import terms_normalize
from annotation.services.classifiers.pairs import PairCheck, pair_design_check
from annotation.services.corpora.engine_counts import RegionCountsPending
from core.errors import ApplicationError


class TopicError(ApplicationError):
    pass


class PairRefused(TopicError):
    """The two classifiers cannot measure each other's recall (nested, identical or disjoint sets)."""


def pair_design_ensure(*, c1: Classifier, c2: Classifier) -> PairCheck:
    """Raise PairRefused (its message for the user) when the pair cannot carry an estimate; else the warnings."""
    try:
        check = pair_design_check(c1=c1, c2=c2)
    except RegionCountsPending:
        # A corpus in the team's engine, this pair never counted: it is counted in a task once the topic exists,
        # and the plan and the launch refuse it then if it cannot carry an estimate (sampling.plan, draws).
        return PairCheck(codes=(), errors=(), warnings=())
    if check.refused:
        raise PairRefused(" ".join(check.errors[:1]))
    return check


# The kinds of classifier that store a score per document (ClassifierScore rows): a scorer must be one of them.
SCORER_KINDS = (Classifier.Kind.SCORES, Classifier.Kind.TRAINED)


def scorer_check(*, corpus: Corpus | int, scorer: Classifier) -> None:
    """Refuse (TopicError, a 400 with the reason) a scorer that cannot stratify the topic's samples.

    A scorer is a classifier of the topic's corpus that stores a score per document: an uploaded scores
    classifier or a trained one (both keep ClassifierScore rows), not archived, with at least one score.
    """
    corpus_id = corpus if isinstance(corpus, int) else corpus.pk
    if scorer.corpus_id != corpus_id:
        raise TopicError(f"the scorer {scorer.name!r} belongs to another corpus than the topic's")
    if scorer.kind not in SCORER_KINDS:
        raise TopicError(f"the scorer {scorer.name!r} is a {scorer.get_kind_display().lower()} classifier, which "
                         "stores no scores: choose an uploaded scores classifier or a trained one")
    if scorer.archived_at is not None:
        raise TopicError(f"the scorer {scorer.name!r} is archived: unarchive it on its page to use it")
    if not ClassifierScore.objects.filter(classifier=scorer).exists():
        raise TopicError(f"the scorer {scorer.name!r} has no stored scores")


def topic_scorer_set(*, topic: Topic, scorer: Classifier | None) -> Topic:
    """Name (or clear, with None) the classifier whose scores stratify the topic's sample of N.

    Refused once documents neither classifier retrieved have been drawn for the pair with another scorer (or
    none): the sample of N would then mix two designs. Setting the same scorer again is a no-op.
    """
    if scorer is not None:
        scorer_check(corpus=topic.corpus_id, scorer=scorer)
    with transaction.atomic():
        locked = Topic.objects.select_for_update().get(pk=topic.pk)
        if locked.scorer_id == (scorer.pk if scorer is not None else None):
            return locked
        drawn = SampleDraw.objects.filter(topic=locked, region=Region.NEITHER,
                                          purpose=SampleDraw.Purpose.PAIR).exists()
        if drawn:
            raise TopicError("the scorer cannot change once documents neither classifier retrieved have been drawn: "
                             "their sample would mix two designs. Define a new topic to use another scorer.")
        Topic.objects.filter(pk=locked.pk).update(scorer=scorer)
    topic.refresh_from_db(fields=["scorer"])
    return topic


def topic_create(
    *,
    corpus: Corpus,
    name: str,
    c1: Classifier,
    c2: Classifier,
    instructions: str = "",
    target_recall: float = 0.8,
    seed_terms: Sequence[str] = (),
    extra_classifiers: Sequence[Classifier] = (),
    scorer: Classifier | None = None,
) -> Topic:
    """Create a draft topic with its classifier pair (c1, c2) and further classifiers to measure.

    A pair that cannot carry a recall estimate is refused (PairRefused, see pair_design_check):
    one retrieved set containing the other, identical sets, or no document in common.
    """
    name = (name or "").strip()
    if not name:
        raise TopicError("the topic needs a name")
    try:
        target_recall = float(target_recall)
    except (TypeError, ValueError):
        raise TopicError(f"target recall {target_recall!r} is not a number") from None
    if not 0 < target_recall < 1:
        raise TopicError(f"the target recall must lie strictly between 0 and 1, got {target_recall}")
    if c1.pk == c2.pk:
        raise TopicError(f"the pair needs two different classifiers, {c1.name!r} was given twice")
    for classifier in (c1, c2, *extra_classifiers):
        if classifier.corpus_id != corpus.pk:
            raise TopicError(f"classifier {classifier.name!r} belongs to another corpus than {corpus.name!r}")
        if classifier.archived_at is not None:
            raise TopicError(f"classifier {classifier.name!r} is archived: unarchive it on its page to use it in a topic")
    extra_ids = [c.pk for c in extra_classifiers]
    if len(set(extra_ids)) != len(extra_ids):
        raise TopicError("a further classifier is listed twice")
    if {c1.pk, c2.pk} & set(extra_ids):
        raise TopicError("a classifier of the pair is also listed as a further classifier")
    if Topic.objects.filter(name=name).exists():
        raise TopicError(f"a topic named {name!r} already exists")
    if scorer is not None:
        scorer_check(corpus=corpus, scorer=scorer)
    pair_design_ensure(c1=c1, c2=c2)
    try:
        with transaction.atomic():
            topic = Topic.objects.create(
                corpus=corpus,
                name=name,
                instructions=instructions,
                target_recall=target_recall,
                seed_terms=terms_normalize(seed_terms),
                scorer=scorer,
            )
            ClassifierPair.objects.create(topic=topic, c1=c1, c2=c2)
            TopicClassifier.objects.bulk_create(TopicClassifier(topic=topic, classifier=c) for c in extra_classifiers)
    except IntegrityError as exc:  # a concurrent create with the same name
        raise TopicError(f"a topic named {name!r} already exists") from exc
    return topic


# --- clean-up: rename, archive, delete (issue 12 item 6) -------------------------------------------

# How the rows that block a deletion are named, in this order; rows implied by these (HIT items,
# sampled documents, assignments) are not listed again. Other apps' rows (reports, certification
# plans) follow under their models' own names.
_BLOCKER_NAMES: tuple[tuple[type[models.Model], str, str], ...] = (
    (Judgment, "judgment", "judgments"),
    (Hit, "HIT", "HITs"),
    (SampleDraw, "sample draw", "sample draws"),
    (Label, "label", "labels"),
)


def topic_delete_blockers(*, topic: Topic) -> list[str]:
    """What measured depends on the topic ("240 judgments", "1 estimate snapshot"); empty: it can be deleted."""
    known = {model: (one, many) for model, one, many in _BLOCKER_NAMES}
    counts = [(model, model._base_manager.filter(topic=topic).count()) for model, _, _ in _BLOCKER_NAMES]
    reasons = [f"{count} {known[model][0] if count == 1 else known[model][1]}" for model, count in counts if count]
    # A topic set's classes and routers are its definition, not measurements: they go with it (judgments,
    # samples and reports, which would have measured them, block above).
    ignore: list[type[models.Model]] = [
        ClassifierPair, TopicClassifier, SampledDocument, HitItem, TopicClass, Router, *known,
    ]
    reasons += [f"{count} {name}" for name, count in rows_referring_to(instance=topic, ignore=ignore)]
    return reasons


def topic_delete(*, topic: Topic) -> None:
    """Delete a topic with nothing measured (no HIT, judgment, sample or report); else TopicError naming why.

    Its classifier pair and further-classifier links go with it; the classifiers stay.
    """
    name = topic.name
    try:
        with transaction.atomic():
            locked = Topic.objects.select_for_update().get(pk=topic.pk)
            reasons = topic_delete_blockers(topic=locked)
            if reasons:
                raise TopicError(f"Topic “{name}” cannot be deleted: it has {_and(reasons)}; archive it instead "
                                 "(it stops sampling and leaves the lists, and its report stays readable).")
            locked.delete()
    except (ProtectedError, IntegrityError) as exc:  # a launch drew documents while we checked
        raise TopicError(f"Topic “{name}” cannot be deleted: sampling has started. Archive it instead.") from exc


def _and(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def topic_archive(*, topic: Topic) -> Topic:
    """Archive: hidden from lists, closed to sampling; its data and report stay. Idempotent.

    The status becomes CLOSED, which the existing machinery already honours: claims serve only
    active topics (annotation.services.crowd.assignments, and Mechanical Turk's accept check), and
    samples_draw refuses a closed topic, so neither a launch, a top-up nor a certification draw
    can add documents. Assignments already claimed may still be submitted.
    """
    with transaction.atomic():
        locked = Topic.objects.select_for_update().get(pk=topic.pk)
        if locked.archived_at is None:
            Topic.objects.filter(pk=topic.pk).update(archived_at=timezone.now(), status=Topic.Status.CLOSED)
    topic.refresh_from_db(fields=["archived_at", "status"])
    return topic


def topic_unarchive(*, topic: Topic) -> Topic:
    """Bring an archived topic back: paused if it has HITs or samples (resume it to sample again), else a draft."""
    with transaction.atomic():
        locked = Topic.objects.select_for_update().get(pk=topic.pk)
        if locked.archived_at is not None:
            started = Hit.objects.filter(topic=locked).exists() or SampleDraw.objects.filter(topic=locked).exists()
            status = Topic.Status.PAUSED if started else Topic.Status.DRAFT
            Topic.objects.filter(pk=topic.pk).update(archived_at=None, status=status)
    topic.refresh_from_db(fields=["archived_at", "status"])
    return topic


def topic_rename(*, topic: Topic, name: str) -> Topic:
    """Give the topic a new name, unique among topics; its samples, judgments and reports stay with it."""
    name = (name or "").strip()
    if not name:
        raise TopicError("the topic needs a name")
    if name == topic.name:
        return topic
    clash = f"a topic named “{name}” already exists; choose another name"
    if Topic.objects.filter(name=name).exclude(pk=topic.pk).exists():
        raise TopicError(clash)
    try:
        with transaction.atomic():
            Topic.objects.filter(pk=topic.pk).update(name=name)
    except IntegrityError as exc:  # a concurrent rename or create took the name
        raise TopicError(clash) from exc
    topic.name = name
    return topic
