"""Webhook tests: the settings allow 127.0.0.1 (a private address, so private networks are allowed too), and a
real HTTP receiver runs on 127.0.0.1 in a thread, recording every request and answering with scripted statuses."""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


@pytest.fixture(autouse=True)
def _webhook_settings(settings):
    settings.WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]
    settings.WEBHOOK_ALLOW_PRIVATE_NETWORKS = True
    settings.WEBHOOK_TIMEOUT_SECONDS = 2
    settings.WEBHOOK_MAX_ATTEMPTS = 6


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    port: int
    requests: list[Received] = field(default_factory=list)
    # Statuses to answer, in order; when empty, 200. A (status, {header: value}) pair adds headers.
    script: list[int | tuple[int, dict[str, str]]] = field(default_factory=list)

    def url(self, path: str = "/hook") -> str:
        return f"http://127.0.0.1:{self.port}{path}"


@pytest.fixture
def receiver():
    state = Receiver(port=0)
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # http.server's name
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with lock:
                state.requests.append(Received(path=self.path, headers=dict(self.headers.items()), body=body))
                answer = state.script.pop(0) if state.script else 200
            status, extra = answer if isinstance(answer, tuple) else (answer, {})
            self.send_response(status)
            for name, value in extra.items():
                self.send_header(name, value)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        do_GET = do_POST  # a followed redirect would arrive as a GET

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield state
    server.shutdown()
    server.server_close()
