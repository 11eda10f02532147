"""The one parser for a model's temporal answer (every Table 7 output form and common drift).

Accepted: JSON lists ``[[1.04, 1.375], ...]`` (numbers or time strings, or objects with start/end),
``[[MM:SS.SSS, MM:SS.SSS], ...]``, ``HH:MM:SS(.fff)``, ``The event happens in x1 - y1 seconds; ...``,
``From s to e``, ``between s and e``, ``s-e``, stray text around any of them, and echoed
``Frame at 2.375s:`` labels. Intervals are swapped when reversed, clamped to the clip, and merged
when they overlap; the answer's order is kept as the ranking (a merge keeps the better rank).
Scores are the model's own when it gives one per interval ([s, e, score]), else rank-derived.
"None" / no interval is an empty prediction; text with no interval at all is *unparsed*.
The raw text is always kept. Reading times and finding pairs is components.common.intervals'.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from components.common.intervals import (DASHES, TIME, UNIT, json_span, pairs_in_json, pairs_in_text,
                                         parse_time)

OK, NONE, UNPARSED = "ok", "none", "unparsed"

_FRAME_AT = re.compile(rf"\bframe\s+at\s+({TIME}){UNIT}\s*:?", re.IGNORECASE)
_NONE = re.compile(r"^\W*(none|null|nil|n/?a|no)\W*$|\bno\s+(?:such\s+|matching\s+|relevant\s+)?"
                   r"(?:impact|interval|moment|event|segment)s?\b|\bdoes\s+not\s+(?:occur|appear|happen)"
                   r"|\bnot\s+(?:found|present|visible|shown)\b|^\W*\[\s*\]\W*$", re.IGNORECASE)
_TOUCH = 1e-3  # seconds


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
    cleaned = raw.translate(DASHES).replace("\u2026", "...")
    cleaned = re.sub(r"```(?:json)?", " ", cleaned)
    pairs = pairs_in_json(json_span(cleaned))
    if not pairs:
        # "Frame at 2.375s:" echoes are labels, not intervals: keep only their time
        frame_times = [parse_time(m.group(1)) for m in _FRAME_AT.finditer(cleaned)]
        body = _FRAME_AT.sub(lambda m: f" {m.group(1)} ", cleaned)
        pairs = [(s, e, None) for s, e in pairs_in_text(body)]
        if not pairs and frame_times:
            pairs = [(t, t, None) for t in frame_times]  # the model named single frames
    if pairs:
        intervals, scores, dropped, notes = _clamp_and_merge(pairs, duration, fps)
        given = scores if scores and all(sc is not None for sc in scores) else None
        return ParsedIntervals(intervals, raw, OK, dropped, notes, given)
    if _NONE.search(cleaned.strip()):
        return ParsedIntervals([], raw, NONE)
    return ParsedIntervals([], raw, UNPARSED)
