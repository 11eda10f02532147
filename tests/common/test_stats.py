"""Bootstrap intervals, paired differences and the exact McNemar test (components/common/stats.py)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from components.common import stats


def test_an_interval_is_the_same_for_the_same_data_and_seed_and_holds_the_value():
    correct = [1, 0, 1, 1, 0, 1, 1, 1, 0, 1] * 10
    first = stats.ratio_interval(correct)
    again = stats.ratio_interval(correct)
    assert first == again
    assert first.value == pytest.approx(0.7)
    assert first.low < 0.7 < first.high
    assert (first.resamples, first.seed, first.units) == (stats.RESAMPLES, stats.SEED, 100)
    other = stats.ratio_interval(correct, seed=1)
    assert other.value == first.value and (other.low, other.high) != (first.low, first.high)


def test_a_ratio_resamples_units_not_items():
    # two units: one holds 3 of 3 right, the other 0 of 1; the ratio is 3/4, not the mean of 1 and 0
    est = stats.ratio_interval([3, 0], [3, 1])
    assert est.value == pytest.approx(0.75)
    assert 0.0 <= est.low <= est.high <= 1.0


def test_no_denominator_gives_no_value():
    est = stats.ratio_interval([0, 0], [0, 0])
    assert est.value is None and est.low is None and est.text() == "n/a"


def test_the_normal_approximation_agrees_on_a_large_sample():
    rng = np.random.default_rng(7)
    right = rng.random(2000) < 0.6
    est = stats.ratio_interval(right.astype(float))
    p = right.mean()
    half = 1.96 * math.sqrt(p * (1 - p) / len(right))
    assert est.low == pytest.approx(p - half, abs=0.006)
    assert est.high == pytest.approx(p + half, abs=0.006)


def test_interval_coverage_on_simulated_data_is_near_its_level():
    """200 simulated benchmarks of 300 items at a true accuracy of 0.55: the 95 % interval covers
    the truth in 95 % of them, within +-4 points (the binomial spread of 200 trials is ~1.5)."""
    rng = np.random.default_rng(11)
    covered = 0
    trials = 200
    for i in range(trials):
        sample = (rng.random(300) < 0.55).astype(float)
        est = stats.ratio_interval(sample, resamples=400, seed=i)
        covered += est.low <= 0.55 <= est.high
    assert abs(covered / trials - 0.95) <= 0.04


def test_identical_runs_differ_by_zero_with_p_one():
    right = [1, 0, 1, 1, 0, 0, 1]
    diff = stats.paired_difference(right, None, right, None)
    assert diff.diff.value == 0 and diff.diff.low == 0 and diff.diff.high == 0
    assert diff.p_value == 1.0 and not diff.significant


def test_a_clear_gap_is_significant_and_its_interval_excludes_zero():
    rng = np.random.default_rng(3)
    a = (rng.random(500) < 0.8).astype(float)
    b = (rng.random(500) < 0.5).astype(float)
    diff = stats.paired_difference(a, None, b, None)
    assert diff.diff.value == pytest.approx(a.mean() - b.mean())
    assert diff.diff.low > 0 and diff.p_value < 0.001 and diff.significant


def test_mcnemar_matches_a_hand_computed_case():
    # A right and B wrong on 1 item, B right and A wrong on 6: p = 2 * P[X <= 1], X ~ Bin(7, 1/2)
    # = 2 * (1 + 7) / 128 = 0.125
    a = [1, 0, 0, 0, 0, 0, 0, 1, 1, 0]
    b = [0, 1, 1, 1, 1, 1, 1, 1, 1, 0]
    result = stats.mcnemar_exact(a, b)
    assert (result["a_only_right"], result["b_only_right"]) == (1, 6)
    assert result["p_value"] == pytest.approx(0.125)
    assert stats.mcnemar_exact(a, a)["p_value"] == 1.0


def test_unpaired_inputs_are_refused():
    with pytest.raises(ValueError, match="same units"):
        stats.paired_difference([1, 0], None, [1], None)
    with pytest.raises(ValueError, match="same items"):
        stats.mcnemar_exact([True], [True, False])
