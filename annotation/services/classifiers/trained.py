"""A second classifier trained on another view (seed 000 §6.1.2, §7.2–7.3).

The paper builds conditionally independent pairs by training one classifier per *view* of a document
(the status text vs the linked article, the ODP description vs the linked page): logistic regression on
hashed character 4-grams. Here:

- **View**: the chosen fields only (``title``, ``text`` or metadata keys such as ``article``), joined by
  a newline; list values are joined by spaces. When a partner classifier is named, fields it reads are
  refused: two classifiers reading the same words make the same mistakes, and the pair estimate rests on
  their conditional independence given relevance (seed 000 §6). A partner whose fields are unknown (an
  uploaded ids or scores file) is recorded as such: the analyst must know what it reads.
- **Labels**, from what the product has:
  * a topic's judged documents: the majority of the three workers' votes (the gold answer where an analyst
    gave one). They were sampled from the pair's regions, not uniformly, which is fine for training but
    is why the cross-validated figures below are not the classifier's precision on the corpus;
  * or, as the paper's pairs allow, another classifier's output as *noisy labels*: its retrieved documents
    are positives, the others negatives (at most MAX_TRAIN_PER_CLASS of each, drawn with the seed).
    The trained classifier then learns to imitate that classifier on another view; its errors come from
    the partner's errors plus its own.
  Fewer than MIN_PER_CLASS documents in either class is refused.
- **Features**: ``HashingVectorizer(analyzer="char_wb", ngram_range=(4, 4), n_features=2**20,
  alternate_sign=False)``; **model**: ``LogisticRegression(class_weight="balanced", solver="liblinear")`` with a fixed
  ``random_state``; the same seed, data and library versions give the same scores (tested).
- **Cross-fitting**: the training documents are split into FOLDS stratified folds (shuffled with the
  seed); each training document's stored score comes from the model fitted on the *other* folds, never
  from a model that saw its label. Those out-of-fold scores also give the cross-validated precision and
  recall recorded in the definition (at the threshold, and over a grid of thresholds so a threshold can be
  chosen for a target precision). Every other document is scored by the model fitted on all labels.
- **Threshold**: given, or chosen for a *target precision*: the lowest threshold of a 0.01 grid whose
  cross-validated precision (out-of-fold scores) reaches the target, i.e. the most recall at that precision
  on the training labels. None reaching it is refused with the best precision found.
- **As a task** (issue 13 item 3, ``annotation/services/classifiers/classifier_builds.py``): the request only checks
  (`trained_request_check`); the build task fits (`trained_fit`), saves the fitted weights once
  (`trained_model_save`: an ``.npz`` of plain arrays under MEDIA_ROOT, no pickle, its sha256 kept in the build
  and checked by every reader), and each id-range shard loads them (`trained_model_load`) and scores its range
  (`trained_score_range`). Saving beats refitting per shard: a fit over 2**20 features costs seconds per shard
  and would be repeated by every shard; the file is ~8 MB. Scores do not depend on the shard split
  (each document is scored alone), so 1 and 4 shards give the same classifier (tested).
- **Scoring**: the whole corpus in chunks of SCORE_CHUNK documents (memory: the chunk's texts plus 12
  bytes per document for ids and scores). Features come from `char_hashing.char_wb_transform`, numpy's copy of
  the HashingVectorizer (the same matrix, entry for entry; documents whose lower-cased text is not ASCII go
  through the HashingVectorizer itself): features and scoring take ~3.8 times less CPU than with
  scikit-learn's Python analyser (bench/bench_trained.py --features-sample). Scores are stored as
  ClassifierScore rows, like an uploaded scores classifier, and the retrieved set is score ≥ threshold.
"""
from __future__ import annotations

import hashlib
import io
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from pyroaring import BitMap

from annotation.models import (
    Classifier,
    ClassifierPair,
    ClassifierScore,
    Corpus,
    Document,
    Label,
    SampledDocument,
    SampleDraw,
    Topic,
)
from annotation.services.classifiers.char_hashing import char_wb_transform
from annotation.services.classifiers.classifier import ClassifierError, classifier_store
from annotation.services.classifiers.kind_registry import kind_get
from annotation.services.corpora.retrieved_sets import bitmap_from_bytes, corpus_bitmap, pair_regions
from estimation.stats.weighted_validation import Interval, RetrievedSetEstimate, retrieved_set_estimate, weighted_auc

MIN_PER_CLASS = 20
FOLDS = 5
MAX_TRAIN_PER_CLASS = 20_000
SCORE_CHUNK = 5000
INSERT_BATCH = 5000
ID_CHUNK = 900
N_FEATURES = 2**20
MAX_ITER = 1000
# liblinear: on 2**20 hashed features with a few thousand labels it fits 3-5 times faster than lbfgs (measured).
SOLVER = "liblinear"
COLUMNS = ("title", "text")
THRESHOLD_GRID = tuple(round(t, 2) for t in np.arange(0.05, 1.0, 0.05))
# Thresholds tried when the analyst gives a target precision instead of a threshold.
TARGET_GRID = tuple(round(t, 2) for t in np.arange(0.01, 1.0, 0.01))
MODEL_DIR = "classifier-models"


# --- features, model, folds (pure: the tests re-fit with them) ---------------------------------------


def vectorizer():  # -> HashingVectorizer (scikit-learn is imported only where a classifier is trained)
    from sklearn.feature_extraction.text import HashingVectorizer  # noqa: PLC0415 — heavy: scikit-learn, only when training

    return HashingVectorizer(analyzer="char_wb", ngram_range=(4, 4), n_features=N_FEATURES, alternate_sign=False)


def model_fit(*, features, labels: np.ndarray, seed: int, weights: np.ndarray | None = None):  # -> LogisticRegression
    """Unweighted and class-balanced without ``weights``; with them (inverse inclusion probabilities, scaled to
    mean 1 so the regularisation keeps its strength) each document counts for the corpus documents it stands for,
    and the classes are not re-balanced: the scores then estimate P(relevant | view) on the corpus."""
    from sklearn.linear_model import LogisticRegression  # noqa: PLC0415 — heavy: scikit-learn, only when training

    if weights is None:
        model = LogisticRegression(class_weight="balanced", max_iter=MAX_ITER, random_state=seed, solver=SOLVER)
        model.fit(features, labels)
        return model
    model = LogisticRegression(max_iter=MAX_ITER, random_state=seed, solver=SOLVER)
    model.fit(features, labels, sample_weight=weights / weights.mean())
    return model


def training_weights(training: TrainingLabels) -> np.ndarray | None:
    """1/π per training document, or None (unweighted) when no probability is below 1: every document then
    stands for itself alone, or the labels were not drawn by the product's sampling."""
    if training.probabilities is None or not np.any(training.probabilities < 1.0):
        return None
    return 1.0 / training.probabilities


def folds_assign(*, labels: np.ndarray, seed: int, folds: int = FOLDS) -> np.ndarray:
    """The fold (0…folds-1) of each training row: stratified, shuffled with the seed."""
    from sklearn.model_selection import StratifiedKFold  # noqa: PLC0415 — heavy: scikit-learn, only when training

    assigned = np.empty(len(labels), dtype=np.int64)
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    for fold, (_, test_rows) in enumerate(splitter.split(np.zeros(len(labels)), labels)):
        assigned[test_rows] = fold
    return assigned


def _piece(value: object) -> str:
    if value is None or isinstance(value, dict):
        return ""
    if isinstance(value, list):
        return " ".join(_piece(v) for v in value)
    return str(value)


def document_view(*, title: str, text: str, metadata: dict | None, fields: Sequence[str]) -> str:
    """The text the classifier reads: the chosen fields only, joined by newlines."""
    pieces = []
    for name in fields:
        if name == "title":
            pieces.append(title)
        elif name == "text":
            pieces.append(text)
        else:
            pieces.append(_piece((metadata or {}).get(name)))
    return "\n".join(pieces)


# --- fields and partner ---------------------------------------------------------------------------


def classifier_fields(classifier: Classifier) -> list[str] | None:
    """The fields a classifier reads; None when they are unknown (uploaded ids or scores)."""
    return kind_get(classifier.kind).fields_read(classifier.definition or {})


def _fields_check(*, corpus: Corpus, fields: Sequence[str]) -> list[str]:
    chosen: list[str] = []
    for raw in fields:
        name = str(raw).strip()
        if name.lower() in COLUMNS:
            name = name.lower()
        if name and name not in chosen:
            chosen.append(name)
    if not chosen:
        raise ClassifierError("choose at least one field for the classifier to read")
    for name in chosen:
        if name not in COLUMNS and not Document.objects.filter(corpus=corpus, metadata__has_key=name).exists():
            raise ClassifierError(f"no document of corpus “{corpus.name}” has a field “{name}”")
    return chosen


def _partner_check(*, partner: Classifier | None, fields: list[str], corpus: Corpus) -> dict | None:
    if partner is None:
        return None
    if partner.corpus_id != corpus.pk:
        raise ClassifierError(f"“{partner.name}” is a classifier of another corpus")
    partner_fields = classifier_fields(partner)
    if partner_fields is not None:
        shared = [f for f in fields if f in partner_fields]
        if shared:
            raise ClassifierError(
                f"“{partner.name}” already reads {', '.join(shared)}: the trained classifier must read another view "
                f"(fields {partner.name!r} does not read). The pair estimate assumes the two classifiers are "
                "conditionally independent given relevance (seed 000 §6); two classifiers reading the same words "
                "make the same mistakes, and recall would be overestimated.")
    return {"classifier_id": partner.pk, "name": partner.name, "fields": partner_fields}


# --- training labels ------------------------------------------------------------------------------


@dataclass(frozen=True)
class TrainingLabels:
    pks: np.ndarray  # int64 document pks
    labels: np.ndarray  # bool
    source: dict
    # Each training document's inclusion probability (combined over the draws that took it); None when no
    # document carries one (labels not drawn by the product's sampling): then training is unweighted.
    probabilities: np.ndarray | None = None
    # The stratified design the corpus figures are estimated from (see _design_of_topic); None without one.
    design: dict | None = None
    stratum: np.ndarray | None = None  # each training document's stratum in ``design`` (-1: not in it)


def _labels_from_topic(*, topic: Topic, corpus: Corpus) -> TrainingLabels:
    if topic.corpus_id != corpus.pk:
        raise ClassifierError(f"topic “{topic.name}” is about another corpus")
    by_doc: dict[int, bool] = {}
    for document_id, majority, gold in Label.objects.filter(topic=topic).values_list("document_id", "majority", "gold"):
        value = gold if gold is not None else majority
        if value is not None:
            by_doc[document_id] = bool(value)
    pks = np.array(sorted(by_doc), dtype=np.int64)
    labels = np.array([by_doc[int(pk)] for pk in pks], dtype=bool)
    source = {"source": "topic", "topic_id": topic.pk, "topic": topic.name,
              "label": "majority of the workers' votes (the gold answer where known) of the topic's judged documents"}
    probabilities, design, stratum = _design_of_topic(topic=topic, pks=pks)
    return TrainingLabels(pks=pks, labels=labels, source=source, probabilities=probabilities, design=design,
                          stratum=stratum)


# --- the design: inclusion probabilities and strata ---------------------------------------------------
#
# Training weights.  A judged document's weight is 1/π with π its inclusion probability: one draw's
# SampledDocument.inclusion_probability, or, for a document taken by several draws (a pair region and a
# uniform sample, say), the *combined* probability 1 − Π(1 − π_d) of being drawn by any of them (the draws are
# independent). The combined one, because the document is in the training set whichever draw took it: its
# chance of being there is the union's. A judged document no draw records (a gold document added by hand)
# stands for itself: π = 1.
#
# Estimation strata.  The corpus figures use one stratified design only, so that the estimator stays a plain
# Horvitz–Thompson by stratum (estimation.stats.weighted_validation): the topic's pair draws (purpose "pair",
# regions A12, B1, B2 and the complement N, each stratum an SRS), or, when the topic has none, its uniform
# sample. A document counts in the stratum of the draw it was labelled for in that design; documents judged
# for other purposes train the model but are not in the estimate. Judged documents of a stratum are taken as
# an SRS of it (N_h = sampled/π, m_h = judged). A region with no judged sample is *unsampled*: its documents'
# relevance is unknown and enters the intervals at both extremes.

PAIR_REGION_CODES = ("A12", "B1", "B2", "N")


def _design_of_topic(*, topic: Topic, pks: np.ndarray) -> tuple[np.ndarray | None, dict | None, np.ndarray | None]:
    rows = list(SampledDocument.objects.filter(topic=topic).values_list(
        "document_id", "inclusion_probability", "draw__purpose", "region", "draw__classifier_id", "draw__stratum_key"))
    if not rows:
        return None, None, None
    training = set(pks.tolist())
    miss: dict[int, float] = {}
    strata: dict[tuple, dict] = {}
    for doc, pi, purpose, region, classifier_id, stratum_key in rows:
        if doc in training:
            miss[doc] = miss.get(doc, 1.0) * (1.0 - float(pi))
        strata.setdefault((purpose, region, classifier_id or 0, stratum_key), {"docs": set(), "pi": float(pi)})["docs"].add(doc)
    probabilities = np.array([1.0 - miss.get(int(pk), 0.0) for pk in pks], dtype=np.float64)
    pair = {k: v for k, v in strata.items() if k[0] == SampleDraw.Purpose.PAIR and k[1] in PAIR_REGION_CODES}
    uniform = {k: v for k, v in strata.items() if k[0] == SampleDraw.Purpose.UNIFORM and k[1] == "U"}
    chosen, kind = (pair, "pair") if pair else (uniform, "uniform")
    stratum = np.full(len(pks), -1, dtype=np.int64)
    position = {int(pk): i for i, pk in enumerate(pks.tolist())}
    described: list[dict] = []
    for key, value in sorted(chosen.items(), key=lambda item: "|".join(str(x) for x in item[0])):
        judged = [position[d] for d in value["docs"] if d in position]
        if not judged:
            continue
        stratum[judged] = len(described)
        described.append({"region": key[1], "stratum_key": key[3], "size": round(len(value["docs"]) / value["pi"]),
                          "sampled": len(value["docs"]), "judged": len(judged)})
    if not described:
        return probabilities, None, None
    design: dict[str, Any] = {"kind": kind, "topic_id": topic.pk, "strata": described, "regions": {}}
    if kind == "pair":
        pair_row = ClassifierPair.objects.select_related("c1", "c2").filter(topic=topic).first()
        if pair_row is None:
            return probabilities, None, None
        regions = pair_regions(c1=pair_row.c1, c2=pair_row.c2)
        for code in PAIR_REGION_CODES:
            covered = sum(s["size"] for s in described if s["region"] == code)
            design["regions"][code] = {"size": len(regions.by_code(code)), "covered": min(covered, len(regions.by_code(code)))}
    return probabilities, design, stratum


def _labels_from_classifier(*, classifier: Classifier, corpus: Corpus, seed: int) -> TrainingLabels:
    if classifier.corpus_id != corpus.pk:
        raise ClassifierError(f"“{classifier.name}” is a classifier of another corpus")
    rng = np.random.default_rng(seed)
    positives = bitmap_from_bytes(classifier.retrieved_bitmap)
    negatives = corpus_bitmap(corpus=corpus) - positives

    def draw(bitmap: BitMap) -> np.ndarray:
        if len(bitmap) <= MAX_TRAIN_PER_CLASS:
            return np.array(bitmap.to_array(), dtype=np.int64)
        positions = np.sort(rng.choice(len(bitmap), size=MAX_TRAIN_PER_CLASS, replace=False))
        return np.array([bitmap[int(i)] for i in positions], dtype=np.int64)

    pos, neg = draw(positives), draw(negatives)
    pks = np.concatenate([pos, neg])
    labels = np.concatenate([np.ones(len(pos), dtype=bool), np.zeros(len(neg), dtype=bool)])
    order = np.argsort(pks, kind="stable")
    # Two strata drawn by SRS: the labelling classifier's retrieved documents and the others.
    pi_pos = len(pos) / max(len(positives), 1)
    pi_neg = len(neg) / max(len(negatives), 1)
    probabilities = np.where(labels, pi_pos, pi_neg)[order]
    design = {"kind": "classifier", "regions": {}, "strata": [
        {"region": "retrieved by the labelling classifier", "stratum_key": "", "size": len(positives),
         "sampled": len(pos), "judged": len(pos)},
        {"region": "not retrieved by it", "stratum_key": "", "size": len(negatives), "sampled": len(neg),
         "judged": len(neg)}]}
    stratum = np.where(labels, 0, 1)[order].astype(np.int64)
    return TrainingLabels(pks=pks[order], labels=labels[order], probabilities=probabilities, design=design,
                          stratum=stratum, source={
        "source": "classifier", "classifier_id": classifier.pk, "classifier": classifier.name,
        "label": "noisy labels: retrieved by the classifier = relevant, not retrieved = not relevant "
                 f"(at most {MAX_TRAIN_PER_CLASS} of each, drawn with the seed)"})


def _labels_check(training: TrainingLabels) -> tuple[int, int]:
    n_pos = int(training.labels.sum())
    n_neg = int(len(training.labels) - n_pos)
    if n_pos < MIN_PER_CLASS or n_neg < MIN_PER_CLASS:
        where = (f"topic “{training.source['topic']}” has" if training.source["source"] == "topic"
                 else f"“{training.source['classifier']}” gives")
        raise ClassifierError(
            f"{where} {n_pos} relevant and {n_neg} not relevant labelled documents; training needs at least "
            f"{MIN_PER_CLASS} of each (judge more documents, or take another classifier's output as noisy labels)")
    return n_pos, n_neg


# --- texts ----------------------------------------------------------------------------------------


def _columns(fields: Sequence[str]) -> list[str]:
    needed = ["pk", "title", "text"]
    if any(f not in COLUMNS for f in fields):
        needed.append("metadata")
    return needed


def _view_rows(rows: Iterator[tuple], fields: Sequence[str], with_metadata: bool) -> Iterator[tuple[int, str]]:
    for row in rows:
        metadata = row[3] if with_metadata else None
        yield row[0], document_view(title=row[1], text=row[2], metadata=metadata, fields=fields)


def _texts_of(pks: np.ndarray, fields: Sequence[str]) -> list[str]:
    columns = _columns(fields)
    by_pk: dict[int, str] = {}
    ids = [int(pk) for pk in pks]
    for start in range(0, len(ids), ID_CHUNK):
        rows = Document.objects.filter(pk__in=ids[start:start + ID_CHUNK]).order_by().values_list(*columns)
        by_pk.update(_view_rows(iter(rows), fields, len(columns) == 4))
    return [by_pk[pk] for pk in ids]


# --- cross-validation and the threshold -------------------------------------------------------------


def _confusion(scores: np.ndarray, labels: np.ndarray, threshold: float) -> dict:
    predicted = scores >= threshold
    tp = int(np.sum(predicted & labels))
    fp = int(np.sum(predicted & ~labels))
    fn = int(np.sum(~predicted & labels))
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    return {"threshold": threshold, "tp": tp, "fp": fp, "fn": fn, "precision": precision, "recall": recall}


def threshold_for_precision(*, scores: np.ndarray, labels: np.ndarray, target: float) -> float:
    """The lowest threshold of TARGET_GRID whose precision on (scores, labels) reaches ``target``.

    The lowest such threshold retrieves the most, so it has the most recall among those meeting the target.
    ClassifierError when no threshold reaches it (the message gives the best precision found).
    """
    best: float | None = None
    for t in TARGET_GRID:
        precision = _confusion(scores, labels, t)["precision"]
        if precision is None:
            continue
        if precision >= target:
            return float(t)
        best = precision if best is None else max(best, precision)
    found = "no threshold retrieves any training document" if best is None else \
        f"the best cross-validated precision at any threshold is {best:.3f}"
    raise ClassifierError(f"no threshold reaches the target precision {target:.3f} on the training labels: {found}. "
                          "Give a lower target, a threshold, or better training labels.")


@dataclass
class _Fitted:
    model: object  # the LogisticRegression fitted on every label
    oof: dict[int, float]  # training document pk -> out-of-fold score
    cross_validation: dict | None  # None until the threshold is known (chosen on the corpus: trained_evaluate)
    threshold: float | None
    training: TrainingLabels | None = None


def _agreement(*, oof: np.ndarray, labels: np.ndarray, threshold: float, target_precision: float | None) -> dict:
    """Agreement of the out-of-fold scores with the training labels, counted unweighted: a diagnostic of the
    fit, *not* the corpus precision (the judged documents were not drawn uniformly)."""
    agreement: dict[str, Any] = {
        "folds": FOLDS,
        "at_threshold": _confusion(oof, labels, threshold),
        "curve": [_confusion(oof, labels, t) for t in THRESHOLD_GRID],
        "note": "out-of-fold scores of the training documents (each scored by a model that did not see its label)",
    }
    if target_precision is not None:
        agreement["target_precision"] = target_precision
    return agreement


def _train(*, training: TrainingLabels, fields: Sequence[str], seed: int, threshold: float | None,
           target_precision: float | None = None, progress: Callable[[int], None] | None = None) -> _Fitted:
    vec = vectorizer()
    features = vec.transform(_texts_of(training.pks, fields))
    labels = training.labels
    weights = training_weights(training)
    fold_of = folds_assign(labels=labels, seed=seed)
    oof = np.empty(len(labels), dtype=np.float64)
    for fold in range(FOLDS):
        held = fold_of == fold
        model = model_fit(features=features[~held], labels=labels[~held], seed=seed,
                          weights=None if weights is None else weights[~held])
        oof[held] = model.predict_proba(features[held])[:, 1]
        if progress is not None:
            progress(fold + 1)
    full = model_fit(features=features, labels=labels, seed=seed, weights=weights)
    if progress is not None:
        progress(FOLDS + 1)
    if threshold is None:
        if target_precision is None:
            raise ClassifierError("give a threshold or a target precision")
        if training.design is None:
            threshold = threshold_for_precision(scores=oof, labels=labels, target=target_precision)
    agreement = None if threshold is None else _agreement(oof=oof, labels=labels, threshold=threshold,
                                                          target_precision=target_precision)
    return _Fitted(model=full, oof=dict(zip((int(pk) for pk in training.pks), oof.tolist(), strict=True)),
                   cross_validation=agreement, threshold=threshold, training=training)


# --- the corpus figures (once every document is scored) ---------------------------------------------------

# A target precision needs this many judged documents of the design at or above the threshold.
MIN_JUDGED_RETRIEVED = 10
CONFIDENCE = 0.95
TOP_SHARE = 0.05  # the scorer's top stratum: the top 5% of the corpus's scores
ESTIMATE_DRAWS = 4000


@dataclass(frozen=True)
class DesignLabels:
    """The judged documents of the design with their out-of-fold scores (what trained_evaluate needs)."""

    pks: np.ndarray
    labels: np.ndarray
    scores: np.ndarray  # out-of-fold
    stratum: np.ndarray  # -1: not in the design
    design: dict


def _interval(value: Interval) -> dict[str, float | None]:
    return {"point": None if value.point is None else round(value.point, 4), "low": round(value.low, 4),
            "high": round(value.high, 4)}


class _CorpusScores:
    """The corpus's scores, sorted once: |R| at any threshold by binary search; the unsampled regions' counts."""

    def __init__(self, *, pks: np.ndarray, scores: np.ndarray, design: dict) -> None:
        self.sorted = np.sort(scores)
        self.unsampled: list[tuple[int, np.ndarray]] = []  # (documents not covered, sorted scores of the region)
        regions = design.get("regions") or {}
        if any(r["covered"] < r["size"] for r in regions.values()):
            pair_row = ClassifierPair.objects.select_related("c1", "c2").get(topic_id=design["topic_id"])
            bitmaps = pair_regions(c1=pair_row.c1, c2=pair_row.c2)
            for code, region in regions.items():
                if region["covered"] < region["size"]:
                    members = np.isin(pks, np.array(bitmaps.by_code(code).to_array(), dtype=np.int64))
                    self.unsampled.append((region["size"] - region["covered"], np.sort(scores[members])))

    def retrieved(self, threshold: float) -> int:
        return int(len(self.sorted) - np.searchsorted(self.sorted, threshold, side="left"))

    def unsampled_counts(self, threshold: float) -> tuple[int, int]:
        """(retrieved, not retrieved) documents in no sampled stratum, at most: a region partly sampled
        counts the smaller of its unsampled documents and its retrieved (or not retrieved) ones."""
        retrieved = other = 0
        for uncovered, region_scores in self.unsampled:
            hit = int(len(region_scores) - np.searchsorted(region_scores, threshold, side="left"))
            retrieved += min(uncovered, hit)
            other += min(uncovered, len(region_scores) - hit)
        return retrieved, other


def _estimate_at(*, judged: DesignLabels, corpus: _CorpusScores, threshold: float, seed: int) -> RetrievedSetEstimate:
    strata = judged.design["strata"]
    inside = judged.stratum >= 0
    above = judged.scores >= threshold
    n = len(strata)
    relevant_retrieved = np.bincount(judged.stratum[inside & above & judged.labels], minlength=n)
    relevant_missed = np.bincount(judged.stratum[inside & ~above & judged.labels], minlength=n)
    unsampled_retrieved, unsampled_other = corpus.unsampled_counts(threshold)
    return retrieved_set_estimate(
        sizes=[s["size"] for s in strata], judged=[s["judged"] for s in strata],
        relevant_retrieved=relevant_retrieved, relevant_missed=relevant_missed,
        judged_retrieved=int(np.sum(inside & above)), retrieved=corpus.retrieved(threshold),
        unsampled_retrieved=unsampled_retrieved, unsampled_other=unsampled_other,
        confidence=CONFIDENCE, draws=ESTIMATE_DRAWS, seed=seed)


def _estimate_record(threshold: float, e: RetrievedSetEstimate) -> dict[str, Any]:
    return {"threshold": round(float(threshold), 6), "retrieved": e.retrieved, "judged_retrieved": e.judged_retrieved,
            "unsampled_retrieved": e.unsampled_retrieved, "precision": _interval(e.precision),
            "recall": _interval(e.recall)}


def _target_threshold(*, judged: DesignLabels, corpus: _CorpusScores, target: float, seed: int) -> float:
    """The lowest threshold of TARGET_GRID whose corpus precision's lower bound reaches ``target`` with at least
    MIN_JUDGED_RETRIEVED judged documents at or above it; ClassifierError saying why none does."""
    best: tuple[float, RetrievedSetEstimate] | None = None
    supported = 0
    for t in TARGET_GRID:
        e = _estimate_at(judged=judged, corpus=corpus, threshold=t, seed=seed)
        if e.judged_retrieved < MIN_JUDGED_RETRIEVED or e.retrieved == 0:
            continue
        supported += 1
        if e.precision.low >= target:
            return float(t)
        if best is None or e.precision.low > best[1].precision.low:
            best = (float(t), e)
    if best is None:
        raise ClassifierError(
            f"the labels cannot support a target precision of {target:.2f}: no threshold keeps at least "
            f"{MIN_JUDGED_RETRIEVED} judged documents of the sample above it. Judge more documents, or give a threshold.")
    t, e = best
    reason = (f"the labels cannot support a target precision of {target:.2f}: at best (threshold {t:.2f}) the "
              f"corpus precision is at least {e.precision.low:.3f} with {CONFIDENCE:.0%} confidence "
              f"({e.retrieved} documents retrieved, {e.judged_retrieved} of them judged)")
    if e.unsampled_retrieved:
        reason += (f"; {e.unsampled_retrieved} of the retrieved documents lie where nothing was judged (a region "
                   "with no sample, such as the documents neither classifier retrieves), so they may all be "
                   "non-relevant")
    raise ClassifierError(reason + ". Give a lower target, a threshold, or judge more documents.")


def trained_evaluate(*, definition: dict, judged: DesignLabels, pks: np.ndarray, scores: np.ndarray) -> dict:
    """The definition completed with the corpus figures (and the threshold when a target precision was given).

    ``pks``/``scores``: every document of the corpus (judged documents with their out-of-fold scores), as stored.
    Precision and recall at the threshold and over THRESHOLD_GRID, and the scorer's quality (issue 23): the
    weighted AUC and the share of relevant documents in the top TOP_SHARE of scores. ClassifierError when a target
    precision cannot be supported by the labels.
    """
    seed = int(definition["seed"])
    corpus = _CorpusScores(pks=pks, scores=scores, design=judged.design)
    threshold = definition.get("threshold")
    if threshold is None:
        threshold = _target_threshold(judged=judged, corpus=corpus, target=float(definition["target_precision"]),
                                      seed=seed)
    at = _estimate_at(judged=judged, corpus=corpus, threshold=threshold, seed=seed)
    inside = judged.stratum >= 0
    strata = judged.design["strata"]
    weight_of = np.array([s["size"] / s["judged"] for s in strata], dtype=np.float64)
    top_count = max(1, int(np.ceil(TOP_SHARE * len(scores)))) if len(scores) else 0
    top_threshold = float(corpus.sorted[len(corpus.sorted) - top_count]) if top_count else 1.0
    top = _estimate_at(judged=judged, corpus=corpus, threshold=top_threshold, seed=seed)
    auc = weighted_auc(scores=judged.scores[inside], relevant=judged.labels[inside],
                       weights=weight_of[judged.stratum[inside]])
    estimate = {
        "method": "Horvitz–Thompson by stratum of the judged documents' relevance (out-of-fold scores), over the "
                  "retrieved set counted on the corpus; conservative Clopper–Pearson Monte Carlo interval "
                  "(estimation.stats.weighted_validation)",
        "confidence": CONFIDENCE,
        "design": judged.design["kind"],
        "strata": strata,
        "regions": judged.design.get("regions") or {},
        "at_threshold": _estimate_record(threshold, at),
        "curve": [_estimate_record(t, _estimate_at(judged=judged, corpus=corpus, threshold=t, seed=seed))
                  for t in THRESHOLD_GRID],
        "scorer": {"weighted_auc": None if auc is None else round(auc, 4), "top_share": TOP_SHARE,
                   "top_documents": top.retrieved, "top_threshold": round(top_threshold, 6),
                   "relevant_share_in_top": _interval(top.precision), "recall_of_top": _interval(top.recall)},
    }
    return {**definition, "threshold": float(threshold),
            "cross_validation": _agreement(oof=judged.scores, labels=judged.labels, threshold=float(threshold),
                                           target_precision=definition.get("target_precision")),
            "corpus_estimate": estimate}


def _design_labels(training: TrainingLabels, oof: dict[int, float]) -> DesignLabels | None:
    if training.design is None or training.stratum is None:
        return None
    return DesignLabels(pks=training.pks, labels=training.labels,
                        scores=np.array([oof[int(pk)] for pk in training.pks], dtype=np.float64),
                        stratum=training.stratum, design=training.design)


# --- scoring ------------------------------------------------------------------------------------------


def trained_score_range(*, corpus: Corpus, fields: Sequence[str], model: Any, oof: dict[int, float],
                        pk_range: tuple[int, int] | None = None,
                        progress: Callable[[int], None] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(pks, scores) of the corpus's documents in ``pk_range`` [lo, hi) (all when None), in pk order.

    Training documents get their out-of-fold score ``oof[pk]``; every other document the model's probability.
    ``progress(n)`` is called after each chunk of n documents.
    """
    vec = vectorizer()
    columns = _columns(fields)
    query = Document.objects.filter(corpus=corpus)
    if pk_range is not None:
        query = query.filter(pk__gte=pk_range[0], pk__lt=pk_range[1])
    rows = query.order_by("pk").values_list(*columns).iterator(chunk_size=SCORE_CHUNK)
    pk_parts: list[np.ndarray] = []
    score_parts: list[np.ndarray] = []
    batch_pks: list[int] = []
    batch_texts: list[str] = []

    def flush() -> None:
        scores = model.predict_proba(char_wb_transform(batch_texts, n_features=N_FEATURES, fallback=vec))[:, 1]
        for i, pk in enumerate(batch_pks):
            held_out = oof.get(pk)
            if held_out is not None:
                scores[i] = held_out
        pk_parts.append(np.array(batch_pks, dtype=np.int64))
        score_parts.append(scores.astype(np.float64))
        if progress is not None:
            progress(len(batch_pks))
        batch_pks.clear()
        batch_texts.clear()

    for pk, text in _view_rows(rows, fields, len(columns) == 4):
        batch_pks.append(pk)
        batch_texts.append(text)
        if len(batch_pks) >= SCORE_CHUNK:
            flush()
    if batch_pks:
        flush()
    if not pk_parts:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64)
    return np.concatenate(pk_parts), np.concatenate(score_parts)


def _score_corpus(*, corpus: Corpus, fields: Sequence[str], fitted: _Fitted) -> tuple[np.ndarray, np.ndarray]:
    """(pks, scores) of every document of the corpus, in pk order; training documents get their out-of-fold score."""
    return trained_score_range(corpus=corpus, fields=fields, model=fitted.model, oof=fitted.oof)


# --- the fitted model, saved once for the shards ----------------------------------------------------


@dataclass(frozen=True)
class TrainedModel:
    """What a shard needs to score: the weights of the full model and the training documents' out-of-fold scores."""

    model: Any  # a LogisticRegression rebuilt from the saved arrays
    oof: dict[int, float]
    labels: np.ndarray | None = None  # the training labels, in oof_pks order
    stratum: np.ndarray | None = None  # each training document's stratum of the design (-1: none)


def _media(relative: str) -> Path:
    if not relative.startswith(f"{MODEL_DIR}/") or ".." in PurePath(relative).parts:
        raise ValueError(f"not a trained-model path: {relative!r}")
    return Path(settings.MEDIA_ROOT) / relative


def _arrays_save(arrays: dict[str, np.ndarray], *, prefix: str) -> dict[str, str]:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)  # type: ignore[arg-type]
    data = buffer.getvalue()
    relative = f"{MODEL_DIR}/{prefix}-{uuid.uuid4().hex}.npz"
    path = _media(relative)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".part")
    temporary.write_bytes(data)
    temporary.replace(path)
    return {"file": relative, "sha256": hashlib.sha256(data).hexdigest()}


def _arrays_load(*, file: str, sha256: str) -> dict[str, np.ndarray]:
    data = _media(file).read_bytes()
    if hashlib.sha256(data).hexdigest() != sha256:
        raise ValueError(f"{file} does not match its recorded sha256")
    with np.load(io.BytesIO(data), allow_pickle=False) as arrays:
        return {name: arrays[name] for name in arrays.files}


def trained_model_save(*, fitted: _Fitted, prefix: str) -> dict[str, str]:
    """Write the weights and out-of-fold scores as plain arrays (no pickle); returns {"file", "sha256"}."""
    model: Any = fitted.model
    pks = np.array(sorted(fitted.oof), dtype=np.int64)
    arrays = {
        "coef": np.asarray(model.coef_, dtype=np.float64), "intercept": np.asarray(model.intercept_, dtype=np.float64),
        "classes": np.asarray(model.classes_).astype(bool), "oof_pks": pks,
        "oof_scores": np.array([fitted.oof[int(pk)] for pk in pks], dtype=np.float64)}
    training = fitted.training
    if training is not None and training.stratum is not None:  # training.pks is sorted like pks
        arrays["oof_labels"] = training.labels.astype(bool)
        arrays["oof_stratum"] = training.stratum.astype(np.int64)
    return _arrays_save(arrays, prefix=prefix)


def trained_model_load(*, file: str, sha256: str) -> TrainedModel:
    """Read a saved model, refusing a file whose sha256 is not the recorded one (ValueError: a bug or tampering)."""
    from sklearn.linear_model import LogisticRegression  # noqa: PLC0415 — heavy: scikit-learn, only when training or scoring

    arrays = _arrays_load(file=file, sha256=sha256)
    model = LogisticRegression(class_weight="balanced", max_iter=MAX_ITER, solver=SOLVER)
    model.coef_ = arrays["coef"]
    model.intercept_ = arrays["intercept"]
    model.classes_ = arrays["classes"]
    model.n_features_in_ = int(arrays["coef"].shape[1])
    oof = dict(zip(arrays["oof_pks"].tolist(), arrays["oof_scores"].tolist(), strict=True))
    return TrainedModel(model=model, oof=oof, labels=arrays.get("oof_labels"), stratum=arrays.get("oof_stratum"))


def trained_design_labels(*, model: TrainedModel, design: dict | None) -> DesignLabels | None:
    """The saved model's judged documents as trained_evaluate takes them; None without a design."""
    if design is None or model.labels is None or model.stratum is None:
        return None
    pks = np.array(sorted(model.oof), dtype=np.int64)
    return DesignLabels(pks=pks, labels=model.labels.astype(bool),
                        scores=np.array([model.oof[int(pk)] for pk in pks], dtype=np.float64),
                        stratum=model.stratum.astype(np.int64), design=design)


def trained_finalise(*, definition: dict, judged: DesignLabels | None, pks: np.ndarray, scores: np.ndarray) -> dict:
    """The definition as stored on the classifier: with the corpus figures when there is a design (see
    trained_evaluate), without the build's working keys."""
    definition = {k: v for k, v in definition.items() if k not in ("build", "design")}
    if judged is None:
        return definition
    return trained_evaluate(definition=definition, judged=judged, pks=pks, scores=scores)


def trained_scores_save(*, pks: np.ndarray, scores: np.ndarray, prefix: str) -> dict[str, str]:
    """A shard's (pks, scores), for the build's last step; returns {"file", "sha256"}."""
    return _arrays_save({"pks": pks.astype(np.int64), "scores": scores.astype(np.float64)}, prefix=prefix)


def trained_scores_load(*, file: str, sha256: str) -> tuple[np.ndarray, np.ndarray]:
    arrays = _arrays_load(file=file, sha256=sha256)
    return arrays["pks"], arrays["scores"]


def trained_files_remove(*, prefix: str) -> None:
    """Remove the files written with ``prefix`` (a failed build's model, a finished build's shard scores)."""
    folder = Path(settings.MEDIA_ROOT) / MODEL_DIR
    for path in folder.glob(f"{prefix}-*"):
        try:
            path.unlink(missing_ok=True)
        except OSError:
            pass


def trained_model_remove(*, file: str) -> None:
    try:
        _media(file).unlink(missing_ok=True)
    except (OSError, ValueError):
        pass


# --- storing --------------------------------------------------------------------------------------------


def trained_scores_store(*, classifier: Classifier, pks: np.ndarray, scores: np.ndarray) -> None:
    """One ClassifierScore row per document (COPY on PostgreSQL: a million rows in seconds)."""
    if connection.vendor == "postgresql":
        table = ClassifierScore._meta.db_table
        with connection.cursor() as cursor, cursor.db.wrap_database_errors, \
                cursor.cursor.copy(f"COPY {table} (classifier_id, document_id, score) FROM STDIN") as copy:
            for pk, score in zip(pks.tolist(), scores.tolist(), strict=True):
                copy.write_row((classifier.pk, pk, score))
        return
    for start in range(0, len(pks), INSERT_BATCH):
        ClassifierScore.objects.bulk_create([
            ClassifierScore(classifier=classifier, document_id=int(pk), score=float(score))
            for pk, score in zip(pks[start:start + INSERT_BATCH].tolist(), scores[start:start + INSERT_BATCH].tolist(),
                                 strict=True)
        ])


def trained_store(*, corpus: Corpus, name: str, definition: dict, pks: np.ndarray,
                  scores: np.ndarray) -> Classifier:
    """Store the classifier (retrieved = score ≥ the definition's threshold) and its scores, in one transaction."""
    retrieved = BitMap(pks[scores >= float(definition["threshold"])].tolist())
    with transaction.atomic():
        classifier = classifier_store(corpus=corpus, name=name, kind=Classifier.Kind.TRAINED, definition=definition,
                                      retrieved=retrieved)
        trained_scores_store(classifier=classifier, pks=pks, scores=scores)
    return classifier


# --- the request, the fit -------------------------------------------------------------------------------


def _threshold_check(threshold: float) -> float:
    try:
        value = float(threshold)
    except (TypeError, ValueError):
        raise ClassifierError(f"threshold {threshold!r} is not a number") from None
    if not 0.0 < value < 1.0:
        raise ClassifierError("the threshold is a probability: choose a number strictly between 0 and 1")
    return value


def _target_check(target: float) -> float:
    try:
        value = float(target)
    except (TypeError, ValueError):
        raise ClassifierError(f"target precision {target!r} is not a number") from None
    if not 0.0 < value < 1.0:
        raise ClassifierError("the target precision is a share: choose a number strictly between 0 and 1")
    return value


def _labels_count(*, labels_from: Topic | Classifier, corpus: Corpus) -> TrainingLabels:
    """The training labels when cheap (a topic), else their counts only (a classifier: drawn in the task)."""
    if isinstance(labels_from, Topic):
        return _labels_from_topic(topic=labels_from, corpus=corpus)
    if labels_from.corpus_id != corpus.pk:
        raise ClassifierError(f"“{labels_from.name}” is a classifier of another corpus")
    n_pos = min(labels_from.retrieved_count, MAX_TRAIN_PER_CLASS)
    n_neg = min(max(corpus.document_count - labels_from.retrieved_count, 0), MAX_TRAIN_PER_CLASS)
    return TrainingLabels(pks=np.empty(0, dtype=np.int64),
                          labels=np.concatenate([np.ones(n_pos, dtype=bool), np.zeros(n_neg, dtype=bool)]),
                          source={"source": "classifier", "classifier": labels_from.name})


def trained_request_check(
    *,
    corpus: Corpus,
    fields: Sequence[str],
    labels_from: Topic | Classifier,
    seed: int,
    threshold: float | None = 0.5,
    target_precision: float | None = None,
    partner: Classifier | None = None,
) -> dict:
    """Check everything a request can (fields, partner, label counts, threshold) and return the build's request.

    The returned dict is JSON (ids, not objects): `trained_fit` takes it in the task. ClassifierError for every
    user mistake. A target precision, when given, replaces the threshold.
    """
    if target_precision is not None:
        target_precision, threshold = _target_check(target_precision), None
    elif threshold is None:
        raise ClassifierError("give a threshold or a target precision")
    else:
        threshold = _threshold_check(threshold)
    chosen = _fields_check(corpus=corpus, fields=fields)
    if partner is None and isinstance(labels_from, Classifier):
        partner = labels_from
    partner_record = _partner_check(partner=partner, fields=chosen, corpus=corpus)
    _labels_check(_labels_count(labels_from=labels_from, corpus=corpus))
    source = ({"topic_id": labels_from.pk} if isinstance(labels_from, Topic) else {"classifier_id": labels_from.pk})
    return {"fields": chosen, "labels_from": source, "partner": partner_record, "seed": int(seed),
            "threshold": threshold, "target_precision": target_precision}


def trained_fit(*, corpus: Corpus, request: dict,
                progress: Callable[[int], None] | None = None) -> tuple[dict, _Fitted]:
    """Fit the classifier a `trained_request_check` request describes: (the classifier's definition, the fit)."""
    from sklearn import __version__ as sklearn_version  # noqa: PLC0415 — heavy: scikit-learn, only when training

    seed = int(request["seed"])
    source = request["labels_from"]
    if "topic_id" in source:
        training = _labels_from_topic(topic=Topic.objects.get(pk=source["topic_id"]), corpus=corpus)
    else:
        labeller = Classifier.objects.get(pk=source["classifier_id"])
        training = _labels_from_classifier(classifier=labeller, corpus=corpus, seed=seed)
    n_pos, n_neg = _labels_check(training)
    fitted = _train(training=training, fields=request["fields"], seed=seed, threshold=request["threshold"],
                    target_precision=request.get("target_precision"), progress=progress)
    model: Any = fitted.model
    weights = hashlib.sha256(np.asarray(model.coef_, dtype="<f8").tobytes()
                             + np.asarray(model.intercept_, dtype="<f8").tobytes()).hexdigest()
    definition = {
        "fields": list(request["fields"]),
        "labels": training.source,
        "n_positive": n_pos,
        "n_negative": n_neg,
        "seed": seed,
        "threshold": fitted.threshold,
        "target_precision": request.get("target_precision"),
        "partner": request.get("partner"),
        "features": {"vectorizer": "HashingVectorizer", "analyzer": "char_wb", "ngram_range": [4, 4],
                     "n_features": N_FEATURES, "alternate_sign": False},
        "model": {"type": "LogisticRegression", "max_iter": MAX_ITER, "solver": SOLVER,
                  "scikit_learn": sklearn_version, "weights_sha256": weights, **(
                      {"class_weight": "balanced"} if training_weights(training) is None else
                      {"class_weight": None, "sample_weight": "1/π, π the inclusion probability of each judged "
                                                             "document (combined over the draws that took it)"})},
        "cross_validation": fitted.cross_validation,
        "design": training.design,
    }
    return definition, fitted


def classifier_create_trained(
    *,
    corpus: Corpus,
    name: str,
    fields: Sequence[str],
    labels_from: Topic | Classifier,
    threshold: float | None = 0.5,
    target_precision: float | None = None,
    seed: int,
    partner: Classifier | None = None,
) -> Classifier:
    """Train on ``fields`` with labels from a topic's judged documents or another classifier's output; store it.

    In one process (the management command, the tests, the reference a sharded build is compared with); pages
    build it as a task (`classifier_build_start(kind="trained")`). ``partner``: the classifier the new one will be
    paired with (defaults to ``labels_from`` when that is a classifier); fields it reads are refused. See the
    module docstring for every rule.
    """
    name = (name or "").strip()
    if not name:
        raise ClassifierError("the classifier needs a name")
    if Classifier.objects.filter(corpus=corpus, name=name).exists():
        raise ClassifierError(f"corpus “{corpus.name}” already has a classifier named “{name}”")
    request = trained_request_check(corpus=corpus, fields=fields, labels_from=labels_from, seed=seed,
                                    threshold=threshold, target_precision=target_precision, partner=partner)
    definition, fitted = trained_fit(corpus=corpus, request=request)
    pks, scores = _score_corpus(corpus=corpus, fields=definition["fields"], fitted=fitted)
    judged = None if fitted.training is None else _design_labels(fitted.training, fitted.oof)
    definition = trained_finalise(definition=definition, judged=judged, pks=pks, scores=scores)
    return trained_store(corpus=corpus, name=name, definition=definition, pks=pks, scores=scores)
