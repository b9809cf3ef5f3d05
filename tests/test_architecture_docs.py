"""docs/architecture.md cannot drift from the code: every file and module it names exists.

Checked: paths under the project's directories (``annotation/services/crowd/hits.py``, ``docs/api.md``,
``tests/annotation``, ``api/``), a bare file name after a path on the same line (``labels.py`` after
``annotation/services/crowd/assignments.py`` is ``annotation/services/crowd/labels.py``; ``manage.py``, at the
root), migrations named
by app and number (``estimation/0002``), and dotted names (``annotation.services.crowd.hits``,
``estimation.stats.pair_recall.pair_design_problems``: the module must exist, and a name after it must be
defined there).
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "architecture.md"
PACKAGES = ("annotation", "estimation", "api", "webhooks", "core", "config")
DIRECTORIES = (*PACKAGES, "tests", "docs", "static", "templates", "bin", "clients", "bench", ".ci")

_ROOTS = "|".join(re.escape(d) for d in DIRECTORIES)
_PATH = re.compile(rf"(?<![\w/.:-])((?:{_ROOTS})/[\w./*-]*)")
_BARE_FILE = re.compile(r"(?<![\w/.-])([A-Za-z_]\w*\.(?:py|md|html|js))\b")
_DOTTED = re.compile(rf"(?<![\w/.-])((?:{'|'.join(PACKAGES)})(?:\.[A-Za-z_]\w*)+)")
_MIGRATION = re.compile(r"^(?P<app>\w+)/(?P<number>\d{4})(?P<name>_\w+)?$")


def _lines() -> list[tuple[int, str]]:
    return list(enumerate(DOC.read_text(encoding="utf-8").splitlines(), start=1))


def _clean(path: str) -> str:
    return path.rstrip(".,;:)")


def _path_exists(path: str) -> bool:
    migration = _MIGRATION.match(path)
    if migration:
        pattern = f"{migration['number']}{migration['name'] or ''}*.py"
        return any((ROOT / migration["app"] / "migrations").glob(pattern))
    if "*" in path:
        return any(ROOT.glob(path))
    return (ROOT / path).exists()


def _named_paths() -> list[tuple[int, str]]:
    return [(number, _clean(m)) for number, line in _lines() for m in _PATH.findall(line)]


def _bare_files() -> list[tuple[int, str, str]]:
    """(line, file name, the directory it is read in): that of the last path before it on its line, else the root."""
    found = []
    for number, line in _lines():
        for match in _BARE_FILE.finditer(line):
            before = [_clean(p) for p in _PATH.findall(line[:match.start()])]
            directory = next((str(Path(p).parent if Path(p).suffix else Path(p)) for p in reversed(before)), "")
            found.append((number, match.group(1), directory))
    return found


def _module_file(dotted: str) -> Path | None:
    base = ROOT.joinpath(*dotted.split("."))
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    return None


def _dotted_problem(dotted: str) -> str | None:
    """None when the longest module prefix exists and the rest (if any) is a name it defines."""
    parts = dotted.split(".")
    for end in range(len(parts), 0, -1):
        module = _module_file(".".join(parts[:end]))
        if module is None:
            continue
        rest = parts[end:]
        if not rest:
            return None
        if len(rest) > 1:  # a module name that does not exist, or an attribute of an attribute
            return f"no module {'.'.join(parts[:end + 1])}"
        name = rest[0]
        defined = re.compile(rf"^(?:\s*(?:async\s+)?def|\s*class)\s+{name}\b|^{name}\s*[:=]|^from\s.+\bimport\b.*\b{name}\b",
                             re.MULTILINE)
        return None if defined.search(module.read_text(encoding="utf-8")) else f"{module.relative_to(ROOT)} defines no {name}"
    return "no such module"


def test_the_doc_names_files_at_all():
    """The patterns find what the doc names (an empty list would make the checks below pass vacuously)."""
    paths = [p for _, p in _named_paths()]
    assert "annotation/services/crowd/hits.py" in paths
    assert any(p.startswith("tests/") for p in paths)
    assert any(name == "labels.py" for _, name, _ in _bare_files())


def test_every_path_the_doc_names_exists():
    missing = [f"docs/architecture.md:{number}: {path}" for number, path in _named_paths() if not _path_exists(path)]
    assert missing == []


def test_every_file_named_by_its_name_exists_next_to_the_path_before_it():
    missing = []
    for number, name, directory in _bare_files():
        if not (ROOT / directory / name).exists() and not (ROOT / name).exists():  # next to it, or at the root
            missing.append(f"docs/architecture.md:{number}: {name} (read as {directory or '?'}/{name})")
    assert missing == []


def test_every_dotted_module_the_doc_names_exists():
    problems = []
    for number, line in _lines():
        for dotted in _DOTTED.findall(line):
            problem = _dotted_problem(dotted)
            if problem:
                problems.append(f"docs/architecture.md:{number}: {dotted}: {problem}")
    assert problems == []


@pytest.mark.parametrize("text, expected", [
    ("see `annotation/services/crowd/hits.py` (`hits_create_for_draws`).", ["annotation/services/crowd/hits.py"]),
    ("(docs/api.md), tests/annotation and `api/`; https://x.org/api/v1 is no path", ["docs/api.md", "tests/annotation", "api/"]),
    ("migration `estimation/0002` refuses", ["estimation/0002"]),
])
def test_the_path_pattern(text, expected):
    assert [_clean(p) for p in _PATH.findall(text)] == expected


@pytest.mark.parametrize("dotted, ok", [
    ("annotation.services.crowd.hits", True),
    ("estimation.stats.pair_recall.pair_design_problems", True),
    ("core.errors.ApplicationError", True),
    ("annotation.services.crowd.no_such_module", False),
    ("estimation.stats.pair_recall.no_such_function", False),
])
def test_a_dotted_name_is_checked_against_the_code(dotted, ok):
    assert (_dotted_problem(dotted) is None) is ok
