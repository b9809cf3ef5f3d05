"""The environment variables the code reads, found by parsing the source, and the names .env.example lists;
shared by tests/test_env_example.py (which describes the scan) and tests/test_compose.py."""
from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("config", "core", "annotation", "estimation", "webhooks", "api")
NOT_SCANNED = {"config/settings/test.py", "config/celery.py"}  # test settings; celery.py only setdefault()s
# Read by the code but never set by an operator: the settings module is fixed per service by compose and bin/run.
NOT_DEPLOYMENT_SETTINGS = {"DJANGO_SETTINGS_MODULE"}


def source_files() -> Iterator[Path]:
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if "/migrations/" in relative or "/management/" in relative or relative in NOT_SCANNED:
                continue
            yield path


def _is_os_environ(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "environ"
            and isinstance(node.value, ast.Name) and node.value.id == "os")


def _reads_environ_with_a_variable(function: ast.FunctionDef) -> bool:
    """A helper like env_bool(name, ...): reads os.environ with something other than a string literal."""
    for node in ast.walk(function):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            is_get = node.func.attr == "get" and _is_os_environ(node.func.value)
            is_getenv = node.func.attr == "getenv" and isinstance(node.func.value, ast.Name) and node.func.value.id == "os"
            if (is_get or is_getenv) and not isinstance(node.args[0], ast.Constant):
                return True
        if isinstance(node, ast.Subscript) and _is_os_environ(node.value) and not isinstance(node.slice, ast.Constant):
            return True
    return False


def environment_reads(paths: list[Path], root: Path = ROOT) -> dict[str, list[str]]:
    """{variable: ["path:line", ...]} for every literal name read from the environment in `paths`."""
    trees = {path: ast.parse(path.read_text(), filename=str(path)) for path in paths}
    helpers = {node.name for tree in trees.values() for node in ast.walk(tree)
               if isinstance(node, ast.FunctionDef) and _reads_environ_with_a_variable(node)}
    # Aliases: `env = os.environ.get` (config/settings/model_judge.py), then env("NAME").
    helpers |= {target.id for tree in trees.values() for node in ast.walk(tree) if isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Attribute) and (
                    (node.value.attr == "get" and _is_os_environ(node.value.value))
                    or (node.value.attr == "getenv" and isinstance(node.value.value, ast.Name)
                        and node.value.value.id == "os"))
                for target in node.targets if isinstance(target, ast.Name)}
    found: dict[str, list[str]] = {}

    def record(name_node: ast.AST, path: Path, line: int) -> None:
        if isinstance(name_node, ast.Constant) and isinstance(name_node.value, str):
            found.setdefault(name_node.value, []).append(f"{path.relative_to(root).as_posix()}:{line}")

    for path, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and node.args:
                func = node.func
                if isinstance(func, ast.Attribute) and func.attr == "get" and _is_os_environ(func.value):
                    record(node.args[0], path, node.lineno)
                elif isinstance(func, ast.Attribute) and func.attr == "getenv" and isinstance(func.value, ast.Name) \
                        and func.value.id == "os":
                    record(node.args[0], path, node.lineno)
                elif (isinstance(func, ast.Name) and func.id in helpers) or (
                        isinstance(func, ast.Attribute) and func.attr in helpers):
                    record(node.args[0], path, node.lineno)
            elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.For)):
                # `for name in ("A", "B"): os.environ.get(name)` (annotation/crowds/mturk_client.py)
                loops = node.generators if not isinstance(node, ast.For) else [node]
                for loop in loops:
                    if isinstance(loop.target, ast.Name) and isinstance(loop.iter, (ast.Tuple, ast.List)) and any(
                            isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute)
                            and inner.func.attr == "get" and _is_os_environ(inner.func.value) and inner.args
                            and isinstance(inner.args[0], ast.Name) and inner.args[0].id == loop.target.id
                            for inner in ast.walk(node)):
                        for element in loop.iter.elts:
                            record(element, path, node.lineno)
            elif isinstance(node, ast.Subscript) and _is_os_environ(node.value):
                record(node.slice, path, node.lineno)
            elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.In) \
                    and _is_os_environ(node.comparators[0]):
                record(node.left, path, node.lineno)
    return found


def env_example_names(text: str) -> dict[str, str]:
    """{name: value} of every `NAME=value` line, set or commented out (`# NAME=value`)."""
    return {m.group(1): m.group(2) for m in re.finditer(r"^#?\s*([A-Z][A-Z0-9_]*)=(.*)$", text, re.MULTILINE)}


@functools.cache
def deployment_reads() -> dict[str, list[str]]:
    reads = environment_reads(list(source_files()))
    return {name: where for name, where in reads.items() if name not in NOT_DEPLOYMENT_SETTINGS}
