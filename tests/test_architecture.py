"""The import contracts: dependencies run one way (docs/architecture.md, contracts in ``.importlinter``).

Each contract of ``.importlinter`` is run here as CI runs it (``lint-imports``), and each is shown able
to fail: in a copy of the project, a module gets a forbidden import and the contract must name it.
Every import statement counts, including those inside functions: a function-level import is still a
dependency.  The contracts between the apps are tested in tests/test_architecture_apps.py.

* ``estimation.stats`` imports nothing from Django or from the apps: it is numpy/scipy only.
* Inside ``annotation``: urls > views, admin, management commands > forms, demo data > tasks and
  services > selectors > models; the services by noun, topics > sampling > crowd > classifiers > corpora.
* Inside ``estimation``: urls > views > tasks and services > selectors > models > stats.
* No import cycle between the modules of a services package.
* No front-end imports another's: the API, webhooks and estimation never import annotation's views or forms.
"""
from __future__ import annotations

import pytest

from tests.import_contracts import add_source, contract_ids, copy_of_the_project, lint

CONTRACTS = {"apps", "stats-pure", "annotation-layers", "annotation-services", "estimation-layers",
             "services-acyclic", "front-ends"}


def test_every_contract_is_configured():
    assert set(contract_ids()) >= CONTRACTS


@pytest.mark.parametrize("contract", contract_ids())
def test_the_contract_is_kept(contract):
    result = lint(contract=contract)
    assert result.kept, result.output


@pytest.mark.parametrize("contract, path, source, reported", [
    # The pure statistics: no Django, not even inside a function; no app code, no other part of estimation.
    ("stats-pure", "estimation/stats/pair_recall.py", "def _f():\n    import django.db",
     "estimation.stats.pair_recall -> django"),
    ("stats-pure", "estimation/stats/aggregation.py", "from estimation.services import reports",
     "estimation.stats.aggregation -> estimation.services.reports"),
    ("stats-pure", "estimation/stats/planning.py", "from core.errors import ApplicationError",
     "estimation.stats.planning -> core.errors"),
    # Inside annotation: selectors and models sit below the services; services below views and demo data.
    ("annotation-layers", "annotation/selectors.py", "def _f():\n    from annotation.services.topics import topic",
     "annotation.selectors -> annotation.services.topics.topic"),
    ("annotation-layers", "annotation/models.py", "def _f():\n    from annotation.views import topics",
     "annotation.models -> annotation.views.topics"),
    ("annotation-layers", "annotation/services/crowd/_violation.py", "from annotation import demo",
     "annotation.services.crowd._violation -> annotation.demo"),
    # The services by noun: a lower sub-package never imports a higher one.
    ("annotation-services", "annotation/services/corpora/_violation.py",
     "def _f():\n    from annotation.services.topics import topic",
     "annotation.services.corpora._violation -> annotation.services.topics.topic"),
    ("annotation-services", "annotation/services/crowd/_violation.py", "import annotation.services.sampling.draws",
     "annotation.services.crowd._violation -> annotation.services.sampling.draws"),
    # Inside estimation: selectors never import services; services never import views.
    ("estimation-layers", "estimation/selectors.py", "def _f():\n    from estimation.services import reports",
     "estimation.selectors -> estimation.services.reports"),
    ("estimation-layers", "estimation/services/_violation.py", "from estimation.views import reports",
     "estimation.services._violation -> estimation.views.reports"),
    # A front-end calls services, never another front-end's views or forms (issue 22: the API imported a page view).
    ("front-ends", "api/views/_violation.py", "def _f():\n    from annotation.views import topics",
     "api.views._violation -> annotation.views.topics"),
    ("front-ends", "estimation/views/_violation.py", "from annotation.forms import TopicForm",
     "estimation.views._violation -> annotation.forms"),
    # No cycle between sibling service modules, even through a lazy import.
    ("services-acyclic", "webhooks/services/_violation_a.py", "from webhooks.services import _violation_b",
     "No cycles are allowed in webhooks.services."),
])
def test_the_contract_reports_a_forbidden_import(tmp_path, contract, path, source, reported):
    project = copy_of_the_project(tmp_path)
    if contract == "services-acyclic":
        add_source(project, "webhooks/services/_violation_b.py", "def _f():\n    from webhooks.services import _violation_a")
    add_source(project, path, source)
    result = lint(contract=contract, root=project)
    assert not result.kept
    assert reported in result.output, result.output


def _test_modules_importing_test_modules(root) -> list[str]:
    """`path: imported` for every import of a test module (tests/**/test_*.py) by a test module."""
    import ast

    found = []
    for path in sorted(root.glob("tests/**/test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([node.module or ""] if isinstance(node, ast.ImportFrom)
                     else [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            found += [f"{path.relative_to(root)}: {name}" for name in names
                      if name.startswith("tests.") and name.rsplit(".", 1)[-1].startswith("test_")]
    return found


def test_no_test_module_imports_another():
    """Shared set-up lives in conftest.py and tests/factories.py (docs/architecture.md, Tests)."""
    from tests.import_contracts import ROOT

    assert _test_modules_importing_test_modules(ROOT) == []


def test_a_test_module_importing_another_is_found(tmp_path):
    (tmp_path / "tests" / "web").mkdir(parents=True)
    (tmp_path / "tests" / "web" / "test_a.py").write_text("from tests.api.test_cli_e2e import _env\n")
    assert _test_modules_importing_test_modules(tmp_path) == ["tests/web/test_a.py: tests.api.test_cli_e2e"]
