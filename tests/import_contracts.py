"""Running the import contracts of ``.importlinter`` (import-linter) from the tests.

``lint`` runs the ``lint-imports`` command, as CI does, on one contract in a directory;
``copy_of_the_project`` copies the project's packages (Python files only) and its contracts
into a temporary directory, where a test may add a forbidden import and check that the
contract reports it.
"""
from __future__ import annotations

import configparser
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ".importlinter"


def root_packages(root: Path = ROOT) -> list[str]:
    parser = configparser.ConfigParser()
    parser.read(root / CONFIG, encoding="utf-8")
    return parser["importlinter"]["root_packages"].split()


def contract_ids(root: Path = ROOT) -> list[str]:
    parser = configparser.ConfigParser()
    parser.read(root / CONFIG, encoding="utf-8")
    prefix = "importlinter:contract:"
    return [section.removeprefix(prefix) for section in parser.sections() if section.startswith(prefix)]


def _lint_imports_command() -> list[str]:
    script = Path(sys.executable).parent / "lint-imports"
    if script.exists():
        return [str(script)]
    found = shutil.which("lint-imports")
    assert found, "lint-imports is not installed (requirements-dev.txt: import-linter)"
    return [found]


@dataclass(frozen=True)
class LintResult:
    kept: bool
    output: str


def lint(*, contract: str, root: Path = ROOT) -> LintResult:
    """Check one contract of ``root/.importlinter`` over the packages in ``root`` (the command's own output)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the packages of `root`, nothing else
    env["COLUMNS"] = "200"  # fewer wrapped lines in the report
    completed = subprocess.run(
        [*_lint_imports_command(), "--no-logo", "--no-cache", "--contract", contract, CONFIG],
        cwd=root, env=env, capture_output=True, text=True, timeout=120, check=False,
    )
    output = completed.stdout + completed.stderr
    assert "KEPT" in output or "BROKEN" in output, f"lint-imports did not run the contract:\n{output}"
    return LintResult(kept=completed.returncode == 0, output=output)


def copy_of_the_project(destination: Path) -> Path:
    """The project's packages (``*.py`` only) and ``.importlinter``, copied under ``destination``."""

    def not_python(directory: str, names: list[str]) -> list[str]:
        return [n for n in names if n == "__pycache__" or (not n.endswith(".py") and not (Path(directory) / n).is_dir())]

    for package in root_packages():
        shutil.copytree(ROOT / package, destination / package, ignore=not_python)
    shutil.copy(ROOT / CONFIG, destination / CONFIG)
    return destination


def add_source(root: Path, relative_path: str, source: str) -> None:
    """Append ``source`` to a module of the copy (created if it does not exist)."""
    path = root / relative_path
    existing = path.read_text(encoding="utf-8") if path.exists() else ""
    path.write_text(existing + "\n\n" + source + "\n", encoding="utf-8")
