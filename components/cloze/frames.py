"""Frames of one clip as the model sees them: 16 bin-centred frames, height <= 360 px, JPEG 85."""
from __future__ import annotations

import io
import threading
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING

from components.cloze.prompt import JPEG_QUALITY, MAX_HEIGHT
from components.common.errors import MediaError
from components.media import open_video, resize_max_height, to_jpeg_bytes

if TYPE_CHECKING:
    from PIL import Image

_cache: OrderedDict[tuple, list] = OrderedDict()
_lock = threading.Lock()
_CACHE_SIZE = 256


def clip_frames(path: str | Path, n: int = 16, *, jpeg: bool = True) -> list[Image.Image]:
    """Bin-centred frames of a clip (upstream rule; skips the first and last frame), resized to
    at most 360 px high and passed through JPEG quality 85 as the released evaluation sends them."""
    from PIL import Image

    path = Path(path)
    if not path.is_file():
        raise MediaError(f"Clip not found: {path}. Restore it or regenerate the instance.")
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns, n, jpeg)
    with _lock:
        if key in _cache:
            _cache.move_to_end(key)
            return list(_cache[key])
    src = open_video(path)
    try:
        frames = src.bin_centred(n)
    finally:
        src.close()
    if not frames:
        raise MediaError(f"{path} has too few frames (need at least 3) to sample; re-cut this clip.")
    images = []
    for fr in frames:
        img = resize_max_height(fr.image.convert("RGB"), MAX_HEIGHT)
        if jpeg:
            img = Image.open(io.BytesIO(to_jpeg_bytes(img, JPEG_QUALITY)))
            img.load()
        images.append(img)
    with _lock:
        _cache[key] = images
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return list(images)


def frame_grid(images: list[Image.Image], per_row: int = 4, tile_height: int = 120) -> Image.Image:
    """Frames in a grid, `per_row` per row, each captioned with its number 1..n (study app view)."""
    from PIL import Image, ImageDraw

    if not images:
        raise MediaError("No frames to show in the grid.")
    w0, h0 = images[0].size
    tw = max(1, round(w0 * tile_height / h0))
    th = tile_height
    cap = 18
    rows = (len(images) + per_row - 1) // per_row
    grid = Image.new("RGB", (per_row * tw + (per_row + 1) * 4, rows * (th + cap) + (rows + 1) * 4), "white")
    draw = ImageDraw.Draw(grid)
    for i, img in enumerate(images):
        r, c = divmod(i, per_row)
        x = 4 + c * (tw + 4)
        y = 4 + r * (th + cap + 4)
        grid.paste(img.convert("RGB").resize((tw, th)), (x, y))
        draw.text((x + tw // 2 - 4, y + th + 3), str(i + 1), fill="black")
    return grid
