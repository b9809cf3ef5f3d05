"""Page render times of every analyst and manager page on a 1,000,000-document corpus with 1,500 judged documents.

Run: cd /work/main && python bench/bench_pages.py [--documents 1000000] [--repeats 5] [--rebuild] [--only WORD]
Targets: every analyst, manager and annotator page <= 300 ms; the keyword preview <= 1 s.

Issue 12 pages are included: the searchable, paginated lists (classifiers, topics, corpora: padded with 40 extra
classifier rows, 30 draft topics and 30 empty corpora so that a second page exists), the gold documents and
worker-quality pages, the archive/delete confirmation pages, the raw judgments exports (CSV and JSON Lines, time to
the first byte and in total, on a second topic holding 30,000 synthetic judgments: 10,000 judged documents, three
workers each, inserted in bulk), and the annotator's HIT page and "change my answers" page (a small top-up of the
bench topic gives the bench annotator a claimed HIT and a submitted, still correctable one).

Database: DATABASE_URL if set, else var/bench/bench_pages.sqlite3 (kept between runs;
--rebuild starts afresh). Data are built with bulk inserts (documents), then the
real services: topic_create, samples_launch (500 documents per pair region, in
stages) and the simulated crowd (three judgments per document), with a snapshot
after each stage so the recall history has points. Recomputes on label arrival are
switched off while building (the snapshots are taken explicitly). Pages are fetched
with the Django test client, signed in as an analyst (who may also read reports).
"""
from __future__ import annotations

import argparse
import hashlib
import math
import os
import pathlib
import statistics
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
BENCH_DIR = ROOT / "var" / "bench"
BENCH_DIR.mkdir(parents=True, exist_ok=True)
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
os.environ.setdefault("DATABASE_URL", f"sqlite:///{BENCH_DIR / 'bench_pages.sqlite3'}")
os.environ.pop("REDIS_URL", None)

PAGE_TARGET_S = 0.300
PREVIEW_TARGET_S = 1.0
TOPIC_NAME = "bench-pages topic"
EXPORT_TOPIC_NAME = "bench-pages export topic"
EXPORT_DOCUMENTS = 10_000  # x 3 workers = 30,000 judgments
PAD_CLASSIFIERS, PAD_TOPICS, PAD_CORPORA = 40, 30, 30


def _setup():
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    # Snapshots are taken explicitly below; an eager recompute per label would dominate the build.
    import estimation.services.recompute as recompute

    recompute.recompute_enqueue = lambda **kwargs: False


def p95(times: list[float]) -> float:
    """Nearest-rank 95th percentile (the maximum below 20 repeats)."""
    ordered = sorted(times)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def _relevant(i: int) -> bool:
    return i % 100 < 2  # prevalence 2%


def _in_c1(i: int) -> bool:  # title keyword "oil": finds 80% of the relevant, plus noise
    return (_relevant(i) and i % 5 != 0) or i % 97 == 0


def _in_c2(i: int) -> bool:  # body keyword "crude": finds 2/3 of the relevant, plus noise
    return (_relevant(i) and i % 3 != 0) or i % 89 == 0


def build(documents: int):
    from django.db import connection, transaction

    from annotation.models import Corpus, Document
    from annotation.services.classifiers.classifier import classifier_create_keywords
    from annotation.services.corpora.retrieved_sets import bitmap_from_ids, bitmap_to_bytes

    name = f"bench-pages-{documents}"
    corpus = Corpus.objects.filter(name=name).first()
    if corpus is not None and corpus.document_count == documents:
        return corpus, False
    started = time.perf_counter()
    corpus = Corpus.objects.create(name=name)
    table = Document._meta.db_table
    batch = []
    with transaction.atomic(), connection.cursor() as cursor:
        for i in range(documents):
            title = f"{'Oil market' if _in_c1(i) else 'Market'} note {i}"
            text = (f"Report {i}: {'crude prices moved' if _in_c2(i) else 'prices moved'} "
                    f"<b>{'energy' if _relevant(i) else 'general'}</b> desk.")
            metadata = '{"topic": "oil"}' if _relevant(i) else "{}"
            digest = hashlib.sha256(f"{title}\n{text}".encode()).hexdigest()
            batch.append((corpus.pk, f"b{i}", title, text, metadata, digest))
            if len(batch) == 20_000:
                cursor.executemany(f"INSERT INTO {table} (corpus_id, external_id, title, text, metadata, content_hash) "
                                   "VALUES (%s, %s, %s, %s, %s, %s)", batch)
                batch = []
        if batch:
            cursor.executemany(f"INSERT INTO {table} (corpus_id, external_id, title, text, metadata, content_hash) "
                               "VALUES (%s, %s, %s, %s, %s, %s)", batch)
    ids = list(Document.objects.filter(corpus=corpus).order_by("pk").values_list("pk", flat=True))
    corpus.documents_bitmap = bitmap_to_bytes(bitmap_from_ids(ids))
    corpus.document_count = len(ids)
    corpus.save()
    print(f"(inserted {documents:,} documents in {time.perf_counter() - started:.0f} s, untimed)")
    started = time.perf_counter()
    classifier_create_keywords(corpus=corpus, name="title oil", terms=["oil"], fields=["title"])
    classifier_create_keywords(corpus=corpus, name="body crude", terms=["crude"], fields=["text"])
    print(f"(built two keyword classifiers in {time.perf_counter() - started:.0f} s, untimed)")
    return corpus, True


def judge(corpus) -> None:
    from annotation.models import Classifier, Label, Topic
    from annotation.services.crowd.crowd_simulation import crowd_simulate
    from annotation.services.sampling.draws import samples_launch
    from annotation.services.topics.topic import topic_create
    from estimation.services.recompute import topic_snapshot_create

    topic = Topic.objects.filter(name=TOPIC_NAME).first()
    if topic is not None and Label.objects.filter(topic=topic, majority__isnull=False).count() >= 1500:
        return
    started = time.perf_counter()
    c1, c2 = (Classifier.objects.get(corpus=corpus, name=n) for n in ("title oil", "body crude"))
    extra = Classifier.objects.filter(corpus=corpus, name="title oil or crude").first()
    if topic is None:
        from annotation.services.classifiers.classifier import classifier_create_keywords

        extra = extra or classifier_create_keywords(corpus=corpus, name="title oil or crude", terms=["oil", "crude"],
                                                    fields=["title", "text"])
        topic = topic_create(corpus=corpus, name=TOPIC_NAME, c1=c1, c2=c2, instructions="Is it about the oil market?",
                             extra_classifiers=[extra])
    for per_region in (50, 150, 300, 500):  # totals per region: 1,500 pair documents in the end
        samples_launch(topic=topic, per_region=per_region, seed=11, extra_per_classifier=0)
        crowd_simulate(topic=topic, truth_field="topic", truth_value="oil", accuracy=0.9, workers=6, seed=per_region)
        topic_snapshot_create(topic_id=topic.pk)
    judged = Label.objects.filter(topic=topic, majority__isnull=False).count()
    print(f"(sampled and judged {judged:,} documents, 4 snapshots, in {time.perf_counter() - started:.0f} s, untimed)")


def pad_lists(corpus) -> None:
    """Enough rows for a second page of each searchable list (untimed, once)."""
    from annotation.models import Classifier, Corpus, Topic
    from annotation.services.topics.topic import topic_create

    c1, c2 = (Classifier.objects.get(corpus=corpus, name=n) for n in ("title oil", "body crude"))
    template = Classifier.objects.get(pk=c1.pk)
    Classifier.objects.bulk_create([
        Classifier(corpus=corpus, name=f"bench clone {n:02d}", kind=template.kind, definition=template.definition,
                   fingerprint=template.fingerprint, retrieved_bitmap=template.retrieved_bitmap,
                   retrieved_count=template.retrieved_count)
        for n in range(PAD_CLASSIFIERS)
        if not Classifier.objects.filter(corpus=corpus, name=f"bench clone {n:02d}").exists()])
    for n in range(PAD_TOPICS):
        if not Topic.objects.filter(name=f"bench-pages pad {n:02d}").exists():
            topic_create(corpus=corpus, name=f"bench-pages pad {n:02d}", c1=c1, c2=c2)
    Corpus.objects.bulk_create([Corpus(name=f"bench-pages-pad-{n:02d}") for n in range(PAD_CORPORA)
                                if not Corpus.objects.filter(name=f"bench-pages-pad-{n:02d}").exists()])


def export_topic(corpus):
    """A topic with EXPORT_DOCUMENTS judged documents, three judgments each, inserted in bulk (untimed, once):
    HITs of ten documents, three submitted assignments per HIT, a complete label per document."""
    from datetime import timedelta
    from decimal import Decimal

    from django.db import transaction
    from django.utils import timezone

    from annotation.models import Assignment, Classifier, Document, Hit, HitItem, Judgment, Label, Topic
    from annotation.services.crowd.crowd_simulation import simulated_workers_ensure
    from annotation.services.topics.topic import topic_create

    topic = Topic.objects.filter(name=EXPORT_TOPIC_NAME).first()
    if topic is not None and Judgment.objects.filter(topic=topic).count() >= 3 * EXPORT_DOCUMENTS:
        return topic
    started = time.perf_counter()
    c1, c2 = (Classifier.objects.get(corpus=corpus, name=n) for n in ("title oil", "body crude"))
    topic = topic or topic_create(corpus=corpus, name=EXPORT_TOPIC_NAME, c1=c1, c2=c2)
    workers = simulated_workers_ensure(count=3, start=90)
    doc_ids = list(Document.objects.filter(corpus=corpus).order_by("pk")
                   .values_list("pk", flat=True)[500_000:500_000 + EXPORT_DOCUMENTS])
    now = timezone.now()
    with transaction.atomic():
        hits = Hit.objects.bulk_create([Hit(topic=topic, status=Hit.Status.COMPLETE, reward=Decimal("0.10"),
                                            completed_assignments=3) for _ in range(0, len(doc_ids), 10)])
        HitItem.objects.bulk_create([HitItem(hit=hits[i // 10], topic=topic, document_id=d, position=i % 10)
                                     for i, d in enumerate(doc_ids)], batch_size=5000)
        assignments = Assignment.objects.bulk_create([
            Assignment(hit=hit, worker=w, slot=slot, status=Assignment.Status.SUBMITTED, deadline=now + timedelta(hours=1),
                       submitted_at=now) for hit in hits for slot, w in enumerate(workers)], batch_size=5000)
        judgments = []
        for a_index, assignment in enumerate(assignments):
            hit_index, slot = divmod(a_index, 3)
            for d in doc_ids[hit_index * 10:hit_index * 10 + 10]:
                judgments.append(Judgment(assignment=assignment, topic=topic, document_id=d, worker=workers[slot],
                                          relevant=(d + slot) % 7 == 0))
        Judgment.objects.bulk_create(judgments, batch_size=5000)
        Label.objects.bulk_create([Label(topic=topic, document_id=d, votes_total=3,
                                         votes_relevant=sum((d + s) % 7 == 0 for s in range(3)),
                                         majority=sum((d + s) % 7 == 0 for s in range(3)) >= 2) for d in doc_ids],
                                  batch_size=5000)
    print(f"(inserted {len(judgments):,} judgments for the export topic in {time.perf_counter() - started:.0f} s, untimed)")
    return topic


def annotator_assignments(topic):
    """The bench annotator with a claimed HIT of the bench topic and a submitted one still open to correction
    (its documents lack their other votes): a top-up of 10 documents per pair region when no HIT is open."""
    from django.contrib.auth import get_user_model

    from annotation.models import Assignment
    from annotation.roles import roles_ensure
    from annotation.selectors import assignment_items, topic_region_progress
    from annotation.services.crowd.assignments import assignment_claim_fresh, assignment_correctable, assignment_submit
    from annotation.services.crowd.workers import worker_for_user
    from annotation.services.sampling.draws import samples_launch

    user, _ = get_user_model().objects.get_or_create(username="bench-annotator")
    user.groups.add(roles_ensure()["annotator"])
    worker = worker_for_user(user=user)

    def claim():
        assignment = assignment_claim_fresh(worker=worker, topic=topic)
        if assignment is None:
            sampled = max(counts["sampled"] for counts in topic_region_progress(topic=topic).values())
            samples_launch(topic=topic, per_region=sampled + 10, seed=11, extra_per_classifier=0)
            assignment = assignment_claim_fresh(worker=worker, topic=topic)
        assert assignment is not None, "no HIT to claim for the bench annotator"
        return assignment

    submitted = next((a for a in Assignment.objects.filter(worker=worker, status=Assignment.Status.SUBMITTED)
                      .order_by("-pk") if assignment_correctable(assignment=a)), None)
    if submitted is None:
        assignment = claim()
        items = assignment_items(assignment=assignment)
        assignment_submit(assignment_id=assignment.pk, worker=worker,
                          answers={item.document_id: item.document_id % 2 == 0 for item in items})
        submitted = Assignment.objects.get(pk=assignment.pk)
    claimed = claim()
    return user, claimed, submitted


def measure(corpus, repeats: int, only: str = "") -> None:
    from django.contrib.auth import get_user_model
    from django.test import Client
    from django.urls import reverse

    from annotation.models import Classifier, CorpusUpload, Judgment, Label, Topic
    from annotation.roles import roles_ensure
    from annotation.services.classifiers.classifier import keyword_preview

    topic = Topic.objects.get(name=TOPIC_NAME)
    user, _ = get_user_model().objects.get_or_create(username="bench-analyst")
    user.groups.add(roles_ensure()["analyst"])
    client = Client()
    client.force_login(user)
    c1 = Classifier.objects.get(corpus=corpus, name="title oil")
    unused = Classifier.objects.get(corpus=corpus, name="bench clone 00")
    export = Topic.objects.get(name=EXPORT_TOPIC_NAME)
    annotator, claimed, submitted = annotator_assignments(topic)
    annotator_client = Client()
    annotator_client.force_login(annotator)
    upload, _ = CorpusUpload.objects.get_or_create(corpus_name="bench", original_name="b.jsonl", file_path="none",
                                                   defaults={"status": "done"})
    pages = {
        "analyst: topics": reverse("analyst:topics"),
        "analyst: topic (plan)": reverse("analyst:topic", args=[topic.pk]),
        "analyst: HIT preview": reverse("analyst:topic_hit_preview", args=[topic.pk]),
        "analyst: new topic": reverse("analyst:topic_new"),
        "analyst: corpora": reverse("analyst:corpora"),
        "analyst: corpus": reverse("analyst:corpus", args=[corpus.pk]),
        "analyst: upload form": reverse("analyst:corpus_upload"),
        "analyst: upload progress": reverse("analyst:upload", args=[upload.pk]),
        "analyst: upload status json": reverse("analyst:upload_status", args=[upload.pk]),
        "analyst: classifier": reverse("analyst:classifier", args=[c1.pk]),
        "analyst: keyword filter form": reverse("analyst:classifier_keywords", args=[corpus.pk]),
        "analyst: classifier upload form": reverse("analyst:classifier_upload", args=[corpus.pk]),
        "manager: topics at a glance": reverse("reports:topics"),
        "manager: report": reverse("reports:topic", args=[topic.pk]),
        "manager: report, target recall 0.9": reverse("reports:topic", args=[topic.pk]) + "?target_recall=0.9",
        "manager: printable report": reverse("reports:topic_print", args=[topic.pk]),
        "manager: CSV export": reverse("reports:topic_csv", args=[topic.pk]),
        "manager: JSON export": reverse("reports:topic_json", args=[topic.pk]),
        # issue 12
        "analyst: classifiers list": reverse("analyst:classifiers"),
        "analyst: classifiers list, page 2": reverse("analyst:classifiers") + "?page=2",
        "analyst: classifiers list, search": reverse("analyst:classifiers") + "?q=clone+1",
        "analyst: classifiers list, archived": reverse("analyst:classifiers") + "?archived=on",
        "analyst: topics, page 2": reverse("analyst:topics") + "?page=2",
        "analyst: topics, search": reverse("analyst:topics") + "?q=pad+1",
        "analyst: corpora, page 2": reverse("analyst:corpora") + "?page=2",
        "analyst: corpora, search": reverse("analyst:corpora") + "?q=pad-1",
        "analyst: gold documents": reverse("analyst:gold", args=[topic.pk]),
        "analyst: gold documents, page 20": reverse("analyst:gold", args=[topic.pk]) + "?page=20",
        "analyst: worker quality": reverse("analyst:workers", args=[topic.pk]),
        "analyst: worker quality, by agreement": reverse("analyst:workers", args=[topic.pk]) + "?sort=-agreement",
        "analyst: worker quality (30k judgments)": reverse("analyst:workers", args=[export.pk]),
        "analyst: gold documents (10k judged)": reverse("analyst:gold", args=[export.pk]),
        "analyst: classifier archive (confirm)": reverse("analyst:classifier_archive", args=[c1.pk]),
        "analyst: classifier delete (confirm)": reverse("analyst:classifier_delete", args=[c1.pk]),
        "analyst: classifier delete, unused": reverse("analyst:classifier_delete", args=[unused.pk]),
        "analyst: classifier rename": reverse("analyst:classifier_rename", args=[c1.pk]),
        "analyst: topic archive (confirm)": reverse("analyst:topic_archive", args=[topic.pk]),
        "analyst: topic delete (confirm)": reverse("analyst:topic_delete", args=[topic.pk]),
        "manager: report (30k judgments)": reverse("reports:topic", args=[export.pk]),
    }
    annotator_pages = {
        "annotator: home": reverse("annotator:home"),
        "annotator: HIT page": reverse("annotator:assignment", args=[claimed.pk]),
        "annotator: submitted HIT": reverse("annotator:assignment", args=[submitted.pk]),
        "annotator: change my answers": reverse("annotator:correct", args=[submitted.pk]),
    }
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; corpus {corpus.document_count:,} documents; topic: {Label.objects.filter(topic=topic, majority__isnull=False).count():,} "
          f"judged documents, {Judgment.objects.filter(topic=topic).count():,} judgments, "
          f"{topic.snapshots.count()} snapshots")
    results = []
    failed: list[str] = []
    cpu_medians: dict[str, float] = {}
    targets = [(name, url, client) for name, url in pages.items()] + [
        (name, url, annotator_client) for name, url in annotator_pages.items()]
    for name, url, page_client in targets:
        if only and only not in name:
            continue
        try:
            response = page_client.get(url)  # warm-up (bitmap cache, template loading)
        except Exception as exc:  # noqa: BLE001 - a broken page is reported, the others are still measured
            failed.append(f"{name}: {type(exc).__name__}: {exc}")
            continue
        if response.status_code != 200:
            failed.append(f"{name}: HTTP {response.status_code}")
            continue
        times, cpu = [], []
        for _ in range(repeats):
            started, cpu_started = time.perf_counter(), time.process_time()
            response = page_client.get(url)
            if response.streaming:
                b"".join(response.streaming_content)  # type: ignore[attr-defined]
            times.append(time.perf_counter() - started)
            cpu.append(time.process_time() - cpu_started)
        results.append((name, statistics.median(times), p95(times), max(times)))
        cpu_medians[name] = statistics.median(cpu)
    # CPU ms: this process's CPU time per request (the test client serves in-process, SQLite included), which
    # a busy machine inflates far less than the wall-clock figures.
    print(f"\n{'page':<42} {'median ms':>10} {'p95 ms':>8} {'max ms':>8} {'CPU ms':>7} {'p95/target':>10}  verdict "
          f"(target {PAGE_TARGET_S * 1000:.0f} ms on the p95)")
    for name, median, high, worst in sorted(results, key=lambda r: -r[1]):
        verdict = "ok" if high <= PAGE_TARGET_S else "SLOW"
        print(f"{name:<42} {median * 1000:>10.1f} {high * 1000:>8.1f} {worst * 1000:>8.1f} "
              f"{cpu_medians[name] * 1000:>7.1f} {high / PAGE_TARGET_S:>10.2f}  {verdict}")

    for failure in failed:
        print(f"NOT MEASURED (not a 200) {failure[:300]}")

    export_rows = []
    for label, topic_for_export in (("bench topic", topic), ("export topic", export)):
        judgments = Judgment.objects.filter(topic=topic_for_export).count()
        for kind in ("topic_judgments_csv", "topic_judgments_jsonl"):
            if only and only not in "export":
                continue
            url = reverse(f"reports:{kind}", args=[topic_for_export.pk])
            firsts, totals, size = [], [], 0
            for _ in range(repeats):
                started = time.perf_counter()
                response = client.get(url)
                assert response.status_code == 200, (url, response.status_code)
                content = iter(response.streaming_content)  # type: ignore[attr-defined]
                size = len(next(content))
                firsts.append(time.perf_counter() - started)
                size += sum(len(chunk) for chunk in content)
                totals.append(time.perf_counter() - started)
            export_rows.append((f"{kind.rsplit('_', 1)[1].upper()} {label} ({judgments:,} judgments)",
                                statistics.median(firsts), p95(firsts), statistics.median(totals), p95(totals), size))
    if export_rows:
        print(f"\n{'raw judgments export':<44} {'TTFB med':>9} {'TTFB p95':>9} {'total med':>10} {'total p95':>10} "
              f"{'MiB':>6}  verdict (first byte <= {PAGE_TARGET_S * 1000:.0f} ms)")
        for name, first, first_high, total, total_high, size in export_rows:
            verdict = "ok" if first_high <= PAGE_TARGET_S else "SLOW"
            print(f"{name:<44} {first * 1000:>9.1f} {first_high * 1000:>9.1f} {total * 1000:>10.1f} "
                  f"{total_high * 1000:>10.1f} {size / 2**20:>6.2f}  {verdict}")
        results += [(name, first, first_high, first_high) for name, first, first_high, *_ in export_rows]
    if only and only != "preview":
        slow = [r for r in results if r[2] > PAGE_TARGET_S]
        print("\nALL WITHIN TARGET" if not slow else f"\n{len(slow)} OVER TARGET")
        return

    from django.core.cache import cache

    preview_url = reverse("analyst:keyword_preview", args=[corpus.pk])
    rows = []
    for terms in ("oil", "crude prices", "energy desk", "zzzz-not-there"):
        params = {"terms": terms, "fields": ["title", "text"]}
        times = []
        for _ in range(repeats):
            cache.clear()  # a new set of terms: the page's preview cache cannot help
            started = time.perf_counter()
            client.get(preview_url, params)
            times.append(time.perf_counter() - started)
        started = time.perf_counter()
        client.get(preview_url, params)  # the same terms again (typing, then pressing Preview)
        cached = time.perf_counter() - started
        service_started = time.perf_counter()
        keyword_preview(corpus=corpus, terms=[terms], fields=["title", "text"])
        service = time.perf_counter() - service_started
        rows.append((terms, statistics.median(times), max(times), service, cached))
    print(f"\n{'keyword preview (page endpoint, new terms)':<42} {'median ms':>10} {'max ms':>8}  service ms  repeat ms  "
          f"verdict (target {PREVIEW_TARGET_S * 1000:.0f} ms)")
    for terms, median, worst, service, cached in rows:
        verdict = "ok" if worst <= PREVIEW_TARGET_S else "SLOW"
        print(f"{terms!r:<42} {median * 1000:>10.1f} {worst * 1000:>8.1f}  {service * 1000:>10.1f}  {cached * 1000:>9.1f}  {verdict}")
    over = [r[0] for r in results if r[2] > PAGE_TARGET_S] + [r[0] for r in rows if r[2] > PREVIEW_TARGET_S]
    print("\nALL WITHIN TARGET" if not over else f"\n{len(over)} OVER TARGET: {', '.join(over)}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rebuild", action="store_true")
    parser.add_argument("--only", default="", help="measure only the pages whose name contains this")
    args = parser.parse_args()
    if args.rebuild and os.environ["DATABASE_URL"].startswith("sqlite:///"):
        pathlib.Path(os.environ["DATABASE_URL"][len("sqlite:///"):]).unlink(missing_ok=True)
    _setup()
    from django.db import connection

    print(f"database: {connection.vendor}")
    corpus, _ = build(args.documents)
    judge(corpus)
    pad_lists(corpus)
    export_topic(corpus)
    measure(corpus, args.repeats, args.only)


if __name__ == "__main__":
    main()
