"""`recall`: upload-ids, measure, report — over the public API with a token (RECALL_TOKEN, RECALL_URL)."""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from decimal import Decimal
from typing import Any, BinaryIO

DEFAULT_URL = "http://127.0.0.1:8000"
THROTTLE_RETRIES = 5  # a GET answered 429 is retried after its Retry-After, at most this many times
THROTTLE_WAIT_MAX = 60.0  # seconds; a longer Retry-After is cut to this
USER_AGENT = "recall-cli/1.0"


class ApiError(Exception):
    """The server refused the call; `problem` is its RFC 9457 body when it sent one."""

    def __init__(self, status: int, problem: dict[str, Any]) -> None:
        self.status = status
        self.problem = problem
        super().__init__(problem.get("detail") or f"HTTP {status}")


def _api_error(exc: urllib.error.HTTPError) -> ApiError:
    raw = exc.read()
    try:
        problem = json.loads(raw)
    except ValueError:
        problem = {"detail": raw.decode("utf-8", "replace")[:500] or exc.reason}
    return ApiError(exc.code, problem if isinstance(problem, dict) else {"detail": str(problem)})


def _retry_after(value: str | None) -> float:
    """Seconds to wait from a Retry-After header (seconds form); 1 when absent or not a number."""
    try:
        seconds = float(value) if value is not None else 1.0
    except ValueError:
        seconds = 1.0
    return min(max(seconds, 0.0), THROTTLE_WAIT_MAX)


class Client:
    def __init__(self, base_url: str, token: str, timeout: float = 300.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.sleep = time.sleep  # replaceable in tests

    def request(self, method: str, path: str, *, query: dict[str, Any] | None = None, json_body: Any = None,
                body: BinaryIO | bytes | None = None, content_type: str | None = None, length: int | None = None,
                headers: dict[str, str] | None = None) -> Any:
        url = self.base_url + path
        if query:
            url += "?" + urllib.parse.urlencode({k: v for k, v in query.items() if v is not None})
        all_headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json",
                       "User-Agent": USER_AGENT, **(headers or {})}
        data: Any = body
        if json_body is not None:
            data = json.dumps(json_body).encode()
            content_type = "application/json"
        if content_type:
            all_headers["Content-Type"] = content_type
        if length is not None:
            all_headers["Content-Length"] = str(length)
        request = urllib.request.Request(url, data=data, method=method, headers=all_headers)
        for attempt in range(THROTTLE_RETRIES + 1):
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    payload = response.read()
                break
            except urllib.error.HTTPError as exc:
                # Too many calls with this token: a read is safe to repeat once the server says when.
                if exc.code != 429 or method != "GET" or attempt == THROTTLE_RETRIES:
                    raise _api_error(exc) from None
                self.sleep(_retry_after(exc.headers.get("Retry-After")))
        return json.loads(payload) if payload else None

    def get(self, path: str, **query: Any) -> Any:
        return self.request("GET", path, query=query)

    # --- lookups by id or name ---------------------------------------------------------------------

    def _by_name(self, path: str, what: str, value: str) -> dict[str, Any]:
        if value.isdigit():
            return self.get(f"{path}{value}/")
        found = self.get(path, name=value)["results"]
        if not found:
            raise ApiError(404, {"detail": f"No {what} named {value!r}."})
        return found[0]

    def corpus(self, value: str) -> dict[str, Any]:
        return self._by_name("/api/v1/corpora/", "corpus", value)

    def topic(self, value: str) -> dict[str, Any]:
        return self._by_name("/api/v1/topics/", "topic", value)


# --------------------------------------------------------------------------- commands


def _print(data: Any) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False))


def upload_ids(client: Client, args: argparse.Namespace) -> int:
    corpus = client.corpus(args.corpus)
    path = f"/api/v1/corpora/{corpus['id']}/classifiers/ids/"
    query = {"name": args.classifier}
    if args.file == "-":
        result = client.request("POST", path, query=query, body=sys.stdin.buffer.read(), content_type="text/plain")
    else:
        with open(args.file, "rb") as handle:  # streamed, with its length: never read whole into memory
            result = client.request("POST", path, query=query, body=handle, content_type="text/plain",
                                    length=os.fstat(handle.fileno()).st_size)
    classifier = result["classifier"]
    print(f"classifier {classifier['name']!r} (id {classifier['id']}): {classifier['retrieved_count']} retrieved of "
          f"{result['read']} ids read, {result['unknown_count']} unknown; fingerprint {classifier['fingerprint']}",
          file=sys.stderr)
    _print(result)
    return 0


def _done(progress: dict[str, Any], *, hits_expected: int) -> bool:
    return progress["hits"] >= hits_expected and progress["hits_open"] == 0 and progress["judgments_outstanding"] == 0


def measure(client: Client, args: argparse.Namespace) -> int:
    topic = client.topic(args.topic)
    base = f"/api/v1/topics/{topic['id']}/"
    before = client.get(base + "progress/")
    quote = client.get(base + "quote/", half_width=args.half_width, complement=args.complement)
    cost = Decimal(quote["cost"])
    hits_expected = before["hits"]
    if quote["documents"]:
        if args.max_cost is not None and cost > Decimal(args.max_cost):
            print(f"Not launched: it costs ${cost} (documents {quote['documents']}, HITs {quote['hits']}), above "
                  f"--max-cost {args.max_cost}.", file=sys.stderr)
            return 2
        if args.max_cost is None and not args.yes:
            print(f"Not launched: it costs ${cost}; confirm with --max-cost AMOUNT or --yes.", file=sys.stderr)
            return 2
        key = args.key or f"recall-cli-{uuid.uuid4()}"
        launched = client.request("POST", base + "launch/", headers={"Idempotency-Key": key}, json_body={
            "half_width": args.half_width, "complement": args.complement, "confirm_cost": quote["cost"],
            "confirm_fingerprint": quote["fingerprint"]})
        hits_expected += quote["hits"] if quote["exact"] else 1
        print(f"launched: {quote['documents']} documents in {quote['hits']} HITs, ${cost} "
              f"(Idempotency-Key {key})", file=sys.stderr)
        _print(launched)
    else:
        print("Nothing to draw: the sample already holds what this half-width asks for.", file=sys.stderr)
    if not args.wait:
        return 0
    deadline = time.monotonic() + args.timeout
    while True:
        try:
            progress = client.get(base + "progress/")
        except (ApiError, urllib.error.URLError, OSError) as exc:
            # A long wait outlives server restarts and hiccups: only a refusal (4xx) ends it.
            if isinstance(exc, ApiError) and exc.status < 500:
                raise
            print(f"progress not available ({exc}); retrying", file=sys.stderr)
            time.sleep(args.interval)
            continue
        if _done(progress, hits_expected=hits_expected):
            _print(progress)
            return 0
        if time.monotonic() > deadline:
            print(f"Timed out after {args.timeout:g} s: {progress['judgments_outstanding']} judgments outstanding.",
                  file=sys.stderr)
            _print(progress)
            return 3
        time.sleep(args.interval)


def report(client: Client, args: argparse.Namespace) -> int:
    topic = client.topic(args.topic)
    path = f"/api/v1/topics/{topic['id']}/report/"
    if args.version is not None:
        path += f"versions/{args.version}/"
    _print(client.get(path))
    return 0


def parser() -> argparse.ArgumentParser:
    main_parser = argparse.ArgumentParser(prog="recall", description=__doc__)
    main_parser.add_argument("--url", default=os.environ.get("RECALL_URL", DEFAULT_URL),
                             help="server base URL (RECALL_URL)")
    commands = main_parser.add_subparsers(dest="command", required=True)

    ids = commands.add_parser("upload-ids", help="create an ids classifier from a file of external ids, one a line")
    ids.add_argument("--corpus", required=True, help="corpus name or id")
    ids.add_argument("--classifier", required=True, help="name of the new classifier")
    ids.add_argument("file", help="the ids file ('-' reads standard input)")
    ids.set_defaults(run=upload_ids)

    run = commands.add_parser("measure", help="launch (or top up) the topic's sample, confirming its cost")
    run.add_argument("--topic", required=True, help="topic name or id")
    run.add_argument("--half-width", type=float, default=0.05)
    run.add_argument("--complement", type=int, default=0, help="documents of the dependence check (0: none)")
    run.add_argument("--max-cost", help="launch only if the quote costs at most this")
    run.add_argument("--yes", action="store_true", help="launch whatever the quote costs")
    run.add_argument("--key", help="Idempotency-Key: reuse it to retry a launch safely (default: a new one)")
    run.add_argument("--wait", action="store_true", help="wait until every HIT of the topic is judged")
    run.add_argument("--timeout", type=float, default=24 * 3600.0, help="seconds --wait waits at most")
    run.add_argument("--interval", type=float, default=30.0, help="seconds between polls")
    run.set_defaults(run=measure)

    rep = commands.add_parser("report", help="print the topic's report")
    rep.add_argument("--topic", required=True, help="topic name or id")
    rep.add_argument("--format", choices=["json"], default="json")
    rep.add_argument("--version", type=int, help="a stored version (default: the latest)")
    rep.set_defaults(run=report)
    return main_parser


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    token = os.environ.get("RECALL_TOKEN", "")
    if not token:
        print("Set RECALL_TOKEN to an API token (create one on /account/tokens/).", file=sys.stderr)
        return 2
    client = Client(args.url, token)
    try:
        return int(args.run(client, args))
    except ApiError as exc:
        problem = exc.problem
        print(f"error {exc.status}: {problem.get('detail') or problem.get('title')}", file=sys.stderr)
        for field, messages in (problem.get("errors") or {}).items():
            print(f"  {field}: {' '.join(map(str, messages)) if isinstance(messages, list) else messages}",
                  file=sys.stderr)
        return 1
    except (urllib.error.URLError, OSError) as exc:
        print(f"cannot reach {args.url}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
