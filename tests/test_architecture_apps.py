"""The import contract of the apps built on top (issue 14): nothing imports ``webhooks`` or ``api``.

``webhooks`` and ``api`` may import ``annotation`` and ``estimation``; ``annotation``,
``estimation`` and ``core`` never import them (they announce facts through their events
instead: annotation/events.py, estimation/events.py), and the two top apps do not import
each other.  Every import statement counts, inside functions too.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOP_APPS = ("webhooks", "api")


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
    return found


def _is(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def _violations(root: Path, package: str, forbidden: tuple[str, ...]) -> list[str]:
    problems = []
    for path in sorted((root / package).rglob("*.py")):
        if "migrations" in path.parts:
            continue
        for line, name in _imports(path):
            if any(_is(name, f) for f in forbidden):
                problems.append(f"{path.relative_to(root)}:{line} imports {name}")
    return problems


@pytest.mark.parametrize("package", ["annotation", "estimation", "core"])
def test_the_base_apps_import_neither_webhooks_nor_api(package):
    assert _violations(ROOT, package, TOP_APPS) == []


def test_webhooks_and_api_do_not_import_each_other():
    assert _violations(ROOT, "webhooks", ("api",)) == []
    if (ROOT / "api").is_dir():
        assert _violations(ROOT, "api", ("webhooks",)) == []


@pytest.mark.parametrize("source, expected", [
    ("from webhooks.services.deliveries import webhook_deliveries_create",
     ["webhooks.services.deliveries.webhook_deliveries_create"]),
    ("def f():\n    import api.views", ["api.views"]),
    ("from webhooks import tasks", ["webhooks.tasks"]),
    ("import apiary\nfrom webhooksmith import x", []),
])
def test_the_contract_catches_top_level_and_function_level_imports(tmp_path, source, expected):
    (tmp_path / "estimation").mkdir()
    (tmp_path / "estimation" / "module.py").write_text(source)
    found = _violations(tmp_path, "estimation", TOP_APPS)
    assert [v.split(" imports ")[1] for v in found] == expected
