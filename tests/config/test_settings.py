"""Settings come from the environment; production refuses to start unsafely."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


# Variables a test run may set that a deployment never has.
TEST_ONLY_ENV = {"DATABASE_URL", "REDIS_URL", "DJANGO_SECRET_KEY", "DJANGO_ALLOW_ASYNC_UNSAFE"}


def run_manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k not in TEST_ONLY_ENV}
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env={**base, **env}, capture_output=True, text=True, timeout=120
    )


def test_production_passes_check_deploy_with_a_real_secret(tmp_path):
    result = run_manage(
        "check", "--deploy", "--fail-level", "WARNING",
        env={
            "DJANGO_SETTINGS_MODULE": "config.settings.production",
            "DJANGO_SECRET_KEY": "k" * 20 + "-Zq8#vR2$pL9!wX4&nB7*tY1^mC6%hJ3",
            "DJANGO_ALLOWED_HOSTS": "recall.example.com",
            "APP_VAR_DIR": str(tmp_path),
        },
    )
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


PRODUCTION = {
    "DJANGO_SETTINGS_MODULE": "config.settings.production",
    "DJANGO_SECRET_KEY": "k" * 20 + "-Zq8#vR2$pL9!wX4&nB7*tY1^mC6%hJ3",
    "DJANGO_ALLOWED_HOSTS": "recall.example.com",
}


def test_check_deploy_fails_at_warning_level_when_a_protection_is_off(tmp_path):
    """The CI command is meaningful: a warning (here, no HTTPS redirect) fails it."""
    result = run_manage(
        "check", "--deploy", "--fail-level", "WARNING",
        env={**PRODUCTION, "APP_VAR_DIR": str(tmp_path), "DJANGO_SECURE_SSL_REDIRECT": "0"},
    )
    assert result.returncode != 0
    assert "security.W008" in result.stderr + result.stdout


def test_production_wires_static_files_throttling_and_the_content_security_policy(tmp_path):
    """Issue 15: WhiteNoise right after SecurityMiddleware, axes before the password check, CSP on every page."""
    env = {**PRODUCTION, "APP_VAR_DIR": str(tmp_path)}
    middleware = _settings_value("settings.MIDDLEWARE", env)
    assert middleware.startswith(
        "['django.middleware.security.SecurityMiddleware', 'whitenoise.middleware.WhiteNoiseMiddleware'"
    )
    assert "'csp.middleware.CSPMiddleware'" in middleware and middleware.endswith("'axes.middleware.AxesMiddleware']")
    assert _settings_value("settings.STORAGES['staticfiles']['BACKEND']", env) == (
        "whitenoise.storage.CompressedManifestStaticFilesStorage"
    )
    assert _settings_value("settings.AUTHENTICATION_BACKENDS[0]", env) == "axes.backends.AxesStandaloneBackend"
    assert _settings_value("settings.AXES_ENABLED, settings.AXES_FAILURE_LIMIT, settings.AXES_COOLOFF_TIME", env) == (
        "True 10 0:15:00"
    )
    directives = _settings_value("settings.CONTENT_SECURITY_POLICY['DIRECTIVES']['frame-ancestors']", env)
    assert directives == "[\"'none'\"]"


def test_production_refuses_a_missing_secret(tmp_path):
    result = run_manage(
        "check", env={"DJANGO_SETTINGS_MODULE": "config.settings.production", "APP_VAR_DIR": str(tmp_path)}
    )
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY" in result.stderr


def _settings_value(expr: str, env: dict[str, str]) -> str:
    code = f"import django; django.setup(); from django.conf import settings; print({expr})"
    base = {k: v for k, v in os.environ.items() if k not in TEST_ONLY_ENV}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env={**base, **env}, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_embedded_defaults_need_no_service(tmp_path):
    env = {"DJANGO_SETTINGS_MODULE": "config.settings.local", "APP_VAR_DIR": str(tmp_path)}
    assert _settings_value("settings.DATABASES['default']['ENGINE']", env) == "django.db.backends.sqlite3"
    assert _settings_value("settings.DATABASES['default']['NAME']", env) == str(tmp_path / "db.sqlite3")
    assert _settings_value("settings.CELERY_TASK_ALWAYS_EAGER", env) == "True"


@pytest.mark.parametrize(
    "url,engine",
    [("postgres://u@127.0.0.1:5432/recall", "django.db.backends.postgresql")],
)
def test_database_and_redis_urls_switch_to_real_services(tmp_path, url, engine):
    env = {
        "DJANGO_SETTINGS_MODULE": "config.settings.local",
        "APP_VAR_DIR": str(tmp_path),
        "DATABASE_URL": url,
        "REDIS_URL": "redis://127.0.0.1:6379/3",
    }
    assert _settings_value("settings.DATABASES['default']['ENGINE']", env) == engine
    assert _settings_value("settings.CELERY_TASK_ALWAYS_EAGER", env) == "False"
    assert _settings_value("settings.CELERY_BROKER_URL", env) == "redis://127.0.0.1:6379/3"


def test_a_shared_cache_carries_sessions_and_permission_sets(tmp_path):
    """Issue 15: with Redis, sessions and permission sets are read from it (tests/config/test_request_overhead.py)."""
    expr = ("settings.CACHES['default']['BACKEND'], settings.CACHES['default']['LOCATION'], settings.SESSION_ENGINE, "
            "settings.AUTH_PERMISSION_CACHE_SECONDS, settings.AUTHENTICATION_BACKENDS[-1]")
    env = {**PRODUCTION, "APP_VAR_DIR": str(tmp_path), "REDIS_URL": "redis://127.0.0.1:6379/3"}
    assert _settings_value(expr, env) == (
        "django.core.cache.backends.redis.RedisCache redis://127.0.0.1:6379/3 core.sessions 300 "
        "core.auth.CachedPermissionsBackend"
    )
    own = _settings_value(expr, {**env, "CACHE_URL": "redis://127.0.0.1:6379/4"})
    assert own.split()[1] == "redis://127.0.0.1:6379/4"


def test_without_a_shared_cache_nothing_is_cached_across_requests(tmp_path):
    """A per-process memory cache must never hold sessions or permissions: another process would not see a change."""
    expr = "settings.CACHES['default']['BACKEND'], settings.SESSION_ENGINE, settings.AUTH_PERMISSION_CACHE_SECONDS"
    for module in ("config.settings.production", "config.settings.local"):
        env = {**PRODUCTION, "DJANGO_SETTINGS_MODULE": module, "APP_VAR_DIR": str(tmp_path)}
        assert _settings_value(expr, env) == (
            "django.core.cache.backends.locmem.LocMemCache django.contrib.sessions.backends.db 0"
        )


def test_gunicorn_settings_come_from_the_environment(monkeypatch):
    """config/gunicorn.py (the Dockerfile's command): processes and threads; threads mean gthread workers."""
    import runpy

    monkeypatch.setenv("WEB_CONCURRENCY", "3")
    monkeypatch.setenv("GUNICORN_THREADS", "4")
    conf = runpy.run_path(str(ROOT / "config" / "gunicorn.py"))
    assert (conf["workers"], conf["threads"], conf["worker_class"]) == (3, 4, "gthread")
    monkeypatch.setenv("GUNICORN_THREADS", "1")
    assert runpy.run_path(str(ROOT / "config" / "gunicorn.py"))["worker_class"] == "sync"
    assert "gunicorn.py" in (ROOT / "Dockerfile").read_text()
