"""Images for API requests: downscaled JPEG data URLs (never full-size PNG frames); an already
encoded image (`backends.base.EncodedImage`) as its own bytes."""
from __future__ import annotations

import base64
import io
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PIL import Image

    from backends.base import EncodedImage

DEFAULT_MAX_SIDE = 1024
JPEG_QUALITY = 85


class DataURL(str):
    """A `data:<mime>;base64,<base64>` URL made here: only characters that JSON writes as they
    are (the base64 alphabet, a prefix checked by `data_url`), so a request body can splice it in
    without the JSON encoder reading megabytes of it (backends.openai_api.body_bytes)."""

    __slots__ = ()


#: what a data URL's prefix may hold for it to be a DataURL (JSON escapes none of these)
_PREFIX_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+-.;=/:_")


def data_url(mime: str, data: bytes) -> str:
    """`data:<mime>;base64,...` of `data`, a DataURL when the mime type is plain."""
    prefix = f"data:{mime};base64,"
    url = prefix + base64.b64encode(data).decode("ascii")
    return DataURL(url) if _PREFIX_CHARS.issuperset(prefix[:-1]) else url


def api_image_max_side() -> int:
    """Longest side sent to an API: env APP_API_IMAGE_MAX_SIDE, else 1024."""
    value = os.environ.get("APP_API_IMAGE_MAX_SIDE", "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else DEFAULT_MAX_SIDE


def downscale(image: Image.Image, max_side: int) -> Image.Image:
    """RGB copy whose longest side is at most `max_side` (aspect ratio kept; never upscaled)."""
    from PIL import Image

    rgb = image.convert("RGB")
    width, height = rgb.size
    longest = max(width, height)
    if longest <= max_side:
        return rgb
    scale = max_side / longest
    size = (max(1, round(width * scale)), max(1, round(height * scale)))
    return rgb.resize(size, Image.Resampling.BICUBIC, reducing_gap=3.0)  # fast for big frames


def jpeg_data_url(image: Image.Image, max_side: int | None = None,
                  quality: int = JPEG_QUALITY) -> str:
    """`data:image/jpeg;base64,...` of the image downscaled to `max_side` (default from env)."""
    small = downscale(image, max_side or api_image_max_side())
    buf = io.BytesIO()
    small.save(buf, format="JPEG", quality=quality)
    return data_url("image/jpeg", buf.getvalue())


def encoded_data_url(image: EncodedImage) -> str:
    """`data:<mime>;base64,...` of an already encoded image's own bytes (no decode, no resize;
    base64-encoded once per image object: `EncodedImage.data_url`)."""
    return image.data_url
