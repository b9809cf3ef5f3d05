"""Topics: a named information need over a corpus, measured with a pair of classifiers."""
from __future__ import annotations

from collections.abc import Sequence

from django.db import IntegrityError, transaction

from annotation.models import Classifier, ClassifierPair, Corpus, Topic, TopicClassifier
from annotation.services.keywords import terms_normalize
from core.errors import ApplicationError


class TopicError(ApplicationError):
    pass


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
) -> Topic:
    """Create a draft topic with its classifier pair (c1, c2) and further classifiers to measure."""
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
    extra_ids = [c.pk for c in extra_classifiers]
    if len(set(extra_ids)) != len(extra_ids):
        raise TopicError("a further classifier is listed twice")
    if {c1.pk, c2.pk} & set(extra_ids):
        raise TopicError("a classifier of the pair is also listed as a further classifier")
    if Topic.objects.filter(name=name).exists():
        raise TopicError(f"a topic named {name!r} already exists")
    try:
        with transaction.atomic():
            topic = Topic.objects.create(
                corpus=corpus,
                name=name,
                instructions=instructions,
                target_recall=target_recall,
                seed_terms=terms_normalize(seed_terms),
            )
            ClassifierPair.objects.create(topic=topic, c1=c1, c2=c2)
            TopicClassifier.objects.bulk_create(TopicClassifier(topic=topic, classifier=c) for c in extra_classifiers)
    except IntegrityError as exc:  # a concurrent create with the same name
        raise TopicError(f"a topic named {name!r} already exists") from exc
    return topic
