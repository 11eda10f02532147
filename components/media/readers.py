"""Frame readers with one interface: `read(indices) -> [(index, RGB array)]` at a fixed size.

- `DecordReader`: decord, the fast path for random access (seeks per batch, frames decoded at the
  target size by its scaler). Reading is followed by `seek(0)`: decord keeps decoding ahead in a
  background thread after every read and holds those frames (dmlc/decord#197, #208); seeking
  stops it, so memory stays flat.
- `PyAVReader`: PyAV (FFmpeg 8 with libdav1d), for every stream decord cannot open or decode
  (AV1, ...). It decodes forward from the keyframe at or before the first wanted frame, keeps
  decoding while the next wanted frame lies in the same group, and seeks otherwise; only wanted
  frames are converted to RGB (at the target size, by FFmpeg's scaler).

Both return arrays in the coded orientation (rotation is applied by the caller) and never leak
a decoder's log text: failures raise `ReadFailed`, which the caller turns into a MediaError.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from components.media.index import VideoIndex


class ReadFailed(Exception):
    """A reader could not open or decode; the message is for logs, never for users. `at`: the
    frame index where decoding failed, when known."""

    def __init__(self, message: str, at: int | None = None):
        super().__init__(message)
        self.at = at


class DecordReader:
    name = "decord"

    def __init__(self, path: Path, size: tuple[int, int] | None, num_frames: int):
        import decord

        kwargs = {} if size is None else {"width": size[0], "height": size[1]}
        try:
            # num_threads=0: one decoding thread per core (ffmpeg's default); 1 left half the machine idle.
            self._reader = decord.VideoReader(str(path), ctx=decord.cpu(0), num_threads=0, **kwargs)
            count = len(self._reader)
        except Exception as exc:  # noqa: BLE001 - decord raises DECORDError / RuntimeError
            raise ReadFailed(f"decord cannot open: {type(exc).__name__}") from None
        if count != num_frames:
            raise ReadFailed(f"decord counts {count} frames, the packets {num_frames}")

    def read(self, indices: Sequence[int]) -> list[tuple[int, np.ndarray]]:
        try:
            arrays = self._reader.get_batch(list(indices)).asnumpy()
            self._reader.seek(0)
        except Exception as exc:  # noqa: BLE001 - DECORDError when data is missing/corrupt
            raise ReadFailed(f"decord cannot decode: {type(exc).__name__}") from None
        return list(zip((int(i) for i in indices), arrays))

    def close(self) -> None:
        self._reader = None


class PyAVReader:
    name = "pyav"

    def __init__(self, path: Path, index: VideoIndex, size: tuple[int, int] | None,
                 threads: int = 0):
        import av
        from av.video.reformatter import VideoReformatter

        self._index = index
        self._size = size
        try:
            self._container = av.open(str(path))
            self._stream = self._container.streams.video[0]
        except Exception as exc:  # noqa: BLE001
            raise ReadFailed(f"PyAV cannot open: {type(exc).__name__}") from None
        self._stream.thread_type = "AUTO"
        self._stream.thread_count = threads
        # one scaler for all of this reader's frames: `frame.to_ndarray(format=...)` builds a new
        # one per frame (~3-5 ms; converting a 720p frame itself takes 0.7 ms)
        self._reformatter = VideoReformatter()
        self._pts = index.pts  # sorted: a frame's index is found by bisection (no per-open table)
        self._frames = None   # the decode generator after the last seek
        self._pos = -1        # index of the last frame decoded from it

    def read(self, indices: Sequence[int]) -> list[tuple[int, np.ndarray]]:
        got: dict[int, tuple[int, np.ndarray]] = {}
        for wanted in sorted({int(i) for i in indices}):
            got[wanted] = self._get(wanted)
        return [got[int(i)] for i in indices]

    def _seek(self, index: int | None) -> None:
        """Position before the keyframe at or before `index` (None: the very start)."""
        key = 0 if index is None else self._index.keyframe_at_or_before(index)
        self._container.seek(int(self._index.pts[key]), stream=self._stream, backward=True)
        self._frames = self._container.decode(self._stream)
        self._pos = -1

    def _get(self, wanted: int) -> tuple[int, np.ndarray]:
        if (self._frames is None or wanted <= self._pos
                or self._index.keyframe_at_or_before(wanted) > self._pos):
            self._seek(wanted)
            found = self._decode_to(wanted, fresh=True)
            if found is None:  # the seek landed past the frame (a sparse container index)
                self._seek(None)
                found = self._decode_to(wanted, fresh=False)
        else:
            found = self._decode_to(wanted, fresh=False)
        idx, frame = found
        return idx, self._convert(frame)

    def _decode_to(self, wanted: int, fresh: bool):
        """(index, frame) of the wanted frame, decoding forward; when the decoder never returns
        it, the next frame it does return (its own index), or at the end the last one. None when
        a fresh seek's first frame is already past `wanted`."""
        last = None
        try:
            for frame in self._frames:
                idx = self._index_of(frame.pts)
                if idx is None:
                    continue
                if fresh and idx > wanted:
                    return None
                fresh = False
                self._pos, last = idx, frame
                if idx >= wanted:
                    return idx, frame
        except Exception as exc:  # noqa: BLE001 - InvalidDataError and friends
            self._frames = None
            raise ReadFailed(f"PyAV cannot decode: {type(exc).__name__}",
                             at=max(wanted if self._pos < 0 else self._pos + 1, 0)) from None
        self._frames = None
        if last is not None:
            return self._pos, last
        raise ReadFailed(f"frame {wanted} not found")

    def _index_of(self, pts: int | None) -> int | None:
        if pts is None:
            return None
        i = int(np.searchsorted(self._pts, pts))
        return i if i < len(self._pts) and self._pts[i] == pts else None

    def _convert(self, frame) -> np.ndarray:
        if self._size is None:
            return self._reformatter.reformat(frame, format="rgb24").to_ndarray()
        w, h = self._size
        return self._reformatter.reformat(frame, width=w, height=h, format="rgb24",
                                          interpolation="BICUBIC").to_ndarray()

    def close(self) -> None:
        try:
            self._container.close()
        except Exception:  # noqa: BLE001
            pass
        self._frames = None
