"""A small world for the page tests: one account per role, a corpus, a pair, a launched topic with judgments.

Document text and names carry hostile markup on purpose (tests.factories.HOSTILE), so
every page test is also an escaping test.
"""
from __future__ import annotations

import pytest

from annotation.models import HitItem, Topic
from tests.factories import HOSTILE, ClassifierFactory, corpus_build, user_with_role


@pytest.fixture(autouse=True)
def _fresh_cache():
    """The keyword preview is cached; ids repeat between tests, so each test starts with an empty cache."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


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


@pytest.fixture
def world(accounts):
    """A launched topic whose first HITs are fully judged (three workers)."""
    from annotation.services.crowd.assignments import assignment_claim, assignment_submit
    from annotation.services.crowd.workers import worker_for_user
    from annotation.services.sampling.draws import samples_launch
    from annotation.services.topics.topic import topic_create

    corpus, ids = corpus_build()
    c1 = ClassifierFactory.create(corpus=corpus, name="kw " + HOSTILE, ids=ids[0:30])
    c2 = ClassifierFactory.create(corpus=corpus, name="model " + HOSTILE, ids=ids[15:45])
    extra = ClassifierFactory.create(corpus=corpus, name="extra", ids=ids[10:20])
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


@pytest.fixture
def page(browser):
    """A browser page at 1280 × 900 with a 15 s default timeout (the browser tests' shared page)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(15_000)
    yield context.new_page()
    context.close()

