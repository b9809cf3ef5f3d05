"""Keyword classifiers over a large corpus: `python bench/bench_classifier.py --documents 1000000`.

Targets: a keyword classifier of 10 terms built in <= 10 s on 1,000,000 documents of ~600
characters; keyword_preview <= 1 s. Also times neighbour_terms_suggest (no target).
Uses the corpus "bench-<N>" left by `bench_import.py --keep` (imports it, untimed, if absent).

Scale-out (issue 15): `--workers 1 2` builds the same keyword classifier as a sharded build
(`--shards`, default 4) on a real Celery worker pool of 1, then 2 processes that this script starts
(`celery -A config worker -c N`) against REDIS_URL, and compares with the one-process build; the
target is >= 1.6x faster with 2 workers than with 1. Needs REDIS_URL and a PostgreSQL DATABASE_URL
(SQLite allows one writer), e.g.
  DATABASE_URL=postgres://postgres@127.0.0.1:5432/w4 REDIS_URL=redis://127.0.0.1:6379/9 \
  python bench/bench_classifier.py --documents 1000000 --workers 1 2 --only-scale-out
"""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
import uuid
from typing import Any

from common import ROOT, corpus_file, corpus_name, django_setup, timed, verdict

RARE_TERMS = ["coffee", "arabica", "espresso", "coffee beans", "robusta", "roasters", "ico quota", "gold", "bullion", "troy ounce"]


def frequent_terms(corpus, n: int = 10, ranks: tuple[int, ...] = (0, 2, 9, 29, 99, 299, 499, 799, 999, 1499)) -> list[str]:
    """Background words at the given frequency ranks: harder cases (many hits to check)."""
    from annotation.models import Document

    counts: dict[str, int] = {}
    for text in Document.objects.filter(corpus=corpus).order_by("pk").values_list("text", flat=True)[:2000]:
        for word in text.lower().replace(".", " ").split():
            counts[word] = counts.get(word, 0) + 1
    ranked = sorted(counts, key=lambda w: -counts[w])
    return [ranked[r] for r in ranks[:n] if r < len(ranked)]


def _worker_start(concurrency: int) -> subprocess.Popen:
    """A Celery worker pool of `concurrency` processes, in its own process group (stopped by its pid)."""
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "-c", str(concurrency), "--pool", "prefork",
         "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "WARNING",
         "-n", f"bench-classifier-{os.getpid()}@%h"],
        cwd=ROOT, env={**os.environ}, start_new_session=True,
    )
    from config.celery import app

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if app.control.ping(timeout=1.0):
            return worker
        if worker.poll() is not None:
            raise SystemExit("the Celery worker exited at start")
    _worker_stop(worker)
    raise SystemExit("the Celery worker did not answer a ping in 120 s")


def _worker_stop(worker: subprocess.Popen) -> None:
    os.killpg(worker.pid, signal.SIGTERM)
    try:
        worker.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(worker.pid, signal.SIGKILL)
        worker.wait()


def _sharded_build(corpus, *, name: str, terms: list[str], shards: int) -> tuple[float, Any]:
    """Start a build (queued to the worker pool) and wait for it; wall seconds from start to stored classifier."""
    from annotation.models import ClassifierBuild
    from annotation.services.classifiers.classifier_builds import classifier_build_start

    started = time.perf_counter()
    build = classifier_build_start(corpus=corpus, name=name, kind="keywords", definition={"terms": terms},
                                   user=None, shards=shards)
    while True:
        build.refresh_from_db()
        if build.status in (ClassifierBuild.Status.DONE, ClassifierBuild.Status.FAILED):
            break
        time.sleep(0.05)
    seconds = time.perf_counter() - started
    if build.status != ClassifierBuild.Status.DONE:
        raise SystemExit(f"build failed: {build.error}")
    return seconds, build.classifier


def scale_out(corpus, *, vendor: str, tag: str, workers: list[int], shards: int, rounds: int) -> None:
    """One-process build vs the sharded build on worker pools of each size; same set and fingerprint checked."""
    from django.conf import settings

    from annotation.services.classifiers.classifier import classifier_create_keywords

    if settings.CELERY_TASK_ALWAYS_EAGER or vendor != "postgresql":
        raise SystemExit("--workers needs REDIS_URL (a broker) and a PostgreSQL DATABASE_URL")
    terms = RARE_TERMS
    load = os.getloadavg()
    print(f"[{vendor}] load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} cores")
    one, seconds = timed(classifier_create_keywords, corpus=corpus, name=f"bench-{tag}-one", terms=terms)
    print(f"[{vendor}] one process (in this process, no Celery): {seconds:.2f} s, {one.retrieved_count:,} retrieved")
    by_workers: dict[int, float] = {}
    for count in workers:
        worker = _worker_start(count)
        try:
            times = []
            for r in range(rounds):
                seconds, built = _sharded_build(corpus, name=f"bench-{tag}-w{count}-{r}", terms=terms, shards=shards)
                assert built.fingerprint == one.fingerprint, "a sharded build must equal the one-process build"
                times.append(seconds)
            by_workers[count] = min(times)
            load = os.getloadavg()
            print(f"[{vendor}] sharded build, {shards} shards, worker pool of {count}: "
                  + ", ".join(f"{t:.2f}" for t in times) + f" s (best {min(times):.2f} s); same fingerprint; "
                  f"load {load[0]:.2f}")
        finally:
            _worker_stop(worker)
    if 1 in by_workers and 2 in by_workers:
        speedup = by_workers[1] / by_workers[2]
        print(f"[{vendor}] speed-up 2 workers vs 1: {speedup:.2f}x; {verdict(speedup, 1.6, lower_is_better=False)}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--skip-neighbours", action="store_true")
    parser.add_argument("--workers", type=int, nargs="*", default=[],
                        help="worker pool sizes for the sharded build (e.g. 1 2); needs REDIS_URL and PostgreSQL")
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--only-scale-out", action="store_true")
    args = parser.parse_args()
    vendor = django_setup()
    from annotation.models import Classifier, Corpus
    from annotation.services.classifiers.classifier import (
        classifier_create_keywords,
        keyword_preview,
    )
    from annotation.services.classifiers.term_suggestions import neighbour_terms_suggest
    from annotation.services.corpora.corpus_import import corpus_import

    name = corpus_name(args.documents)
    if not Corpus.objects.filter(name=name).exists():
        corpus_import(path=corpus_file(args.documents), corpus_name=name)
    corpus = Corpus.objects.get(name=name)
    print(f"[{vendor}] corpus {name}: {corpus.document_count:,} documents")
    tag = uuid.uuid4().hex[:6]
    try:
        if args.workers:
            scale_out(corpus, vendor=vendor, tag=tag, workers=args.workers, shards=args.shards, rounds=args.rounds)
        if args.only_scale_out:
            return
        mid_ranks = (29, 49, 99, 149, 199, 299, 499, 799, 999, 1499)
        for label, terms in (
            ("10 rare topic terms", RARE_TERMS),
            ("10 frequent words", frequent_terms(corpus)),
            ("10 mid-frequency words", frequent_terms(corpus, ranks=mid_ranks)),
        ):
            cpu = time.process_time()
            classifier, seconds = timed(classifier_create_keywords, corpus=corpus, name=f"bench-{tag}-{label}", terms=terms)
            cpu = time.process_time() - cpu
            print(f"[{vendor}] keyword classifier, {label} {terms}: {seconds:.2f} s wall, {cpu:.2f} s CPU, "
                  f"{classifier.retrieved_count:,} retrieved; {verdict(seconds, 10.0)}")
        for label, terms in (("10 rare topic terms", RARE_TERMS), ("10 frequent words", frequent_terms(corpus))):
            preview, seconds = timed(keyword_preview, corpus=corpus, terms=terms)
            preview, seconds = timed(keyword_preview, corpus=corpus, terms=terms)  # second call: warm page cache
            print(f"[{vendor}] keyword_preview, {label}: {seconds:.2f} s (scanned {preview.scanned:,}, "
                  f"estimated {preview.retrieved:,}, {len(preview.overlaps)} overlaps); {verdict(seconds, 1.0)}")
        if not args.skip_neighbours:
            for sample in (50_000, None):
                terms, seconds = timed(
                    neighbour_terms_suggest, corpus=corpus, seed_terms=["coffee"], k=10, sample_documents=sample
                )
                print(f"[{vendor}] neighbour_terms_suggest(coffee), {'sample of 50,000' if sample else 'whole corpus'}: "
                      f"{seconds:.1f} s (no target); top: " + ", ".join(f"{t.term} {t.score:.3f}" for t in terms[:6]))
    finally:
        from annotation.models import ClassifierBuild

        ClassifierBuild.objects.filter(corpus=corpus, name__startswith=f"bench-{tag}").delete()
        Classifier.objects.filter(corpus=corpus, name__startswith=f"bench-{tag}").delete()


if __name__ == "__main__":
    main()
