"""Impact's solvers, all in one place: when (a temporal localizer) and where (a region selector),
each by a model or by a no-model baseline, and `solvers_for`, the one place the tab asks
`backend.is_baseline`.

- When: `ModelTemporalSolver` samples up to 192 frames uniformly and asks the backend family's
  Table 7 prompt (prompts/temporal.py); `MotionEnergyBaseline` finds motion-energy peaks. Both
  answer `localize(item) -> TemporalPrediction`.
- Where: `ModelRegionSolver` sends one frame with the A.6.3 prompt (prompts/regions.py);
  `BaselineRegionSolver` reads the query's body-part words ("struck behind the knees" -> both
  calves), a floor to compare models against, not the paper's method. Both answer
  `select(frame, query) -> RegionAnswer`.

A reply that cannot be read is asked again within a bound, then kept raw and counted as unparsed
(replies.py reads them); a backend failure is not asked again.
"""
from __future__ import annotations

import logging
import threading
from pathlib import Path
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Protocol
from collections.abc import Sequence

from backends.ask import Asked, Unparsed, ask, reasoning_usage, resample
from backends.base import GenerationParams, GenerationRequest, Message, VLMBackend
from backends.pair import method_pair
from components.impact.prompts.regions import DEFAULT_ATTEMPTS, region_prompt
from components.impact.prompts.temporal import answer_in_frame_indices, build_messages, max_frames_for, \
    sample_count, style_for_backend, uniform_indices
from components.impact.regions import find_region_words
from components.impact.replies import NONE, OK, UNPARSED, ParsedIntervals, frame_index_answer, parse_intervals, \
    no_label_reason, read_region_answer, read_regions
from components.common.sent_frames import sent_frames
from components.media import DiskCache, Frame, open_video
from components.media.video import check_file
from components.settings.session import SessionSettings

if TYPE_CHECKING:
    import numpy as np
    from PIL import Image

    from components.impact.data import ImpactItem

log = logging.getLogger(__name__)


# -- when: temporal localizers ---------------------------------------------------------------

BASELINE_METHOD = "motion-energy baseline (no model)"


@dataclass
class TemporalPrediction:
    qid: str
    windows: list[list[float]]  # [start_s, end_s, score], ranked
    status: str  # "ok" | "none" | "unparsed" | "error"
    method: str
    raw: str = ""
    attempts: list[str] = field(default_factory=list)
    prompt_style: str | None = None
    num_frames_sent: int = 0
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    reasoning: str = ""          # the model's reasoning for its last reply (never parsed)
    usage: dict | None = None    # the last reply's token counts (backends.base.Usage.as_dict)

    def to_record(self) -> dict:
        """QVHighlights prediction line plus what produced it (raw text, status, method); the
        reasoning and token counts only when there are some (other lines stay as they were)."""
        record = {"qid": self.qid, "pred_relevant_windows": self.windows}
        extra = asdict(self)
        extra.pop("qid")
        extra.pop("windows")
        for key in ("reasoning", "usage"):
            if not extra[key]:
                extra.pop(key)
        record.update(extra)
        return record


class TemporalSolver(Protocol):
    method: str

    def localize(self, item: ImpactItem) -> TemporalPrediction: ...


# -- model-backed --------------------------------------------------------------------------------

class ModelTemporalSolver:
    """Uniformly samples up to 192 frames, asks the Table 7 prompt of the backend's family, parses
    the answer; malformed answers are asked again at most `max_retries` times, then kept raw. A
    server that refuses that many images gets the clip resampled to the count it accepts."""

    def __init__(self, backend: VLMBackend, *, style: str | None = None,
                 max_frames: int | None = None, max_retries: int = 2, max_side: int = 448,
                 params: GenerationParams | None = None):
        self.backend = backend
        self.style = style_for_backend(backend.backend_id, style)
        self.max_frames = max_frames
        self.max_retries = max(0, int(max_retries))
        self.max_side = max_side
        self.params = params or GenerationParams(temperature=0.0, max_tokens=256)
        self.method = f"{backend.backend_id} (Table 7, {self.style} prompt)"

    def _frames(self, item: ImpactItem, limit: int | None) -> list[Frame]:
        """The clip's uniformly sampled frames as the model is sent them: JPEGs made once and
        kept on disk (components.common.sent_frames), keyed by the clip, the count and the size;
        the frame count is read without opening the decoder when the clip's count is cached."""
        video = check_file(item.video)
        total = _frame_count(video)
        n = sample_count(total, backend_max_images=limit or self.backend.max_images,
                         session_max_frames=self.max_frames, cap=max_frames_for(self.style))
        indices = uniform_indices(total, n)

        def decode() -> list[Frame]:
            source = open_video(video)
            try:
                return source.frames_at_indices(indices, max_side=self.max_side)
            finally:
                source.close()

        params = {"use": "impact-temporal-frames", "sampling": "uniform", "indices": indices,
                  "decode_max_side": self.max_side}
        return sent_frames(video, params, decode)

    def _request(self, item: ImpactItem, frames: Sequence[Frame],
                 cancel: threading.Event | None) -> GenerationRequest:
        return GenerationRequest(messages=build_messages(self.style, item.query, frames),
                                 params=self.params, task="impact.temporal", ref=item.qid,
                                 cancel=cancel)

    def localize(self, item: ImpactItem, cancel: threading.Event | None = None) -> TemporalPrediction:
        return self.prediction(self.ask(item, cancel), item)

    def ask(self, item: ImpactItem, cancel: threading.Event | None = None) -> Asked[ParsedIntervals]:
        """The model's reading of one clip (with the partner's, when the backend is paired)."""
        frames = self._frames(item, None)

        def parse(text: str) -> ParsedIntervals:
            if answer_in_frame_indices(self.style):
                parsed = frame_index_answer(text, sent_frames(), item.duration)
            else:
                parsed = parse_intervals(text, duration=item.duration, fps=item.fps)
            if parsed.status == UNPARSED:
                raise Unparsed("; ".join(parsed.notes) or "no interval and no 'None' in the answer")
            return parsed

        first = self._request(item, frames, cancel)
        # per thread: the two sides of a paired backend are asked in two threads, and each side
        # reads frame numbers against the request it was sent (resampled if its server asked)
        holder = threading.local()

        def sent_frames() -> int:
            return getattr(holder, "request", first).num_images()

        def rebuild(limit: int) -> GenerationRequest:
            holder.request = self._request(item, self._frames(item, limit), cancel)
            return holder.request

        def unparsed(attempt: int, why: str) -> None:
            log.info("impact temporal %s: unparsed answer (%d tries left)", item.qid,
                     1 + self.max_retries - attempt)

        return ask(self.backend, first, parse, attempts=1 + self.max_retries,
                   on_attempt=unparsed, on_too_many=resample(rebuild))

    def prediction(self, asked: Asked[ParsedIntervals], item: ImpactItem,
                   method: str | None = None) -> TemporalPrediction:
        """What asking gave as a prediction line (unparsed: kept raw, counted, never guessed)."""
        sent = asked.request.num_images() if asked.request is not None else 0
        pred = TemporalPrediction(qid=item.qid, windows=[], status=UNPARSED,
                                  method=method or self.method, raw=asked.raw,
                                  attempts=list(asked.raws), prompt_style=self.style,
                                  num_frames_sent=sent, reasoning=asked.reasoning,
                                  usage=reasoning_usage(asked))
        if asked.failed:
            pred.status, pred.error = "error", asked.error
        elif asked.value is not None:
            pred.status, pred.windows, pred.notes = (asked.value.status, asked.value.windows(),
                                                     asked.value.notes)
        elif asked.error:
            pred.notes = [asked.error]  # why the last answer was unreadable
        return pred  # unparsed: kept raw, counted, never guessed


def _frame_count(video: Path) -> int:
    """The clip's frame count as its decoder reads it, kept on disk beside its frames (a cache
    hit opens no decoder)."""
    def count() -> int:
        source = open_video(video)
        try:
            return int(source.info.num_frames)
        finally:
            source.close()
    return int(DiskCache().get_or_compute_json(video, {"use": "frame-count"}, count))


# -- motion-energy baseline --------------------------------------------------------------------------

def motion_energy(grey: np.ndarray) -> np.ndarray:
    """Mean absolute difference to the previous frame, per frame (frame 0 gets 0). grey: (T, H, W)."""
    import numpy as np

    grey = np.asarray(grey, dtype=np.float32)
    energy = np.zeros(len(grey), dtype=np.float32)
    if len(grey) > 1:
        energy[1:] = np.abs(np.diff(grey, axis=0)).mean(axis=(1, 2))
    return energy


def impact_candidates(energy: np.ndarray, fps: float, *, k: float = 3.0, min_width: int = 3,
                      max_width: int = 8, top: int = 10, min_relative: float = 0.0) -> list[list[float]]:
    """Peaks of motion energy above median + k·MAD, each grown over its run of above-threshold
    frames (then padded to at least `min_width` frames, at most `max_width`), ranked by peak height.
    Peaks below `min_relative` x the highest peak may be dropped (off by default: up to 10
    candidates feed the AP, as the reference keeps the top 10).
    Returns [start_s, end_s, score] with 0-based frame j covering [j/fps, (j+1)/fps]."""
    import numpy as np

    energy = np.asarray(energy, dtype=np.float64)
    n = len(energy)
    if n < 2:
        return []
    body = energy[1:]  # frame 0 has no previous frame
    median = float(np.median(body))
    mad = float(np.median(np.abs(body - median)))
    threshold = median + k * max(mad, 1e-6 * max(1.0, float(body.max())))
    above = energy > threshold
    above[0] = False
    peaks = [i for i in range(1, n) if above[i] and energy[i] >= energy[i - 1]
             and (i + 1 >= n or energy[i] >= energy[i + 1])]
    peaks.sort(key=lambda i: -energy[i])
    peak_max = float(energy[peaks[0]]) if peaks else 1.0
    peaks = [i for i in peaks if energy[i] >= min_relative * peak_max]
    covered = np.zeros(n, dtype=bool)
    out: list[list[float]] = []
    for p in peaks:
        if covered[p]:
            continue
        lo = hi = p
        while lo - 1 >= 1 and above[lo - 1] and hi - lo + 1 < max_width:
            lo -= 1
        while hi + 1 < n and above[hi + 1] and hi - lo + 1 < max_width:
            hi += 1
        while hi - lo + 1 < min_width:
            if lo > 0:
                lo -= 1
            if hi - lo + 1 < min_width and hi < n - 1:
                hi += 1
            if lo == 0 and hi == n - 1:
                break
        covered[lo:hi + 1] = True
        out.append([lo / fps, (hi + 1) / fps, float(energy[p]) / peak_max])
        if len(out) >= top:
            break
    return out


class MotionEnergyBaseline:
    """No model: impact candidates from frame differences of downscaled grey frames."""

    method = BASELINE_METHOD

    def __init__(self, *, k: float = 3.0, side: int = 64):
        self.k = k
        self.side = side

    def grey_frames(self, item: ImpactItem) -> np.ndarray:
        import numpy as np

        source = open_video(item.video)
        try:
            total = source.info.num_frames
            frames = source.frames_at_indices(list(range(total)), max_side=self.side)
        finally:
            source.close()
        return np.stack([np.asarray(f.image.convert("L"), dtype=np.float32) for f in frames])

    def localize(self, item: ImpactItem, cancel: threading.Event | None = None) -> TemporalPrediction:
        energy = motion_energy(self.grey_frames(item))
        windows = [w for w in impact_candidates(energy, item.fps, k=self.k)
                   if w[0] < item.duration]
        windows = [[w[0], min(w[1], item.duration), w[2]] for w in windows]
        return TemporalPrediction(qid=item.qid, windows=windows, status=OK if windows else NONE,
                                  method=self.method, num_frames_sent=len(energy))


# -- where: region selectors -----------------------------------------------------------------

@dataclass
class RegionAnswer:
    """Labels selected for one frame. `error` is set when nothing usable came back (unparsed or a
    backend failure); `raw` keeps the model's last reply as it was."""

    labels: list[str]
    unmapped: list[str] = field(default_factory=list)
    raw: str = ""
    error: str | None = None
    attempts: int = 1
    source: str = ""   # backend id, or the baseline's name
    note: str = ""     # e.g. why the text-only baseline selected nothing
    reasoning: str = ""  # the model's reasoning for its last reply (never parsed)
    usage: dict | None = None  # the last reply's token counts (backends.base.Usage.as_dict)

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def backend_failed(self) -> bool:
        """The backend itself failed (worth asking again later), as opposed to an unread reply."""
        return bool(self.error) and self.error.startswith("backend error")

    def as_dict(self) -> dict:
        out = {"regions": list(self.labels), "unmapped": list(self.unmapped), "raw": self.raw,
               "error": self.error, "attempts": self.attempts, "source": self.source,
               "note": self.note}
        if self.reasoning:  # only when there is some: lines of other models stay as they were
            out["reasoning"] = self.reasoning
        if self.usage:
            out["usage"] = dict(self.usage)
        return out


class RegionSolver(Protocol):
    name: str
    needs_image: bool  # whether `select` reads the frame (the text-only baseline does not)

    def select(self, frame_image: Image.Image | None, query: str, **kwargs) -> RegionAnswer: ...


class ModelRegionSolver:
    """Region selection by a vision-language model with the paper's prompt."""

    needs_image = True

    def __init__(self, backend: VLMBackend, *, max_attempts: int = DEFAULT_ATTEMPTS,
                 params: GenerationParams | None = None):
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.backend = backend
        self.max_attempts = max_attempts
        self.params = params
        self.name = backend.backend_id

    def build_request(self, frame_image: Image.Image | None, query: str,
                      ref: str = "") -> GenerationRequest:
        content: list = [] if frame_image is None else [frame_image]
        content.append(region_prompt(query))
        params = self.params or GenerationParams(temperature=0.0, max_tokens=64)
        return GenerationRequest(messages=[Message(role="user", content=content)], params=params,
                                 task="impact.regions", ref=ref)

    def ask(self, frame_image: Image.Image | None, query: str, *, ref: str = "",
            cancel: threading.Event | None = None) -> Asked[tuple[list[str], list[str]]]:
        """The model's reading of one frame (with the partner's, when the backend is paired)."""
        request = self.build_request(frame_image, query, ref)
        request.cancel = cancel
        return ask(self.backend, request, read_regions, attempts=self.max_attempts)

    def select(self, frame_image: Image.Image | None, query: str, *, ref: str = "",
               cancel: threading.Event | None = None) -> RegionAnswer:
        return region_answer(self.ask(frame_image, query, ref=ref, cancel=cancel), self.name)


def region_answer(asked: Asked[tuple[list[str], list[str]]], source: str) -> RegionAnswer:
    """A RegionAnswer from what asking gave (an unparsed or failed call keeps its raw reply)."""
    kept = {"raw": asked.raw, "attempts": asked.attempts, "source": source,
            "reasoning": asked.reasoning, "usage": reasoning_usage(asked)}
    if asked.failed:
        return RegionAnswer([], [], error=f"backend error: {asked.error}", **kept)
    if asked.value is None:
        reading = read_region_answer(asked.raw)
        why = reading.reason or no_label_reason(reading.unmapped)
        return RegionAnswer([], reading.unmapped, error=f"unparsed: {why}", **kept)
    labels, unmapped = asked.value
    return RegionAnswer(labels, unmapped, **kept)


BASELINE_NAME = "baseline (text-only: body-part words of the query)"


def baseline_regions(query: str) -> list[str]:
    """Labels named by the query's own words (synonyms included), in order of mention."""
    labels, _ = find_region_words(query or "")
    return labels


def baseline_answer(query: str) -> RegionAnswer:
    labels, words = find_region_words(query or "")
    if labels:
        note = f"text-only baseline: from the query words {', '.join(repr(w) for w in words)}"
    else:
        note = "text-only baseline: the query names no body part, so no region is selected"
    return RegionAnswer(labels=labels, unmapped=[], raw=", ".join(labels), source=BASELINE_NAME,
                        note=note)


class BaselineRegionSolver:
    """Same interface as ModelRegionSolver; the frame is ignored (text only)."""

    name = BASELINE_NAME
    needs_image = False

    def select(self, frame_image: Image.Image | None, query: str, **_: object) -> RegionAnswer:
        return baseline_answer(query)


# -- which solvers a backend gets -------------------------------------------------------------

@dataclass(frozen=True)
class ImpactSolvers:
    """When (temporal) and where (regions) for one backend."""

    temporal: TemporalSolver
    regions: RegionSolver


def solvers_for(backend: VLMBackend, settings: SessionSettings | None = None, *,
                style: str | None = "auto", max_retries: int = 2) -> ImpactSolvers:
    """The solvers for `backend`; `settings.max_frames` (the Model panel's cap) bounds the frames
    sent per clip, `style` picks the Table 7 prompt variant (auto: from the model name)."""
    if backend.is_baseline:
        return ImpactSolvers(temporal=MotionEnergyBaseline(), regions=BaselineRegionSolver())
    max_frames = settings.max_frames if settings is not None else None
    return ImpactSolvers(
        temporal=ModelTemporalSolver(backend, style=style, max_frames=max_frames,
                                     max_retries=max_retries),
        regions=ModelRegionSolver(backend))


def single_method_note(backend: VLMBackend) -> str:
    """With two no-model methods compared (`baseline:<method>` on each side): why this tab shows
    one side ('' otherwise). Impact has one no-model method per task, so there is no second one."""
    methods = method_pair(backend)
    if methods is None:
        return ""
    return (f"Impact has one no-model method per task (motion energy for when, the query's body-part "
            f"words for where), so {methods[1].backend_id} adds no second side here; comparing "
            "methods side by side is for Window search and Cloze.")
