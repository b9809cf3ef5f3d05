"""The trained classifier built as a task over a large corpus, with real Celery workers.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/h_ht_bench REDIS_URL=redis://127.0.0.1:6379/5 \
        python bench/bench_trained.py --documents 1000000 --workers 1 2

Target (issue 13 item 3): scoring 1M documents with the trained classifier ≤ 60 s on two workers.

Labels: noisy labels from a field-value filter (topics = gold), the worst case for training size (up to
MAX_TRAIN_PER_CLASS documents per class); the trained classifier reads the body only. For each worker count the
script starts that many Celery worker processes (`--concurrency=1` each, on this machine), starts a trained
ClassifierBuild with `--shards` id-range shards (default: the product's, one per 250,000 documents) and follows the
build row's phases: training (5 folds + the full model, in the first task), scoring (the shards, spread over the
workers), storing (the chord callback: classifier + one score row per document, COPY on PostgreSQL). It prints
each phase's seconds, the scoring figure against the 60 s target, and the load average before and after (the
machine is shared: a loaded machine inflates every figure).

Without REDIS_URL there are no workers: the build runs in this process (eager), and only the one-process figure
is printed. Without DATABASE_URL it uses its own SQLite file (var/bench/trained.sqlite3), which serialises
the workers' writes; use PostgreSQL for the worker figures. The corpus is imported once, untimed.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import subprocess
import sys
import time
import uuid

# Set before common is imported: common defaults DATABASE_URL to the shared bench.sqlite3.
ROOT = pathlib.Path(__file__).resolve().parents[1]
os.environ.setdefault("DATABASE_URL", f"sqlite:///{ROOT / 'var' / 'bench' / 'trained.sqlite3'}")

from common import corpus_file, corpus_name, django_setup, verdict  # noqa: E402

TARGET_SECONDS = 60.0


def loadavg() -> str:
    return " ".join(pathlib.Path("/proc/loadavg").read_text().split()[:3])


def workers_start(count: int, tag: str) -> list[subprocess.Popen]:
    procs = []
    logs = ROOT / "var" / "bench"
    for i in range(count):
        log = (logs / f"worker-{tag}-{i}.log").open("w")
        procs.append(subprocess.Popen(
            [str(ROOT / ".venv" / "bin" / "celery"), "-A", "config", "worker", "--concurrency=1", "--pool=prefork",
             "-n", f"bench-trained-{tag}-{i}@%h", "--without-gossip", "--without-mingle", "--loglevel=WARNING"],
            cwd=ROOT, env={**os.environ}, stdout=log, stderr=subprocess.STDOUT))
    time.sleep(8)  # the workers import Django and connect
    return procs


def workers_stop(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


def build_follow(build_id: int) -> dict[str, float]:
    """Poll the build row; the time each phase was first seen (seconds from the start)."""
    from annotation.models import ClassifierBuild

    started = time.monotonic()
    seen: dict[str, float] = {}
    while True:
        build = ClassifierBuild.objects.get(pk=build_id)
        phase = (build.details or {}).get("phase", "") if build.status == "running" else build.status
        key = phase.split(":")[0] if phase else "scoring"
        seen.setdefault(key, time.monotonic() - started)
        if build.status in ("done", "failed"):
            if build.status == "failed":
                raise SystemExit(f"build {build_id} failed: {build.error}")
            return seen
        if time.monotonic() - started > 3600:
            raise SystemExit("gave up after an hour")
        time.sleep(0.2)


def cpu_sample(corpus, documents: int) -> None:
    """CPU seconds of scoring `documents` documents in one process, with the last finished build's saved model."""
    from annotation.models import ClassifierBuild, Document
    from annotation.services.classifiers import trained

    build = ClassifierBuild.objects.filter(corpus=corpus, kind="trained", status="done").order_by("-pk").first()
    if build is None:
        raise SystemExit("no finished trained build to take the model from: run the bench first")
    model = trained.trained_model_load(**build.definition["build"]["model"])
    ids = Document.objects.filter(corpus=corpus).order_by("pk").values_list("pk", flat=True)
    last = ids[documents - 1]
    before = loadavg()
    wall, cpu = time.perf_counter(), time.process_time()
    pks, _ = trained.trained_score_range(corpus=corpus, fields=build.definition["fields"], model=model.model,
                                         oof=model.oof, pk_range=(ids[0], last + 1))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    per_million = cpu * 1_000_000 / len(pks)
    print(f"scored {len(pks):,} documents in one process: {wall:.1f} s wall, {cpu:.1f} s CPU (load {before} → "
          f"{loadavg()}); CPU per 1M documents {per_million:.0f} s, / 2 workers = {per_million / 2:.0f} s; "
          f"{verdict(per_million / 2, TARGET_SECONDS)} (scoring only, a free core per worker, storing not included)")


def features_sample(documents: int) -> None:
    """CPU seconds per 1M documents of scoring with scikit-learn's HashingVectorizer vs char_hashing, same sample.

    The first `documents` records of the 1M corpus file (the body, as the bench's classifier reads it), a model
    fitted on 4,000 of them (label: topics contains gold, as the bench's noisy labels), chunks of SCORE_CHUNK.
    Reads the corpus file only: no database, no workers. Also checks the two paths give the same matrix.
    """
    import gzip
    import json

    import numpy as np

    from annotation.services.classifiers import trained
    from annotation.services.classifiers.char_hashing import char_wb_transform

    texts, labels = [], []
    with gzip.open(corpus_file(1_000_000), "rt", encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            texts.append(record.get("body") or "")
            labels.append("gold" in (record.get("topics") or []))
            if len(texts) >= documents:
                break
    vec = trained.vectorizer()
    rng = np.random.default_rng(1)
    rows = rng.choice(len(texts), size=min(4000, len(texts)), replace=False)
    train_labels = np.array(labels)[rows] ^ (rng.random(len(rows)) < 0.2)  # both classes even without gold
    model = trained.model_fit(features=vec.transform([texts[i] for i in rows]), labels=train_labels, seed=1)
    chunks = [texts[i:i + trained.SCORE_CHUNK] for i in range(0, len(texts), trained.SCORE_CHUNK)]
    figures = {}
    scores = {}
    for name, transform in (("HashingVectorizer", vec.transform),
                            ("char_hashing", lambda c: char_wb_transform(c, n_features=trained.N_FEATURES,
                                                                         fallback=vec))):
        before = loadavg()
        cpu = time.process_time()
        scores[name] = np.concatenate([model.predict_proba(transform(chunk))[:, 1] for chunk in chunks])
        cpu = time.process_time() - cpu
        figures[name] = cpu * 1_000_000 / len(texts)
        print(f"{name}: {len(texts):,} documents scored in {cpu:.1f} s CPU (load {before} → {loadavg()}); "
              f"CPU per 1M documents {figures[name]:.0f} s, / 2 workers = {figures[name] / 2:.0f} s")
    same = all((vec.transform(c) != char_wb_transform(c, fallback=vec)).nnz == 0 for c in chunks[:2])
    diff = float(np.max(np.abs(scores["HashingVectorizer"] - scores["char_hashing"])))
    print(f"speed-up {figures['HashingVectorizer'] / figures['char_hashing']:.2f}x; same matrix on the first chunks: "
          f"{same}; largest score difference {diff:.2e} (features and scoring only, no database reads)")


def classifier_drop(classifier_id: int) -> None:
    from django.db import connection, transaction

    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("UPDATE annotation_classifierbuild SET classifier_id = NULL WHERE classifier_id = %s",
                       [classifier_id])
        cursor.execute("DELETE FROM annotation_classifierscore WHERE classifier_id = %s", [classifier_id])
        cursor.execute("DELETE FROM annotation_classifier WHERE id = %s", [classifier_id])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--shards", type=int, default=None)
    parser.add_argument("--prepare", action="store_true", help="import the corpus and make the labeller, then stop")
    parser.add_argument("--cpu-sample", type=int, default=0,
                        help="score the first N documents in this process with the last build's saved model; "
                             "print wall and CPU seconds (no workers, nothing stored)")
    parser.add_argument("--features-sample", type=int, default=0,
                        help="score this many documents of the corpus file with scikit-learn's HashingVectorizer and "
                             "with char_hashing; print CPU seconds per 1M documents of each (no database)")
    args = parser.parse_args()
    vendor = django_setup()
    if args.features_sample:
        features_sample(args.features_sample)
        return
    from django.conf import settings

    from annotation.models import Classifier, ClassifierBuild, Corpus
    from annotation.services.classifiers.classifier_builds import classifier_build_start
    from annotation.services.classifiers.field_values import classifier_create_field_values
    from annotation.services.corpora.corpus_import import corpus_import

    name = corpus_name(args.documents)
    if not Corpus.objects.filter(name=name).exists():
        started = time.monotonic()
        corpus_import(path=corpus_file(args.documents), corpus_name=name, text_fields=("title", "body"))
        print(f"(imported {name} in {time.monotonic() - started:.0f} s, untimed)")
    corpus = Corpus.objects.get(name=name)
    labeller = Classifier.objects.filter(corpus=corpus, name="bench-gold").first()
    if labeller is None:
        labeller = classifier_create_field_values(corpus=corpus, name="bench-gold", field="topics", values=["gold"])
    print(f"[{vendor}] corpus {name}: {corpus.document_count:,} documents; noisy labels from topics=gold "
          f"({labeller.retrieved_count:,} retrieved)")
    if args.prepare:
        return
    if args.cpu_sample:
        cpu_sample(corpus, args.cpu_sample)
        return
    eager = getattr(settings, "CELERY_TASK_ALWAYS_EAGER", False)
    for workers in ([0] if eager else args.workers):
        tag = uuid.uuid4().hex[:6]
        procs = [] if eager else workers_start(workers, tag)
        try:
            before = loadavg()
            wall = time.monotonic()
            build = classifier_build_start(
                corpus=corpus, name=f"bench-{tag}-trained", kind=Classifier.Kind.TRAINED, shards=args.shards,
                definition={"fields": ["text"], "labels_from": f"classifier:{labeller.pk}", "seed": args.seed,
                            "threshold": 0.5})
            seen = {"done": 0.0} if eager else build_follow(build.pk)
            wall = time.monotonic() - wall
            after = loadavg()
        finally:
            workers_stop(procs)
        build = ClassifierBuild.objects.get(pk=build.pk)
        classifier = build.classifier
        if build.status != "done" or classifier is None:
            raise SystemExit(f"build {build.pk} {build.status}: {build.error}")
        who = "in this process (no broker)" if eager else f"{workers} worker{'s' if workers > 1 else ''}"
        print(f"[{vendor}] trained build, {build.shards} shards, {who}: {wall:.1f} s from start to stored; "
              f"load average before {before}, after {after}")
        if not eager:
            training = seen.get("scoring", 0.0)
            storing_at = seen.get("storing the scores", seen["done"])
            scoring = storing_at - training
            storing = seen["done"] - storing_at
            print(f"    training (5 folds + full model, {classifier.definition['n_positive']:,} + / "
                  f"{classifier.definition['n_negative']:,} - noisy labels): {training:.1f} s")
            print(f"    scoring {corpus.document_count:,} documents in {build.shards} shards: {scoring:.1f} s")
            print(f"    storing (classifier + {corpus.document_count:,} score rows): {storing:.1f} s")
            timings = [t for t in (build.details or {}).get("shard_timings", []) if t]
            if timings:
                cpu = sum(t["cpu_seconds"] for t in timings)
                cpus = ", ".join(f"{t['cpu_seconds']:.0f}" for t in timings)
                walls = ", ".join(f"{t['seconds']:.0f}" for t in timings)
                print(f"    shards: CPU {cpu:.1f} s in all ({cpus}), wall {walls} s; CPU / {max(workers, 1)} "
                      f"worker{'s' if workers > 1 else ''} = {cpu / max(workers, 1):.1f} s (the scoring wall time "
                      "with a free core per worker)")
            figure = (scoring + storing) * 1_000_000 / corpus.document_count
            print(f"[{vendor}] scoring + storing, scaled to 1M, {who}: {figure:.1f} s; "
                  f"{verdict(figure, TARGET_SECONDS)} of the 60 s target")
        classifier_drop(classifier.pk)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
