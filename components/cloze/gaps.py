"""Gap and distractor intervals as pure functions (docs/tempcloze-upstream.md, "How a gap and its
distractors are made"). Times are seconds; T is the source video's duration. The interval type is
the one all tabs share (components.common.intervals.Interval); the cloze rules stay here.

Rand follows the released generator: a length uniform in [0.2 T, max_len] where max_len is the
chosen region's length (not capped at 0.4 T, so a Rand clip can be longer than any gap). Our one
addition: when a region is shorter than 0.2 T (only possible with an explicit gap; the released
rule keeps each region >= 0.25 T) the lower bound drops to the region's length, so the clip still
fits in its region instead of overlapping the gap.
"""
from __future__ import annotations

import random

from components.common.intervals import Interval

MIN_DURATION = 12.0
MAX_DURATION = 90.0
GAP_MIN_FRAC = 0.2
GAP_MAX_FRAC = 0.4
MARGIN_FRAC = 0.25  # the gap lies inside the middle 50%

ALIGNMENT = ("Early", "Late", "Wide")
PROGRESSION = ("Reverse", "Shuffle", "Loop")
SEMANTIC = ("Rand1", "Rand2", "Rand3")


def duration_problem(duration: float) -> str | None:
    """None when the video length is allowed (12-90 s), else a sentence saying why not."""
    if duration < MIN_DURATION:
        return (f"The video is {duration:.1f} s long; TempCloze uses videos of 12-90 s "
                "(too short to leave context on both sides of a 20-40% gap).")
    if duration > MAX_DURATION:
        return (f"The video is {duration:.1f} s long; TempCloze uses videos of 12-90 s. "
                "Trim it to at most 90 s first.")
    return None


def sample_gap(duration: float, rng: random.Random) -> Interval:
    """Gap length uniform in [0.2 T, 0.4 T], placed uniformly inside [0.25 T, 0.75 T]."""
    length = rng.uniform(GAP_MIN_FRAC * duration, GAP_MAX_FRAC * duration)
    lo = MARGIN_FRAC * duration
    hi = (1.0 - MARGIN_FRAC) * duration - length
    start = rng.uniform(lo, hi)
    return Interval(start, start + length)


def early(gs: float, ge: float, duration: float) -> Interval:
    d = ge - gs
    return Interval(max(0.0, gs - d / 2), gs + d / 2)


def late(gs: float, ge: float, duration: float) -> Interval:
    d = ge - gs
    return Interval(ge - d / 2, min(duration, ge + d / 2))


def wide(gs: float, ge: float, duration: float) -> Interval:
    d = ge - gs
    return Interval(max(0.0, gs - d / 2), min(duration, ge + d / 2))


def loop_source(gs: float, ge: float) -> Interval:
    """The middle third of the gap, which Loop repeats 3 times."""
    d = ge - gs
    return Interval(gs + d / 3, gs + 2 * d / 3)


def rand_interval(gs: float, ge: float, duration: float, rng: random.Random) -> Interval:
    """One Semantic distractor, as released: a region ([0, gs] or [ge, T]) at random, a length
    uniform in [0.2 T, max_len] with max_len = the region's length, a start uniform inside it."""
    regions = [Interval(0.0, gs), Interval(ge, duration)]
    region = regions[rng.randrange(2)]
    max_len = region.length
    min_len = min(GAP_MIN_FRAC * duration, max_len)
    length = rng.uniform(min_len, max_len)
    start = rng.uniform(region.start, region.end - length)
    return Interval(start, start + length)


def distractor_intervals(gs: float, ge: float, duration: float, rng: random.Random) -> dict[str, Interval]:
    """Source-time intervals of the cut distractors (Early/Late/Wide, Rand1-3) and of Loop's
    repeated third. Reverse and Shuffle are edits of GT itself and have no interval of their own."""
    out = {"Early": early(gs, ge, duration), "Late": late(gs, ge, duration),
           "Wide": wide(gs, ge, duration), "Loop": loop_source(gs, ge)}
    for name in SEMANTIC:
        out[name] = rand_interval(gs, ge, duration, rng)
    return out
