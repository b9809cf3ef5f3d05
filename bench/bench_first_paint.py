"""First paint of the annotator's HIT page on loopback (issue 12 target: first contentful paint <= 100 ms).

Run: cd /work/main && .venv/bin/python bench/bench_first_paint.py [--loads 20] [--workers 3]

What it does (all untimed until the loads):
* its own SQLite database and static root under var/bench/first_paint/ (APP_VAR_DIR), so it never touches the
  other benchmarks' data: a 2,000-document corpus of newswire-length texts (about 2.5 kB, several paragraphs),
  two keyword classifiers, a topic sampled 60 documents per pair region, and an annotator with a password (HITs as the
  service makes them);
* `collectstatic`, then gunicorn (`config.wsgi`, `--workers` sync workers, 3 as in the Dockerfile) on
  127.0.0.1 with bench/settings_first_paint.py: config.settings.local with DEBUG off and production's static
  files (hashed, compressed, far-future Cache-Control, served by WhiteNoise). config.settings.production itself
  cannot serve plain http on loopback: it sets secure-only cookies and redirects to https.
* Playwright on /usr/bin/chromium signs the annotator in through the login form, takes a HIT from the Annotate
  page, then loads the HIT page `--loads` times: in one browser context (static files cached: an annotator
  moving from HIT to HIT), in the same tab with the HTTP cache cleared before each load (nothing of the site
  cached: the first HIT of a session, in a browser already running), and in a fresh context each time (nothing
  cached and a new renderer: mostly what creating a context costs headless Chromium).

It reports, per case, the median and p95 of first-contentful-paint (performance.getEntriesByType("paint")),
navigation responseStart (time to the first byte of the HTML) and domContentLoadedEventEnd, all in ms from
navigation start, with the ratio of the FCP p95 to the 100 ms target, and the same for the sign-in page
(one stylesheet, no script, signed out) as the floor of headless Chromium on the machine, warm and cold (a fresh
context each load: what a new context costs by itself). Headless Chromium
paints without a GPU, so its paint times include software rasterisation.
"""
from __future__ import annotations

import argparse
import math
import os
import pathlib
import socket
import statistics
import subprocess
import sys
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
VAR = ROOT / "var" / "bench" / "first_paint"
VAR.mkdir(parents=True, exist_ok=True)
ENV = {
    "DJANGO_SETTINGS_MODULE": "settings_first_paint",
    "PYTHONPATH": f"{ROOT}:{ROOT / 'bench'}",
    "APP_VAR_DIR": str(VAR),
    "DATABASE_URL": f"sqlite:///{VAR / 'db.sqlite3'}",
    "AXES_ENABLED": "0",
}
os.environ.update(ENV)
os.environ.pop("REDIS_URL", None)

FCP_TARGET_MS = 100.0
CHROMIUM = "/usr/bin/chromium"
USERNAME, PASSWORD = "fp-annotator", "first-paint-bench-pw-1"
CORPUS_NAME = "first-paint corpus"
TOPIC_NAME = "first-paint topic"

SENTENCES = (
    "Oil prices rose on Tuesday after producers signalled that output cuts would be extended into next year.",
    "Analysts said the move reflected concern about weaker demand from refiners in Asia and Europe.",
    "The central bank left interest rates unchanged and said inflation was expected to ease gradually.",
    "Shares in the utility fell after the regulator rejected its proposal to raise household tariffs.",
    "Crude stocks at the main storage hub fell for a third week, according to figures released on Wednesday.",
    "The ministry said negotiations with the unions would resume once the budget had been approved.",
    "Traders expect volatility to remain high until the shipping routes through the strait reopen.",
    "The company reported a quarterly profit slightly above forecasts, helped by lower financing costs.",
)


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]


def _text(i: int) -> str:
    paragraphs = []
    for p in range(5):
        sentences = [SENTENCES[(i + p + k) % len(SENTENCES)] for k in range(3)]
        paragraphs.append(" ".join(sentences))
    return "\n\n".join(paragraphs)


def build() -> None:
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    call_command("collectstatic", verbosity=0, interactive=False)
    import estimation.services.recompute as recompute

    recompute.recompute_enqueue = lambda **kwargs: False
    from django.contrib.auth import get_user_model

    from annotation.models import Corpus, Document, Topic
    from annotation.roles import roles_ensure
    from annotation.services.classifiers.classifier import classifier_create_keywords
    from annotation.services.corpora.retrieved_sets import bitmap_from_ids, bitmap_to_bytes
    from annotation.services.sampling.draws import samples_launch
    from annotation.services.topics.topic import topic_create

    User = get_user_model()
    user, _ = User.objects.get_or_create(username=USERNAME)
    user.set_password(PASSWORD)
    user.save()
    user.groups.add(roles_ensure()["annotator"])
    if Topic.objects.filter(name=TOPIC_NAME).exists():
        return
    corpus = Corpus.objects.create(name=CORPUS_NAME)
    Document.objects.bulk_create([
        Document(corpus=corpus, external_id=f"fp{i}", title=f"{'Oil' if i % 3 == 0 else 'Markets'} report {i}",
                 text=_text(i) + (" Crude output was discussed." if i % 4 == 0 else ""), metadata={},
                 content_hash=f"{i:064d}")
        for i in range(2000)], batch_size=500)
    ids = list(Document.objects.filter(corpus=corpus).order_by("pk").values_list("pk", flat=True))
    corpus.documents_bitmap = bitmap_to_bytes(bitmap_from_ids(ids))
    corpus.document_count = len(ids)
    corpus.save()
    c1 = classifier_create_keywords(corpus=corpus, name="title oil", terms=["oil"], fields=["title"])
    c2 = classifier_create_keywords(corpus=corpus, name="body crude", terms=["crude"], fields=["text"])
    topic = topic_create(corpus=corpus, name=TOPIC_NAME, c1=c1, c2=c2,
                         instructions="Is the document about the oil market?")
    samples_launch(topic=topic, per_region=60, seed=5, extra_per_classifier=0)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int, workers: int) -> subprocess.Popen:
    server = subprocess.Popen(
        [str(ROOT / ".venv" / "bin" / "gunicorn"), "config.wsgi", "-b", f"127.0.0.1:{port}", "--workers", str(workers),
         "--access-logfile", "-", "--log-level", "warning"],
        cwd=ROOT, env={**os.environ, **ENV}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    for _ in range(100):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1)
            return server
        except OSError:
            time.sleep(0.2)
    server.terminate()
    raise SystemExit("gunicorn did not answer /healthz within 20 s")


TIMING_JS = """() => {
  const nav = performance.getEntriesByType("navigation")[0];
  const fcp = performance.getEntriesByType("paint").find(e => e.name === "first-contentful-paint");
  const early = performance.getEntriesByType("resource")
    .filter(r => fcp && r.startTime < fcp.startTime)
    .map(r => r.initiatorType + " " + new URL(r.name).pathname + " " + Math.round(r.startTime) + "-" + Math.round(r.responseEnd));
  return {fcp: fcp ? fcp.startTime : null, responseStart: nav.responseStart, responseEnd: nav.responseEnd,
          dcl: nav.domContentLoadedEventEnd, bytes: nav.transferSize, status: nav.responseStatus, early: early};
}"""


def _load(page, url: str) -> dict:
    page.goto(url, wait_until="load")
    # first-contentful-paint is recorded once the frame is presented: poll for it rather than read too early
    # (the page's CSP forbids the string evaluation wait_for_function would use).
    for _ in range(100):
        timing = page.evaluate(TIMING_JS)
        if timing["fcp"] is not None:
            return timing
        time.sleep(0.02)
    raise RuntimeError(f"no first-contentful-paint entry for {url}")


def _loadavg() -> str:
    try:
        return " ".join(pathlib.Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "n/a"


def measure(base: str, loads: int) -> None:
    from playwright.sync_api import sync_playwright

    load_before = _loadavg()

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu",
                                            "--disable-background-networking"])
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.goto(f"{base}/accounts/login/?next=/annotate/")
        page.fill("input[name=username]", USERNAME)
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit], input[type=submit]")
        page.wait_for_url(f"{base}/annotate/")
        resume = page.locator("a[href*='/annotate/assignments/']").first
        if resume.count():  # a HIT claimed by an earlier run and still in progress
            resume.click()
        else:
            page.click("form[action$='/annotate/next/'] button[type=submit]")
        page.wait_for_url("**/annotate/assignments/*/")
        url = page.url
        documents = page.locator("article.document").count()
        stylesheets = page.locator("head link[rel=stylesheet]").count()
        cookies = context.cookies()
        cases: dict[str, list[dict]] = {"warm (static cached, same context)": [],
                                        "cold cache (same tab, HTTP cache cleared)": [],
                                        "cold (new context each load)": []}
        _load(page, url)  # the first load of the HIT page fills the cache for the warm case
        for _ in range(loads):
            cases["warm (static cached, same context)"].append(_load(page, url))
        # A session's first HIT: the browser is running (its renderer too), nothing of the site is cached.
        devtools = context.new_cdp_session(page)
        for _ in range(loads):
            devtools.send("Network.clearBrowserCache")
            cases["cold cache (same tab, HTTP cache cleared)"].append(_load(page, url))
        devtools.detach()
        for _ in range(loads):
            fresh = browser.new_context(viewport={"width": 1280, "height": 900})
            fresh.add_cookies(cookies)  # type: ignore[arg-type]
            cases["cold (new context each load)"].append(_load(fresh.new_page(), url))
            fresh.close()
        # The floor on this machine: the sign-in page (one stylesheet, no script, almost no server work), signed out.
        anonymous = browser.new_context(viewport={"width": 1280, "height": 900})
        login_page = anonymous.new_page()
        _load(login_page, f"{base}/accounts/login/")
        baseline = "baseline: sign-in page (warm)"
        cases[baseline] = [_load(login_page, f"{base}/accounts/login/") for _ in range(loads)]
        anonymous.close()
        # ... and its cold floor: a fresh context each time (what a new context itself costs headless Chromium).
        cold_floor = []
        for _ in range(loads):
            fresh = browser.new_context(viewport={"width": 1280, "height": 900})
            cold_floor.append(_load(fresh.new_page(), f"{base}/accounts/login/"))
            fresh.close()
        cases["baseline: sign-in page (cold)"] = cold_floor
        html_bytes = len(page.content().encode())
        browser.close()
    print(f"load average before/after: {load_before} / {_loadavg()} (the machine is shared: compare runs of the same minutes)")
    print(f"HIT page {url.removeprefix(base)}: {documents} documents, {html_bytes / 1024:.1f} KiB of HTML (rendered DOM), "
          f"{stylesheets} stylesheet request(s) before paint")
    print(f"\n{'case':<38} {'FCP med':>8} {'FCP p95':>8} {'TTFB med':>9} {'TTFB p95':>9} {'DCL med':>8} "
          f"{'p95/target':>10}  verdict (FCP <= {FCP_TARGET_MS:.0f} ms)")
    cold = cases["cold (new context each load)"][-1]
    print(f"requests started before the first paint (last cold load, ms from navigation start): "
          f"{'; '.join(cold['early']) or 'none'}; HTML response end {cold['responseEnd']:.0f}, FCP {cold['fcp']:.0f}")
    for name, rows in cases.items():
        assert all(r["status"] in (200, 0) for r in rows), rows
        fcp = [r["fcp"] for r in rows]
        ttfb = [r["responseStart"] for r in rows]
        dcl = [r["dcl"] for r in rows]
        verdict = "ok" if p95(fcp) <= FCP_TARGET_MS else "SLOW"
        print(f"{name:<38} {statistics.median(fcp):>8.1f} {p95(fcp):>8.1f} {statistics.median(ttfb):>9.1f} "
              f"{p95(ttfb):>9.1f} {statistics.median(dcl):>8.1f} {p95(fcp) / FCP_TARGET_MS:>10.2f}  {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--loads", type=int, default=20)
    parser.add_argument("--workers", type=int, default=3, help="gunicorn sync workers (the Dockerfile runs 3)")
    args = parser.parse_args()
    build()
    from django.db import connection

    print(f"database: {connection.vendor} ({ENV['DATABASE_URL']}); server: gunicorn, {args.workers} workers, "
          f"{ENV['DJANGO_SETTINGS_MODULE']} (DEBUG off, manifest static files)")
    connection.close()
    port = free_port()
    server = start_server(port, args.workers)
    try:
        measure(f"http://127.0.0.1:{port}", args.loads)
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
