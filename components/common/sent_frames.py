"""Frames as a model is sent them, encoded once and kept on disk (issue 30).

An API backend sends a picture as a JPEG (backends.images: downscaled to APP_API_IMAGE_MAX_SIDE,
quality 85). Made here instead, once, and kept in the disk cache (components.media.DiskCache,
frames/, bounded by APP_FRAME_CACHE_MB, written atomically) keyed by the video's content and
what made the bytes: the caller's sampling parameters, the size and the quality. The frames come
back as `Frame`s whose `image` is a `backends.base.EncodedImage`, which API backends send as it
is and a local model decodes; so a second model's run, a rerun after a crash and the tab showing
the same clip read small files and decode no video.
"""
from __future__ import annotations

import io
from pathlib import Path
from typing import Any
from collections.abc import Callable, Iterable

from backends.base import EncodedImage
from backends.images import JPEG_QUALITY, api_image_max_side, downscale
from components.media import DiskCache, Frame

#: how `encode` resizes (part of the key: a change of method must not reuse old bytes)
RESIZE = "pil-bicubic-reducing3"


def encode(frame: Frame, max_side: int, quality: int = JPEG_QUALITY) -> tuple[bytes, dict]:
    """The JPEG an API backend would send for this frame (the same downscale and quality), and
    its index entry."""
    small = downscale(frame.image, max_side)
    buf = io.BytesIO()
    small.save(buf, format="JPEG", quality=quality)
    return buf.getvalue(), {"mime": "image/jpeg", "width": small.width, "height": small.height,
                            "time": frame.time, "index": frame.index}


def sent_frames(video: str | Path | Any, params: dict, compute: Callable[[], Iterable[Frame]], *,
                max_side: int | None = None, quality: int = JPEG_QUALITY,
                cache: DiskCache | None = None) -> list[Frame]:
    """The frames `compute()` makes of `video` (a path, or an opened source carrying its
    identity), each encoded once as the model is sent it and kept on disk under `params` + the
    size and quality. `compute` is called only on a miss."""
    side = max_side or api_image_max_side()
    key = {**params, "sent": "jpeg", "max_side": side, "quality": quality, "resize": RESIZE}

    def encoded() -> Iterable[tuple[bytes, dict]]:
        for frame in compute():
            yield encode(frame, side, quality)

    stored = (cache or DiskCache()).get_or_compute_encoded(video, key, encoded)
    return [Frame(image=EncodedImage(data, meta["mime"], int(meta["width"]), int(meta["height"])),  # type: ignore[arg-type]
                  time=float(meta["time"]), index=int(meta["index"])) for data, meta in stored]
