"""Classifier kinds as a registry: what each kind of classifier does, in one module per kind.

A kind (`ClassifierKind`) declares how its definition is checked and cleaned in the request, how it is
built by a task (`steps`: "scan" — id-range shards scanned in parallel, then `finish`; "train" — `prepare`
fits in the task, then shards as "scan"; "run" — the whole build in the task; None — not built by a task),
the parts of its definition its fingerprint names, what a failed build leaves to clean up, the facts its
build page shows, and the fields it reads. Each kind module registers itself (`kind_register`) when the
package is imported; the build service (classifier_builds.py), the build task, the fingerprint
(classifier.py) and the pages and API ask the registry (`kind_get`, `kinds_all`) instead of testing
`kind ==`.

The base and the registry are in classifiers/kind_registry.py (below every other module of classifiers/);
this package holds the kinds and re-exports the registry. A new kind is one new module here that subclasses
ClassifierKind and calls `kind_register`, one import line below, its value in `Classifier.Kind` (a choice
and the `classifier_kind_valid` check constraint, so a migration), and its form or page if it has one.
"""
from annotation.services.classifiers.kind_registry import (
    ClassifierKind,
    ClassifierKindUnknown,
    Phase,
    Progress,
    Steps,
    kind_get,
    kind_register,
    kind_unregister,
    kinds_all,
    kinds_buildable,
    kinds_uploaded,
)

__all__ = ["ClassifierKind", "ClassifierKindUnknown", "Phase", "Progress", "Steps", "kind_get", "kind_register",
           "kind_unregister", "kinds_all", "kinds_buildable", "kinds_uploaded"]

# Each module registers its kind when imported.
from annotation.services.classifiers.kinds import (
    field_values,
    ids,
    keywords,
    scores,
    trained,
)
