"""Which backend answers for a corpus: its external source's engine, else the app's database."""
from __future__ import annotations

from annotation.models import Corpus, ExternalCorpusSource
from annotation.services.corpora.backends.base import BackendError, CorpusBackend

ENGINES = tuple(ExternalCorpusSource.Engine.values)


def source_backend_open(*, source: ExternalCorpusSource) -> CorpusBackend:
    """A backend over the source's files (opening checks the files and the configured columns)."""
    text_fields = tuple(source.text_fields or ["text"])
    if source.engine == ExternalCorpusSource.Engine.DUCKDB:
        from annotation.services.corpora.backends.duckdb_parquet import DuckDBParquetBackend  # noqa: PLC0415

        return DuckDBParquetBackend(location=source.location, id_field=source.id_field,
                                    title_field=source.title_field, text_fields=text_fields)
    if source.engine == ExternalCorpusSource.Engine.SPARK:
        from annotation.services.corpora.backends.spark import SparkParquetBackend  # noqa: PLC0415

        return SparkParquetBackend(location=source.location, id_field=source.id_field, title_field=source.title_field,
                                   text_fields=text_fields, master_env=source.connection_env)
    raise BackendError(f"Unknown engine {source.engine!r} (use one of {', '.join(ENGINES)}).")


def corpus_backend_open(*, corpus: Corpus) -> CorpusBackend:
    """The corpus's backend: its engine for a corpus that stays in the team's engine, else the app's database."""
    from annotation.services.corpora.backends.postgres import DatabaseBackend  # noqa: PLC0415

    source = ExternalCorpusSource.objects.filter(corpus=corpus).first()
    if source is None:
        return DatabaseBackend(corpus=corpus)
    return source_backend_open(source=source)
