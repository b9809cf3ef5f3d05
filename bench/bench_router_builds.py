"""Router builds (issue 15): what the request costs now, and what the task does. `python bench/bench_router_builds.py
--documents 50000`.

On a seeded corpus of N documents (bench_routers.py's corpus_build: ~60 words each, half naming a topic term):
  * keyword router, 4 rules: the request (`router_build_start`: checks, the row, the queue call — the queue is
    stubbed, as a broker would take it) and the task (`router_build_run`: the scan with a progress UPDATE per
    5,000 documents, then the store), against `router_create_from_keywords` (what the request did before);
  * uploaded router, a CSV listing every document: the request (stream the file to MEDIA_ROOT, sha256, header)
    and the task (read, check every line, resolve ids, store).
Prints the load average with the figures: the machine may be shared.

Database: DATABASE_URL if set, else its own SQLite file var/bench/bench-router-builds.sqlite3.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import time

os.environ.setdefault(
    "DATABASE_URL",
    f"sqlite:///{pathlib.Path(__file__).resolve().parents[1] / 'var' / 'bench' / 'bench-router-builds.sqlite3'}",
)

from bench_routers import TOPIC_TERMS, corpus_build
from common import django_setup, timed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=50_000)
    parser.add_argument("--fresh", action="store_true")
    args = parser.parse_args()
    vendor = django_setup()

    from django.conf import settings

    from annotation import tasks_routers
    from annotation.models import Router, RouterBuild, Topic
    from annotation.services.classifiers import router_builds
    from annotation.services.classifiers.routers import router_create_from_keywords
    from annotation.services.topics.topic_sets import topic_set_create

    settings.CELERY_TASK_ALWAYS_EAGER = False
    queued: list[int] = []
    tasks_routers.router_build_task.delay = lambda *, build_id: queued.append(build_id)
    progress_writes = [0]
    original_progress = router_builds._progress_add

    def counting(build_id: int, count: int) -> None:
        progress_writes[0] += 1
        original_progress(build_id, count)

    router_builds._progress_add = counting

    corpus = corpus_build(args.documents, fresh=args.fresh)
    Topic.objects.filter(corpus=corpus).delete()
    topic = topic_set_create(corpus=corpus, name=f"bench-router-builds-{time.time_ns()}",
                             classes=[("Sport", ""), ("Politics", ""), ("Science", ""), ("Business", "")])
    rules = [{"class": position, "terms": terms, "fields": ["title", "text"]} for position, terms in TOPIC_TERMS.items()]
    print(f"database {vendor}, {args.documents:,} documents, load average {open('/proc/loadavg').read().split()[:3]}")

    build, start_s = timed(router_builds.router_build_start, topic=topic, name="kw", kind=Router.Kind.KEYWORDS,
                           rules=rules)
    _, run_s = timed(router_builds.router_build_run, build_id=build.pk)
    build.refresh_from_db()
    assert build.status == RouterBuild.Status.DONE, build.error
    sync, sync_s = timed(router_create_from_keywords, topic=topic, name="kw-sync", rules=rules)
    assert sync.fingerprint == build.router.fingerprint
    print(f"keyword router, 4 rules: request {start_s * 1000:.0f} ms (was {sync_s:.2f} s in the request); "
          f"task {run_s:.2f} s with {progress_writes[0]} progress writes; same fingerprint")

    lines = ["id,class"] + [f"r{i},{(i % 5)}" for i in range(args.documents)]
    data = ("\n".join(lines) + "\n").encode()
    chunks = [data[i:i + 64 * 1024] for i in range(0, len(data), 64 * 1024)]
    build, start_s = timed(router_builds.router_build_start, topic=topic, name="up", kind=Router.Kind.UPLOAD,
                           data=chunks, source_name="bench.csv")
    _, run_s = timed(router_builds.router_build_run, build_id=build.pk)
    build.refresh_from_db()
    assert build.status == RouterBuild.Status.DONE, build.error
    print(f"uploaded router, {args.documents:,} lines ({len(data) / 1e6:.1f} MB): request {start_s * 1000:.0f} ms; "
          f"task {run_s:.2f} s")
    print(f"queued {len(queued)} builds; load average after: {open('/proc/loadavg').read().split()[:3]}")


if __name__ == "__main__":
    main()
