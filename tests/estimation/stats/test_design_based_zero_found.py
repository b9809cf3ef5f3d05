"""Zero found in N is evidence (issue "The headline holds whatever the pair", part 2; notes §9).

Reuters `sugar`: 3,998 judged documents of N with none majority-relevant were reported as "noise-limited"
(useless) even with perfect workers.  A label-noise floor applies only when judging errors could produce what
was found; with nothing found the sample bounds N's prevalence (an exact one-sided bound that allows for the
crowd missing relevant documents).
"""
import math

import pytest

from estimation.stats.design_based import complement_noise_floor, majority_false_positive_rate


@pytest.mark.parametrize("accuracy", [1.0, 0.9, 0.85])
@pytest.mark.parametrize("judged", [100, 1_000, 3_998, 4_000])
def test_zero_found_is_a_bound_never_noise_limited(judged, accuracy):
    floor = complement_noise_floor(judged=judged, majority_relevant=0, worker_accuracy=accuracy, size=21_115)
    assert not floor.noise_limited
    assert floor.found_none
    # q_upper: exact one-sided Clopper–Pearson upper bound on the observed (majority-relevant) rate, 0 of m.
    q_upper = 1.0 - 0.05 ** (1.0 / judged)
    fn = majority_false_positive_rate(accuracy=accuracy)  # symmetric workers: P(majority says no | relevant)
    assert floor.false_negative_rate == pytest.approx(fn)
    assert floor.prevalence_upper_bound == pytest.approx(q_upper / (1.0 - fn))
    assert floor.relevant_upper_bound == pytest.approx(21_115 * q_upper / (1.0 - fn))


def test_perfect_workers_give_the_plain_three_over_m_bound():
    floor = complement_noise_floor(judged=3_998, majority_relevant=0, worker_accuracy=1.0, size=21_115)
    assert floor.false_negative_rate == 0.0
    assert floor.prevalence_upper_bound == pytest.approx(-math.log(0.05) / 3_998, rel=0.01)  # ≈ 3/m
    assert floor.relevant_upper_bound == pytest.approx(21_115 * 2.996 / 3_998, rel=0.01)  # ≈ 15.8


def test_a_count_within_the_error_rate_is_still_noise_limited():
    # The demo topic (issue 11 review): 13 of 400 at accuracy 0.894 — judging errors alone give ~12.6.
    floor = complement_noise_floor(judged=400, majority_relevant=13, worker_accuracy=0.894)
    assert floor.noise_limited and not floor.found_none
    assert floor.relevant_upper_bound is None  # no size given
