"""Issue 24 item 6: seed 003's pooled recall, confidently wrong on a small noisy uniform sample and on no page.

Reuters (seed 003 block): 300 uniform documents, 0.9-accurate workers, "true recall" of gold-title 0.138
(0.042–0.301) against 0.622.  Now the uniform sample's majority labels are corrected for the workers' errors
(Rogan–Gladen, accuracy from the votes), the figure is withheld in words when too few relevant documents remain,
and the block is shown on the report page under the detailed figures with what it rests on.  Before the fix the
block had no ``label_error``/``basis``/``pool_recall_refused`` and the page no ``id="pooled-recall"``.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from django.test import Client
from django.urls import reverse

from estimation.services.inputs import ClassifierInputs, CostInputs, SampleInputs, TopicInputs
from estimation.services.report_capture import pooled_recall_block
from tests.web.conftest import accounts, world  # noqa: F401  (fixtures of the page tests)

_ids = itertools.count(1)


def _sample(key, size, truth, holders, *, accuracy, rng):
    votes = [(int(np.sum((rng.random(3) < accuracy) == bool(t))), 3) for t in truth]
    region = "R" if key.startswith("R:") else key
    return SampleInputs(key=key, region=region, classifier_id=3 if key == "R:3" else None, size=size,
                        sampled=len(truth), document_ids=tuple(next(_ids) for _ in truth),
                        labels=tuple(1.0 if k >= 2 else 0.0 for k, _ in votes), retrieved_by=tuple(holders),
                        votes=tuple(votes))


def _inputs(*, uniform: int, prevalence: float, accuracy: float, seed: int) -> TopicInputs:
    """Corpus 20,000; pool recall 0.62 of the relevant documents; A12 200, B1 300, B2 300 documents."""
    rng = np.random.default_rng(seed)
    sizes = {"A12": 200, "B1": 300, "B2": 300}
    samples = {
        "A12": _sample("A12", 200, rng.random(60) < 0.85, [(1, 2, 3)] * 60, accuracy=accuracy, rng=rng),
        "B1": _sample("B1", 300, rng.random(60) < 0.5, [(1,)] * 60, accuracy=accuracy, rng=rng),
        "B2": _sample("B2", 300, rng.random(60) < 0.5, [(2, 3)] * 60, accuracy=accuracy, rng=rng),
        "R:3": _sample("R:3", 250, rng.random(40) < 0.7, [(2, 3)] * 40, accuracy=accuracy, rng=rng),
    }
    relevant = rng.random(uniform) < prevalence
    in_pool = np.where(relevant, rng.random(uniform) < 0.62, rng.random(uniform) < 0.01)
    samples["U"] = _sample("U", 20_000, relevant, [(1,) if p else () for p in in_pool], accuracy=accuracy, rng=rng)
    votes = tuple(v for s in samples.values() for v in s.votes)
    return TopicInputs(
        schema=2, topic_id=1, topic_name="t", corpus_size=20_000, aggregator="majority", soft_labels=False,
        target_recall=0.8, confidence=0.95, crowd="local",
        c1=ClassifierInputs(1, "gold-title", "f1", "c1", 500), c2=ClassifierInputs(2, "body", "f2", "c2", 500),
        extras=(ClassifierInputs(3, "third", "f3", "extra", 250),),
        region_sizes={**sizes, "A1": 500, "A2": 500}, samples=samples,
        venn3={"3": {"111": 200, "110": 0, "101": 0, "011": 50, "100": 300, "010": 250, "001": 0}},
        judgments=3 * len(votes), votes=votes, cost=CostInputs(0, "0", "0", False),
        certification={"state": "none"}, code_version="test", parameters={"draws": 2000, "seed": seed},
    )


def test_small_noisy_uniform_sample_withholds_true_recall_in_words():
    block, diagnostics = pooled_recall_block(inputs=_inputs(uniform=300, prevalence=0.02, accuracy=0.9, seed=3),
                                             confidence=0.95, draws=2000, seed=3)
    assert block is not None and block["label_error"] is not None
    assert block["pool_recall"] is None and all(s["true_recall"] is None for s in block["systems"])
    assert all(s["pooled_recall"] is not None for s in block["systems"])  # the shares of the pool stay
    (warning,) = [d for d in diagnostics if d["code"] == "pooled_recall_true_withheld"]
    assert "The uniform sample of 300 documents holds" in warning["message"] and "at least 10" in warning["message"]
    assert block["pool_recall_refused"] == warning["message"]


def test_large_noisy_uniform_sample_is_corrected_and_says_so():
    block, diagnostics = pooled_recall_block(inputs=_inputs(uniform=3000, prevalence=0.03, accuracy=0.85, seed=4),
                                             confidence=0.95, draws=2000, seed=4)
    assert block is not None and block["pool_recall_refused"] is None
    assert block["pool_recall_low"] <= 0.62 <= block["pool_recall_high"]
    assert "Rogan–Gladen" in block["basis"] and "accuracy" in block["basis"]
    assert not [d for d in diagnostics if d["code"] == "pooled_recall_true_withheld"]


@pytest.mark.django_db
def test_report_page_shows_pooled_recall_with_its_basis(world):  # noqa: F811
    from estimation.models import EstimateSnapshot
    from estimation.services.recompute import topic_snapshot_create

    topic = world["topic"]
    topic_snapshot_create(topic_id=topic.pk)
    snapshot = EstimateSnapshot.objects.filter(topic=topic).latest("version")
    report = snapshot.report
    report["pooled_recall"] = {
        "basis": "Seed 003: true recall = the pool's recall × each classifier's share (corrected, Rogan–Gladen).",
        "pool_recall": 0.6, "pool_recall_low": 0.5, "pool_recall_high": 0.7, "pool_recall_refused": None,
        "systems": [{"name": "gold-title", "true_recall": 0.55, "true_recall_low": 0.44, "true_recall_high": 0.66,
                     "pooled_recall": 0.91, "pooled_recall_low": 0.85, "pooled_recall_high": 0.95}]}
    snapshot.report = report
    snapshot.save(update_fields=["report"])
    client = Client()
    client.force_login(world["accounts"]["manager"])
    html = client.get(reverse("reports:topic", args=[topic.pk])).content.decode()
    block = html[html.index('id="pooled-recall"'):]
    assert html.index('id="classifier-details"') < html.index('id="pooled-recall"')  # under the detailed figures
    assert "gold-title" in block and "0.550" in block and "[0.440, 0.660]" in block and "0.910" in block
    assert "Rogan–Gladen" in block and "does not rest on the pair" in block
    # Withheld: the reason, in words, instead of the figure.
    report["pooled_recall"].update(pool_recall=None, pool_recall_refused="The uniform sample of 300 documents "
                                   "holds 8 labelled relevant; needs at least 10.")
    report["pooled_recall"]["systems"][0].update(true_recall=None, true_recall_low=None, true_recall_high=None)
    snapshot.report = report
    snapshot.save(update_fields=["report"])
    html = client.get(reverse("reports:topic", args=[topic.pk])).content.decode()
    assert 'id="pooled-recall-withheld"' in html and "holds 8 labelled relevant" in html
