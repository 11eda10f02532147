"""The one parser for a model's temporal answer (every Table 7 output form and common drift).

Accepted: JSON lists ``[[1.04, 1.375], ...]`` (numbers or time strings, or objects with start/end),
``[[MM:SS.SSS, MM:SS.SSS], ...]``, ``HH:MM:SS(.fff)``, ``The event happens in x1 - y1 seconds; ...``,
``From s to e``, ``between s and e``, ``s-e``, ``s to e``, ``start: s, end: e``, bracketed
``[s, e]`` / ``(s, e)``, stray text around any of them, and echoed ``Frame at 2.375s:`` labels. Intervals are swapped when
reversed, clamped to the clip, and merged when they overlap (one sort and sweep: O(n log n)); the
answer's order is kept as the ranking (a merge keeps the better rank). Scores are the model's own
when it gives one per interval ([s, e, score]), else rank-derived.
"None" / no interval is an empty prediction; text with no interval at all is *unparsed*.
The raw text is always kept. Reading times and JSON pairs is components.common.intervals'.

Reading what the model meant (docs/decisions.md, "Impact"):
- only the answer is read: closed ``<think>`` blocks are dropped and a reply whose reasoning never
  closed, or one longer than components.common.replies.MAX_REPLY_CHARS, is unparsed
  (components.common.replies.answer_part);
- a pair the reply negates ("not 400 - 410 but 430 - 440", "400 - 410, not 430 - 440", "instead of
  1 - 2") is dropped: a negation word (not, no, never, n't, except, excluding, instead of, rather
  than, other than, apart from, besides) between the previous clause break (``, ; : ! ?``, a
  sentence end, "but", "however") or the previous interval and the pair, at most NEGATION_REACH
  characters back. A reply whose only pairs are negated is unparsed;
- a comma only joins two numbers into an interval inside brackets (``[s, e]``, ``(s, e)``):
  "I count 3, 4 or 5 impacts" holds no interval; "and" only after "between" (or in "starts at s
  and ends at e");
- dates (2024-05-01, 2024/05/01, 01/05/2024, with an optional clock time) are not times, and a
  dash chain (``1-2-3``) is no interval.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from backends.ask import Unparsed
from components.common.intervals import DASHES, TIME, UNIT, json_span, pairs_in_json, parse_time
from components.common.replies import ReplyRefused, answer_part
from components.impact.regions import read_region_answer

OK, NONE, UNPARSED = "ok", "none", "unparsed"

_FRAME_AT = re.compile(rf"\bframe\s+at\s+({TIME}){UNIT}\s*:?", re.IGNORECASE)
_NONE = re.compile(r"^\W*(none|null|nil|n/?a|no)\W*$|\bno\s+(?:such\s+|matching\s+|relevant\s+)?"
                   r"(?:impact|interval|moment|event|segment)s?\b|\bdoes\s+not\s+(?:occur|appear|happen)"
                   r"|\bnot\s+(?:found|present|visible|shown)\b|^\W*\[\s*\]\W*$", re.IGNORECASE)
_TOUCH = 1e-3  # seconds
#: one time as written, with its unit; pairs are read from the gaps between consecutive times
_TOKEN = re.compile(rf"(?<![\d.])({TIME}){UNIT}", re.IGNORECASE)
_DASH_GAP = re.compile(r"\s*(?:-|to|~|until|through|till)\s*", re.IGNORECASE)
_BETWEEN_GAP = re.compile(r"\s*(?:and|-|to)\s*", re.IGNORECASE)
_COMMA_GAP = re.compile(r"\s*,\s*")
_BETWEEN = re.compile(r"\bbetween\s*$", re.IGNORECASE)
_START_BEFORE = re.compile(r"\bstart(?:s|ing)?(?:\s+time)?\s*(?:at|:|=|is)?\s*$", re.IGNORECASE)
_END_GAP = re.compile(r"\s*[,;]?\s*(?:and\s+)?(?:the\s+)?end(?:s|ing)?(?:\s+time)?\s*(?:at|:|=|is)?\s*",
                      re.IGNORECASE)
_CHAIN = re.compile(r"\s*[-/]\s*\d")  # "1-2-3" and "1-2/3" are no interval
_OPENERS = {"[": "]", "(": ")"}
_DATE = re.compile(r"(?<![\d.])(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{4})"
                   r"(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(?![\d.])")
_BREAK = re.compile(r"[,;:!?\n]|\.(?!\d)|\b(?:but|however)\b", re.IGNORECASE)
_NEGATION = re.compile(r"\b(?:not|no|never|except|excluding|besides)\b|n't\b|\binstead\s+of\b"
                       r"|\brather\s+than\b|\bother\s+than\b|\bapart\s+from\b", re.IGNORECASE)
_NEGATION_HINT = re.compile(r"no|n't|never|except|excluding|instead|rather|other|apart|besides", re.IGNORECASE)
_DIGITS = re.compile(r"\d+")
#: the most digit runs a reply may hold (about 500 intervals written with decimals: HAPACT clips
#: hold a few impacts each); more is a runaway reply, unparsed, so every call stays bounded
MAX_NUMBERS = 2000
#: longest reply read as an explicit "None" ("no such impact occurs"); a longer one without any
#: interval is unparsed
NONE_REACH = 4000
#: how far before a pair a negation is looked for (its clause rarely starts further back)
NEGATION_REACH = 80
#: the most "merged into" notes one answer records (a runaway answer must not grow its record)
MAX_NOTES = 50


@dataclass
class ParsedIntervals:
    intervals: list[tuple[float, float]]  # seconds, clamped, merged, in ranked order
    raw: str
    status: str  # "ok" | "none" | "unparsed"
    out_of_range: int = 0  # intervals dropped because they lay wholly outside the clip
    notes: list[str] = field(default_factory=list)
    scores: list[float] | None = None  # the model's own scores, when it gave one per interval

    @property
    def parsed(self) -> bool:
        return self.status != UNPARSED

    def windows(self) -> list[list[float]]:
        """[start, end, score]: the model's scores when it gave them, else rank-derived
        (1, (n-1)/n, ...) so the answer's order is the ranking."""
        n = len(self.intervals)
        if self.scores is not None and len(self.scores) == n:
            return [[s, e, float(sc)] for (s, e), sc in zip(self.intervals, self.scores)]
        return [[s, e, (n - rank) / n] for rank, (s, e) in enumerate(self.intervals)]


def _note(notes: list[str], text: str) -> None:
    if len(notes) < MAX_NOTES:
        notes.append(text)
    elif len(notes) == MAX_NOTES:
        notes.append("(further notes left out)")


def _clip(pairs: list[tuple], duration: float | None, fps: float | None,
          notes: list[str]) -> tuple[list[tuple[int, float, float, Any]], int]:
    """(rank, start, end, score) of every usable pair: swapped, single instants widened to a frame,
    clamped to the clip; those wholly outside it counted."""
    kept, dropped = [], 0
    for rank, (s, e, score) in enumerate(pairs):
        if e < s:
            s, e = e, s
            _note(notes, f"reversed interval {e}-{s} swapped")
        if s == e and fps:
            # a single instant names the frame that starts there ("Frame at 2.375s")
            e = s + 1.0 / fps
        if duration is not None:
            if s >= duration or e <= 0:
                dropped += 1
                _note(notes, f"interval {s}-{e} lies outside the clip (0-{duration:.3f}s), dropped")
                continue
            if s < 0 or e > duration:
                _note(notes, f"interval {s}-{e} clamped to the clip")
            s, e = max(0.0, s), min(duration, e)
        if e <= s or not math.isfinite(e - s):  # inf survives only without a clip duration
            dropped += 1
            continue
        kept.append((rank, float(s), float(e), score))
    return kept, dropped


def merge_intervals(kept: list[tuple[int, float, float, Any]],
                    notes: list[str] | None = None) -> list[tuple[int, float, float, Any]]:
    """(rank, start, end, score) entries -> the same with overlapping ones merged, in rank order.
    Overlapping (or, within the 1 ms that 3-decimal timestamps lose, touching) intervals become
    one, at the rank and with the score of its best-ranked member: one sort and one sweep."""
    notes = [] if notes is None else notes
    groups: list[list] = []  # [best rank, start, end, score of the best rank]
    for rank, s, e, score in sorted(kept, key=lambda k: (k[1], k[0])):
        if groups and s <= groups[-1][2] + _TOUCH:
            group = groups[-1]
            group[2] = max(group[2], e)
            if rank < group[0]:
                group[0], group[3] = rank, score
            _note(notes, f"interval {s}-{e} merged with an overlapping one")
        else:
            groups.append([rank, s, e, score])
    return sorted((tuple(g) for g in groups), key=lambda g: g[0])


def _json_pairs(text: str) -> list[tuple]:
    try:
        return pairs_in_json(json_span(text))
    except RecursionError:  # absurdly deep nesting: not an answer
        return []


def _seconds(token: str) -> float:
    return float(token) if ":" not in token else parse_time(token)


def _is_pair(text: str, first: re.Match, second: re.Match) -> bool:
    """Whether two consecutive times form an interval: "s - e" / "s to e" (also after "from"),
    "between s and e", or "[s, e]" / "(s, e)" with the brackets; never inside a dash chain."""
    gap = text[first.end():second.start()]
    if first.start() > 0 and text[first.start() - 1] in "-:/":
        return False  # the tail of a chain or of a clock time, not a start
    if _CHAIN.match(text, second.end()):
        return False
    if _DASH_GAP.fullmatch(gap):
        return True
    before = text[max(0, first.start() - 24):first.start()]
    if _BETWEEN_GAP.fullmatch(gap) and _BETWEEN.search(before):
        return True
    if _END_GAP.fullmatch(gap) and _START_BEFORE.search(before):  # "start: 1.0, end: 2.0"
        return True
    if _COMMA_GAP.fullmatch(gap):
        opener = before.rstrip()[-1:]
        after = text[second.end():second.end() + 16].lstrip()[:1]
        return opener in _OPENERS and after == _OPENERS[opener]
    return False


def _text_pairs(text: str) -> tuple[list[tuple[float, float, None]], int]:
    """Pairs written in prose, in order, and how many of them the reply negated (a negation word
    in the same clause, at most NEGATION_REACH characters before the pair). One pass over the
    times of the text (linear)."""
    pairs, negated, last = [], 0, 0
    previous = None
    for token in _TOKEN.finditer(text):
        if previous is None or not _is_pair(text, previous, token):
            previous = token
            continue
        first, previous = previous, None
        before = text[max(last, first.start() - NEGATION_REACH):first.start()]
        last = token.end()
        if _NEGATION_HINT.search(before):
            breaks = list(_BREAK.finditer(before))
            clause = before[breaks[-1].end():] if breaks else before
            if _NEGATION.search(clause):
                negated += 1
                continue
        pairs.append((_seconds(first.group(1)), _seconds(token.group(1)), None))
    return pairs, negated


def _finite(pairs: list[tuple]) -> list[tuple]:
    return [p for p in pairs if math.isfinite(p[0]) and math.isfinite(p[1])]


def parse_intervals(text: str | None, *, duration: float | None = None,
                    fps: float | None = 24.0) -> ParsedIntervals:
    """Parse a model's answer into ranked intervals in seconds within [0, duration]."""
    raw = text if text is not None else ""
    try:
        answer = answer_part(raw)
    except ReplyRefused as exc:
        return ParsedIntervals([], raw, UNPARSED, notes=[str(exc)])
    numbers = len(_DIGITS.findall(answer))
    if numbers > MAX_NUMBERS:
        return ParsedIntervals([], raw, UNPARSED, notes=[
            f"the reply holds {numbers:,} numbers; an answer has at most {MAX_NUMBERS:,} "
            "(a runaway reply is not read)"])
    cleaned = answer.translate(DASHES).replace("\u2026", "...")
    cleaned = re.sub(r"```(?:json)?", " ", cleaned)
    pairs, negated = _json_pairs(cleaned), 0
    if not pairs:
        body = _DATE.sub(" ", cleaned)
        # "Frame at 2.375s:" echoes are labels, not intervals: keep only their time
        frame_times: list[float] = []
        if "frame" in body.lower():
            frame_times = [parse_time(m.group(1)) for m in _FRAME_AT.finditer(body)]
            body = _FRAME_AT.sub(lambda m: f" {m.group(1)} ", body)
        pairs, negated = _text_pairs(body)
        if not pairs and frame_times and not negated:
            pairs = [(t, t, None) for t in frame_times]  # the model named single frames
    pairs = _finite(pairs)
    if pairs:
        notes: list[str] = []
        kept, dropped = _clip(pairs, duration, fps, notes)
        merged = merge_intervals(kept, notes)
        intervals = [(s, e) for _, s, e, _ in merged]
        scores = [sc for _, _, _, sc in merged]
        given = scores if scores and all(sc is not None for sc in scores) else None
        if negated:
            notes.insert(0, f"{negated} interval(s) the reply negated were left out")
        return ParsedIntervals(intervals, raw, OK, dropped, notes, given)
    if len(cleaned) <= NONE_REACH and _NONE.search(cleaned.strip()):
        return ParsedIntervals([], raw, NONE)
    why = [f"the reply only negates interval(s) ({negated})"] if negated else []
    return ParsedIntervals([], raw, UNPARSED, notes=why)


# -- frame numbers and region replies ----------------------------------------------------------

def frame_index_answer(text: str, num_frames: int, duration: float) -> ParsedIntervals:
    """A VTimeLLM-style answer ("From 12 to 30": numbers of the frames sent, 0-based, spread
    uniformly over the clip, as VTimeLLM's own "From 00 to 99" over its 100 frames) in seconds:
    frame i of n stands for [i/n, (i+1)/n] x duration, so "From a to b" is [a/n, (b+1)/n] x duration.
    Read by the one interval parser first (negation, reasoning, size rules), clamped to the clip."""
    # fps=1e9: "From 50 to 50" (one frame) stays an interval of (almost) no width, then frame 50
    parsed = parse_intervals(text, duration=None, fps=1e9)
    if parsed.status != OK or num_frames <= 0:
        return parsed
    step = duration / num_frames
    intervals, scores, notes = [], [], list(parsed.notes)
    for (a, b), window in zip(parsed.intervals, parsed.windows()):
        s, e = max(0.0, a * step), min(duration, (b + 1) * step)
        if e <= s:
            notes.append(f"frames {a:g}-{b:g} lie outside the {num_frames} frames sent, dropped")
            continue
        intervals.append((s, e))
        scores.append(window[2])
    notes.append(f"frame numbers read as indices of the {num_frames} frames sent "
                 f"({step:.3f} s each)")
    return ParsedIntervals(intervals, parsed.raw, OK, parsed.out_of_range, notes, scores)


def no_label_reason(unmapped: list[str]) -> str:
    return ("no body-region label found in the reply"
            + (f" (unmapped: {', '.join(unmapped)})" if unmapped else ""))


def read_regions(raw: str) -> tuple[list[str], list[str]]:
    """(labels, unmapped) of a reply; raises Unparsed when it names no label and is not "None"
    (also for an echo of the prompt's label list, a reply that only negates, unfinished reasoning
    or an oversized reply: components.impact.regions.read_region_answer)."""
    reading = read_region_answer(raw)
    if reading.status in (OK, NONE):
        return reading.labels, reading.unmapped
    raise Unparsed(reading.reason + (f" (unmapped: {', '.join(reading.unmapped)})"
                                     if reading.unmapped else ""))
