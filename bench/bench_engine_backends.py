"""Corpora that stay in the team's engine (issue 29): the five operations on generated Parquet corpora.

    python bench/bench_engine_backends.py generate --documents 10000000      # once, under /tmp (untimed)
    python bench/bench_engine_backends.py run --engine duckdb --documents 10000000
    python bench/bench_engine_backends.py run --engine spark --documents 10000000

Targets (issue 29): on 10M documents with DuckDB, the region counts of a keyword pair <= 5 s and a
1,500-document stratified draw (500 from each of A12, B1, B2, with the documents' text) <= 5 s, nothing
imported but the sample; Spark local within 3x of DuckDB; 100M documents with DuckDB, with its memory.

The data: ids d000000000.., a title, a text of 12 words from a 5,000-word vocabulary plus the topic's words
("Coffee" in ~5%, "espresso" in ~3.4%, correlated), and a source column; seeded by DuckDB's hash of the row
number, so the same --documents gives the same files. Written under /tmp/h15_engine/<n> (not the repository).
The machine is shared: every figure is printed with /proc/loadavg and the date.
"""
from __future__ import annotations

import argparse
import datetime
import os
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = Path(os.environ.get("BENCH_ENGINE_DATA", "/tmp/h15_engine"))


def folder(documents: int) -> Path:
    return DATA / (f"{documents // 1_000_000}m" if documents % 1_000_000 == 0 else str(documents))


def generate(documents: int) -> None:
    import duckdb

    out = folder(documents)
    if any(out.glob("*.parquet")):
        print(f"{out} exists; not regenerated")
        return
    out.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect()
    words = ", ".join(f"'w' || (hash(i, {j}) % 5000)::VARCHAR" for j in range(12))
    started = time.monotonic()
    con.execute(f"""
    COPY (
      SELECT 'd' || lpad(i::VARCHAR, 9, '0') AS id,
             'Document ' || i::VARCHAR AS title,
             concat_ws(' ', {words},
                CASE WHEN hash(i, 90) % 100 < 4 OR hash(i, 91) % 100 < 1 THEN 'Coffee' END,
                CASE WHEN (hash(i, 90) % 100 < 4 AND hash(i, 92) % 10 < 6) OR hash(i, 93) % 100 < 1 THEN 'espresso' END) AS text,
             ['news', 'blog', 'forum', 'wire'][(hash(i, 95) % 4)::INT + 1] AS source
      FROM range(0, {documents}) t(i)
    ) TO '{out}' (FORMAT parquet, FILE_SIZE_BYTES '256MB', OVERWRITE_OR_IGNORE true)""")
    size = sum(p.stat().st_size for p in out.glob("*.parquet"))
    print(f"generated {documents:,} documents in {time.monotonic() - started:.0f} s: {size / 1e6:.0f} MB in {out}")


def _timed(fn, repeats: int):
    times, result = [], None
    for _ in range(repeats):
        started = time.monotonic()
        result = fn()
        times.append(time.monotonic() - started)
    return result, times


def _fmt(times: list[float]) -> str:
    return f"median {statistics.median(times):.2f} s (min {min(times):.2f}, max {max(times):.2f}, {len(times)} runs)"


def run(engine: str, documents: int, repeats: int, per_region: int, location: str = "") -> None:
    from annotation.services.corpora.backends.base import KeywordQuery, pair_counts, pair_region

    location = location or str(folder(documents))
    print(f"# {engine} on {documents:,} documents ({location}); {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC")
    print(f"load before: {Path('/proc/loadavg').read_text().strip()}; cores: {os.cpu_count()}")
    started = time.monotonic()
    if engine == "duckdb":
        from annotation.services.corpora.backends.duckdb_parquet import DuckDBParquetBackend

        backend = DuckDBParquetBackend(location=location)
    else:
        from annotation.services.corpora.backends.spark import SparkParquetBackend

        backend = SparkParquetBackend(location=location)  # type: ignore[assignment]  # the same interface
    print(f"open (snapshot, schema{', JVM start' if engine == 'spark' else ''}): {time.monotonic() - started:.2f} s")
    snapshot, times = _timed(backend.snapshot, 1)
    print(f"snapshot {snapshot.token} over {len(snapshot.manifest)} files: {times[0]:.3f} s")
    size, times = _timed(backend.size, 1)
    print(f"size {size:,}: {times[0]:.2f} s")
    c1, c2 = KeywordQuery(terms=("coffee",)), KeywordQuery(terms=("espresso",))
    cells, times = _timed(lambda: backend.region_counts([c1, c2]), 1)
    counts = pair_counts(cells)
    print(f"region counts of a keyword pair {counts}, first (the text scan; DuckDB keeps the retrieved ids): "
          f"{times[0]:.2f} s  [target <= 5 s on 10M with DuckDB]")
    _, times = _timed(lambda: backend.region_counts([c1, c2]), repeats)
    print(f"region counts again (same snapshot): {_fmt(times)}")

    def draw():
        ids = []
        for code in ("A12", "B1", "B2"):
            ids += backend.draw(pair_region(c1=c1, c2=c2, code=code), n=per_region, seed=20261127)
        return ids

    ids, times = _timed(draw, repeats)
    print(f"stratified draw of {len(ids):,} ids (A12, B1, B2): {_fmt(times)}")
    records, fetch_times = _timed(lambda: backend.fetch(ids), repeats)
    assert len(ids) == len(records) == 3 * per_region, (len(ids), len(records))
    print(f"fetch their text: {_fmt(fetch_times)}")
    total = [a + b for a, b in zip(times, fetch_times, strict=True)]
    print(f"stratified draw of {len(ids):,} with their text: {_fmt(total)}  [target <= 5 s]")
    n_region = pair_region(c1=c1, c2=c2, code="N")
    n_ids, times = _timed(lambda: backend.draw(n_region, n=per_region, seed=20261127), 1)
    print(f"draw of {len(n_ids)} from N (the {counts['N']:,} documents neither retrieves): {times[0]:.2f} s")
    print(f"first ids drawn: {ids[:3]} (same on every engine for this seed)")
    print(f"imported: {len(records)} documents fetched, nothing else read out of the files")
    print(f"peak RSS of this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB"
          + (" (the JVM is a child process: see the Spark driver memory setting)" if engine == "spark" else ""))
    print(f"load after: {Path('/proc/loadavg').read_text().strip()}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=["generate", "run"])
    parser.add_argument("--engine", choices=["duckdb", "spark"], default="duckdb")
    parser.add_argument("--documents", type=int, default=10_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--per-region", type=int, default=500)
    parser.add_argument("--location", default="", help="another folder of the generated files (e.g. a part of them)")
    args = parser.parse_args()
    if args.command == "generate":
        generate(args.documents)
    else:
        run(args.engine, args.documents, args.repeats, args.per_region, args.location)


if __name__ == "__main__":
    main()
