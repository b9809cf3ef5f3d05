"""Issue 26 item 7: `simulate_crowd` prints one line, not a Celery log line per task run in the process."""
from __future__ import annotations

import logging
from io import StringIO

import pytest
from django.core.management import call_command

from tests.factories import make_pair_world

pytestmark = pytest.mark.django_db


def test_simulate_crowd_prints_one_line_and_no_task_log_lines(caplog):
    make_pair_world(n=400, prevalence=0.2, seed=8, topic_name="wheat")
    call_command("draw_samples", "--topic", "wheat", "--per-region", "5", "--seed", "3", stdout=StringIO())
    caplog.set_level(logging.INFO)
    out = StringIO()
    call_command("simulate_crowd", "--topic", "wheat", "--truth-field", "topics", "--workers", "4", "--seed", "2",
                 stdout=out)
    lines = [line for line in out.getvalue().splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Judgments made: ") and "Cost: $" in lines[0]
    task_lines = [r for r in caplog.records if r.name.startswith("celery")]
    assert task_lines == [], f"{len(task_lines)} task log lines, e.g. {task_lines[0].getMessage()}"
    assert logging.getLogger("celery.app.trace").level == logging.NOTSET  # put back as it was
