"""Every reply parser on the worst replies found for it, up to the 64 kB cap (issue 19): what
each reads, and, instead of a timing, how much work it does. A reply of 16,000 candidate mentions
(`'1-' * 32500` in the localizer took 240 ms) is read with one scan for negations, not one per
mention; scripts/bench_parsers.py times every parser on these replies against a plain regular
expression scan of the same text."""
from __future__ import annotations

import pytest

from backends.ask import Unparsed
from components.cloze.solvers import read_reply
from components.common.replies import MAX_REPLY_CHARS
from components.impact.replies import UNPARSED, parse_intervals
from components.impact.replies import read_region_answer
from components.window_search import reading
from components.window_search.replies import parse_interval
from components.window_search.replies import parse_inspect, parse_select


def _fill(unit: str, size: int = MAX_REPLY_CHARS) -> str:
    return (unit * (size // len(unit) + 1))[:size]


@pytest.fixture
def scans(monkeypatch):
    """How many times a negation index scans its text (the real scan, counted)."""
    counted: list[int] = []
    real = reading.NegationIndex._scan

    def scan(self):
        counted.append(len(self._text))
        return real(self)

    monkeypatch.setattr(reading.NegationIndex, "_scan", scan)
    return counted


def test_the_issue_reply_is_a_run_of_numbers_and_needs_no_negation_scan(scans):
    reply = "1-" * 32500
    assert len(reply) < MAX_REPLY_CHARS
    with pytest.raises(Unparsed, match="no start and end time"):
        parse_interval(reply)
    assert scans == []  # every pair is part of a run: rejected before negation is looked at


@pytest.mark.parametrize("unit", ["not 1-2 x ", "no 1 to 2 x ", "never 1 - 2 seconds, x "])
def test_thousands_of_negated_pairs_are_one_scan(scans, unit):
    reply = _fill(unit)
    with pytest.raises(Unparsed):
        parse_interval(reply)
    assert len(scans) <= 2 and all(n <= MAX_REPLY_CHARS for n in scans)


def test_a_good_pair_after_thousands_of_negated_ones_is_found(scans):
    reply = _fill("not 1-2 x ", MAX_REPLY_CHARS - 40) + ". The event is 30 - 40 s"
    assert parse_interval(reply) == (30.0, 40.0)
    assert len(scans) == 1


def test_select_with_thousands_of_negated_mentions_is_one_scan(scans):
    reply = _fill("not selected_index 1, ", MAX_REPLY_CHARS - 30) + " rather 2"
    assert parse_select(reply, 3).index == 2
    assert len(scans) == 1


def test_the_negation_index_answers_as_the_single_question_does():
    """The index gives `negated(text, start)`'s answer wherever a mention can start (a number
    or a word after a non-word character) in replies that mix negations, clause breaks and times
    (inside a word the two differ: the index reads whole words, never the tail of one)."""
    import re

    texts = ["not 400 - 410 but 430 - 440", "I said no. 3 - 4 then", "never, 5 to 6",
             "it is not the case that the clip from 12 to 14 shows it; 20 - 30 does",
             "rather than 1-2, 3-4", "except maybe 7 - 8 instead 9 - 10: ok 11 - 12",
             "Not selected_index 1, rather 2", "no-one said 5 - 6 isn't 7 - 8"]
    checked = 0
    for text in texts:
        index = reading.NegationIndex(text)
        for m in re.finditer(r"\b\w", text):
            assert index.negated(m.start()) == reading.negated(text, m.start()), (text, m.start())
            checked += 1
    assert checked > 60


@pytest.mark.parametrize("unit", ["1-", "<", "{", "[1, 2], ", "not ", "1:", "between 1 and "])
def test_every_other_parser_reads_the_worst_replies_without_guessing(unit):
    reply = _fill(unit)
    assert parse_intervals(reply, duration=60.0, fps=24).status in (UNPARSED, "ok", "none")
    assert read_region_answer(reply).status == "unparsed"
    assert read_reply(reply).letter is None
    with pytest.raises(Unparsed):
        parse_inspect(reply)


def test_over_the_cap_nothing_is_scanned(scans):
    reply = "1 - 2 " * (MAX_REPLY_CHARS // 6 + 10)
    with pytest.raises(Unparsed, match="longer than"):
        parse_interval(reply)
    assert read_region_answer(reply).status == "unparsed"
    assert parse_intervals(reply, duration=60.0).status == UNPARSED
    assert scans == []
