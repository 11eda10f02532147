"""How window search reads numbers, times and negation in a model's reply (pure functions).

Every window-search parser (Decompose, Inspect, Select, the localizer, the character memory's
frame picks, chunk captions) starts with `answer_text`: the shared rule of
components.common.replies (reasoning is never the answer; a reply over 64 kB is refused), with
the refusal raised as the caller's own "unparsed" error.

The rules below are the app's own (the paper prints output formats, not a reader); they are
listed in docs/decisions.md, "Window search":
- a number is finite: NaN, Infinity and 1e309 (which overflows to infinity) are no numbers; a
  number never starts or ends inside a word or another number ("1e309" is not 309, "v2" not 2);
- dates (2024-05-01, 2024/05/01, 01/05/2024) are blanked before times are looked for;
- a pair written in prose is "s - e", "s to e", "from s until e", "between s and e" (a comma or
  a bare "and" joins no pair: "3, 4 or 5" is a list, not an interval); a pair that is part of a
  longer run of numbers ("3 - 4 - 5", "3 - 4 or 5") is no pair;
- negation: a mention preceded in its clause by "not", "no", "never", "isn't", "rather than",
  "instead of", "except" is discarded, so "not 400 - 410 but 430 - 440" reads 430 - 440; a
  clause ends at . , : ; ! ? a new line, or a contrast word (but, rather, instead, however, actually).
Every regular expression here is linear (no nested quantifiers over the same characters), and
callers only see replies of at most MAX_REPLY_CHARS characters.
"""
from __future__ import annotations

import math
import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterator

from components.common.intervals import DASHES, TIME, parse_time
from components.common.replies import MAX_REPLY_CHARS, ReplyRefused, answer_part

__all__ = ["MAX_REPLY_CHARS", "answer_text", "finite_number", "number_string", "blank_dates",
           "negated", "NegationIndex", "prose_pairs", "NEGATION", "CONTRAST"]

NEGATION = re.compile(r"\b(?:not|no|never|isn't|isnt|aren't|wasn't|nor|rather than|instead of|"
                      r"except|other than)\b", re.IGNORECASE)
CONTRAST = re.compile(r"[.,:;!?\n]|\b(?:but|rather|instead|however|actually)\b", re.IGNORECASE)
#: how far back (characters) a negation can reach within its clause
NEGATION_REACH = 60

_DATE = re.compile(r"(?<![\w.:])(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}/\d{1,2}/\d{2,4})(?![\w:])")
_UNIT = r"(?:\s*(?:s|sec|secs|second|seconds)\b)?"
#: one time, never inside a word or a number (so 1e309 is no time and 2024-05 no pair)
_ONE = rf"(?<![\w.:])({TIME}){_UNIT}(?![\w:]|\.\d|[eE][+-]?\d)"
_SEP = r"\s*(?:-|to|until|till|through|~)\s*"
_PAIR = re.compile(rf"\bbetween\s+{_ONE}\s+and\s+{_ONE}|(?:\bfrom\s+)?{_ONE}{_SEP}{_ONE}",
                   re.IGNORECASE)
#: a pair directly followed / preceded by one more number is part of a list or a run
_MORE_AFTER = re.compile(r"\s*(?:-|,|~|to|or|and)\s*\d", re.IGNORECASE)
_MORE_BEFORE = re.compile(r"\d\s*(?:-|,|~|to|or|and)\s*$", re.IGNORECASE)
_NUMBER_STRING = re.compile(
    r"\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*(?:s|sec|secs|second|seconds)?\s*",
    re.IGNORECASE)


def answer_text(text: str | None, error: type[ValueError]) -> str:
    """The answer part of a reply (components.common.replies.answer_part); a refused reply (too
    long, or stopping inside unfinished reasoning) raises `error` with the reason."""
    try:
        return answer_part(text)
    except ReplyRefused as exc:
        raise error(str(exc)) from None


def finite_number(value: object) -> float | None:
    """A JSON number (not a boolean) that is finite, else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        f = float(value)
    except OverflowError:  # an int too large for a float
        return None
    return f if math.isfinite(f) else None


def number_string(value: object) -> float | None:
    """A JSON number, or a string holding exactly one number (an optional "s"/"seconds" unit);
    finite only ("1e999" and "NaN" are None)."""
    number = finite_number(value)
    if number is not None or not isinstance(value, str) or len(value) > 64:
        return number
    m = _NUMBER_STRING.fullmatch(value)
    if not m:
        return None
    f = float(m.group(1))
    return f if math.isfinite(f) else None


def blank_dates(text: str) -> str:
    """Dates replaced by spaces of the same length (positions are kept)."""
    return _DATE.sub(lambda m: " " * len(m.group(0)), text)


def negated(text: str, start: int) -> bool:
    """Whether a negation word stands before `start` in the same clause (within NEGATION_REACH
    characters)."""
    head = text[max(0, start - NEGATION_REACH):start]
    cuts = [m.end() for m in CONTRAST.finditer(head)]
    clause = head[cuts[-1]:] if cuts else head
    return NEGATION.search(clause) is not None


class NegationIndex:
    """`negated(text, start)` for many positions of one text: the negation and clause-break words
    are found in one scan each, and every question is then two binary searches (a reply of 64 kB
    can hold 16,000 candidate mentions; asking each with its own regular expressions took
    hundreds of milliseconds). Words are matched in the whole text, so a word cut by the
    60-character reach is not mistaken for a shorter one."""

    def __init__(self, text: str):
        self._text = text
        self._scanned = False  # scanned at the first question (many replies never ask one)

    def _scan(self) -> None:
        cuts = [(m.start(), m.end()) for m in CONTRAST.finditer(self._text)]
        negations = [(m.start(), m.end()) for m in NEGATION.finditer(self._text)]
        self._cut_starts = [a for a, _ in cuts]
        self._cut_ends = [b for _, b in cuts]
        self._negation_starts = [a for a, _ in negations]
        self._negation_ends = [b for _, b in negations]
        self._scanned = True

    def negated(self, start: int) -> bool:
        """Whether a negation word stands before `start` in the same clause (within
        NEGATION_REACH characters)."""
        if not self._scanned:
            self._scan()
        reach = max(0, start - NEGATION_REACH)
        clause = reach
        last_cut = bisect_right(self._cut_ends, start) - 1
        if last_cut >= 0 and self._cut_starts[last_cut] >= reach:
            clause = self._cut_ends[last_cut]
        first = bisect_left(self._negation_starts, clause)
        return first < len(self._negation_starts) and self._negation_ends[first] <= start


def prose_pairs(text: str) -> Iterator[tuple[int, float, float]]:
    """(position, start, end) of every time pair written in prose that is neither negated nor
    part of a list or a run of numbers, in order as written (ends as written, not sorted). Linear
    in the text: one scan for pairs, one for negations, a constant-size look either side of each
    pair."""
    body = blank_dates(text.translate(DASHES))
    negations = NegationIndex(body)
    for m in _PAIR.finditer(body):
        if _MORE_AFTER.match(body, m.end()) \
                or _MORE_BEFORE.search(body, max(0, m.start() - 12), m.start()) \
                or negations.negated(m.start()):
            continue
        first, second = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        s, e = parse_time(first), parse_time(second)
        if math.isfinite(s) and math.isfinite(e):
            yield m.start(), s, e
