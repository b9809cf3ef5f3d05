"""The registry of classifier kinds: the `ClassifierKind` base and `kind_get`, `kinds_all`, `kind_register`.

The kinds themselves are the modules of classifiers/kinds/, each registering itself when imported; the
package is imported when the app is ready (annotation/apps.py), so every kind is registered before any
request or task. This module is at the bottom of classifiers/ (it imports none of its modules), so the
fingerprint (classifier.py) and the fields a classifier reads (trained.py) can ask it without an import
cycle.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from core.errors import ApplicationError

if TYPE_CHECKING:
    from annotation.models import ClassifierBuild, Corpus

Progress = Callable[[int], None]  # documents processed since the last call
Phase = Callable[[str], None]  # what a long in-task step is doing, for the page ("training: fit 2 of 6")
Steps = Literal["scan", "train", "run"]


class ClassifierKind:
    """The base of every kind; the defaults suit a kind whose definition is its retrieved set alone."""

    kind: ClassVar[str]
    # How a build of this kind runs (see the module docstring); None: not built by a task.
    steps: ClassVar[Steps | None] = None
    # Whether the classifier has a threshold an analyst may change (scores, trained).
    has_threshold: ClassVar[bool] = False
    # Built from an uploaded file: what the file holds, as the upload form and the API offer it; None if not.
    upload_label: ClassVar[str | None] = None

    # --- the request ----------------------------------------------------------------------------------

    def definition_clean(self, *, corpus: Corpus, definition: dict[str, Any]) -> dict[str, Any]:
        """The checked definition a build stores; ClassifierError for every user mistake."""
        raise NotImplementedError

    def build_total(self, *, corpus: Corpus, definition: dict[str, Any]) -> int:
        """What the build's progress counts to (documents of the corpus, ids of a file)."""
        return corpus.document_count

    def start_refused(self, *, definition: dict[str, Any]) -> None:
        """The request was refused: forget what it brought (an uploaded file)."""

    # --- the classifier ---------------------------------------------------------------------------------

    def fingerprint_parts(self, definition: dict[str, Any]) -> dict[str, Any]:
        """What of the definition decides the classifier's output (classifier.py's fingerprint)."""
        return {}

    def fields_read(self, definition: dict[str, Any]) -> list[str] | None:
        """The document fields the classifier reads; None when unknown (uploaded ids or scores)."""
        return None

    # --- the build -------------------------------------------------------------------------------------

    def prepare(self, *, build: ClassifierBuild, phase: Phase) -> bool:
        """"train" kinds: the in-task step before the shards; False if the build stopped meanwhile."""
        return True

    def shard(self, *, build: ClassifierBuild, pk_range: tuple[int, int], progress: Progress) -> str:
        """"scan" and "train" kinds: one id range [lo, hi); the result (text) goes to `finish`."""
        raise NotImplementedError

    def finish(self, *, build_id: int, shard_results: list[str], phase: Phase) -> ClassifierBuild | None:
        """"scan" and "train" kinds: store the classifier from the shards' results (under the build's lock)."""
        raise NotImplementedError

    def run(self, *, build_id: int, progress: Progress) -> ClassifierBuild | None:
        """"run" kinds: the whole build in the task."""
        raise NotImplementedError

    def cleanup(self, *, build: ClassifierBuild) -> None:
        """A build failed: remove what it left behind (files)."""

    # --- the page ----------------------------------------------------------------------------------------

    def status_detail(self, *, build: ClassifierBuild, details: dict[str, Any]) -> str | None:
        """Words after "Building" while it runs (a trained build's phase), or None."""
        return None

    def state(self, *, build: ClassifierBuild, details: dict[str, Any]) -> dict[str, Any]:
        """The kind's own keys of the build page's state."""
        return {}


class ClassifierKindUnknown(ApplicationError):
    """A kind value no module registered."""


_REGISTRY: dict[str, ClassifierKind] = {}


def kind_register(kind: ClassifierKind) -> ClassifierKind:
    """Register a kind under its `kind` value (a second registration of the value replaces the first)."""
    _REGISTRY[kind.kind] = kind
    return kind


def kind_unregister(kind: str) -> None:
    _REGISTRY.pop(kind, None)


def kind_get(kind: str) -> ClassifierKind:
    """The registered kind; ClassifierKindUnknown for a value no module registered."""
    try:
        return _REGISTRY[str(kind)]
    except KeyError:
        raise ClassifierKindUnknown(f"{kind!r} is not a kind of classifier") from None


def kinds_all() -> list[ClassifierKind]:
    return list(_REGISTRY.values())


def kinds_buildable() -> Iterable[str]:
    return [value for value, kind in _REGISTRY.items() if kind.steps is not None]


def kinds_uploaded() -> list[ClassifierKind]:
    """The kinds built from an uploaded file (ids, scores), in registration order."""
    return [kind for kind in _REGISTRY.values() if kind.upload_label]
