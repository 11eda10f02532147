"""Gap and distractor maths against hand-computed numbers (docs/tempcloze-upstream.md formulas)."""
import random

import pytest

from components.cloze import gaps as iv


def test_alignment_intervals_hand_computed():
    # T = 20, gap [6, 10] -> D = 4
    assert iv.early(6, 10, 20) == iv.Interval(4.0, 8.0)   # [max(0, 6-2), 6+2]
    assert iv.late(6, 10, 20) == iv.Interval(8.0, 12.0)   # [10-2, min(20, 10+2)]
    assert iv.wide(6, 10, 20) == iv.Interval(4.0, 12.0)
    assert iv.loop_source(6, 9) == iv.Interval(7.0, 8.0)  # middle third of a 3 s gap


def test_alignment_intervals_clamp_to_the_video():
    # gap [1, 9] in a 10 s video: D = 8, Early would start at -3 and Late end at 13
    assert iv.early(1, 9, 10) == iv.Interval(0.0, 5.0)
    assert iv.late(1, 9, 10) == iv.Interval(5.0, 10.0)
    assert iv.wide(1, 9, 10) == iv.Interval(0.0, 10.0)


@pytest.mark.parametrize("duration", [12.0, 30.0, 90.0])
def test_sampled_gaps_respect_length_and_middle_half(duration):
    rng = random.Random(7)
    for _ in range(300):
        g = iv.sample_gap(duration, rng)
        assert 0.2 * duration - 1e-9 <= g.length <= 0.4 * duration + 1e-9
        assert g.start >= 0.25 * duration - 1e-9 and g.end <= 0.75 * duration + 1e-9


def test_rand_intervals_stay_outside_the_gap_and_within_length_bounds():
    rng = random.Random(3)
    T, gs, ge = 40.0, 12.0, 25.0
    for _ in range(300):
        r = iv.rand_interval(gs, ge, T, rng)
        assert not r.overlaps(iv.Interval(gs, ge))
        assert 0 <= r.start and r.end <= T
        assert 0.2 * T - 1e-9 <= r.length <= 0.4 * T + 1e-9


def test_distractors_are_seeded():
    a = iv.distractor_intervals(6, 10, 20, random.Random("0:x"))
    b = iv.distractor_intervals(6, 10, 20, random.Random("0:x"))
    c = iv.distractor_intervals(6, 10, 20, random.Random("1:x"))
    assert a == b and a != c


@pytest.mark.parametrize("duration,ok", [(11.9, False), (12.0, True), (90.0, True), (90.5, False)])
def test_duration_limits_have_a_clear_message(duration, ok):
    msg = iv.duration_problem(duration)
    assert (msg is None) == ok
    if not ok:
        assert "12-90 s" in msg


def test_rand_length_reaches_up_to_the_regions_length_as_released():
    # T = 40, gap [10, 18]: the region after the gap is 22 s = 0.55 T long. The released generator
    # draws lengths uniform in [0.2 T, region length], so clips longer than 0.4 T (16 s) occur.
    T, gs, ge = 40.0, 10.0, 18.0
    rng = random.Random(11)
    after = [r for r in (iv.rand_interval(gs, ge, T, rng) for _ in range(400)) if r.start >= ge]
    assert after and max(r.length for r in after) > 0.5 * T
    for r in after:
        assert 0.2 * T - 1e-9 <= r.length <= (T - ge) + 1e-9 and r.end <= T + 1e-9


def test_rand_in_a_region_shorter_than_a_fifth_stays_inside_it():
    # explicit gap [1, 38] of a 40 s video: both regions are shorter than 0.2 T = 8 s
    rng = random.Random(2)
    for _ in range(100):
        r = iv.rand_interval(1.0, 38.0, 40.0, rng)
        assert not r.overlaps(iv.Interval(1.0, 38.0)) and r.start >= 0 and r.end <= 40.0
