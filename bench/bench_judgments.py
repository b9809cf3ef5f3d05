"""100 simulated annotators claiming and submitting HITs through the service layer, on PostgreSQL.

Run:  cd /work/main && DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_crowd \
          python bench/bench_judgments.py [--annotators 100] [--processes 2] [--documents 3000]
          [--redis-url redis://127.0.0.1:6379/13]
Target: >= 300 judgments/s (2 cores).

Each annotator loops assignment_claim → assignment_submit (5 documents per HIT,
3 assignments per HIT) until no HIT is left. As behind a web server, the 100
annotators are served by a fixed pool: `--processes` processes × `--threads`
threads, each thread with its own database connection, taking turns of waiting
annotators (one turn = take a HIT + submit it). 100 threads with 100
connections would exceed PostgreSQL's default max_connections (100) and is not
how the pages are served. A throw-away database test_<name> is created and
destroyed.

Recompute scheduling: by default `topic_recompute_schedule` is replaced by a
counter, because with no broker the test settings run the recompute task
eagerly inside the submitting thread, which production never does. With
`--redis-url` the real scheduling runs against that Redis (SET NX flag +
enqueue, no worker consuming; the queue is purged at the end) — the web path's
true cost.
"""
from __future__ import annotations

import argparse
import collections
import hashlib
import multiprocessing
import os
import pathlib
import sys
import threading
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
if "--redis-url" not in sys.argv:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")


def _setup_django(redis_url: str | None):
    if redis_url:
        # The test settings force eager tasks; the local settings follow REDIS_URL like production.
        os.environ["REDIS_URL"] = redis_url
        os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.local"
        os.environ["DJANGO_DEBUG"] = "0"
    import django

    django.setup()
    if not redis_url:
        import estimation.receivers as receivers
        import estimation.services.recompute as recompute

        # The label event's receiver imported the scheduler by name: replace it there too,
        # or the eager test settings run every recompute inside the submitting thread.
        def no_recompute(*, topic_id: int) -> None:
            return None

        recompute.topic_recompute_schedule = no_recompute
        receivers.topic_recompute_schedule = no_recompute


def _build(documents: int, annotators: int) -> int:
    from django.contrib.auth import get_user_model

    from annotation.models import Classifier, ClassifierPair, Corpus, Document, Topic, Worker
    from annotation.services.corpora.retrieved_sets import bitmap_from_ids, bitmap_to_bytes
    from annotation.services.sampling.draws import samples_launch

    corpus = Corpus.objects.create(name="bench")
    n = documents * 4
    Document.objects.bulk_create(
        (
            Document(corpus=corpus, external_id=f"d{i}", title=f"t{i}", text="x " * 50,
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
    topic = Topic.objects.create(corpus=corpus, name="bench-topic", status=Topic.Status.ACTIVE)
    ClassifierPair.objects.create(topic=topic, c1=c1, c2=c2)
    samples_launch(topic=topic, per_region=documents // 3, seed=1)
    User = get_user_model()
    users = User.objects.bulk_create([User(username=f"bench-{i:03d}") for i in range(annotators)])
    Worker.objects.bulk_create([Worker(user=u) for u in users])
    return topic.pk


def _annotate_in_process(worker_ids: list[int], topic_id: int, db_name: str, redis_url: str | None,
                         server_threads: int, start_at: float, queue):
    """Serve this process's annotators with `server_threads` threads (one DB connection each)."""
    _setup_django(redis_url)
    from django.db import connection, connections

    connections["default"].settings_dict["NAME"] = db_name
    from annotation.models import HitItem, Topic, Worker
    from annotation.services.crowd.assignments import assignment_claim, assignment_submit

    topic = Topic.objects.get(pk=topic_id)
    waiting = collections.deque(Worker.objects.filter(pk__in=worker_ids))
    lock = threading.Lock()
    connection.close()
    counts = []
    errors = []

    def serve():
        made = 0
        try:
            while time.time() < start_at:
                time.sleep(0.001)
            while True:
                with lock:
                    if not waiting:
                        return
                    worker = waiting.popleft()
                # One annotator's turn: take a HIT and submit it (two requests of the real pages).
                assignment = assignment_claim(worker=worker, topic=topic)
                if assignment is None:
                    continue  # nothing left this annotator may take: they leave
                docs = HitItem.objects.filter(hit_id=assignment.hit_id).values_list("document_id", flat=True)
                result = assignment_submit(assignment_id=assignment.pk, worker=worker,
                                           answers={d: d % 3 == 0 for d in docs})
                made += result.judgments
                with lock:
                    waiting.append(worker)
        except Exception as exc:  # noqa: BLE001 - reported
            errors.append(repr(exc))
        finally:
            counts.append(made)
            connection.close()

    threads = [threading.Thread(target=serve) for _ in range(server_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    queue.put((sum(counts), time.time(), errors))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--annotators", type=int, default=100)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--threads", type=int, default=12, help="server threads (DB connections) per process")
    parser.add_argument("--documents", type=int, default=3000)
    parser.add_argument("--redis-url", default=None)
    args = parser.parse_args()

    _setup_django(args.redis_url)
    from django.db import connection

    from annotation.models import Hit, Judgment, Label, Worker

    if connection.vendor != "postgresql":
        sys.exit("bench_judgments needs PostgreSQL: set DATABASE_URL=postgres://...")
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    db_name = connection.settings_dict["NAME"]
    try:
        topic_id = _build(args.documents, args.annotators)
        worker_ids = list(Worker.objects.order_by("pk").values_list("pk", flat=True))
        hits = Hit.objects.filter(topic_id=topic_id).count()
        connection.close()
        print(f"{hits} HITs ({hits * 3} assignments) for {args.annotators} annotators served by "
              f"{args.processes} process(es) x {args.threads} threads"
              f"; recompute scheduling: {'real, Redis ' + args.redis_url if args.redis_url else 'counter (no-op)'}")
        context = multiprocessing.get_context("spawn")
        queue = context.Queue()
        start_at = time.time() + 3.0  # let every process import Django and connect first
        chunks = [worker_ids[i:: args.processes] for i in range(args.processes)]
        processes = [
            context.Process(target=_annotate_in_process,
                            args=(chunk, topic_id, db_name, args.redis_url, args.threads, start_at, queue))
            for chunk in chunks
        ]
        for p in processes:
            p.start()
        results = [queue.get() for _ in processes]
        for p in processes:
            p.join()
        judgments = sum(r[0] for r in results)
        finished = max(r[1] for r in results)
        errors = [e for r in results for e in r[2]]
        elapsed = finished - start_at
        stored = Judgment.objects.filter(topic_id=topic_id).count()
        complete = Label.objects.filter(topic_id=topic_id, votes_total=3).count()
        print(f"{judgments:,} judgments in {elapsed:.2f} s = {judgments / elapsed:,.0f} judgments/s  (target >= 300)")
        print(f"check: {stored:,} judgments stored, {complete:,} labels with three votes, errors: {len(errors)}")
        for e in errors[:5]:
            print("  ", e)
    finally:
        connection.close()
        connection.creation.destroy_test_db(old_name, verbosity=0)
        if args.redis_url:
            from config.celery import app

            app.control.purge()


if __name__ == "__main__":
    main()
