"""Video reading on decord, in bounded batches.

Decisions (see also frames.py for the timestamp -> index rule):
- Frame.time is `index / fps` (constant-frame-rate model, fps = decord's average fps), so the
  time -> index -> time round trip is exact and consistent with clips.cut_clip.
- Frames are read with at most `batch` (default 32) indices per decord get_batch call, and each
  batch is resized before it is kept, so memory does not grow with the window or the movie.
  For large frames the batch shrinks further so one batch stays under ~256 MB of RGB data.
- With `max_side` / `max_height` the frames are decoded at reduced size by decord itself
  (VideoReader(width=, height=), ffmpeg's scaler inside the decoder): measured on 720p long-GOP
  1 fps sampling it is faster and lighter than decoding full size and resizing with PIL. Its output
  differs from a PIL bicubic resize of the full frame by a mean absolute error of ~2 grey levels
  (tests/media check <= 6 on 0..255). `exact_resize=True` gives the PIL path instead. At most two
  readers (sizes) are kept open per source.
- decord keeps decoding ahead in a background thread after every read and holds those frames
  (dmlc/decord#197, #208): left alone, a 3-minute 720p movie grew the process to 4.5 GB. Every
  read is followed by `reader.seek(0)`, which stops it; memory then stays flat (~100 MB).
- decord indexes the whole file when it opens it (reads every packet), so a truncated file
  usually fails right at open; the failure is diagnosed with PyAV (demuxing packets only) to
  say what is wrong and, for truncation, at what time the data stops.
"""
from __future__ import annotations

import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Iterator, Sequence

from components.common.errors import MediaError
from components.media.cache import file_identity
from components.media.frames import Frame, bin_centred_indices, endpoint_indices, fps_times, \
    index_to_time, size_for_max_height, size_for_max_side, time_to_index

REENCODE_HINT = "re-encode it with: ffmpeg -i in.mp4 -c:v libx264 -pix_fmt yuv420p out.mp4"
_BATCH_BYTES = 256 * 1024 * 1024
_MAX_READERS = 2


def format_hms(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


@dataclass(frozen=True)
class VideoInfo:
    path: str
    duration: float
    fps: float
    num_frames: int
    width: int
    height: int


def check_file(path: str | Path, what: str = "video") -> Path:
    """Missing / directory / empty checks shared by every reader in the media layer."""
    p = Path(path)
    if not p.exists():
        raise MediaError(f"{what} file not found: {p}. Check the path (and the data directory).")
    if not p.is_file():
        raise MediaError(f"{p} is not a file; give the path of a {what} file.")
    if p.stat().st_size == 0:
        raise MediaError(f"{p} is empty (0 bytes): the copy or download failed; copy the file again.")
    return p


def diagnose(path: str | Path, cause: BaseException | None = None) -> MediaError:
    """Explain why a video cannot be read, using PyAV to look at the container (no decoding)."""
    import av

    p = Path(path)
    size = p.stat().st_size
    try:
        container = av.open(str(p))
    except Exception as exc:  # noqa: BLE001 - every open failure is reported the same way
        with open(p, "rb") as fh:
            head = fh.read(12)
        if head[4:8] == b"ftyp":
            return MediaError(
                f"{p} is an incomplete MP4 (its index, the 'moov' atom, is missing): the file is "
                f"truncated, e.g. an interrupted download or copy. Copy it again, or if only this "
                f"copy exists, try to repair it and then {REENCODE_HINT}")
        return MediaError(f"{p} cannot be decoded as a video ({_short(exc)}): it is not a video file "
                          f"or it is corrupt. If it is a video, {REENCODE_HINT}")
    with container:
        if not container.streams.video:
            kinds = sorted({s.type for s in container.streams})
            if "audio" in kinds:
                return MediaError(f"{p} has no video stream (audio only); give a file with a video "
                                  f"track.")
            return MediaError(f"{p} has no video stream (streams: {', '.join(kinds) or 'none'}); "
                              f"give a video file.")
        stream = container.streams.video[0]
        expected = stream.frames or 0
        tb = stream.time_base
        start_pts = stream.start_time or 0
        count, last_time, truncated = 0, 0.0, False
        try:
            for packet in container.demux(stream):
                if packet.pts is None:
                    continue
                count += 1
                last_time = max(last_time, float((packet.pts - start_pts) * tb))
                if packet.pos is not None and packet.pos >= 0 and packet.pos + packet.size > size:
                    truncated = True
                    break
        except Exception:  # noqa: BLE001 - a demux error part-way is what truncation looks like
            truncated = True
        if expected and count < expected:
            truncated = True
    if truncated:
        return MediaError(f"{p} is truncated at {format_hms(last_time)} (the data stops there): "
                          f"copy the complete file again, or cut the readable part with "
                          f"ffmpeg -i in.mp4 -t {format_hms(last_time)} -c:v libx264 out.mp4")
    return MediaError(f"{p} could not be decoded ({_short(cause)}); {REENCODE_HINT}")


def _short(exc: BaseException | None) -> str:
    if exc is None:
        return "unknown error"
    text = str(exc).strip().splitlines()
    msg = text[-1] if text else type(exc).__name__
    return msg[:200]


class VideoSource:
    """Open once, read many times. Raises MediaError for missing/empty/truncated/undecodable files."""

    def __init__(self, path: str | Path, *, max_side: int | None = None):
        self.path = check_file(path)
        self.max_side = max_side
        self._readers: OrderedDict[tuple[int, int] | None, object] = OrderedDict()
        self._lock = threading.RLock()
        reader = self._reader(None)
        try:
            num_frames = len(reader)
            fps = float(reader.get_avg_fps())
            height, width = reader[0].shape[:2] if num_frames else (0, 0)
            reader.seek(0)  # stop decord decoding ahead in the background (see _read_batch)
        except Exception as exc:  # noqa: BLE001 - decord raises DECORDError / RuntimeError
            raise diagnose(self.path, exc) from None
        if num_frames <= 0 or fps <= 0:
            raise MediaError(f"{self.path} has a video stream with no decodable frames; {REENCODE_HINT}")
        self._info = VideoInfo(str(self.path), num_frames / fps, fps, num_frames, int(width), int(height))

    # -- readers ---------------------------------------------------------------------------------
    def _reader(self, size: tuple[int, int] | None):
        """decord reader decoding at `size` (w, h), or full size for None; small LRU."""
        import decord

        with self._lock:
            if size in self._readers:
                self._readers.move_to_end(size)
                return self._readers[size]
            kwargs = {} if size is None else {"width": size[0], "height": size[1]}
            try:
                # num_threads=0: one decoding thread per core (ffmpeg's default); 1 left half the machine idle.
                reader = decord.VideoReader(str(self.path), ctx=decord.cpu(0), num_threads=0, **kwargs)
            except Exception as exc:  # noqa: BLE001
                raise diagnose(self.path, exc) from None
            self._readers[size] = reader
            while len(self._readers) > _MAX_READERS:
                self._readers.popitem(last=False)
            return reader

    @property
    def info(self) -> VideoInfo:
        return self._info

    @property
    def fps(self) -> float:
        return self._info.fps

    @property
    def num_frames(self) -> int:
        return self._info.num_frames

    @property
    def duration(self) -> float:
        return self._info.duration

    @property
    def size(self) -> tuple[int, int]:
        return self._info.width, self._info.height

    def index_at(self, t: float) -> int:
        """Frame index shown at time t: floor(t * fps + 0.5) clamped to [0, num_frames - 1]."""
        return time_to_index(t, self._info.fps, self._info.num_frames)

    def time_of(self, index: int) -> float:
        return index_to_time(index, self._info.fps)

    # -- reading ---------------------------------------------------------------------------------
    def _target(self, max_side: int | None, max_height: int | None = None) -> tuple[int, int] | None:
        """Output size (w, h) for the limits, or None for full size. max_side falls back to the
        source's default; with both limits the stricter one wins."""
        side = max_side if max_side is not None else self.max_side
        w, h = size_for_max_side(self._info.width, self._info.height, side)
        if max_height and h > max_height:
            w, h = size_for_max_height(self._info.width, self._info.height, max_height)
        return None if (w, h) == (self._info.width, self._info.height) else (w, h)

    def _batch_limit(self, size: tuple[int, int] | None, batch: int) -> int:
        w, h = size or (self._info.width, self._info.height)
        return max(1, min(batch, _BATCH_BYTES // max(1, w * h * 3)))

    def _read_batch(self, indices: list[int], size: tuple[int, int] | None,
                    in_decoder: bool = True) -> list[Frame]:
        """Decode `indices` at `size` (None: full size), by decord's scaler when `in_decoder`,
        else at full size then PIL bicubic (exact_resize)."""
        from PIL import Image

        with self._lock:
            reader = self._reader(size if in_decoder else None)
            try:
                arrays = reader.get_batch(indices).asnumpy()
                # decord keeps decoding ahead after get_batch and holds those frames (memory
                # grows with the movie: dmlc/decord#197, #208); seeking back stops it.
                reader.seek(0)
            except Exception as exc:  # noqa: BLE001 - DECORDError when data is missing/corrupt
                t = self.time_of(min(indices))
                raise MediaError(
                    f"{self.path} could not be decoded near {format_hms(t)} (frames {min(indices)}-"
                    f"{max(indices)}: {_short(exc)}); the file is truncated or corrupt from there. "
                    f"{REENCODE_HINT[0].upper() + REENCODE_HINT[1:]}") from None
        frames = []
        for idx, arr in zip(indices, arrays):
            image = Image.fromarray(arr)
            if size is not None and image.size != size:
                image = image.resize(size, Image.Resampling.BICUBIC)
            frames.append(Frame(image=image, time=self.time_of(idx), index=int(idx)))
        return frames

    def iter_indices(self, indices: Sequence[int], *, max_side: int | None = None,
                     batch: int = 32, max_height: int | None = None,
                     exact_resize: bool = False) -> Iterator[Frame]:
        """Yield frames for `indices` (any order, repeats allowed) reading <= `batch` at a time."""
        n = self._info.num_frames
        for i in indices:
            if not 0 <= int(i) < n:
                raise ValueError(f"frame index {i} outside [0, {n - 1}] for {self.path}")
        size = self._target(max_side, max_height)
        step = self._batch_limit(None if exact_resize else size, batch)
        for k in range(0, len(indices), step):
            yield from self._read_batch([int(i) for i in indices[k:k + step]], size, not exact_resize)

    def frames_at_indices(self, indices: Sequence[int], *, max_side: int | None = None,
                          max_height: int | None = None, exact_resize: bool = False) -> list[Frame]:
        """Frames by index. max_side / max_height limit the size (aspect kept, never upscaled);
        exact_resize=True decodes full size and resizes with PIL bicubic instead of in decord."""
        return list(self.iter_indices(list(indices), max_side=max_side, max_height=max_height,
                                      exact_resize=exact_resize))

    def frames_at(self, times: Sequence[float], *, max_side: int | None = None,
                  max_height: int | None = None, exact_resize: bool = False) -> list[Frame]:
        """Frames nearest to each time (seconds); see frames.time_to_index. Frame.time is the frame's
        own time (index / fps), not the requested time."""
        return self.frames_at_indices([self.index_at(t) for t in times], max_side=max_side,
                                      max_height=max_height, exact_resize=exact_resize)

    def sample_fps(self, start: float, end: float, fps: float = 1.0, cap: int | None = None,
                   *, max_side: int | None = None, max_height: int | None = None,
                   exact_resize: bool = False) -> list[Frame]:
        """Frames at `fps` over [start, end) (clipped to the video), at most `cap` (spread evenly)."""
        start, end = self._clip_window(start, end)
        return self.frames_at(fps_times(start, end, fps, cap), max_side=max_side,
                              max_height=max_height, exact_resize=exact_resize)

    def iter_fps(self, start: float, end: float, fps: float = 1.0, *, max_side: int | None = None,
                 batch: int = 32, max_height: int | None = None,
                 exact_resize: bool = False) -> Iterator[Frame]:
        """Like sample_fps but yields in bounded batches (memory flat in window length)."""
        start, end = self._clip_window(start, end)
        if fps <= 0:
            raise ValueError(f"fps must be > 0, got {fps}")
        size = self._target(max_side, max_height)
        step = self._batch_limit(None if exact_resize else size, batch)
        k = 0
        while True:
            times = []
            while len(times) < step:
                t = start + (k + len(times)) / fps
                if t >= end - 1e-9:
                    break
                times.append(t)
            if not times:
                return
            k += len(times)
            yield from self._read_batch([self.index_at(t) for t in times], size, not exact_resize)

    def bin_centred(self, n: int = 16, *, max_side: int | None = None, max_height: int | None = None,
                    exact_resize: bool = False) -> list[Frame]:
        """TempCloze sampling over the whole video (see frames.bin_centred_indices); TempCloze
        itself uses max_height=360."""
        return self.frames_at_indices(bin_centred_indices(self._info.num_frames, n),
                                      max_side=max_side, max_height=max_height,
                                      exact_resize=exact_resize)

    def endpoint(self, n: int = 16, *, max_side: int | None = None, max_height: int | None = None,
                 exact_resize: bool = False) -> list[Frame]:
        """Endpoint-inclusive sampling over the whole video (see frames.endpoint_indices)."""
        return self.frames_at_indices(endpoint_indices(self._info.num_frames, n), max_side=max_side,
                                      max_height=max_height, exact_resize=exact_resize)

    def _clip_window(self, start: float, end: float) -> tuple[float, float]:
        return max(0.0, float(start)), min(float(end), self._info.duration)

    def close(self) -> None:
        """Release the decoders. The source stays usable: the next read reopens them (sources from
        open_video are shared, so one caller closing must not break another)."""
        with self._lock:
            self._readers.clear()

    def __enter__(self) -> VideoSource:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_OPEN_CACHE: OrderedDict[tuple[str, str], VideoSource] = OrderedDict()
_OPEN_LOCK = threading.Lock()
_OPEN_CACHE_SIZE = 4


def open_video(path: str | Path) -> VideoSource:
    """A VideoSource for `path`, reused while the file is unchanged (LRU of 4 sources)."""
    p = check_file(path)
    key = (os.path.abspath(p), file_identity(p))
    with _OPEN_LOCK:
        if key in _OPEN_CACHE:
            _OPEN_CACHE.move_to_end(key)
            return _OPEN_CACHE[key]
    source = VideoSource(p)
    with _OPEN_LOCK:
        _OPEN_CACHE[key] = source
        while len(_OPEN_CACHE) > _OPEN_CACHE_SIZE:
            _OPEN_CACHE.popitem(last=False)
    return source
