"""DuckDB over a folder of Parquet files: the embedded default for corpora too large to import.

The files are read where they are (nothing is imported but the sample); DuckDB scans only the
columns a query names, in parallel, with RE2 regexes for keyword classifiers. One in-memory
connection per backend object; the view over the files lists exactly the files of the snapshot
taken when the backend was opened, so a file added later is not silently read — the next
snapshot differs and the draw is refused (annotation.services.corpora.backends.external).
"""
from __future__ import annotations

import os
import uuid
from collections.abc import Sequence

import duckdb
import pyarrow as pa

from annotation.services.corpora.backends.base import (
    BackendError,
    ClassifierQuery,
    DocumentRecord,
    FieldValueQuery,
    KeywordQuery,
    RegionQuery,
    Snapshot,
)
from annotation.services.corpora.backends.parquet_files import parquet_files, parquet_snapshot
from annotation.services.corpora.backends.sql import (
    DOCS_VIEW,
    DUCKDB,
    ID_COLUMN,
    SqlCompiler,
    cells_from_rows,
    columns_check,
    counts_sql,
    draw_sql,
    fetch_sql,
    materialise_sql,
    records_from_rows,
    region_size_sql,
)


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class DuckDBParquetBackend:
    engine = "duckdb"
    dialect = DUCKDB

    def __init__(self, *, location: str, id_field: str = "id", title_field: str = "title",
                 text_fields: Sequence[str] = ("text",), threads: int | None = None,
                 memory_limit: str | None = None) -> None:
        self.location = location
        self.id_field = id_field
        self.title_field = title_field
        self.text_fields = tuple(text_fields)
        self._snapshot = parquet_snapshot(location)
        root, files = parquet_files(location)
        self.con = duckdb.connect(database=":memory:")
        threads = threads or int(os.environ.get("CORPUS_ENGINE_THREADS", "0") or 0)
        if threads:
            self.con.execute(f"SET threads={int(threads)}")
        if memory_limit or os.environ.get("CORPUS_ENGINE_MEMORY"):
            self.con.execute(f"SET memory_limit={_literal(memory_limit or os.environ['CORPUS_ENGINE_MEMORY'])}")
        listed = "[" + ", ".join(_literal(str(p)) for p in files) + "]"
        try:
            schema = self.con.execute(f"DESCRIBE SELECT * FROM read_parquet({listed})").fetchall()
        except duckdb.Error as exc:
            raise BackendError(f"DuckDB cannot read the Parquet files at {location!r}: {exc}") from exc
        self.columns = [str(row[0]) for row in schema]
        columns_check(self.columns)
        if id_field not in self.columns:
            raise BackendError(f"The Parquet files have no id column {id_field!r} (columns: {', '.join(self.columns)}).")
        for name in (*self.text_fields, *([title_field] if title_field else [])):
            if name not in self.columns:
                raise BackendError(f"The Parquet files have no column {name!r} (columns: {', '.join(self.columns)}).")
        quoted_id = DUCKDB.quote(id_field)
        self.materialised: dict[ClassifierQuery, tuple[str, str]] = {}  # query -> (hits table, its column)
        self.con.execute(
            f"CREATE VIEW {DOCS_VIEW} AS SELECT CAST({quoted_id} AS VARCHAR) AS {ID_COLUMN}, * FROM read_parquet({listed})"
        )

    # -- plumbing
    def _compiler(self) -> SqlCompiler:
        materialised = {q: f"({ID_COLUMN} IN (SELECT {ID_COLUMN} FROM {table} WHERE {column}))"
                        for q, (table, column) in self.materialised.items()}
        return SqlCompiler(dialect=DUCKDB, columns=self.columns, materialised=materialised)

    def _hits_compiler(self, classifiers: Sequence[ClassifierQuery]) -> SqlCompiler | None:
        """A compiler over the one hits table holding all these classifiers (None if they are not in one)."""
        tables = {self.materialised[q][0] for q in classifiers if q in self.materialised}
        if not classifiers or len(tables) != 1 or any(q not in self.materialised for q in classifiers):
            return None
        (table,) = tables
        return SqlCompiler(dialect=DUCKDB, columns=self.columns, docs=table,
                           materialised={q: self.materialised[q][1] for q in classifiers})

    def _region_compiler(self, region: RegionQuery) -> SqlCompiler:
        # A region inside some classifier's retrieved set is read from the hits table alone.
        if any(region.membership):
            hits = self._hits_compiler(region.classifiers)
            if hits is not None:
                return hits
        return self._compiler()

    def materialise(self, classifiers: Sequence[ClassifierQuery]) -> None:
        """Evaluate the text classifiers not yet evaluated in one scan, keeping their retrieved ids in engine tables.

        The scan of the documents' text is the cost of every count and draw (bench/bench_engine_backends.py);
        done once per backend (one snapshot: the view reads only its files), later counts and draws join ids.
        The retrieved ids stay in DuckDB's memory, never in the app's database.
        """
        todo = [q for q in dict.fromkeys(classifiers)
                if isinstance(q, (KeywordQuery, FieldValueQuery)) and q not in self.materialised]
        if not todo:
            return
        compiler = self._compiler()
        table = f"__recall_hits_{len(self.materialised)}_{uuid.uuid4().hex[:8]}"
        self._run(compiler, materialise_sql(compiler, todo, table, keep=self._content_columns()))
        for i, query in enumerate(todo):
            self.materialised[query] = (table, f"__recall_c{i}")

    def _run(self, compiler: SqlCompiler, sql: str) -> list[tuple]:
        compiled = compiler.compiled
        registered = []
        for name, ids in compiled.id_tables.items():
            self.con.register(name, pa.table({"id": pa.array(list(ids), type=pa.string())}))
            registered.append(name)
        for name, scores in compiled.score_tables.items():
            self.con.register(name, pa.table({"id": pa.array([s[0] for s in scores], type=pa.string()),
                                              "score": pa.array([float(s[1]) for s in scores], type=pa.float64())}))
            registered.append(name)
        try:
            return self.con.execute(sql, compiled.params).fetchall()
        except duckdb.Error as exc:
            raise BackendError(f"DuckDB refused the query: {exc}") from exc
        finally:
            for name in registered:
                self.con.unregister(name)

    # -- the interface
    def snapshot(self) -> Snapshot:
        return parquet_snapshot(self.location)

    @property
    def opened_snapshot(self) -> Snapshot:
        return self._snapshot

    def size(self) -> int:
        compiler = self._compiler()
        return int(self._run(compiler, counts_sql(compiler, []))[0][0])

    def region_counts(self, classifiers: Sequence[ClassifierQuery]) -> dict[tuple[bool, ...], int]:
        self.materialise(classifiers)
        hits = self._hits_compiler(classifiers)
        if hits is not None:
            # Every cell but "none of them" is inside the hits table; that one is the rest of the corpus.
            cells = cells_from_rows(self._run(hits, counts_sql(hits, classifiers)), len(classifiers))
            cells = {k: v for k, v in cells.items() if any(k)}
            cells[(False,) * len(classifiers)] = self.size() - sum(cells.values())
            return {k: v for k, v in cells.items() if v}
        compiler = self._compiler()
        return cells_from_rows(self._run(compiler, counts_sql(compiler, classifiers)), len(classifiers))

    def region_size(self, region: RegionQuery) -> int:
        self.materialise(region.classifiers)
        compiler = self._region_compiler(region)
        return int(self._run(compiler, region_size_sql(compiler, region))[0][0])

    def draw(self, region: RegionQuery, *, n: int, seed: int, exclude: Sequence[str] = ()) -> list[str]:
        if n <= 0:
            return []
        self.materialise(region.classifiers)
        compiler = self._region_compiler(region)
        return [str(r[0]) for r in self._run(compiler, draw_sql(compiler, region, n=n, seed=seed, exclude=exclude))]

    def classifier_count(self, query: ClassifierQuery) -> int:
        return self.region_size(RegionQuery(classifiers=(query,), membership=(True,)))

    def _content_columns(self) -> list[str]:
        return [c for c in self.columns if c not in (ID_COLUMN, self.id_field)]

    def fetch(self, ids: Sequence[str]) -> list[DocumentRecord]:
        if not ids:
            return []
        columns = self._content_columns()
        rows: list[tuple] = []
        wanted = list(dict.fromkeys(ids))
        # Documents inside a retrieved set are in a hits table already (materialise): no scan of the files.
        for table in dict.fromkeys(t for t, _ in self.materialised.values()):
            if not wanted:
                break
            compiler = SqlCompiler(dialect=DUCKDB, columns=self.columns, docs=table)
            found = self._run(compiler, fetch_sql(compiler, wanted, columns=columns))
            rows += found
            seen = {str(r[0]) for r in found}
            wanted = [i for i in wanted if i not in seen]
        if wanted:
            compiler = self._compiler()
            rows += self._run(compiler, fetch_sql(compiler, wanted, columns=columns))
        return records_from_rows(rows, columns=columns, title_field=self.title_field,
                                 text_fields=self.text_fields, ids=list(ids))

    def close(self) -> None:
        self.con.close()
