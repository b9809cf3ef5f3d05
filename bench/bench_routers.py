"""Routers of a topic set over a synthetic corpus: `python bench/bench_routers.py --documents 200000`.

Times, on a seeded corpus of N documents (~60 words each, made here: no corpus file needed):
  * a keyword router of 4 rules (5 terms each, first match wins; one pass over the corpus);
  * an uploaded router: a CSV `id,class` listing every document (parse, resolve ids, store);
  * router_predictions for 1,000 documents (what the report reads per sample).
No target is set by the issue; the figures say whether a router belongs in a request or in a task.
Prints the load average with the figures: the machine may be shared.

Database: DATABASE_URL if set, else a throw-away SQLite file var/bench/bench-routers.sqlite3 (not the
shared bench.sqlite3). The corpus "bench-routers-<N>" is kept for a rerun; --fresh rebuilds it.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import pathlib
import time

# Chosen before `common` is imported: it defaults DATABASE_URL to the shared bench.sqlite3.
os.environ.setdefault(
    "DATABASE_URL", f"sqlite:///{pathlib.Path(__file__).resolve().parents[1] / 'var' / 'bench' / 'bench-routers.sqlite3'}"
)

from common import SEED, django_setup, timed

WORDS = [f"w{i}" for i in range(5000)]
TOPIC_TERMS = {
    1: ["football", "cup final", "tennis", "olympic", "goalkeeper"],
    2: ["parliament", "election", "minister", "senate vote", "coalition"],
    3: ["telescope", "genome", "physics", "vaccine trial", "climate model"],
    4: ["bank rate", "inflation", "stock market", "bond yield", "merger"],
}


def corpus_build(documents: int, *, fresh: bool):
    import numpy as np
    from django.db import connection, transaction

    from annotation.models import Corpus, Document
    from annotation.services.corpora.retrieved_sets import bitmap_from_ids, bitmap_to_bytes

    name = f"bench-routers-{documents}"
    corpus = Corpus.objects.filter(name=name).first()
    if corpus is not None and not fresh:
        return corpus
    if corpus is not None:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("DELETE FROM annotation_topic WHERE corpus_id = %s", [corpus.pk])
            cursor.execute("DELETE FROM annotation_document WHERE corpus_id = %s", [corpus.pk])
            cursor.execute("DELETE FROM annotation_corpus WHERE id = %s", [corpus.pk])
    started = time.perf_counter()
    rng = np.random.default_rng(SEED)
    corpus = Corpus.objects.create(name=name)
    batch = []
    for i in range(documents):
        words = list(rng.choice(WORDS, size=60))
        topic = int(rng.integers(0, 8))  # half the documents mention one topic's term
        if topic in TOPIC_TERMS:
            words.insert(int(rng.integers(0, 60)), str(rng.choice(TOPIC_TERMS[topic])))
        text = " ".join(words)
        batch.append(Document(corpus=corpus, external_id=f"r{i}", title=f"Title {i}", text=text,
                              metadata={"desk": ["sport", "politics", "science", "business", "misc"][i % 5]},
                              content_hash=hashlib.sha256(text.encode()).hexdigest()))
        if len(batch) == 5000:
            Document.objects.bulk_create(batch)
            batch = []
    if batch:
        Document.objects.bulk_create(batch)
    ids = list(Document.objects.filter(corpus=corpus).values_list("pk", flat=True))
    corpus.documents_bitmap = bitmap_to_bytes(bitmap_from_ids(ids))
    corpus.document_count = len(ids)
    corpus.save()
    print(f"(built corpus {name} in {time.perf_counter() - started:.0f} s, untimed)")
    return corpus


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=200_000)
    parser.add_argument("--fresh", action="store_true")
    args = parser.parse_args()
    vendor = django_setup()

    from annotation.models import Topic
    from annotation.services.classifiers.routers import (
        router_create_from_csv,
        router_create_from_keywords,
        router_predictions,
    )
    from annotation.services.topics.topic_sets import topic_set_create

    corpus = corpus_build(args.documents, fresh=args.fresh)
    Topic.objects.filter(corpus=corpus).delete()
    topic = topic_set_create(corpus=corpus, name=f"bench-routers-{time.time_ns()}",
                             classes=[("Sport", ""), ("Politics", ""), ("Science", ""), ("Business", "")])
    rules = [{"class": position, "terms": terms, "fields": ["title", "text"]} for position, terms in TOPIC_TERMS.items()]
    print(f"database {vendor}, {args.documents:,} documents, load average {open('/proc/loadavg').read().split()[:3]}")

    router, seconds = timed(router_create_from_keywords, topic=topic, name="keywords", rules=rules)
    print(f"keyword router, 4 rules x 5 terms: {seconds:.2f} s "
          f"({args.documents / seconds:,.0f} documents/s); predicted per class {router.predicted_counts}")

    lines = ["id,class"] + [f"r{i},{(i % 5)}" for i in range(args.documents)]
    data = ("\n".join(lines) + "\n").encode()
    router, seconds = timed(router_create_from_csv, topic=topic, name="upload", data=data, source_name="bench.csv")
    print(f"uploaded router, {args.documents:,} lines ({len(data) / 1e6:.1f} MB): {seconds:.2f} s; "
          f"predicted per class {router.predicted_counts}")

    from annotation.models import Document

    sample = list(Document.objects.filter(corpus=corpus).order_by("?").values_list("pk", flat=True)[:1000])
    _, seconds = timed(router_predictions, router=router, document_ids=sample)
    print(f"router_predictions for 1,000 documents: {seconds * 1000:.0f} ms")
    print(f"load average after: {open('/proc/loadavg').read().split()[:3]}")


if __name__ == "__main__":
    main()
