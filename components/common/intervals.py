"""Time intervals for every tab: the type, IoU, reading times, and finding intervals in text.

Pure functions; times are seconds. (The cloze tab's answer parser is not here: it reproduces the
released TempCloze parser letter for letter, see components/cloze/prompts.py.)
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any
from collections.abc import Iterator, Sequence

#: a time as models write it: 83.5 | .5 | 01:23.5 (MM:SS) | 00:01:23.5 (HH:MM:SS)
TIME = r"(?:\d{1,2}:){1,2}\d{1,2}(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+"
UNIT = r"(?:\s*(?:s|sec|secs|second|seconds)\b)?"
_T = rf"(?<![\d.])({TIME}){UNIT}"  # never mid-number: linear time on digit runs
_PAIR = re.compile(
    rf"(?:\bfrom\s+|\bbetween\s+)?{_T}\s*(?:-|to|and|,|~|until|through|till)\s*{_T}", re.IGNORECASE)
_TIME_STRING = re.compile(rf"\s*(?:{TIME}){UNIT}\s*", re.IGNORECASE)
DASHES = str.maketrans({"\u2013": "-", "\u2014": "-", "\u2012": "-", "\u2212": "-", "\uff0d": "-"})
START_KEYS = ("start", "start_time", "begin", "s", "from")
END_KEYS = ("end", "end_time", "stop", "e", "to")


@dataclass(frozen=True)
class Interval:
    """[start, end] in seconds."""

    start: float
    end: float

    @property
    def length(self) -> float:
        return self.end - self.start

    def as_list(self, ndigits: int | None = None) -> list[float]:
        if ndigits is None:
            return [self.start, self.end]
        return [round(self.start, ndigits), round(self.end, ndigits)]

    def overlaps(self, other: Interval) -> bool:
        """Open-interval overlap: touching ends do not overlap."""
        return self.start < other.end and other.start < self.end

    def iou(self, other: Interval) -> float:
        return iou((self.start, self.end), (other.start, other.end))


def valid_interval(value: Any) -> tuple[float, float] | None:
    """[s, e] with finite numbers (not booleans) and e > s, else None."""
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        return None
    try:
        if any(isinstance(x, bool) for x in value):
            return None
        s, e = float(value[0]), float(value[1])
    except (TypeError, ValueError):
        return None
    if not (math.isfinite(s) and math.isfinite(e)) or e <= s:
        return None
    return s, e


def overlap(a: Sequence[float] | None, b: Sequence[float] | None) -> float:
    """Length of a ∩ b (0 when either is invalid or they do not meet)."""
    a, b = valid_interval(a), valid_interval(b)
    if a is None or b is None:
        return 0.0
    return max(0.0, min(a[1], b[1]) - max(a[0], b[0]))


def iou(a: Sequence[float] | None, b: Sequence[float] | None) -> float:
    """Temporal IoU |a ∩ b| / |a ∪ b|; an invalid interval (None, non-finite, e <= s) scores 0."""
    a, b = valid_interval(a), valid_interval(b)
    if a is None or b is None:
        return 0.0
    inter = max(0.0, min(a[1], b[1]) - max(a[0], b[0]))
    union = (a[1] - a[0]) + (b[1] - b[0]) - inter
    return inter / union if union > 0 else 0.0


def parse_time(token: str) -> float:
    """'83.5' | '83.5 s' | '01:23.5' (MM:SS) | '00:01:23.5' (HH:MM:SS) -> seconds."""
    token = re.sub(r"[a-zA-Z\s]+$", "", token.strip())
    value = 0.0
    for part in token.split(":"):
        value = value * 60 + float(part)
    return value


def time_value(v: Any) -> float | None:
    """A JSON value read as a time: a finite number or a time string; else None."""
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v) if math.isfinite(v) else None  # NaN / Infinity / 1e309 are no times
    if isinstance(v, str) and _TIME_STRING.fullmatch(v):
        return parse_time(v)
    return None


def pairs_in_text(text: str) -> Iterator[tuple[float, float]]:
    """Every 's - e' / 'from s to e' / 'between s and e' / 's, e' pair, in order as written."""
    for m in _PAIR.finditer(text):
        yield parse_time(m.group(1)), parse_time(m.group(2))


def pairs_in_json(data: Any) -> list[tuple[float, float, float | None]]:
    """(start, end, score or None) for every interval in parsed JSON: [s, e], [s, e, score] and
    objects with start/end keys (any nesting), in document order."""
    pairs: list[tuple[float, float, float | None]] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            keys = {str(k).lower(): v for k, v in node.items()}
            s = next((keys[k] for k in START_KEYS if k in keys), None)
            e = next((keys[k] for k in END_KEYS if k in keys), None)
            if s is not None and e is not None and time_value(s) is not None and time_value(e) is not None:
                score = keys.get("score", keys.get("confidence"))
                pairs.append((time_value(s), time_value(e), time_value(score) if score is not None else None))
                return
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            if len(node) in (2, 3) and all(time_value(v) is not None for v in node[:2]) \
                    and not any(isinstance(v, (list, dict)) for v in node):
                score = time_value(node[2]) if len(node) == 3 and isinstance(node[2], (int, float)) else None
                pairs.append((time_value(node[0]), time_value(node[1]), score))
                return
            for v in node:
                walk(v)

    walk(data)
    return pairs


def json_span(text: str) -> Any:
    """The JSON value spanning the first '[' or '{' to the last ']' or '}', or None."""
    start = min((i for i in (text.find("["), text.find("{")) if i >= 0), default=-1)
    end = max(text.rfind("]"), text.rfind("}"))
    if start < 0 or end <= start:
        return None
    try:
        return json.loads(text[start:end + 1])
    except (json.JSONDecodeError, ValueError, RecursionError):
        return None


def format_mmss(seconds: float) -> str:
    """Seconds -> MM:SS.SSS (the Gemini-style answer format)."""
    minutes, rest = divmod(max(0.0, seconds), 60.0)
    return f"{int(minutes):02d}:{rest:06.3f}"
