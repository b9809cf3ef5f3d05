"""The model judge's HTTP client: one OpenAI-compatible chat request per document, with defined failures.

POST {base_url}/chat/completions (OpenAI, vLLM's and Ollama's OpenAI-compatible servers alike) with the topic's
instructions and the document; the reply's message content must be a JSON object
``{"relevant": true|false, "probability": 0..1}`` (``"class": "relevant"|"not relevant"`` is accepted for the
class; a missing probability becomes 1.0 or 0.0).  Standard library only (urllib): no new dependency, one
connection per request, concurrency bounded by the caller's thread pool.

What each failure becomes (``JudgeFailure.reason``), after ``attempts`` tries with exponential back-off
(``backoff``·2^i seconds, capped at ``max_wait``):

* HTTP 429: waits its ``Retry-After`` (seconds, capped at ``max_wait``; back-off without one), then retries;
  "rate-limited" when the attempts run out.
* HTTP 5xx: retried; "server-error".
* a timeout: retried; "timeout".
* a refused or reset connection, an unknown host: retried; "unreachable" (the run stops early when every
  request of a window failed so: ``model_judge.py``'s circuit breaker).
* HTTP 4xx other than 429 (a wrong key, model or URL): not retried; "client-error".
* a reply that is not the JSON asked for: retried (a model's answer varies); "malformed".

Tokens are counted from every reply's ``usage`` that arrived (a malformed answer is paid for too).
"""
from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["EndpointConfig", "JudgeAnswer", "JudgeFailure", "judge_ask", "judge_messages", "judge_answer_parse"]

SYSTEM_PROMPT = (
    "You judge whether a document is relevant to a topic, following the topic's instructions exactly. "
    'Answer with one JSON object and nothing else: {"relevant": true or false, "probability": the probability '
    "from 0 to 1 that the document is relevant}."
)


@dataclass(frozen=True)
class EndpointConfig:
    base_url: str
    model: str
    api_key: str = ""
    timeout: float = 30.0
    attempts: int = 4
    backoff: float = 1.0
    max_wait: float = 60.0
    max_tokens: int = 60


@dataclass(frozen=True)
class JudgeAnswer:
    relevant: bool
    probability: float
    prompt_tokens: int
    completion_tokens: int
    attempts: int


class JudgeFailure(Exception):
    """A document the judge could not answer: ``reason`` (a stable code), ``detail`` (for the log and the page),
    the ``attempts`` made and the tokens the replies that did arrive used."""

    def __init__(self, reason: str, detail: str, *, attempts: int, prompt_tokens: int = 0,
                 completion_tokens: int = 0) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail[:500]
        self.attempts = attempts
        self.prompt_tokens = prompt_tokens
        self.completion_tokens = completion_tokens


def judge_messages(*, topic_name: str, instructions: str, title: str, text: str, max_chars: int) -> list[dict]:
    """The chat messages for one document: the fixed system prompt, then the topic and the document (cut)."""
    body = (text or "")[:max_chars]
    user = (f"Topic: {topic_name}\nInstructions for judges:\n{instructions or '(none)'}\n\n"
            f"Document title: {title or '(none)'}\nDocument text:\n{body}")
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


_JSON_OBJECT = re.compile(r"\{.*\}", re.S)


def judge_answer_parse(content: Any) -> tuple[bool, float]:
    """(relevant, probability) from a reply's message content; ValueError when it is not the JSON asked for."""
    if not isinstance(content, str):
        raise ValueError("the message content is not text")
    match = _JSON_OBJECT.search(content)
    if match is None:
        raise ValueError("no JSON object in the answer")
    data = json.loads(match.group(0))
    if not isinstance(data, dict):
        raise ValueError("the answer is not a JSON object")
    relevant = data.get("relevant")
    if relevant is None and isinstance(data.get("class"), str):
        relevant = {"relevant": True, "not relevant": False, "irrelevant": False}.get(data["class"].strip().lower())
    if not isinstance(relevant, bool):
        raise ValueError("the answer has no true/false 'relevant'")
    probability = data.get("probability", 1.0 if relevant else 0.0)
    if isinstance(probability, bool) or not isinstance(probability, (int, float)) or not 0 <= probability <= 1:
        raise ValueError("'probability' is not a number from 0 to 1")
    return relevant, float(probability)


def _retry_after(headers: Any, fallback: float, cap: float) -> float:
    value = headers.get("Retry-After") if headers is not None else None
    try:
        return min(cap, max(0.0, float(value))) if value is not None else fallback
    except ValueError:  # an HTTP date: not worth parsing for a few seconds
        return fallback


def judge_ask(*, config: EndpointConfig, messages: list[dict],
              sleep: Callable[[float], None] = time.sleep) -> JudgeAnswer:
    """Ask the endpoint once per attempt until an answer parses (module docstring); raise JudgeFailure."""
    url = f"{config.base_url.rstrip('/')}/chat/completions"
    payload = json.dumps({
        "model": config.model, "messages": messages, "temperature": 0, "max_tokens": config.max_tokens,
        "response_format": {"type": "json_object"},
    }).encode()
    headers = {"Content-Type": "application/json"}
    if config.api_key:
        headers["Authorization"] = f"Bearer {config.api_key}"
    prompt_tokens = completion_tokens = 0
    reason, detail = "unreachable", "no attempt made"
    for attempt in range(1, max(1, config.attempts) + 1):
        wait = min(config.max_wait, config.backoff * 2 ** (attempt - 1))
        request = urllib.request.Request(url, data=payload, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=config.timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            status = exc.code
            exc.close()
            if status == 429:
                reason, detail = "rate-limited", "HTTP 429"
                wait = _retry_after(exc.headers, wait, config.max_wait)
            elif status >= 500:
                reason, detail = "server-error", f"HTTP {status}"
            else:
                raise JudgeFailure("client-error", f"HTTP {status} (check the URL, model and key)",
                                   attempts=attempt, prompt_tokens=prompt_tokens,
                                   completion_tokens=completion_tokens) from None
        except TimeoutError:  # socket.timeout is an alias of it
            reason, detail = "timeout", f"no answer within {config.timeout:g} s"
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError):
                reason, detail = "timeout", f"no answer within {config.timeout:g} s"
            else:
                reason, detail = "unreachable", str(exc.reason)
        except (ConnectionError, OSError) as exc:
            reason, detail = "unreachable", str(exc)
        else:
            try:
                body = json.loads(raw)
                usage = body.get("usage") or {}
                prompt_tokens += int(usage.get("prompt_tokens") or 0)
                completion_tokens += int(usage.get("completion_tokens") or 0)
                relevant, probability = judge_answer_parse(body["choices"][0]["message"]["content"])
            except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
                reason, detail = "malformed", str(exc) or type(exc).__name__
            else:
                return JudgeAnswer(relevant=relevant, probability=probability, prompt_tokens=prompt_tokens,
                                   completion_tokens=completion_tokens, attempts=attempt)
        if attempt < config.attempts:
            sleep(wait)
    raise JudgeFailure(reason, detail, attempts=max(1, config.attempts), prompt_tokens=prompt_tokens,
                       completion_tokens=completion_tokens)
