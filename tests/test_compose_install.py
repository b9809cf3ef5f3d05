"""Reproducible installs (issue 25 item 7): the lockfiles hold every package with its hashes, agree with the
requirements they are compiled from and with each other, and are what every install path uses.

Before: requirements*.txt pinned the direct dependencies only, without hashes; pyproject.toml held tool
settings only. The hashed install itself (`pip install --require-hashes -r requirements-dev.lock` into a new
virtualenv) is what .ci/run's first step does on a clean clone.
"""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _name(raw: str) -> str:
    return re.sub(r"[-_.]+", "-", raw).lower()


def requirements(path: Path) -> dict[str, str]:
    """{name: version} of the `name==version` lines of a requirements file, following `-r` includes."""
    pins: dict[str, str] = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("-r "):
            pins.update(requirements(path.parent / line[3:].strip()))
        elif match := re.match(r"^([A-Za-z0-9_.\-]+)(?:\[[^\]]*\])?==([^\s;\\]+)", line):
            pins[_name(match.group(1))] = match.group(2)
    return pins


def lock_entries(path: Path) -> dict[str, tuple[str, frozenset[str]]]:
    """{name: (version, hashes)} of a pip-compile --generate-hashes lockfile."""
    entries: dict[str, tuple[str, frozenset[str]]] = {}
    text = re.sub(r"\\\n\s*", " ", path.read_text())
    for line in text.splitlines():
        if match := re.match(r"^([A-Za-z0-9_.\-]+)==(\S+)(.*)$", line):
            entries[_name(match.group(1))] = (match.group(2), frozenset(re.findall(r"--hash=sha256:([0-9a-f]{64})",
                                                                                   match.group(3))))
    return entries


@pytest.mark.parametrize("source,lock", [("requirements.txt", "requirements.lock"),
                                         ("requirements-dev.txt", "requirements-dev.lock")])
def test_each_lockfile_pins_its_requirements_with_hashes(source, lock):
    pins = requirements(ROOT / source)
    entries = lock_entries(ROOT / lock)
    assert pins and entries
    unhashed = sorted(name for name, (_, hashes) in entries.items() if not hashes)
    assert not unhashed, f"{lock}: without a hash: {unhashed}"
    differing = {name: (version, entries.get(name, ("missing",))[0]) for name, version in pins.items()
                 if entries.get(name, ("missing",))[0] != version}
    assert not differing, f"{lock} is out of date with {source} (regenerate it, docs/deploy.md): {differing}"
    assert "--generate-hashes" in (ROOT / lock).read_text().split("\n", 8)[4], "the command that made it, in its header"


def test_the_runtime_lock_is_the_dev_lock_minus_the_dev_tools():
    """bin/run installs requirements.lock into the .venv that bin/test fills from requirements-dev.lock: the same
    package at two versions would flip the virtualenv between them."""
    runtime, dev = lock_entries(ROOT / "requirements.lock"), lock_entries(ROOT / "requirements-dev.lock")
    differing = {name: (entry[0], dev.get(name, ("missing",))[0]) for name, entry in runtime.items()
                 if dev.get(name, ("missing",))[0] != entry[0]}
    assert not differing, differing
    assert all(runtime[name][1] <= dev[name][1] for name in runtime)


def test_every_install_uses_a_lockfile_with_hashes():
    installs = {
        "Dockerfile": "requirements.lock", "bin/run": "requirements.lock",
        "bin/test": "requirements-dev.lock", ".ci/run": "requirements-dev.lock",
    }
    for path, lock in installs.items():
        text = re.sub(r"\\\n\s*", " ", (ROOT / path).read_text())
        commands = [line for line in text.splitlines() if "pip install" in line and not line.lstrip().startswith("#")]
        assert commands, f"{path} installs nothing"
        for command in commands:
            assert "--require-hashes" in command and f"-r {lock}" in command, (path, command)


def test_pyproject_has_project_metadata_and_takes_its_dependencies_from_requirements():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    project = data["project"]
    assert project["name"] and project["version"] and project["requires-python"].startswith(">=3.11")
    assert "dependencies" in project["dynamic"] and "dependencies" not in project  # one list: requirements.txt
    assert data["tool"]["setuptools"]["dynamic"]["dependencies"]["file"] == ["requirements.txt"]
    base_image = re.search(r"^FROM python:(\d+\.\d+)", (ROOT / "Dockerfile").read_text(), re.MULTILINE)
    assert base_image and base_image.group(1) == "3.11" == data["tool"]["mypy"]["python_version"]
