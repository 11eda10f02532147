"""The Impact parsers against their adversarial corpus (tests/robustness/corpus/impact_*.jsonl).

Each line is {"reply": ..., "expect": {...}} (optional "repeat": the reply is that many copies,
"duration": the clip length in seconds, "why": a note). Every reply must be read as expected, on
inputs up to components.common.replies.MAX_REPLY_CHARS and past it. scripts/bench_parsers.py times
every reply of these corpora and the merge below (goal: under 100 ms of CPU a call).
"""
from __future__ import annotations

import json
import math
import operator
import random
from pathlib import Path

import pytest

from components.impact.replies import merge_intervals, parse_intervals
from components.impact.replies import read_region_answer

CORPUS = Path(__file__).resolve().parent / "corpus"


def _load(name: str) -> list[dict]:
    with open(CORPUS / f"{name}.jsonl", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


INTERVALS = _load("impact_intervals")
REGIONS = _load("impact_regions")


def _reply(case: dict) -> str:
    return case["reply"] * int(case.get("repeat", 1))


def test_the_corpus_is_large_enough_and_holds_the_issue_cases():
    assert len(INTERVALS) + len(REGIONS) >= 200
    replies = {c["reply"] for c in INTERVALS} | {c["reply"] for c in REGIONS}
    for case in ["not 400 - 410 but 430 - 440", "I count 3, 4 or 5 impacts",
                 "at 2024-05-01 the event happens in 400 - 420 seconds", "No head injury; left forearm.",
                 "everything except the head", "head and not neck", "but", "had", "should", "fee",
                 "wait", "The ball hit him, but nothing else.", "<think>[[3, 4]]", "<think>head"]:
        assert case in replies, case


@pytest.mark.parametrize("case", INTERVALS, ids=lambda c: repr(c["reply"][:40]))
def test_interval_corpus(case):
    parsed = parse_intervals(_reply(case), duration=case.get("duration"))
    expect = case["expect"]
    assert parsed.status == expect["status"], (parsed.status, parsed.notes)
    assert len(parsed.intervals) == len(expect["intervals"]), parsed.intervals
    for got, want in zip(parsed.intervals, expect["intervals"]):
        assert got == pytest.approx(tuple(want)), parsed.intervals


@pytest.mark.parametrize("case", REGIONS, ids=lambda c: repr(c["reply"][:40]))
def test_region_corpus(case):
    reading = read_region_answer(_reply(case))
    expect = case["expect"]
    assert reading.status == expect["status"], (reading.status, reading.reason, reading.labels)
    assert reading.labels == expect["labels"]


def test_the_merge_is_n_log_n_not_quadratic():
    """5,000 overlapping-free and 5,000 chained intervals merge with n log n comparisons of their
    times, counted (the old pairwise fold compared every pair: 1-3.4 s on 5,000;
    scripts/bench_parsers.py times the merge)."""
    compared = [0]

    class Time(float):
        """A time that counts how often it is compared."""
        __hash__ = float.__hash__

        def _count(op):  # noqa: N805 - builds the methods below
            def compare(self, other):
                compared[0] += 1
                return op(float(self), float(other))
            return compare

        __lt__, __le__, __gt__, __ge__, __eq__ = (_count(operator.lt), _count(operator.le),
                                                  _count(operator.gt), _count(operator.ge),
                                                  _count(operator.eq))

    rng = random.Random(7)
    n = 5000
    starts = [rng.uniform(0, 10_000) for _ in range(n)]
    scattered = [(rank, Time(s), Time(s + rng.uniform(0.01, 3.0)), None) for rank, s in enumerate(starts)]
    chained = [(rank, Time(rank * 0.5), Time(rank * 0.5 + 1.0), None) for rank in range(n)][::-1]
    for entries in (scattered, chained):
        compared[0] = 0
        merged = merge_intervals(entries)
        assert compared[0] <= 4 * n * math.log2(n), compared[0]  # pairwise: ~n * n / 2
        # merged intervals are disjoint, cover every input, and keep the best rank of their members
        spans = sorted((float(s), float(e)) for _, s, e, _ in merged)
        assert all(a[1] < b[0] for a, b in zip(spans, spans[1:]))
        for _, s, e, _ in entries[:200]:
            assert any(ms <= s and e <= me for ms, me in spans)
    assert merge_intervals(chained) == [(0, 0.0, 2500.0 - 0.5 + 1.0, None)]
