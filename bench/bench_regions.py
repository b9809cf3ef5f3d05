"""Region counts and uniform draws of a pair: `python bench/bench_regions.py --documents 1000000`.

Targets: the five region counts of a pair <= 50 ms; a uniform draw of 1,000 ids from a
region <= 100 ms. Both timed from the classifier rows in the database (fetch + deserialise,
cold cache) and warm. Retrieved sets: random 20% and 15% of the corpus's ids (a worst
case for a rare topic; bitmaps of realistic keyword filters are smaller).
"""
from __future__ import annotations

import argparse
import statistics
import time
import uuid
from collections.abc import Callable

import numpy as np
from common import django_setup, verdict


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    vendor = django_setup()
    from annotation.models import Classifier, Corpus
    from annotation.services.corpora import retrieved_sets
    from annotation.services.corpora.retrieved_sets import (
        bitmap_draw,
        bitmap_from_ids,
        bitmap_to_bytes,
        pair_regions,
        region_counts,
    )

    rng = np.random.default_rng(1)
    n = args.documents
    corpus = Corpus.objects.create(name=f"bench-regions-{uuid.uuid4().hex[:6]}")
    try:
        ids = {}
        for name, share in (("c1", 0.20), ("c2", 0.15)):
            chosen = np.sort(rng.choice(np.arange(1, n + 1), size=int(n * share), replace=False))
            bitmap = bitmap_from_ids(chosen)
            ids[name] = Classifier.objects.create(
                corpus=corpus, name=name, kind="ids", fingerprint="-", retrieved_bitmap=bitmap_to_bytes(bitmap),
                retrieved_count=len(bitmap),
            ).pk

        def load():
            return Classifier.objects.get(pk=ids["c1"]), Classifier.objects.get(pk=ids["c2"])

        def count_once(cold: bool) -> float:
            if cold:
                retrieved_sets._bitmap_from_bytes_cached.cache_clear()
            started = time.perf_counter()
            c1, c2 = load()
            region_counts(c1=c1, c2=c2)
            return time.perf_counter() - started

        def draw_once(cold: bool, seed: int) -> float:
            if cold:
                retrieved_sets._bitmap_from_bytes_cached.cache_clear()
            started = time.perf_counter()
            c1, c2 = load()
            regions = pair_regions(c1=c1, c2=c2)
            drawn = bitmap_draw(bitmap=regions.b1, k=1000, rng=np.random.default_rng(seed))
            assert len(drawn) == 1000
            return time.perf_counter() - started

        c1, c2 = load()
        counts = region_counts(c1=c1, c2=c2)
        print(f"[{vendor}] corpus of {n:,} ids; regions {counts}")
        timed: list[tuple[str, Callable[[bool, int], float], float]] = [
            ("five region counts", lambda cold, _seed: count_once(cold), 0.050),
            ("uniform draw of 1,000 from B1", draw_once, 0.100),
        ]
        for label, fn, target in timed:
            for cold in (True, False):
                times = [fn(cold, i) for i in range(args.repeats)]
                median, worst = statistics.median(times), max(times)
                print(f"[{vendor}] {label} ({'cold' if cold else 'warm'} cache, incl. fetching 2 rows): median "
                      f"{median * 1000:.1f} ms, max {worst * 1000:.1f} ms over {args.repeats}; {verdict(median, target)}")
    finally:
        Classifier.objects.filter(corpus=corpus).delete()
        corpus.delete()


if __name__ == "__main__":
    main()
