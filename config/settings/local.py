"""Developer machine: debug on, an insecure key, SQLite and in-process tasks by default."""
import os

from .base import *  # noqa: F403
from .base import VAR_DIR, env_bool

DEBUG = env_bool("DJANGO_DEBUG", True)
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY") or "local-insecure-key-not-for-production"
ALLOWED_HOSTS = ["*"]
VAR_DIR.mkdir(parents=True, exist_ok=True)
