"""The Parquet files of a file corpus and their snapshot (names, sizes, modification times).

Shared by the DuckDB and Spark backends, so both name the same state of the same files alike.
"""
from __future__ import annotations

from pathlib import Path

from annotation.services.corpora.backends.base import BackendError, Snapshot, snapshot_token


def parquet_files(location: str) -> tuple[Path, list[Path]]:
    """(root, files): every *.parquet under a folder (recursively, sorted), or the one file given."""
    shown = location if len(location) <= 200 else location[:200] + "…"
    try:
        path = Path(location).expanduser()
        if path.is_file():
            return path.parent, [path]
        if not path.is_dir():
            raise BackendError(f"No Parquet file or folder at {shown!r} (as seen by the server).")
        files = sorted(p for p in path.rglob("*.parquet") if p.is_file())
    except (OSError, ValueError) as exc:  # a name too long, a NUL, a folder the server may not read
        raise BackendError(f"The location {shown!r} cannot be read by the server ({getattr(exc, 'strerror', None) or exc}).") from exc
    if not files:
        raise BackendError(f"The folder {shown!r} holds no .parquet file.")
    return path, files


def parquet_snapshot(location: str) -> Snapshot:
    root, files = parquet_files(location)
    manifest = []
    for p in files:
        stat = p.stat()
        manifest.append((str(p.relative_to(root)), int(stat.st_size), int(stat.st_mtime_ns)))
    manifest.sort()
    return Snapshot(engine="parquet", token=snapshot_token("parquet", manifest), manifest=tuple(manifest))
