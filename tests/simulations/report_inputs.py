"""Hand-written TopicInputs for report tests (topic_report_from_inputs is pure): region samples, certain
labels and the votes of a simulated crowd; used by tests/estimation/test_report_floors_honest.py and
test_report_pooled_nhat_pair.py."""
from __future__ import annotations

import itertools

import numpy as np

from estimation.services.inputs import ClassifierInputs, CostInputs, SampleInputs, TopicInputs

DRAWS = 2_000
_ids = itertools.count(1)


def sample_inputs(key, size, labels, votes, *, classifier_id=None, holders=()):
    region = "R" if key.startswith("R:") else key
    return SampleInputs(key=key, region=region, classifier_id=classifier_id, size=size, sampled=len(labels),
                        document_ids=tuple(next(_ids) for _ in labels), labels=tuple(labels),
                        retrieved_by=(tuple(holders),) * len(labels), votes=tuple(votes))


def certain_labels(judged, relevant):
    labels = [1.0] * int(relevant) + [0.0] * (judged - int(relevant))
    return labels, [(3, 3) if label else (0, 3) for label in labels]


def crowd_votes(truth, *, accuracy, rng):
    """Majority labels and (relevant votes, 3) of three workers of the given accuracy on documents ``truth``."""
    labels, votes = [], []
    for relevant in truth:
        right = rng.random(3) < accuracy
        yes = int(np.sum(right == bool(relevant)))
        votes.append((yes, 3))
        labels.append(1.0 if yes >= 2 else 0.0)
    return labels, votes


def topic_inputs(*, regions, sizes, extras, corpus_size, seed=1):
    """regions: key -> (labels, votes); extras: (id, retrieved, labels, votes)."""
    c1 = ClassifierInputs(1, "title filter", "f1", "c1", sizes["A12"] + sizes["B1"])
    c2 = ClassifierInputs(2, "body filter", "f2", "c2", sizes["A12"] + sizes["B2"])
    holders = {"A12": (1, 2), "B1": (1,), "B2": (2,)}
    samples = {k: sample_inputs(k, sizes[k], *regions[k], holders=holders[k]) for k in ("A12", "B1", "B2")}
    extra_inputs = []
    for cid, retrieved, labels, votes in extras:
        extra_inputs.append(ClassifierInputs(cid, f"classifier {cid}", f"f{cid}", "extra", retrieved))
        samples[f"R:{cid}"] = sample_inputs(f"R:{cid}", retrieved, labels, votes, classifier_id=cid, holders=(cid,))
    region_sizes = {**sizes, "A1": sizes["A12"] + sizes["B1"], "A2": sizes["A12"] + sizes["B2"]}
    votes = tuple(v for s in samples.values() for v in s.votes)
    strata = tuple(k for k, s in samples.items() for _ in s.votes)
    return TopicInputs(
        schema=2, topic_id=1, topic_name="t", corpus_size=corpus_size, aggregator="majority", soft_labels=False,
        target_recall=0.8, confidence=0.95, crowd="local", c1=c1, c2=c2, extras=tuple(extra_inputs),
        region_sizes=region_sizes, samples=samples, venn3={}, judgments=3 * len(votes), votes=votes,
        cost=CostInputs(0, "0", "0", False), certification={"state": "none"}, code_version="test",
        parameters={"draws": DRAWS, "seed": seed}, vote_strata=strata,
    )
