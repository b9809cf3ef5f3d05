"""The production-like stack on loopback, for the end-to-end and fault tests (issue 15).

Real processes, production settings: gunicorn (2 workers, `config.settings.production`), a Celery
worker and Celery beat (`celery -A config worker|beat`), PostgreSQL and Redis. Each module gets a
database of its own (`e2e_<pid>_<n>`: the pid differs between xdist workers; created from the server's
`postgres` database and dropped at the end) and a private `redis-server` on a free port (or, for
test_production_stack.py with E2E_REDIS_DB=<n>, that database of the shared Redis server).

The stack is driven only through HTTP, like a browser behind the TLS-terminating proxy of
docs/deploy.md: every request carries `X-Forwarded-Proto: https` (SECURE_PROXY_SSL_HEADER), so the
production settings apply unchanged (HTTPS redirect, secure cookies, CSRF with Origin/Referer).
The test reads the database directly (psycopg) only to assert invariants and to know the truth a
simulated annotator answers with.

Runs when PostgreSQL is given (E2E_POSTGRES_URL, or DATABASE_URL when it is a PostgreSQL URL: the
PostgreSQL leg of .ci/run) and both servers answer; skipped otherwise, except that with
REQUIRE_POSTGRES=1 a missing server is a failure.
"""
from __future__ import annotations

import atexit
import contextlib
import html.parser
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
PASSWORD = "e2e-Pass-" + secrets.token_hex(6)
_counter = iter(range(1, 1000))
_STATIC_DONE: Path | None = None  # the files collected by the first stack of the session


# --------------------------------------------------------------------------- services


def _required() -> bool:
    return os.environ.get("REQUIRE_POSTGRES") == "1"


def _unavailable(reason: str) -> None:
    if _required():
        pytest.fail(f"REQUIRE_POSTGRES=1 but {reason}: the end-to-end stack cannot run")
    pytest.skip(reason)


def postgres_admin_url() -> str:
    """The server's maintenance database URL, or a skip (a failure under REQUIRE_POSTGRES=1)."""
    url = os.environ.get("E2E_POSTGRES_URL", "")
    if not url:
        database_url = os.environ.get("DATABASE_URL", "")
        if database_url.startswith(("postgres://", "postgresql://")):
            url = database_url
    if not url:
        _unavailable("no PostgreSQL given (E2E_POSTGRES_URL or a postgres DATABASE_URL)")
    parts = urlsplit(url)
    admin = parts._replace(scheme="postgresql", path="/postgres").geturl()
    import psycopg

    try:
        psycopg.connect(admin, connect_timeout=5).close()
    except psycopg.Error as exc:
        _unavailable(f"PostgreSQL at {parts.hostname}:{parts.port} is unreachable: {exc}")
    return admin


def redis_server_url() -> str:
    """The shared Redis server (REDIS_URL's host and port, default 127.0.0.1:6379) with no database number."""
    import redis

    parts = urlsplit(os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0")
    base = f"redis://{parts.hostname or '127.0.0.1'}:{parts.port or 6379}"
    try:
        redis.Redis.from_url(base + "/0", socket_connect_timeout=2).ping()
    except redis.RedisError as exc:
        _unavailable(f"Redis at {base} is unreachable: {exc}")
    return base


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(predicate: Callable[[], Any], what: str, timeout: float = 60, interval: float = 0.2) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)


class PrivateRedis:
    """A `redis-server --save ''` of this test's own on a free loopback port, to stop and start at will."""

    def __init__(self, directory: Path) -> None:
        self.port = free_port()
        self.directory = directory
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    def start(self) -> None:
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        log = open(self.directory / f"redis-{self.port}.log", "ab")  # closed with the process
        self.process = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.directory)], stdout=log, stderr=subprocess.STDOUT)
        import redis

        def up() -> bool:
            try:
                return bool(redis.Redis(port=self.port, socket_connect_timeout=0.5).ping())
            except redis.RedisError:
                return False

        wait_for(up, "the private redis-server", timeout=15)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)
        self.process = None


# --------------------------------------------------------------------------- the stack


def compose_command(service: str) -> list[str]:
    """The command docker-compose.yml runs for `service` (web: the Dockerfile's CMD), its program taken from
    this virtualenv: the e2e stack starts exactly what a deployment starts (tests/test_compose.py checks it)."""
    import yaml

    spec = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"][service]
    command = spec.get("command")
    if command is None:
        dockerfile = (ROOT / "Dockerfile").read_text()
        command = json.loads([line for line in dockerfile.splitlines() if line.startswith("CMD ")][-1][4:])
    program = VENV_BIN / command[0]
    return [str(program if program.exists() else command[0]), *command[1:]]


def compose_healthcheck(service: str) -> list[str]:
    """docker-compose.yml's healthcheck of `service`, as argv ("CMD-SHELL" through sh, $$ as compose leaves it)."""
    import yaml

    test = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"][service]["healthcheck"]["test"]
    if test[0] == "CMD-SHELL":
        return ["sh", "-c", test[1].replace("$$", "$")]
    program = VENV_BIN / test[1]
    return [str(program if program.exists() else test[1]), *test[2:]]


@dataclass
class Stack:
    """Databases, processes and logs of one production-like stack."""

    admin_url: str
    redis_url: str  # with its database number
    workdir: Path
    database: str = field(init=False)
    env: dict[str, str] = field(init=False)
    port: int = field(init=False)
    processes: dict[str, subprocess.Popen] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.database = f"e2e_{os.getpid()}_{next(_counter)}"
        parts = urlsplit(self.admin_url)
        self.database_url = parts._replace(scheme="postgres", path="/" + self.database).geturl()
        self.port = free_port()
        (self.workdir / "var").mkdir(parents=True, exist_ok=True)
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_", "REDIS_"))},
            "DJANGO_SETTINGS_MODULE": "config.settings.production",
            "DJANGO_SECRET_KEY": secrets.token_urlsafe(64),
            "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
            "DATABASE_URL": self.database_url,
            "REDIS_URL": self.redis_url,
            "APP_VAR_DIR": str(self.workdir / "var"),
            "PYTHONUNBUFFERED": "1",
        }

    # --- database

    def sql(self, query: str, params: tuple | dict = ()) -> list[tuple]:
        """Rows of one query on the stack's database (autocommit)."""
        import psycopg

        with psycopg.connect(self.database_url.replace("postgres://", "postgresql://", 1), autocommit=True,
                             connect_timeout=5) as conn:
            cursor = conn.execute(query, params)
            return cursor.fetchall() if cursor.description else []

    def create_database(self) -> None:
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{self.database}"')

    def drop_database(self) -> None:
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')

    def terminate_backends(self) -> int:
        """pg_terminate_backend on every connection of the web and worker processes to this database."""
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            rows = conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
                (self.database,)).fetchall()
        return sum(1 for (ok,) in rows if ok)

    # --- commands and processes

    def manage(self, *args: str, stdin: str | None = None, timeout: float = 180) -> str:
        result = subprocess.run([str(VENV_BIN / "python"), "manage.py", *args], cwd=ROOT, env=self.env,
                                input=stdin, capture_output=True, text=True, timeout=timeout)
        if result.returncode != 0:
            raise AssertionError(f"manage.py {' '.join(args)} failed ({result.returncode}):\n"
                                 f"{result.stdout}\n{result.stderr}")
        return result.stdout

    def users_add(self, users: dict[str, str]) -> None:
        """`manage.py user_add <name> --role <role> --password-stdin` for each user, in one process (one
        Django start-up instead of one per user: they dominate the boot on a loaded 2-core machine)."""
        script = (
            "import io, sys\n"
            "from django.core.management import call_command\n"
            "password = sys.stdin.readline().rstrip('\\n')\n"
            f"for name, role in {sorted(users.items())!r}:\n"
            "    call_command('user_add', name, role=role, password_stdin=True, stdin=io.StringIO(password + '\\n'))\n"
        )
        self.manage("shell", "-c", script, stdin=PASSWORD + "\n")

    def log(self, name: str) -> Path:
        return self.workdir / f"{name}.log"

    def start(self, name: str) -> subprocess.Popen:
        """The compose service's own command (compose_command), sized for this machine through the environment
        the settings and config/gunicorn.py read, as an operator's .env would."""
        log = open(self.log(name), "ab")  # closed with the process
        process = subprocess.Popen(compose_command(name), cwd=ROOT, env=self.service_env(), stdout=log,
                                   stderr=subprocess.STDOUT, start_new_session=True)
        self.processes[name] = process
        if name == "web":
            wait_for(self._web_up, "gunicorn to answer", timeout=60)
        elif name == "worker":
            wait_for(lambda: "ready." in self.log("worker").read_text(errors="replace").split("--- start ---")[-1],
                     "the Celery worker to be ready", timeout=60)
        return process

    def service_env(self) -> dict[str, str]:
        """The services' environment: the stack's, sized for this machine (loopback port, 2 web workers, 1 task
        process), and the virtualenv first on PATH for the healthchecks' shell commands."""
        return {**self.env, "GUNICORN_BIND": f"127.0.0.1:{self.port}", "WEB_CONCURRENCY": "2",
                "GUNICORN_TIMEOUT": "60", "GUNICORN_GRACEFUL_TIMEOUT": "20", "CELERY_WORKER_CONCURRENCY": "1",
                "PATH": f"{VENV_BIN}{os.pathsep}{self.env.get('PATH', '')}", "HOSTNAME": socket.gethostname()}

    def healthcheck(self, service: str) -> subprocess.CompletedProcess:
        """Run docker-compose.yml's healthcheck of `service` against this stack's process."""
        return subprocess.run(compose_healthcheck(service), cwd=ROOT, env=self.service_env(), capture_output=True,
                              text=True, timeout=120)

    def _web_up(self) -> bool:
        process = self.processes["web"]
        if process.poll() is not None:
            raise AssertionError(f"gunicorn exited: {self.log('web').read_text(errors='replace')[-3000:]}")
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                return True
        except OSError:
            return False

    def mark_log(self, name: str) -> None:
        with open(self.log(name), "a") as log:
            log.write("\n--- start ---\n")

    def stop(self, name: str, sig: int = signal.SIGTERM, timeout: float = 30) -> None:
        """Signal the process group (a Celery worker's pool children too) and wait for the main process."""
        process = self.processes.pop(name, None)
        if process is None or process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)

    def signal(self, name: str, sig: int) -> None:
        os.kill(self.processes[name].pid, sig)

    def boot(self, users: dict[str, str]) -> None:
        steps: list[tuple[str, Callable[[], Any]]] = [
            ("createdb", self.create_database),
            ("migrate", lambda: self.manage("migrate", "--noinput", timeout=300)),
            ("collectstatic", self._collectstatic),
            ("user_add", lambda: self.users_add(users)),
            ("web", lambda: self.start("web")),
            ("worker", self._start_worker),
            ("beat", lambda: self.start("beat")),
        ]
        for name, step in steps:
            started = time.monotonic()
            step()
            self.timings[name] = round(time.monotonic() - started, 1)

    def _collectstatic(self) -> None:
        """collectstatic into STATIC_ROOT (APP_VAR_DIR/staticfiles); once per test session, then linked."""
        global _STATIC_DONE
        if _STATIC_DONE is None:
            self.manage("collectstatic", "--noinput")
            _STATIC_DONE = Path(tempfile.mkdtemp(prefix="e2e-static-")) / "staticfiles"
            atexit.register(shutil.rmtree, _STATIC_DONE.parent, True)
            shutil.copytree(self.workdir / "var" / "staticfiles", _STATIC_DONE)
        else:
            (self.workdir / "var" / "staticfiles").symlink_to(_STATIC_DONE, target_is_directory=True)

    def _start_worker(self) -> None:
        self.mark_log("worker")
        self.start("worker")

    def shutdown(self) -> None:
        for name in list(self.processes):
            self.stop(name)

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def errors_in_logs(self) -> str:
        """Tracebacks the web processes wrote (a 500 reaches gunicorn's log as an error with a traceback)."""
        text = self.log("web").read_text(errors="replace") if self.log("web").exists() else ""
        return "\n".join(line for line in text.splitlines() if "Traceback" in line or "Internal Server Error" in line)


@contextlib.contextmanager
def running_stack(*, redis_url: str, users: dict[str, str]) -> Iterator[Stack]:
    admin = postgres_admin_url()
    workdir = Path(tempfile.mkdtemp(prefix="e2e-stack-"))
    stack = Stack(admin_url=admin, redis_url=redis_url, workdir=workdir)
    try:
        stack.boot(users)
        sys.stderr.write(f"\ne2e stack up (s): {stack.timings}\n")
        yield stack
    except BaseException:
        for name in ("web", "worker", "beat"):
            if stack.log(name).exists():
                sys.stderr.write(f"\n===== {name} log (tail) =====\n"
                                 + stack.log(name).read_text(errors="replace")[-4000:])
        raise
    finally:
        stack.shutdown()
        with contextlib.suppress(Exception):
            stack.drop_database()
        if os.environ.get("E2E_KEEP_LOGS") != "1":
            shutil.rmtree(workdir, ignore_errors=True)


def flush_redis_db(url: str) -> None:
    import redis

    redis.Redis.from_url(url).flushdb()


# --------------------------------------------------------------------------- HTTP client


@dataclass
class Form:
    action: str
    method: str
    fields: list[tuple[str, str]]
    radios: dict[str, list[str]]
    submits: list[tuple[str, str]]

    def data(self, **overrides: Any) -> list[tuple[str, str]]:
        """The form's default values with `overrides` (a list value sends the name several times)."""
        out = [(k, v) for k, v in self.fields if k not in overrides]
        for key, value in overrides.items():
            if value is None:
                continue
            if isinstance(value, (list, tuple)):
                out.extend((key, str(item)) for item in value)
            else:
                out.append((key, str(value)))
        return out


class _FormParser(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.forms: list[Form] = []
        self._form: Form | None = None
        self._textarea: str | None = None
        self._text = ""
        self._select: str | None = None
        self._select_first: str | None = None
        self._select_chosen = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            self._form = Form(action=a.get("action", ""), method=a.get("method", "get").lower(), fields=[],
                              radios={}, submits=[])
            self.forms.append(self._form)
            return
        form = self._form
        if form is None:
            return
        name = a.get("name")
        if tag == "input" and name:
            kind = a.get("type", "text").lower()
            if kind == "radio":
                form.radios.setdefault(name, []).append(a.get("value", "on"))
                if "checked" in a:
                    form.fields.append((name, a.get("value", "on")))
            elif kind == "checkbox":
                if "checked" in a:
                    form.fields.append((name, a.get("value", "on")))
            elif kind in ("submit", "button", "image"):
                form.submits.append((name, a.get("value", "")))
            elif kind != "file":
                form.fields.append((name, a.get("value", "")))
        elif tag == "button" and name:
            form.submits.append((name, a.get("value", "")))
        elif tag == "textarea" and name:
            self._textarea, self._text = name, ""
        elif tag == "select" and name:
            self._select, self._select_first, self._select_chosen = name, None, False
        elif tag == "option" and self._select:
            value = a.get("value", "")
            if self._select_first is None:
                self._select_first = value
            if "selected" in a and not self._select_chosen:
                form.fields.append((self._select, value))
                self._select_chosen = True

    def handle_data(self, data: str) -> None:
        if self._textarea is not None:
            self._text += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._form = None
        elif tag == "textarea" and self._textarea is not None and self._form is not None:
            self._form.fields.append((self._textarea, self._text.lstrip("\n")))
            self._textarea = None
        elif tag == "select" and self._select is not None and self._form is not None:
            if not self._select_chosen and self._select_first is not None:
                self._form.fields.append((self._select, self._select_first))
            self._select = None


def forms_of(page: str) -> list[Form]:
    parser = _FormParser()
    parser.feed(page)
    return parser.forms


class Client:
    """A signed-in browser without JavaScript, behind the simulated TLS proxy."""

    def __init__(self, stack: Stack, retries: int = 0) -> None:
        import requests

        self.stack = stack
        self.session = requests.Session()
        self.session.headers["X-Forwarded-Proto"] = "https"
        self.retries = retries
        self.statuses: list[int] = []

    def _absolute(self, path: str) -> str:
        return path if path.startswith("http") else self.stack.url(path)

    def request(self, method: str, path: str, **kwargs: Any):
        import requests

        url = self._absolute(path)
        headers = kwargs.pop("headers", {})
        if method != "GET":
            origin = f"https://127.0.0.1:{self.stack.port}"
            headers = {"Origin": origin, "Referer": origin + urlsplit(url).path,
                       "X-CSRFToken": self.session.cookies.get("csrftoken", ""), **headers}
        # requests copies the session's cookies into a jar with the default policy, which keeps `Secure`
        # cookies off plain http: send them by hand (TLS ends at the simulated proxy).
        headers["Cookie"] = "; ".join(f"{c.name}={c.value}" for c in self.session.cookies)
        kwargs.setdefault("timeout", 60)
        for attempt in range(self.retries + 1):
            try:
                response = self.session.request(method, url, headers=headers, allow_redirects=False, **kwargs)
            except requests.ConnectionError:
                if attempt == self.retries:
                    raise
                time.sleep(0.2 * (attempt + 1))
                continue
            self.statuses.append(response.status_code)
            return response
        raise AssertionError("unreachable")

    def get(self, path: str, **kwargs: Any):
        return self.request("GET", path, **kwargs)

    def post(self, path: str, data: Any = None, **kwargs: Any):
        return self.request("POST", path, data=data, **kwargs)

    def follow(self, response, limit: int = 5):
        """Follow redirects with GET (turning https:// redirects of the proxy's scheme into loopback ones)."""
        for _ in range(limit):
            if response.status_code not in (301, 302, 303):
                return response
            location = urljoin(response.url, response.headers["Location"])
            response = self.get("/" + location.split("/", 3)[3] if "://" in location else location)
        return response

    def page(self, path: str):
        response = self.follow(self.get(path))
        assert response.status_code == 200, (path, response.status_code, response.text[:2000])
        return response

    def form(self, path: str, match: Callable[[Form], bool]) -> Form:
        page = self.page(path)
        found = [f for f in forms_of(page.text) if match(f)]
        assert found, f"no such form on {path}: {[f.action for f in forms_of(page.text)]}"
        return found[0]

    def login(self, username: str) -> None:
        form = self.form("/accounts/login/", lambda f: f.method == "post")
        response = self.post("/accounts/login/", form.data(username=username, password=PASSWORD))
        assert response.status_code == 302, (username, response.status_code, response.text[:1000])


def redirect_path(response) -> str:
    location = response.headers["Location"]
    return "/" + location.split("/", 3)[3] if "://" in location else location


def path_id(path: str, pattern: str) -> int:
    found = re.search(pattern, path)
    assert found, (pattern, path)
    return int(found.group(1))


def json_of(response) -> dict:
    return json.loads(response.text)


# --------------------------------------------------------------------------- the analyst's and annotators' steps


def csrf_token(client: Client, path: str = "/") -> str:
    """A CSRF token of the client's session, read from a form on `path` (as a browser would)."""
    for form in forms_of(client.page(path).text):
        for name, value in form.fields:
            if name == "csrfmiddlewaretoken":
                return value
    raise AssertionError(f"no CSRF token on {path}")


def corpus_write(directory: Path, *, documents: int, seed: int, prevalence: float) -> tuple[Path, set[str]]:
    """A generated news corpus (annotation/demo/corpus.py) with coffee stories at `prevalence`; the
    external ids of the coffee stories (the truth simulated annotators answer with)."""
    import dataclasses

    from annotation.demo.corpus import DEFAULT_TOPICS, demo_corpus_records

    topics = (dataclasses.replace(DEFAULT_TOPICS[0], prevalence=prevalence),)
    path = directory / f"corpus-{documents}-{seed}.jsonl"
    relevant: set[str] = set()
    with open(path, "w", encoding="utf-8") as out:
        for record in demo_corpus_records(documents=documents, seed=seed, topics=topics):
            if "coffee" in record["topics"]:
                relevant.add(record["id"])
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path, relevant


def corpus_upload(client: Client, path: Path, *, name: str) -> int:
    """The upload form, as a browser posts it; returns the upload's id (the import runs in the worker)."""
    form = client.form("/analyst/corpora/upload/", lambda f: f.method == "post" and "corpus_name" in dict(f.fields))
    with open(path, "rb") as fh:
        response = client.post("/analyst/corpora/upload/",
                               form.data(corpus_name=name, id_field="id", text_fields="title, body"),
                               files={"file": (path.name, fh, "application/octet-stream")})
    assert response.status_code == 302, (response.status_code, response.text[:2000])
    return path_id(redirect_path(response), r"/uploads/(\d+)/")


def upload_wait(client: Client, upload_id: int, timeout: float = 120) -> dict:
    """Poll the upload's status JSON (as its page does) until the import is done or failed."""
    def finished() -> dict | None:
        response = client.get(f"/analyst/corpora/uploads/{upload_id}/status.json")
        assert response.status_code == 200, response.text[:1000]
        state = json_of(response)
        return state if state["finished"] else None

    return wait_for(finished, f"upload {upload_id} to finish", timeout=timeout, interval=0.5)


def classifier_keywords(client: Client, stack: Stack, *, corpus_id: int, name: str, terms: list[str],
                        fields: list[str]) -> int:
    """Create a keyword classifier through its form; the id once it exists (built in the request or a task)."""
    path = f"/analyst/corpora/{corpus_id}/classifiers/keywords/"
    form = client.form(path, lambda f: f.method == "post" and "terms" in dict(f.fields))
    response = client.post(path, form.data(name=name, terms="\n".join(terms), fields=fields, create="1"))
    assert response.status_code == 302, (response.status_code, response.text[:3000])
    rows = wait_for(lambda: stack.sql("SELECT id FROM annotation_classifier WHERE corpus_id = %s AND name = %s",
                                      (corpus_id, name)), f"classifier {name!r}", timeout=120, interval=0.5)
    return int(rows[0][0])


def topic_create(client: Client, *, corpus_id: int, name: str, c1: int, c2: int, hit_size: int) -> int:
    path = f"/analyst/topics/new/?corpus={corpus_id}"
    form = client.form(path, lambda f: f.method == "post" and "c1" in field_names(f))
    data = form.data(name=name, instructions="Is this story about the coffee market?", c1=c1, c2=c2,
                     hit_size=hit_size, crowd="local", budget="", extra=None)
    response = client.post(path, data)
    assert response.status_code == 302, (response.status_code, response.text[:3000])
    return path_id(redirect_path(response), r"/topics/(\d+)/")


def field_names(form: Form) -> set[str]:
    return {name for name, _ in form.fields} | set(form.radios)


def topic_launch(client: Client, stack: Stack, *, topic_id: int, half_width: float) -> int:
    """Launch with the confirmation step (two POSTs); waits for the worker to create the HITs; returns their count."""
    action = f"/analyst/topics/{topic_id}/launch/"
    form = client.form(f"/analyst/topics/{topic_id}/?half_width={half_width}", lambda f: f.action == action)
    confirm_page = client.post(action, form.data(half_width=half_width, complement=0))
    assert confirm_page.status_code == 200, (confirm_page.status_code, confirm_page.text[:2000])
    confirm = [f for f in forms_of(confirm_page.text) if f.action == action]
    assert confirm and "confirm_cost" in field_names(confirm[0]), confirm_page.text[:3000]
    response = client.post(action, confirm[0].data())
    assert response.status_code == 302, (response.status_code, response.text[:2000])
    return wait_for(lambda: stack.sql("SELECT count(*) FROM annotation_hit WHERE topic_id = %s",
                                      (topic_id,))[0][0], "the launch's HITs", timeout=120, interval=0.5)


@dataclass
class AnnotatorRun:
    acknowledged: dict[int, dict[int, bool]] = field(default_factory=dict)  # assignment -> answers stored
    failures: list[str] = field(default_factory=list)
    submits: int = 0


def annotator_session(stack: Stack, username: str, *, retries: int = 0) -> Client:
    client = Client(stack, retries=retries)
    client.login(username)
    return client


def annotate(client: Client, truth: Callable[[int], bool], run: AnnotatorRun, *,
             stop: Callable[[], bool] = lambda: False, pause: float = 0.0, limit: int | None = None) -> AnnotatorRun:
    """Claim → page → submit (JSON, as annotator.js does) until no HIT is left for this worker.

    A submit counts as acknowledged only on a 200 with ok=true; a lost connection is retried with the
    same answers (the service replays a stored submit)."""
    token = csrf_token(client, "/annotate/")
    while not stop() and (limit is None or len(run.acknowledged) < limit):
        if len(run.failures) >= 20:  # a failing server: report it rather than loop until the test's timeout
            run.failures.append("gave up after 20 failed requests")
            return run
        response = client.post("/annotate/next/", {"csrfmiddlewaretoken": token})
        if response.status_code != 302:
            run.failures.append(f"next: {response.status_code}")
            continue
        target = redirect_path(response)
        if "/assignments/" not in target:
            return run  # no HIT left for this worker
        assignment_id = path_id(target, r"/assignments/(\d+)/")
        page = client.get(target)
        if page.status_code != 200:
            run.failures.append(f"page {target}: {page.status_code}")
            continue
        forms = [f for f in forms_of(page.text) if f.radios]
        assert forms, page.text[:2000]
        answers = {int(name[4:]): truth(int(name[4:])) for name in forms[0].radios if name.startswith("doc-")}
        data = forms[0].data(**{f"doc-{doc}": "1" if value else "0" for doc, value in answers.items()})
        if pause:
            time.sleep(pause)
        response = client.post(target, data, headers={"Accept": "application/json"})
        run.submits += 1
        if response.status_code == 200 and json_of(response).get("ok"):
            run.acknowledged[assignment_id] = answers
        else:
            run.failures.append(f"submit {assignment_id}: {response.status_code} {response.text[:300]}")
    return run


def truth_by_document(stack: Stack, corpus_id: int, relevant_external: set[str]) -> dict[int, bool]:
    rows = stack.sql("SELECT id, external_id FROM annotation_document WHERE corpus_id = %s", (corpus_id,))
    return {int(pk): external in relevant_external for pk, external in rows}


def judgment_invariants(stack: Stack, runs: list[AnnotatorRun]) -> int:
    """Across every topic (an annotator's queue spans topics): no duplicate judgment, at most three per
    document and topic, every acknowledged submit stored with its answers. Returns the number of judgments."""
    duplicates = stack.sql(
        "SELECT topic_id, document_id, worker_id, count(*) FROM annotation_judgment "
        "GROUP BY topic_id, document_id, worker_id HAVING count(*) > 1")
    assert duplicates == [], f"duplicate judgments (topic, document, worker, n): {duplicates[:10]}"
    over = stack.sql("SELECT topic_id, document_id, count(*) FROM annotation_judgment "
                     "GROUP BY topic_id, document_id HAVING count(*) > 3")
    assert over == [], f"documents with more than three judgments: {over[:10]}"
    stored = {(int(a), int(d)): bool(r) for a, d, r in stack.sql(
        "SELECT assignment_id, document_id, relevant FROM annotation_judgment")}
    lost = [(assignment, doc) for run in runs for assignment, answers in run.acknowledged.items()
            for doc, value in answers.items() if stored.get((assignment, doc)) != value]
    assert lost == [], f"acknowledged answers missing or different in the database: {lost[:10]}"
    return len(stored)


@dataclass
class Corpus:
    id: int
    c1: int
    c2: int
    truth: dict[int, bool]


def corpus_prepare(stack: Stack, client: Client, directory: Path, *, documents: int = 1500) -> Corpus:
    """Upload a generated corpus and create its two keyword classifiers, all through the analyst's pages."""
    path, relevant = corpus_write(directory, documents=documents, seed=15, prevalence=0.15)
    upload_id = corpus_upload(client, path, name=f"e2e news {documents}")
    state = upload_wait(client, upload_id)
    assert state["status"] == "done", state
    corpus_id = int(state["corpus_id"])
    c1 = classifier_keywords(client, stack, corpus_id=corpus_id, name="coffee headlines",
                             terms=["coffee", "arabica", "espresso"], fields=["title"])
    c2 = classifier_keywords(client, stack, corpus_id=corpus_id, name="coffee bodies",
                             terms=["coffee beans", "robusta", "roasters", "ico quota"], fields=["text"])
    return Corpus(id=corpus_id, c1=c1, c2=c2, truth=truth_by_document(stack, corpus_id, relevant))


def report_judgments(client: Client, topic_id: int) -> int | None:
    """The judgments the topic's latest report was computed from, as its JSON export says (None: no report)."""
    response = client.get(f"/reports/topics/{topic_id}/report.json")
    if response.status_code != 200:
        return None
    return int(json_of(response)["report"]["judgments_total"])


def judgments_stored(stack: Stack, topic_id: int) -> int:
    return int(stack.sql("SELECT count(*) FROM annotation_judgment WHERE topic_id = %s", (topic_id,))[0][0])


def report_catches_up(client: Client, stack: Stack, topic_id: int, *, timeout: float) -> float:
    """Seconds until the served report holds every stored judgment."""
    started = time.monotonic()
    wait_for(lambda: report_judgments(client, topic_id) == judgments_stored(stack, topic_id),
             "the report to hold every stored judgment", timeout=timeout, interval=1.0)
    return round(time.monotonic() - started, 1)
