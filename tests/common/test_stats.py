"""Bootstrap intervals, paired differences and the exact McNemar test (components/common/stats.py)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from components.common import stats


def paired_difference(num_a, den_a, num_b, den_b, **kwargs) -> stats.Difference:
    """A - B of a ratio score, both on the same resampled units (unit i of A is unit i of B)."""
    a, b = stats.ratio("ratio", num_a, den_a), stats.ratio("ratio", num_b, den_b)
    if a.units != b.units:
        raise ValueError(f"paired runs need the same units ({a.units} vs {b.units})")
    return stats.differences([a], [b], **kwargs)["ratio"]


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
    diff = paired_difference(right, None, right, None)
    assert diff.diff.value == 0 and diff.diff.low == 0 and diff.diff.high == 0
    assert diff.p_value == 1.0 and not diff.significant


def test_a_clear_gap_is_significant_and_its_interval_excludes_zero():
    rng = np.random.default_rng(3)
    a = (rng.random(500) < 0.8).astype(float)
    b = (rng.random(500) < 0.5).astype(float)
    diff = paired_difference(a, None, b, None)
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
        paired_difference([1, 0], None, [1], None)
    with pytest.raises(ValueError, match="same items"):
        stats.mcnemar_exact([True], [True, False])


def test_a_group_mean_is_the_unweighted_mean_of_group_means():
    # groups 3 (values 1, 0) and 4 (value 1): (0.5 + 1) / 2 = 0.75, not the per-unit mean 2/3;
    # a unit of no group (None) does not count
    score = stats.group_mean("g", [1.0, 0.0, 1.0, 0.3], [3, 3, 4, None], scale=100.0)
    est = stats.estimates([score])["g"]
    assert est.value == pytest.approx(75.0)
    assert 0.0 <= est.low <= est.value <= est.high <= 100.0
    # no group present: undefined, or the reference's 0 when asked for it
    assert stats.group_mean("g", [1.0], [None]).value() is None
    assert stats.group_mean("g", [1.0], [None], empty=0.0).value() == 0.0


def test_a_ratio_with_an_empty_denominator_takes_the_stated_value():
    assert stats.ratio("r", [0.0, 0.0], [0.0, 0.0], empty=0.0).value() == 0.0
    est = stats.estimates([stats.ratio("r", [0.0, 0.0], [0.0, 0.0], empty=0.0)])["r"]
    assert (est.value, est.low, est.high) == (0.0, 0.0, 0.0)
    assert stats.ratio("r", [0.0], [0.0]).value() is None


def test_scores_resampled_together_see_the_same_samples():
    # two copies of one column give identical intervals, and each equals the score alone
    x = [1, 0, 1, 1, 0, 1, 0, 0, 1, 1]
    together = stats.estimates([stats.ratio("a", x), stats.ratio("b", x)])
    alone = stats.estimates([stats.ratio("a", x)])
    assert (together["a"].low, together["a"].high) == (together["b"].low, together["b"].high)
    assert together["a"] == alone["a"]
    with pytest.raises(ValueError, match="same units"):
        stats.estimates([stats.ratio("a", x), stats.ratio("b", x[:5])])


def test_non_finite_unit_values_are_refused():
    with pytest.raises(ValueError, match="finite"):
        stats.ratio("r", [1.0, float("nan")])


def test_paired_difference_coverage_on_simulated_data_is_near_its_level():
    """200 simulated pairs of runs on 300 shared items, A right with probability 0.70 and B 0.62,
    their outcomes correlated through a shared item difficulty: the paired 95 % interval covers
    the true difference (0.08) in 95 % of them, within +-4 points (binomial spread ~1.5)."""
    rng = np.random.default_rng(5)
    covered = 0
    trials = 200
    for i in range(trials):
        easy = rng.random(300) < 0.5
        a = (rng.random(300) < np.where(easy, 0.9, 0.5)).astype(float)
        b = (rng.random(300) < np.where(easy, 0.82, 0.42)).astype(float)
        d = paired_difference(a, None, b, None, resamples=400, seed=i)
        covered += d.diff.low <= 0.08 <= d.diff.high
    assert abs(covered / trials - 0.95) <= 0.04


def test_a_grouped_mean_interval_covers_its_truth_on_simulated_data():
    """The @3+tgt-like statistic (unweighted mean of two group means, groups of unequal size):
    200 simulated sets of 240 queries (40 in group 3, 200 in group 4, true means 0.4 and 0.7, so
    the truth is 0.55): coverage within +-4 points of 95 %."""
    rng = np.random.default_rng(9)
    covered = 0
    trials = 200
    groups = [3] * 40 + [4] * 200
    for i in range(trials):
        values = np.concatenate([rng.random(40) < 0.4, rng.random(200) < 0.7]).astype(float)
        est = stats.estimates([stats.group_mean("g", values, groups)], resamples=400, seed=i)["g"]
        covered += est.low <= 0.55 <= est.high
    assert abs(covered / trials - 0.95) <= 0.04


def test_an_unpaired_difference_resamples_each_run_on_its_own():
    a = stats.ratio("acc", [1.0] * 40 + [0.0] * 10)
    b = stats.ratio("acc", [1.0] * 20 + [0.0] * 20)
    d = stats.unpaired_difference(a, b)
    assert d.diff.value == pytest.approx(0.8 - 0.5) and not d.paired
    assert d.diff.low > 0 and d.significant
    same = stats.unpaired_difference(a, a)
    assert same.diff.value == 0 and same.diff.low < 0 < same.diff.high and not same.significant
