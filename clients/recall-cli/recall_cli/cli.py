"""`recall`: upload-ids, topic create, measure, report (JSON or CSV), topic-set (create, launch), router (upload,
keywords) — over the public API with a token (RECALL_TOKEN, RECALL_URL)."""
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
                headers: dict[str, str] | None = None, raw: bool = False) -> Any:
        """The answer's JSON, or with `raw` its bytes as sent (a CSV); a refusal raises ApiError."""
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
        if raw:
            return payload
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

    def topic_set(self, value: str) -> dict[str, Any]:
        return self._by_name("/api/v1/topic-sets/", "topic set", value)

    def classifier(self, corpus_id: int, value: str) -> dict[str, Any]:
        """A classifier of the corpus by name, or by id (then it must belong to the corpus: the server checks)."""
        if value.isdigit():
            return self.get(f"/api/v1/classifiers/{value}/")
        return self._by_name(f"/api/v1/corpora/{corpus_id}/classifiers/", "classifier", value)


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


def _quote_words(quote: dict) -> str:
    """The server's quote in its own words (the same as the plan and confirmation pages), itemised."""
    if "summary" not in quote:  # a server from before the itemised quote
        bound = "" if quote.get("exact", True) else "at most "
        return f"{bound}{quote['documents']} documents in {bound}{quote['hits']} HITs, {bound}${quote['cost']}"
    return quote["summary"] + "".join(f"\n  {part['text']}" for part in quote.get("parts") or [])


def measure(client: Client, args: argparse.Namespace) -> int:
    topic = client.topic(args.topic)
    base = f"/api/v1/topics/{topic['id']}/"
    before = client.get(base + "progress/")
    quote = client.get(base + "quote/", half_width=args.half_width, complement=args.complement)
    cost = Decimal(quote["cost"])
    hits_expected = before["hits"]
    if quote["documents"]:
        if args.max_cost is not None and cost > Decimal(args.max_cost):
            print(f"Not launched, above --max-cost {args.max_cost}: {_quote_words(quote)}", file=sys.stderr)
            return 2
        if args.max_cost is None and not args.yes:
            print(f"Not launched: {_quote_words(quote)}. Confirm with --max-cost AMOUNT or --yes.", file=sys.stderr)
            return 2
        key = args.key or f"recall-cli-{uuid.uuid4()}"
        launched = client.request("POST", base + "launch/", headers={"Idempotency-Key": key}, json_body={
            "half_width": args.half_width, "complement": args.complement, "confirm_cost": quote["cost"],
            "confirm_fingerprint": quote["fingerprint"]})
        hits_expected += quote["hits"] if quote["exact"] else 1
        print(f"launched: {_quote_words(quote)} (Idempotency-Key {key})", file=sys.stderr)
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
    # An id goes straight to the report: a manager's token reads reports but may not look topics up (analyst role).
    topic_id = args.topic if args.topic.isdigit() else client.topic(args.topic)["id"]
    if args.format == "csv":  # the server writes it: the same file as the report page's CSV download
        query = {"version": args.version} if args.version is not None else None
        csv_bytes = client.request("GET", f"/api/v1/topics/{topic_id}/report/csv/", query=query, raw=True,
                                   headers={"Accept": "text/csv, application/problem+json, application/json"})
        sys.stdout.buffer.write(csv_bytes)
        sys.stdout.flush()
        return 0
    path = f"/api/v1/topics/{topic_id}/report/"
    if args.version is not None:
        path += f"versions/{args.version}/"
    _print(client.get(path))
    return 0


# The optional settings of POST /api/v1/topics/, as the API names them; absent ones take the server's defaults.
TOPIC_SETTINGS = ("instructions", "target_recall", "confidence", "crowd", "aggregator", "hit_size", "reward_per_hit",
                  "budget")


def topic_create(client: Client, args: argparse.Namespace) -> int:
    corpus = client.corpus(args.corpus)
    body: dict[str, Any] = {"corpus": corpus["id"], "name": args.name,
                            "c1": client.classifier(corpus["id"], args.c1)["id"],
                            "c2": client.classifier(corpus["id"], args.c2)["id"]}
    if args.extra:
        body["extra"] = [client.classifier(corpus["id"], value)["id"] for value in args.extra]
    if args.seed_terms:
        body["seed_terms"] = args.seed_terms
    for key in TOPIC_SETTINGS:
        if getattr(args, key) is not None:
            body[key] = getattr(args, key)
    if args.allow_unsure is not None:
        body["allow_unsure"] = args.allow_unsure
    created = client.request("POST", "/api/v1/topics/", json_body=body)
    print(f"topic {created['name']!r} (id {created['id']}): a draft; see its quote with `recall measure --topic "
          f"{created['id']}` (nothing is launched without --max-cost or --yes)", file=sys.stderr)
    _print(created)
    return 0


def _topic_commands(commands: Any) -> None:
    topics = commands.add_parser("topic", help="topics (a classifier pair): create")
    topic_commands = topics.add_subparsers(dest="topic_command", required=True)
    create = topic_commands.add_parser("create", help="create a draft topic (POST /api/v1/topics/)")
    create.add_argument("--corpus", required=True, help="corpus name or id")
    create.add_argument("--name", required=True)
    create.add_argument("--c1", required=True, help="first classifier of the pair: name (in the corpus) or id")
    create.add_argument("--c2", required=True, help="second classifier of the pair: name (in the corpus) or id")
    create.add_argument("--extra", action="append", help="a further classifier to measure (name or id); repeat it")
    create.add_argument("--seed-term", dest="seed_terms", action="append", help="a term defining the topic; repeat it")
    create.add_argument("--instructions", help="what annotators see above every document")
    create.add_argument("--target-recall", type=float)
    create.add_argument("--confidence", type=float)
    create.add_argument("--crowd", help="local or mturk")
    create.add_argument("--aggregator", help="majority or dawid_skene: how the three judgments combine")
    create.add_argument("--hit-size", type=int)
    create.add_argument("--reward-per-hit")
    create.add_argument("--budget")
    unsure = create.add_mutually_exclusive_group()
    unsure.add_argument("--allow-unsure", dest="allow_unsure", action="store_true", default=None,
                        help='offer annotators an "unsure" answer')
    unsure.add_argument("--no-allow-unsure", dest="allow_unsure", action="store_false")
    create.set_defaults(run=topic_create)


# --- topic sets and routers ------------------------------------------------------------------------


def _class_arg(value: str) -> dict[str, str]:
    """`NAME` or `NAME=DESCRIPTION`."""
    name, _, description = value.partition("=")
    if not name.strip():
        raise argparse.ArgumentTypeError("a class needs a name (NAME or NAME=DESCRIPTION)")
    return {"name": name.strip(), "description": description.strip()}


def _rule_arg(value: str) -> dict[str, Any]:
    """`CLASS=term1,term2` (CLASS a class name or position): one keyword rule on the title and the text (the
    server reads no field by default: the rule names them)."""
    klass, sep, terms = value.partition("=")
    listed = [term.strip() for term in terms.split(",") if term.strip()]
    if not sep or not klass.strip() or not listed:
        raise argparse.ArgumentTypeError("a rule is CLASS=term1,term2 (or use --rules-file)")
    return {"class": klass.strip(), "terms": listed, "fields": ["title", "text"]}


def topic_set_create(client: Client, args: argparse.Namespace) -> int:
    corpus = client.corpus(args.corpus)
    body: dict[str, Any] = {"corpus": corpus["id"], "name": args.name, "classes": args.classes,
                            "instructions": args.instructions, "allow_unsure": args.allow_unsure}
    for key in ("hit_size", "reward_per_hit", "budget"):
        if getattr(args, key) is not None:
            body[key] = getattr(args, key)
    created = client.request("POST", "/api/v1/topic-sets/", json_body=body)
    print(f"topic set {created['name']!r} (id {created['id']}): classes {', '.join(created['class_names'][1:])}",
          file=sys.stderr)
    _print(created)
    return 0


def build_wait(client: Client, build: dict[str, Any], *, interval: float, timeout: float,
               clock: Any = time.monotonic, sleep: Any = time.sleep) -> dict[str, Any]:
    """Poll a router build (its `url`) until it is done or failed, or `timeout` seconds pass (then returned as it
    is). A server hiccup (5xx, connection lost) is retried; a refusal (4xx) is raised."""
    deadline = clock() + timeout
    while build["status"] not in ("done", "failed"):
        if clock() > deadline:
            return build
        sleep(interval)
        try:
            build = client.get(build["url"])
        except (ApiError, urllib.error.URLError, OSError) as exc:
            if isinstance(exc, ApiError) and exc.status < 500:
                raise
            print(f"build status not available ({exc}); retrying", file=sys.stderr)
            continue
        if build["status"] == "running" and build.get("total"):
            print(f"building: {build['processed']} of {build['total']}", file=sys.stderr)
    return build


def _router_answer(client: Client, started: dict[str, Any], args: argparse.Namespace) -> int:
    print(f"router build {started['id']} ({started['status']}): {started['url']}", file=sys.stderr)
    build = build_wait(client, started, interval=args.interval, timeout=args.timeout)
    if build["status"] == "done":
        router = build["router"]
        print(f"router {router['name']!r} (id {router['id']}): predicted counts {router['predicted_counts']}; "
              f"fingerprint {router['fingerprint']}", file=sys.stderr)
        _print(build)
        return 0
    _print(build)
    if build["status"] == "failed":
        print(f"router build failed: {build['error'].splitlines()[0] if build['error'] else 'no reason given'}",
              file=sys.stderr)
        for line in build.get("lines") or []:
            print(f"  line {line['line']}: {line['problem']}", file=sys.stderr)
        return 1
    print(f"Timed out after {args.timeout:g} s: the build is {build['status']} ({build['processed']} of "
          f"{build['total']}); poll {build['url']}", file=sys.stderr)
    return 3


def _interval(value: dict[str, Any] | None) -> str:
    if not value:
        return "—"
    point = "" if value.get("point") is None else f"{value['point']:.3f} "
    return f"{point}({value['low']:.3f}–{value['high']:.3f})"


def classifier_train(client: Client, args: argparse.Namespace) -> int:
    """Start a trained-classifier build (POST classifier-builds/, kind "trained") and wait for it."""
    corpus = client.corpus(args.corpus)
    body: dict[str, Any] = {"name": args.name, "kind": "trained", "fields": args.fields, "seed": args.seed}
    if args.topic:
        body["topic_id"] = client.topic(args.topic)["id"]
    else:
        body["labels_classifier_id"] = client.classifier(corpus["id"], args.labels_from_classifier)["id"]
    if args.partner:
        body["partner_id"] = client.classifier(corpus["id"], args.partner)["id"]
    if args.target_precision is not None:
        body["target_precision"] = args.target_precision
    elif args.threshold is not None:
        body["threshold"] = args.threshold
    started = client.request("POST", f"/api/v1/corpora/{corpus['id']}/classifier-builds/", json_body=body)
    print(f"classifier build {started['id']} ({started['status']}): {started['url']}", file=sys.stderr)
    build = build_wait(client, started, interval=args.interval, timeout=args.timeout)
    _print(build)
    if build["status"] == "done":
        figures = build.get("trained") or {}
        if figures.get("corpus_precision"):
            quality = (f"precision on the corpus {_interval(figures['corpus_precision'])}, recall "
                       f"{_interval(figures.get('corpus_recall'))}, weighted AUC {figures.get('weighted_auc')}")
        else:
            quality = ("no corpus figure (the labels carry no inclusion probabilities); agreement with the training "
                       f"labels {figures.get('cv_precision')}")
        print(f"classifier {build['name']!r} (id {build['classifier_id']}): {build['retrieved']} retrieved at "
              f"threshold {figures.get('threshold')}; {quality}", file=sys.stderr)
        return 0
    if build["status"] == "failed":
        print(f"classifier build failed: {build['error'] or 'no reason given'}", file=sys.stderr)
        return 1
    print(f"Timed out after {args.timeout:g} s: the build is {build['status']} ({build['processed']} of "
          f"{build['total']}); poll {build['url']}", file=sys.stderr)
    return 3


def _classifier_commands(commands: Any) -> None:
    classifiers = commands.add_parser("classifier", help="classifiers: train one on another view (waits for the build)")
    classifier_commands = classifiers.add_subparsers(dest="classifier_command", required=True)
    train = classifier_commands.add_parser(
        "train", help="train a classifier on the fields given, from a topic's judged documents (weighted by their "
                      "inclusion probabilities) or another classifier's output; prints its precision on the corpus")
    train.add_argument("--corpus", required=True, help="corpus name or id")
    train.add_argument("--name", required=True, help="the new classifier's name")
    train.add_argument("--field", dest="fields", action="append", required=True,
                       help="a field it reads (title, text or a metadata key); repeat it")
    labels = train.add_mutually_exclusive_group(required=True)
    labels.add_argument("--topic", help="train on this topic's judged documents (name or id)")
    labels.add_argument("--labels-from-classifier", help="or on this classifier's output as noisy labels")
    train.add_argument("--partner", help="the classifier it will be paired with (its fields are refused)")
    train.add_argument("--seed", type=int, default=1)
    goal = train.add_mutually_exclusive_group()
    goal.add_argument("--threshold", type=float, help="retrieved = score ≥ threshold (default 0.5)")
    goal.add_argument("--target-precision", type=float,
                      help="the lowest threshold whose corpus precision is at least this with 95%% confidence; "
                           "refused with the reason when the labels cannot support it")
    _add_build_wait(train)
    train.set_defaults(run=classifier_train)


def router_upload(client: Client, args: argparse.Namespace) -> int:
    topic_set = client.topic_set(args.topic_set)
    path = f"/api/v1/topic-sets/{topic_set['id']}/routers/csv/"
    if args.file == "-":
        started = client.request("POST", path, query={"name": args.name}, body=sys.stdin.buffer.read(),
                                 content_type="text/csv")
    else:
        with open(args.file, "rb") as handle:  # streamed, with its length
            started = client.request("POST", path, query={"name": args.name}, body=handle, content_type="text/csv",
                                     length=os.fstat(handle.fileno()).st_size)
    return _router_answer(client, started, args)


def router_keywords(client: Client, args: argparse.Namespace) -> int:
    topic_set = client.topic_set(args.topic_set)
    rules = list(args.rules or [])
    if args.rules_file:
        with open(args.rules_file, encoding="utf-8") as handle:
            loaded = json.load(handle)
        rules += loaded if isinstance(loaded, list) else [loaded]
    if not rules:
        print("Give at least one --rule CLASS=term1,term2 or a --rules-file.", file=sys.stderr)
        return 2
    for rule in rules:  # the API takes the class as text (a name or a position)
        if isinstance(rule, dict) and isinstance(rule.get("class"), int):
            rule["class"] = str(rule["class"])
    started = client.request("POST", f"/api/v1/topic-sets/{topic_set['id']}/routers/keywords/",
                             json_body={"name": args.name, "rules": rules})
    return _router_answer(client, started, args)


def topic_set_launch(client: Client, args: argparse.Namespace) -> int:
    topic_set = client.topic_set(args.topic_set)
    base = f"/api/v1/topic-sets/{topic_set['id']}/"
    preview = client.get(base + "preview/", documents=args.documents)
    cost = Decimal(preview["cost"])
    if not preview["new_documents"]:
        print(f"Nothing to draw: the sample already holds {args.documents} documents (or the whole corpus).",
              file=sys.stderr)
        return 0
    if preview["refused"]:
        print(f"Not launched: {preview['refused']}", file=sys.stderr)
        _print(preview)
        return 1
    if args.max_cost is not None and cost > Decimal(args.max_cost):
        print(f"Not launched: it costs ${cost} ({preview['new_documents']} new documents, {preview['hits']} HITs), "
              f"above --max-cost {args.max_cost}.", file=sys.stderr)
        return 2
    if args.max_cost is None and not args.yes:
        print(f"Not launched: it costs ${cost}; confirm with --max-cost AMOUNT or --yes.", file=sys.stderr)
        return 2
    key = args.key or f"recall-cli-{uuid.uuid4()}"
    body: dict[str, Any] = {"documents": args.documents, "confirm_cost": preview["cost"]}
    if args.seed is not None:
        body["seed"] = args.seed
    launched = client.request("POST", base + "launch/", headers={"Idempotency-Key": key}, json_body=body)
    print(f"launched: {launched['drawn']} documents in {launched['hits']} HITs, ${cost} (Idempotency-Key {key})",
          file=sys.stderr)
    _print(launched)
    return 0


def _add_build_wait(command: argparse.ArgumentParser) -> None:
    command.add_argument("--timeout", type=float, default=3600.0, help="seconds to wait for the build at most")
    command.add_argument("--interval", type=float, default=2.0, help="seconds between polls of the build")


def _topic_set_commands(commands: Any) -> None:
    sets = commands.add_parser("topic-set", help="topic sets (multi-class): create, launch")
    set_commands = sets.add_subparsers(dest="topic_set_command", required=True)
    create = set_commands.add_parser("create", help="create a draft topic set")
    create.add_argument("--corpus", required=True, help="corpus name or id")
    create.add_argument("--name", required=True)
    create.add_argument("--class", dest="classes", action="append", type=_class_arg, required=True,
                        help="NAME or NAME=DESCRIPTION; repeat it for each class, in order (2 to 20)")
    create.add_argument("--instructions", default="")
    create.add_argument("--allow-unsure", action="store_true")
    create.add_argument("--hit-size", type=int)
    create.add_argument("--reward-per-hit")
    create.add_argument("--budget")
    create.set_defaults(run=topic_set_create)

    launch = set_commands.add_parser("launch", help="draw the uniform sample up to --documents, confirming its cost")
    launch.add_argument("--topic-set", required=True, help="topic set name or id")
    launch.add_argument("--documents", type=int, required=True, help="the TOTAL sample size wanted")
    launch.add_argument("--max-cost", help="launch only if the preview costs at most this")
    launch.add_argument("--yes", action="store_true", help="launch whatever the preview costs")
    launch.add_argument("--key", help="Idempotency-Key: reuse it to retry a launch safely (default: a new one)")
    launch.add_argument("--seed", type=int)
    launch.set_defaults(run=topic_set_launch)

    routers = commands.add_parser("router", help="build a topic set's router (waits for the build)")
    router_commands = routers.add_subparsers(dest="router_command", required=True)
    upload = router_commands.add_parser("upload", help="a router from a CSV `id,class` of predictions")
    upload.add_argument("--topic-set", required=True, help="topic set name or id")
    upload.add_argument("--name", required=True, help="the router's name")
    upload.add_argument("file", help="the CSV ('-' reads standard input)")
    _add_build_wait(upload)
    upload.set_defaults(run=router_upload)
    keywords = router_commands.add_parser("keywords", help="a router from keyword rules (first match wins)")
    keywords.add_argument("--topic-set", required=True, help="topic set name or id")
    keywords.add_argument("--name", required=True, help="the router's name")
    keywords.add_argument("--rule", dest="rules", action="append", type=_rule_arg,
                          help="CLASS=term1,term2 (CLASS a name or position); repeat, in precedence order")
    keywords.add_argument("--rules-file", help='JSON list of {"class", "terms", "fields"}, after any --rule')
    _add_build_wait(keywords)
    keywords.set_defaults(run=router_keywords)


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

    _topic_commands(commands)
    _classifier_commands(commands)

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
    rep.add_argument("--topic", required=True, help="topic id, or name (a name needs the analyst role to look up)")
    rep.add_argument("--format", choices=["json", "csv"], default="json",
                     help="json (the report's JSON) or csv (the report page's CSV: a #key,value block, then rows)")
    rep.add_argument("--version", type=int, help="a stored version (default: the latest)")
    rep.set_defaults(run=report)

    _topic_set_commands(commands)
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
