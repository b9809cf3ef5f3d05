"""Label Studio side by side with the annotator path: judgments/s at p95 latency, same open-loop schedule (issue 15).

Run:  cd /work/main && .venv/bin/python bench/bench_label_studio.py [--database h_hc_load] [--redis-db 6]
          [--ls-database h_ls] [--ls-venv /work/ls-venv] [--rates 25,50,100,200] [--duration 20]
          [--annotators 200] [--workers 4] [--threads 1] [--only both|app|ls]
Target: >= 10x Label Studio's judgments/s at equal settings (issue 15).

Label Studio is installed outside the repository (docs/benchmarks.md):
    python3 -m venv /work/ls-venv && /work/ls-venv/bin/pip install label-studio gunicorn
and its PostgreSQL database must exist and be migrated once (``--ls-migrate`` does it; about a minute).

What it does:
1. Our side exactly as bench/bench_load.py (its set-up, server, client and step code are imported, not
   copied): a fresh database of five-document HITs, ``--annotators`` signed-in annotators, gunicorn
   with the production settings.
2. Label Studio's side: this same file, run by Label Studio's Python inside Label Studio's Django
   (``--ls-setup``), creates an organization with legacy API tokens on, ``--annotators`` users each
   with their own token, one project with a binary choice labelling config (the question our HIT
   page asks, "Relevant" / "Not relevant"), three annotations per task (our three judgments per
   document) and as many one-document tasks, of the same text length, as our side has documents.
   Label Studio is served by gunicorn (``core.wsgi``) with the same ``--workers``/``--threads``,
   on its own PostgreSQL database, DEBUG off.
3. For each offered rate (judgments/s), one step on our side then one on Label Studio's, back to
   back, so both see the same minutes of machine load; only the side being measured has its server
   running (started before its step, stopped after it), so neither eats the other's CPU. Arrivals are Poisson at the same rate of
   judgments/s (bench_load.run_step). A Label Studio annotator's cycle is what its labelling stream
   does through the API: POST the annotation of the task on screen, then GET the project's next
   task (``/api/projects/<id>/next/``); one cycle is one judgment. Ours is one five-document
   submit-and-next POST. Latencies as in bench_load (from the scheduled arrival, so queueing in the
   client counts). Printed per rate: both tables' lines, then achieved judgments/s and p95 of each
   and the ratio.

Both servers are on this machine with the client; the figures are only comparable with each other and
with the load average printed next to them.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import random
import signal
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]

LABEL_CONFIG = """<View>
  <Header value="Is the document about recall estimation?"/>
  <Text name="text" value="$text"/>
  <Choices name="answer" toName="text" choice="single" showInline="true" required="true">
    <Choice value="Relevant"/>
    <Choice value="Not relevant"/>
  </Choices>
</View>"""
WORDS = ("recall estimate classifier sample document topic crowd label judgment annotator report "
         "certification region stratum budget precision interval vote worker corpus").split()


# --------------------------------------------------------------------------- inside Label Studio's Django


def ls_setup(*, annotators: int, tasks: int, text_chars: int) -> dict:
    """Run by Label Studio's Python (``--ls-setup``): users with tokens, one project, its tasks."""
    import django

    django.setup()
    from jwt_auth.models import JWTSettings
    from organizations.models import Organization
    from projects.models import Project
    from rest_framework.authtoken.models import Token
    from tasks.models import Task
    from users.models import User

    owner = User.objects.filter(email="bench-owner@example.com").first()
    if owner is None:
        owner = User.objects.create_user(email="bench-owner@example.com", password="bench-owner-password")
    org = Organization.objects.filter(created_by=owner).first()
    if org is None:
        org = Organization.create_organization(created_by=owner, title="bench")
    JWTSettings.objects.update_or_create(organization=org, defaults={"legacy_api_tokens_enabled": True})
    owner.active_organization = org
    owner.save(update_fields=["active_organization"])
    tokens = []
    for i in range(annotators):
        email = f"load-{i:03d}@example.com"
        user = User.objects.filter(email=email).first()
        if user is None:
            user = User.objects.create_user(email=email, password=None)  # token only: no password to hash
        if not org.has_user(user):
            org.add_user(user)
        if user.active_organization_id != org.pk:
            user.active_organization = org
            user.save(update_fields=["active_organization"])
        token, _ = Token.objects.get_or_create(user=user)
        tokens.append(token.key)
    project = Project.objects.create(
        title=f"bench-{int(time.time())}", label_config=LABEL_CONFIG, created_by=owner, organization=org,
        maximum_annotations=3, overlap_cohort_percentage=100, show_skip_button=False,
    )
    rng = random.Random(20261124)
    Task.objects.bulk_create(
        (Task(project=project, overlap=3,
              data={"text": " ".join(rng.choice(WORDS) for _ in range(text_chars // 8))})
         for _ in range(tasks)),
        batch_size=2000,
    )
    project.update_tasks_states(maximum_annotations_changed=True, overlap_cohort_percentage_changed=True,
                                tasks_number_changed=True)
    return {"project": project.pk, "tokens": tokens, "tasks": project.tasks.count()}


# --------------------------------------------------------------------------- driving both (our venv)


def _ls_env(args: argparse.Namespace) -> dict[str, str]:
    site = next(pathlib.Path(args.ls_venv, "lib").glob("python3*/site-packages/label_studio"))
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_URL", "REDIS_URL"))},
        "DJANGO_SETTINGS_MODULE": "core.settings.label_studio",
        "PYTHONPATH": str(site),
        "DJANGO_DB": "default",
        "POSTGRE_NAME": args.ls_database,
        "POSTGRE_USER": "postgres",
        "POSTGRE_PASSWORD": "",
        "POSTGRE_HOST": "127.0.0.1",
        "POSTGRE_PORT": "5432",
        "LABEL_STUDIO_BASE_DATA_DIR": str(pathlib.Path(args.ls_venv).parent / "ls-data"),
        "DEBUG": "false",
        "LOG_LEVEL": "WARNING",
        "LATEST_VERSION_CHECK": "false",
        "COLLECT_ANALYTICS": "false",
        # Label Studio reports errors and 2 % of requests to its Sentry by default; off, as nothing leaves here.
        "SENTRY_DSN": "",
        "FRONTEND_SENTRY_DSN": "",
        "SECRET_KEY": "bench-only-" + "x" * 40,
    }


def _ls_python(args: argparse.Namespace) -> str:
    return str(pathlib.Path(args.ls_venv) / "bin" / "python")


def ls_prepare(args: argparse.Namespace, tasks: int) -> dict:
    env = _ls_env(args)
    if args.ls_migrate:
        manage = pathlib.Path(env["PYTHONPATH"]) / "manage.py"
        subprocess.run([_ls_python(args), str(manage), "migrate", "-v0"], env=env, cwd="/tmp", check=True)
    result = subprocess.run(
        [_ls_python(args), str(pathlib.Path(__file__).resolve()), "--ls-setup", "--annotators", str(args.annotators),
         "--ls-tasks", str(tasks), "--text-chars", str(args.text_chars)],
        env=env, cwd="/tmp", check=True, capture_output=True, text=True,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def ls_start(args: argparse.Namespace, bench_load) -> subprocess.Popen:
    return bench_load.server_start(
        bench_load.gunicorn_command(str(pathlib.Path(args.ls_venv) / "bin" / "gunicorn"), "core.wsgi:application",
                                    port=args.ls_port, workers=args.workers, threads=args.threads),
        port=args.ls_port, cwd="/tmp", env=_ls_env(args), name="Label Studio's gunicorn",
    )


def ls_annotator_class(bench_load):
    """A Label Studio annotator on bench_load's client: the same connection and timing code, its token."""

    class LabelStudioAnnotator(bench_load.Annotator):
        accept = "application/json"
        keep_cookies = False  # token authentication only: no session, no CSRF

        def __init__(self, port: int, token: str, project: int, sent: dict):
            super().__init__(port, "", sent)
            self.cookies: dict[str, str] = {}
            self.extra_headers = {"Authorization": f"Token {token}"}
            self.project = project

        def _take(self, text: str, status: int) -> bool:
            if status == 404:  # no task left for this annotator
                self.docs = []
                return False
            if status != 200:
                raise RuntimeError(f"next HTTP {status}")
            self.docs = [int(json.loads(text)["id"])]
            return True

        def claim(self, stats) -> bool:
            try:
                started = time.perf_counter()
                status, _, text = self._request("GET", f"/api/projects/{self.project}/next/")
                ok = self._take(text, status)
                with stats.lock:
                    stats.claim.append(time.perf_counter() - started)
                    if not ok:
                        stats.no_hit += 1
                return ok
            except Exception as exc:  # noqa: BLE001 - counted
                stats.error(f"claim: {type(exc).__name__}: {exc}"[:80])
                self.conn = None
                return False

        def submit(self, scheduled: float, stats) -> None:
            if not self.docs and not self.claim(stats):
                return
            task = self.docs[0]
            relevant = (task * 7919) % 3 == 0
            body = {"result": [{"from_name": "answer", "to_name": "text", "type": "choices",
                                "value": {"choices": ["Relevant" if relevant else "Not relevant"]}}],
                    "lead_time": 5.0}
            try:
                started = time.perf_counter()
                status, _, text = self._request("POST", f"/api/tasks/{task}/annotations/", json_body=body)
                posted = time.perf_counter()
                if status >= 400:
                    raise RuntimeError(f"submit HTTP {status} {text[:60]}")
                self.sent[(task, 0)] = relevant
                status, _, text = self._request("GET", f"/api/projects/{self.project}/next/")
                finished = time.perf_counter()
                with stats.lock:
                    stats.next.append(finished - posted)
                    stats.post.append(posted - started)
                    stats.submit.append(finished - scheduled)
                    stats.lag.append(max(0.0, started - scheduled))
                    stats.judgments += 1
                if not self._take(text, status):
                    with stats.lock:
                        stats.no_hit += 1
            except Exception as exc:  # noqa: BLE001 - counted
                stats.error(f"submit: {type(exc).__name__}: {exc}"[:80])
                self.conn = None
                self.docs = []

    return LabelStudioAnnotator


def main() -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    sys.path.insert(0, str(ROOT))
    import bench_load

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    bench_load.arguments_add(parser)
    parser.set_defaults(database="h_hc_load", redis_db=6, rates="25,50,100,200")
    parser.add_argument("--ls-venv", default="/work/ls-venv")
    parser.add_argument("--ls-database", default="h_ls", help="Label Studio's PostgreSQL database (must exist)")
    parser.add_argument("--ls-port", type=int, default=8766)
    parser.add_argument("--ls-migrate", action="store_true", help="migrate Label Studio's database first")
    parser.add_argument("--only", choices=("both", "app", "ls"), default="both")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("terminated"))  # so the servers are stopped (finally)
    rates = [float(r) for r in args.rates.split(",")]

    env, topic_id, keys = bench_load.app_prepare(args)
    from annotation.models import HitItem

    documents = HitItem.objects.filter(topic_id=topic_id).count()
    from django.db import connection

    connection.close()
    started = time.perf_counter()
    ls = ls_prepare(args, documents)
    print(f"label studio: project {ls['project']}, {ls['tasks']:,} one-document tasks, 3 annotations each, "
          f"{len(ls['tokens'])} annotators with tokens (set up in {time.perf_counter() - started:.0f} s); "
          f"gunicorn {args.workers} workers x {args.threads} threads", flush=True)

    app_sent: dict = {}
    ls_sent: dict = {}
    ours = [bench_load.Annotator(args.port, key, app_sent) for key in keys]
    cls = ls_annotator_class(bench_load)
    theirs = [cls(args.ls_port, token, ls["project"], ls_sent) for token in ls["tokens"]]
    summary = []
    server = None
    try:
        for i, rate in enumerate(rates):
            figures = {}
            for side, annotators, hit_size in (("app", ours, 5), ("ls", theirs, 1)):
                if args.only not in ("both", side):
                    continue
                # Only the side being measured runs: a server left with a backlog (requests the client gave
                # up on) would otherwise go on eating the other side's CPU.
                server = bench_load.app_start(args, env) if side == "app" else ls_start(args, bench_load)
                for annotator in annotators:
                    annotator.conn = None
                stats = bench_load.run_step(annotators, rate, args.duration, hit_size, seed=i)
                bench_load.server_stop(server)
                server = None
                print(f"{'ours' if side == 'app' else 'Label Studio'}: {bench_load.STEP_HEADER}", flush=True)
                print(bench_load.step_report(rate, stats, args.duration), flush=True)
                figures[side] = (bench_load.achieved_rate(stats, args.duration), bench_load._pct(stats.submit, .95),
                                 os.getloadavg()[0])
            summary.append((rate, figures))
        print("\noffered j/s | ours j/s (p95 ms) | Label Studio j/s (p95 ms) | ratio j/s | load 1 min")
        for rate, figures in summary:
            app = figures.get("app", (float("nan"),) * 3)
            lsf = figures.get("ls", (float("nan"),) * 3)
            ratio = app[0] / lsf[0] if lsf[0] and lsf[0] == lsf[0] else float("nan")
            print(f"{rate:11.0f} | {app[0]:8.1f} ({app[1]:6.0f}) | {lsf[0]:16.1f} ({lsf[1]:6.0f}) | "
                  f"{ratio:9.1f} | {app[2]:.2f} / {lsf[2]:.2f}", flush=True)
        if args.only in ("both", "app"):
            print(bench_load._check(topic_id, app_sent), flush=True)
    finally:
        if server is not None:
            bench_load.server_stop(server)
        bench_load.redis_flush(env)


if __name__ == "__main__":
    if "--ls-setup" in sys.argv:
        setup = argparse.ArgumentParser()
        setup.add_argument("--ls-setup", action="store_true")
        setup.add_argument("--annotators", type=int, required=True)
        setup.add_argument("--ls-tasks", type=int, required=True)
        setup.add_argument("--text-chars", type=int, required=True)
        a = setup.parse_args()
        print(json.dumps(ls_setup(annotators=a.annotators, tasks=a.ls_tasks, text_chars=a.text_chars)))
    else:
        main()
