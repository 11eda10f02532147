"""A movie for window search: a video, optional subtitles, fixed-length chunks (pure; no gradio).

Chunks are the retrieval units of Movie RAG (paper §3): [i*L, min((i+1)*L, T)) for L = chunk
seconds (default 180), the last chunk shorter when T is not a multiple of L. Frames are sampled at
1 fps (at most `chunk_frame_cap` per chunk, spread evenly when more) and cached on disk per chunk
through components.media.DiskCache, so a second `prepare` decodes nothing.

Memory: `prepare` and `iter_chunk_frames` hold one chunk's frames at a time; a two-hour movie costs
the same peak memory as a short one (beyond the disk cache). Frames are downscaled to `max_side`
before they are stored (models downscale anyway; a 1080p chunk would otherwise be ~1 GB).
"""
from __future__ import annotations

import math
import threading
from pathlib import Path
from collections.abc import Callable, Iterator

from components import datasource
from components.base.errors import MediaError, UserError
from components.common.sent_frames import sent_frames
from components.media import Cue, DiskCache, Frame, cues_in_window, file_identity, load_subtitles, \
    open_video
from components.media.video import check_file
from components.window_search.types import Chunk

DEFAULT_CHUNK_SECONDS = 180.0
DEFAULT_CHUNK_FRAME_CAP = 180
DEFAULT_MAX_SIDE = 448


def chunk_bounds(duration: float, chunk_seconds: float = DEFAULT_CHUNK_SECONDS) -> list[tuple[float, float]]:
    """[(start, end)] of fixed-length chunks covering [0, duration]; the last one may be shorter."""
    if chunk_seconds <= 0:
        raise ValueError(f"chunk seconds must be > 0, got {chunk_seconds}")
    if duration <= 0:
        return []
    n = max(1, math.ceil(duration / chunk_seconds - 1e-9))
    return [(i * chunk_seconds, min((i + 1) * chunk_seconds, duration)) for i in range(n)]


class Movie:
    """Video + optional subtitles. Satisfies the agent's MovieView (movie_id, duration, frames, cues)."""

    def __init__(self, video: str | Path, subtitles: str | Path | None = None, *,
                 movie_id: str | None = None, chunk_seconds: float = DEFAULT_CHUNK_SECONDS,
                 chunk_frame_cap: int | None = DEFAULT_CHUNK_FRAME_CAP,
                 max_side: int | None = DEFAULT_MAX_SIDE, cache: DiskCache | None = None):
        self.video = check_file(video)
        self.subtitles = datasource.local(subtitles) if subtitles else None  # fetched if from a repository
        if self.subtitles is not None and not self.subtitles.is_file():
            raise MediaError(f"subtitle file not found: {self.subtitles}. Check the path, or leave "
                             "the subtitles out (the movie is searched by its frames only).")
        self.movie_id = movie_id or self.video.stem
        if chunk_seconds <= 0:
            raise UserError(f"chunk seconds must be > 0 (got {chunk_seconds}).")
        self.chunk_seconds = float(chunk_seconds)
        self.chunk_frame_cap = chunk_frame_cap
        self.max_side = max_side
        self.cache = cache or DiskCache()
        self._cues: list[Cue] = load_subtitles(self.subtitles) if self.subtitles else []
        self._source = None
        self._lock = threading.Lock()
        #: frames decoded from the video (cache misses), for tests and progress reports
        self.decoded_frames = 0

    # -- video -----------------------------------------------------------------------------------
    @property
    def source(self):
        with self._lock:
            if self._source is None:
                self._source = open_video(self.video)
            return self._source

    def close(self) -> None:
        """Release the decoder (the disk cache stays); a later call reopens the video."""
        with self._lock:
            source, self._source = self._source, None
        if source is not None:
            source.close()

    @property
    def duration(self) -> float:
        return float(self.source.info.duration)

    @property
    def has_subtitles(self) -> bool:
        return bool(self._cues)

    @property
    def chunks(self) -> list[Chunk]:
        return [Chunk(index=i, start=s, end=e)
                for i, (s, e) in enumerate(chunk_bounds(self.duration, self.chunk_seconds))]

    def chunk(self, index: int) -> Chunk:
        chunks = self.chunks
        if not 0 <= index < len(chunks):
            raise IndexError(f"chunk {index} out of range (movie has {len(chunks)} chunks)")
        return chunks[index]

    def _params(self, start: float, end: float, fps: float, cap: int | None) -> dict:
        return {"start": round(start, 3), "end": round(end, 3), "fps": fps, "cap": cap,
                "max_side": self.max_side}

    def is_cached(self, start: float, end: float, fps: float = 1.0, cap: int | None = None) -> bool:
        """True when the frames of this window are already in the disk cache (DiskCache.holds)."""
        start, end = max(0.0, float(start)), min(float(end), self.duration)
        return self.cache.holds(self.source, "frames", self._params(start, end, fps, cap))

    def frames(self, start: float, end: float, fps: float = 1.0, cap: int | None = None) -> list[Frame]:
        """Frames at `fps` over [start, end) clipped to the movie, at most `cap` (cached on disk)."""
        start, end = max(0.0, float(start)), min(float(end), self.duration)
        if end <= start:
            return []
        params = self._params(start, end, fps, cap)

        def compute() -> list[Frame]:
            frames = self.source.sample_fps(start, end, fps, cap, max_side=self.max_side)
            self.decoded_frames += len(frames)
            return frames

        # the source carries the file's identity (hashed once at open, not per request)
        return self.cache.get_or_compute_frames(self.source, params, compute)

    def sent_frames(self, start: float, end: float, fps: float = 1.0, cap: int | None = None) -> list[Frame]:
        """`frames(...)` as a model is sent them: each picture a JPEG made once at the quality
        and size an API backend sends (components.common.sent_frames) and kept on disk, so a
        request reads the bytes it sends instead of decoding the stored frames and encoding them
        again."""
        start, end = max(0.0, float(start)), min(float(end), self.duration)
        if end <= start:
            return []
        params = {"use": "window-frames", **self._params(start, end, fps, cap)}
        return sent_frames(self.source, params, lambda: self.frames(start, end, fps, cap), cache=self.cache)

    def chunk_frames(self, index: int) -> list[Frame]:
        c = self.chunk(index)
        return self.frames(c.start, c.end, 1.0, self.chunk_frame_cap)

    def iter_chunk_frames(self) -> Iterator[tuple[Chunk, list[Frame]]]:
        """(chunk, its frames) one chunk at a time: only one chunk's frames are alive at once."""
        for c in self.chunks:
            yield c, self.frames(c.start, c.end, 1.0, self.chunk_frame_cap)

    def prepare(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Sample and cache every chunk's frames; returns the number of frames decoded now."""
        before = self.decoded_frames
        chunks = self.chunks
        for i, c in enumerate(chunks):
            if not self.is_cached(c.start, c.end, 1.0, self.chunk_frame_cap):
                self.frames(c.start, c.end, 1.0, self.chunk_frame_cap)  # cached; dropped at once
            if progress:
                progress(i + 1, len(chunks))
        return self.decoded_frames - before

    # -- subtitles -------------------------------------------------------------------------------
    @property
    def all_cues(self) -> list[Cue]:
        return list(self._cues)

    def cues(self, start: float, end: float) -> list[Cue]:
        return cues_in_window(self._cues, start, end)

    def chunk_text(self, index: int) -> str:
        c = self.chunk(index)
        return " ".join(cue.text for cue in self.cues(c.start, c.end))

    def identity(self) -> dict:
        """What the retrieval cache key depends on besides the video file itself."""
        return {"subtitles": file_identity(self.subtitles) if self.subtitles else None,
                "chunk_seconds": self.chunk_seconds, "chunk_frame_cap": self.chunk_frame_cap,
                "max_side": self.max_side}

    def __repr__(self) -> str:
        return f"Movie({self.movie_id!r}, video={str(self.video)!r}, chunk_seconds={self.chunk_seconds})"
