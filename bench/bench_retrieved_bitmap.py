"""A retrieved set uploaded as a Roaring bitmap: one pass over the corpus against the batched resolution.

Run:  cd /work/main && DATABASE_URL=postgres://postgres@127.0.0.1:5432/h_rb \\
        .venv/bin/python bench/bench_retrieved_bitmap.py [--documents 1000000] [--share 0.1]

Builds (untimed, once; kept for later runs) a corpus "bitmap-<N>" of N documents whose external ids are the
integers 1 … N (the bitmap contract: value n is the document whose id is "n"), then uploads a bitmap of
`--share` of them, chosen at random (seeded), twice in the same minutes:
* the product's path (`classifier_create_from_bitmap`: the corpus's ids tested against the bitmap in one pass);
* the earlier path, for comparison: the values as strings resolved by `document_ids_resolve` in batches of
  250,000 (one streamed pass over the corpus per batch).
It checks both give the same set and prints wall time, this process's CPU time and peak RSS growth.

`--parquet` uploads the same ids as a Parquet column instead (`classifier_create_from_parquet`), once with the
product's `RESOLVE_BATCH` and once with `--old-batch` (250,000, the batch before 2026-11-25), same minutes.
"""
from __future__ import annotations

import argparse
import random
import resource
import tempfile
import time
from pathlib import Path

from common import django_setup

BATCH = 250_000


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _corpus(documents: int):
    from django.db import connection

    from annotation.models import Corpus, Document
    from annotation.services.corpora.corpus_import import corpus_totals_refresh

    name = f"bitmap-{documents}"
    corpus = Corpus.objects.filter(name=name).first()
    if corpus is not None and corpus.document_count == documents:
        return corpus
    if corpus is None:
        corpus = Corpus.objects.create(name=name)
    started = time.perf_counter()
    step = 20_000
    for start in range(1, documents + 1, step):
        Document.objects.bulk_create(
            [Document(corpus=corpus, external_id=str(i), title="", text=f"document {i}", content_hash=f"{i:064x}")
             for i in range(start, min(documents + 1, start + step))], batch_size=step)
    corpus_totals_refresh(corpus=corpus)
    corpus.refresh_from_db()
    print(f"(built corpus {name}: {corpus.document_count:,} documents in {time.perf_counter() - started:.0f} s, "
          f"untimed; {connection.vendor})")
    return corpus


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=1_000_000)
    parser.add_argument("--share", type=float, default=0.1)
    parser.add_argument("--parquet", action="store_true")
    parser.add_argument("--old-batch", type=int, default=250_000)
    args = parser.parse_args()
    django_setup()
    from pyroaring import BitMap

    from annotation.models import Classifier
    from annotation.services.classifiers.retrieved_upload import classifier_create_from_bitmap
    from annotation.services.corpora.id_resolution import document_ids_resolve
    from annotation.services.corpora.retrieved_sets import classifier_bitmap

    corpus = _corpus(args.documents)
    values = BitMap(random.Random(7).sample(range(1, args.documents + 1), int(args.documents * args.share)))
    with open("/proc/loadavg") as handle:
        print(f"load before: {handle.read().split()[:3]}")
    if args.parquet:
        _parquet(corpus, values, args.old_batch)
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "retrieved.roaring"
        path.write_bytes(values.serialize())
        Classifier.objects.filter(corpus=corpus, name__startswith="bench-bitmap").delete()
        rss, cpu, wall = _peak_mib(), time.process_time(), time.perf_counter()
        result = classifier_create_from_bitmap(corpus=corpus, name="bench-bitmap", path=path)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        print(f"one pass (product): {len(values):,} ids of {args.documents:,}: {wall:.2f} s wall, {cpu:.2f} s CPU, "
              f"peak RSS +{_peak_mib() - rss:.0f} MiB; retrieved {result.classifier.retrieved_count:,}")
        rss, cpu, wall = _peak_mib(), time.process_time(), time.perf_counter()
        pks = BitMap()
        texts = [str(v) for v in values]
        for start in range(0, len(texts), BATCH):
            pks |= BitMap(document_ids_resolve(corpus=corpus, external_ids=texts[start:start + BATCH]).values())
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        print(f"batched strings (before): {wall:.2f} s wall, {cpu:.2f} s CPU, peak RSS +{_peak_mib() - rss:.0f} MiB; "
              f"same set: {pks == classifier_bitmap(classifier=result.classifier)}")
        Classifier.objects.filter(corpus=corpus, name__startswith="bench-bitmap").delete()
    with open("/proc/loadavg") as handle:
        print(f"load after: {handle.read().split()[:3]}")


def _parquet(corpus, values, old_batch: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from annotation.models import Classifier
    from annotation.services.classifiers import retrieved_upload
    from annotation.services.corpora.retrieved_sets import classifier_bitmap

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "retrieved.parquet"
        pq.write_table(pa.table({"id": [str(v) for v in values]}), path)
        results = []
        for batch in (retrieved_upload.RESOLVE_BATCH, old_batch):
            Classifier.objects.filter(corpus=corpus, name__startswith="bench-parquet").delete()
            saved, retrieved_upload.RESOLVE_BATCH = retrieved_upload.RESOLVE_BATCH, batch
            try:
                rss, cpu, wall = _peak_mib(), time.process_time(), time.perf_counter()
                result = retrieved_upload.classifier_create_from_parquet(corpus=corpus, name="bench-parquet", path=path)
                wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            finally:
                retrieved_upload.RESOLVE_BATCH = saved
            results.append(classifier_bitmap(classifier=result.classifier))
            print(f"Parquet, {len(values):,} ids, batches of {batch:,}: {wall:.2f} s wall, {cpu:.2f} s CPU, "
                  f"peak RSS +{_peak_mib() - rss:.0f} MiB (a later, smaller peak shows +0)")
        Classifier.objects.filter(corpus=corpus, name__startswith="bench-parquet").delete()
        print(f"same set: {results[0] == results[1]}")


if __name__ == "__main__":
    main()
