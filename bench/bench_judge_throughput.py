"""Model judge throughput against a local fake endpoint: `python bench/bench_judge_throughput.py [--documents 2000]
[--latency 0.05] [--concurrency 8]`.

Target (issue 28): >= 50 documents/s with bounded concurrency.

What is timed: the run's own code path — ``annotation.services.crowd.model_judge.model_judge_run_execute`` on a
launched run (the thread pool of MODEL_JUDGE_CONCURRENCY requests in flight, ``judge_ask`` over urllib, one
transaction per batch of 50 answers) — against a chat-completions server thread on 127.0.0.1 that waits
``--latency`` seconds per request (a model's think time) and answers; every 20th document gets a 429 with
Retry-After: 0 first.  The peak number of requests in flight at the server is printed (it must not exceed the
concurrency).  Set-up (corpus, pair, launch) is untimed.  Database: DATABASE_URL, else var/bench/bench.sqlite3.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Fake:
    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.in_flight = 0
        self.peak = 0
        self.requests = 0
        self.lock = threading.Lock()
        self.seen: set[str] = set()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                title = body["messages"][1]["content"].split("Document title: ", 1)[1].split("\n", 1)[0]
                with fake.lock:
                    fake.in_flight += 1
                    fake.peak = max(fake.peak, fake.in_flight)
                    fake.requests += 1
                    first = title not in fake.seen
                    fake.seen.add(title)
                limited = first and hash(title) % 20 == 0
                if not limited:
                    time.sleep(fake.latency)
                # Leaves the count before the reply is written: the client may send its next request as soon as
                # it reads this one, so counting after the write would over-count by a request in transit.
                with fake.lock:
                    fake.in_flight -= 1
                if limited:
                    self.send_response(429)
                    self.send_header("Retry-After", "0")
                    self.end_headers()
                    return
                data = json.dumps({"choices": [{"message": {"content": '{"relevant": false, "probability": 0.2}'}}],
                                   "usage": {"prompt_tokens": 300, "completion_tokens": 12}}).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.request_queue_size = 128
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()

    from common import django_setup  # bench/ is on sys.path when run as a script, as for every bench script

    django_setup()
    from django.conf import settings
    from django.db import connection

    from annotation.models import ModelJudgeRun, ModelJudgment
    from annotation.services.crowd.model_judge import (
        model_judge_launch,
        model_judge_quote,
        model_judge_run_execute,
    )
    from tests.factories import make_pair_world

    fake = Fake(args.latency)
    settings.MODEL_JUDGE_BASE_URL = fake.url
    settings.MODEL_JUDGE_MODEL = "fake"
    settings.MODEL_JUDGE_CONCURRENCY = args.concurrency
    settings.MODEL_JUDGE_BACKOFF = 0.01
    settings.MODEL_JUDGE_MAX_WAIT = 0.05
    settings.CELERY_TASK_ALWAYS_EAGER = False  # the launch only queues; the run is timed below
    world = make_pair_world(n=max(3000, args.documents * 12), prevalence=0.1, noise=0.02, seed=1,
                            topic_name=f"bench-judge-{time.time_ns()}")
    quarter = args.documents // 4
    plan = {"A12": quarter, "B1": quarter, "B2": quarter, "N": args.documents - 3 * quarter}
    quote = model_judge_quote(topic=world.topic, plan=plan)
    run = model_judge_launch(topic_id=world.topic.pk, plan=plan, confirm_cost=quote.cost, enqueue=lambda rid: None)
    t0 = time.perf_counter()
    model_judge_run_execute(run_id=run.pk)
    elapsed = time.perf_counter() - t0
    run = ModelJudgeRun.objects.get(pk=run.pk)
    ok = ModelJudgment.objects.filter(run=run, status="ok").count()
    with open("/proc/loadavg") as fh:
        load = " ".join(fh.read().split()[:3])
    print(f"# bench_judge_throughput {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, load {load}, "
          f"database {connection.vendor}")
    print(f"documents {run.total} (answered {ok}, status {run.status}), latency {args.latency * 1000:.0f} ms, "
          f"concurrency {args.concurrency}: {elapsed:.2f} s, {run.total / elapsed:.1f} documents/s; "
          f"requests {fake.requests} (429 retried), peak in flight {fake.peak}; tokens "
          f"{run.prompt_tokens + run.completion_tokens}")


if __name__ == "__main__":
    main()
