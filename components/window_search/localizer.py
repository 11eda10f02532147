"""The downstream localizer: predicts [s, e] inside the window W returned by the search.

With a VLM (`ModelLocalizer`): frames of W at `fps` (at most `cap`, uniform), each preceded by its
"<T.T seconds>" marker, then a TimeLens-style grounding prompt. Appendix G has no localizer prompt
(the paper runs TimeLens2 unchanged), so assets/prompts/aws_localize.txt is ours. The reply is
parsed robustly by replies.parse_interval (JSON list/object, "x - y seconds", "from x to y", "between x and y", HH:MM:SS /
MM:SS; components.common.intervals and components.window_search.reading: no negated pair, no
date, no list of numbers, no NaN / 1e309, JSON ends are numbers or time strings, never bare
numeric strings), reversed ends are swapped, the interval is clamped into W (an interval that
leaves nothing inside W is unparsed); an interval lying wholly outside W but within [0, |W|] is
read as times relative to the window start. Unreadable after the retries: the whole window,
labelled a fallback ("vlm-fallback-window"; pipeline labels the prediction
"fallback:localizer-unparsed" and it is not scored). The prompt states the frames' real count
and spacing; the frame budget (`cap`) is a setting (SearchSettings.localize_cap). Thinking is
switched off by default as for the verifier (the paper is silent on the localizer; a thinking
localizer would spend its 128 tokens on reasoning).

Without a model (`SubtitleLocalizer`, the baseline): the span of the subtitle cues in W that match
the query above the similarity threshold ("baseline-subtitles"); when none does, the whole window
("baseline-window").
"""
from __future__ import annotations

import dataclasses
import threading
from abc import ABC, abstractmethod
from typing import Any

from backends.ask import ask, resample
from backends.base import EmbeddingBackend, GenerationParams, GenerationRequest, VLMBackend
from backends.errors import BackendError
from backends.pair import same_request
from components.common.intervals import parse_time
from components.window_search import prompts
from components.window_search.replies import IntervalParseError, parse_interval
from components.window_search.text_baseline import TextSimilarity
from components.window_search.types import LocalizeResult, PartnerReply, Window

LOCALIZE_PARAMS = GenerationParams(temperature=0.0, top_p=1.0, max_tokens=128)
MAX_RETRIES = 2

#: the earlier name of components.common.intervals.parse_time
to_seconds = parse_time


def fit_interval(pair: tuple[float, float], window: Window) -> tuple[Window, bool]:
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
    out = (min(max(s, ws), we), min(max(e, ws), we))
    if out[1] <= out[0]:
        raise IntervalParseError(f"[{s:g}, {e:g}] leaves nothing inside the window [{ws:g}, {we:g}]")
    return out, relative


class Localizer(ABC):
    """Predicts [s, e] inside a window."""

    @abstractmethod
    def localize(self, query: str, window: Window, movie: Any, *,
                 stop: threading.Event | None = None, ref: str = "") -> LocalizeResult: ...


class SubtitleLocalizer(Localizer):
    """The baseline: the span of the window's subtitle cues that match the query (no frames)."""

    def __init__(self, embedder: EmbeddingBackend | str | None = None):
        self.embedder = embedder

    def localize(self, query, window, movie, *, stop=None, ref=""):
        window = (float(window[0]), float(window[1]))
        cues = [c for c in movie.cues(window[0], window[1]) if c.end > window[0] and c.start < window[1]]
        sim = TextSimilarity(self.embedder)
        scores = sim.matrix([query], [c.text for c in cues])[0] if cues else []
        hits = [c for c, s in zip(cues, scores) if s >= sim.threshold]
        if not hits:
            return LocalizeResult(window, "", "baseline-window")
        s = max(window[0], min(c.start for c in hits))
        e = min(window[1], max(c.end for c in hits))
        return LocalizeResult((s, e), "", "baseline-subtitles")


class ModelLocalizer(Localizer):
    """A VLM reads the window's frames and answers the grounding prompt."""

    def __init__(self, backend: VLMBackend, *, fps: float = 1.0, cap: int = 32,
                 max_retries: int = MAX_RETRIES, params: GenerationParams | None = None,
                 thinking: bool | None = False):
        self.backend = backend
        self.fps, self.cap = fps, cap
        self.max_retries = max(0, int(max_retries))
        self.params = params or dataclasses.replace(LOCALIZE_PARAMS, thinking=thinking)

    def _request(self, query: str, window: Window, movie: Any, limit: int,
                 stop: threading.Event | None, ref: str) -> GenerationRequest:
        # the pictures as they are sent, made once (a movie without them: its frames)
        frames = getattr(movie, "sent_frames", movie.frames)(window[0], window[1], fps=self.fps, cap=limit)
        return GenerationRequest(messages=prompts.localize_messages(query, window, frames, self.fps),
                                 params=self.params, task="aws.localize", ref=ref, cancel=stop)

    def localize(self, query, window, movie, *, stop=None, ref=""):
        window = (float(window[0]), float(window[1]))
        cap = self.backend.max_images
        limit = self.cap if cap is None else min(self.cap, cap)
        request = self._request(query, window, movie, limit, stop, ref)
        why: list[str] = []
        asked = ask(self.backend, request, lambda raw: fit_interval(parse_interval(raw), window),
                    attempts=1 + self.max_retries, on_attempt=lambda n, reason: why.append(reason),
                    on_too_many=resample(lambda n: self._request(query, window, movie, n, stop, ref)))
        if asked.failed:
            detail = (asked.error or "").removeprefix(f"{self.backend.backend_id} failed: ")
            raise BackendError(f"{self.backend.backend_id} failed on aws.localize: {detail}")
        kept = {"reasoning": asked.reasoning,
                "usage": asked.usage.as_dict() if asked.usage is not None else None,
                "partner": _partner(asked)}
        if asked.value is not None:
            interval, relative = asked.value
            return LocalizeResult(interval, asked.raw, "vlm-relative" if relative else "vlm", None,
                                  asked.attempts, **kept)
        if asked.truncated:
            return LocalizeResult(window, asked.raw, "vlm-fallback-window",
                                  f"{asked.error}; returned the whole window", asked.attempts,
                                  truncated=True, **kept)
        return LocalizeResult(window, asked.raw, "vlm-fallback-window",
                              f"unparsed localizer reply after {asked.attempts} attempts "
                              f"({why[-1] if why else asked.error}); returned the whole window",
                              asked.attempts, **kept)


def _partner(asked) -> PartnerReply | None:
    """The compared backend's interval for the same request (its own reading; no fallback: an
    unreadable reply stays None)."""
    other = asked.partner
    if other is None:
        return None
    value = None
    if other.ok:
        (start, end), relative = other.value
        value = {"interval": [start, end], "relative": relative}
    return PartnerReply(backend=other.backend, value=value, raw=other.raw,
                        reasoning=other.reasoning, error=other.error, attempts=other.attempts,
                        usage=other.usage.as_dict() if other.usage is not None else None,
                        pair_id=asked.pair_id, same_request=same_request(asked.request, other.request))


def localize(query: str, window: Window, movie: Any, backend_or_none: VLMBackend | None, *,
             fps: float = 1.0, cap: int = 32, embedder: EmbeddingBackend | str | None = None,
             max_retries: int = MAX_RETRIES, params: GenerationParams | None = None,
             stop: threading.Event | None = None, ref: str = "") -> LocalizeResult:
    """Predict [s, e] inside `window` with a model, or with the subtitle baseline when there is no
    model (`backend_or_none` None). solvers.solvers_for decides which a backend gets."""
    localizer: Localizer = (SubtitleLocalizer(embedder) if backend_or_none is None else
                            ModelLocalizer(backend_or_none, fps=fps, cap=cap, max_retries=max_retries,
                                           params=params))
    return localizer.localize(query, window, movie, stop=stop, ref=ref)
