"""The downstream localizer: predicts [s, e] inside the window W returned by the search.

With a VLM: frames of W at `fps` (at most `cap`, uniform), each preceded by its "<T.T seconds>"
marker, then a TimeLens-style grounding prompt. Appendix G has no localizer prompt (the paper runs
TimeLens2 unchanged), so assets/prompts/aws_localize.txt is ours. The reply is parsed robustly
(JSON list/object, "x - y seconds", "from x to y", "between x and y", HH:MM:SS / MM:SS), reversed
ends are swapped, the interval is clamped into W; an interval lying wholly outside W but within
[0, |W|] is read as times relative to the window start. Unreadable after the retries: the whole
window, with the error recorded.

Without a model (baseline): the span of the subtitle cues in W that match the query above the
similarity threshold ("baseline-subtitles"); when none does, the whole window ("baseline-window").
"""
from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from backends.base import GenerationParams, GenerationRequest, VLMBackend
from backends.errors import BackendError
from components.window_search import prompts
from components.window_search.solvers import TextSimilarity

if TYPE_CHECKING:
    from backends.base import EmbeddingBackend

LOCALIZE_PARAMS = GenerationParams(temperature=0.0, top_p=1.0, max_tokens=128)


@dataclass
class LocalizeResult:
    interval: tuple[float, float]
    raw: str = ""
    method: str = ""        # "vlm" | "vlm-relative" | "vlm-fallback-window" | "baseline-subtitles"
    #                         | "baseline-window"
    error: str | None = None
    attempts: int = 0


class IntervalParseError(ValueError):
    pass


_T = r"(?<![\d.])(\d{1,2}:\d{2}:\d{2}(?:\.\d+)?|\d{1,3}:\d{2}(?:\.\d+)?|\d+(?:\.\d+)?)"  # never mid-number (linear time)
_UNIT = r"\s*(?:s|sec|secs|seconds?)?\.?"
_PAIR_PATTERNS = [
    re.compile(r"\[\s*" + _T + r"\s*,\s*" + _T + r"\s*\]"),
    re.compile(r"\bfrom\s+" + _T + _UNIT + r"\s+(?:to|until|till)\s+" + _T, re.I),
    re.compile(r"\bbetween\s+" + _T + _UNIT + r"\s+and\s+" + _T, re.I),
    re.compile(_T + _UNIT + r"\s*(?:-|–|—|~|to)\s*" + _T, re.I),
    re.compile(r"\bstart\w*\D{0,20}?" + _T + r".{0,40}?\bend\w*\D{0,20}?" + _T, re.I | re.S),
]


def to_seconds(token: str) -> float:
    """'12.5' -> 12.5, '01:05' -> 65, '1:02:03.5' -> 3723.5."""
    parts = token.split(":")
    value = 0.0
    for p in parts:
        value = value * 60 + float(p)
    return value


def parse_interval(text: str) -> tuple[float, float]:
    """The first (start, end) pair in a localizer reply, in seconds (order as written)."""
    if not text or not text.strip():
        raise IntervalParseError("empty reply")
    body = re.sub(r"<think>.*?</think>", "", text, flags=re.S | re.I)
    body = re.sub(r"<-?\d+(?:\.\d+)? seconds>", " ", body)  # echoed frame markers are not answers
    for m in re.finditer(r"\{[^{}]*\}", body):  # {"start": .., "end": ..}
        try:
            obj = json.loads(m.group(0))
        except (json.JSONDecodeError, RecursionError):
            continue
        keys = {k.lower(): v for k, v in obj.items()} if isinstance(obj, dict) else {}
        for a, b in (("start", "end"), ("start_time", "end_time"), ("begin", "end")):
            if a in keys and b in keys:
                try:
                    return to_seconds(str(keys[a]).strip().rstrip("s")), \
                        to_seconds(str(keys[b]).strip().rstrip("s"))
                except ValueError:
                    break
    for pattern in _PAIR_PATTERNS:
        m = pattern.search(body)
        if m:
            return to_seconds(m.group(1)), to_seconds(m.group(2))
    raise IntervalParseError("no start and end time found in the reply")


def fit_interval(pair: tuple[float, float], window: tuple[float, float]) -> tuple[tuple[float, float],
                                                                               bool]:
    """Swap reversed ends, read a wholly-outside pair as window-relative when it fits, clamp into
    the window. Returns (interval, relative?)."""
    s, e = sorted(pair)
    ws, we = window
    relative = False
    if (e < ws or s > we) and not (ws <= s <= we):
        if 0.0 <= s and e <= (we - ws) + 1.0:
            s, e, relative = s + ws, e + ws, True
        else:
            raise IntervalParseError(f"[{s:g}, {e:g}] lies outside the window [{ws:g}, {we:g}]")
    return (min(max(s, ws), we), min(max(e, ws), we)), relative


def _baseline(query: str, window: tuple[float, float], movie: Any,
              embedder: "EmbeddingBackend | str | None") -> LocalizeResult:
    cues = [c for c in movie.cues(window[0], window[1]) if c.end > window[0] and c.start < window[1]]
    sim = TextSimilarity(embedder)
    scores = sim.matrix([query], [c.text for c in cues])[0] if cues else []
    hits = [c for c, s in zip(cues, scores) if s >= sim.threshold]
    if not hits:
        return LocalizeResult(window, "", "baseline-window")
    s = max(window[0], min(c.start for c in hits))
    e = min(window[1], max(c.end for c in hits))
    return LocalizeResult((s, e), "", "baseline-subtitles")


def localize(query: str, window: tuple[float, float], movie: Any,
             backend_or_none: VLMBackend | None, *, fps: float = 1.0, cap: int = 32,
             embedder: "EmbeddingBackend | str | None" = None, max_retries: int = 2,
             params: GenerationParams | None = None, stop: threading.Event | None = None,
             ref: str = "") -> LocalizeResult:
    """Predict [s, e] inside `window` (see the module docstring)."""
    window = (float(window[0]), float(window[1]))
    backend = backend_or_none
    if backend is None or backend.is_baseline:
        return _baseline(query, window, movie, embedder)
    limit = cap if backend.max_images is None else min(cap, backend.max_images)
    frames = movie.frames(window[0], window[1], fps=fps, cap=limit)
    messages = prompts.localize_messages(query, window, frames, fps)
    raw, error, attempts = "", None, 0
    for _ in range(1 + max(0, max_retries)):
        attempts += 1
        result = backend.generate(GenerationRequest(messages=messages,
                                                    params=params or LOCALIZE_PARAMS,
                                                    task="aws.localize", ref=ref, cancel=stop))
        if not result.ok:
            raise BackendError(f"{backend.backend_id} failed on aws.localize: {result.error}")
        raw = result.text
        try:
            interval, relative = fit_interval(parse_interval(raw), window)
        except IntervalParseError as e:
            error = str(e)
            continue
        return LocalizeResult(interval, raw, "vlm-relative" if relative else "vlm", None, attempts)
    return LocalizeResult(window, raw, "vlm-fallback-window",
                          f"unparsed localizer reply after {attempts} attempts ({error}); "
                          "returned the whole window", attempts)
