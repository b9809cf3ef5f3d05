"""Open-loop load test of the annotator pages through HTTP: judgments/s at p95 latency (issue 15 item 8).

Run:  cd /work/main && .venv/bin/python bench/bench_load.py [--database w5] [--redis-db 10]
          [--rates 100,150,200,250] [--duration 20] [--annotators 200] [--workers 4] [--threads 1]
Target: >= 200 judgments/s with p95 submit <= 300 ms (five-document HITs, PostgreSQL, 2 cores).

What it does:
1. (Re)creates the PostgreSQL database ``--database`` (it must be a throw-away name: it is dropped),
   migrates it under the production settings and builds one sampling topic of five-document HITs
   (three places each), big enough for every step, plus ``--annotators`` accounts with the annotator
   role. Each account gets a signed-in session made directly in the session store (signing in
   200 accounts through the sign-in page would spend minutes of PBKDF2 and trip the throttle).
2. Starts gunicorn (``--workers`` sync workers; gthread ones with ``--threads`` > 1) with the production
   settings (DEBUG off, WhiteNoise, django-axes, CSP), DATABASE_URL on that database and REDIS_URL
   on ``--redis-db`` (so LabelsCompleted schedules real Celery messages, and the cache holds sessions
   and permission sets; no worker consumes the messages, the Redis database is flushed at the end).
   SSL redirect is off (no TLS proxy on loopback); the client keeps its own cookies, so the Secure
   flag of the cookies does not matter.
3. For each offered rate (judgments/s), for ``--duration`` seconds: arrivals are Poisson at
   rate/hit-size HITs per second (open loop: the schedule never waits for the server). Each
   arrival is served by an idle virtual annotator (one thread each, std-lib http.client: no
   aiohttp or httpx in this venv) who submits the five answers of the HIT on its screen with the
   CSRF token of that page, exactly as the form posts them ("Submit and take the next HIT"), and
   follows the answer to the next HIT's page. Latencies:

   * submit  — from the arrival's scheduled time (so queueing in the client counts: no
     coordinated omission) until the next HIT's page is on screen, all requests included;
   * post    — the POST alone; next — the GET of the next HIT's page after a redirect (none when
     the POST renders it directly);
   * claim   — "Take the next HIT" from the home page (each annotator's first HIT of a step).

   A cycle that fails (status >= 400, a page without a HIT, a connection error) counts as an
   error; the achieved rate counts only judgments of successful submits.
4. After all steps: judgments stored, documents with more than three judgments (must be 0),
   duplicate (assignment, document) pairs (must be 0), and the answers the client sent that
   are not in the database (must be 0).
"""
from __future__ import annotations

import argparse
import http.client
import json
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
    }


# --------------------------------------------------------------------------- set-up (in this process)


def _recreate_database(name: str) -> None:
    import psycopg

    with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def _build(*, sample_documents: int, annotators: int, text_chars: int) -> tuple[int, list[str]]:
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
    topic = Topic.objects.create(corpus=corpus, name="bench-load-topic", hit_size=5,
                                 instructions="Is the document about recall estimation?")
    ClassifierPair.objects.create(topic=topic, c1=c1, c2=c2)
    samples_launch(topic=topic, per_region=sample_documents // 3, seed=1)
    hits = Hit.objects.filter(topic=topic).count()
    print(f"built: {n:,} documents, {hits:,} HITs of 5 documents ({hits * 3:,} places)", flush=True)

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

    def submit(self, scheduled: float, stats: Stats) -> None:
        if not self.docs and not self.claim(stats):
            return
        body = {"csrfmiddlewaretoken": self.csrf, "then": "next"}
        answers = {doc: (doc * 7919) % 3 == 0 for doc in self.docs}
        body.update({f"doc-{doc}": "1" if value else "0" for doc, value in answers.items()})
        assignment = int(re.search(r"/assignments/(\d+)/", self.page_url).group(1))  # type: ignore[union-attr]
        try:
            started = time.perf_counter()
            status, location, text = self._request("POST", self.page_url, body)
            posted = time.perf_counter()
            if status >= 400:
                raise RuntimeError(f"submit HTTP {status}")
            for doc, value in answers.items():
                self.sent[(assignment, doc)] = value
            done = len(answers)
            self._follow(status, location, self.page_url, text, stats, "next")
            finished = time.perf_counter()
            with stats.lock:
                stats.post.append(posted - started)
                stats.submit.append(finished - scheduled)
                stats.timeline.append((scheduled, finished - scheduled))
                stats.lag.append(max(0.0, started - scheduled))
                stats.judgments += done
        except Exception as exc:  # noqa: BLE001 - counted
            stats.error(f"submit: {type(exc).__name__}: {exc}"[:80])
            self.conn = None
            self.docs = []


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


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

    needed = int(sum(rates) * args.duration * 1.3 / 3) + args.annotators * 5 * 2 * len(rates)
    topic_id, keys = _build(sample_documents=needed, annotators=args.annotators, text_chars=args.text_chars)
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


def app_start(args: argparse.Namespace, env: dict[str, str]) -> subprocess.Popen:
    return server_start(
        gunicorn_command(str(ROOT / ".venv/bin/gunicorn"), "config.wsgi:application", port=args.port,
                         workers=args.workers, threads=args.threads),
        port=args.port, cwd=ROOT, env=env,
    )


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


STEP_HEADER = ("offered j/s | achieved j/s | submit p50/p95/p99 ms | post p95 | next p95 | claim p95 | "
               "client lag p95 | errors | load")


def achieved_rate(stats: Stats, duration: float) -> float:
    return stats.judgments / max(duration, stats.elapsed)  # a backlog served late counts late


def step_report(rate: float, stats: Stats, duration: float) -> str:
    """One table line for a step, and up to three lines of its most frequent errors."""
    load = os.getloadavg()[0]
    lines = [
        f"{rate:11.0f} | {achieved_rate(stats, duration):12.1f} | {_pct(stats.submit, .5):5.0f}/"
        f"{_pct(stats.submit, .95):5.0f}/{_pct(stats.submit, .99):5.0f} | {_pct(stats.post, .95):8.0f} | "
        f"{_pct(stats.next, .95):8.0f} | {_pct(stats.claim_before, .95):9.0f} | {_pct(stats.lag, .95):14.0f} | "
        f"{stats.errors:6d} | {load:.2f}"
        f"{f'  (drained in {stats.elapsed:.1f} s)' if stats.elapsed > duration + 2 else ''}"
    ]
    for kind, count in sorted(stats.error_kinds.items(), key=lambda kv: -kv[1])[:3]:
        lines.append(f"      {count} x {kind}")
    if stats.dropped:
        lines.append(f"      {stats.dropped} arrivals dropped: no idle annotator within the drain time")
    if stats.no_hit:
        lines.append(f"      {stats.no_hit} pages without a HIT (none left for that annotator)")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    arguments_add(parser)
    parser.add_argument("--keep-server", action="store_true", help="leave gunicorn running (prints its pid)")
    parser.add_argument("--timeline", action="store_true", help="per 5 s of each step: submits, p50, p95")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("terminated"))  # so the servers are stopped (finally)
    rates = [float(r) for r in args.rates.split(",")]
    env, topic_id, keys = app_prepare(args)
    server = app_start(args, env)
    sent: dict[tuple[int, int], bool] = {}
    try:
        annotators = [Annotator(args.port, key, sent) for key in keys]
        print(STEP_HEADER, flush=True)
        for i, rate in enumerate(rates):
            stats = run_step(annotators, rate, args.duration, 5, seed=i)
            print(step_report(rate, stats, args.duration), flush=True)
            if args.timeline:
                print(timeline_report(stats), flush=True)
        print(_check(topic_id, sent), flush=True)
    finally:
        if args.keep_server:
            print(f"gunicorn pid {server.pid}")
        else:
            server_stop(server)
        redis_flush(env)


if __name__ == "__main__":
    main()
