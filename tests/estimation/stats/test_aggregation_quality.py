"""label_quality: crowd agreement and the low-agreement warning (issue 11 item 8).

The issue: Fleiss κ 0.31–0.36 raised no warning.  Expected values are hand
counts (comments), the notes' majority error rates (§3), or the accuracy the
simulated crowd was given; the thresholds are documented in
estimation/stats/aggregation.py and docs/aggregation.md.
"""
import json

import numpy as np
import pytest

from estimation.stats.aggregation import (
    fleiss_kappa,
    label_quality,
    majority_error_from_split_share,
)

# A topic with the pair's regions at typical sizes (prevalences of the issue) and a small
# complement sample at 2%: (stratum, documents, share relevant).
PAIR_DESIGN = (("A12", 100, 0.87), ("B1", 100, 0.5), ("B2", 100, 0.5), ("N", 60, 0.02))
# Many small strata: the per-stratum trigger's multiplicity risk.
SMALL_STRATA = (("A12", 30, 0.87), ("B1", 30, 0.5), ("B2", 30, 0.5), ("N", 30, 0.02), ("R:9", 30, 0.6))


def simulate_votes(rng, design, accuracy, *, per_stratum_accuracy=None):
    """Three votes per document; each vote right with the worker accuracy (one-coin model)."""
    votes, strata = [], []
    for key, n, share in design:
        a = (per_stratum_accuracy or {}).get(key, accuracy)
        truth = rng.random(n) < share
        right = (rng.random((n, 3)) < a).sum(axis=1)
        relevant = np.where(truth, right, 3 - right)
        votes += [(int(r), 3) for r in relevant]
        strata += [key] * n
    return votes, strata


def flag_rate(design, accuracy, *, seed, runs=300, **kwargs):
    rng = np.random.default_rng(seed)
    flagged = 0
    for _ in range(runs):
        votes, strata = simulate_votes(rng, design, accuracy, **kwargs)
        flagged += label_quality(votes=votes, strata=strata).low_agreement
    return flagged / runs


def test_hand_counted_figures():
    # Agreement per document, (k² + (3−k)² − 3)/6: 3/3 → 1, 0/3 → 1, 2/3 → 1/3, 1/3 → 1/3; mean 2/3.
    # Share of relevant votes 6/12 = 1/2, so P_e = 1/2 and κ = (2/3 − 1/2)/(1/2) = 1/3.
    quality = label_quality(votes=[(3, 3), (0, 3), (2, 3), (1, 3)], strata=["A12", "A12", "B2", "B2"])
    assert quality.fleiss_kappa == pytest.approx(1 / 3)
    assert quality.split_share == 0.5
    assert quality.documents == 4
    assert quality.per_stratum["A12"].split_share == 0.0
    assert quality.per_stratum["B2"].split_share == 1.0
    assert quality.per_stratum["A12"].documents == 2
    # Within A12 the votes are 3/3 and 0/3: full agreement, κ = 1.
    assert quality.per_stratum["A12"].fleiss_kappa == pytest.approx(1.0)
    json.dumps(quality.as_dict())


def test_kappa_matches_fleiss_kappa_and_handles_unequal_vote_counts():
    rng = np.random.default_rng(1)
    votes, _ = simulate_votes(rng, PAIR_DESIGN, 0.8)
    counts = [[3 - k, k] for k, _ in votes]
    assert label_quality(votes=votes).fleiss_kappa == pytest.approx(fleiss_kappa(counts=counts), abs=1e-12)
    # Fleiss' formula with n_i raters per document: (2, 2) → 1, (0, 4) → 1, (1, 2) → 0; mean 2/3.
    # Relevant votes 3 of 8: P_e = (3/8)² + (5/8)² = 34/64; κ = (2/3 − 34/64)/(30/64) = 13/45.
    assert label_quality(votes=[(2, 2), (0, 4), (1, 2)]).fleiss_kappa == pytest.approx(13 / 45)


@pytest.mark.parametrize(("accuracy", "expected"), [(0.8, 0.104), (0.9, 0.028)])
def test_majority_error_implied_by_the_split_share_matches_the_notes(accuracy, expected):
    # Notes §3; the split share of three a-accurate votes is 3a(1−a) whatever the true label.
    assert majority_error_from_split_share(3 * accuracy * (1 - accuracy)) == pytest.approx(expected, abs=0.0005)


def test_the_issues_crowd_is_flagged_with_a_message_for_a_manager():
    # Workers 80% accurate on about half-relevant documents: κ ≈ (2·0.8 − 1)² = 0.36, the issue's 0.31–0.36.
    rng = np.random.default_rng(11)
    votes, strata = simulate_votes(rng, (("A12", 150, 0.5), ("B2", 150, 0.5)), 0.8)
    quality = label_quality(votes=votes, strata=strata)
    assert 0.28 <= quality.fleiss_kappa <= 0.42
    assert quality.low_agreement
    assert "split_share" in quality.reasons and "kappa" in quality.reasons
    assert quality.majority_error == pytest.approx(0.104, abs=0.03)
    for words in ("disagreed", "gold documents", "instructions", "Dawid–Skene", "too narrow"):
        assert words in quality.message


@pytest.mark.parametrize(
    ("design", "accuracy", "low", "high"),
    [
        # Measured (seed 5, 300 topics each), PAIR_DESIGN / SMALL_STRATA: 0.95 → 0 / 0; 0.9 → 0.003 / 0.027;
        # 0.85 → 0.88 / 0.83 (majority wrong 6%: above the 5% line, mostly flagged); 0.8 and 0.7 → 1 / 1.
        (PAIR_DESIGN, 0.95, 0.0, 0.01),
        (PAIR_DESIGN, 0.9, 0.0, 0.05),
        (SMALL_STRATA, 0.9, 0.0, 0.06),
        (PAIR_DESIGN, 0.8, 0.99, 1.0),
        (SMALL_STRATA, 0.8, 0.99, 1.0),
        (PAIR_DESIGN, 0.7, 0.99, 1.0),
    ],
)
def test_which_crowds_trip_the_warning(design, accuracy, low, high):
    assert low <= flag_rate(design, accuracy, seed=5) <= high


def test_extreme_prevalence_depresses_kappa_but_is_not_flagged():
    # 0.95-accurate workers on a 1%-prevalence sample: κ ≈ 0.14 (expected, one-coin model), a κ-only rule
    # would cry wolf; the split share (3·0.95·0.05 ≈ 0.14) shows the crowd is fine.
    rng = np.random.default_rng(2)
    votes, strata = simulate_votes(rng, (("U", 400, 0.01),), 0.95)
    quality = label_quality(votes=votes, strata=strata)
    assert quality.fleiss_kappa < 0.4
    assert not quality.low_agreement and quality.message is None


def test_one_hard_stratum_is_flagged_by_name():
    # Good workers (0.92) everywhere except B2, where the documents are hard (0.7): overall split share
    # ≈ (3·100·0.22 + 100·0.63)/400 ≈ 0.32, under 0.35, but B2 alone is far above it.
    rng = np.random.default_rng(8)
    votes, strata = simulate_votes(rng, PAIR_DESIGN[:3] + (("U", 100, 0.3),), 0.92, per_stratum_accuracy={"B2": 0.7})
    quality = label_quality(votes=votes, strata=strata)
    assert quality.low_agreement
    assert "stratum_split_share:B2" in quality.reasons
    assert not any(r.startswith("stratum_split_share:") and r != "stratum_split_share:B2" for r in quality.reasons)
    assert "B2" in quality.message


def test_small_strata_alone_never_trip_the_stratum_rule():
    # 10 documents all split: too few to judge a stratum on its own (STRATUM_MIN_DOCUMENTS = 20).
    votes = [(3, 3)] * 200 + [(2, 3)] * 10
    strata = ["A12"] * 200 + ["G"] * 10
    quality = label_quality(votes=votes, strata=strata)
    assert quality.per_stratum["G"].split_share == 1.0
    assert not quality.low_agreement


def test_no_documents():
    quality = label_quality(votes=[])
    assert quality.documents == 0 and quality.fleiss_kappa is None and quality.split_share is None
    assert not quality.low_agreement and quality.per_stratum == {}
    json.dumps(quality.as_dict())


@pytest.mark.parametrize(
    "kwargs",
    [
        {"votes": [(4, 3)]},
        {"votes": [(0, 0)]},
        {"votes": [(-1, 3)]},
        {"votes": [(1, 3), (2, 3)], "strata": ["A12"]},
    ],
)
def test_invalid_votes_raise(kwargs):
    with pytest.raises(ValueError):
        label_quality(**kwargs)


def test_the_message_says_whether_the_intervals_allow_for_label_errors():
    votes = [(2, 3)] * 40 + [(3, 3)] * 30 + [(0, 3)] * 30  # 40% split votes: flagged
    plain = label_quality(votes=votes)
    widened = label_quality(votes=votes, intervals_widened=True)
    assert plain.low_agreement and widened.low_agreement
    assert "treat them as too narrow" in plain.message and "too narrow" not in widened.message
    assert "allow for these errors" in widened.message
