"""Settings of the model judge (issue 28), applied at the end of base.py so one owner edits one file.

An OpenAI-compatible chat endpoint (OpenAI, a local vLLM or Ollama server: POST {base}/chat/completions) read
from the environment; no judge is configured while MODEL_JUDGE_BASE_URL is empty.  The key is never stored
in the database nor shown on a page.  Price: money per 1,000 tokens (prompt and completion), used for the
quote the analyst confirms before a run.
"""
from __future__ import annotations

import os
from decimal import Decimal
from typing import Any


def apply(s: dict[str, Any]) -> None:
    env = os.environ.get
    s["MODEL_JUDGE_BASE_URL"] = env("MODEL_JUDGE_BASE_URL", "").rstrip("/")
    s["MODEL_JUDGE_MODEL"] = env("MODEL_JUDGE_MODEL", "")
    s["MODEL_JUDGE_API_KEY"] = env("MODEL_JUDGE_API_KEY", "")
    # Seconds: connect+read timeout of one request; attempts per document (timeouts, 429, 5xx, malformed).
    s["MODEL_JUDGE_TIMEOUT"] = float(env("MODEL_JUDGE_TIMEOUT", "30"))
    s["MODEL_JUDGE_ATTEMPTS"] = int(env("MODEL_JUDGE_ATTEMPTS", "4"))
    # First back-off (seconds, doubled per attempt, capped) and the longest Retry-After honoured.
    s["MODEL_JUDGE_BACKOFF"] = float(env("MODEL_JUDGE_BACKOFF", "1.0"))
    s["MODEL_JUDGE_MAX_WAIT"] = float(env("MODEL_JUDGE_MAX_WAIT", "60"))
    # Requests in flight at once, per run (a thread pool).
    s["MODEL_JUDGE_CONCURRENCY"] = int(env("MODEL_JUDGE_CONCURRENCY", "8"))
    s["MODEL_JUDGE_PRICE_PER_1K_TOKENS"] = Decimal(env("MODEL_JUDGE_PRICE_PER_1K_TOKENS", "0"))
    # Document text sent to the judge is cut at this many characters; completion tokens asked for.
    s["MODEL_JUDGE_MAX_DOCUMENT_CHARS"] = int(env("MODEL_JUDGE_MAX_DOCUMENT_CHARS", "6000"))
    s["MODEL_JUDGE_MAX_TOKENS"] = int(env("MODEL_JUDGE_MAX_TOKENS", "60"))
    # A run with no batch stored for this long is failed by the beat's sweep (its worker was lost); retry resumes it.
    s["MODEL_JUDGE_STUCK_SECONDS"] = int(env("MODEL_JUDGE_STUCK_SECONDS", "1800"))
    s["CELERY_BEAT_SCHEDULE"]["fail-stuck-judge-runs"] = {
        "task": "annotation.tasks.model_judge_runs_stuck_task", "schedule": 300.0}
