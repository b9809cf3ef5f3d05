"""Shared set-up of the foundation benchmarks (bench_import, bench_classifier, bench_regions).

Database: DATABASE_URL if set (e.g. postgres://postgres@127.0.0.1:5432/test), else a
throw-away SQLite file var/bench/bench.sqlite3. The corpus file is generated once
(seeded) under var/bench/ and reused. Benchmark corpora are named "bench-<N>";
`corpus_drop` removes them with plain SQL (the ORM would load a million rows to cascade).
"""
from __future__ import annotations

import os
import pathlib
import resource
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
BENCH_DIR = ROOT / "var" / "bench"
BENCH_DIR.mkdir(parents=True, exist_ok=True)
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
os.environ.setdefault("DATABASE_URL", f"sqlite:///{BENCH_DIR / 'bench.sqlite3'}")
SEED = 20261122


def django_setup() -> str:
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    from django.db import connection

    return connection.vendor


def corpus_file(documents: int) -> pathlib.Path:
    """The seeded synthetic corpus of `documents` records, generated in a child process (untimed)."""
    path = BENCH_DIR / f"corpus-{documents}-{SEED}.jsonl.gz"
    if not path.exists():
        started = time.monotonic()
        subprocess.run(
            [sys.executable, str(ROOT / "manage.py"), "generate_corpus", str(path), "--documents", str(documents), "--seed", str(SEED)],
            check=True, env={**os.environ},
        )
        print(f"(generated {path.name} in {time.monotonic() - started:.0f} s, untimed)")
    return path


def corpus_name(documents: int) -> str:
    return f"bench-{documents}"


def corpus_drop(name: str) -> None:
    from django.db import connection, transaction

    from annotation.models import Corpus

    corpus = Corpus.objects.filter(name=name).first()
    if corpus is None:
        return
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "DELETE FROM annotation_classifierscore WHERE classifier_id IN "
            "(SELECT id FROM annotation_classifier WHERE corpus_id = %s)", [corpus.pk]
        )
        cursor.execute("DELETE FROM annotation_classifier WHERE corpus_id = %s", [corpus.pk])
        cursor.execute("DELETE FROM annotation_document WHERE corpus_id = %s", [corpus.pk])
        cursor.execute("DELETE FROM annotation_corpus WHERE id = %s", [corpus.pk])


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def timed(fn, *args, **kwargs):
    started = time.perf_counter()
    result = fn(*args, **kwargs)
    return result, time.perf_counter() - started


def verdict(measured: float, target: float, *, lower_is_better: bool = True) -> str:
    ratio = measured / target if lower_is_better else target / measured
    return f"{'meets' if ratio <= 1 else 'MISSES'} target (ratio {ratio:.2f})"
