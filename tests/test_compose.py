"""docker-compose.yml, the Dockerfile, .dockerignore and the Caddyfile checked against each other and against
the settings, without a Docker engine (issue 25 item 1): the files are parsed (PyYAML) and compared.

What a running engine would show and these cannot: that the images build, that Caddy obtains a certificate,
that the healthchecks pass inside the containers. tests/test_compose_probes.py runs the healthcheck commands
against real processes; tests/e2e/ runs the services' own commands.
"""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml

from tests.deploy_reads import deployment_reads, env_example_names

ROOT = Path(__file__).resolve().parents[1]
APP_SERVICES = ("migrate", "web", "worker", "beat")
LONG_RUNNING = ("web", "worker", "beat")


def compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())  # merges the `<<: *app` anchors


def dockerfile() -> str:
    # Continuation lines joined, so each instruction is one line.
    return re.sub(r"\\\n\s*", " ", (ROOT / "Dockerfile").read_text())


def dockerfile_instructions(name: str) -> list[str]:
    return [line.split(None, 1)[1] for line in dockerfile().splitlines() if line.startswith(name + " ")]


def dockerfile_cmd() -> list[str]:
    return yaml.safe_load(dockerfile_instructions("CMD")[-1])  # the exec form is a JSON (so YAML) list


def services() -> dict:
    return compose()["services"]


def test_every_app_service_loads_the_whole_env_file():
    """Before: 16 of the settings' variables were passed one by one; WEBHOOK_ALLOWED_HOSTS could not be set."""
    for name in APP_SERVICES:
        service = services()[name]
        env_files = service.get("env_file")
        env_files = [env_files] if isinstance(env_files, str) else env_files or []
        paths = [item if isinstance(item, str) else item["path"] for item in env_files]
        assert ".env" in paths, f"{name}: no env_file .env, so a setting not listed under environment: cannot be set"
        assert service["environment"]["DJANGO_SETTINGS_MODULE"] == "config.settings.production"


def test_fixed_environment_names_are_read_by_the_code():
    """A name compose sets that no code reads (a typo) is a setting that silently does nothing."""
    reads = set(deployment_reads()) | {"DJANGO_SETTINGS_MODULE"}
    for name in APP_SERVICES:
        unknown = set(services()[name]["environment"]) - reads
        assert not unknown, f"{name} sets {sorted(unknown)}, which nothing reads"


def test_interpolated_variables_are_documented_in_env_example():
    listed = set(env_example_names((ROOT / ".env.example").read_text()))
    used = set(re.findall(r"\$\{([A-Z][A-Z0-9_]*)", (ROOT / "docker-compose.yml").read_text()))
    assert used, "the compose file interpolates ${…} variables from .env"
    assert used <= listed, f"interpolated but not in .env.example: {sorted(used - listed)}"


def test_dockerignore_keeps_local_state_history_and_secrets_out_of_the_image():
    """Before: no .dockerignore; COPY . . shipped .venv/ (626 MB), var/ (the demo database's password hashes), .git."""
    entries = {line.strip().rstrip("/") for line in (ROOT / ".dockerignore").read_text().splitlines()
               if line.strip() and not line.startswith("#")}
    assert {".venv", "var", ".git", ".env"} <= entries, entries
    assert "!.env.example" not in entries or ".env.*" in entries
    assert "COPY . ." in dockerfile()


def test_the_image_creates_and_gives_the_app_user_every_mounted_directory():
    """Before: the media volume was mounted on /app/var/media, which the image never created (root-owned)."""
    text = dockerfile()
    user = dockerfile_instructions("USER")[-1].strip()
    runs = " && ".join(dockerfile_instructions("RUN"))
    created = set(re.findall(r"mkdir -p ((?:/\S+\s*)+)", runs))
    created_paths = {path for group in created for path in group.split()}
    owned = re.findall(rf"chown -R {user}(?::{user})? (\S+)", runs)
    targets = {volume.split(":")[1] for name in APP_SERVICES for volume in services()[name].get("volumes", [])
               if not volume.startswith((".", "/"))}  # named volumes (a bind mount brings its own owner)
    assert targets, "the app services mount the media volume"
    for target in targets:
        assert target in created_paths, f"{target} is mounted but the Dockerfile does not create it"
        assert any(target == root or target.startswith(root.rstrip("/") + "/") for root in owned), (
            f"{target} is not chowned to {user}")
    assert text.index("chown") < text.index(f"USER {user}")
    env = " ".join(dockerfile_instructions("ENV"))
    assert "APP_VAR_DIR=/app/var" in env and all(t.startswith("/app/var/") for t in targets)


def test_the_image_installs_the_hashed_lockfile():
    install = [run for run in dockerfile_instructions("RUN") if "pip install" in run]
    assert install and all("--require-hashes" in run and "-r requirements.lock" in run for run in install), install
    assert "requirements.lock" in " ".join(dockerfile_instructions("COPY"))


@pytest.mark.parametrize("name", LONG_RUNNING)
def test_long_running_services_have_a_healthcheck_and_a_restart_policy(name):
    """Before: web, worker and beat had neither."""
    service = services()[name]
    assert service.get("restart") in ("always", "unless-stopped", "on-failure"), service.get("restart")
    check = service.get("healthcheck") or {}
    assert check.get("test") and check["test"][0] in ("CMD", "CMD-SHELL"), check
    assert services()["migrate"]["restart"] == "no"  # a one-off: it must not loop


def test_the_services_run_the_commands_the_e2e_test_runs():
    assert dockerfile_cmd() == ["gunicorn", "-c", "config/gunicorn.py", "config.wsgi:application"]
    assert "command" not in services()["web"], "web runs the image's CMD"
    assert services()["worker"]["command"][:4] == ["celery", "-A", "config", "worker"]
    assert services()["beat"]["command"][:4] == ["celery", "-A", "config", "beat"]
    assert services()["migrate"]["command"] == ["python", "manage.py", "migrate", "--noinput"]
    e2e = (ROOT / "tests" / "e2e" / "conftest.py").read_text()
    assert "compose_command(" in e2e, "the e2e stack starts the compose services' own commands"


def test_tls_ends_at_the_proxy_and_only_the_proxy_is_published():
    """Before: ports 8000:8000 with DJANGO_SECURE_SSL_REDIRECT=1 and no proxy: plain HTTP answered 301 to an
    HTTPS port where nothing listened."""
    all_services = services()
    published = {name for name, service in all_services.items() if service.get("ports")}
    assert published == {"proxy"}, published
    proxy = all_services["proxy"]
    assert proxy["image"].startswith("caddy:")
    assert {"80:80", "443:443"} <= set(proxy["ports"])
    mounts = {volume.split(":")[1]: volume.split(":")[0] for volume in proxy["volumes"]}
    caddyfile = ROOT / mounts["/etc/caddy/Caddyfile"]
    assert caddyfile.is_file()
    upstream = re.search(r"reverse_proxy\s+(\S+):(\d+)", caddyfile.read_text())
    assert upstream, "the Caddyfile proxies to the web service"
    assert upstream.group(1) == "web" and upstream.group(1) in all_services
    web_port = all_services["web"]["expose"][0]
    assert upstream.group(2) == str(web_port) == "8000"  # config/gunicorn.py binds 0.0.0.0:8000 by default
    assert "{$SITE_ADDRESS" in caddyfile.read_text() and "SITE_ADDRESS" in proxy["environment"]


def test_healthchecks_probe_what_exists():
    web = services()["web"]["healthcheck"]["test"]
    beat = services()["beat"]["healthcheck"]["test"]
    worker = services()["worker"]["healthcheck"]["test"]
    assert web[1:] == ["python", "-m", "core.health", "web"]
    assert beat[1:] == ["python", "-m", "core.health", "beat"]
    assert worker[0] == "CMD-SHELL" and shlex.split(worker[1])[:4] == ["celery", "-A", "config", "inspect"]
    assert "$$HOSTNAME" in worker[1], "$$ so compose leaves $HOSTNAME to the container's shell"
