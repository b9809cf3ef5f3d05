"""Anytime-valid betting confidence sequences (Waudby-Smith & Ramdas), checked by simulation."""
import math

import numpy as np
import pytest
from scipy.stats import norm

from estimation.stats.confidence_sequence import (
    RunningConfidenceSequence,
    RunningPairRecallBound,
    RunningUniformF1Bound,
    RunningUniformRecallBound,
    bernoulli_capital,
    bernoulli_confidence_sequence,
    pair_recall_lower_bound,
    uniform_f1_lower_bound,
    uniform_recall_lower_bound,
)


def _mc_limit(alpha, runs):
    """alpha plus three binomial standard errors: the most a valid method may show."""
    return alpha + 3 * math.sqrt(alpha * (1 - alpha) / runs)


@pytest.mark.parametrize("truth", [0.03, 0.3, 0.5, 0.9])
def test_capital_at_truth_ever_crossing_is_at_most_alpha(truth):
    # Ville: P(sup_t K_t(truth) >= 1/alpha) <= alpha over the whole sequence.
    alpha, runs, length = 0.05, 1_500, 1_000
    outcomes = np.random.default_rng(int(truth * 1000)).binomial(1, truth, size=(runs, length))
    capital = bernoulli_capital(outcomes=outcomes, mean=truth, alpha=alpha)
    ever_rejected = np.mean(capital.max(axis=1) >= 1 / alpha)
    assert ever_rejected <= _mc_limit(alpha, runs)


def test_reported_sequence_time_uniform_coverage():
    # The reported path (grid, outward rounding, running intersection) must
    # miss the truth at any time in at most alpha of the runs.
    alpha, runs, length, truth = 0.1, 300, 400, 0.2
    rng = np.random.default_rng(7)
    missed = 0
    for _ in range(runs):
        cs = bernoulli_confidence_sequence(outcomes=rng.binomial(1, truth, size=length),
                                           alpha=alpha, grid_size=200)
        missed += bool(np.any((cs.lower > truth) | (cs.upper < truth)))
    assert missed / runs <= _mc_limit(alpha, runs)


def test_one_sided_lower_time_uniform_coverage():
    alpha, runs, length, truth = 0.1, 300, 400, 0.7
    rng = np.random.default_rng(8)
    missed = 0
    for _ in range(runs):
        cs = bernoulli_confidence_sequence(outcomes=rng.binomial(1, truth, size=length),
                                           alpha=alpha, side="lower", grid_size=200)
        missed += bool(np.any(cs.lower > truth))
    assert missed / runs <= _mc_limit(alpha, runs)


def test_fixed_time_interval_fails_under_peeking_but_cs_does_not():
    # Why the product needs a CS: checking a 95% Wald interval after every
    # observation excludes the truth at some time far more often than 5%.
    alpha, runs, length, truth = 0.05, 400, 1_000, 0.5
    outcomes = np.random.default_rng(3).binomial(1, truth, size=(runs, length))
    steps = np.arange(1, length + 1)
    means = np.cumsum(outcomes, axis=1) / steps
    half = norm.ppf(0.975) * np.sqrt(np.maximum(means * (1 - means), 1e-12) / steps)
    wald_missed = np.mean(np.any((np.abs(means - truth) > half)[:, 20:], axis=1))
    assert wald_missed > 0.2
    capital = bernoulli_capital(outcomes=outcomes, mean=truth, alpha=alpha)
    assert np.mean(capital.max(axis=1) >= 1 / alpha) <= _mc_limit(alpha, runs)


def test_cs_shrinks_and_is_not_absurdly_wide():
    rng = np.random.default_rng(11)
    cs = bernoulli_confidence_sequence(outcomes=rng.binomial(1, 0.3, size=4_000), alpha=0.05)
    widths = cs.upper - cs.lower
    assert np.all(np.diff(widths) <= 1e-12)  # running intersection never widens
    # Within a factor 3 of a fixed-time 95% Wald interval at n = 4,000.
    wald = 2 * 1.96 * math.sqrt(0.3 * 0.7 / 4_000)
    assert widths[-1] < 3 * wald
    assert cs.lower[-1] < 0.3 < cs.upper[-1]


def test_extreme_sequences():
    low, high = bernoulli_confidence_sequence(outcomes=np.zeros(50)).final
    assert low == 0.0 and 0.0 < high < 0.3
    low, high = bernoulli_confidence_sequence(outcomes=np.ones(50)).final
    assert high == 1.0 and 0.7 < low < 1.0
    assert bernoulli_confidence_sequence(outcomes=[]).final == (0.0, 1.0)


def test_uniform_recall_lower_bound_coverage_and_sense():
    rng = np.random.default_rng(5)
    truth, runs = 0.8, 200
    bounds = [uniform_recall_lower_bound(found=rng.binomial(1, truth, size=150), alpha=0.05,
                                         grid_size=400) for _ in range(runs)]
    assert np.mean(np.array(bounds) > truth) <= _mc_limit(0.05, runs)
    assert np.median(bounds) > 0.6


def test_pair_recall_lower_bound_coverage():
    # Notes §2 worked example: |A12| = 5,000 (p12 = 0.9), |B2| = 20,000 (p_B2 = 0.1), r1 = 0.692.
    overlap, other, p12, pb2 = 5_000, 20_000, 0.9, 0.1
    truth = overlap * p12 / (overlap * p12 + other * pb2)
    assert truth == pytest.approx(0.692, abs=0.001)
    rng = np.random.default_rng(6)
    runs = 200
    bounds = np.array([
        pair_recall_lower_bound(overlap_size=overlap, overlap_outcomes=rng.binomial(1, p12, 400),
                                other_size=other, other_outcomes=rng.binomial(1, pb2, 800),
                                alpha=0.05, grid_size=200)
        for _ in range(runs)])
    assert np.mean(bounds > truth) <= _mc_limit(0.05, runs)
    assert np.median(bounds) > 0.5


def test_uniform_f1_lower_bound_time_uniform_coverage():
    # Population cells (tp, fp, fn, tn) = (0.07, 0.03, 0.018, 0.882): F1 = 0.745.
    # The F1 bound implied by the error-share sequence must stay below the
    # truth at every time in at least 95% of runs.
    cells = np.array([0.07, 0.03, 0.018, 0.882])
    truth = 2 * cells[0] / (2 * cells[0] + cells[1] + cells[2])
    rng = np.random.default_rng(21)
    runs = 300
    missed = 0
    for _ in range(runs):
        kinds = rng.choice(4, size=2_000, p=cells)
        errors = (kinds[kinds < 3] > 0).astype(int)  # true negatives skipped
        path = bernoulli_confidence_sequence(outcomes=errors, alpha=0.05, side="upper",
                                             grid_size=400).upper
        missed += bool(np.any(2 * (1 - path) / (2 - path) > truth))
    assert missed / runs <= _mc_limit(0.05, runs)
    final = uniform_f1_lower_bound(errors=errors, alpha=0.05)
    assert 0.5 < final < truth


def test_input_checks():
    with pytest.raises(ValueError):
        bernoulli_confidence_sequence(outcomes=[0, 2, 1])
    with pytest.raises(ValueError):
        bernoulli_confidence_sequence(outcomes=[0, 1], alpha=0.0)
    with pytest.raises(ValueError):
        bernoulli_confidence_sequence(outcomes=[0, 1], side="left")
    with pytest.raises(ValueError):
        pair_recall_lower_bound(overlap_size=0, overlap_outcomes=[1], other_size=1, other_outcomes=[0])


# --------------------------------------------------------------------------- running (incremental) form

def _batches(rng, sizes, p):
    return [rng.binomial(1, p, size=int(size)) for size in sizes]


@pytest.mark.parametrize("side, alpha", [("two-sided", 0.05), ("lower", 0.025), ("upper", 0.1)])
def test_running_sequence_equals_the_batch_function_after_every_batch(side, alpha):
    # Random batch sizes, empty batches included, several crossing the 1,024-step blocks
    # of the batch function: the running bounds must be the very same floats.
    rng = np.random.default_rng({"two-sided": 31, "lower": 32, "upper": 33}[side])
    for p, grid_size in ((0.5, 200), (0.93, 200), (0.08, 1000)):
        running = RunningConfidenceSequence(alpha=alpha, side=side, grid_size=grid_size)
        assert running.final == (0.0, 1.0)
        seen = []
        sizes = rng.choice([0, 1, 2, 5, 40, 333, 700, 1100], size=9)
        for batch in _batches(rng, sizes, p):
            running.extend(batch)
            seen.extend(batch.tolist())
            expected = bernoulli_confidence_sequence(outcomes=seen, alpha=alpha, side=side,
                                                     grid_size=grid_size, intersect=True).final
            assert running.count == len(seen)
            assert running.final == expected


@pytest.mark.parametrize("side", ["two-sided", "lower", "upper"])
def test_running_sequence_exact_at_block_boundaries(side):
    # Batches ending exactly on, one before and one after a block boundary (1,024 steps).
    rng = np.random.default_rng(34)
    running = RunningConfidenceSequence(alpha=0.05, side=side, grid_size=200)
    seen = []
    for batch in _batches(rng, [1023, 1, 0, 1024, 1, 1023, 1025, 2048, 1], 0.3):
        running.extend(batch)
        seen.extend(batch.tolist())
        assert running.final == bernoulli_confidence_sequence(outcomes=seen, alpha=0.05, side=side,
                                                              grid_size=200).final
    # One observation at a time over a boundary, reading the bounds at every step.
    running = RunningConfidenceSequence(alpha=0.05, side=side, grid_size=50)
    outcomes = rng.binomial(1, 0.7, size=1030)
    running.extend(outcomes[:1015])
    for t in range(1015, outcomes.size):
        running.extend(outcomes[t:t + 1])
        assert running.final == bernoulli_confidence_sequence(outcomes=outcomes[:t + 1], side=side,
                                                              grid_size=50).final


def test_running_final_keeps_grid_bounds_of_earlier_steps_and_refines_only_the_last():
    # With the running intersection the final lower bound is max(grid bounds before the last
    # step, refined bound at the last step): an earlier refinement is not carried forward.
    rng = np.random.default_rng(35)
    outcomes = np.concatenate([np.ones(60), rng.binomial(1, 0.4, size=300)])  # early high, then lower
    running = RunningConfidenceSequence(alpha=0.05, side="lower", grid_size=100)
    running.extend(outcomes[:60])
    refined_early = running.final[0]
    running.extend(outcomes[60:])
    path = bernoulli_confidence_sequence(outcomes=outcomes, side="lower", grid_size=100, intersect=False)
    grid = (np.arange(100) + 0.5) / 100
    assert refined_early > path.lower[:60].max()  # the refinement at step 60 beat the grid there
    assert np.all(np.isin(path.lower[:-1], np.concatenate(([0.0], grid))))  # earlier steps: grid values
    assert running.final[0] == max(path.lower[:-1].max(), path.lower[-1])
    assert running.final[0] < refined_early


def test_running_lower_bounds_equal_the_lower_bound_functions():
    rng = np.random.default_rng(36)
    pair = RunningPairRecallBound(overlap_size=5_000, other_size=20_000, alpha=0.05, grid_size=200)
    recall = RunningUniformRecallBound(alpha=0.05, grid_size=200)
    f1 = RunningUniformF1Bound(alpha=0.05, grid_size=200)
    overlap, other, found, errors = [], [], [], []
    for _ in range(8):
        new = {name: rng.binomial(1, p, size=int(rng.choice([0, 3, 90, 700])))
               for name, p in (("overlap", 0.9), ("other", 0.1), ("found", 0.8), ("errors", 0.35))}
        pair.extend(overlap_outcomes=new["overlap"], other_outcomes=new["other"])
        recall.extend(new["found"])
        f1.extend(new["errors"])
        overlap += new["overlap"].tolist()
        other += new["other"].tolist()
        found += new["found"].tolist()
        errors += new["errors"].tolist()
        assert pair.lower_bound == pair_recall_lower_bound(overlap_size=5_000, overlap_outcomes=overlap,
                                                           other_size=20_000, other_outcomes=other,
                                                           alpha=0.05, grid_size=200)
        assert recall.lower_bound == uniform_recall_lower_bound(found=found, alpha=0.05, grid_size=200)
        assert f1.lower_bound == uniform_f1_lower_bound(errors=errors, alpha=0.05, grid_size=200)
        assert recall.count == len(found) and f1.count == len(errors)


def test_running_input_checks():
    with pytest.raises(ValueError):
        RunningConfidenceSequence(alpha=1.0)
    with pytest.raises(ValueError):
        RunningConfidenceSequence(side="left")
    with pytest.raises(ValueError):
        RunningConfidenceSequence(grid_size=5)
    running = RunningConfidenceSequence(alpha=0.05)
    with pytest.raises(ValueError):
        running.extend([0, 2])
    assert running.count == 0 and running.final == (0.0, 1.0)
    with pytest.raises(ValueError):
        RunningPairRecallBound(overlap_size=0, other_size=10)


def test_running_log_capital_is_bit_identical_to_the_batch_function_blocks():
    # The bounds above only see the capital through threshold comparisons; here the running
    # log capital itself (block carry + within-block sum) is compared with the batch
    # function's block-wise cumulative sums, and the bets with _plug_in_bets.
    from estimation.stats import confidence_sequence as module

    rng = np.random.default_rng(37)
    running = RunningConfidenceSequence(alpha=0.05, side="two-sided", grid_size=100)
    seen = np.empty(0)
    for size in (5, 1019, 0, 1, 1500, 600, 1):
        batch = rng.binomial(1, 0.6, size=size).astype(float)
        running.extend(batch)
        seen = np.concatenate((seen, batch))
        bets = module._plug_in_bets(seen, alpha=0.05, side="two-sided")
        sums = [np.zeros(100), np.zeros(100)]
        for start in range(0, seen.size, module._CHUNK):
            increments = module._log_capital_increments(seen[start:start + module._CHUNK],
                                                        bets[start:start + module._CHUNK], running._grid)
            sums = [total + np.cumsum(inc, axis=0)[-1] for total, inc in zip(sums, increments)]
        assert np.array_equal(running._bets, bets)
        for j in (0, 1):
            assert np.array_equal(running._block[j] + running._partial[j], sums[j])
