"""The topic-set report with crowd noise: latent true classes, points inside their intervals, a headline in
words, F1 withheld (with the reason) when the workers agree too little (issue 24 item 1). Pure: the report is
computed from hand-built inputs, no database."""
from __future__ import annotations

import re

import numpy as np
import pytest

from estimation.services.inputs import CostInputs
from estimation.services.multiclass_report import (
    MulticlassInputs,
    RouterInputs,
    multiclass_headline,
    multiclass_report_from_inputs,
)

M = 4
K = M + 1
NAMES = ("None of these", "Grain", "Crude", "Trade", "Cocoa")


def _inputs(*, accuracy: float, n: int = 800, seed: int = 3, none: float = 0.9) -> MulticlassInputs:
    rng = np.random.default_rng(seed)
    z = rng.choice(K, size=n, p=np.r_[none, np.full(M, (1 - none) / M)])
    predicted = np.where(rng.random(n) < 0.85, z, rng.integers(0, K, n))
    votes = np.zeros((n, K), dtype=int)
    for _ in range(3):
        answer = np.where(rng.random(n) < accuracy, z, (z + rng.integers(1, K, n)) % K)
        votes[np.arange(n), answer] += 1
    ids = tuple(range(1, n + 1))
    decided = votes.max(axis=1) >= 2
    judged = tuple(i for i, d in zip(ids, decided, strict=True) if d)
    labels = tuple(int(v.argmax()) for v, d in zip(votes, decided, strict=True) if d)
    router = RouterInputs(id=1, name="router", kind="upload", fingerprint="f", predicted_counts=(),
                          predicted=tuple(int(p) for p, d in zip(predicted, decided, strict=True) if d),
                          crowd_predicted=tuple(int(p) for p in predicted))
    return MulticlassInputs(
        schema=2, topic_id=1, topic_name="reuters", corpus_size=100_000, aggregator="majority", soft_labels=False,
        class_names=NAMES, sampled=n, document_ids=judged, labels=labels, probabilities=(), gold=0,
        undecided=int((~decided).sum()), pending=0,
        votes=tuple(tuple(int(x) for x in v) for v, d in zip(votes, decided, strict=True) if d), unsure_votes=0,
        routers=(router,), judgments=3 * n, cost=CostInputs(assignments=0, rewards="0", spent="0", includes_fees=True),
        code_version="t", parameters={"draws": 4000, "seed": 11, "reference": 0.6},
        crowd_ids=ids, crowd_votes=tuple(tuple(int(x) for x in v) for v in votes), gold_ids=())


def _points_and_intervals(posterior: dict):
    for average in ("micro", "macro"):
        yield average, posterior[average]["point"], posterior[average]["hdi"]
    for row in posterior["per_class"]:
        for name in ("precision", "recall", "f1"):
            yield f"{row['name']} {name}", row[f"{name}_point"], row[f"{name}_hdi"]


def test_noisy_crowd_report_uses_latent_classes_and_every_point_lies_in_its_interval():
    report = multiclass_report_from_inputs(inputs=_inputs(accuracy=0.8), generated_at="2026-11-27T00:00:00Z")
    (router,) = report["routers"]
    assert router["model"] == "latent" and router["withheld"] is None
    assert report["parameters"]["labels"] == "latent"
    assert 0.7 < router["crowd"]["accuracy"][0] < 0.9
    checked = 0
    for what, point, (low, high) in _points_and_intervals(router["posterior"]):
        assert low <= point <= high, what
        checked += 1
    assert checked == 2 + 3 * K
    headline = router["headline"]["macro"]
    assert re.fullmatch(r"macro-F1 0\.\d\d \(0\.\d\d–0\.\d\d\); .*reference 0\.60.*", headline), headline
    # Plain words in the main text; technical terms only in the details.
    main = " ".join(report["assumptions"])
    for word in ("HDI", "Dirichlet", "seed"):
        assert word not in main
    assert "Dawid & Skene" in report["technical"]


def test_workers_at_chance_withhold_f1_with_the_reason():
    report = multiclass_report_from_inputs(inputs=_inputs(accuracy=1.0 / K, seed=5))
    (router,) = report["routers"]
    assert router["posterior"] is None and router["headline"] is None
    assert "agree too little" in router["withheld"]
    assert any(d["code"] == "agreement_too_low" for d in report["diagnostics"])


@pytest.mark.parametrize(("point", "low", "high", "verdict"), [
    (0.62, 0.55, 0.69, "the router misses the reference 0.80"),
    (0.9, 0.85, 0.95, "the router meets the reference 0.80"),
    (0.8, 0.7, 0.9, "too close to tell whether the router meets the reference 0.80 (chance it does: 50%)"),
])
def test_headline_in_words(point, low, high, verdict):
    text = multiclass_headline(average={"point": point, "hdi": [low, high], "above": 0.5}, name="macro-F1",
                               reference=0.8)
    assert text == f"macro-F1 {point:.2f} ({low:.2f}–{high:.2f}); {verdict}"
