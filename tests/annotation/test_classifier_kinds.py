"""Classifier kinds as a registry (annotation/services/classifiers/kinds/): every kind of Classifier.Kind is
registered, and a kind registered here — in this test module alone — is checked, built through the build task
(sharded), fingerprinted, shown on the build page's state and cleaned up after a failure, with no other module
touched."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.db import transaction
from pyroaring import BitMap

from annotation.models import Classifier, ClassifierBuild, Corpus, Document
from annotation.services.classifiers.classifier import ClassifierError, classifier_fingerprint, classifier_store
from annotation.services.classifiers.classifier_builds import classifier_build_start, classifier_build_state
from annotation.services.classifiers.kinds import (
    ClassifierKind,
    ClassifierKindUnknown,
    Phase,
    Progress,
    kind_get,
    kind_register,
    kind_unregister,
    kinds_all,
)
from annotation.services.classifiers.kinds.steps import bitmap_decode, bitmap_encode, build_done
from annotation.services.corpora.retrieved_sets import bitmap_from_ids, bitmap_to_bytes, classifier_bitmap

pytestmark = pytest.mark.django_db


def test_every_kind_of_classifier_is_registered_once():
    registered = [kind.kind for kind in kinds_all()]
    assert sorted(registered) == sorted(Classifier.Kind.values) and len(set(registered)) == len(registered)
    for value in Classifier.Kind.values:
        assert kind_get(value).kind == value
    with pytest.raises(ClassifierKindUnknown, match="not a kind of classifier"):
        kind_get("nope")
    assert {kind.kind for kind in kinds_all() if kind.has_threshold} == {"scores", "trained"}
    assert kind_get("field_values").steps is None  # made in the request, not by the build task


class EvenIds(ClassifierKind):
    """A made-up kind: retrieves the documents whose primary key is divisible by `every`, scanned in shards."""

    kind = "even_ids"
    steps = "scan"
    cleaned: list[int] = []

    def definition_clean(self, *, corpus: Corpus, definition: dict[str, Any]) -> dict[str, Any]:
        every = definition.get("every")
        if not isinstance(every, int) or every < 1:
            raise ClassifierError("every is a whole number, 1 or more")
        return {"every": every}

    def fingerprint_parts(self, definition: dict[str, Any]) -> dict[str, Any]:
        return {"every": definition["every"]}

    def shard(self, *, build: ClassifierBuild, pk_range: tuple[int, int], progress: Progress) -> str:
        lo, hi = pk_range
        if build.definition.get("boom"):
            raise RuntimeError("shard lost")
        pks = list(Document.objects.filter(corpus=build.corpus, pk__gte=lo, pk__lt=hi).values_list("pk", flat=True))
        progress(len(pks))
        return bitmap_encode(BitMap(pk for pk in pks if pk % build.definition["every"] == 0))

    def finish(self, *, build_id: int, shard_results: list[str], phase: Phase) -> ClassifierBuild | None:
        retrieved = BitMap()
        for encoded in shard_results:
            retrieved |= bitmap_decode(encoded)
        with transaction.atomic():
            build = ClassifierBuild.objects.select_for_update().select_related("corpus").get(pk=build_id)
            if build.status != ClassifierBuild.Status.RUNNING:
                return build
            # Classifier.kind is a database choice: the made-up kind stores its result as retrieved ids.
            classifier = classifier_store(corpus=build.corpus, name=build.name, kind=Classifier.Kind.IDS,
                                          definition={}, retrieved=retrieved)
            build_done(build, classifier, details={"every": build.definition["every"]})
        return build

    def cleanup(self, *, build: ClassifierBuild) -> None:
        self.cleaned.append(build.pk)

    def state(self, *, build: ClassifierBuild, details: dict[str, Any]) -> dict[str, Any]:
        return {"every": details.get("every")}


@pytest.fixture
def even_ids() -> Iterator[EvenIds]:
    kind = kind_register(EvenIds())
    assert isinstance(kind, EvenIds)
    kind.cleaned = []
    yield kind
    kind_unregister(EvenIds.kind)


@pytest.fixture
def corpus() -> tuple[Corpus, list[int]]:
    corpus = Corpus.objects.create(name="made-up")
    Document.objects.bulk_create(Document(corpus=corpus, external_id=f"d{i}", title=f"t{i}", text=f"x{i}",
                                          content_hash=f"{i:064d}") for i in range(30))
    ids = list(Document.objects.filter(corpus=corpus).order_by("pk").values_list("pk", flat=True))
    corpus.documents_bitmap = bitmap_to_bytes(bitmap_from_ids(ids))
    corpus.document_count = len(ids)
    corpus.save()
    return corpus, ids


def _built(django_capture_on_commit_callbacks, **kwargs: Any) -> ClassifierBuild:
    with django_capture_on_commit_callbacks(execute=True):
        build = classifier_build_start(user=None, **kwargs)
    build.refresh_from_db()
    return build


def test_a_kind_registered_in_a_test_is_built_end_to_end_by_the_build_task(
        even_ids, corpus, django_capture_on_commit_callbacks):
    corpus_, ids = corpus
    with pytest.raises(ClassifierError, match="whole number"):
        classifier_build_start(corpus=corpus_, name="bad", kind="even_ids", definition={"every": 0})
    build = _built(django_capture_on_commit_callbacks, corpus=corpus_, name="thirds", kind="even_ids",
                   definition={"every": 3}, shards=3)
    assert build.status == "done", build.error
    assert build.shards == 3 and build.processed == build.total == 30
    expected = BitMap(pk for pk in ids if pk % 3 == 0)
    assert classifier_bitmap(classifier=build.classifier) == expected
    state = classifier_build_state(build=build)
    assert state["every"] == 3 and state["retrieved"] == len(expected) and state["finished"]
    assert classifier_fingerprint(kind="even_ids", definition={"every": 3}, retrieved=expected) != \
        classifier_fingerprint(kind="even_ids", definition={"every": 4}, retrieved=expected)
    assert even_ids.cleaned == []


def test_a_failing_build_of_a_registered_kind_is_failed_and_cleaned_up(
        even_ids, corpus, django_capture_on_commit_callbacks, monkeypatch):
    corpus_, _ = corpus
    original = even_ids.definition_clean
    monkeypatch.setattr(even_ids, "definition_clean", lambda **kw: {**original(**kw), "boom": True})
    build = _built(django_capture_on_commit_callbacks, corpus=corpus_, name="lost", kind="even_ids",
                   definition={"every": 2}, shards=2)
    assert build.status == "failed" and "server log" in build.error and build.classifier is None
    assert even_ids.cleaned == [build.pk]
