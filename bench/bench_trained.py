"""A classifier trained on another view over a large corpus: `python bench/bench_trained.py --documents 1000000`.

Target (issue 13): scoring 1M documents with the trained classifier ≤ 60 s on two workers.
Labels: noisy labels from a field-value filter (topics = gold) — the worst case for training size
(up to MAX_TRAIN_PER_CLASS documents per class); the trained classifier reads the body only.
Times the field-value filter, then the trained classifier split into training (5 folds + the full
model), scoring the corpus, and storing (classifier + one ClassifierScore row per document).
Uses its own SQLite file (var/bench/trained.sqlite3) unless DATABASE_URL is set; imports the corpus untimed.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import time
import uuid

# Set before common is imported: common defaults DATABASE_URL to the shared bench.sqlite3.
os.environ.setdefault(
    "DATABASE_URL", f"sqlite:///{pathlib.Path(__file__).resolve().parents[1] / 'var' / 'bench' / 'trained.sqlite3'}")

from common import corpus_file, corpus_name, django_setup, peak_rss_mib, timed, verdict  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    vendor = django_setup()
    from annotation.models import Corpus
    from annotation.services import trained
    from annotation.services.corpus_import import corpus_import
    from annotation.services.field_values import classifier_create_field_values

    name = corpus_name(args.documents)
    if not Corpus.objects.filter(name=name).exists():
        started = time.monotonic()
        corpus_import(path=corpus_file(args.documents), corpus_name=name, text_fields=("title", "body"))
        print(f"(imported {name} in {time.monotonic() - started:.0f} s, untimed)")
    corpus = Corpus.objects.get(name=name)
    print(f"[{vendor}] corpus {name}: {corpus.document_count:,} documents")
    tag = uuid.uuid4().hex[:6]

    labeller, seconds = timed(classifier_create_field_values, corpus=corpus, name=f"bench-{tag}-gold",
                              field="topics", values=["gold"])
    print(f"[{vendor}] field-value filter topics=gold: {seconds:.2f} s, {labeller.retrieved_count:,} retrieved")

    phases: dict[str, float] = {}
    cpu_phases: dict[str, float] = {}

    def timing(label, fn):
        def wrapped(*a, **kw):
            cpu_started = time.process_time()
            result, took = timed(fn, *a, **kw)
            phases[label] = phases.get(label, 0.0) + took
            cpu_phases[label] = cpu_phases.get(label, 0.0) + time.process_time() - cpu_started
            return result
        return wrapped

    trained._train = timing("train (5 folds + full model)", trained._train)
    trained._score_corpus = timing("score the corpus", trained._score_corpus)
    cpu = time.process_time()
    classifier, seconds = timed(trained.classifier_create_trained, corpus=corpus, name=f"bench-{tag}-trained",
                                fields=["text"], labels_from=labeller, seed=args.seed)
    cpu = time.process_time() - cpu
    phases["store (classifier + score rows)"] = seconds - sum(phases.values())
    cpu_phases["store (classifier + score rows)"] = cpu - sum(cpu_phases.values())
    d = classifier.definition
    at = d["cross_validation"]["at_threshold"]
    print(f"[{vendor}] trained classifier on text, noisy labels {d['n_positive']:,} + / {d['n_negative']:,} -: "
          f"{seconds:.2f} s wall, {cpu:.2f} s CPU, {classifier.retrieved_count:,} retrieved; "
          f"cross-validated precision {at['precision']:.3f} recall {at['recall']:.3f}")
    for label, took in phases.items():
        print(f"    {label}: {took:.2f} s wall, {cpu_phases[label]:.2f} s CPU")
    score_and_store = phases["score the corpus"] + phases["store (classifier + score rows)"]
    print(f"[{vendor}] scoring + storing {corpus.document_count:,} documents: {score_and_store:.2f} s; "
          f"{verdict(score_and_store * 1_000_000 / corpus.document_count, 60.0)} (scaled to 1M, one process)")
    score_and_store_cpu = cpu_phases["score the corpus"] + cpu_phases["store (classifier + score rows)"]
    print(f"[{vendor}] scoring + storing, CPU: {score_and_store_cpu:.2f} s (the wall time on an idle machine with "
          "a free core; SQLite may add I/O waits)")
    print(f"peak RSS {peak_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()
