"""A small world for the page tests: one account per role, a corpus, a pair, a launched topic with judgments.

Document text and names carry hostile markup on purpose, so every page test is
also an escaping test.
"""
from __future__ import annotations

import hashlib

import pytest
from django.contrib.auth import get_user_model

from annotation.models import Corpus, Document, HitItem, Topic
from annotation.roles import roles_ensure
from annotation.services.retrieved_sets import bitmap_from_ids, bitmap_to_bytes
from tests.factories import ClassifierFactory

HOSTILE_TEXT = '<script>alert(1)</script>'
HOSTILE_ATTR = '" onmouseover="alert(1)'
HOSTILE = HOSTILE_TEXT + HOSTILE_ATTR
PASSWORD = "pw-for-tests-1"


@pytest.fixture(autouse=True)
def _fresh_cache():
    """The keyword preview is cached; ids repeat between tests, so each test starts with an empty cache."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


def user_with_role(username: str, role: str | None = None, **extra):
    roles = roles_ensure()
    user = get_user_model().objects.create_user(username=username, password=PASSWORD, **extra)
    if role:
        user.groups.add(roles[role])
    return user


@pytest.fixture
def accounts(db):
    return {
        "analyst": user_with_role("ana", "analyst"),
        "manager": user_with_role("max", "manager"),
        "annotator": user_with_role("ann", "annotator"),
        "norole": user_with_role("nobody"),
        # Staff without a role: may open the admin, nothing else.
        "staff": user_with_role("root", None, is_staff=True),
    }


def corpus_build(*, name: str = "news " + HOSTILE, size: int = 60) -> tuple[Corpus, list[int]]:
    corpus = Corpus.objects.create(name=name)
    docs = []
    for i in range(size):
        title = f"Doc {i} oil {HOSTILE}" if i % 3 == 0 else f"Doc {i} wheat"
        text = f"Text {i} about crude oil prices {HOSTILE} and more" if i % 2 == 0 else f"Text {i} about grain"
        docs.append(Document(corpus=corpus, external_id=f"d{i}", title=title, text=text,
                             content_hash=hashlib.sha256(f"{title}{text}".encode()).hexdigest()))
    Document.objects.bulk_create(docs)
    ids = list(Document.objects.filter(corpus=corpus).order_by("pk").values_list("pk", flat=True))
    corpus.documents_bitmap = bitmap_to_bytes(bitmap_from_ids(ids))
    corpus.document_count = len(ids)
    corpus.save()
    return corpus, ids


@pytest.fixture
def world(accounts):
    """A launched topic whose first HITs are fully judged (three workers)."""
    from annotation.services.assignments import assignment_claim, assignment_submit
    from annotation.services.sampling import samples_launch
    from annotation.services.topics import topic_create
    from annotation.services.workers import worker_for_user

    corpus, ids = corpus_build()
    c1 = ClassifierFactory(corpus=corpus, name="kw " + HOSTILE, ids=ids[0:30])
    c2 = ClassifierFactory(corpus=corpus, name="model " + HOSTILE, ids=ids[15:45])
    extra = ClassifierFactory(corpus=corpus, name="extra", ids=ids[10:20])
    topic = topic_create(corpus=corpus, name="oil " + HOSTILE, c1=c1, c2=c2, instructions="Oil? " + HOSTILE,
                         extra_classifiers=[extra])
    samples_launch(topic=topic, per_region=5, seed=7)
    topic.refresh_from_db()
    workers = [worker_for_user(user=user_with_role(f"w{i}", "annotator")) for i in range(3)]
    for worker in workers:
        for _ in range(50):
            assignment = assignment_claim(worker=worker, topic=topic)
            if assignment is None:
                break
            doc_ids = HitItem.objects.filter(hit_id=assignment.hit_id).values_list("document_id", flat=True)
            assignment_submit(assignment_id=assignment.pk, worker=worker,
                              answers={d: (d % 2 == 0) for d in doc_ids})
    return {"corpus": corpus, "c1": c1, "c2": c2, "extra": extra, "topic": Topic.objects.get(pk=topic.pk),
            "accounts": accounts, "ids": ids}
