"""Shared set-up of the backend tests: one small corpus as Parquet files and as imported Document rows."""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from annotation.models import ClassifierPair, Corpus, Document, SampledDocument, Topic
from annotation.services.classifiers.classifier import classifier_create_keywords
from annotation.services.classifiers.field_values import field_values_scan
from annotation.services.classifiers.keywords import fields_for_corpus, keyword_scan
from annotation.services.corpora.backends.base import KeywordQuery
from annotation.services.corpora.backends.external import (
    external_classifier_create,
    external_corpus_register,
)
from annotation.services.corpora.backends.postgres import DatabaseBackend
from annotation.services.corpora.retrieved_sets import bitmap_from_ids, bitmap_to_bytes
from annotation.services.sampling.draws import draw_seed_derive, launch_stream
from estimation.stats.pair_recall import RegionSample, stratified_pair_recall

WORDS = ["market", "price", "café", "green", "tea", "cup", "morning", "report", "bean", "roast", "milk", "sugar"]
C1_TERMS = ["coffee"]
C2_TERMS = ["espresso", "green tea"]


def rows(n: int = 400, seed: int = 3) -> list[dict]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        words = [WORDS[j] for j in rng.integers(0, len(WORDS), size=8)]
        if rng.random() < 0.35:
            words.insert(int(rng.integers(0, 8)), rng.choice(["coffee", "Coffee,", "(COFFEE)", "coffee-cake"]))
        if rng.random() < 0.3:
            words.insert(int(rng.integers(0, 8)), rng.choice(["espresso", "Espresso.", "green\n tea"]))
        if rng.random() < 0.2:
            words.append(rng.choice(["coffees", "espressos", "greentea", "bobcoffee"]))  # never whole-word matches
        out.append({"id": f"doc-{i:04d}", "title": f"Title {i}", "text": " ".join(words),
                    "source": ["news", "blog", " News ", "forum"][i % 4]})
    return out


def write_parquet(folder: Path, data: list[dict], *, parts: int = 2, columns: dict | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    size = -(-len(data) // parts)
    for p in range(parts):
        chunk = data[p * size:(p + 1) * size]
        names = columns or {k: k for k in chunk[0]}
        table = pa.table({names[k]: [r[k] for r in chunk] for k in chunk[0]})
        pq.write_table(table, folder / f"part-{p}.parquet")
    return folder


def import_rows(name: str, data: list[dict]) -> Corpus:
    corpus = Corpus.objects.create(name=name)
    Document.objects.bulk_create([
        Document(corpus=corpus, external_id=r["id"], title=r["title"], text=r["text"], metadata={"source": r["source"]},
                 content_hash=hashlib.sha256(r["id"].encode()).hexdigest())
        for r in data
    ])
    ids = list(Document.objects.filter(corpus=corpus).values_list("pk", flat=True))
    corpus.documents_bitmap = bitmap_to_bytes(bitmap_from_ids(ids))
    corpus.document_count = len(ids)
    corpus.save()
    return corpus


def imported_topic(data: list[dict], name: str = "imported") -> Topic:
    corpus = import_rows(name, data)
    c1 = classifier_create_keywords(corpus=corpus, name="c1", terms=C1_TERMS)
    c2 = classifier_create_keywords(corpus=corpus, name="c2", terms=C2_TERMS)
    topic = Topic.objects.create(corpus=corpus, name=f"topic {name}")
    ClassifierPair.objects.create(topic=topic, c1=c1, c2=c2)
    return topic


def external_topic(folder: Path, engine: str = "duckdb", name: str = "external") -> Topic:
    source = external_corpus_register(name=name, engine=engine, location=str(folder), text_fields=["text"])
    corpus = source.corpus
    c1 = external_classifier_create(corpus=corpus, name="c1", kind="keywords",
                                    definition={"terms": C1_TERMS, "fields": ["title", "text"]})
    c2 = external_classifier_create(corpus=corpus, name="c2", kind="keywords",
                                    definition={"terms": C2_TERMS, "fields": ["title", "text"]})
    topic = Topic.objects.create(corpus=corpus, name=f"topic {name}")
    ClassifierPair.objects.create(topic=topic, c1=c1, c2=c2)
    return topic


def truth(external_id: str) -> bool:
    """The simulated judges' answer: a fixed function of the document's id."""
    return int(hashlib.sha256(external_id.encode()).hexdigest(), 16) % 3 != 0


def report(topic: Topic, sizes: dict[str, int]) -> dict:
    """The pair report's estimate from the sampled documents (labelled by ``truth``) and the engine's region sizes."""
    regions: dict = {}
    for code in ("A12", "B1", "B2"):
        ids = list(SampledDocument.objects.filter(topic=topic, region=code).values_list("document__external_id", flat=True))
        regions[code.lower()] = RegionSample(size=sizes[code], judged=len(ids), relevant=sum(truth(i) for i in ids))
    return stratified_pair_recall(**regions, seed=5, draws=2000).as_dict()


def drawn(topic: Topic) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for region, ext in (SampledDocument.objects.filter(topic=topic).order_by("draw_id", "id")
                        .values_list("region", "document__external_id")):
        out.setdefault(region, []).append(ext)
    return out


def scanner(corpus, query):
    """The classifiers' scans, as the launch would give them to the database backend."""
    if isinstance(query, KeywordQuery):
        return keyword_scan(corpus=corpus, terms=list(query.terms), fields=fields_for_corpus(list(query.fields), corpus=corpus))
    return field_values_scan(corpus=corpus, field=query.field, values=list(query.values))[0]


def database_backend(corpus: Corpus) -> DatabaseBackend:
    return DatabaseBackend(corpus=corpus, scanner=scanner)


def seeds(seed: int):
    """The launch's derivation of a stratum's seed (annotation.services.sampling.draws)."""
    return lambda region, previous: draw_seed_derive(
        seed=seed, stream=launch_stream(region=region, classifier_id=None, previous_draws=previous))
