"""docs/grafana-dashboard.json and docs/operations.md name only metrics that exist, and operations.md names all."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from prometheus_client import REGISTRY

from core.observability import metrics

ROOT = Path(__file__).resolve().parents[1]
GAUGES = {"recall_celery_queue_depth", "recall_recompute_lag_seconds", "recall_webhook_deliveries_pending",
          "recall_webhook_oldest_pending_seconds", "recall_metrics_database_up"}


def _served() -> set[str]:
    names = set(GAUGES)
    for family in REGISTRY.collect():
        if family.name.startswith("recall_"):
            names.add(family.name + ("_total" if family.type == "counter" else ""))
    return names


@pytest.mark.django_db
def test_the_gauges_listed_here_are_the_collectors():
    assert {family.name for family in metrics.ApplicationCollector()._gather()} == GAUGES


def test_the_dashboard_queries_only_served_metrics():
    dashboard = json.loads((ROOT / "docs/grafana-dashboard.json").read_text())
    used = {name for panel in dashboard["panels"] for target in panel["targets"]
            for name in re.findall(r"\brecall_[a-z_]+", target["expr"])}
    served = _served()
    histogram_parts = {f"{n}_bucket" for n in served} | {f"{n}_count" for n in served} | {f"{n}_sum" for n in served}
    assert used <= served | histogram_parts, used - served - histogram_parts
    assert len(used) >= 8


def test_operations_doc_explains_every_metric():
    text = (ROOT / "docs/operations.md").read_text()
    for name in _served():
        assert f"`{name}`" in text, name
