"""Drawing a topic's samples and creating their HITs: 1,500 documents (500 per region).

Run:  cd /work/main && python bench/bench_sampling.py                       # SQLite
      DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_crowd python bench/bench_sampling.py
Target: <= 2 s for the draw + HITs of 1,500 documents (2 cores).

A throw-away test database (test_<name>) is created, migrated and destroyed.
The corpus (100,000 documents, two retrieved sets of ~12,000) is built
untimed; then, timed: `samples_launch` (three seeded region draws, the
SampledDocument rows, 300 HITs, 1,500 HitItems, 1,500 Labels, budget check),
a top-up of 300 more documents, and `sample_draw_reproduce` of one draw.
"""
from __future__ import annotations

import hashlib
import os
import pathlib
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")

import django

django.setup()

import numpy as np  # noqa: E402
from django.db import connection  # noqa: E402

CORPUS_SIZE = 100_000
PER_REGION = 500


def _build(seed: int = 1):
    from annotation.models import Classifier, ClassifierPair, Corpus, Document, Topic
    from annotation.services.corpora.retrieved_sets import bitmap_from_ids, bitmap_to_bytes

    corpus = Corpus.objects.create(name="bench")
    Document.objects.bulk_create(
        (
            Document(corpus=corpus, external_id=f"d{i}", title=f"t{i}", text="x " * 50,
                     content_hash=hashlib.sha256(str(i).encode()).hexdigest())
            for i in range(CORPUS_SIZE)
        ),
        batch_size=5000,
    )
    ids = np.array(Document.objects.filter(corpus=corpus).order_by("pk").values_list("pk", flat=True))
    corpus.documents_bitmap = bitmap_to_bytes(bitmap_from_ids(ids))
    corpus.document_count = len(ids)
    corpus.save()
    rng = np.random.default_rng(seed)
    classifiers = []
    for name in ("c1", "c2"):
        retrieved = bitmap_from_ids(ids[rng.random(len(ids)) < 0.12])
        classifiers.append(
            Classifier.objects.create(
                corpus=corpus, name=name, kind="ids", fingerprint=name, retrieved_bitmap=bitmap_to_bytes(retrieved),
                retrieved_count=len(retrieved),
            )
        )
    topic = Topic.objects.create(corpus=corpus, name="bench-topic", status=Topic.Status.ACTIVE)
    ClassifierPair.objects.create(topic=topic, c1=classifiers[0], c2=classifiers[1])
    return topic


def main() -> None:
    from annotation.services.sampling.draws import region_bitmap, sample_draw_reproduce, samples_launch

    vendor = connection.vendor
    if vendor == "sqlite":  # a file, like production, not the in-memory test default
        connection.settings_dict.setdefault("TEST", {})["NAME"] = str(pathlib.Path(tempfile.mkdtemp()) / "bench.sqlite3")
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        start = time.perf_counter()
        topic = _build()
        print(f"[{vendor}] corpus of {CORPUS_SIZE:,} documents built in {time.perf_counter() - start:.1f} s (untimed)")
        sizes = {r: len(region_bitmap(topic=topic, region=r)) for r in ("A12", "B1", "B2")}
        print(f"[{vendor}] regions: {sizes}")

        start = time.perf_counter()
        launch = samples_launch(topic=topic, per_region=PER_REGION, seed=7)
        elapsed = time.perf_counter() - start
        print(f"[{vendor}] draw + HITs for {launch.documents:,} documents ({len(launch.hits)} HITs): "
              f"{elapsed:.3f} s  (target <= 2 s)")

        start = time.perf_counter()
        topup = samples_launch(topic=topic, per_region=PER_REGION + 100, seed=8)
        print(f"[{vendor}] top-up of {topup.documents} documents ({len(topup.hits)} HITs): "
              f"{time.perf_counter() - start:.3f} s")

        draw = launch.draws[0]
        start = time.perf_counter()
        ids = sample_draw_reproduce(draw=draw)
        print(f"[{vendor}] reproduce a draw of {len(ids)} from a region of {draw.region_size:,}: "
              f"{time.perf_counter() - start:.3f} s")
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
