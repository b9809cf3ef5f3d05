"""The import contract between the apps (contract ``apps`` of ``.importlinter``, run by tests/test_architecture.py).

From the top: ``config`` (settings, root URLs); ``api`` and ``webhooks`` (issue 14), which may import
``estimation`` and ``annotation`` but not each other, and which nothing imports; ``estimation``, which may
import ``annotation``; ``annotation``, which imports nothing from ``estimation`` except the pure
``estimation.stats``; ``core``, which imports no app.  The apps below announce facts through their events
instead (annotation/events.py, estimation/events.py over core/events.py).  Every import statement counts,
inside functions too.  Here: the contract reports each kind of forbidden import, and lets the allowed ones be.
"""
from __future__ import annotations

import pytest

from tests.import_contracts import add_source, copy_of_the_project, lint


@pytest.mark.parametrize("path, source, reported", [
    # The base apps import neither webhooks nor api.
    ("estimation/_violation.py", "from webhooks.services.deliveries import webhook_deliveries_create",
     "estimation._violation -> webhooks.services.deliveries"),
    ("annotation/_violation.py", "def _f():\n    import api.views", "annotation._violation -> api.views"),
    ("core/_violation.py", "from webhooks import tasks", "core._violation -> webhooks.tasks"),
    # webhooks and api do not import each other.
    ("webhooks/_violation.py", "def _f():\n    from api import services", "webhooks._violation -> api.services"),
    ("api/_violation.py", "import webhooks.models", "api._violation -> webhooks.models"),
    # annotation imports nothing of estimation but its pure statistics.
    ("annotation/_violation.py", "def _f():\n    import estimation.tasks", "annotation._violation -> estimation.tasks"),
    ("annotation/_violation.py", "from estimation import services", "annotation._violation -> estimation.services"),
    # core imports no app.
    ("core/_violation.py", "from annotation import models", "core._violation -> annotation.models"),
    ("core/_violation.py", "def _f():\n    from estimation.selectors import certification_summary",
     "core._violation -> estimation.selectors"),
    # Nothing imports config (the settings are read through django.conf).
    ("estimation/_violation.py", "from config import urls", "estimation._violation -> config.urls"),
])
def test_the_apps_contract_reports_a_forbidden_import(tmp_path, path, source, reported):
    project = copy_of_the_project(tmp_path)
    add_source(project, path, source)
    result = lint(contract="apps", root=project)
    assert not result.kept
    assert reported in result.output, result.output


def test_the_apps_contract_lets_annotation_import_the_pure_statistics(tmp_path):
    project = copy_of_the_project(tmp_path)
    add_source(project, "annotation/_allowed.py",
               "from estimation import stats\nfrom estimation.stats.aggregation import dawid_skene\n"
               "def _f():\n    import estimation.stats.planning")
    result = lint(contract="apps", root=project)
    assert result.kept, result.output
