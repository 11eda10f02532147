"""Every reply parser of the window search tab: the verifier's Decompose / Inspect / Select replies
(Appendix G output formats), the localizer's interval and the memory builder's frame pick.

Pure functions. A reply that cannot be read raises `ReplyParseError` (the caller retries within a
bound and then keeps the raw text as unparsed); nothing is ever guessed.

Leniency, all deterministic:
- JSON is found inside ``` fences, after leading prose, or inside <think> blocks' aftermath;
  trailing commas, typographic quotes and Python literals (True/None, single quotes) are repaired.
- statuses ("holds") are read case-insensitively; JSON booleans map to "true"/"false";
  "cut off" / "cut-off" read as "cutoff".
- decisions are EMIT / EXPAND / REJECT case-insensitively. "ACCEPT" is read as EMIT because the
  paper states that "EMIT corresponds to acceptance" (Appendix G) and the Section 4 text names the
  decision Accept; no other synonym is accepted.
- confidence: a number in [0, 1] is a probability; a whole number in (1, 100] or a string with
  "%" is a percentage (80 -> 0.8); any other value in (1, 100] (1.5) is no confidence (unparsed,
  never 0.015); below 0 or above 100 is clamped to 0 / 1; NaN, Infinity, 1e309 are unparsed.
- expand_seconds: a finite number > 0 (a JSON number or a string such as "20" / "20 s");
  NaN, Infinity, 1e309, 0 and negatives are unparsed. The agent applies min(max(x, 1), Delta_max)
  (agent.expand_window): 1e20 reveals Delta_max seconds, 1e-9 one second (one frame at 1 fps).
- Select read from prose (no JSON object): "selected_index: 2"; a negated mention ("Not
  selected_index 1, rather 2") is discarded and its correction read; two different readings
  are unparsed.
- every reply goes through components.common.replies.answer_part first (reasoning is not the
  answer, an unclosed <think> or a reply over 64 kB is unparsed); at most MAX_CANDIDATES JSON
  objects of a reply are tried, so a reply of thousands of "{...}" stays fast.
"""
from __future__ import annotations

import ast
import json
import math
import re
from typing import Any

from backends.ask import Unparsed
from components.common.intervals import DASHES, END_KEYS, START_KEYS, TIME, json_span, parse_time
from components.window_search.reading import NegationIndex, answer_text, blank_dates, finite_number, number_string, \
    prose_pairs
from components.window_search.types import DecomposeReply, InspectReply, SelectReply, Statement, \
    StatementCheck


class ReplyParseError(Unparsed):
    """The model's reply could not be read as the expected JSON object."""


# -- JSON extraction ----------------------------------------------------------------------------
#: JSON objects of one reply tried at most (the first ones, fenced ones first)
MAX_CANDIDATES = 8
#: Python-literal repair is tried on objects up to this size only (ast parsing is the slow step)
MAX_LITERAL_CHARS = 16_384
_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2033": '"',
                         "\u2018": "'", "\u2019": "'"})


def _balanced_objects(text: str) -> list[str]:
    """Every top-level {...} span, string-aware (braces inside JSON strings are ignored)."""
    spans, depth, start, in_str, esc = [], 0, -1, False, False
    for i, ch in enumerate(text):
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
            continue
        if ch == '"' and depth > 0:
            in_str = True
        elif ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                spans.append(text[start:i + 1])
    if depth > 0 and start >= 0:  # unterminated object (cut off by max_tokens): try closing it
        spans.append(text[start:])
    return spans


def _loads(candidate: str) -> dict | None:
    attempts = [candidate, candidate.translate(_QUOTES)]
    attempts += [_TRAILING_COMMA.sub(r"\1", a) for a in attempts]
    for a in attempts:
        try:
            value = json.loads(a)
        except (json.JSONDecodeError, ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    # Python-literal style ({'a': True, 'b': None}); `null`/`true`/`false` mapped first.
    if len(candidate) > MAX_LITERAL_CHARS:
        return None
    py = re.sub(r"\bnull\b", "None", re.sub(r"\btrue\b", "True", re.sub(r"\bfalse\b", "False",
                                                                      attempts[-1])))
    try:
        value = ast.literal_eval(py)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def extract_json_object(text: str) -> dict:
    """The first JSON object in a model reply, or ReplyParseError."""
    if text is not None and not isinstance(text, str):
        raise ReplyParseError("the reply is not text")
    body = answer_text(text, ReplyParseError)
    if not body:
        raise ReplyParseError("empty reply")
    candidates: list[str] = []
    for fenced in _FENCE.findall(body):
        candidates += _balanced_objects(fenced)
    candidates += _balanced_objects(body)
    for cand in candidates[:MAX_CANDIDATES]:
        value = _loads(cand)
        if value is not None:
            return value
        if cand.count("{") > cand.count("}"):  # truncated: close the open braces/brackets
            closed = cand + "]" * max(0, cand.count("[") - cand.count("]")) \
                + "}" * (cand.count("{") - cand.count("}"))
            value = _loads(closed)
            if value is not None:
                return value
    raise ReplyParseError("no JSON object found in the reply" if not candidates
                          else "the reply's JSON object could not be read")


# -- Decompose ----------------------------------------------------------------------------------
def parse_decompose(text: str) -> DecomposeReply:
    obj = extract_json_object(text)
    raw_statements = obj.get("statements")
    if not isinstance(raw_statements, list) or not raw_statements:
        raise ReplyParseError('missing or empty "statements" list')
    statements: list[Statement] = []
    for i, item in enumerate(raw_statements, 1):
        if isinstance(item, str):
            sid, stext = f"s{i}", item
        elif isinstance(item, dict):
            sid = str(item.get("id") or f"s{i}").strip()
            stext = item.get("text") or item.get("statement") or ""
        else:
            raise ReplyParseError(f"statement {i} is neither an object nor a string")
        stext = str(stext).strip()
        if not stext or stext in ("…", "..."):
            raise ReplyParseError(f"statement {i} has no text")
        statements.append(Statement(sid=sid, text=stext))
    if len({s.sid for s in statements}) != len(statements):  # duplicate ids: renumber in order
        statements = [Statement(sid=f"s{i}", text=s.text) for i, s in enumerate(statements, 1)]
    cast = obj.get("cast") or []
    if not isinstance(cast, list):
        raise ReplyParseError('"cast" is not a list')
    return DecomposeReply(statements, [c for c in cast if isinstance(c, dict)])


# -- Inspect ------------------------------------------------------------------------------------
_STATUS = {"true": "true", "false": "false", "cutoff": "cutoff", "cut off": "cutoff",
           "cut-off": "cutoff", "cut_off": "cutoff"}
_DECISION = {"EMIT": "EMIT", "EXPAND": "EXPAND", "REJECT": "REJECT", "ACCEPT": "EMIT"}
_SIDE = {"left": "left", "right": "right", "earlier": "left", "later": "right"}


def normalise_status(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    key = str(value).strip().strip(".").lower()
    if key not in _STATUS:
        raise ReplyParseError(f'unknown status {value!r} (expected "true", "false" or "cutoff")')
    return _STATUS[key]


def normalise_decision(value) -> str:
    key = str(value or "").strip().strip(".\"'").upper()
    if key not in _DECISION:
        raise ReplyParseError(f'unknown decision {value!r} (expected "EMIT", "EXPAND" or "REJECT")')
    return _DECISION[key]


def parse_confidence(value) -> float | None:
    """The module docstring's confidence rule; None when no confidence was given."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise ReplyParseError(f"confidence {value!r} is not a number")
    percent = isinstance(value, str) and value.strip().endswith("%")
    c = number_string(value.strip().rstrip("%") if isinstance(value, str) else value)
    if c is None:
        raise ReplyParseError(f"confidence {value!r} is not a finite number")
    if percent and 0.0 <= c <= 100.0:
        return c / 100.0
    if 1.0 < c <= 100.0:
        if c != int(c):
            raise ReplyParseError(f"confidence {value!r} is neither a probability in [0, 1] nor a "
                                  "whole percentage")
        return c / 100.0
    return min(1.0, max(0.0, c))


def _seconds(value) -> float | None:
    if value is None:
        return None
    s = number_string(value)
    if s is None:
        raise ReplyParseError(f"expand_seconds {value!r} is not a finite number")
    if s <= 0:
        raise ReplyParseError(f"expand_seconds {value!r} must be positive")
    return s


def parse_inspect(text: str, statement_ids: list[str] | None = None) -> InspectReply:
    """Read an Inspect reply. `statement_ids` (the checklist) keeps only known ids, in reply order."""
    obj = extract_json_object(text)
    decision = normalise_decision(obj.get("decision"))
    checks: list[StatementCheck] = []
    notes: list[str] = []
    raw_checks = obj.get("statements") or []
    if not isinstance(raw_checks, list):
        raise ReplyParseError('"statements" is not a list')
    known = set(statement_ids or [])
    for i, item in enumerate(raw_checks, 1):
        if not isinstance(item, dict):
            raise ReplyParseError(f"statement verdict {i} is not an object")
        sid = str(item.get("id") or "").strip()
        if known and sid not in known:
            notes.append(f"ignored verdict for unknown statement id {sid!r}")
            continue
        checks.append(StatementCheck(sid=sid, status=normalise_status(item.get("holds")),
                                     note=str(item.get("note") or "").strip()))
    if known:
        missing = [s for s in statement_ids if s not in {c.sid for c in checks}]
        if missing:
            notes.append(f"no verdict for {', '.join(missing)}")
    direction = seconds = None
    if decision == "EXPAND":
        side = str(obj.get("expand_direction") or "").strip().lower()
        if side not in _SIDE:
            raise ReplyParseError(f'EXPAND needs "expand_direction" left or right, got '
                                  f'{obj.get("expand_direction")!r}')
        direction, seconds = _SIDE[side], _seconds(obj.get("expand_seconds"))
    return InspectReply(checks=checks, decision=decision,
                        confidence=parse_confidence(obj.get("confidence")),
                        cooccurrence=str(obj.get("cooccurrence") or "").strip(),
                        expand_direction=direction, expand_seconds=seconds, notes=notes)


# -- Select -------------------------------------------------------------------------------------
_INDEX_MENTION = re.compile(r'"?selected_index"?\s*[:=]?\s*"?(-?\d+)(?![\d.eE])', re.IGNORECASE)
_CORRECTION = re.compile(r"\b(?:rather|instead|but|actually)\b[\s,:]*(?:(?:it\s+is|it's|choose|pick|"
                         r"select(?:ed)?(?:_index)?|index|candidate)\s*[:=]?\s*)?\"?(-?\d+)(?![\d.eE])",
                         re.IGNORECASE)


def _index_in_prose(text: str) -> str | None:
    """The selected index written in prose (no JSON object): negated mentions are discarded and
    a correction after one ("rather 2") is read; None when there is none; two different readings
    raise."""
    values: list[str] = []
    negated_at: list[int] = []
    negations = NegationIndex(text)
    for m in _INDEX_MENTION.finditer(text):
        if negations.negated(m.start()):
            negated_at.append(m.end())
        else:
            values.append(m.group(1))
    if negated_at:
        values += [m.group(1) for m in _CORRECTION.finditer(text, negated_at[0])
                   if not negations.negated(m.start(1))]
    distinct = list(dict.fromkeys(v.lstrip("+") for v in values))
    if len(distinct) > 1:
        raise ReplyParseError(f"the reply names several indices ({', '.join(distinct)})")
    return distinct[0] if distinct else None


def parse_select(text: str, n: int) -> SelectReply:
    """Read a Select reply; the index must name one of the `n` candidates (0-based)."""
    try:
        obj = extract_json_object(text)
        value, reasoning = obj.get("selected_index"), str(obj.get("reasoning") or "")
    except ReplyParseError:
        body = answer_text(text, ReplyParseError)
        value, reasoning = _index_in_prose(body), ""
        if value is None:
            raise
    if isinstance(value, bool) or value is None:
        raise ReplyParseError(f"selected_index {value!r} is not an integer")
    f = number_string(str(value).strip().strip("[]") if isinstance(value, str) else value)
    if f is None or f != int(f) or not 0 <= int(f) < n:
        raise ReplyParseError(f"selected_index {value!r} is not one of the {n} candidates (0-{n - 1})")
    return SelectReply(index=int(f), reasoning=reasoning.strip())


# -- the localizer's interval ------------------------------------------------------------------

class IntervalParseError(Unparsed):
    pass


_MARKER = re.compile(r"<-?\d+(?:\.\d+)? seconds>")
_CLOCK = re.compile(rf"\s*(?:(?:\d{{1,2}}:){{1,2}}\d{{1,2}}(?:\.\d+)?|(?:{TIME})\s*(?:s|sec|secs|second|seconds))\s*",
                    re.IGNORECASE)
_ONE = r"(?<![\w.:])((?:\d{1,2}:){1,2}\d{1,2}(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?![\w:]|\.\d)"
# window-search rule: "starts at 40.5 and ends at 52" (no separator between the two times)
_START_END = re.compile(r"\bstart\w*\D{0,20}?" + _ONE + r"[^\n]{0,40}?\bend\w*\D{0,20}?" + _ONE, re.I)


def json_time(value: Any) -> float | None:
    """A time in a localizer's JSON reply: a finite JSON number, or a string written as a time
    (a clock "00:12" / "1:02:03.5", or a number with its unit "7s"). A bare numeric string ("2")
    is a string where a number was due, and NaN / Infinity / 1e309 are no times: None."""
    number = finite_number(value)
    if number is not None or not isinstance(value, str):
        return number
    if len(value) > 64 or not _CLOCK.fullmatch(value):
        return None
    t = parse_time(value)
    return t if math.isfinite(t) else None


def _looks_like_time(value: Any) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)) or \
        (isinstance(value, str) and number_string(value.replace(":", "")) is not None)


def json_pair(data: Any) -> tuple[float, float] | None:
    """The first interval in a parsed JSON reply ([s, e], [s, e, score] or an object with start /
    end keys, any nesting, document order); None when there is none. An interval whose ends are no
    times (a string, NaN, 1e309) raises IntervalParseError: the model's answer was that JSON."""
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            keys = {str(k).lower(): v for k, v in node.items()}
            s = next((keys[k] for k in START_KEYS if k in keys), None)
            e = next((keys[k] for k in END_KEYS if k in keys), None)
            if s is not None and e is not None:
                return _checked(s, e)
            stack.extend(reversed(list(node.values())))
        elif isinstance(node, list):
            if len(node) in (2, 3) and all(_looks_like_time(v) for v in node[:2]):
                return _checked(node[0], node[1])
            stack.extend(reversed(node))
    return None


def _checked(s: Any, e: Any) -> tuple[float, float]:
    start, end = json_time(s), json_time(e)
    if start is None or end is None:
        bad = s if start is None else e
        raise IntervalParseError(f"{bad!r} is not a time (a JSON number or a time such as "
                                 '"00:12" / "12 s"; NaN, Infinity and quoted bare numbers are not)')
    return start, end


def parse_interval(text: str) -> tuple[float, float]:
    """The first (start, end) pair in a localizer reply, in seconds (order as written): JSON first,
    then a pair written in prose, then "start ... end ..." (components.window_search.reading: no
    negated pair, no date, no list of numbers)."""
    body = answer_text(text, IntervalParseError)
    if not body:
        raise IntervalParseError("empty reply")
    body = _MARKER.sub(" ", body).translate(DASHES)  # echoed frame markers are no answers
    pair = json_pair(json_span(body))
    if pair is None:
        pair = next(((s, e) for _, s, e in prose_pairs(body)), None)
    if pair is None:
        dated = blank_dates(body)
        negations = NegationIndex(dated)
        for m in _START_END.finditer(dated):
            if not negations.negated(m.start()):
                pair = parse_time(m.group(1)), parse_time(m.group(2))
                break
    if pair is None:
        raise IntervalParseError("no start and end time found in the reply")
    if not (math.isfinite(pair[0]) and math.isfinite(pair[1])):
        raise IntervalParseError(f"{pair} is not a finite interval")
    if pair[0] == pair[1]:
        raise IntervalParseError(f"[{pair[0]:g}, {pair[1]:g}] is empty (start = end)")
    return pair


# -- the memory builder's frame pick -----------------------------------------------------------

def picked_frames(text: str, n_frames: int) -> tuple[list[int], float] | None:
    """Frame numbers (1-based, in range) and confidence from a reply, or None when unparsable."""
    try:
        data = extract_json_object(text)
    except ReplyParseError:
        return None
    frames_value, conf = data.get("frames", []), number_string(data.get("confidence", 0.0))
    if not isinstance(frames_value, list) or conf is None or not 0.0 <= conf <= 1.0:
        return None  # a confidence outside [0, 1] (or NaN, 1e309) is unreadable, never clamped
    frames = [finite_number(x) for x in frames_value]
    if any(f is None or f != int(f) for f in frames):
        return None
    return [int(f) for f in frames if 1 <= f <= n_frames][:2], conf
