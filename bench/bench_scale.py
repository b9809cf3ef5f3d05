"""Scale measurements (issue 15): import, classify, regions, draw, report and an uploaded retrieved set at N documents.

Run:  cd /work/main && DATABASE_URL=postgres://postgres@127.0.0.1:5432/w8 \
        .venv/bin/python bench/bench_scale.py --documents 1000000 [--keep] [--reuse]

Uses the seeded synthetic corpus of bench/common.py (var/bench/corpus-N-SEED.jsonl.gz, generated untimed
when missing). Each step prints its wall time and two memory figures:
* this process's peak RSS during the step (VmHWM, reset before the step through /proc/self/clear_refs);
* the PostgreSQL backend's peak RSS (sampled every 0.5 s from /proc/<backend pid>/status: same machine).
During the import the process RSS is also sampled every second and printed at every tenth of the run,
so flat memory (or growth) is visible, not only the peak.

Steps: import (corpus_import: stream → staging → merge → corpus bitmap), two keyword classifiers
(classifier_create_keywords, one pass over the text), the region counts of the pair, a stratified draw
(samples_launch: 500 documents per region, HITs), a report (labels completed synthetically, then
topic_report_build and topic_snapshot_create), and a retrieved set of 10% of the corpus uploaded as
Parquet (classifier_create_from_parquet). --reuse skips the import when the corpus exists already.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/w8")

from common import BENCH_DIR, corpus_drop, corpus_file, corpus_name, django_setup


def _status_kib(pid: int | str, key: str) -> int:
    try:
        with open(f"/proc/{pid}/status") as handle:
            for line in handle:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        return 0
    return 0


class Sampler:
    """Samples RSS (KiB) of this process and of the database backend while a step runs."""

    def __init__(self, backend_pid: int | None, interval: float, live: pathlib.Path | None = None) -> None:
        self.backend_pid = backend_pid
        self.live = live  # if set, every sample is also appended here at once (a long run can be watched)
        self.interval = interval
        self.samples: list[tuple[float, int, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        started = time.monotonic()
        while not self._stop.is_set():
            backend = _status_kib(self.backend_pid, "VmRSS") if self.backend_pid else 0
            self.samples.append((time.monotonic() - started, _status_kib("self", "VmRSS"), backend))
            if self.live:
                with open(self.live, "a") as out:
                    seconds, process, db = self.samples[-1]
                    out.write(f"{seconds:.0f}\t{process}\t{db}\n")
            self._stop.wait(self.interval)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _backend_pid() -> int | None:
    from django.db import connection

    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return int(cursor.fetchone()[0])


def step(label: str, fn: Callable[[], Any], *, interval: float = 0.5, curve: bool = False) -> Any:
    """Run fn, print wall time, this process's peak RSS during it and the DB backend's sampled peak."""
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")  # resets VmHWM (peak RSS) to the current RSS
    except OSError:
        pass
    before = _status_kib("self", "VmRSS")
    load = os.getloadavg()[0]
    started = time.perf_counter()
    live = BENCH_DIR / f"rss-{os.getpid()}.tsv" if curve else None
    if live:
        print(f"    (RSS samples written live to {live}: seconds, process KiB, backend KiB)", flush=True)
    with Sampler(_backend_pid(), interval, live) as sampler:
        try:
            result = fn()
        except Exception as exc:  # noqa: BLE001 — a step that fails is reported, the others still run
            print(f"  {label}: FAILED after {time.perf_counter() - started:.1f} s: {type(exc).__name__}: {exc}")
            return None
    seconds = time.perf_counter() - started
    peak = _status_kib("self", "VmHWM")
    backend_peak = max((s[2] for s in sampler.samples), default=0)
    print(f"  {label}: {seconds:,.1f} s; " if seconds >= 1 else f"  {label}: {seconds * 1000:,.1f} ms; ", end="")
    print(f"process RSS before {before / 1024:,.0f} MiB, peak {peak / 1024:,.0f} MiB; "
          f"DB backend peak RSS {backend_peak / 1024:,.0f} MiB (sampled); load {load:.1f} → {os.getloadavg()[0]:.1f}")
    if curve and sampler.samples:
        points = sampler.samples
        marks = [points[min(len(points) - 1, round(i * (len(points) - 1) / 10))] for i in range(11)]
        print("    RSS over the run (s: process MiB / backend MiB): "
              + ", ".join(f"{t:.0f}: {rss / 1024:.0f}/{db / 1024:.0f}" for t, rss, db in marks))
    return result


def drop(name: str) -> None:
    from annotation.models import Topic

    Topic.objects.filter(corpus__name=name).delete()  # small: its samples, labels and HITs cascade
    corpus_drop(name)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=1_000_000)
    parser.add_argument("--keep", action="store_true", help="keep the corpus afterwards")
    parser.add_argument("--reuse", action="store_true", help="skip the import if the corpus exists")
    parser.add_argument("--import-only", action="store_true")
    parser.add_argument("--file", type=pathlib.Path, help="import this file instead of the generated corpus "
                        "(e.g. the 1M corpus concatenated with re-prefixed ids: larger corpora without the generator)")
    args = parser.parse_args()
    path = args.file or corpus_file(args.documents)
    vendor = django_setup()
    import numpy as np
    from django.db import connection

    from annotation.models import Corpus, Label
    from annotation.services.classifiers.classifier import classifier_create_keywords
    from annotation.services.classifiers.retrieved_upload import classifier_create_from_parquet
    from annotation.services.corpora.corpus_import import corpus_import
    from annotation.services.corpora.retrieved_sets import region_counts
    from annotation.services.sampling.draws import samples_launch
    from annotation.services.topics.topic import topic_create

    name = corpus_name(args.documents)
    print(f"[{vendor}] {args.documents:,} documents from {path.name} ({path.stat().st_size / 2**20:,.0f} MiB); "
          f"{time.strftime('%Y-%m-%d %H:%M')}; load {os.getloadavg()} on {os.cpu_count()} cores")
    corpus = Corpus.objects.filter(name=name).first()
    if corpus is None or not args.reuse:
        drop(name)
        summary = step("import", lambda: corpus_import(path=path, corpus_name=name), interval=1.0, curve=True)
        if summary is None:
            return
        print(f"    created {summary.created:,} documents")
        corpus = Corpus.objects.get(name=name)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_total_relation_size('annotation_document'), pg_database_size(current_database())")
            table, database = cursor.fetchone()
            cursor.execute("SELECT COUNT(*) FROM annotation_document")
            (rows,) = cursor.fetchone()
        print(f"  database: annotation_document {table / 2**30:.2f} GiB for {rows:,} rows "
              f"({table / max(rows, 1):,.0f} bytes/document incl. indexes and TOAST); whole database {database / 2**30:.2f} GiB")
    print(f"  corpus bitmap: {len(corpus.documents_bitmap or b''):,} bytes for {corpus.document_count:,} ids")
    if args.import_only:
        return

    tag = uuid.uuid4().hex[:6]
    c1 = step("keyword classifier c1 (coffee, cocoa)",
              lambda: classifier_create_keywords(corpus=corpus, name=f"c1-{tag}", terms=["coffee", "cocoa"]))
    c2 = step("keyword classifier c2 (coffee, gold)",
              lambda: classifier_create_keywords(corpus=corpus, name=f"c2-{tag}", terms=["coffee", "gold"]))
    if c1 is None or c2 is None:
        return
    print(f"    retrieved {c1.retrieved_count:,} and {c2.retrieved_count:,}; bitmaps {len(c1.retrieved_bitmap):,} and "
          f"{len(c2.retrieved_bitmap):,} bytes")
    counts = step("region counts (with N)", lambda: region_counts(c1=c1, c2=c2, include_neither=True))
    print(f"    {counts}")

    topic = topic_create(corpus=corpus, name=f"scale-{tag}", c1=c1, c2=c2)
    launch = step("stratified draw + HITs (500 per region)", lambda: samples_launch(topic=topic, per_region=500, seed=7))
    if launch is not None:
        print(f"    {launch.documents:,} documents, {len(launch.hits):,} HITs")
        rng = np.random.default_rng(1)
        labels = list(Label.objects.filter(topic=topic))
        for label in labels:
            relevant = bool(rng.random() < 0.5)
            label.votes_total, label.votes_relevant, label.majority = 3, 3 if relevant else 0, relevant
        Label.objects.bulk_update(labels, ["votes_total", "votes_relevant", "majority"], batch_size=1000)
        from estimation.services.recompute import topic_snapshot_create
        from estimation.services.reports import topic_report_build

        step("report build (topic_report_build)", lambda: topic_report_build(topic=topic))
        step("report snapshot (topic_snapshot_create)", lambda: topic_snapshot_create(topic_id=topic.pk))

    # A retrieved set computed elsewhere: 10% of the corpus's external ids, as Parquet.
    import pyarrow as pa
    import pyarrow.parquet as pq

    parquet = BENCH_DIR / f"retrieved-{args.documents}.parquet"
    if not parquet.exists():
        writer = None
        with connection.chunked_cursor() as cursor:
            cursor.execute("SELECT external_id FROM annotation_document WHERE corpus_id = %s AND id %% 10 = 0", [corpus.pk])
            while rows := cursor.fetchmany(100_000):
                table = pa.table({"id": [row[0] for row in rows]})
                writer = writer or pq.ParquetWriter(parquet, table.schema)
                writer.write_table(table)
        if writer:
            writer.close()
    result = step("Parquet upload, 10% of the corpus (classifier_create_from_parquet)",
                  lambda: classifier_create_from_parquet(corpus=corpus, name=f"parquet-{tag}", path=parquet))
    if result is not None:
        print(f"    {result.read:,} ids read, {result.classifier.retrieved_count:,} retrieved, "
              f"{result.unknown_count} unknown; file {parquet.stat().st_size / 2**20:.1f} MiB")
    if not args.keep:
        drop(name)


if __name__ == "__main__":
    main()
