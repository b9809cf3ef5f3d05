"""Look up service functions that other parts of the app provide, degrading when one is missing.

The pages are written against services that land independently; a missing one
turns into a clear message on the page instead of an ImportError at start-up.
"""
import importlib
import logging
from collections.abc import Callable

logger = logging.getLogger(__name__)


class ServiceMissing(Exception):
    def __init__(self, dotted: str) -> None:
        super().__init__(f"This feature is not available yet: {dotted} is not installed.")
        self.dotted = dotted


def service(module: str, name: str) -> Callable:
    """The function `module.name`, or raise ServiceMissing (with a message fit for a page)."""
    try:
        found = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        logger.warning("service %s.%s unavailable: %s", module, name, exc)
        raise ServiceMissing(f"{module}.{name}") from exc
    return found


def has_service(module: str, name: str) -> bool:
    try:
        service(module, name)
    except ServiceMissing:
        return False
    return True
