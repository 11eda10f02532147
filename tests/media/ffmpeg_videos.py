"""Tiny real-world-style files made by the ffmpeg command line from frames that say which frame
they are (tests/media/videos.py's index blocks): other codecs and containers, a variable frame
rate, rotation metadata."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tests.media.videos import index_image

WIDTH, HEIGHT = 96, 64  # index blocks in the top-left 64x48; sizes every encoder takes

#: name -> (file name, ffmpeg output options, encoder); each file: 48 frames at 24 fps, GOP 12
FORMATS = {
    "hevc_mkv": ("hevc.mkv", ["-c:v", "libx265", "-crf", "10", "-pix_fmt", "yuv420p",
                              "-x265-params", "log-level=error:keyint=12:min-keyint=12"], "libx265"),
    "vp9_webm": ("vp9.webm", ["-c:v", "libvpx-vp9", "-crf", "12", "-b:v", "0", "-g", "12",
                              "-deadline", "realtime", "-cpu-used", "8"], "libvpx-vp9"),
    "h264_10bit": ("h264_10bit.mp4", ["-c:v", "libx264", "-crf", "10", "-g", "12",
                                      "-pix_fmt", "yuv420p10le"], "libx264"),
    "mov": ("clip.mov", ["-c:v", "libx264", "-crf", "10", "-g", "12", "-pix_fmt", "yuv420p"],
            "libx264"),
    "mpeg4_avi": ("xvid.avi", ["-c:v", "mpeg4", "-q:v", "2", "-g", "12"], "mpeg4"),
    "av1_mp4": ("av1.mp4", ["-c:v", "libaom-av1", "-cpu-used", "8", "-crf", "12", "-g", "12",
                            "-pix_fmt", "yuv420p"], "libaom-av1"),
    "av1_webm": ("av1.webm", ["-c:v", "libsvtav1", "-preset", "12", "-crf", "15", "-g", "12",
                              "-pix_fmt", "yuv420p"], "libsvtav1"),
}


def require_ffmpeg(encoder: str | None = None) -> None:
    if shutil.which("ffmpeg") is None:
        pytest.skip("the ffmpeg command line is not installed (apt-get install -y ffmpeg)")
    if encoder is not None and encoder not in encoders():
        pytest.skip(f"this ffmpeg has no {encoder} encoder")


_ENCODERS: set[str] | None = None


def encoders() -> set[str]:
    global _ENCODERS
    if _ENCODERS is None:
        out = subprocess.run(["ffmpeg", "-hide_banner", "-encoders"], capture_output=True,
                             text=True).stdout
        _ENCODERS = {line.split()[1] for line in out.splitlines()
                     if len(line.split()) > 1 and line.startswith(" V")}
    return _ENCODERS


def _encode(frames: np.ndarray, out: Path, options: list[str], rate: int = 24,
            before: list[str] | None = None) -> Path:
    n, h, w, _ = frames.shape
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24",
           "-s", f"{w}x{h}", "-r", str(rate), "-i", "-", *(before or []), *options, str(out)]
    proc = subprocess.run(cmd, input=frames.tobytes(), capture_output=True)
    if proc.returncode != 0:
        raise RuntimeError(f"ffmpeg failed for {out.name}: {proc.stderr.decode()[-800:]}")
    return out


def index_frames(n: int) -> np.ndarray:
    return np.stack([index_image(i, WIDTH, HEIGHT) for i in range(n)])


def write_format(folder: Path, name: str) -> Path:
    file_name, options, encoder = FORMATS[name]
    require_ffmpeg(encoder)
    return _encode(index_frames(48), folder / file_name, options)


def write_vfr(folder: Path) -> Path:
    """150 frames: 0-119 at 30 fps (0 .. 3.967 s), a jump, then 120-149 at 15 fps from 5.0 s."""
    require_ffmpeg("libx264")
    expr = r"if(lt(N\,120)\,N/30\,5+(N-120)/15)/TB"  # commas escaped for the filter graph
    return _encode(index_frames(150), folder / "vfr.mp4",
                   ["-vf", f"setpts={expr}", "-fps_mode", "passthrough", "-c:v", "libx264",
                    "-crf", "10", "-g", "30", "-pix_fmt", "yuv420p"], rate=30)


def vfr_times() -> list[float]:
    """The exact times of write_vfr's frames (each a correctly rounded fraction)."""
    return [i / 30 for i in range(120)] + [(75 + k) / 15 for k in range(30)]


def marker_image() -> np.ndarray:
    """Grey, with a red 16x16 block in the top-left corner: upright is unambiguous."""
    arr = np.full((HEIGHT, WIDTH, 3), 128, np.uint8)
    arr[:16, :16] = (230, 20, 20)
    return arr


def write_rotated(folder: Path, degrees: int, suffix: str = ".mp4") -> Path:
    """12 marker frames, the stream tagged `rotate=degrees` (as phones write MP4 / MOV)."""
    require_ffmpeg("libx264")
    plain = folder / f"upright{suffix}"
    if not plain.exists():
        _encode(np.stack([marker_image()] * 12), plain,
                ["-c:v", "libx264", "-crf", "10", "-pix_fmt", "yuv420p"])
    out = folder / f"rotate{degrees}{suffix}"
    proc = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", str(plain), "-c",
                           "copy", "-metadata:s:v:0", f"rotate={degrees}", str(out)],
                          capture_output=True)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.decode()[-800:])
    return out


def ffmpeg_first_frame(path: Path) -> np.ndarray:
    """The first frame as the ffmpeg command line shows it (it applies the display matrix, like
    a browser): the oracle for orientation."""
    probe = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", str(path), "-frames:v", "1",
                            "-f", "image2pipe", "-c:v", "png", "-"], capture_output=True, check=True)
    from io import BytesIO

    from PIL import Image

    return np.asarray(Image.open(BytesIO(probe.stdout)).convert("RGB"))


def red_corner(image) -> str:
    """Which corner holds the red marker: "tl", "tr", "bl" or "br"."""
    arr = np.asarray(image.convert("RGB") if hasattr(image, "convert") else image).astype(int)
    h, w = arr.shape[:2]
    corners = {"tl": arr[4, 4], "tr": arr[4, w - 5], "bl": arr[h - 5, 4], "br": arr[h - 5, w - 5]}
    red = [k for k, (r, g, b) in corners.items() if r > 180 and g < 90 and b < 90]
    return red[0] if len(red) == 1 else f"unclear {red}"
