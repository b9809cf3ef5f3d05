"""gunicorn settings of the web processes (docs/deploy.md); every value can be overridden from the environment.

    gunicorn -c config/gunicorn.py config.wsgi:application

* ``WEB_CONCURRENCY`` worker processes (default 2 x cores + 1, gunicorn's own advice);
* ``GUNICORN_THREADS`` threads per worker: 1 = sync workers; more = gthread workers, which also keep
  client connections alive between requests (sync workers close each one). Each thread holds its own
  database connection (CONN_MAX_AGE), so workers x threads must stay below PostgreSQL's max_connections;
* a worker is recycled after about ``GUNICORN_MAX_REQUESTS`` requests (jittered so they do not all
  restart together), which bounds any slow memory growth;
* ``GUNICORN_TIMEOUT`` seconds before a stuck worker is killed and replaced.
"""
import multiprocessing
import os


def _int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value else default


bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
workers = _int("WEB_CONCURRENCY", 2 * multiprocessing.cpu_count() + 1)
threads = _int("GUNICORN_THREADS", 1)
worker_class = "gthread" if threads > 1 else "sync"
timeout = _int("GUNICORN_TIMEOUT", 30)
graceful_timeout = _int("GUNICORN_GRACEFUL_TIMEOUT", 30)
keepalive = _int("GUNICORN_KEEPALIVE", 5)
max_requests = _int("GUNICORN_MAX_REQUESTS", 5000)
max_requests_jitter = max_requests // 10
# Logs to stderr, collected by the container runtime; access log off unless asked for.
accesslog = os.environ.get("GUNICORN_ACCESS_LOG") or None
errorlog = "-"
