"""Video reading: the PTS timeline from PyAV, frames from decord or PyAV, upright, in batches.

Timestamps (components/media/index.py has the rule):
- Opening a source reads the timeline of its first video stream from the container's packets
  (PTS per frame, keyframes; no decoding but one frame) with PyAV. `Frame.time` is the exact time
  of the frame returned: index / fps for a constant-frame-rate file (as before), the frame's own
  PTS (seconds from the first frame) otherwise. `frame_times` is that table.
- Time-based sampling (`frames_at`, `sample_fps`, `iter_fps`) asks for times; each time gives the
  frame whose time is nearest to it (half-way: the later frame; constant rate: floor(t * fps +
  0.5)), so a variable-frame-rate clip is sampled by real time. The index of a frame is its
  position in presentation order (decord's index).
- The timeline of a long video (>= 10,000 frames, ~7 min at 24 fps) is kept in the disk cache
  (components.media.cache, keyed by the file's identity), so reopening a prepared two-hour movie
  reads one small JSON file instead of every packet; decoders are opened on the first read only.

Decoders: decord is the fast path (random access, decodes at the target size). A stream decord
cannot open, counts differently from its packets, or fails to decode (AV1: decord's bundled
FFmpeg has no AV1 decoder), and one decord reads wrongly (open GOPs: wrong frames after a seek;
rotated streams: wrong shapes when scaled) is read with PyAV instead (components/media/readers.py), through the
same interface; `VideoSource.backend` says which one reads. No decoder's log text reaches a
message: errors say what is wrong with the file and what to do.

Rotation: a display matrix (MP4/MOV `rotate`, phone clips) is applied to every frame, as a
browser shows it (PyAV's `frame.rotation`, degrees counter-clockwise); `size` / `info` are the
displayed size. Mirroring matrices are not applied.

Memory:
- Frames are read with at most `batch` (default 32) indices per decoder call, and each batch is
  resized before it is kept, so memory does not grow with the window or the movie. For large
  frames the batch shrinks further so one batch stays under ~256 MB of RGB data.
- With `max_side` / `max_height` the frames are decoded at reduced size by the decoder's scaler
  (FFmpeg's, inside decord or PyAV): measured on 720p long-GOP 1 fps sampling it is faster and
  lighter than decoding full size and resizing with PIL. Its output differs from a PIL bicubic
  resize of the full frame by a mean absolute error of ~2 grey levels (tests/media check <= 6 on
  0..255). `exact_resize=True` gives the PIL path instead; `exact_resize="opencv"` decodes full
  size and resizes with OpenCV's bilinear `cv2.resize` as TempCloze's released scripts do (width
  `int(w * max_height / h)`): the same pixels as the released frames, and cheaper than PIL's
  bicubic. At most two readers (sizes) are kept open per source.
"""
from __future__ import annotations

import os
import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Iterator, Sequence

import numpy as np

from components.base.errors import MediaError
from components.base.lru import SingleFlightLRU
from components.datasource import local
from components.media.cache import DiskCache, file_identity
from components.media.frames import Frame, bin_centred_indices, endpoint_indices, fps_times, \
    size_for_max_height, size_for_max_side
from components.media.index import REENCODE_HINT, INDEX_VERSION, VideoIndex, build_index, \
    format_hms
from components.media.gop_pool import PIECES_IN_FLIGHT, DecoderShelf, read_sorted
from components.media.readers import DecordReader, PyAVReader, ReadFailed

__all__ = ["REENCODE_HINT", "VideoInfo", "VideoSource", "check_file", "format_hms", "frames_decoded",
           "open_video"]

_BATCH_BYTES = 256 * 1024 * 1024
_MAX_READERS = 2
#: the timeline of a video with this many frames is kept in the default disk cache (indexing
#: 10 minutes of 720p takes ~0.4 s; a short clip's is rebuilt faster than a file is found)
INDEX_CACHE_MIN_FRAMES = 10_000
DECODERS = ("auto", "decord", "pyav")
#: time-ordered requests this long are decoded by group of pictures (gop_pool.py)
POOL_MIN_FRAMES = 8
_POOL_BYTES = 192 * 1024 * 1024  # RGB frames finished by the pool's workers, all together
#: decoder threads of the pool (one codec thread each); None: one per usable core, at most 8
MAX_WORKERS = 8


_decoded_lock = threading.Lock()
_decoded = [0]


def frames_decoded() -> int:
    """Frames this process has asked the video decoders for so far, every source together (tests
    and benchmarks read it to tell a cache hit from a decode)."""
    with _decoded_lock:
        return _decoded[0]


def _count_decoded(n: int) -> None:
    with _decoded_lock:
        _decoded[0] += n


def default_workers() -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(MAX_WORKERS, cores))


@dataclass(frozen=True)
class VideoInfo:
    path: str
    duration: float
    fps: float
    num_frames: int
    width: int
    height: int


def check_file(path: str | Path, what: str = "video") -> Path:
    """Missing / directory / empty checks shared by every reader in the media layer. A file of a
    dataset repository not fetched yet is fetched first (components/datasource): every decoder
    then opens a local path."""
    p = local(path)
    if not p.exists():
        raise MediaError(f"{what} file not found: {p}. Check the path (and the data directory).")
    if not p.is_file():
        raise MediaError(f"{p} is not a file; give the path of a {what} file.")
    if p.stat().st_size == 0:
        raise MediaError(f"{p} is empty (0 bytes): the copy or download failed; copy the file again.")
    return p


def load_index(path: Path, identity: str, cache: DiskCache | None | bool = None) -> VideoIndex:
    """The video's timeline: from `cache` (None: the default disk cache; False: none) when
    stored, else built from the packets (and stored when `cache` was given or the video is long)."""
    store = DiskCache() if cache is None else cache or None
    params = {"what": "video-index", "v": INDEX_VERSION}
    holder = _Identity(identity)
    if store is not None:
        try:
            found = store.lookup_json(holder, params)
            if found is not None:
                return VideoIndex.from_json(found)
        except Exception:  # noqa: BLE001 - a stale or foreign entry: rebuild it
            pass
    index = build_index(path)
    if store is not None and (cache or index.num_frames >= INDEX_CACHE_MIN_FRAMES):
        try:
            store.store_json(holder, params, index.to_json())
        except OSError:  # a read-only cache folder costs speed, not correctness
            pass
    return index


@dataclass(frozen=True)
class _Identity:
    identity: str


def _resize_mode(exact_resize: bool | str) -> str:
    """"decoder" (False: the decoder's scaler), "bicubic" (True: PIL) or "opencv"."""
    if exact_resize in (False, None, "decoder"):
        return "decoder"
    if exact_resize in (True, "bicubic", "opencv"):
        return "bicubic" if exact_resize is True else str(exact_resize)
    raise ValueError(f"exact_resize must be False, True, 'bicubic' or 'opencv', not {exact_resize!r}")


def _upright(image, rotation: int):
    """Turn a decoded picture by its display rotation (degrees counter-clockwise)."""
    from PIL import Image

    if rotation == 90:
        return image.transpose(Image.Transpose.ROTATE_90)
    if rotation == 180:
        return image.transpose(Image.Transpose.ROTATE_180)
    if rotation == 270:
        return image.transpose(Image.Transpose.ROTATE_270)
    return image


class VideoSource:
    """Open once, read many times. Raises MediaError for missing/empty/truncated/undecodable files.

    `decoder`: "auto" (decord where it reads the stream, else PyAV), "decord" or "pyav".
    `index_cache`: where the timeline is kept (None: the default disk cache, for long videos
    only; a DiskCache: always; False: never)."""

    def __init__(self, path: str | Path, *, max_side: int | None = None, decoder: str = "auto",
                 index_cache: DiskCache | None | bool = None, workers: int | None = None):
        if decoder not in DECODERS:
            raise ValueError(f"decoder must be one of {', '.join(DECODERS)}, got {decoder!r}")
        self.path = check_file(path)
        self.max_side = max_side
        #: decoder threads for time-ordered requests (gop_pool.py)
        self.workers = max(1, int(workers)) if workers else default_workers()
        #: the file's identity (components.media.cache.file_identity), computed once at open
        self.identity = file_identity(self.path)
        self._decoder = decoder
        self._readers: SingleFlightLRU[tuple[int, int] | None, object] = SingleFlightLRU(
            _MAX_READERS, on_evict=lambda reader: reader.close())
        self._lock = threading.RLock()
        self._index = load_index(self.path, self.identity, index_cache)
        index = self._index
        self._shelf = DecoderShelf(self.path, index, threads=0 if self.workers == 1 else 1)
        self._backend: str | None = None if decoder == "auto" else decoder
        if decoder == "auto" and not index.decord_reads_right:
            self._backend = "pyav"
        width, height = index.display_size
        self._info = VideoInfo(str(self.path), index.duration, index.fps, index.num_frames,
                               int(width), int(height))

    # -- readers ---------------------------------------------------------------------------------
    def _reader(self, size: tuple[int, int] | None):
        """A reader decoding at `size` (w, h, coded orientation), or full size for None; small LRU.
        The first one decides the backend (decord when it reads the stream, else PyAV)."""
        with self._lock:  # held while making one: the first reader decides the backend
            return self._readers.get(size, lambda: self._new_reader(size))

    def _new_reader(self, size: tuple[int, int] | None):
        reader = None
        if self._backend in (None, "decord"):
            try:
                reader = DecordReader(self.path, size, self._index.num_frames)
                self._backend = "decord"
            except ReadFailed:
                if self._decoder == "decord":
                    raise MediaError(f"{self.path} cannot be read with decord; open it with "
                                     f"decoder='auto' (PyAV reads it).") from None
                self._use_pyav()
        if reader is None:
            try:
                reader = PyAVReader(self.path, self._index, size)
            except ReadFailed:
                raise MediaError(f"{self.path} could not be opened for decoding; "
                                 f"{REENCODE_HINT}") from None
        return reader

    def _use_pyav(self) -> None:
        for reader in self._readers.clear():
            reader.close()
        self._backend = "pyav"

    @property
    def backend(self) -> str | None:
        """"decord" or "pyav": the decoder reading this source (None before the first read)."""
        return self._backend

    @property
    def timeline(self) -> VideoIndex:
        """PTS, keyframes, rotation and codec of the video stream (components/media/index.py)."""
        return self._index

    @property
    def frame_times(self) -> np.ndarray:
        """Time (seconds) of every frame, by index; Frame.time of each frame read."""
        return self._index.times

    @property
    def rotation(self) -> int:
        """Degrees (counter-clockwise) the decoded pictures are turned to stand upright."""
        return self._index.rotation

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
        """Frame whose time is nearest to t (constant rate: floor(t * fps + 0.5)), clamped to
        [0, num_frames - 1]; see components/media/index.py."""
        return self._index.index_at(t)

    def time_of(self, index: int) -> float:
        """Time (seconds) of frame `index`: index / fps at a constant rate, else its PTS."""
        return self._index.time_of(index)

    # -- reading ---------------------------------------------------------------------------------
    def _target(self, max_side: int | None, max_height: int | None = None,
                resize: str = "decoder") -> tuple[int, int] | None:
        """Output size (w, h) for the limits, or None for full size. max_side falls back to the
        source's default; with both limits the stricter one wins. For "opencv" a height limit
        truncates the width as the released TempCloze scripts do (`int(w * (max_height / h))`)."""
        side = max_side if max_side is not None else self.max_side
        w, h = size_for_max_side(self._info.width, self._info.height, side)
        if max_height and h > max_height:
            w, h = size_for_max_height(self._info.width, self._info.height, max_height)
            if resize == "opencv":
                w = max(1, int(self._info.width * (max_height / self._info.height)))
        return None if (w, h) == (self._info.width, self._info.height) else (w, h)

    def _batch_limit(self, size: tuple[int, int] | None, batch: int) -> int:
        w, h = size or (self._info.width, self._info.height)
        return max(1, min(batch, _BATCH_BYTES // max(1, w * h * 3)))

    def _coded(self, size: tuple[int, int] | None) -> tuple[int, int] | None:
        """A displayed (w, h) as the decoder's (w, h): swapped for a quarter turn."""
        if size is None:
            return None
        return (size[1], size[0]) if self._index.rotation in (90, 270) else size

    def _to_frame(self, idx: int, arr: np.ndarray, size: tuple[int, int] | None,
                  resize: str = "bicubic") -> Frame:
        """The decoded array as an upright picture at `size`: resized (when the decoder did not)
        by PIL bicubic, or for "opencv" by `cv2.resize` (bilinear) before the picture is made."""
        from PIL import Image

        if resize == "opencv" and size is not None:
            if self._index.rotation:
                arr = np.asarray(_upright(Image.fromarray(arr), self._index.rotation))
            if (arr.shape[1], arr.shape[0]) != size:
                import cv2

                arr = cv2.resize(arr, size)  # INTER_LINEAR, OpenCV's default, as released
            return Frame(image=Image.fromarray(arr), time=self.time_of(idx), index=int(idx))
        image = _upright(Image.fromarray(arr), self._index.rotation)
        if size is not None and image.size != size:
            image = image.resize(size, Image.Resampling.BICUBIC)
        return Frame(image=image, time=self.time_of(idx), index=int(idx))

    def _read_batch(self, indices: list[int], size: tuple[int, int] | None,
                    resize: str = "decoder") -> list[Frame]:
        """Decode `indices` at `size` (None: full size; displayed orientation), by the decoder's
        scaler ("decoder"), else at full size then PIL bicubic ("bicubic") or OpenCV ("opencv")."""
        pairs = self._decode(indices, self._coded(size) if resize == "decoder" else None)
        return [self._to_frame(idx, arr, size, resize) for idx, arr in pairs]

    def _decode(self, indices: list[int], size: tuple[int, int] | None) -> list:
        """[(index, RGB array)] from the current backend; a decord failure moves the source to
        PyAV (in "auto" mode) before the data is called corrupt."""
        with self._lock:
            try:
                return self._reader(size).read(indices)
            except ReadFailed as exc:
                failed = exc
                if self._backend == "decord" and self._decoder == "auto":
                    self._use_pyav()
                    try:
                        return self._reader(size).read(indices)
                    except ReadFailed as again:
                        failed = again
            raise self._decode_error(indices, failed) from None

    def _decode_error(self, indices: list[int], failed: ReadFailed) -> MediaError:
        first, last = min(indices), max(indices)
        at = first if failed.at is None or not first <= failed.at <= last else failed.at
        return MediaError(
            f"{self.path} could not be decoded near {format_hms(self.time_of(at))} (frame {at}"
            + (f" of {first}-{last}" if last > first else "")
            + "): the file is truncated or corrupt from there. "
            f"{REENCODE_HINT[0].upper() + REENCODE_HINT[1:]}")

    def iter_indices(self, indices: Sequence[int], *, max_side: int | None = None,
                     batch: int = 32, max_height: int | None = None,
                     exact_resize: bool | str = False) -> Iterator[Frame]:
        """Yield frames for `indices` (any order, repeats allowed) reading <= `batch` at a time."""
        n = self._info.num_frames
        for i in indices:
            if not 0 <= int(i) < n:
                raise ValueError(f"frame index {i} outside [0, {n - 1}] for {self.path}")
        resize = _resize_mode(exact_resize)
        size = self._target(max_side, max_height, resize)
        step = self._batch_limit(None if resize != "decoder" else size, batch)
        yield from self._frames([int(i) for i in indices], size, resize, step)

    def _frames(self, indices: list[int], size: tuple[int, int] | None, resize: str,
                step: int) -> Iterator[Frame]:
        """Time-ordered requests of POOL_MIN_FRAMES or more go to the group-of-pictures pool
        (gop_pool.py: linear, parallel); others to the backend reader in batches of `step`."""
        _count_decoded(len(indices))
        if len(indices) >= POOL_MIN_FRAMES and all(a <= b for a, b in zip(indices, indices[1:])):
            yield from self._pooled(indices, size, resize, step)
            return
        for k in range(0, len(indices), step):
            yield from self._read_batch(indices[k:k + step], size, resize)

    def _pooled(self, indices: list[int], size: tuple[int, int] | None, resize: str,
                step: int) -> Iterator[Frame]:
        unique = list(dict.fromkeys(indices))
        repeats = Counter(indices) if len(unique) < len(indices) else None
        coded = self._coded(size) if resize == "decoder" else None
        w, h = coded or (self._index.width, self._index.height)
        # pieces small enough that every worker's finished pieces stay under _POOL_BYTES
        piece = max(1, min(step, _POOL_BYTES // (self.workers * PIECES_IN_FLIGHT * w * h * 3)))
        frames = read_sorted(self.path, self._index, unique, coded, workers=self.workers,
                             piece=piece, shelf=self._shelf)
        try:
            # frames first: zip then runs the generator to its end (its decoders go back to the shelf)
            for (idx, arr), wanted in zip(frames, unique):
                frame = self._to_frame(idx, arr, size, resize)
                for _ in range(repeats[wanted] if repeats else 1):
                    yield frame if repeats is None else Frame(frame.image, frame.time, frame.index)
        except ReadFailed as exc:
            raise self._decode_error(unique, exc) from None
        finally:
            frames.close()

    def frames_at_indices(self, indices: Sequence[int], *, max_side: int | None = None,
                          max_height: int | None = None, exact_resize: bool | str = False) -> list[Frame]:
        """Frames by index. max_side / max_height limit the size (aspect kept, never upscaled);
        exact_resize=True decodes full size and resizes with PIL bicubic instead of in the decoder,
        "opencv" with OpenCV's bilinear resize as TempCloze's released scripts."""
        return list(self.iter_indices(list(indices), max_side=max_side, max_height=max_height,
                                      exact_resize=exact_resize))

    def frames_at(self, times: Sequence[float], *, max_side: int | None = None,
                  max_height: int | None = None, exact_resize: bool | str = False) -> list[Frame]:
        """Frames nearest to each time (seconds); see frames.time_to_index. Frame.time is the frame's
        own time (index / fps), not the requested time."""
        return self.frames_at_indices([self.index_at(t) for t in times], max_side=max_side,
                                      max_height=max_height, exact_resize=exact_resize)

    def sample_fps(self, start: float, end: float, fps: float = 1.0, cap: int | None = None,
                   *, max_side: int | None = None, max_height: int | None = None,
                   exact_resize: bool | str = False) -> list[Frame]:
        """Frames at `fps` over [start, end) (clipped to the video), at most `cap` (spread evenly)."""
        start, end = self._clip_window(start, end)
        return self.frames_at(fps_times(start, end, fps, cap), max_side=max_side,
                              max_height=max_height, exact_resize=exact_resize)

    def iter_fps(self, start: float, end: float, fps: float = 1.0, *, max_side: int | None = None,
                 batch: int = 32, max_height: int | None = None,
                 exact_resize: bool | str = False) -> Iterator[Frame]:
        """Like sample_fps but yields in bounded batches (memory flat in window length)."""
        start, end = self._clip_window(start, end)
        if fps <= 0:
            raise ValueError(f"fps must be > 0, got {fps}")
        resize = _resize_mode(exact_resize)
        size = self._target(max_side, max_height, resize)
        step = self._batch_limit(None if resize != "decoder" else size, batch)
        indices, k = [], 0
        while start + k / fps < end - 1e-9:  # the times sample_fps takes without a cap
            indices.append(self.index_at(start + k / fps))
            k += 1
        yield from self._frames(indices, size, resize, step)

    def bin_centred(self, n: int = 16, *, max_side: int | None = None, max_height: int | None = None,
                    exact_resize: bool | str = False) -> list[Frame]:
        """TempCloze sampling over the whole video (see frames.bin_centred_indices); TempCloze
        itself uses max_height=360."""
        return self.frames_at_indices(bin_centred_indices(self._info.num_frames, n),
                                      max_side=max_side, max_height=max_height,
                                      exact_resize=exact_resize)

    def endpoint(self, n: int = 16, *, max_side: int | None = None, max_height: int | None = None,
                 exact_resize: bool | str = False) -> list[Frame]:
        """Endpoint-inclusive sampling over the whole video (see frames.endpoint_indices)."""
        return self.frames_at_indices(endpoint_indices(self._info.num_frames, n), max_side=max_side,
                                      max_height=max_height, exact_resize=exact_resize)

    def _clip_window(self, start: float, end: float) -> tuple[float, float]:
        return max(0.0, float(start)), min(float(end), self._info.duration)

    def close(self) -> None:
        """Release the decoders. The source stays usable: the next read reopens them (sources from
        open_video are shared, so one caller closing must not break another)."""
        with self._lock:
            for reader in self._readers.clear():
                reader.close()
        self._shelf.close()

    def __enter__(self) -> VideoSource:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_OPEN_CACHE_SIZE = 4
_OPEN_CACHE: SingleFlightLRU[tuple, VideoSource] = SingleFlightLRU(_OPEN_CACHE_SIZE)


def _stat_key(p: Path) -> tuple:
    st = p.stat()
    return st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev


def open_video(path: str | Path) -> VideoSource:
    """A VideoSource for `path`, reused while the file is unchanged (same size, mtime and inode;
    LRU of 4 sources). The file is hashed once, when its source is made, not per call."""
    p = check_file(path)
    return _OPEN_CACHE.get((os.path.abspath(p), _stat_key(p)), lambda: VideoSource(p))
