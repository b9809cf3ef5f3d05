"""Every environment variable the code reads can be set in a deployment (issue 25 item 1).

The names are found by parsing the source (ast), not by a list kept by hand: `os.environ.get("X")`,
`os.environ["X"]`, `os.getenv("X")`, `"X" in os.environ`, and calls like `env_bool("X")` to any helper
that reads `os.environ` with its argument (config/settings/base.py's env_bool, env_int_default, env_list;
config/gunicorn.py's _int; and whatever observability.py or identity.py define). Scanned: the settings
(config/settings/, except test.py), config/gunicorn.py and the application packages. Each name must be
listed in .env.example (set or commented out), which compose's app services load whole (env_file, checked
in tests/test_compose.py).

`python -m tests.test_env_example` prints the names .env.example lacks, with where each is read.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

from tests.deploy_reads import ROOT, deployment_reads, env_example_names, environment_reads

# --------------------------------------------------------------------------- tests


def test_the_scanner_finds_every_kind_of_read(tmp_path):
    """The parser itself: each form of read is found, a helper defined in another file too."""
    settings = ROOT / "config" / "settings"
    module = tmp_path / "sample.py"
    module.write_text(
        "import os\n"
        "def my_env(name, default=''):\n    return os.environ.get(name, default)\n"
        "A = os.environ.get('A_GET')\nB = os.environ['B_ITEM']\nC = os.getenv('C_GETENV')\n"
        "D = 'D_IN' in os.environ\nE = my_env('E_HELPER')\nF = env_bool('F_BASE_HELPER')\n"
        "G = [n for n in ('G_LOOP', 'H_LOOP') if not os.environ.get(n)]\n"
        "def apply(s):\n    env = os.environ.get\n    s['I'] = env('I_ALIAS', '')\n")
    reads = environment_reads([module, settings / "base.py"], root=Path("/"))
    assert {"A_GET", "B_ITEM", "C_GETENV", "D_IN", "E_HELPER", "F_BASE_HELPER", "G_LOOP", "H_LOOP",
            "I_ALIAS"} <= set(reads)


def test_the_settings_read_what_the_issue_counted():
    """A sanity floor: the names the issue says compose could not pass are found by the scan."""
    reads = deployment_reads()
    assert {"WEBHOOK_ALLOWED_HOSTS", "MTURK_QUALIFICATION_MIN_APPROVED", "LOG_LEVEL", "CORPUS_UPLOAD_MAX_BYTES",
            "ASSIGNMENT_TIMEOUT_SECONDS", "WEBHOOK_TIMEOUT_SECONDS", "GUNICORN_TIMEOUT", "AWS_ACCESS_KEY_ID",
            "CELERY_WORKER_CONCURRENCY"} <= set(reads)
    assert len(reads) >= 48, sorted(reads)


def test_env_example_lists_every_variable_the_code_reads():
    listed = env_example_names((ROOT / ".env.example").read_text())
    missing = {name: where for name, where in deployment_reads().items() if name not in listed}
    assert not missing, "add to .env.example (python -m tests.test_env_example):\n" + "\n".join(
        f"  {name}  (read at {', '.join(where)})" for name, where in sorted(missing.items()))


def test_env_example_needs_a_secret_and_documents_each_name():
    text = (ROOT / ".env.example").read_text()
    lines = text.splitlines()
    assert re.search(r"^DJANGO_SECRET_KEY=$", text, re.MULTILINE), "the secret is left empty, never a sample value"
    for number, line in enumerate(lines):
        if re.match(r"^#?\s*[A-Z][A-Z0-9_]*=", line):
            above = lines[number - 1] if number else ""
            assert above.startswith("#"), f"undocumented: {line!r} (a '# …' comment line must come before it)"


if __name__ == "__main__":
    listed = env_example_names((ROOT / ".env.example").read_text()) if (ROOT / ".env.example").exists() else {}
    for name, where in sorted(deployment_reads().items()):
        if name not in listed:
            print(f"# (read at {', '.join(where)})\n# {name}=")
    sys.exit(0)
