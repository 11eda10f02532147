"""The one parser for a model's temporal answer (every Table 7 output form and common drift).

Accepted: JSON lists ``[[1.04, 1.375], ...]`` (numbers or time strings, or objects with start/end),
``[[MM:SS.SSS, MM:SS.SSS], ...]``, ``HH:MM:SS(.fff)``, ``The event happens in x1 - y1 seconds; ...``,
``From s to e``, ``between s and e``, ``s-e``, stray text around any of them, and echoed
``Frame at 2.375s:`` labels. Intervals are swapped when reversed, clamped to the clip, and merged
when they overlap; the answer's order is kept as the ranking (a merge keeps the better rank).
Scores are the model's own when it gives one per interval ([s, e, score]), else rank-derived.
"None" / no interval is an empty prediction; text with no interval at all is *unparsed*.
The raw text is always kept.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field

OK, NONE, UNPARSED = "ok", "none", "unparsed"

_TIME = r"(?:\d{1,2}:){1,2}\d{1,2}(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+"
_UNIT = r"(?:\s*(?:s|sec|secs|second|seconds)\b)?"
_T = rf"(?<![\d.])({_TIME}){_UNIT}"  # never mid-number: linear time on digit runs
_PAIR = re.compile(
    rf"(?:\bfrom\s+|\bbetween\s+)?{_T}\s*(?:-|to|and|,|~|until|through)\s*{_T}", re.IGNORECASE)
_FRAME_AT = re.compile(rf"\bframe\s+at\s+({_TIME}){_UNIT}\s*:?", re.IGNORECASE)
_NONE = re.compile(r"^\W*(none|null|nil|n/?a|no)\W*$|\bno\s+(?:such\s+|matching\s+|relevant\s+)?"
                   r"(?:impact|interval|moment|event|segment)s?\b|\bdoes\s+not\s+(?:occur|appear|happen)"
                   r"|\bnot\s+(?:found|present|visible|shown)\b|^\W*\[\s*\]\W*$", re.IGNORECASE)
_TOUCH = 1e-3  # seconds
_DASHES = str.maketrans({"\u2013": "-", "\u2014": "-", "\u2012": "-", "\u2212": "-", "\uff0d": "-"})


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


def parse_time(token: str) -> float:
    """'83.5' | '01:23.5' (MM:SS) | '00:01:23.5' (HH:MM:SS) -> seconds."""
    token = token.strip().rstrip("sS").strip()
    parts = token.split(":")
    value = 0.0
    for part in parts:
        value = value * 60 + float(part)
    return value


def _from_json(text: str) -> list[tuple] | None:
    start = min((i for i in (text.find("["), text.find("{")) if i >= 0), default=-1)
    if start < 0:
        return None
    end = max(text.rfind("]"), text.rfind("}"))
    if end <= start:
        return None
    try:
        data = json.loads(text[start:end + 1])
    except (json.JSONDecodeError, ValueError, RecursionError):
        return None
    pairs: list[tuple[float, float]] = []

    def value(v) -> float | None:
        if isinstance(v, bool):
            return None
        if isinstance(v, (int, float)):
            return float(v) if math.isfinite(v) else None  # NaN / Infinity / 1e309 are no times
        if isinstance(v, str) and re.fullmatch(rf"\s*(?:{_TIME}){_UNIT}\s*", v, re.IGNORECASE):
            return parse_time(re.sub(r"[a-zA-Z\s]+$", "", v.strip()))
        return None

    def walk(node) -> None:
        if isinstance(node, dict):
            keys = {k.lower(): v for k, v in node.items()}
            s = next((keys[k] for k in ("start", "start_time", "begin", "s", "from") if k in keys), None)
            e = next((keys[k] for k in ("end", "end_time", "stop", "e", "to") if k in keys), None)
            if s is not None and e is not None and value(s) is not None and value(e) is not None:
                score = keys.get("score", keys.get("confidence"))
                pairs.append((value(s), value(e), value(score) if score is not None else None))
                return
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            if len(node) in (2, 3) and all(value(v) is not None for v in node[:2]) \
                    and not any(isinstance(v, (list, dict)) for v in node):
                score = value(node[2]) if len(node) == 3 and isinstance(node[2], (int, float)) else None
                pairs.append((value(node[0]), value(node[1]), score))
                return
            for v in node:
                walk(v)

    walk(data)
    return pairs


def _from_text(text: str) -> list[tuple]:
    return [(parse_time(m.group(1)), parse_time(m.group(2)), None) for m in _PAIR.finditer(text)]


def _clamp_and_merge(pairs: list[tuple], duration: float | None,
                     fps: float | None) -> tuple[list[tuple[float, float]], list, int, list[str]]:
    notes: list[str] = []
    out: list[list] = []  # [start, end, score]; a merge keeps the better-ranked entry's score
    dropped = 0
    for s, e, score in pairs:
        if e < s:
            s, e = e, s
            notes.append(f"reversed interval {e}-{s} swapped")
        if s == e and fps:
            # a single instant names the frame that starts there ("Frame at 2.375s")
            e = s + 1.0 / fps
        if duration is not None:
            if s >= duration or e <= 0:
                dropped += 1
                notes.append(f"interval {s}-{e} lies outside the clip (0-{duration:.3f}s), dropped")
                continue
            if s < 0 or e > duration:
                notes.append(f"interval {s}-{e} clamped to the clip")
            s, e = max(0.0, s), min(duration, e)
        if e <= s or not math.isfinite(e - s):  # inf survives only without a clip duration
            dropped += 1
            continue
        for kept in out:  # merge into the better-ranked interval it overlaps (or touches, within
            # the 1 ms that 3-decimal timestamps lose)
            if s <= kept[1] + _TOUCH and e >= kept[0] - _TOUCH:
                kept[0], kept[1] = min(kept[0], s), max(kept[1], e)
                notes.append(f"interval {s}-{e} merged into a better-ranked overlapping one")
                break
        else:
            out.append([s, e, score])
    # a merge can make two kept intervals overlap; fold until stable
    changed = True
    while changed:
        changed = False
        for i in range(len(out)):
            for j in range(i + 1, len(out)):
                if out[j][0] <= out[i][1] + _TOUCH and out[j][1] >= out[i][0] - _TOUCH:
                    out[i] = [min(out[i][0], out[j][0]), max(out[i][1], out[j][1]), out[i][2]]
                    del out[j]
                    changed = True
                    break
            if changed:
                break
    return [(float(s), float(e)) for s, e, _ in out], [sc for _, _, sc in out], dropped, notes


def parse_intervals(text: str | None, *, duration: float | None = None,
                    fps: float | None = 24.0) -> ParsedIntervals:
    """Parse a model's answer into ranked intervals in seconds within [0, duration]."""
    raw = text if text is not None else ""
    cleaned = raw.translate(_DASHES).replace("\u2026", "...")
    cleaned = re.sub(r"```(?:json)?", " ", cleaned)
    pairs = _from_json(cleaned)
    if not pairs:
        # "Frame at 2.375s:" echoes are labels, not intervals: keep only their time
        frame_times = [parse_time(m.group(1)) for m in _FRAME_AT.finditer(cleaned)]
        body = _FRAME_AT.sub(lambda m: f" {m.group(1)} ", cleaned)
        pairs = _from_text(body)
        if not pairs and frame_times:
            pairs = [(t, t, None) for t in frame_times]  # the model named single frames
    if pairs:
        intervals, scores, dropped, notes = _clamp_and_merge(pairs, duration, fps)
        given = scores if scores and all(sc is not None for sc in scores) else None
        return ParsedIntervals(intervals, raw, OK, dropped, notes, given)
    if _NONE.search(cleaned.strip()):
        return ParsedIntervals([], raw, NONE)
    return ParsedIntervals([], raw, UNPARSED)


def format_mmss(seconds: float) -> str:
    """Seconds -> MM:SS.SSS (the Gemini-style answer format)."""
    minutes, rest = divmod(max(0.0, seconds), 60.0)
    return f"{int(minutes):02d}:{rest:06.3f}"
