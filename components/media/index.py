"""The timeline of a video stream, read from its packets (no decoding but one frame).

`build_index(path)` demuxes the first video stream with PyAV and keeps, per frame in presentation
order: its presentation timestamp (PTS, in seconds from the first frame) and whether it starts a
decodable group (keyframe). One frame is decoded to learn the picture's real size, pixel format
and rotation (display matrix). The same pass diagnoses unreadable files (not a video, no video
stream, truncated), so every open explains a failure in the app's own words.

Frame index = position in presentation order (the order a decoder returns frames; decord's
index too). Times:
- constant frame rate (every PTS within one time-base tick of index / fps, fps = the stream's
  average rate): time = index / fps exactly, as for every file before PTS were read (the
  rounding of a millisecond time base in MKV / WebM is not taken for the frame's time);
- otherwise (variable frame rate): time = the frame's own PTS.
"""
from __future__ import annotations

import base64
from array import array
from bisect import bisect_left
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np

from components.base.errors import MediaError
from components.media.frames import index_to_time, time_to_index

REENCODE_HINT = "re-encode it with: ffmpeg -i in.mp4 -c:v libx264 -pix_fmt yuv420p out.mp4"
INDEX_VERSION = 2


def format_hms(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


@dataclass(frozen=True)
class VideoIndex:
    """What one pass over a video's packets tells (see the module docstring)."""

    codec: str
    width: int            # coded picture size (before rotation)
    height: int
    rotation: int         # degrees counter-clockwise to turn the picture upright: 0/90/180/270
    pix_fmt: str
    fps: float            # average frame rate (frames per second)
    cfr: bool             # constant frame rate: time = index / fps
    pts: np.ndarray       # int64 PTS in the stream's time base, presentation order
    keyframe: np.ndarray  # bool, presentation order
    time_base: Fraction
    duration: float       # seconds
    open_gop: bool = False  # frames after a keyframe in decode order are shown before it

    @property
    def decord_reads_right(self) -> bool:
        """decord 0.6 returns wrong frames after seeking in open-GOP streams (measured on HEVC
        with leading pictures) and wrong shapes when it scales a rotated stream: PyAV reads
        those."""
        return self.rotation == 0 and not self.open_gop

    @property
    def num_frames(self) -> int:
        return int(len(self.pts))

    @property
    def display_size(self) -> tuple[int, int]:
        """(w, h) as a browser shows it (rotation applied)."""
        return (self.height, self.width) if self.rotation in (90, 270) else (self.width, self.height)

    @property
    def times(self) -> np.ndarray:
        """Seconds of every frame (float64; see the module docstring)."""
        if self.cfr:
            return np.arange(self.num_frames, dtype=np.float64) / self.fps
        return _pts_seconds(self.pts, self.time_base)

    def time_of(self, index: int) -> float:
        if self.cfr:
            return index_to_time(index, self.fps)
        return float(_pts_seconds(self.pts[index:index + 1], self.time_base, int(self.pts[0]))[0])

    def index_at(self, t: float) -> int:
        """The frame whose time is nearest to `t`; half-way goes to the later frame (the constant
        rate rule floor(t * fps + 0.5)); clamped to the video."""
        n = self.num_frames
        if self.cfr:
            return time_to_index(t, self.fps, n)
        times = self._times_cache()
        j = bisect_left(times, t - 1e-9)
        if j <= 0:
            return 0
        if j >= n:
            return n - 1
        return j if times[j] - t <= t - times[j - 1] + 1e-9 else j - 1

    def _times_cache(self) -> list[float]:
        cached = self.__dict__.get("_times")
        if cached is None:
            cached = self.times.tolist()
            object.__setattr__(self, "_times", cached)
        return cached

    def keyframe_at_or_before(self, index: int) -> int:
        """Index of the last keyframe at or before `index` (0 when none)."""
        keys = self._keys_cache()
        j = bisect_left(keys, index + 1) - 1
        return keys[j] if j >= 0 else 0

    def keyframe_indices(self) -> list[int]:
        return list(self._keys_cache())

    def _keys_cache(self) -> list[int]:
        cached = self.__dict__.get("_keys")
        if cached is None:
            cached = np.flatnonzero(self.keyframe).tolist() or [0]
            object.__setattr__(self, "_keys", cached)
        return cached

    # -- storage (components.media.cache JSON entries) -------------------------------------------
    def to_json(self) -> dict:
        return {"v": INDEX_VERSION, "codec": self.codec, "width": self.width, "height": self.height,
                "rotation": self.rotation, "pix_fmt": self.pix_fmt, "fps": self.fps, "cfr": self.cfr,
                "time_base": [self.time_base.numerator, self.time_base.denominator],
                "duration": self.duration,
                # int64 little-endian, base64: no Python int per frame (2 h = 172,800 frames)
                "pts": base64.b64encode(self.pts.astype("<i8").tobytes()).decode("ascii"),
                "keyframes": np.flatnonzero(self.keyframe).tolist(), "open_gop": self.open_gop}

    @classmethod
    def from_json(cls, data: dict) -> VideoIndex:
        if data.get("v") != INDEX_VERSION:
            raise ValueError("index version")
        pts = np.frombuffer(base64.b64decode(data["pts"]), dtype="<i8").astype(np.int64)
        keyframe = np.zeros(len(pts), dtype=bool)
        keyframe[np.asarray(data["keyframes"], dtype=np.int64)] = True
        return cls(codec=data["codec"], width=int(data["width"]), height=int(data["height"]),
                   rotation=int(data["rotation"]), pix_fmt=data["pix_fmt"], fps=float(data["fps"]),
                   cfr=bool(data["cfr"]), pts=pts, keyframe=keyframe,
                   time_base=Fraction(*data["time_base"]), duration=float(data["duration"]),
                   open_gop=bool(data["open_gop"]))


def _pts_seconds(pts: np.ndarray, tb: Fraction, origin: int | None = None) -> np.ndarray:
    """(pts - origin) * tb as float64 (origin: the first PTS), correctly rounded: the product
    (pts - origin) * numerator is exact below 2**53, so one division rounds once, like
    float(Fraction(...))."""
    if len(pts) == 0:
        return np.zeros(0)
    origin = int(pts[0]) if origin is None else origin
    return (pts - origin).astype(np.float64) * tb.numerator / tb.denominator


def _normal_rotation(degrees: float) -> int:
    return int(round(degrees / 90.0)) % 4 * 90


def is_constant_rate(pts: np.ndarray, tb: Fraction, fps: float) -> bool:
    """Every PTS within one tick of index / fps (from the first frame)."""
    if len(pts) < 2 or fps <= 0:
        return True
    expected = np.arange(len(pts), dtype=np.float64) / (fps * float(tb))
    return bool(np.max(np.abs((pts - pts[0]).astype(np.float64) - expected)) <= 1.0 + 1e-6)


# FFmpeg's image demuxers: a PNG or JPEG renamed .mp4 opens as a one-frame "video"
_IMAGE_CODECS = {"png", "bmp", "tiff", "webp", "gif", "apng", "qoi", "jpegxl"}


def _is_still_image(format_name: str, codec: str) -> bool:
    names = (format_name or "").split(",")
    return codec in _IMAGE_CODECS or any(n == "image2" or n.endswith("_pipe") for n in names)


def build_index(path: str | Path) -> VideoIndex:
    """Demux every packet of the first video stream (no decoding) plus one decoded frame.
    Raises MediaError naming the file and saying what to do."""
    import av

    p = Path(path)
    size = p.stat().st_size
    try:
        container = av.open(str(p))
    except Exception:  # noqa: BLE001 - every open failure is reported the same way
        raise _not_a_video(p) from None
    with container:
        if not container.streams.video:
            kinds = sorted({s.type for s in container.streams})
            if "audio" in kinds:
                raise MediaError(f"{p} has no video stream (audio only); give a file with a video "
                                 f"track.")
            raise MediaError(f"{p} has no video stream (streams: {', '.join(kinds) or 'none'}); "
                             f"give a video file.")
        stream = container.streams.video[0]
        if _is_still_image(container.format.name, stream.codec_context.name):
            raise MediaError(f"{p} is a still image ({stream.codec_context.name}), not a video; "
                             "give a video file (e.g. MP4 / H.264).")
        tb = stream.time_base or Fraction(1, 90000)
        expected = stream.frames or 0
        # typed arrays, not lists: a two-hour movie has ~173k packets (36 bytes each as list items)
        pts_list = array("q")
        keys = array("b")
        last_end, truncated, key_pts, open_gop = 0, False, None, False
        try:
            for packet in container.demux(stream):
                if packet.size == 0 or packet.is_discard:
                    continue
                ts = packet.pts if packet.pts is not None else packet.dts
                if ts is None:
                    continue
                if packet.pos is not None and packet.pos >= 0 and packet.pos + packet.size > size:
                    truncated = True
                    break
                pts_list.append(int(ts))
                keys.append(1 if packet.is_keyframe else 0)
                if packet.is_keyframe:
                    key_pts = int(ts)
                elif key_pts is not None and int(ts) < key_pts:
                    open_gop = True  # a leading picture (HEVC CRA, x264 --open-gop)
                last_end = max(last_end, int(ts) + int(packet.duration or 0))
        except Exception:  # noqa: BLE001 - a demux error part-way is what truncation looks like
            truncated = True
        if expected and len(pts_list) < expected:
            truncated = True
        pts = np.array(pts_list, dtype=np.int64)
        order = np.argsort(pts, kind="stable")
        pts, keyframe = pts[order], np.array(keys, dtype=bool)[order]
        del pts_list, keys
        if truncated:
            last = float(_pts_seconds(pts, tb)[-1]) if len(pts) else 0.0
            raise MediaError(f"{p} is truncated at {format_hms(last)} (the data stops there): "
                             f"copy the complete file again, or cut the readable part with "
                             f"ffmpeg -i in.mp4 -t {format_hms(last)} -c:v libx264 out.mp4")
        if len(pts) == 0:
            raise MediaError(f"{p} has a video stream with no frames; {REENCODE_HINT}")
        codec = stream.codec_context.name
        rate = stream.average_rate or stream.guessed_rate
    first = _first_frame(p, codec)
    span = float((int(pts[-1]) - int(pts[0])) * tb)
    fps = float(rate) if rate else (len(pts) - 1) / span if span > 0 else 1.0
    cfr = is_constant_rate(pts, tb, fps)
    if cfr:
        duration = len(pts) / fps
    else:
        end = max(last_end, int(pts[-1]) + (int(pts[-1] - pts[-2]) if len(pts) > 1 else 0))
        duration = float((end - int(pts[0])) * tb)
        fps = len(pts) / duration if duration > 0 else fps
    return VideoIndex(codec=codec, width=first.width, height=first.height,
                      rotation=_normal_rotation(getattr(first, "rotation", 0) or 0),
                      pix_fmt=first.format.name, fps=fps, cfr=cfr, pts=pts, keyframe=keyframe,
                      time_base=Fraction(tb), duration=duration, open_gop=open_gop)


def _first_frame(path: Path, codec: str):
    """Decode the first frame (size, pixel format, rotation); a codec PyAV cannot decode is
    explained here, before any reader is tried."""
    import av

    try:
        with av.open(str(path)) as container:
            for frame in container.decode(container.streams.video[0]):
                return frame
    except Exception:  # noqa: BLE001 - PyAV raises InvalidDataError and others
        pass
    raise MediaError(f"{path} has a {codec} video stream that cannot be decoded (the codec is not "
                     f"supported or the data is corrupt); {REENCODE_HINT}")


def _not_a_video(p: Path) -> MediaError:
    with open(p, "rb") as fh:
        head = fh.read(12)
    if head[4:8] == b"ftyp":
        return MediaError(
            f"{p} is an incomplete MP4 (its index, the 'moov' atom, is missing): the file is "
            f"truncated, e.g. an interrupted download or copy. Copy it again, or if only this "
            f"copy exists, try to repair it and then {REENCODE_HINT}")
    return MediaError(f"{p} cannot be decoded as a video: it is not a video file or it is "
                      f"corrupt. If it is a video, {REENCODE_HINT}")
