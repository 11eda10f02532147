"""Pure frame maths: sampling indices/times, timestamp -> index, resizing, JPEG encoding.

Timestamp -> frame index rule for a constant-frame-rate video (clips included):
    index = floor(t * fps + 0.5)   (round half up, NOT Python's banker's round)
clamped to [0, num_frames - 1]. A frame with index i is shown at time i / fps, so the frame
"at" t is the one whose presentation time is nearest to t. A variable-frame-rate video keeps the
same rule over its real presentation timestamps (components/media/index.py).
"""
from __future__ import annotations

import io
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PIL import Image


@dataclass
class Frame:
    """A decoded frame that always knows where it came from."""

    image: Image.Image  # RGB
    time: float           # seconds from the first frame: the exact time of this frame (its PTS)
    index: int            # frame index in the source video (0-based)


def time_to_index(t: float, fps: float, num_frames: int | None = None) -> int:
    """Nearest frame to time `t` (seconds): floor(t * fps + 0.5), clamped to [0, num_frames - 1]."""
    idx = int(math.floor(t * fps + 0.5 + 1e-9))
    if num_frames is not None:
        idx = min(idx, num_frames - 1)
    return max(idx, 0)


def index_to_time(index: int, fps: float) -> float:
    """Presentation time of frame `index` (seconds)."""
    return index / fps if fps > 0 else 0.0


def bin_centred_indices(total: int, n: int = 16) -> list[int]:
    """TempCloze upstream sampling: skip first/last frame; n = min(n, total-2);
    idx_i = 1 + floor((i + 0.5) * (total - 2) / n); [] when total <= 2."""
    if total <= 2 or n <= 0:
        return []
    n = min(n, total - 2)
    # Integer arithmetic: floor((i + 0.5) * (total - 2) / n) == ((2i + 1) * (total - 2)) // (2n)
    return [1 + ((2 * i + 1) * (total - 2)) // (2 * n) for i in range(n)]


def endpoint_indices(total: int, n: int = 16) -> list[int]:
    """Older human-study app: floor(i * (total - 1) / (n - 1)), i=0..n-1 (n capped at total)."""
    if total <= 0 or n <= 0:
        return []
    n = min(n, total)
    if n == 1:
        return [0]
    return [(i * (total - 1)) // (n - 1) for i in range(n)]


def fps_times(start: float, end: float, fps: float = 1.0, cap: int | None = None) -> list[float]:
    """Timestamps at `fps` over [start, end) (start, start+1/fps, ...); when more than `cap`,
    spread `cap` times uniformly over the window instead (start + i * (end - start) / cap,
    i = 0..cap-1: the same start-inclusive, end-exclusive grid with a coarser step)."""
    if fps <= 0:
        raise ValueError(f"fps must be > 0, got {fps}")
    if end <= start:
        return []
    count = max(0, math.ceil((end - start) * fps - 1e-9))
    if cap is not None and cap >= 0 and count > cap:
        step = (end - start) / cap if cap else 0.0
        return [round(start + i * step, 6) for i in range(cap)]
    return [round(start + k / fps, 6) for k in range(count)]


def _scaled_size(width: int, height: int, scale: float) -> tuple[int, int]:
    return max(1, round(width * scale)), max(1, round(height * scale))


def size_for_max_side(width: int, height: int, max_side: int | None) -> tuple[int, int]:
    """Target (w, h) keeping aspect ratio so that max(w, h) <= max_side. Never upscales."""
    if not max_side or max(width, height) <= max_side:
        return width, height
    return _scaled_size(width, height, max_side / max(width, height))


def size_for_max_height(width: int, height: int, max_height: int | None) -> tuple[int, int]:
    """Target (w, h) keeping aspect ratio so that h <= max_height. Never upscales."""
    if not max_height or height <= max_height:
        return width, height
    return _scaled_size(width, height, max_height / height)


def resize_max_side(image: Image.Image, max_side: int) -> Image.Image:
    """Downscale (bicubic) so that the longer side is at most `max_side`; smaller images unchanged."""
    from PIL import Image

    size = size_for_max_side(image.width, image.height, max_side)
    return image if size == image.size else image.resize(size, Image.Resampling.BICUBIC)


def resize_max_height(image: Image.Image, max_height: int) -> Image.Image:
    """Downscale (bicubic) to height `max_height` when taller (TempCloze: 360 px)."""
    from PIL import Image

    size = size_for_max_height(image.width, image.height, max_height)
    return image if size == image.size else image.resize(size, Image.Resampling.BICUBIC)


def resize_max_height_opencv(image: Image.Image, max_height: int) -> Image.Image:
    """Downscale to height `max_height` when taller, as TempCloze's released scripts do with
    OpenCV: `cv2.resize(frame, (int(w * max_height / h), max_height))` (bilinear, width
    truncated). Per channel, so RGB gives what BGR would."""
    if image.height <= max_height:
        return image
    import cv2
    import numpy as np
    from PIL import Image as PILImage

    width = int(image.width * (max_height / image.height))
    array = cv2.resize(np.asarray(image.convert("RGB")), (width, max_height))
    return PILImage.fromarray(array)


#: `Image.info` key of an image that is kept (a cache holds it) and never changed afterwards: the
#: page's image writer encodes such an image once, not each time it is sent (common/players.py)
KEPT = "vbe-kept"


def mark_kept(image: Image.Image) -> Image.Image:
    """Say that `image` is kept and will not change (see KEPT); returns it."""
    image.info[KEPT] = True
    return image


def is_kept(image: object) -> bool:
    return bool(getattr(image, "info", None) and image.info.get(KEPT) is True)


def to_jpeg_bytes(image: Image.Image, quality: int = 85) -> bytes:
    """Encode as JPEG (RGB) with the given quality."""
    buf = io.BytesIO()
    image.convert("RGB").save(buf, format="JPEG", quality=quality)
    return buf.getvalue()
