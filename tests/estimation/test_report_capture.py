"""The report's capture–recapture and pooled-recall blocks (estimation/services/report_capture.py).

TopicInputs are built by hand from a simulated corpus with a known truth (no database):
C1 (id 1) and C2 (id 2) are the pair, C3 (id 3) a further classifier; the default
design judges A12, B1, B2, C3's output and a uniform sample of the corpus.
"""
import json

import numpy as np
import pytest

from estimation.services.inputs import ClassifierInputs, CostInputs, SampleInputs, TopicInputs
from estimation.services.report_capture import dependence_block, pooled_recall_block

IDS = (1, 2, 3)


def corpus(seed, *, n_docs=60_000, n_relevant=2_000, c2_given_c1=None):
    """Relevant documents caught by C1, C2, C3 with recalls 0.5, 0.4 (or P(C2 | C1) given), 0.3; 3% noise each."""
    rng = np.random.default_rng(seed)
    relevant = np.zeros(n_docs, dtype=bool)
    relevant[:n_relevant] = True
    r = slice(0, n_relevant)
    caught = rng.random((n_docs, 3)) < 0.03
    caught[r] = rng.random((n_relevant, 3)) < np.array([0.5, 0.4, 0.3])
    if c2_given_c1 is not None:
        given, not_given = c2_given_c1
        u = rng.random(n_relevant)
        caught[r, 1] = np.where(caught[r, 0], u < given, u < not_given)
    return relevant, caught


def topic_inputs(rng, relevant, caught, *, judged=150, uniform=3000, extra_sample=True, confidence=0.95):
    c1, c2, c3 = caught.T
    masks = {"A12": c1 & c2, "B1": c1 & ~c2, "B2": c2 & ~c1, "R:3": c3, "U": np.ones(relevant.size, dtype=bool)}
    samples = {}
    for key, mask in masks.items():
        if key == "R:3" and not extra_sample:
            continue
        n = uniform if key == "U" else judged
        docs = np.sort(rng.choice(np.flatnonzero(mask), n, replace=False))
        samples[key] = SampleInputs(
            key=key, region="R" if key.startswith("R:") else key, classifier_id=3 if key == "R:3" else None,
            size=int(mask.sum()), sampled=n, document_ids=tuple(int(d) + 1 for d in docs),
            labels=tuple(float(v) for v in relevant[docs]),
            retrieved_by=tuple(tuple(i for i, hit in zip(IDS, caught[d]) if hit) for d in docs),
        )
    union = c1 | c2
    venn3 = {"3": {
        "111": int((c1 & c2 & c3).sum()), "110": int((c1 & c2 & ~c3).sum()),
        "101": int((c1 & ~c2 & c3).sum()), "100": int((c1 & ~c2 & ~c3).sum()),
        "011": int((~c1 & c2 & c3).sum()), "010": int((~c1 & c2 & ~c3).sum()),
        "001": int((c3 & ~union).sum()),
    }}

    def classifier(i, role):
        return ClassifierInputs(id=i, name=f"C{i}", fingerprint=f"f{i}", role=role, retrieved=int(caught[:, i - 1].sum()))

    return TopicInputs(
        schema=1, topic_id=7, topic_name="simulated", corpus_size=int(relevant.size), aggregator="majority",
        soft_labels=False, target_recall=0.8, confidence=confidence, crowd="local",
        c1=classifier(1, "c1"), c2=classifier(2, "c2"), extras=(classifier(3, "extra"),),
        region_sizes={"A12": int((c1 & c2).sum()), "B1": int((c1 & ~c2).sum()), "B2": int((c2 & ~c1).sum()),
                      "A1": int(c1.sum()), "A2": int(c2.sum())},
        samples=samples, venn3=venn3, judgments=0, votes=(),
        cost=CostInputs(assignments=0, rewards="0", spent="0", includes_fees=False),
        certification={"state": "none"}, code_version="test", parameters={"draws": 2000, "seed": 1},
    )


def codes(diagnostics):
    return [d["code"] for d in diagnostics]


def test_dependence_block_warns_when_the_pair_is_dependent():
    # C2 finds 80% of C1's relevant documents but 30% of the rest: δ1 ≈ 1.45 (seeded population and samples).
    relevant, caught = corpus(0, c2_given_c1=(0.8, 0.3))
    rel = caught[relevant]
    true_delta = (rel[:, 0] & rel[:, 1]).mean() / (rel[:, 0].mean() * rel[:, 1].mean())
    inputs = topic_inputs(np.random.default_rng(1), relevant, caught)
    rows, diagnostics = dependence_block(inputs=inputs, confidence=0.95, draws=20_000, seed=3)
    assert true_delta == pytest.approx(1.45, abs=0.05)
    (row,) = rows
    # The keys of the old block are kept.
    assert {"id", "classifier", "counts", "best", "summary", "models", "refused"} <= set(row)
    assert row["refused"] is None and row["best"] == "Mt+12"
    interval = row["interval"]
    assert interval["n_hat"]["low"] <= relevant.sum() <= interval["n_hat"]["high"]
    assert interval["delta12"]["low"] <= true_delta <= interval["delta12"]["high"]
    assert interval["delta12"]["low"] > 1.0 and interval["dependence_evidence"]
    warning = next(d for d in diagnostics if d["code"] == "capture_recapture_dependence")
    assert warning["severity"] == "warning" and "too high" in warning["message"]
    assert set(warning) == {"code", "severity", "message", "source"}
    assert row["regions"]["001"]["judged"] > 0  # C3 alone: from C3's own sample
    json.dumps(rows)


def test_dependence_block_is_quiet_on_an_independent_pair():
    relevant, caught = corpus(2)
    inputs = topic_inputs(np.random.default_rng(3), relevant, caught)
    rows, diagnostics = dependence_block(inputs=inputs, confidence=0.95, draws=2000, seed=3)
    assert "capture_recapture_dependence" not in codes(diagnostics)
    assert codes(diagnostics) == ["capture_recapture"]
    interval = rows[0]["interval"]
    assert interval["n_hat"]["low"] <= relevant.sum() <= interval["n_hat"]["high"]


def test_dependence_block_refuses_a_region_without_judgments():
    relevant, caught = corpus(4)
    inputs = topic_inputs(np.random.default_rng(5), relevant, caught, extra_sample=False)
    rows, diagnostics = dependence_block(inputs=inputs, confidence=0.95, draws=2000, seed=3)
    assert "001" in rows[0]["refused"] and rows[0]["counts"]["001"] is None and rows[0]["interval"] is None
    assert diagnostics == []


def test_pooled_recall_block_uses_the_stratified_samples():
    relevant, caught = corpus(6)
    truth = caught[relevant].mean(axis=0)
    inputs = topic_inputs(np.random.default_rng(7), relevant, caught)
    block, diagnostics = pooled_recall_block(inputs=inputs, confidence=0.95, draws=2000, seed=1)
    assert diagnostics == []
    assert [s["name"] for s in block["systems"]] == ["C1", "C2", "C3"]
    assert [s["id"] for s in block["systems"]] == [1, 2, 3]
    for system, true in zip(block["systems"], truth):
        assert system["true_recall_low"] <= true <= system["true_recall_high"], (system, true)
    assert {s["sample"] for s in block["samples"]} == {"A12", "B1", "B2", "C3"}
    assert block["confidence"] == 0.95
    json.dumps(block)


def test_pooled_recall_block_refuses_an_extra_classifier_without_a_sample():
    relevant, caught = corpus(8)
    inputs = topic_inputs(np.random.default_rng(9), relevant, caught, extra_sample=False)
    block, diagnostics = pooled_recall_block(inputs=inputs, confidence=0.95, draws=2000, seed=1)
    assert block is None
    (diagnostic,) = diagnostics
    assert diagnostic["code"] == "pooled_recall_refused" and diagnostic["severity"] == "warning"
    assert "C3" in diagnostic["message"]


def test_pooled_recall_block_accepts_an_extra_inside_the_pairs_union():
    # C3 retrieves only documents C1 or C2 retrieved: the A12/B1/B2 samples reach all of it.
    relevant, caught = corpus(10)
    caught[:, 2] &= caught[:, 0] | caught[:, 1]
    truth = caught[relevant].mean(axis=0)
    inputs = topic_inputs(np.random.default_rng(11), relevant, caught, extra_sample=False)
    assert inputs.venn3["3"]["001"] == 0
    block, diagnostics = pooled_recall_block(inputs=inputs, confidence=0.95, draws=2000, seed=1)
    assert diagnostics == []
    assert block["systems"][2]["true_recall_low"] <= truth[2] <= block["systems"][2]["true_recall_high"]


def test_no_blocks_without_a_further_classifier_or_uniform_sample():
    relevant, caught = corpus(12)
    inputs = topic_inputs(np.random.default_rng(13), relevant, caught)
    without_u = TopicInputs(**{**inputs.__dict__, "samples": {k: v for k, v in inputs.samples.items() if k != "U"}})
    assert pooled_recall_block(inputs=without_u, confidence=0.95, draws=2000, seed=1) == (None, [])
    no_extras = TopicInputs(**{**inputs.__dict__, "extras": ()})
    assert dependence_block(inputs=no_extras, confidence=0.95, draws=2000, seed=1) == (None, [])


# --------------------------------------------------------------------------- wiring, on the hand-counted topic
# tests/factories.build_topic: C1 = docs 0..29, C2 = 20..44, C3 = 10..34; its comment lists every sample.
# These replace the pooled-recall and capture–recapture checks of tests/estimation/test_reports.py once
# reports.py calls this module.


@pytest.mark.django_db
def test_pooled_recall_block_on_the_hand_counted_topic():
    from annotation.models import Region, SampleDraw
    from estimation.services.inputs import topic_inputs_gather
    from estimation.stats.pooled_recall import CorpusSample, StratumSample, SystemSample, pooled_recall
    from tests.factories import build_topic, make_draw

    built = build_topic()
    inputs = topic_inputs_gather(topic=built.topic, parameters={"draws": 2000, "seed": 7})
    block, diagnostics = pooled_recall_block(inputs=inputs, confidence=0.95, draws=2000, seed=7)
    c1, c2, c3 = (str(c.pk) for c in (built.c1, built.c2, built.c3))
    # By hand from the fixture: A12 judged 20..25 (relevant 20..24), B1 judged 0..8 (relevant 0, 1 and 8, a sampled document made gold), B2 judged
    # 30..36 (relevant 30..32), C3's own sample 10..15 and 33 (relevant 10..12), U 28 and 50..55 (50 relevant).
    strata = [
        StratumSample(name="A12", size=10, inside=(c1, c2), outside=(), relevant=[1] * 5 + [0],
                      retrieved_by=[[c1, c2, c3]] * 6),
        StratumSample(name="B1", size=20, inside=(c1,), outside=(c2,), relevant=[1, 1] + [0] * 6 + [1],
                      retrieved_by=[[c1]] * 9),
        StratumSample(name="B2", size=15, inside=(c2,), outside=(c1,), relevant=[1, 1, 1, 0, 0, 0, 0],
                      retrieved_by=[[c2, c3]] * 5 + [[c2]] * 2),
    ]
    systems = [
        SystemSample(name=c1, retrieved=30, relevant=[], retrieved_by=[]),
        SystemSample(name=c2, retrieved=25, relevant=[], retrieved_by=[]),
        SystemSample(name=c3, retrieved=25, relevant=[1, 1, 1, 0, 0, 0, 0], retrieved_by=[[c1, c3]] * 6 + [[c2, c3]]),
    ]
    corpus = CorpusSample(relevant=[0, 1, 0, 0, 0, 0, 0], in_pool=[True] + [False] * 6)
    expected = pooled_recall(systems=systems, strata=strata, corpus_sample=corpus, confidence=0.95, draws=2000, seed=7)
    assert diagnostics == []
    got = {s["id"]: s for s in block["systems"]}
    for system in expected.systems:
        assert got[int(system.name)]["pooled_recall"] == pytest.approx(system.pooled_recall)
        assert got[int(system.name)]["true_recall_high"] == pytest.approx(system.true_recall_high)
    assert got[built.c1.pk]["name"] == "=title filter"
    assert block["pool_recall"] == 0.0  # the one relevant document of U lies outside the pool
    json.dumps(block)

    # Without C3's own sample: C3 = 10..34 lies inside A1 ∪ A2 = 0..44 (venn3 "001" = 0), so it is still reached.
    SampleDraw.objects.filter(topic=built.topic, purpose=SampleDraw.Purpose.PRECISION).delete()
    inputs = topic_inputs_gather(topic=built.topic, parameters={"draws": 2000, "seed": 7})
    block, diagnostics = pooled_recall_block(inputs=inputs, confidence=0.95, draws=2000, seed=7)
    assert block is not None and diagnostics == []
    # Without a B1 sample, C1's own documents outside C2 are reached by nothing: refused.
    SampleDraw.objects.filter(topic=built.topic, region=Region.B1).delete()
    make_draw(built.topic, SampleDraw.Purpose.PAIR, Region.B1, [], built.docs)
    inputs = topic_inputs_gather(topic=built.topic, parameters={"draws": 2000, "seed": 7})
    block, diagnostics = pooled_recall_block(inputs=inputs, confidence=0.95, draws=2000, seed=7)
    assert block is None and codes(diagnostics) == ["pooled_recall_refused"]
    assert "=title filter" in diagnostics[0]["message"]


@pytest.mark.django_db
def test_dependence_block_on_the_hand_counted_topic():
    from annotation.models import Region, SampleDraw
    from estimation.services.inputs import topic_inputs_gather
    from tests.factories import build_topic, make_draw

    built = build_topic()
    make_draw(built.topic, SampleDraw.Purpose.PAIR, Region.B1, [10, 11, 12], built.docs)  # judged relevant already
    inputs = topic_inputs_gather(topic=built.topic, parameters={"draws": 2000, "seed": 7})
    rows, diagnostics = dependence_block(inputs=inputs, confidence=0.95, draws=2000, seed=7)
    (row,) = rows
    regions = {  # (size, judged, relevant) by hand, as in test_reports.py's counts
        "111": (10, 6, 5.0), "110": (0, 0, 0.0), "101": (10, 3, 3.0), "100": (10, 9, 3.0),  # 8 was made gold (relevant): it keeps its place
        "011": (5, 5, 3.0), "010": (10, 2, 0.0), "001": (0, 0, 0.0),
    }
    assert {h: (r["size"], r["judged"], r["relevant"]) for h, r in row["regions"].items()} == regions
    assert row["counts"] == pytest.approx({h: s * k / n if n else 0.0 for h, (s, n, k) in regions.items()})
    assert row["refused"] is None and row["best"] == row["interval"]["model"]
    assert row["interval"]["n_hat"]["low"] is not None and row["summary"] == row["interval"]["summary"]
    assert "capture_recapture" in codes(diagnostics)
    json.dumps(rows)
