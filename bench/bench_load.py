"""Open-loop load test of the annotator pages through HTTP, as users load them: judgments/s at p95 (issues 15, 30).

Run:  cd /work/main && .venv/bin/python bench/bench_load.py [--database w5] [--redis-db 10]
          [--rates 100,150,200,250] [--duration 20] [--annotators 200] [--workers 4] [--threads 1]
          [--hit-size 5] [--cycles script,swap] [--roots after=.,before=/tmp/old-checkout] [--rounds 1]
Targets (quiet machine, issue 30): five-document HITs >= 250 judgments/s at p95 <= 300 ms with 200 annotators;
one-document HITs >= 80 judgments/s. This machine is shared: every line prints its load average.

What it does:
1. (Re)creates the PostgreSQL database ``--database`` (it must be a throw-away name: it is dropped),
   migrates it under the production settings and builds one sampling topic of ``--hit-size``-document HITs
   (three places each), big enough for every step, plus ``--annotators`` accounts with the annotator
   role. Each account gets a signed-in session made directly in the session store (signing in
   200 accounts through the sign-in page would spend minutes of PBKDF2 and trip the throttle).
2. For each code root of ``--roots`` (name=path: a checkout of this project; "." is this one — so an older
   commit can be measured against the same database, interleaved, under the same load) starts gunicorn
   (``--workers`` sync workers) AND a Celery worker and beat with the production settings, on
   DATABASE_URL and REDIS_URL ``--redis-db`` (the broker: every completed label schedules the report
   recompute as in production, and the worker runs it; beat runs the sweeps). ``--no-celery`` measures
   without them (what the bench of issue 15 did: no consumer, so only the first recompute was ever enqueued).
3. For each round, rate and (root, cycle): ``--duration`` seconds of Poisson arrivals at rate/hit-size HITs per
   second (open loop: the schedule never waits for the server), each served by an idle virtual annotator
   (one thread each, std-lib http.client). The cycle is how a browser submits:

   * ``script`` — what static/js/annotator.js did before issue 30 and what any client without swap does: a
     JSON submit (``Accept: application/json``, "then=next"), then a GET of the next HIT's page at the
     ``location`` it answers (two requests per HIT, the page parsed for its documents);
   * ``swap``   — the one-request cycle of issue 30: the JSON submit with ``swap=1`` answers with the next
     HIT's documents, which the script swaps in place (no page fetched);
   * ``form``   — the no-script form: the POST answers with the next HIT's page.

   Latencies: submit — from the arrival's scheduled time (queueing in the client counts: no coordinated
   omission) until the next HIT is on screen, all requests included; post — the POST alone; next — the GET
   of the next page. A cycle that fails (status >= 400, no HIT, a connection error) is an error; an arrival
   no annotator could take within the drain time is dropped. Both count against the p95: "p95 all" is taken
   over every arrival, failed and dropped ones as infinitely late ("inf" when more than 5 % of arrivals failed).
   Per step: server CPU (gunicorn, Celery worker and beat process groups; PostgreSQL and Redis are shared with
   other users of the machine and not counted), the Celery worker's share of it (the recomputes), the
   snapshots stored, and third judgment → snapshot freshness (each document whose third judgment was stored
   in the step: from that judgment to the first snapshot created after it; p50/p95). ``--timeline`` adds p50/p95 per 5 s.
4. After all steps: judgments stored, documents with more than three judgments (must be 0),
   duplicate (assignment, document) pairs (must be 0), and the answers the client sent that
   are not in the database (must be 0).
"""
from __future__ import annotations

import argparse
import http.client
import json
import math
import os
import pathlib
import queue
import random
import re
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from dataclasses import dataclass, field

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CSRF_RE = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
DOC_RE = re.compile(r'name="doc-(\d+)" value="1"')
ACTION_RE = re.compile(r'<form method="post" id="hit-form"[^>]*?action="([^"]+)"')
HOST = "127.0.0.1"


def _env(args) -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.production",
        "DJANGO_SECRET_KEY": args.secret_key,
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/{args.database}",
        "REDIS_URL": f"redis://127.0.0.1:6379/{args.redis_db}",
        "DJANGO_SECURE_SSL_REDIRECT": "0",
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DATABASE_CONN_MAX_AGE": "60",
        # Its own var/ (collected static files, media), apart from the developer's.
        "APP_VAR_DIR": str(ROOT / "var" / f"bench-load-{args.database}"),
        "CELERY_WORKER_CONCURRENCY": str(args.celery_concurrency),
    }


# --------------------------------------------------------------------------- set-up (in this process)


def _recreate_database(name: str) -> None:
    import psycopg

    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def _build(*, sample_documents: int, annotators: int, text_chars: int, hit_size: int = 5) -> tuple[int, list[str]]:
    """One sampling topic whose HITs hold about `sample_documents` documents; session keys of the annotators."""
    import hashlib

    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
    from django.contrib.auth.models import Group
    from django.contrib.sessions.backends.base import SessionBase
    from django.utils.module_loading import import_string

    from annotation.models import Classifier, ClassifierPair, Corpus, Document, Hit, Topic, Worker
    from annotation.services.corpora.retrieved_sets import bitmap_from_ids, bitmap_to_bytes
    from annotation.services.sampling.draws import samples_launch

    rng = random.Random(20261124)
    words = ("recall estimate classifier sample document topic crowd label judgment annotator report "
             "certification region stratum budget precision interval vote worker corpus").split()
    corpus = Corpus.objects.create(name="bench-load")
    n = sample_documents * 4
    Document.objects.bulk_create(
        (
            Document(corpus=corpus, external_id=f"d{i}", title=f"Document {i}",
                     text=" ".join(rng.choice(words) for _ in range(text_chars // 8)),
                     content_hash=hashlib.sha256(str(i).encode()).hexdigest())
            for i in range(n)
        ),
        batch_size=5000,
    )
    ids = list(Document.objects.filter(corpus=corpus).order_by("pk").values_list("pk", flat=True))
    c1 = Classifier.objects.create(corpus=corpus, name="c1", kind="ids", fingerprint="1",
                                   retrieved_bitmap=bitmap_to_bytes(bitmap_from_ids(ids[: n // 2])))
    c2 = Classifier.objects.create(corpus=corpus, name="c2", kind="ids", fingerprint="2",
                                   retrieved_bitmap=bitmap_to_bytes(bitmap_from_ids(ids[n // 4: 3 * n // 4])))
    topic = Topic.objects.create(corpus=corpus, name="bench-load-topic", hit_size=hit_size,
                                 instructions="Is the document about recall estimation?")
    ClassifierPair.objects.create(topic=topic, c1=c1, c2=c2)
    samples_launch(topic=topic, per_region=sample_documents // 3, seed=1)
    hits = Hit.objects.filter(topic=topic).count()
    print(f"built: {n:,} documents, {hits:,} HITs of {hit_size} documents ({hits * 3:,} places)", flush=True)

    User = get_user_model()
    group = Group.objects.get(name="annotator")
    users = User.objects.bulk_create([User(username=f"load-{i:03d}", password="!") for i in range(annotators)])
    for user in users:
        user.groups.add(group)
    Worker.objects.bulk_create([Worker(user=u) for u in users])
    from django.conf import settings

    store_class = import_string(settings.SESSION_ENGINE + ".SessionStore")
    backend = settings.AUTHENTICATION_BACKENDS[-1]  # the one that loads users (axes' comes first)
    keys: list[str] = []
    for user in users:
        session: SessionBase = store_class()
        session[SESSION_KEY] = str(user.pk)
        session[BACKEND_SESSION_KEY] = backend
        session[HASH_SESSION_KEY] = user.get_session_auth_hash()
        session.save()
        assert session.session_key is not None
        keys.append(session.session_key)
    return topic.pk, keys


# --------------------------------------------------------------------------- the client


@dataclass
class Stats:
    submit: list[float] = field(default_factory=list)
    post: list[float] = field(default_factory=list)
    next: list[float] = field(default_factory=list)
    claim: list[float] = field(default_factory=list)
    lag: list[float] = field(default_factory=list)
    judgments: int = 0
    errors: int = 0
    error_kinds: dict[str, int] = field(default_factory=dict)
    no_hit: int = 0
    dropped: int = 0  # arrivals still waiting for an idle annotator when the drain time ran out
    claim_follow: list[float] = field(default_factory=list)  # the GET after "Take the next HIT"
    claim_before: list[float] = field(default_factory=list)  # each annotator's first claim of the step
    timeline: list[tuple[float, float]] = field(default_factory=list)  # (scheduled arrival, submit latency)
    elapsed: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def error(self, kind: str) -> None:
        with self.lock:
            self.errors += 1
            self.error_kinds[kind] = self.error_kinds.get(kind, 0) + 1


class Annotator:
    """One browser without JavaScript: its cookies, the HIT on its screen, its answers sent."""

    keep_cookies = True

    def __init__(self, port: int, session_key: str, sent: dict[tuple[int, int], bool]):
        self.port = port
        self.cookies = {"sessionid": session_key}
        self.conn: http.client.HTTPConnection | None = None
        self.page_url = ""  # where the HIT form posts
        self.csrf = ""
        self.docs: list[int] = []
        self.sent = sent

    accept = "text/html"
    extra_headers: dict[str, str] = {}

    def _request(self, method: str, url: str, body: dict[str, str] | None = None, *, json_body: object = None):
        headers = {"Host": f"{HOST}:{self.port}", "Accept": self.accept, **self.extra_headers}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        data = None
        if body is not None:
            data = urllib.parse.urlencode(body)
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        elif json_body is not None:
            data = json.dumps(json_body)
            headers["Content-Type"] = "application/json"
        for attempt in range(2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection(HOST, self.port, timeout=60)
            try:
                self.conn.request(method, url, body=data, headers=headers)
                response = self.conn.getresponse()
                text = response.read().decode()
                break
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self.conn.close()
                self.conn = None
                if attempt or method == "POST":
                    raise
        for name, value in response.getheaders():
            if name.lower() == "set-cookie" and self.keep_cookies:
                pair = value.split(";", 1)[0]
                key, _, val = pair.partition("=")
                if val in ("", '""') or "max-age=0" in value.lower():
                    self.cookies.pop(key.strip(), None)
                else:
                    self.cookies[key.strip()] = val
        if response.getheader("Connection", "").lower() == "close" and self.conn is not None:
            self.conn.close()
            self.conn = None
        return response.status, response.getheader("Location"), text

    def _read_page(self, url: str, text: str) -> bool:
        """Take the HIT on the page; False when the page shows no HIT (none left)."""
        docs = [int(d) for d in DOC_RE.findall(text)]
        token = CSRF_RE.search(text)
        if not docs or token is None:
            self.docs = []
            return False
        action = ACTION_RE.search(text)
        self.page_url = action.group(1) if action else urllib.parse.urlsplit(url).path
        self.csrf, self.docs = token.group(1), docs
        return True

    def _follow(self, status: int, location: str | None, url: str, text: str, stats: Stats, key: str):
        """After a POST: follow a redirect (timed under `key`) or read the page it rendered."""
        if status in (301, 302, 303):
            target = urllib.parse.urljoin(f"http://{HOST}:{self.port}{url}", location or "")
            path = urllib.parse.urlsplit(target).path
            started = time.perf_counter()
            status, _, text = self._request("GET", path)
            with stats.lock:
                getattr(stats, key).append(time.perf_counter() - started)
            url = path
        if status != 200:
            raise RuntimeError(f"HTTP {status}")
        if not self._read_page(url, text):
            with stats.lock:
                stats.no_hit += 1
            return False
        return True

    def claim(self, stats: Stats) -> bool:
        """Home page, then "Take the next HIT"."""
        try:
            status, _, text = self._request("GET", "/annotate/")
            token = CSRF_RE.search(text)
            if status != 200 or token is None:
                raise RuntimeError(f"home HTTP {status}")
            started = time.perf_counter()
            status, location, text = self._request("POST", "/annotate/next/", {"csrfmiddlewaretoken": token.group(1)})
            ok = self._follow(status, location, "/annotate/next/", text, stats, "claim_follow")
            with stats.lock:
                stats.claim.append(time.perf_counter() - started)
            return ok
        except Exception as exc:  # noqa: BLE001 - counted
            stats.error(f"claim: {type(exc).__name__}: {exc}"[:80])
            self.conn = None
            return False

    cycle = "form"  # "form" (no script), "script" (JSON submit + GET of the next page), "swap" (one request)

    def _submit_json(self, body: dict[str, str], stats: Stats) -> None:
        """The script's submit: JSON answer; then the next page's GET ("script") or the swapped-in HIT ("swap")."""
        self.accept = "application/json"
        try:
            status, _, text = self._request("POST", self.page_url, body)
        finally:
            self.accept = "text/html"
        if status >= 400:
            raise RuntimeError(f"submit HTTP {status}")
        data = json.loads(text)
        if not data.get("ok"):
            raise RuntimeError(f"submit refused: {data.get('error', '')[:40]}")
        self._posted = time.perf_counter()
        self._acknowledged()
        nxt = data.get("next")
        if nxt is not None:
            self.page_url, self.docs = nxt["action"], [int(d["id"]) for d in nxt["documents"]]
            if not self.docs:
                raise RuntimeError("swap without documents")
            return
        location = data["location"]
        started = time.perf_counter()
        status, _, text = self._request("GET", location)
        with stats.lock:
            stats.next.append(time.perf_counter() - started)
        if status != 200:
            raise RuntimeError(f"next HTTP {status}")
        if not self._read_page(location, text):
            with stats.lock:
                stats.no_hit += 1

    def submit(self, scheduled: float, stats: Stats) -> None:
        if not self.docs and not self.claim(stats):
            return
        body = {"csrfmiddlewaretoken": self.csrf, "then": "next"}
        if self.cycle == "swap":
            body["swap"] = "1"
        answers = {doc: (doc * 7919) % 3 == 0 for doc in self.docs}
        body.update({f"doc-{doc}": "1" if value else "0" for doc, value in answers.items()})
        assignment = int(re.search(r"/assignments/(\d+)/", self.page_url).group(1))  # type: ignore[union-attr]

        def acknowledged() -> None:
            for doc, value in answers.items():
                self.sent[(assignment, doc)] = value

        self._acknowledged = acknowledged
        try:
            started = time.perf_counter()
            if self.cycle == "form":
                status, location, text = self._request("POST", self.page_url, body)
                self._posted = time.perf_counter()
                if status >= 400:
                    raise RuntimeError(f"submit HTTP {status}")
                acknowledged()
                self._follow(status, location, self.page_url, text, stats, "next")
            else:
                self._submit_json(body, stats)
            finished = time.perf_counter()
            with stats.lock:
                stats.post.append(self._posted - started)
                stats.submit.append(finished - scheduled)
                stats.timeline.append((scheduled, finished - scheduled))
                stats.lag.append(max(0.0, started - scheduled))
                stats.judgments += len(answers)
        except Exception as exc:  # noqa: BLE001 - counted
            stats.error(f"submit: {type(exc).__name__}: {exc}"[:80])
            self.conn = None
            self.docs = []


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def p95_all(stats: Stats) -> float:
    """p95 over every arrival of the step: failed and dropped ones count as infinitely late."""
    return _pct(stats.submit + [math.inf] * (stats.errors + stats.dropped), 0.95)


def run_step(annotators: list[Annotator], rate: float, duration: float, hit_size: int, seed: int,
             drain: float = 30.0) -> Stats:
    stats = Stats()
    arrivals: queue.Queue[float | None] = queue.Queue()

    def serve(annotator: Annotator) -> None:
        # Each annotator takes a HIT before the clock starts; from the second step on they are still on
        # the page of the HIT they were given last (claiming again would only resume it, and those 3 x 200
        # requests would land in the step's first seconds: the ready-wait below counts annotators with a HIT).
        if not annotator.docs:
            annotator.claim(stats)
        while True:
            scheduled = arrivals.get()
            if scheduled is None:
                return
            annotator.submit(scheduled, stats)

    # The claims are timed on their own (claim_before), not as submits.
    threads = [threading.Thread(target=serve, args=(a,), daemon=True) for a in annotators]
    for t in threads:
        t.start()
    ready_by = time.perf_counter() + 60
    while sum(1 for a in annotators if a.docs) + stats.errors + stats.no_hit < len(annotators) \
            and time.perf_counter() < ready_by:
        time.sleep(0.2)
    stats.claim_before = list(stats.claim)
    for values in (stats.submit, stats.post, stats.next, stats.lag, stats.timeline):
        values.clear()
    stats.judgments = 0
    rng = random.Random(seed)
    hits_per_second = rate / hit_size
    start = time.perf_counter()
    at = start
    while True:
        at += rng.expovariate(hits_per_second)
        if at - start > duration:
            break
        delay = at - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        arrivals.put(at)
    # Let the queue drain for at most `drain` seconds: arrivals served by then count (late); the rest are
    # dropped and reported, so a server far below the offered rate cannot spill into the next step.
    deadline = time.perf_counter() + drain
    while not arrivals.empty() and time.perf_counter() < deadline:
        time.sleep(0.1)
    while True:
        try:
            arrivals.get_nowait()
            stats.dropped += 1
        except queue.Empty:
            break
    for _ in threads:
        arrivals.put(None)
    for t in threads:
        t.join(timeout=max(0.1, deadline + 60 - time.perf_counter()))
    stats.elapsed = time.perf_counter() - start
    stats.timeline = [(at - start, latency) for at, latency in stats.timeline]
    return stats


def timeline_report(stats: Stats, window: float = 5.0) -> str:
    """Submit latency p50/p95 (ms) and served judgments per window of arrivals: where a step's tail comes from."""
    rows = []
    end = max((at for at, _ in stats.timeline), default=0.0)
    start = 0.0
    while start <= end:
        inside = [latency for at, latency in stats.timeline if start <= at < start + window]
        rows.append(f"{start:4.0f}s n={len(inside):3d} p50={_pct(inside, 0.5):6.0f} p95={_pct(inside, 0.95):6.0f}")
        start += window
    return "    " + "\n    ".join(rows)


def _wait_ready(port: int, proc: subprocess.Popen, timeout: float = 300, name: str = "gunicorn") -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            sys.exit(f"{name} exited with {proc.returncode}")
        try:
            conn = http.client.HTTPConnection(HOST, port, timeout=2)
            conn.request("GET", "/accounts/login/", headers={"Host": f"{HOST}:{port}"})
            if conn.getresponse().status < 500:
                return
        except OSError:
            pass
        time.sleep(0.3)
    sys.exit(f"{name} did not answer on port {port} within {timeout:.0f} s")


def _check(topic_id: int, sent: dict[tuple[int, int], bool]) -> str:
    from django.db.models import Count

    from annotation.models import Judgment

    judgments = Judgment.objects.filter(topic_id=topic_id)
    over = judgments.values("document_id").annotate(n=Count("pk")).filter(n__gt=3).count()
    dup = judgments.values("assignment_id", "document_id").annotate(n=Count("pk")).filter(n__gt=1).count()
    stored = {(a, d): r for a, d, r in judgments.values_list("assignment_id", "document_id", "relevant")}
    lost = sum(1 for key, value in sent.items() if stored.get(key) != value)
    return (f"check: {len(stored):,} judgments stored, {len(sent):,} sent and acknowledged, lost {lost}, "
            f"documents with > 3 judgments {over}, duplicate judgments {dup}")


def arguments_add(parser: argparse.ArgumentParser) -> None:
    """The arguments a side-by-side benchmark shares with this one (bench/bench_label_studio.py)."""
    parser.add_argument("--database", default="w5", help="PostgreSQL database to DROP and recreate")
    parser.add_argument("--redis-db", type=int, default=10)
    parser.add_argument("--rates", default="100,150,200,250", help="offered judgments/s, one step each")
    parser.add_argument("--duration", type=float, default=20.0)
    parser.add_argument("--annotators", type=int, default=200)
    parser.add_argument("--workers", type=int, default=4, help="gunicorn workers")
    parser.add_argument("--threads", type=int, default=1, help="threads per gunicorn worker (> 1: gthread)")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--text-chars", type=int, default=1200, help="characters per document")


def app_prepare(args: argparse.Namespace) -> tuple[dict[str, str], int, list[str]]:
    """Fresh database, migrated, static files collected, the topic and the annotators' sessions."""
    args.secret_key = secrets.token_urlsafe(60)
    rates = [float(r) for r in args.rates.split(",")]
    env = _env(args)
    os.environ.update(env)

    _recreate_database(args.database)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    pathlib.Path(env["APP_VAR_DIR"]).mkdir(parents=True, exist_ok=True)
    call_command("collectstatic", interactive=False, verbosity=0)
    from django.conf import settings

    steps = len(getattr(args, "roots", "x").split(",")) * 2 * getattr(args, "rounds", 1)
    hit_size = getattr(args, "hit_size", 5)
    needed = int(sum(rates) * args.duration * 1.3 * steps / 3) + args.annotators * hit_size * 2 * len(rates) * steps
    topic_id, keys = _build(sample_documents=needed, annotators=args.annotators, text_chars=args.text_chars,
                            hit_size=getattr(args, "hit_size", 5))
    from django.db import connection

    connection.close()
    print(f"session engine: {settings.SESSION_ENGINE}; cache: {settings.CACHES['default']['BACKEND']}; "
          f"permission cache {settings.AUTH_PERMISSION_CACHE_SECONDS} s; gunicorn {args.workers} workers x "
          f"{args.threads} threads; {args.annotators} annotators; {args.duration:.0f} s per step", flush=True)
    return env, topic_id, keys


def gunicorn_command(gunicorn: str, app: str, *, port: int, workers: int, threads: int) -> list[str]:
    command = [gunicorn, app, "--bind", f"{HOST}:{port}", "--workers", str(workers), "--log-level", "warning"]
    if threads > 1:
        command += ["--worker-class", "gthread", "--threads", str(threads)]
    return command


def server_start(command: list[str], *, port: int, cwd: str | pathlib.Path, env: dict[str, str],
                 name: str = "gunicorn") -> subprocess.Popen:
    """Start a server in its own process group; refuse a port already answering (an old server left behind)."""
    try:
        socket.create_connection((HOST, port), timeout=1).close()
        sys.exit(f"port {port} is in use: stop what listens there first")
    except OSError:
        pass
    server = subprocess.Popen(command, cwd=cwd, env=env, start_new_session=True)
    try:
        _wait_ready(port, server, name=name)
    except BaseException:
        server_stop(server)
        raise
    return server


def app_start(args: argparse.Namespace, env: dict[str, str], root: pathlib.Path = ROOT) -> subprocess.Popen:
    return server_start(
        gunicorn_command(str(ROOT / ".venv/bin/gunicorn"), "config.wsgi:application", port=args.port,
                         workers=args.workers, threads=args.threads),
        port=args.port, cwd=root, env=env,
    )


def celery_start(env: dict[str, str], root: pathlib.Path = ROOT) -> list[subprocess.Popen]:
    """A Celery worker (prefork, CELERY_WORKER_CONCURRENCY processes) and beat, each in its own process group."""
    celery = str(ROOT / ".venv/bin/celery")
    schedule = pathlib.Path(env["APP_VAR_DIR"]) / f"celerybeat-{root.name}"
    worker = subprocess.Popen([celery, "-A", "config", "worker", "--loglevel", "warning", "--without-gossip",
                               "--without-mingle", "-n", f"bench-load-{os.getpid()}@%h"],
                              cwd=root, env=env, start_new_session=True, stdout=subprocess.DEVNULL)
    beat = subprocess.Popen([celery, "-A", "config", "beat", "--loglevel", "warning", "--schedule", str(schedule)],
                            cwd=root, env=env, start_new_session=True)
    time.sleep(4)  # the worker's pool forks and connects
    for proc in (worker, beat):
        if proc.poll() is not None:
            sys.exit(f"celery exited with {proc.returncode}")
    return [worker, beat]


_TICK = os.sysconf("SC_CLK_TCK")


def group_cpu_seconds(pgid: int) -> float:
    """CPU seconds (user + system) of the live processes of one process group, and of their reaped children."""
    total = 0.0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:  # fields[0] is the state: pgrp is the 5th field of stat, [2] here
            total += sum(int(x) for x in fields[11:15])  # utime, stime, cutime, cstime
    return total / _TICK


def server_stop(server: subprocess.Popen) -> None:
    if server.poll() is None:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=30)


def redis_flush(env: dict[str, str]) -> None:
    try:
        import redis

        redis.Redis.from_url(env["REDIS_URL"]).flushdb()
    except Exception as exc:  # noqa: BLE001 - only a clean-up
        print("redis clean-up failed:", exc)


STEP_HEADER = ("code/cycle | offered j/s | achieved j/s | submit p50/p95/p99 ms | p95 all | post p95 | next p95 | "
               "errors+dropped | server CPU % | recompute % of it | snapshots | 3rd judgment->snapshot p50/p95 ms | load")


def achieved_rate(stats: Stats, duration: float) -> float:
    return stats.judgments / max(duration, stats.elapsed)  # a backlog served late counts late


@dataclass
class StepServer:
    """What a step cost the server: CPU seconds of gunicorn and of Celery (worker + beat), snapshots, freshness."""

    web_cpu: float = 0.0
    celery_cpu: float = 0.0
    snapshots: int = 0
    fresh: list[float] = field(default_factory=list)


def step_report(rate: float, stats: Stats, duration: float, *, label: str = "", server: StepServer | None = None,
                wall: float = 0.0) -> str:
    """One table line for a step, and up to three lines of its most frequent errors."""
    load = os.getloadavg()[0]
    server = server or StepServer()
    cpu = server.web_cpu + server.celery_cpu
    cores = os.cpu_count() or 1
    share = f"{100 * server.celery_cpu / cpu:5.1f}" if cpu else "    -"
    lines = [
        f"{label:>10} | {rate:11.0f} | {achieved_rate(stats, duration):12.1f} | {_pct(stats.submit, .5):5.0f}/"
        f"{_pct(stats.submit, .95):5.0f}/{_pct(stats.submit, .99):5.0f} | {p95_all(stats):7.0f} | "
        f"{_pct(stats.post, .95):8.0f} | {_pct(stats.next, .95):8.0f} | {stats.errors:6d}+{stats.dropped:<6d} | "
        f"{100 * cpu / max(wall, 1e-9) / cores:12.0f} | {share:>17} | {server.snapshots:9d} | "
        f"{_pct(server.fresh, .5):6.0f}/{_pct(server.fresh, .95):6.0f} | {load:.2f}"
        f"{f'  (drained in {stats.elapsed:.1f} s)' if stats.elapsed > duration + 2 else ''}"
    ]
    for kind, count in sorted(stats.error_kinds.items(), key=lambda kv: -kv[1])[:3]:
        lines.append(f"      {count} x {kind}")
    if stats.dropped:
        lines.append(f"      {stats.dropped} arrivals dropped: no idle annotator within the drain time")
    if stats.no_hit:
        lines.append(f"      {stats.no_hit} pages without a HIT (none left for that annotator)")
    return "\n".join(lines)


def snapshots_since(topic_id: int, since, until) -> StepServer:
    """Snapshots stored in [since, until + 10 s], and for each document whose third judgment was stored in
    [since, until] (its label complete) the delay from that judgment to the first snapshot created after it
    (none within the window: infinitely late)."""
    import datetime as dt

    from django.db.models import Count, Max

    from annotation.models import Judgment
    from estimation.models import EstimateSnapshot

    late = until + dt.timedelta(seconds=10)
    created = sorted(EstimateSnapshot.objects.filter(topic_id=topic_id, created_at__gte=since, created_at__lte=late)
                     .values_list("created_at", flat=True))
    thirds = (Judgment.objects.filter(topic_id=topic_id).values("document_id")
              .annotate(n=Count("pk"), last=Max("created_at"))
              .filter(n__gte=3, last__gte=since, last__lte=until).values_list("last", flat=True))
    fresh = []
    for at in thirds:
        after = next((c for c in created if c >= at), None)
        fresh.append((after - at).total_seconds() if after else math.inf)
    return StepServer(snapshots=len(created), fresh=fresh)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    arguments_add(parser)
    parser.add_argument("--hit-size", type=int, default=5, help="documents per HIT")
    parser.add_argument("--cycles", default="script,swap", help="form, script, swap (see the docstring)")
    parser.add_argument("--roots", default="after=.",
                        help="name=path[@cycle+cycle] of the checkouts to serve, interleaved (cycles: default --cycles)")
    parser.add_argument("--rounds", type=int, default=1, help="repeat the whole interleaved sequence")
    parser.add_argument("--no-celery", action="store_true", help="no Celery worker or beat (the old bench)")
    parser.add_argument("--celery-concurrency", type=int, default=2)
    parser.add_argument("--timeline", action="store_true", help="per 5 s of each step: submits, p50, p95")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("terminated"))  # so the servers are stopped (finally)
    rates = [float(r) for r in args.rates.split(",")]
    cycles = args.cycles.split(",")
    roots = []
    for item in args.roots.split(","):
        name, _, rest = item.partition("=")
        path, _, own = rest.partition("@")
        roots.append((name, (ROOT / path).resolve(), own.split("+") if own else cycles))
    env, topic_id, keys = app_prepare(args)
    sent: dict[tuple[int, int], bool] = {}
    import datetime as dt

    print(f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC; {os.cpu_count()} cores; HITs of {args.hit_size}; "
          f"celery {'off' if args.no_celery else f'worker ({args.celery_concurrency} processes) + beat'}; "
          "roots " + ", ".join(f"{n}={p} ({'+'.join(c)})" for n, p, c in roots), flush=True)
    print(STEP_HEADER, flush=True)
    seed = 0
    try:
        for _round in range(args.rounds):
            for rate in rates:
                for name, root, root_cycles in roots:
                    server = app_start(args, env, root)
                    workers = [] if args.no_celery else celery_start(env, root)
                    try:
                        for cycle in root_cycles:
                            annotators = [Annotator(args.port, key, sent) for key in keys]
                            for annotator in annotators:
                                annotator.cycle = cycle
                            since = dt.datetime.now(dt.UTC)
                            cpu0 = group_cpu_seconds(server.pid), sum(group_cpu_seconds(w.pid) for w in workers)
                            wall0 = time.perf_counter()
                            stats = run_step(annotators, rate, args.duration, args.hit_size, seed=seed)
                            seed += 1
                            wall = time.perf_counter() - wall0
                            cpu1 = group_cpu_seconds(server.pid), sum(group_cpu_seconds(w.pid) for w in workers)
                            until = dt.datetime.now(dt.UTC)
                            time.sleep(3)  # the last labels' recompute
                            step = snapshots_since(topic_id, since, until)
                            step.web_cpu, step.celery_cpu = cpu1[0] - cpu0[0], cpu1[1] - cpu0[1]
                            print(step_report(rate, stats, args.duration, label=f"{name}/{cycle}", server=step,
                                              wall=wall), flush=True)
                            if args.timeline:
                                print(timeline_report(stats), flush=True)
                            for annotator in annotators:  # release the connections of this step's clients
                                if annotator.conn is not None:
                                    annotator.conn.close()
                    finally:
                        server_stop(server)
                        for worker in workers:
                            server_stop(worker)
        print(_check(topic_id, sent), flush=True)
    finally:
        redis_flush(env)


if __name__ == "__main__":
    main()
