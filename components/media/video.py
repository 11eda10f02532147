"""Video reading on decord, in bounded batches. (SKELETON: media helper implements.)"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

from components.media.frames import Frame


@dataclass(frozen=True)
class VideoInfo:
    path: str
    duration: float
    fps: float
    num_frames: int
    width: int
    height: int


class VideoSource:
    """Open once, read many times. Raises MediaError for missing/empty/truncated/undecodable files."""

    def __init__(self, path: str | Path, *, max_side: int | None = None): ...
    @property
    def info(self) -> VideoInfo: ...
    def frames_at_indices(self, indices: Sequence[int], *, max_side: int | None = None) -> list[Frame]: ...
    def frames_at(self, times: Sequence[float], *, max_side: int | None = None) -> list[Frame]: ...
    def sample_fps(self, start: float, end: float, fps: float = 1.0, cap: int | None = None,
                   *, max_side: int | None = None) -> list[Frame]: ...
    def iter_fps(self, start: float, end: float, fps: float = 1.0, *, max_side: int | None = None,
                 batch: int = 32) -> Iterator[Frame]:
        """Like sample_fps but yields in bounded batches (memory flat in window length)."""
    def bin_centred(self, n: int = 16, *, max_side: int | None = None) -> list[Frame]: ...
    def close(self) -> None: ...


def open_video(path: str | Path) -> VideoSource: ...
