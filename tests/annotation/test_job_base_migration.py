"""Migration 0017 (the job base): router builds that failed on bad upload lines before it get those lines as
data in `error_detail`, which is what the API now reads (api/serializers.py RouterBuildSerializer.lines)."""
from __future__ import annotations

import importlib

import pytest
from django.apps import apps

from annotation.models import RouterBuild
from annotation.services.classifiers.router_builds import router_build_bad_lines
from tests.factories import CorpusFactory, make_topic_set

pytestmark = pytest.mark.django_db
migration = importlib.import_module("annotation.migrations.0017_job_base")


def test_bad_lines_written_in_the_message_become_data():
    topic = make_topic_set(CorpusFactory.create(), classes=("Wheat", "Oil"))
    old = RouterBuild.objects.create(topic=topic, name="old", kind="upload", status="failed",
                                     error="bad.csv: 2 lines are wrong\nline 3: unknown class 'x'\nline 7: missing id")
    other = RouterBuild.objects.create(topic=topic, name="other", kind="keywords", status="failed", error="stuck")
    migration.router_build_lines_to_detail(apps, None)
    old.refresh_from_db()
    other.refresh_from_db()
    assert router_build_bad_lines(build=old) == [{"line": 3, "problem": "unknown class 'x'"},
                                                 {"line": 7, "problem": "missing id"}]
    assert other.error_detail is None and router_build_bad_lines(build=other) == []
