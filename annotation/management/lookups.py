"""Lookups shared by the management commands: a clear CommandError instead of a traceback."""
from __future__ import annotations

from django.core.management.base import CommandError

from annotation.models import Topic


def topic_named(*, name: str) -> Topic:
    """The topic called ``name`` (with its corpus), or a CommandError saying there is none."""
    try:
        return Topic.objects.select_related("corpus").get(name=name)
    except Topic.DoesNotExist:
        raise CommandError(f"No topic named {name!r}.") from None
