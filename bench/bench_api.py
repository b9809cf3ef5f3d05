"""The REST API's speed: `python bench/bench_api.py [--ids 1000000] [--reads 50] [--clients 4] [--seconds 10]`.

Targets (issue 14): an upload of 1,000,000 retrieved ids through the API <= 10 s; a report read <= 50 ms.

Throughput (`--clients N`, 0 to skip): N concurrent clients (threads, each a new HTTP connection per request,
as the command-line client does) call one endpoint for `--seconds` against **gunicorn** started here with the
production settings (`config.settings.production`, `--workers` sync workers, SSL redirect off since the bench
speaks plain HTTP to 127.0.0.1, token throttling off so the figure is the server's, not the rate limit's):
requests/s, p50 and p95 latency for the report read, the topic list and a judgments page (50 rows).

Both go over real HTTP: the Django WSGI application is served on 127.0.0.1 (an ephemeral port, wsgiref)
and called with a bearer token by the command-line client's own `Client` (clients/recall-cli), so the
figures include the HTTP layer, authentication and JSON. Set-up is untimed: a corpus "bench-api-<N>" of N
minimal documents (raw SQL, reused across runs), and a small topic with a simulated crowd whose report is
read. Database: DATABASE_URL, else var/bench/bench.sqlite3 (bench/common.py).
"""
from __future__ import annotations

import argparse
import hashlib
import os
import secrets
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from dataclasses import dataclass
from wsgiref.simple_server import WSGIRequestHandler, make_server

from common import BENCH_DIR, ROOT, django_setup, verdict

sys.path.insert(0, str(ROOT / "clients" / "recall-cli"))


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format, *args):  # the stdlib's signature
        pass


def corpus_ensure(name: str, documents: int, *, relevant_every: int = 0):
    """A corpus of `documents` one-line documents d0..d{N-1}, inserted with plain SQL (untimed); with
    `relevant_every` k, every k-th document is on topic "wheat" (metadata {"topics": ["wheat"]})."""
    from django.db import connection, transaction

    from annotation.models import Corpus
    from annotation.services.corpora.corpus_import import corpus_totals_refresh

    corpus = Corpus.objects.filter(name=name).first()
    if corpus is not None and corpus.document_count == documents:
        return corpus
    started = time.monotonic()
    corpus = corpus or Corpus.objects.create(name=name)
    batch = 50_000
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("DELETE FROM annotation_document WHERE corpus_id = %s", [corpus.pk])
        for start in range(0, documents, batch):
            rows = [(corpus.pk, f"d{i}", f"Title {i}", f"Text of document {i}.",
                     '{"topics": ["wheat"]}' if relevant_every and i % relevant_every == 0 else "{}",
                     hashlib.sha256(str(i).encode()).hexdigest()) for i in range(start, min(documents, start + batch))]
            cursor.executemany("INSERT INTO annotation_document (corpus_id, external_id, title, text, metadata, "
                               "content_hash) VALUES (%s, %s, %s, %s, %s, %s)", rows)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:  # planner statistics, as after a real import (autovacuum would, later)
            cursor.execute("ANALYZE annotation_document")
    corpus_totals_refresh(corpus=corpus)
    corpus.refresh_from_db()
    print(f"(corpus {name}: {corpus.document_count:,} documents inserted in {time.monotonic() - started:.0f} s, "
          "untimed)")
    return corpus


def report_topic():
    """A 3,000-document topic whose sample a simulated crowd judged, with its report snapshot (untimed)."""
    from annotation.models import Topic
    from annotation.services.classifiers.classifier import classifier_create_from_ids
    from annotation.services.crowd.crowd_simulation import crowd_simulate
    from annotation.services.sampling.draws import samples_launch
    from annotation.services.topics.topic import topic_create
    from estimation.services.recompute import topic_snapshot_create

    name = "bench-api-report"
    topic = Topic.objects.filter(name=name).first()
    if topic is None:
        corpus = corpus_ensure("bench-api-report", 3000, relevant_every=3)
        classifiers = []
        for label, ids in (("c1", range(0, 1500)), ("c2", range(1000, 2200))):
            path = BENCH_DIR / f"bench-api-{label}.txt"
            path.write_text("".join(f"d{i}\n" for i in ids))
            classifiers.append(classifier_create_from_ids(corpus=corpus, name=f"bench-api-{label}",
                                                          path=path).classifier)
        topic = topic_create(corpus=corpus, name=name, c1=classifiers[0], c2=classifiers[1])
        samples_launch(topic=topic, half_width=0.1, seed=1)
        crowd_simulate(topic=topic, truth_field="topics", truth_value="wheat", accuracy=0.95, workers=9)
    topic_snapshot_create(topic_id=topic.pk)
    return topic


def gunicorn_start(workers: int) -> tuple[subprocess.Popen, str]:
    """gunicorn on a free port of 127.0.0.1 with the production settings and this bench's database."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings.production",
           "DJANGO_SECRET_KEY": secrets.token_urlsafe(64), "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
           "DJANGO_SECURE_SSL_REDIRECT": "0", "API_TOKEN_THROTTLE_RATE": "", "PYTHONUNBUFFERED": "1"}
    log = open(BENCH_DIR / "bench-api-gunicorn.log", "ab")  # closed with the process
    process = subprocess.Popen([str(ROOT / ".venv" / "bin" / "gunicorn"), "config.wsgi:application",
                                "--bind", f"127.0.0.1:{port}", "--workers", str(workers), "--timeout", "120"],
                               cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"gunicorn exited ({process.returncode}); see {log.name}")
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=5):
                return process, base
        except OSError:
            time.sleep(0.5)
    process.terminate()
    raise SystemExit("gunicorn did not answer within 90 s")


@dataclass
class Load:
    requests: int
    errors: int
    seconds: float
    latencies: list[float]

    @property
    def rate(self) -> float:
        return self.requests / self.seconds

    def quantile(self, q: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def load_run(client_class, base: str, token: str, path: str, *, clients: int, seconds: float) -> Load:
    """`clients` threads GET `path` in a loop for `seconds`; every request's latency is kept."""
    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()
    start_gate = threading.Barrier(clients + 1)

    def run() -> None:
        client = client_class(base, token, timeout=60)
        mine: list[float] = []
        failed = 0
        start_gate.wait()
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            try:
                client.get(path)
            except Exception:  # noqa: BLE001 - counted, reported
                failed += 1
                continue
            mine.append(time.perf_counter() - started)
        with lock:
            latencies.extend(mine)
            errors[0] += failed

    threads = [threading.Thread(target=run) for _ in range(clients)]
    for thread in threads:
        thread.start()
    began = time.perf_counter()
    deadline = began + seconds
    start_gate.wait()
    for thread in threads:
        thread.join()
    return Load(requests=len(latencies), errors=errors[0], seconds=time.perf_counter() - began, latencies=latencies)


def throughput(client_class, token: str, topic, *, vendor: str, clients: int, seconds: float, workers: int) -> None:
    process, base = gunicorn_start(workers)
    try:
        endpoints = (("report read", f"/api/v1/topics/{topic.pk}/report/"),
                     ("topic list", "/api/v1/topics/"),
                     ("judgments page", f"/api/v1/topics/{topic.pk}/judgments/"))
        warm = client_class(base, token)
        for _, path in endpoints:
            for _ in range(2 * workers):
                warm.get(path)  # every worker has its connection and imports
        for label, path in endpoints:
            result = load_run(client_class, base, token, path, clients=clients, seconds=seconds)
            print(f"[{vendor}] throughput, {label} ({clients} clients, gunicorn {workers} sync workers, production "
                  f"settings): {result.rate:.0f} requests/s, p50 {result.quantile(0.5) * 1000:.1f} ms, "
                  f"p95 {result.quantile(0.95) * 1000:.1f} ms, {result.requests:,} requests in "
                  f"{result.seconds:.1f} s, {result.errors} errors")
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


def upload_run(client, *, vendor: str, ids: int) -> None:
    """POST `ids` retrieved ids as text/plain (streamed from a file) to a corpus of `ids` documents; timed."""
    from annotation.models import Classifier

    corpus = corpus_ensure(f"bench-api-{ids}", ids)
    ids_file = BENCH_DIR / f"bench-api-ids-{ids}.txt"
    if not ids_file.exists():
        ids_file.write_text("".join(f"d{i}\n" for i in range(ids)))
    name = f"bench-api-{uuid.uuid4().hex[:6]}"
    try:
        with ids_file.open("rb") as handle:
            started = time.perf_counter()
            result = client.request("POST", f"/api/v1/corpora/{corpus.pk}/classifiers/ids/", query={"name": name},
                                    body=handle, content_type="text/plain", length=ids_file.stat().st_size)
            seconds = time.perf_counter() - started
        print(f"[{vendor}] upload of {result['read']:,} ids ({ids_file.stat().st_size / 2**20:.1f} MiB) through the "
              f"API: {seconds:.2f} s, {result['classifier']['retrieved_count']:,} retrieved; {verdict(seconds, 10.0)}")
    finally:
        Classifier.objects.filter(corpus=corpus, name=name).delete()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ids", type=int, default=1_000_000, help="retrieved ids to upload (and corpus size)")
    parser.add_argument("--reads", type=int, default=50, help="report reads timed")
    parser.add_argument("--clients", type=int, default=4, help="concurrent clients of the throughput run (0: skip)")
    parser.add_argument("--seconds", type=float, default=10.0, help="duration of each throughput run")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers of the throughput run")
    parser.add_argument("--skip-upload", action="store_true", help="skip the 1M-id upload")
    args = parser.parse_args()
    vendor = django_setup()
    from django.contrib.auth import get_user_model
    from django.core.wsgi import get_wsgi_application
    from recall_cli.cli import Client

    from annotation.roles import roles_ensure
    from api.services import api_token_create

    user, _ = get_user_model().objects.get_or_create(username="bench-api")
    user.groups.add(roles_ensure()["analyst"])
    token = api_token_create(user=user, name=f"bench {uuid.uuid4().hex[:6]}").plaintext

    server = make_server("127.0.0.1", 0, get_wsgi_application(), handler_class=_QuietHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    client = Client(f"http://127.0.0.1:{server.server_port}", token)

    if not args.skip_upload:
        upload_run(client, vendor=vendor, ids=args.ids)

    topic = report_topic()
    path = f"/api/v1/topics/{topic.pk}/report/"
    client.get(path)  # warm
    times = []
    for _ in range(args.reads):
        started = time.perf_counter()
        body = client.get(path)
        times.append(time.perf_counter() - started)
    median, p95 = statistics.median(times), sorted(times)[int(0.95 * (len(times) - 1))]
    print(f"[{vendor}] report read (version {body['snapshot']['version']}, {len(str(body)):,} characters): median "
          f"{median * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms over {args.reads}; {verdict(median, 0.050)}")
    server.shutdown()
    if args.clients > 0:
        throughput(Client, token, topic, vendor=vendor, clients=args.clients, seconds=args.seconds,
                   workers=args.workers)


if __name__ == "__main__":
    main()
