"""python manage.py topic_report: JSON and CSV, from the latest snapshot or computed fresh."""
from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command

from estimation.services.recompute import topic_snapshot_create
from tests.factories import build_topic

pytestmark = pytest.mark.django_db


def _run(*args) -> str:
    out = io.StringIO()
    call_command("topic_report", *args, stdout=out)
    return out.getvalue()


def test_latest_snapshot_as_json():
    built = build_topic()
    snapshot = topic_snapshot_create(topic_id=built.topic.pk, draws=500)
    report = json.loads(_run("--topic", built.topic.name, "--format", "json"))
    assert report["snapshot"]["version"] == snapshot.version
    assert report["recall_eq1"] == snapshot.report["recall_eq1"]


def test_fresh_report_as_csv_without_storing_anything():
    built = build_topic()
    text = _run("--topic", built.topic.name, "--format", "csv", "--snapshot", "fresh", "--draws", "500")
    rows = list(csv.DictReader(io.StringIO(text)))
    # headline rows: report schema 3; estimated-relevant, cost, pooled-recall rows: issue 26 item 5
    assert {"classifier", "headline", "region", "estimated_relevant", "cost"} <= {r["row_type"] for r in rows}
    assert [r["name"] for r in rows if r["row_type"] == "classifier"] == ["'=title filter", "body filter", "model"]
    assert [r["name"] for r in rows if r["row_type"] == "headline"] == ["'=title filter", "body filter", "model"]
    assert not built.topic.snapshots.exists()


def test_fresh_json_is_strict_json():
    built = build_topic(with_labels=False)
    text = _run("--topic", built.topic.name, "--snapshot", "fresh", "--draws", "500")
    report = json.loads(text, parse_constant=lambda name: pytest.fail(f"non-JSON constant {name}"))
    assert "no_judgments" in {d["code"] for d in report["diagnostics"]}


def test_unknown_topic_and_missing_snapshot_are_clear_errors():
    with pytest.raises(CommandError, match="No topic named 'nope'"):
        _run("--topic", "nope")
    built = build_topic(with_labels=False)
    with pytest.raises(CommandError, match="no stored snapshot yet"):
        _run("--topic", built.topic.name)
    with pytest.raises(CommandError, match="at least 100"):
        _run("--topic", built.topic.name, "--snapshot", "fresh", "--draws", "5")


def test_fresh_report_of_a_topic_set_is_the_multiclass_report():
    from tests.factories import topic_set_judged_build

    judged = topic_set_judged_build(confusion=[[0, 0, 0], [0, 8, 2], [0, 1, 9]], classes=("Sport", "Politics"))
    report = json.loads(_run("--topic", judged.topic.name, "--snapshot", "fresh", "--draws", "500"))
    assert report["kind"] == "multiclass"
    assert report["routers"][0]["confusion"] == [[0, 0, 0], [0, 8, 2], [0, 1, 9]]
    with pytest.raises(CommandError, match="at least 100"):
        _run("--topic", judged.topic.name, "--snapshot", "fresh", "--draws", "50")
