"""Shared test set-up: factory_boy factories and the builders the test modules share.

Test modules share helpers only through this module and ``tests/conftest.py``
(docs/architecture.md); they never import another test module. Create model
instances with ``XFactory.create(...)``: it is typed to return the model.
"""
from __future__ import annotations

import functools
import hashlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import factory
import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import connection

from annotation import models
from annotation.models import (
    ClassifierPair,
    Corpus,
    Document,
    HitItem,
    Label,
    Region,
    SampledDocument,
    SampleDraw,
    Topic,
    TopicClassifier,
    Worker,
)
from annotation.roles import roles_ensure
from annotation.services.classifiers.classifier import classifier_create_keywords
from annotation.services.corpora.retrieved_sets import bitmap_from_ids, bitmap_to_bytes, pair_regions
from annotation.services.sampling.draws import region_bitmap, region_sample_draw, samples_draw
from estimation.models import CertificationPlan
from estimation.selectors import certification_sampled_documents


class UserFactory(factory.django.DjangoModelFactory[User]):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.django.Password("pw-for-tests-1")


class CorpusFactory(factory.django.DjangoModelFactory[models.Corpus]):
    class Meta:
        model = models.Corpus

    name = factory.Sequence(lambda n: f"corpus-{n}")


class DocumentFactory(factory.django.DjangoModelFactory[models.Document]):
    class Meta:
        model = models.Document

    corpus = factory.SubFactory(CorpusFactory)
    external_id = factory.Sequence(lambda n: f"doc-{n}")
    title = factory.Faker("sentence")
    text = factory.Faker("paragraph")
    metadata = factory.LazyFunction(dict)
    content_hash = factory.LazyAttribute(lambda o: hashlib.sha256(f"{o.title}\n{o.text}".encode()).hexdigest())


class ClassifierFactory(factory.django.DjangoModelFactory[models.Classifier]):
    """Pass `ids=[document pks]` to set the retrieved set."""

    class Meta:
        model = models.Classifier
        exclude = ("ids",)

    corpus = factory.SubFactory(CorpusFactory)
    name = factory.Sequence(lambda n: f"classifier-{n}")
    kind = models.Classifier.Kind.IDS
    definition = factory.LazyFunction(dict)
    ids = factory.LazyFunction(list)
    retrieved_bitmap = factory.LazyAttribute(lambda o: bitmap_to_bytes(bitmap_from_ids(o.ids)))
    retrieved_count = factory.LazyAttribute(lambda o: len(set(o.ids)))
    fingerprint = factory.LazyAttribute(lambda o: hashlib.sha256(repr(sorted(o.ids)).encode()).hexdigest())


class TopicFactory(factory.django.DjangoModelFactory[models.Topic]):
    class Meta:
        model = models.Topic

    corpus = factory.SubFactory(CorpusFactory)
    name = factory.Sequence(lambda n: f"topic-{n}")
    instructions = "Is this document about the topic?"


# --------------------------------------------------------------------------- the crowd workflow


@dataclass
class PairWorld:
    """A corpus with planted truth and a classifier pair (see make_pair_world)."""

    topic: Topic
    doc_ids: list[int]
    relevant: set[int]
    a1: set[int]
    a2: set[int]

    def true_recall(self, which: int = 1) -> float:
        retrieved = self.a1 if which == 1 else self.a2
        return len(retrieved & self.relevant) / len(self.relevant)


def make_documents(
    corpus: Corpus,
    n: int,
    *,
    relevant: Collection[int] | None = None,
    topic_name: str = "wheat",
    texts: Sequence[str] | None = None,
) -> list[int]:
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
    **topic_fields: Any,
) -> PairWorld:
    """A corpus with planted relevance and two conditionally independent classifiers.

    Each classifier retrieves a relevant document with its recall, independently
    of the other, and an irrelevant one with probability `noise`.
    """
    rng = np.random.default_rng(seed)
    corpus = CorpusFactory.create()
    relevant_idx = set(np.flatnonzero(rng.random(n) < prevalence).tolist())
    ids = make_documents(corpus, n, relevant=relevant_idx, topic_name=topic_name)
    is_rel = np.array([i in relevant_idx for i in range(n)])
    p1 = np.where(is_rel, recall1, noise)
    p2 = np.where(is_rel, recall2, noise)
    in1 = rng.random(n) < p1
    in2 = rng.random(n) < p2
    a1 = {ids[i] for i in np.flatnonzero(in1)}
    a2 = {ids[i] for i in np.flatnonzero(in2)}
    c1 = ClassifierFactory.create(corpus=corpus, ids=sorted(a1))
    c2 = ClassifierFactory.create(corpus=corpus, ids=sorted(a2))
    topic_fields.setdefault("status", Topic.Status.ACTIVE)
    topic = TopicFactory.create(corpus=corpus, name=topic_name, **topic_fields)
    ClassifierPair.objects.create(topic=topic, c1=c1, c2=c2)
    return PairWorld(topic=topic, doc_ids=ids, relevant={ids[i] for i in relevant_idx}, a1=a1, a2=a2)


def make_worker(name: str | None = None) -> Worker:
    user = UserFactory.create(username=name) if name else UserFactory.create()
    return Worker.objects.create(user=user)


def require_postgres() -> None:
    """Skip on SQLite — but fail when REQUIRE_POSTGRES=1 (CI must not report a skipped check as passing)."""
    if connection.vendor == "postgresql":
        return
    if os.environ.get("REQUIRE_POSTGRES") == "1":
        pytest.fail("REQUIRE_POSTGRES=1 but the test database is not PostgreSQL")
    pytest.skip("needs PostgreSQL (set DATABASE_URL)")


# --------------------------------------------------------------------------- certification


def judge(world: PairWorld, doc_ids: Iterable[int]) -> None:
    """Give the documents their true majority label (three unanimous votes)."""
    for doc_id in doc_ids:
        relevant = doc_id in world.relevant
        Label.objects.update_or_create(
            topic=world.topic, document_id=doc_id,
            defaults={"votes_total": 3, "votes_relevant": 3 if relevant else 0, "majority": relevant})


def pilot(world: PairWorld, per_region: int = 40, seed: int = 1) -> set[int]:
    draws = samples_draw(topic=world.topic, per_region=per_region, seed=seed)
    ids = set(SampledDocument.objects.filter(draw__in=draws).values_list("document_id", flat=True))
    judge(world, ids)
    return ids


def uniform_pilot(world: PairWorld, n: int = 600, seed: int = 2) -> set[int]:
    draw = region_sample_draw(topic=world.topic, region=Region.UNIFORM,
                              bitmap=region_bitmap(topic=world.topic, region=Region.UNIFORM), k=n, seed=seed,
                              purpose=SampleDraw.Purpose.UNIFORM)
    ids = set(SampledDocument.objects.filter(draw=draw).values_list("document_id", flat=True))
    judge(world, ids)
    return ids


def certification_ids(plan: CertificationPlan) -> set[int]:
    return set(certification_sampled_documents(plan=plan).values_list("document_id", flat=True))


def c1(world: PairWorld) -> models.Classifier:
    return world.topic.pair.c1


# --------------------------------------------------------------------------- the hand-counted report topic


@dataclass
class Built:
    topic: Topic
    docs: list[int]  # Document pks by position 0..59
    c1: models.Classifier
    c2: models.Classifier
    c3: models.Classifier
    extras: dict[str, Any] = field(default_factory=dict)


def build_topic(*, aggregator: str = Topic.Aggregator.MAJORITY, with_labels: bool = True) -> Built:
    """A 60-document corpus; C1 = docs 0..29, C2 = 20..44, C3 (extra) = 10..34.

    Regions: A12 = 20..29 (10), B1 = 0..19 (20), B2 = 30..44 (15).
    """
    corpus = CorpusFactory.create()
    docs = [DocumentFactory.create(corpus=corpus, title="t", text="x").pk for _ in range(60)]
    corpus.document_count = 60
    corpus.save(update_fields=["document_count"])
    c1 = ClassifierFactory.create(corpus=corpus, name="=title filter", ids=docs[0:30])
    c2 = ClassifierFactory.create(corpus=corpus, name="body filter", ids=docs[20:45])
    c3 = ClassifierFactory.create(corpus=corpus, name="model", ids=docs[10:35])
    topic = TopicFactory.create(corpus=corpus, aggregator=aggregator, target_recall=0.8, confidence=0.95)
    ClassifierPair.objects.create(topic=topic, c1=c1, c2=c2)
    TopicClassifier.objects.create(topic=topic, classifier=c3)
    built = Built(topic=topic, docs=docs, c1=c1, c2=c2, c3=c3)
    if with_labels:
        add_samples_and_labels(built)
    return built


def make_draw(
    topic: Topic,
    purpose: str,
    region: str,
    positions: Sequence[int],
    docs: Sequence[int],
    classifier: models.Classifier | None = None,
) -> SampleDraw:
    draw = SampleDraw.objects.create(topic=topic, purpose=purpose, region=region, classifier=classifier, seed=1,
                                     region_size=100, requested=len(positions), drawn=len(positions))
    SampledDocument.objects.bulk_create([
        SampledDocument(draw=draw, topic=topic, document_id=docs[p], region=region, inclusion_probability=0.5)
        for p in positions
    ])
    return draw


def make_label(
    topic: Topic,
    doc: int,
    relevant: bool | None = None,
    posterior: float | None = None,
    gold: bool | None = None,
    votes: tuple[int, int] | None = None,
) -> None:
    """relevant None = incomplete (fewer than three votes)."""
    if votes is None:
        votes = (0, 1) if relevant is None else ((3, 3) if relevant else (0, 3))
    Label.objects.create(topic=topic, document_id=doc, majority=relevant, posterior=posterior, gold=gold,
                         votes_relevant=votes[0], votes_total=votes[1])


# Hand-written design of the sample (positions in the 60-document corpus):
#   A12 pair draw: 20..27; a second (paper) A12 draw re-draws 20, 21 (counted once).
#     judged: 20..25 (6), relevant 20..24 (5); 26 incomplete; 27 has no label.
#   B1: 0..9; judged 0..8 (9), relevant 0, 1, 8 (3); 8 was made gold (relevant): it keeps its sample
#     place with the gold answer, its votes stay out of agreement figures; 9 incomplete.
#   B2: 30..39; judged 30..36 (7), relevant 30, 31, 32 (3).
#   R (C3): 10..15 and 33 — 33 is also judged in B2 (not relevant); relevant 10, 11, 12.
#     -> judged 7, relevant 3.
#   U: 50..55, judged all, relevant 50 only; 28 in U too (judged, not relevant; retrieved by C1, C2, C3).
#   G: 29 (a gold document, region G) — excluded although labelled.
#   certification draw: 56..59 judged relevant — excluded.
# tests/estimation/test_reports.py states the resulting counts per region (EXPECTED).


def add_samples_and_labels(built: Built) -> None:
    topic, docs = built.topic, built.docs
    P = SampleDraw.Purpose
    make_draw(topic, P.PAIR, Region.A12, range(20, 28), docs)
    make_draw(topic, P.PAPER, Region.A12, [20, 21], docs)
    make_draw(topic, P.PAIR, Region.B1, range(0, 10), docs)
    make_draw(topic, P.PAIR, Region.B2, range(30, 40), docs)
    make_draw(topic, P.PRECISION, Region.RETRIEVED, [10, 11, 12, 13, 14, 15, 33], docs, classifier=built.c3)
    make_draw(topic, P.UNIFORM, Region.UNIFORM, [50, 51, 52, 53, 54, 55, 28], docs)
    make_draw(topic, P.PAIR, Region.GOLD, [29], docs)
    make_draw(topic, P.CERTIFICATION, Region.UNIFORM, [56, 57, 58, 59], docs)
    relevant = {20, 21, 22, 23, 24, 0, 1, 30, 31, 32, 10, 11, 12, 50, 56, 57, 58, 59}
    judged = set(range(20, 26)) | set(range(0, 8)) | set(range(30, 37)) | set(range(10, 16)) \
        | set(range(50, 56)) | {28} | set(range(56, 60))
    for position in sorted(judged):
        make_label(topic, docs[position], relevant=position in relevant,
               posterior=0.9 if position in relevant else 0.1)
    make_label(topic, docs[26])  # incomplete
    make_label(topic, docs[9])  # incomplete
    make_label(topic, docs[8], relevant=True, gold=True, votes=(7, 9))  # sampled, made gold: counted as relevant
    make_label(topic, docs[29], relevant=True, gold=True, votes=(5, 6))  # region G check: excluded


# --------------------------------------------------------------------------- pages (tests/web)

# Document text and names carry hostile markup on purpose, so every page test is also an escaping test.
HOSTILE_TEXT = '<script>alert(1)</script>'
HOSTILE_ATTR = '" onmouseover="alert(1)'
HOSTILE = HOSTILE_TEXT + HOSTILE_ATTR
PASSWORD = "pw-for-tests-1"


def user_with_role(username: str, role: str | None = None, **extra: Any) -> User:
    roles = roles_ensure()
    user = get_user_model().objects.create_user(username=username, password=PASSWORD, **extra)
    if role:
        user.groups.add(roles[role])
    return user


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


# --------------------------------------------------------------------------- topic sets (seed 002)


def make_topic_set(
    corpus: Corpus | None = None,
    *,
    classes: Sequence[str] = ("Sport", "Politics", "Science"),
    documents: int = 30,
    **topic_fields: Any,
) -> Topic:
    """A multiclass topic (status active) with TopicClass rows 1..M, over a corpus of `documents` (new if None)."""
    if corpus is None:
        corpus = CorpusFactory.create()
        make_documents(corpus, documents)
    topic_fields.setdefault("status", Topic.Status.ACTIVE)
    topic = TopicFactory.create(corpus=corpus, kind=Topic.Kind.MULTICLASS, **topic_fields)
    models.TopicClass.objects.bulk_create(
        models.TopicClass(topic=topic, position=position, name=name, description=f"About {name}")
        for position, name in enumerate(classes, start=1)
    )
    return topic


@dataclass
class JudgedTopicSet:
    """A topic set whose uniform sample is judged (see topic_set_judged_build)."""

    topic: Topic
    router: models.Router
    docs: list[int]  # the sampled documents
    truth: list[int]  # their majority class
    predicted: list[int]  # the router's class (0: none of these)


def topic_set_judged_build(
    *,
    confusion: Sequence[Sequence[int]],
    classes: Sequence[str] | None = None,
    router_name: str = "router",
    **topic_fields: Any,
) -> JudgedTopicSet:
    """A topic set whose whole corpus is its uniform sample, each document judged 3-0 for its row's class and
    routed to its column's class: `confusion` is (M+1) x (M+1), rows true class, columns the router's, 0 = none."""
    size = len(confusion)
    names = list(classes) if classes is not None else [f"Class {i}" for i in range(1, size)]
    truth = [j for j in range(size) for k in range(size) for _ in range(int(confusion[j][k]))]
    predicted = [k for j in range(size) for k in range(size) for _ in range(int(confusion[j][k]))]
    corpus = CorpusFactory.create()
    docs = make_documents(corpus, len(truth))
    topic = make_topic_set(corpus, classes=names, **topic_fields)
    draw = SampleDraw.objects.create(topic=topic, purpose=SampleDraw.Purpose.UNIFORM, region=Region.UNIFORM, seed=1,
                                     region_size=len(docs), requested=len(docs), drawn=len(docs))
    SampledDocument.objects.bulk_create(
        SampledDocument(draw=draw, topic=topic, document_id=d, region=Region.UNIFORM, inclusion_probability=1.0)
        for d in docs)
    Label.objects.bulk_create(
        Label(topic=topic, document_id=d, votes_total=3, class_votes=[3 if i == t else 0 for i in range(size)],
              majority_class=t)
        for d, t in zip(docs, truth, strict=True))
    counts = [predicted.count(k) for k in range(size)]
    router = models.Router.objects.create(topic=topic, name=router_name, kind=models.Router.Kind.UPLOAD,
                                          definition={"source": "test.csv"}, predicted_counts=counts,
                                          fingerprint=hashlib.sha256(repr(predicted).encode()).hexdigest())
    models.RouterPrediction.objects.bulk_create(
        models.RouterPrediction(router=router, document_id=d, predicted=p)
        for d, p in zip(docs, predicted, strict=True) if p != 0)
    return JudgedTopicSet(topic=topic, router=router, docs=docs, truth=truth, predicted=predicted)


# ---------------------------------------------------------------- the command-line client (clients/recall-cli)

CLI_CLIENT_DIR = Path(__file__).resolve().parents[1] / "clients" / "recall-cli"


@functools.lru_cache(maxsize=1)
def _cli_client_path() -> str:
    """Where `recall_cli` is imported from: the wheel CI built (RECALL_CLI_WHEEL, installed once into a temporary
    folder, as a pipeline installs it) or, without one, the source folder."""
    wheel = os.environ.get("RECALL_CLI_WHEEL")
    if not wheel:
        return str(CLI_CLIENT_DIR)
    target = tempfile.mkdtemp(prefix="recall-cli-wheel-")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps",
                    "--no-index", "--target", target, wheel], check=True, capture_output=True, text=True)
    return target


def cli_env(live_server, token: str) -> dict[str, str]:
    """The environment `recall` runs in: the live server's URL, an API token, the client on PYTHONPATH."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO")}
    env.update(RECALL_URL=live_server.url, RECALL_TOKEN=token,
               PYTHONPATH=_cli_client_path() + os.pathsep + env.get("PYTHONPATH", ""))
    return env


def cli_run(env: dict[str, str], *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run `python -m recall_cli *args` as a pipeline would."""
    return subprocess.run([sys.executable, "-m", "recall_cli", *args], env=env, capture_output=True, text=True,
                          timeout=timeout)


def judge_with_simulated_votes(world, *, accuracy: float, seed: int) -> None:
    """Three simulated votes per sampled document of `world.topic`, each right with probability `accuracy`
    (the truth is `world.relevant`); labels store the votes and their majority."""
    rng = np.random.default_rng(seed)
    for doc_id in sorted(set(SampledDocument.objects.filter(topic=world.topic).values_list("document_id", flat=True))):
        truth = doc_id in world.relevant
        relevant_votes = int(sum((rng.random() < accuracy) == truth for _ in range(3)))
        Label.objects.create(topic=world.topic, document_id=doc_id, majority=relevant_votes >= 2,
                             votes_relevant=relevant_votes, votes_total=3)


def browser_sign_in(page, live_server, username: str, *, url: str = "/accounts/login/") -> None:
    """Sign `username` in through the login form of the live server (Playwright page); `url=""` signs in on the
    login form the page already shows."""
    if url:
        page.goto(live_server.url + url)
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click(".auth button[type=submit]")
    page.wait_for_load_state()


def disputed_world():
    """A topic with a judged pilot; one relevant sampled document tied (no majority), one relevant document whose
    votes split 1–2 (majority: off topic). Returns (world, tied id, split id, sample key of the split one)."""
    world = make_pair_world(n=2000, prevalence=0.2, recall1=0.85, recall2=0.6, noise=0.01, seed=5)
    sampled = sorted(pilot(world))
    relevant = [d for d in sampled if d in world.relevant]
    tied, split = relevant[0], relevant[1]
    Label.objects.filter(topic=world.topic, document_id=tied).update(
        votes_total=3, votes_relevant=1, votes_unsure=1, majority=None)
    Label.objects.filter(topic=world.topic, document_id=split).update(
        votes_total=3, votes_relevant=1, votes_unsure=0, majority=False)
    region = SampledDocument.objects.filter(topic=world.topic, document_id=split).values_list("region", flat=True)[0]
    return world, tied, split, region


TRAINED_CORPUS_FARM = ["wheat harvest in the fields", "grain prices for farmers", "the farm tractor and the barley crop",
        "rain helps the maize harvest", "farmers sell wheat and grain"]
TRAINED_CORPUS_SPORT = ["the football match ended", "a goal in the last minute", "the striker scored twice",
         "tennis final on sunday", "the coach praised the team"]
TRAINED_CORPUS_SIZE = 3000


def trained_corpus_world(seed: int = 7, size: int = TRAINED_CORPUS_SIZE) -> tuple[Corpus, np.ndarray, dict[int, bool], Topic]:
    """The synthetic corpus of tests/annotation/test_trained_corpus.py (its docstring), its keyword pair (title "farm", text "harvest") and a topic whose
    pair regions were drawn (A12 whole, 30 of B1 and B2, 120 of N) and judged with the truth."""
    rng = np.random.default_rng(seed)
    corpus = Corpus.objects.create(name="farms")
    truth = rng.random(size) < 0.03
    decoy = ~truth & (rng.random(size) < 0.2)
    docs = []
    for i in range(size):
        rel = bool(truth[i])
        farm_title = rng.random() < (0.8 if rel else 0.012)
        harvest = rng.random() < (0.8 if rel else 0.012)
        words = TRAINED_CORPUS_FARM if rel or decoy[i] else TRAINED_CORPUS_SPORT
        article = f"{words[rng.integers(5)]}. {words[rng.integers(5)]}. story {i}"
        docs.append(Document(corpus=corpus, external_id=f"d{i}", title=("farm " if farm_title else "daily ") + f"t{i}",
                             text=("harvest " if harvest else "weather ") + f"x{i}", metadata={"article": article},
                             content_hash=hashlib.sha256(str(i).encode()).hexdigest()))
    Document.objects.bulk_create(docs)
    pks = np.array(Document.objects.filter(corpus=corpus).order_by("pk").values_list("pk", flat=True), dtype=np.int64)
    corpus.documents_bitmap = bitmap_to_bytes(bitmap_from_ids(pks.tolist()))
    corpus.document_count = len(pks)
    corpus.save()
    relevant = {int(pk): bool(truth[i]) for i, pk in enumerate(pks)}
    c1 = classifier_create_keywords(corpus=corpus, name="title", terms=["farm"], fields=["title"])
    c2 = classifier_create_keywords(corpus=corpus, name="text", terms=["harvest"], fields=["text"])
    topic = Topic.objects.create(corpus=corpus, name="farming")
    ClassifierPair.objects.create(topic=topic, c1=c1, c2=c2)
    regions = pair_regions(c1=c1, c2=c2)
    for code, k in (("A12", 200), ("B1", 30), ("B2", 30), ("N", 120)):
        draw = region_sample_draw(topic=topic, region=code, bitmap=regions.by_code(code), k=k, seed=11,
                                  purpose=SampleDraw.Purpose.PAIR)
        for doc in draw.documents.values_list("document_id", flat=True):
            make_label(topic, doc, relevant=relevant[doc])
    return corpus, pks, relevant, topic


EXPORT_FORMULAS = ("=HYPERLINK(\"http://evil\")", "+1+2", "-3*4", "@SUM(A1)", "\tTAB", "\rCR")


def judged_export_world() -> dict[str, Any]:
    """A launched topic whose first HITs are judged by three workers (one an MTurk worker); some documents have
    external ids a spreadsheet would run as formulas, or hostile markup."""
    from annotation.services.crowd.assignments import assignment_claim, assignment_submit
    from annotation.services.crowd.workers import worker_for_user
    from annotation.services.sampling.draws import samples_launch
    from annotation.services.topics.topic import topic_create

    corpus, ids = corpus_build()
    for i, doc_id in enumerate(ids[:len(EXPORT_FORMULAS)]):
        Document.objects.filter(pk=doc_id).update(external_id=EXPORT_FORMULAS[i])
    Document.objects.filter(pk=ids[len(EXPORT_FORMULAS)]).update(external_id="x" + HOSTILE)
    c1 = ClassifierFactory.create(corpus=corpus, name="=kw", ids=ids[0:30])
    c2 = ClassifierFactory.create(corpus=corpus, name="model", ids=ids[15:45])
    topic = topic_create(corpus=corpus, name="oil " + HOSTILE, c1=c1, c2=c2, instructions="Oil?")
    samples_launch(topic=topic, per_region=5, seed=7)
    users = [user_with_role(f"secret-user-{i}@example.com", "annotator") for i in range(3)]
    workers = [worker_for_user(user=user) for user in users]
    Worker.objects.filter(pk=workers[0].pk).update(platform="mturk", external_id="A1MTURKWORKER")
    workers[0].refresh_from_db()
    for worker in workers:
        for _ in range(50):
            assignment = assignment_claim(worker=worker, topic=topic)
            if assignment is None:
                break
            doc_ids = HitItem.objects.filter(hit_id=assignment.hit_id).values_list("document_id", flat=True)
            assignment_submit(assignment_id=assignment.pk, worker=worker, answers={d: (d % 2 == 0) for d in doc_ids})
    return {"topic": topic, "workers": workers, "users": users, "ids": ids}
