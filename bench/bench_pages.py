"""Page render times of every analyst and manager page on a 1,000,000-document corpus with 1,500 judged documents.

Run: cd /work/main && python bench/bench_pages.py [--documents 1000000] [--repeats 5] [--rebuild]
Targets: every analyst and manager page <= 300 ms; the keyword preview <= 1 s.

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


def _setup():
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    # Snapshots are taken explicitly below; an eager recompute per label would dominate the build.
    import estimation.services.recompute as recompute

    recompute.recompute_enqueue = lambda **kwargs: False


def _relevant(i: int) -> bool:
    return i % 100 < 2  # prevalence 2%


def _in_c1(i: int) -> bool:  # title keyword "oil": finds 80% of the relevant, plus noise
    return (_relevant(i) and i % 5 != 0) or i % 97 == 0


def _in_c2(i: int) -> bool:  # body keyword "crude": finds 2/3 of the relevant, plus noise
    return (_relevant(i) and i % 3 != 0) or i % 89 == 0


def build(documents: int):
    from django.db import connection, transaction

    from annotation.models import Corpus, Document
    from annotation.services.classifiers import classifier_create_keywords
    from annotation.services.retrieved_sets import bitmap_from_ids, bitmap_to_bytes

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
    from annotation.services.crowd_simulation import crowd_simulate
    from annotation.services.sampling import samples_launch
    from annotation.services.topics import topic_create
    from estimation.services.recompute import topic_snapshot_create

    topic = Topic.objects.filter(name=TOPIC_NAME).first()
    if topic is not None and Label.objects.filter(topic=topic, majority__isnull=False).count() >= 1500:
        return
    started = time.perf_counter()
    c1, c2 = (Classifier.objects.get(corpus=corpus, name=n) for n in ("title oil", "body crude"))
    extra = Classifier.objects.filter(corpus=corpus, name="title oil or crude").first()
    if topic is None:
        from annotation.services.classifiers import classifier_create_keywords

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


def measure(corpus, repeats: int) -> None:
    from django.contrib.auth import get_user_model
    from django.test import Client
    from django.urls import reverse

    from annotation.models import Classifier, CorpusUpload, Judgment, Label, Topic
    from annotation.roles import roles_ensure
    from annotation.services.classifiers import keyword_preview

    topic = Topic.objects.get(name=TOPIC_NAME)
    user, _ = get_user_model().objects.get_or_create(username="bench-analyst")
    user.groups.add(roles_ensure()["analyst"])
    client = Client()
    client.force_login(user)
    c1 = Classifier.objects.get(corpus=corpus, name="title oil")
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
    }
    print(f"corpus {corpus.document_count:,} documents; topic: {Label.objects.filter(topic=topic, majority__isnull=False).count():,} "
          f"judged documents, {Judgment.objects.filter(topic=topic).count():,} judgments, "
          f"{topic.snapshots.count()} snapshots")
    results = []
    for name, url in pages.items():
        response = client.get(url)  # warm-up (bitmap cache, template loading)
        assert response.status_code == 200, (name, response.status_code)
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            response = client.get(url)
            times.append(time.perf_counter() - started)
        results.append((name, statistics.median(times), max(times)))
    print(f"\n{'page':<40} {'median ms':>10} {'max ms':>8}  verdict (target {PAGE_TARGET_S * 1000:.0f} ms)")
    for name, median, worst in sorted(results, key=lambda r: -r[1]):
        verdict = "ok" if worst <= PAGE_TARGET_S else "SLOW"
        print(f"{name:<40} {median * 1000:>10.1f} {worst * 1000:>8.1f}  {verdict}")

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
    slow = [r for r in results if r[2] > PAGE_TARGET_S] + [r for r in rows if r[2] > PREVIEW_TARGET_S]
    print("\nALL WITHIN TARGET" if not slow else f"\n{len(slow)} OVER TARGET")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rebuild", action="store_true")
    args = parser.parse_args()
    if args.rebuild and os.environ["DATABASE_URL"].startswith("sqlite:///"):
        pathlib.Path(os.environ["DATABASE_URL"][len("sqlite:///"):]).unlink(missing_ok=True)
    _setup()
    from django.db import connection

    print(f"database: {connection.vendor}")
    corpus, _ = build(args.documents)
    judge(corpus)
    measure(corpus, args.repeats)


if __name__ == "__main__":
    main()
