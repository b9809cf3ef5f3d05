"""The import contract: dependencies run one way (docs/architecture.md).

* ``annotation`` (and ``core``) import nothing from ``estimation`` except the pure
  ``estimation.stats``; estimation reacts to annotation through the domain events of
  ``annotation/events.py``.
* ``estimation.stats`` imports nothing from Django or from the apps: it is numpy/scipy only.
* ``core`` imports neither app.

Every import statement counts, including those inside functions: a function-level
import is still a dependency.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _modules(package: str) -> list[Path]:
    return sorted(p for p in (ROOT / package).rglob("*.py") if "migrations" not in p.parts)


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # Each imported name, qualified: "from estimation import stats" is estimation.stats.
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def _violations(package: str, allowed, forbidden) -> list[str]:
    problems = []
    for path in _modules(package):
        for line, name in _imports(path):
            if forbidden(name) and not allowed(name):
                problems.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    return sorted(set(problems))


def _is(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def _stats_only(name: str) -> bool:
    return _is(name, "estimation.stats")


def test_annotation_imports_only_the_pure_statistics_of_estimation():
    assert _violations("annotation", _stats_only, lambda n: _is(n, "estimation")) == []


def test_core_imports_neither_app():
    assert _violations("core", lambda n: False, lambda n: _is(n, "estimation") or _is(n, "annotation")) == []


def test_statistics_import_no_django_and_no_app_code():
    def forbidden(name: str) -> bool:
        return any(_is(name, p) for p in ("django", "annotation", "config", "core", "celery", "estimation"))

    assert _violations("estimation/stats", _stats_only, forbidden) == []


@pytest.mark.parametrize(
    "source, expected",
    [
        ("from estimation.services.recompute import topic_recompute_schedule",
         ["estimation.services.recompute.topic_recompute_schedule"]),
        ("def f():\n    import estimation.tasks", ["estimation.tasks"]),
        ("from estimation import services", ["estimation.services"]),
        ("from estimation import stats", []),
        ("from estimation.stats.aggregation import dawid_skene", []),
    ],
)
def test_the_contract_catches_top_level_and_function_level_imports(tmp_path, monkeypatch, source, expected):
    package = tmp_path / "annotation"
    package.mkdir()
    (package / "module.py").write_text(source)
    monkeypatch.setattr(__import__(__name__, fromlist=["ROOT"]), "ROOT", tmp_path)
    found = _violations("annotation", _stats_only, lambda n: _is(n, "estimation"))
    assert [v.split(" imports ")[1] for v in found] == expected
