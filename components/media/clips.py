"""Writing clips browsers play (H.264 MP4, yuv420p, +faststart, no audio) with PyAV.

Frame-accurate: a window [start, end] (seconds) of a source is the frames with indices
start_idx = floor(start * fps + 0.5) .. end_idx = floor(end * fps + 0.5) (end exclusive), the same
rule as frames.time_to_index; every output keeps the source frame rate. Sources are read through
PyAV, decoding linearly from the keyframe before the window, and streamed into the encoder, so
memory stays bounded (reverse works segment by segment from the end); the
re-ordering operations (reverse, thirds, loop) still refuse clips over MAX_CLIP_FRAMES frames,
since they are meant for short clips (a long one is almost always a wrong window).
Odd frame sizes are cropped by one pixel to even sizes (yuv420p needs even width and height).
"""
from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path
from collections.abc import Iterable, Iterator, Sequence

from components.base.errors import MediaError
from components.base.io import atomic_temp_path, commit_temp
from components.media.video import open_video

MAX_CLIP_FRAMES = 5000
# x264 preset: ffmpeg's default, as the TempCloze clips were made. For interactive cuts of long
# 720p windows pass preset="veryfast" (about 2x faster, slightly lower quality at the same crf).
DEFAULT_PRESET = "medium"
_BATCH = 32
_SEGMENT_BYTES = 256 * 1024 * 1024  # reverse: RGB frames held at once


def _rate(fps: float) -> Fraction:
    if fps <= 0:
        raise ValueError(f"fps must be > 0, got {fps}")
    return Fraction(fps).limit_denominator(1001)


def _to_array(image):
    import numpy as np

    if hasattr(image, "convert"):  # PIL image
        return np.asarray(image.convert("RGB"))
    arr = np.asarray(image)
    if arr.ndim == 2:
        arr = np.stack([arr] * 3, axis=-1)
    if arr.ndim != 3 or arr.shape[2] not in (3, 4):
        raise ValueError(f"expected HxWx3 uint8 frames, got shape {arr.shape}")
    return np.ascontiguousarray(arr[..., :3].astype(np.uint8, copy=False))


def write_video_from_arrays(frames: Iterable, out: str | Path, fps: float, crf: int = 18,
                            preset: str = DEFAULT_PRESET) -> Path:
    """HxWx3 uint8 arrays (or PIL images) -> H.264 MP4 (yuv420p, crf, +faststart, no audio).
    Frames may come from a generator; sizes must all match the first frame. Written to a
    temporary file and renamed, so `out` is never left half-written."""
    import av
    import numpy as np

    out = Path(out)
    tmp = atomic_temp_path(out)
    try:
        container = av.open(str(tmp), mode="w", format="mp4", options={"movflags": "+faststart"})
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    count = 0
    try:
        stream = None
        size = None
        for image in frames:
            arr = _to_array(image)
            if stream is None:
                h, w = arr.shape[0] - arr.shape[0] % 2, arr.shape[1] - arr.shape[1] % 2
                if h < 2 or w < 2:
                    raise ValueError(f"frames of shape {arr.shape} are too small for H.264")
                size = (h, w)
                stream = container.add_stream("libx264", rate=_rate(fps))
                stream.width, stream.height, stream.pix_fmt = w, h, "yuv420p"
                # One thread and no macroblock tree: the same bytes on every machine (x264's thread
                # count follows the CPUs it sees, and its mbtree reads unwritten memory under
                # AVX-512; docs/environment.md). Clips are short, so the cost is small.
                stream.codec_context.thread_count = 1
                stream.options = {"crf": str(crf), "preset": preset, "x264-params": "mbtree=0"}
            if (arr.shape[0] - arr.shape[0] % 2, arr.shape[1] - arr.shape[1] % 2) != size:
                raise ValueError(f"frame {count} has shape {arr.shape}, expected {size[0]}x{size[1]}")
            frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(arr[:size[0], :size[1]]),
                                               format="rgb24")
            for packet in stream.encode(frame):
                container.mux(packet)
            count += 1
        if stream is None:
            raise MediaError(f"no frames to write to {out}: the selected window is empty; "
                             f"choose a longer window.")
        for packet in stream.encode():
            container.mux(packet)
        container.close()
        commit_temp(tmp, out)
    except BaseException:
        try:
            container.close()
        except Exception:  # noqa: BLE001
            pass
        tmp.unlink(missing_ok=True)
        raise
    return out


def write_gif(images: Iterable, out: str | Path, fps: float) -> Path:
    """Animated GIF (looping) with frame duration 1000/fps ms."""
    from PIL import Image

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    pil = [im.convert("RGB") if hasattr(im, "convert") else Image.fromarray(_to_array(im))
           for im in images]
    if not pil:
        raise MediaError(f"no frames to write to {out}: the selected window is empty.")
    tmp = atomic_temp_path(out)
    try:
        pil[0].save(tmp, format="GIF", save_all=True, append_images=pil[1:],
                    duration=max(10, round(1000 / fps)), loop=0)
        commit_temp(tmp, out)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return out


def write_frames(images, out: str | Path, fps: float) -> Path:
    """PIL images or HxWx3 uint8 arrays -> .mp4 (H.264) or .gif by the suffix of `out`."""
    suffix = Path(out).suffix.lower()
    if suffix == ".gif":
        return write_gif(images, out, fps)
    if suffix in (".mp4", ".m4v", ".mov"):
        return write_video_from_arrays(images, out, fps)
    raise ValueError(f"cannot write frames to {out}: use a .mp4 or .gif file name")


# -- reading source frames in bounded batches ----------------------------------------------------
def _source(src: str | Path):
    return open_video(src)


def _window(source, start: float, end: float) -> tuple[int, int]:
    fps, n = source.fps, source.num_frames
    s = min(max(0, math.floor(start * fps + 0.5 + 1e-9)), n)
    e = min(max(0, math.floor(end * fps + 0.5 + 1e-9)), n)
    if e <= s:
        raise MediaError(f"the window [{start:.2f}, {end:.2f}] s of {source.path} holds no frames "
                         f"(video is {source.duration:.2f} s at {fps:g} fps); choose a longer window.")
    return s, e


def _decode_range(source, start_idx: int, end_idx: int) -> Iterator:
    """Arrays of frames start_idx..end_idx-1, decoded linearly with PyAV from the keyframe before
    start_idx (8x faster than per-batch decord seeks on long-GOP video, and nothing is decoded
    ahead). A frame's index is round((pts - start_time) * time_base * fps), fps being the source's
    (decord's) rate, so indices agree with VideoSource; a variable-rate stream is normalised to
    that rate (a missing index repeats the previous frame, a repeated index is dropped). Frames
    are turned upright by the source's display rotation, as VideoSource returns them."""
    import itertools

    import av
    import numpy as np

    from av.video.reformatter import VideoReformatter

    fps = source.fps
    turns = getattr(source, "rotation", 0) // 90
    scaler = VideoReformatter()   # one for every frame (readers.py PyAVReader says why)

    def rgb(frame):
        arr = scaler.reformat(frame, format="rgb24").to_ndarray()
        return np.ascontiguousarray(np.rot90(arr, turns)) if turns else arr

    with av.open(str(source.path)) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        tb = stream.time_base
        origin = stream.start_time or 0

        def indexed(target_pts: int):
            container.seek(target_pts, stream=stream, backward=True)
            for frame in container.decode(stream):
                if frame.pts is not None:
                    yield round(float((frame.pts - origin) * tb) * fps), frame

        # Aim half a frame early so rounding never lands past the wanted frame.
        frames = indexed(max(origin, origin + int(((start_idx - 0.5) / fps) / tb)))
        first = next(frames, None)
        if first is None or first[0] > start_idx:  # the seek overshot: decode from the start
            frames = indexed(origin)
            first = next(frames, None)
        if first is None:
            return
        expected, before, prev = start_idx, None, None
        for idx, frame in itertools.chain([first], frames):
            if idx < expected:  # before the range, or a repeated index
                if idx < start_idx:
                    before = frame
                continue
            upto = min(idx, end_idx)
            if expected < upto:  # a gap: hold the previous frame
                fill = prev if prev is not None else rgb(before or frame)
                while expected < upto:
                    yield fill
                    expected += 1
            if expected >= end_idx:
                return
            prev = rgb(frame)
            yield prev
            expected += 1
            if expected >= end_idx:
                return


def _iter_range(source, start_idx: int, end_idx: int, reverse: bool = False) -> Iterator:
    """Arrays of frames start_idx..end_idx-1, or backwards. Backwards, the range is decoded in
    segments (last first) of at most ~256 MB of frames each, so memory stays bounded."""
    if not reverse:
        yield from _decode_range(source, start_idx, end_idx)
        return
    w, h = source.size
    seg = max(_BATCH, _SEGMENT_BYTES // max(1, w * h * 3))
    hi = end_idx
    while hi > start_idx:
        lo = max(start_idx, hi - seg)
        part = list(_decode_range(source, lo, hi))
        yield from reversed(part)
        del part
        hi = lo


def _check_length(source, count: int, what: str, limit: int) -> None:
    if count > limit:
        raise MediaError(f"{what} of {source.path} would have {count} frames (> {limit}); these "
                         f"operations are meant for short clips: cut a shorter window first.")


def cut_clip(src: str | Path, start: float, end: float, out: str | Path, *,
             preset: str = DEFAULT_PRESET) -> Path:
    """Frames [round(start*fps), round(end*fps)) of `src` -> H.264 MP4 at the source fps."""
    source = _source(src)
    s, e = _window(source, start, end)
    return write_video_from_arrays(_iter_range(source, s, e), out, source.fps, preset=preset)


def reverse_clip(src: str | Path, out: str | Path, *, max_frames: int = MAX_CLIP_FRAMES) -> Path:
    """The whole of `src` played backwards (TempCloze "Reverse")."""
    source = _source(src)
    _check_length(source, source.num_frames, "reversing", max_frames)
    return write_video_from_arrays(_iter_range(source, 0, source.num_frames, reverse=True), out,
                                   source.fps)


def third_bounds(total: int) -> list[int]:
    """Frame boundaries of the thirds a, b, c of `total` frames: [0, t//3, 2t//3, t]."""
    return [0, total // 3, (2 * total) // 3, total]


def reorder_thirds(src: str | Path, out: str | Path, order: Sequence[int] = (1, 2, 0), *,
                   max_frames: int = MAX_CLIP_FRAMES) -> Path:
    """`src` cut in thirds a, b, c (third_bounds) and joined in `order`; default b, c, a
    (TempCloze "Shuffle")."""
    source = _source(src)
    if sorted(order) != [0, 1, 2]:
        raise ValueError(f"order must be a permutation of (0, 1, 2), got {tuple(order)}")
    n = source.num_frames
    _check_length(source, n, "re-ordering", max_frames)
    if n < 3:
        raise MediaError(f"{source.path} has {n} frames; at least 3 are needed to cut it in thirds.")
    b = third_bounds(n)

    def frames():
        for part in order:
            yield from _iter_range(source, b[part], b[part + 1])

    return write_video_from_arrays(frames(), out, source.fps)


def loop_segment(src: str | Path, start: float, end: float, repeats: int, out: str | Path, *,
                 max_frames: int = MAX_CLIP_FRAMES) -> Path:
    """Frames [round(start*fps), round(end*fps)) of `src` played `repeats` times in a row
    (TempCloze "Loop": the middle third repeated 3 times)."""
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    source = _source(src)
    s, e = _window(source, start, end)
    _check_length(source, (e - s) * repeats, "looping", max_frames)

    def frames():
        for _ in range(repeats):
            yield from _iter_range(source, s, e)

    return write_video_from_arrays(frames(), out, source.fps)
