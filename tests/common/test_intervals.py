"""components.common.intervals: one interval type, IoU, time parsing and finding intervals."""
from __future__ import annotations

import math

import pytest

from components.common.intervals import (DASHES, Interval, format_mmss, iou, json_span, overlap,
                                         pairs_in_json, pairs_in_text, parse_time, time_value,
                                         valid_interval)


def test_iou_of_overlapping_nested_disjoint_and_identical_intervals():
    assert iou((0, 10), (5, 15)) == pytest.approx(5 / 15)
    assert iou([2, 4], [0, 10]) == pytest.approx(0.2)
    assert iou((0, 1), (2, 3)) == 0.0
    assert iou((0, 1), (1, 2)) == 0.0  # touching ends
    assert iou((3.5, 7.25), (3.5, 7.25)) == 1.0
    assert iou((0, 10), (5, 15)) == iou((5, 15), (0, 10))


@pytest.mark.parametrize("bad", [None, (5, 1), (1, 1), (0, math.nan), (0, math.inf), (True, 3),
                                 (1,), (1, 2, 3), "0-1"])
def test_an_invalid_interval_scores_zero(bad):
    assert iou(bad, (0, 10)) == 0.0 and iou((0, 10), bad) == 0.0
    assert overlap(bad, (0, 10)) == 0.0


def test_overlap_is_the_length_of_the_intersection():
    assert overlap((0, 10), (5, 15)) == 5.0
    assert overlap((0, 1), (3, 4)) == 0.0


@pytest.mark.parametrize("value", [[math.nan, 1], [0, math.nan], [0, math.inf], [-math.inf, 0],
                                   [True, 2], [0, False], [2, 1], [1, 1], [1], [1, 2, 3], None,
                                   "1-2", {"start": 1, "end": 2}, ["a", 2], [None, 2]])
def test_valid_interval_rejects(value):
    assert valid_interval(value) is None


def test_valid_interval_accepts_finite_increasing_pairs():
    assert valid_interval([1, 2]) == (1.0, 2.0)
    assert valid_interval((0.5, 83.25)) == (0.5, 83.25)
    assert valid_interval([-1, 0]) == (-1.0, 0.0)


def test_interval_type():
    a, b = Interval(1.0, 4.0), Interval(4.0, 6.0)
    assert a.length == 3.0 and not a.overlaps(b) and a.overlaps(Interval(3.9, 5))
    assert a.iou(Interval(2.0, 5.0)) == pytest.approx(0.5)
    assert Interval(1.23456, 2.0).as_list(2) == [1.23, 2.0] and a.as_list() == [1.0, 4.0]


@pytest.mark.parametrize("token,seconds", [
    ("83.5", 83.5), ("83", 83.0), (".5", 0.5), ("83.5 s", 83.5), ("83.5s", 83.5),
    ("83.5 seconds", 83.5), ("01:23.5", 83.5), ("1:23", 83.0), ("00:01:23.5", 83.5),
    ("1:02:03", 3723.0), ("  12.0 sec ", 12.0)])
def test_parse_time_forms(token, seconds):
    assert parse_time(token) == pytest.approx(seconds)


def test_time_value_reads_numbers_and_time_strings_only():
    assert time_value(3) == 3.0 and time_value(2.5) == 2.5
    assert time_value("01:02") == 62.0 and time_value("83.5 s") == 83.5
    for value in (True, False, math.nan, math.inf, 1e309, "abc", "1:2:3:4", None, [1]):
        assert time_value(value) is None


def test_pairs_in_text_finds_every_form_in_order():
    text = ("from 1.5 to 3 s, then between 00:10 and 00:20; also 12 - 15, 30-40 "
            "and 1:00:00 until 1:00:05.5")
    assert list(pairs_in_text(text)) == [(1.5, 3.0), (10.0, 20.0), (12.0, 15.0), (30.0, 40.0),
                                         (3600.0, 3605.5)]
    assert list(pairs_in_text("The event is at 12.5s-14s.")) == [(12.5, 14.0)]
    assert list(pairs_in_text("Frames 4, 7")) == [(4.0, 7.0)]
    assert list(pairs_in_text("no times here, id 1234")) == []


def test_pairs_in_text_reads_typographic_dashes_after_translation():
    assert list(pairs_in_text("10\u201320")) == []
    assert list(pairs_in_text("10\u201320 and 30\u221240".translate(DASHES))) == [(10.0, 20.0),
                                                                                (30.0, 40.0)]


def test_pairs_in_json_lists_objects_nesting_and_scores():
    assert pairs_in_json([[1, 2], [3, 4, 0.9]]) == [(1.0, 2.0, None), (3.0, 4.0, 0.9)]
    assert pairs_in_json({"results": [{"Start": "00:01", "END": "00:02", "score": 0.5}]}) == [
        (1.0, 2.0, 0.5)]
    nested = {"a": {"b": [[1, 2]], "c": [5, 6, "x"]}, "d": [True, 2],
              "e": {"start_time": 7, "end_time": 8, "confidence": 0.3}}
    assert pairs_in_json(nested) == [(1.0, 2.0, None), (5.0, 6.0, None), (7.0, 8.0, 0.3)]
    assert pairs_in_json([[[1, 2], [3, 4]]]) == [(1.0, 2.0, None), (3.0, 4.0, None)]
    assert pairs_in_json({"start": "soon", "end": 2}) == []
    assert pairs_in_json([1, 2, [3]]) == []
    assert pairs_in_json("1 - 2") == [] and pairs_in_json(None) == []


def test_json_span_finds_the_outermost_json_value():
    assert json_span('Answer: {"a": [1, 2]} done') == {"a": [1, 2]}
    assert json_span('```json\n[[1, 2], [3, 4]]\n```') == [[1, 2], [3, 4]]
    assert json_span('[1, 2] and then {"x": 1}') is None  # not one value
    for text in ("no json", "[1, 2", "x ] y [", "{'single': 'quotes'}", "",
                 "[" * 100_000 + "]" * 100_000):  # too deep: None, never a RecursionError
        assert json_span(text) is None


def test_format_mmss():
    assert format_mmss(83.5) == "01:23.500"
    assert format_mmss(0) == "00:00.000" and format_mmss(-3) == "00:00.000"
    assert format_mmss(3600) == "60:00.000"
