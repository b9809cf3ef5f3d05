"""Apache Spark (PySpark) over the same Parquet files, for corpora one machine cannot scan in time.

The statements are those of the DuckDB backend (annotation.services.corpora.backends.sql, Spark
dialect: backtick-quoted identifiers, ``:name`` parameter markers, Java regexes), so counts and
draws are identical. The session is local (``local[2]``) unless the source names an environment
variable holding the master URL (e.g. ``spark://host:7077``); the URL is read from the environment
at use, never stored. One session per process, started on first use (a JVM: seconds).
"""
from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Sequence
from typing import Any

from annotation.services.corpora.backends.base import (
    BackendError,
    ClassifierQuery,
    DocumentRecord,
    RegionQuery,
    Snapshot,
)
from annotation.services.corpora.backends.parquet_files import parquet_files, parquet_snapshot
from annotation.services.corpora.backends.sql import (
    ID_COLUMN,
    SPARK,
    SqlCompiler,
    cells_from_rows,
    columns_check,
    counts_sql,
    draw_sql,
    fetch_sql,
    records_from_rows,
    region_size_sql,
)

_LOCK = threading.Lock()
_SESSIONS: dict[str, Any] = {}


def spark_session(master: str = "local[2]"):
    """The process's Spark session for ``master`` (created once)."""
    with _LOCK:
        if master not in _SESSIONS:
            try:
                from pyspark.sql import SparkSession  # noqa: PLC0415 — a JVM is started only if Spark is used
            except ImportError as exc:  # pragma: no cover - depends on the install
                raise BackendError("Spark is not installed on this server (pip install pyspark; it needs a Java runtime).") from exc
            try:
                _SESSIONS[master] = (
                    SparkSession.builder.master(master).appName("recall-corpus")
                    .config("spark.ui.enabled", "false")
                    .config("spark.ui.showConsoleProgress", "false")
                    .config("spark.sql.shuffle.partitions", os.environ.get("CORPUS_SPARK_SHUFFLE_PARTITIONS", "4"))
                    .config("spark.driver.memory", os.environ.get("CORPUS_SPARK_DRIVER_MEMORY", "2g"))
                    .config("spark.sql.ansi.enabled", "false")
                    .getOrCreate()
                )
                _SESSIONS[master].sparkContext.setLogLevel("ERROR")
            except Exception as exc:
                raise BackendError(f"Spark could not start ({master}): {exc}") from exc
        return _SESSIONS[master]


class SparkParquetBackend:
    engine = "spark"
    dialect = SPARK

    def __init__(self, *, location: str, id_field: str = "id", title_field: str = "title",
                 text_fields: Sequence[str] = ("text",), master_env: str = "") -> None:
        self.location = location
        self.id_field = id_field
        self.title_field = title_field
        self.text_fields = tuple(text_fields)
        master = os.environ.get(master_env, "") if master_env else ""
        if master_env and not master:
            raise BackendError(f"The environment variable {master_env!r} (the Spark master URL) is not set on this server.")
        self.spark = spark_session(master or os.environ.get("CORPUS_SPARK_MASTER", "local[2]"))
        self._snapshot = parquet_snapshot(location)
        _, files = parquet_files(location)
        try:
            frame = self.spark.read.parquet(*[str(p) for p in files])
        except Exception as exc:
            raise BackendError(f"Spark cannot read the Parquet files at {location!r}: {exc}") from exc
        self.columns = list(frame.columns)
        columns_check(self.columns)
        if id_field not in self.columns:
            raise BackendError(f"The Parquet files have no id column {id_field!r} (columns: {', '.join(self.columns)}).")
        for name in (*self.text_fields, *([title_field] if title_field else [])):
            if name not in self.columns:
                raise BackendError(f"The Parquet files have no column {name!r} (columns: {', '.join(self.columns)}).")
        self.view = "__recall_docs_" + uuid.uuid4().hex[:12]
        frame.select(frame[id_field].cast("string").alias(ID_COLUMN), "*").createOrReplaceTempView(self.view)

    def _compiler(self) -> SqlCompiler:
        return SqlCompiler(dialect=SPARK, columns=self.columns, docs=self.view)

    def _run(self, compiler: SqlCompiler, sql: str) -> list[tuple]:
        compiled = compiler.compiled
        spark = self.spark
        views = []
        for name, ids in compiled.id_tables.items():
            spark.createDataFrame([(i,) for i in ids], "id string").createOrReplaceTempView(name)
            views.append(name)
        for name, scores in compiled.score_tables.items():
            spark.createDataFrame([(i, float(s)) for i, s in scores], "id string, score double").createOrReplaceTempView(name)
            views.append(name)
        try:
            return [tuple(row) for row in spark.sql(sql, args=compiled.params).collect()]
        except Exception as exc:
            raise BackendError(f"Spark refused the query: {str(exc).splitlines()[0]}") from exc
        finally:
            for name in views:
                spark.catalog.dropTempView(name)

    def snapshot(self) -> Snapshot:
        return parquet_snapshot(self.location)

    @property
    def opened_snapshot(self) -> Snapshot:
        return self._snapshot

    def size(self) -> int:
        compiler = self._compiler()
        return int(self._run(compiler, counts_sql(compiler, []))[0][0])

    def region_counts(self, classifiers: Sequence[ClassifierQuery]) -> dict[tuple[bool, ...], int]:
        compiler = self._compiler()
        return cells_from_rows(self._run(compiler, counts_sql(compiler, classifiers)), len(classifiers))

    def region_size(self, region: RegionQuery) -> int:
        compiler = self._compiler()
        return int(self._run(compiler, region_size_sql(compiler, region))[0][0])

    def draw(self, region: RegionQuery, *, n: int, seed: int, exclude: Sequence[str] = ()) -> list[str]:
        if n <= 0:
            return []
        compiler = self._compiler()
        return [str(r[0]) for r in self._run(compiler, draw_sql(compiler, region, n=n, seed=seed, exclude=exclude))]

    def classifier_count(self, query: ClassifierQuery) -> int:
        return self.region_size(RegionQuery(classifiers=(query,), membership=(True,)))

    def fetch(self, ids: Sequence[str]) -> list[DocumentRecord]:
        if not ids:
            return []
        columns = [c for c in self.columns if c not in (ID_COLUMN, self.id_field)]
        compiler = self._compiler()
        rows = self._run(compiler, fetch_sql(compiler, ids, columns=columns))
        return records_from_rows(rows, columns=columns, title_field=self.title_field,
                                 text_fields=self.text_fields, ids=list(ids))

    def close(self) -> None:
        self.spark.catalog.dropTempView(self.view)
