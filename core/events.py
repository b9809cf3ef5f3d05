"""The event bus: facts an app announces, delivered to subscribers after commit.

An app never imports the code that reacts to what it does (estimation recomputes
reports when annotation completes labels; webhooks send deliveries for both): it
fires an event, and the subscribers registered in other apps' ``receivers``
modules run once the transaction that produced the fact has committed.  The
pattern is Saleor's ``call_event`` and Zulip's ``send_event_on_commit``.

The bus knows no event type: an event is any frozen (hashable, comparable)
dataclass; its class is the key subscribers register under.  The types live with
the app that announces them (``annotation/events.py``, ``estimation/events.py``).

Rules:

* ``event_send_on_commit`` is called inside the transaction that wrote the fact;
  a rollback forgets the event with the fact.  Outside a transaction it
  dispatches at once.
* An event equal to one already pending in the same transaction is not queued
  again (a burst of submits in one transaction announces a topic once).
* Delivery is ``robust``: a failing subscriber (a broker outage, say) is logged
  and never undoes or fails the request whose data has already committed.  The
  periodic sweeps repair anything a lost delivery left behind.
* Subscribers only schedule work (tasks); they never compute in the request.
"""
from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable
from typing import Any, TypeVar

from django.db import transaction

logger = logging.getLogger(__name__)

E = TypeVar("E")

_subscribers: dict[type, list[Callable[[Any], None]]] = defaultdict(list)


def event_subscribe(event_type: type[E]) -> Callable[[Callable[[E], None]], Callable[[E], None]]:
    """Register ``handler(event)`` for ``event_type`` (used by the apps' receivers modules)."""

    def register(handler: Callable[[E], None]) -> Callable[[E], None]:
        if handler not in _subscribers[event_type]:
            _subscribers[event_type].append(handler)
        return handler

    return register


class _Delivery:
    """The on_commit callback; carries its event so a transaction queues an equal event once."""

    def __init__(self, event: object) -> None:
        self.event = event

    def __call__(self) -> None:
        event_dispatch(event=self.event)


def event_dispatch(*, event: object) -> None:
    """Call every subscriber of the event now; a failing one is logged, the others still run."""
    for handler in list(_subscribers.get(type(event), ())):
        try:
            handler(event)
        except Exception:  # the fact is committed; sweeps repair a lost delivery
            logger.exception("subscriber %s failed on %r", getattr(handler, "__qualname__", handler), event)


def event_send_on_commit(*, event: object) -> None:
    """Deliver ``event`` to its subscribers once the current transaction commits.

    An event nobody subscribed to is not queued at all.
    """
    if not _subscribers.get(type(event)):
        return
    connection = transaction.get_connection()
    if connection.in_atomic_block:
        for _savepoints, callback, *_rest in connection.run_on_commit:
            if isinstance(callback, _Delivery) and callback.event == event:
                return
    transaction.on_commit(_Delivery(event))
