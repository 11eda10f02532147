"""The one interval parser, on every output form of Table 7 and on the usual drift."""
from __future__ import annotations

import pytest

from components.common.intervals import format_mmss, parse_time
from components.impact.replies import NONE, OK, UNPARSED, parse_intervals

F = 1 / 24
CASES = [
    # open-model style (seconds, nested list)
    ("[[1.040, 1.375], [4.833, 5.125], [7.208, 7.417]]", [(1.04, 1.375), (4.833, 5.125)]),
    ("[[2.5, 2.75]]", [(2.5, 2.75)]),
    ("[2.5, 2.75]", [(2.5, 2.75)]),
    ("[[1, 2]]", [(1.0, 2.0)]),
    ("```json\n[[0.5, 0.625]]\n```", [(0.5, 0.625)]),
    ('{"intervals": [[1.0, 1.5]]}', [(1.0, 1.5)]),
    ('[{"start": 1.0, "end": 1.25}, {"start": 3, "end": 3.5}]', [(1.0, 1.25), (3.0, 3.5)]),
    ('[["1.0s", "1.5s"]]', [(1.0, 1.5)]),
    # Gemini style MM:SS.SSS
    ("[[00:01.040, 00:01.375], [00:04.833, 00:05.125]]", [(1.04, 1.375), (4.833, 5.125)]),
    ('[["00:02.000", "00:02.250"]]', [(2.0, 2.25)]),
    ("[[00:03, 00:04]]", [(3.0, 4.0)]),
    # HH:MM:SS(.fff)
    ("00:00:01.500 - 00:00:02.000", [(1.5, 2.0)]),
    ("[[00:00:03, 00:00:04]]", [(3.0, 4.0)]),
    # GPT style
    ("The event happens in 2.375 - 2.542 seconds; 4.0 - 4.25 seconds.", [(2.375, 2.542), (4.0, 4.25)]),
    ("The event happens in 1.5 - 2 seconds.", [(1.5, 2.0)]),
    ("The event happens in 1.5s - 2.0s; 3s-3.5s", [(1.5, 2.0), (3.0, 3.5)]),
    ("The event happens in 1.5 \u2013 2.0 seconds", [(1.5, 2.0)]),
    # VTimeLLM-like / prose
    ("From 1.5 to 2.0; From 3 to 4", [(1.5, 2.0), (3.0, 4.0)]),
    ("from 0.25 to 0.5", [(0.25, 0.5)]),
    ("The impact occurs between 2.0 and 2.5 seconds.", [(2.0, 2.5)]),
    ("Sure! Here are the intervals: [[1.0, 1.2]]. Hope this helps.", [(1.0, 1.2)]),
    ("1. 2.0-2.5\n2. 4.0-4.5", [(2.0, 2.5), (4.0, 4.5)]),
    # echoed "Frame at" labels
    ("Frame at 2.375s: The event happens in 2.375 - 2.5 seconds", [(2.375, 2.5)]),
    ("Frame at 2.375s - Frame at 2.500s", [(2.375, 2.5)]),
    ("Frame at 2.375s:", [(2.375, 2.375 + F)]),
    ("Frame at 2.375s: impact\nFrame at 2.417s: impact", [(2.375, 2.417 + F)]),  # touching frames merge
    # reversed, out of range, overlaps, single instants
    ("[[3.0, 1.0]]", [(1.0, 3.0)]),
    ("The event happens in 5 - 4 seconds", [(4.0, 5.0)]),
    ("[[5.5, 9.0]]", [(5.5, 6.5)]),
    ("[[-1.0, 0.5]]", [(0.0, 0.5)]),
    ("[[7.0, 8.0], [1.0, 2.0]]", [(1.0, 2.0)]),  # the first lies wholly after the 6.5 s clip
    ("[[1.0, 2.0], [1.5, 3.0], [0.5, 0.8]]", [(1.0, 3.0), (0.5, 0.8)]),
    ("[[4.0, 4.5], [1.0, 2.0], [1.8, 4.2]]", [(1.0, 4.5)]),
    ("[[2.0, 2.0]]", [(2.0, 2.0 + F)]),
]


@pytest.mark.parametrize("text,expected", CASES)
def test_every_form(text, expected):
    parsed = parse_intervals(text, duration=6.5, fps=24)
    assert parsed.status == OK, parsed
    assert len(parsed.intervals) == len(expected)
    for (s, e), (es, ee) in zip(parsed.intervals, expected):
        assert s == pytest.approx(es) and e == pytest.approx(ee)
    assert parsed.raw == text


def test_case_count_is_at_least_thirty():
    assert len(CASES) >= 30


@pytest.mark.parametrize("text", ["None", "none.", "NONE", "[]", "No impact found.",
                                  "There is no such impact in this video.", "N/A"])
def test_none_is_an_empty_prediction(text):
    parsed = parse_intervals(text, duration=6.5)
    assert parsed.status == NONE and parsed.intervals == [] and parsed.raw == text


@pytest.mark.parametrize("text", ["", "asdf qwerty", "The event happens in x1 - y1 seconds; x2 - y2",
                                  "I cannot tell.", "[[start_1, end_1]]"])
def test_malformed_is_unparsed_and_raw_kept(text):
    parsed = parse_intervals(text, duration=6.5)
    assert parsed.status == UNPARSED and parsed.intervals == [] and parsed.raw == text


def test_order_is_the_ranking_and_scores_are_rank_derived():
    parsed = parse_intervals("[[4, 4.5], [1, 1.5], [2, 2.5]]", duration=6.5)
    assert parsed.windows() == [[4.0, 4.5, 1.0], [1.0, 1.5, 2 / 3], [2.0, 2.5, 1 / 3]]


def test_scores_given_by_the_model_are_kept():
    parsed = parse_intervals("[[4, 4.5, 0.2], [1, 1.5, 0.9]]", duration=6.5)
    assert parsed.windows() == [[4.0, 4.5, 0.2], [1.0, 1.5, 0.9]]
    parsed = parse_intervals('[{"start": 1, "end": 2, "score": 0.7}]', duration=6.5)
    assert parsed.windows() == [[1.0, 2.0, 0.7]]


def test_wholly_outside_intervals_are_counted():
    parsed = parse_intervals("[[8, 9], [10, 11]]", duration=6.5)
    assert parsed.status == OK and parsed.intervals == [] and parsed.out_of_range == 2


def test_time_helpers():
    assert parse_time("01:02.5") == pytest.approx(62.5)
    assert parse_time("01:00:02") == pytest.approx(3602.0)
    assert format_mmss(62.5) == "01:02.500"
