"""Test data for the crowd workflow: a corpus with planted truth, a classifier pair, workers."""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass

import numpy as np
import pytest
from django.db import connection

from annotation.models import ClassifierPair, Document, Topic, Worker
from annotation.services.retrieved_sets import bitmap_from_ids, bitmap_to_bytes
from tests.factories import ClassifierFactory, CorpusFactory, TopicFactory, UserFactory


@dataclass
class PairWorld:
    topic: Topic
    doc_ids: list[int]
    relevant: set[int]
    a1: set[int]
    a2: set[int]

    def true_recall(self, which: int = 1) -> float:
        retrieved = self.a1 if which == 1 else self.a2
        return len(retrieved & self.relevant) / len(self.relevant)


def make_documents(corpus, n: int, *, relevant: set[int] | None = None, topic_name: str = "wheat", texts=None) -> list[int]:
    """n documents; those whose index is in `relevant` carry metadata {"topics": [topic_name]}."""
    relevant = relevant or set()
    docs = []
    for i in range(n):
        text = texts[i] if texts else f"Document number {i}.\n\nSecond paragraph of {i}."
        docs.append(
            Document(
                corpus=corpus,
                external_id=f"d{i}",
                title=f"Title {i}",
                text=text,
                metadata={"topics": [topic_name] if i in relevant else ["other"]},
                content_hash=hashlib.sha256(f"{corpus.pk}:{i}".encode()).hexdigest(),
            )
        )
    Document.objects.bulk_create(docs, batch_size=2000)
    ids = list(Document.objects.filter(corpus=corpus).order_by("pk").values_list("pk", flat=True))
    corpus.documents_bitmap = bitmap_to_bytes(bitmap_from_ids(ids))
    corpus.document_count = len(ids)
    corpus.save(update_fields=["documents_bitmap", "document_count"])
    return ids


def make_pair_world(
    *,
    n: int = 2000,
    prevalence: float = 0.1,
    recall1: float = 0.7,
    recall2: float = 0.6,
    noise: float = 0.01,
    seed: int = 7,
    topic_name: str = "wheat",
    **topic_fields,
) -> PairWorld:
    """A corpus with planted relevance and two conditionally independent classifiers.

    Each classifier retrieves a relevant document with its recall, independently
    of the other, and an irrelevant one with probability `noise`.
    """
    rng = np.random.default_rng(seed)
    corpus = CorpusFactory()
    relevant_idx = set(np.flatnonzero(rng.random(n) < prevalence).tolist())
    ids = make_documents(corpus, n, relevant=relevant_idx, topic_name=topic_name)
    is_rel = np.array([i in relevant_idx for i in range(n)])
    p1 = np.where(is_rel, recall1, noise)
    p2 = np.where(is_rel, recall2, noise)
    in1 = rng.random(n) < p1
    in2 = rng.random(n) < p2
    a1 = {ids[i] for i in np.flatnonzero(in1)}
    a2 = {ids[i] for i in np.flatnonzero(in2)}
    c1 = ClassifierFactory(corpus=corpus, ids=sorted(a1))
    c2 = ClassifierFactory(corpus=corpus, ids=sorted(a2))
    topic_fields.setdefault("status", Topic.Status.ACTIVE)
    topic = TopicFactory(corpus=corpus, name=topic_name, **topic_fields)
    ClassifierPair.objects.create(topic=topic, c1=c1, c2=c2)
    return PairWorld(topic=topic, doc_ids=ids, relevant={ids[i] for i in relevant_idx}, a1=a1, a2=a2)


def make_worker(name: str | None = None) -> Worker:
    user = UserFactory(username=name) if name else UserFactory()
    return Worker.objects.create(user=user)


def require_postgres() -> None:
    """Skip on SQLite — but fail when REQUIRE_POSTGRES=1 (CI must not report a skipped check as passing)."""
    if connection.vendor == "postgresql":
        return
    if os.environ.get("REQUIRE_POSTGRES") == "1":
        pytest.fail("REQUIRE_POSTGRES=1 but the test database is not PostgreSQL")
    pytest.skip("needs PostgreSQL (set DATABASE_URL)")
