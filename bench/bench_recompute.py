"""Full recompute of one topic's report, and the latency from a label commit to a stored snapshot.

Run:  cd /work/main && python bench/bench_recompute.py
      DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_recompute \
      REDIS_URL=redis://127.0.0.1:6379/14 python bench/bench_recompute.py

Targets: full recompute (all estimators, the report's DEFAULT_DRAWS posterior draws) ≤ 200 ms with
1,500 judged documents on a 1,000,000-document corpus; third judgment → stored
snapshot ≤ 1 s with a real worker running.

What is built (in a throw-away test database — "test_" + the DATABASE_URL name —
created and destroyed by Django's test machinery):
* a corpus whose document_count is 1,000,000 and whose pair regions have the sizes
  of a 1,000,000-document corpus (|A12| = 5,000, |B1| = 20,000, |B2| = 25,000; two
  further classifiers of 15,000 and 40,000): region sizes come from bitmaps, so
  the bitmaps hold 1,000,000-scale id sets, while only the 1,650 sampled documents
  exist as Document rows (the gathering code never touches the others);
* 1,900 judged documents: A12 500, B1 350, B2 350, R 2 × 100, U 100 and a complement
  sample N (documents neither classifier retrieved: the dependence check, issue 11)
  of 400, each with a complete Label (majority of three; one in ten a split 2–1
  vote, so the label-noise widening runs) and three Judgment rows from 380 HITs /
  1,140 assignments; 150 more sampled documents without complete labels.  The
  corpus bitmap holds 1,000,000 ids (|N| is read from it).
Timed: the DB gathering (topic_inputs_gather), the statistics
(topic_report_from_inputs), the whole topic_report_build, and topic_snapshot_create
(gathers twice — once more under the row lock — checksums and writes).
The latency part needs REDIS_URL and PostgreSQL: it starts a real Celery worker
(in-process thread, solo pool) and measures commit of a label → snapshot visible.
"""
from __future__ import annotations

import os
import pathlib
import statistics
import sys
import time
from collections.abc import Callable
from typing import TypeVar

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.test"

SEED = 20261122
CORPUS_SIZE = 1_000_000
FAKE_ID_BASE = 10_000_000  # ids of the bitmap-only documents, far above the real rows
REPEATS = 15

_T = TypeVar("_T")


def _median_ms(fn: Callable[[], _T], repeats: int = REPEATS) -> tuple[float, float, _T]:
    """Median wall-clock and median CPU time (all threads of this process), in ms.

    CPU time is shown because the machine is shared: under load the wall clock
    includes time spent waiting for a core.
    """
    walls: list[float] = []
    cpus: list[float] = []
    results: list[_T] = []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        results.append(fn())
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls) * 1000, statistics.median(cpus) * 1000, results[-1]


def build(rng):
    from decimal import Decimal

    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from annotation.models import (
        Assignment,
        Classifier,
        ClassifierPair,
        Corpus,
        Document,
        Hit,
        Judgment,
        Label,
        SampledDocument,
        SampleDraw,
        Topic,
        TopicClassifier,
        Worker,
    )
    from annotation.services.corpora.retrieved_sets import bitmap_from_ids, bitmap_to_bytes

    corpus = Corpus.objects.create(name="bench-recompute", document_count=CORPUS_SIZE)
    Document.objects.bulk_create([
        Document(corpus=corpus, external_id=f"d{i}", title="t", text="x", content_hash=str(i)) for i in range(2_050)
    ], batch_size=1000)
    real = list(Document.objects.filter(corpus=corpus).order_by("pk").values_list("pk", flat=True))
    plan = {"A12": real[0:550], "B1": real[550:950], "B2": real[950:1350], "R1": real[1350:1450],
            "R2": real[1450:1550], "U": real[1550:1650], "N": real[1650:2050]}
    fake = iter(range(FAKE_ID_BASE, FAKE_ID_BASE + 10_000_000))
    # The corpus's 1,000,000 ids: the real rows and bitmap-only ids (every classifier's fakes are among them).
    corpus.documents_bitmap = bitmap_to_bytes(
        bitmap_from_ids(real + list(range(FAKE_ID_BASE, FAKE_ID_BASE + CORPUS_SIZE - len(real)))))
    corpus.save(update_fields=["documents_bitmap"])

    def fakes(n):
        return [next(fake) for _ in range(n)]

    a12 = plan["A12"] + fakes(5_000 - len(plan["A12"]))
    b1 = plan["B1"] + fakes(20_000 - len(plan["B1"]))
    b2 = plan["B2"] + fakes(25_000 - len(plan["B2"]))
    # Both further classifiers cut through the sampled strata, so every region of their
    # three-classifier diagrams has judged documents (capture-recapture runs).
    c3_ids = plan["R1"] + a12[250:2_250] + fakes(13_000 - 100)
    c4_ids = plan["R2"] + b1[200:5_200] + b2[200:5_200] + fakes(30_000 - 100)

    def classifier(name, ids):
        bitmap = bitmap_from_ids(ids)
        return Classifier.objects.create(corpus=corpus, name=name, kind="ids", fingerprint=name * 4,
                                         retrieved_bitmap=bitmap_to_bytes(bitmap), retrieved_count=len(bitmap))

    c1, c2 = classifier("c1", a12 + b1), classifier("c2", a12 + b2)
    c3, c4 = classifier("c3", c3_ids), classifier("c4", c4_ids)
    topic = Topic.objects.create(corpus=corpus, name="bench-recompute", reward_per_hit=Decimal("0.10"))
    ClassifierPair.objects.create(topic=topic, c1=c1, c2=c2)
    TopicClassifier.objects.create(topic=topic, classifier=c3)
    TopicClassifier.objects.create(topic=topic, classifier=c4)

    precision = {"A12": 0.85, "B1": 0.2, "B2": 0.15, "R1": 0.6, "R2": 0.3, "U": 0.02, "N": 0.01}
    sampled, labels = [], []
    for key, ids in plan.items():
        region = {"R1": "R", "R2": "R"}.get(key, key)
        draw = SampleDraw.objects.create(
            topic=topic, purpose={"R": "precision", "U": "uniform"}.get(region, "pair"), region=region,
            classifier={"R1": c3, "R2": c4}.get(key), seed=SEED, region_size=100, requested=len(ids), drawn=len(ids))
        judged = set(ids[:-50] if key in ("A12", "B1", "B2") else ids)  # 50 per pair region still open
        for doc in ids:
            sampled.append(SampledDocument(draw=draw, topic=topic, document_id=doc, region=region,
                                           inclusion_probability=0.01))
        for doc in ids:
            if doc in judged:
                relevant = bool(rng.random() < precision[key])
                split = bool(rng.random() < 0.1)  # a 2–1 vote
                votes = (2 if split else 3) if relevant else (1 if split else 0)
                labels.append(Label(topic=topic, document_id=doc, votes_relevant=votes, votes_total=3,
                                    majority=relevant))
            else:
                labels.append(Label(topic=topic, document_id=doc, votes_relevant=0, votes_total=1))
    SampledDocument.objects.bulk_create(sampled, batch_size=1000)
    Label.objects.bulk_create(labels, batch_size=1000)

    user_model = get_user_model()
    workers = [Worker.objects.create(user=user_model.objects.create(username=f"bench-w{i}")) for i in range(3)]
    complete = [label.document_id for label in labels if label.majority is not None]
    judgments = []
    now = timezone.now()
    for start in range(0, len(complete), 5):
        hit = Hit.objects.create(topic=topic, reward=Decimal("0.10"), completed_assignments=3, status="complete")
        for slot, worker in enumerate(workers):
            assignment = Assignment.objects.create(hit=hit, worker=worker, slot=slot, status="approved", deadline=now)
            for doc in complete[start:start + 5]:
                judgments.append(Judgment(assignment=assignment, topic=topic, document_id=doc, worker=worker,
                                          relevant=True))
    Judgment.objects.bulk_create(judgments, batch_size=2000)
    return topic, len(complete), [label.document_id for label in labels if label.majority is None]


def latency(topic, pending_docs) -> None:
    from celery.contrib.testing.worker import start_worker
    from django.db import connection, transaction

    from annotation.models import Label
    from config.celery import app
    from estimation.models import EstimateSnapshot
    from estimation.services.recompute import topic_recompute_schedule

    redis_url = os.environ.get("REDIS_URL", "")
    if not redis_url or connection.vendor != "postgresql":
        print("latency: skipped (needs REDIS_URL and a PostgreSQL DATABASE_URL)")
        return
    app.conf.CELERY_TASK_ALWAYS_EAGER = False
    app.conf.CELERY_BROKER_URL = redis_url
    samples = []
    with start_worker(app, pool="solo", concurrency=1, perform_ping_check=False, loglevel="WARNING"):
        for doc in pending_docs[:8]:
            before = EstimateSnapshot.objects.filter(topic=topic).order_by("-version").values_list("version", flat=True).first() or 0
            with transaction.atomic():
                # The third judgment completes the label; the crowd code then schedules the recompute.
                Label.objects.filter(topic=topic, document_id=doc).update(votes_relevant=2, votes_total=3, majority=True)
                topic_recompute_schedule(topic_id=topic.pk)
            committed = time.perf_counter()
            while not EstimateSnapshot.objects.filter(topic=topic, version__gt=before).exists():
                if time.perf_counter() - committed > 10:
                    raise SystemExit("no snapshot within 10 s")
                time.sleep(0.005)
            samples.append(time.perf_counter() - committed)
            time.sleep(0.3)
    from estimation.services.recompute import RECOMPUTE_COUNTDOWN_SECONDS

    print(f"latency third judgment -> stored snapshot (real worker, Redis, countdown {RECOMPUTE_COUNTDOWN_SECONDS} s), "
          f"{len(samples)} labels: median {statistics.median(samples) * 1000:.0f} ms, max {max(samples) * 1000:.0f} ms")


def breakdown(inputs) -> None:
    """CPU time of each part of the statistics (the report builder's steps, each calling estimation.stats)."""
    from estimation.services.report_capture import dependence_block, pooled_recall_block
    from estimation.services.report_dependence import dependence_check_run
    from estimation.services.reports import _ReportBuilder

    builder = _ReportBuilder(inputs)
    corpus_size = builder.corpus_size = builder._corpus_size_for_eq2()
    parts = [
        ("stratified_pair_recall (label noise)", lambda: builder._run_stratified(corpus_size)),
        ("design_based_recall (complement sample N)",
         lambda: dependence_check_run(inputs=inputs, probabilities=builder._label_probabilities(),
                                      confidence=builder.confidence, draws=builder.draws, seed=builder.seed)),
        ("classifier rows: F1 posteriors + extrapolation", lambda: builder._classifiers(builder._primary())),
        ("pooled_recall (bootstrap, 2,000 resamples)",
         lambda: pooled_recall_block(inputs=inputs, confidence=builder.confidence, draws=builder.draws, seed=builder.seed)),
        ("capture_recapture with its interval (per further classifier)",
         lambda: dependence_block(inputs=inputs, confidence=builder.confidence, draws=builder.draws, seed=builder.seed)),
        ("uniform comparison (planning)", lambda: builder._uniform_comparison(builder._primary())),
        ("posterior histogram", builder._posterior),
        ("Fleiss kappa + label quality", builder._worker_agreement),
    ]
    for label, fn in parts:
        _, cpu, _ = _median_ms(fn, repeats=5)
        print(f"    {label:50s} CPU {cpu:6.1f} ms")


def main() -> None:
    import django

    django.setup()
    import numpy as np
    from django.db import connection
    from django.test.utils import setup_databases, teardown_databases

    from estimation.services import recompute
    from estimation.services.inputs import topic_inputs_gather
    from estimation.services.reports import (
        code_version_get,
        report_parameters,
        topic_report_build,
        topic_report_from_inputs,
    )

    old = setup_databases(verbosity=0, interactive=False)
    try:
        started = time.perf_counter()
        topic, judged, pending = build(np.random.default_rng(SEED))
        print(f"database: {connection.vendor}; built the topic in {time.perf_counter() - started:.1f} s (untimed): "
              f"{judged:,} judged documents, corpus size {CORPUS_SIZE:,}")
        params = report_parameters()
        version = code_version_get()

        def gather():
            return topic_inputs_gather(topic=topic, parameters=params, code_version=version)

        first_start = time.perf_counter()
        inputs = gather()
        first = (time.perf_counter() - first_start) * 1000
        print(f"DB gathering (topic_inputs_gather), first call (bitmaps deserialised): {first:.1f} ms")
        median, best, inputs = _median_ms(gather)
        print(f"DB gathering (topic_inputs_gather), warm:           median {median:6.1f} ms  (CPU {best:.1f})")
        import json

        print(f"stored sizes: inputs {len(json.dumps(inputs.as_dict())) / 1024:.0f} KiB, "
              f"report {len(json.dumps(topic_report_from_inputs(inputs=inputs))) / 1024:.0f} KiB (JSON text)")
        median, best, _ = _median_ms(lambda: inputs.checksum())
        print(f"inputs checksum (canonical JSON + sha256):          median {median:6.1f} ms")
        median, best, report = _median_ms(lambda: topic_report_from_inputs(inputs=inputs))
        print(f"statistics (topic_report_from_inputs, {params['draws']:,} draws): median {median:6.1f} ms  (CPU {best:.1f})")
        breakdown(inputs)
        median, best, _ = _median_ms(lambda: topic_report_build(topic=topic))
        print(f"full report (topic_report_build):                   median {median:6.1f} ms  (CPU {best:.1f})")

        snapshot_seed = 0

        def fresh_snapshot():
            # A changed parameter forces a new version, so every call does the full work.
            nonlocal snapshot_seed
            snapshot_seed += 1
            return recompute.topic_snapshot_create(topic_id=topic.pk, seed=snapshot_seed)

        median, best, _ = _median_ms(fresh_snapshot)
        print(f"snapshot (topic_snapshot_create, new version):      median {median:6.1f} ms  (CPU {best:.1f})")
        median, best, _ = _median_ms(lambda: recompute.topic_snapshot_create(topic_id=topic.pk, seed=snapshot_seed))
        print(f"snapshot, inputs unchanged (no new version):        median {median:6.1f} ms  (CPU {best:.1f})")
        problems = [d["message"] for d in report["diagnostics"] if d["severity"] == "error"]
        assert report["recall_eq1"]["C1"]["estimate"] is not None, problems
        pooled = report["pooled_recall"]
        print("  pooled recall: " + (f"computed for {len(pooled['systems'])} systems" if pooled else
              next((d["message"] for d in report["diagnostics"] if d["code"] == "pooled_recall_unavailable"), "none")))
        assert report["design_based"] is not None and report["label_noise"]["widened"], report["diagnostics"]
        design = report["design_based"]["C1"]
        print(f"  (report: r1 = {report['recall_eq1']['C1']['estimate']:.3f}, design-based r1 = "
              f"{design['estimate']:.3f} [{design['low']:.3f}, {design['high']:.3f}], "
              f"n̂ = {report['estimated_relevant']['estimate']:,.0f})")
        latency(topic, pending)
    finally:
        if connection.vendor == "postgresql":
            # The worker thread's connection outlives the thread; end it so the test database can be dropped.
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                               "WHERE datname = current_database() AND pid <> pg_backend_pid()")
        connection.close()
        teardown_databases(old, verbosity=0)


if __name__ == "__main__":
    main()
