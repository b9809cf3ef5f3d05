"""Settings of one concern (observability), applied at the end of base.py so one owner edits one file.

`apply(s)` reads and extends the settings already defined (`s` is base.py's globals()): append to
`s["MIDDLEWARE"]` or `s["INSTALLED_APPS"]`, add keys; every value comes from the environment.
"""
from __future__ import annotations

from typing import Any


def apply(s: dict[str, Any]) -> None:
    """Nothing yet."""
