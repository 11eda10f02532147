"""Frames of one clip as the model sees them: 16 bin-centred frames, height <= 360 px (the "api"
prompt style; "open" keeps the original size), encoded ONCE as JPEG quality 85 like the released
evaluators. The JPEG bytes travel to the backend as `backends.base.EncodedImage` parts, which API
backends send as they are (no second encode) and a local model decodes.

Those JPEGs are kept twice: in memory (an LRU of this process) and on disk
(components.media.DiskCache, frames/, keyed by the clip's content identity and `_disk_params`:
the sampling, size and quality that made them; bounded by APP_FRAME_CACHE_MB). So a second model's
run, a rerun after a crash and the Cloze tab on the same question decode no video: a request reads
one file a clip (its 16 JPEGs packed), and a grid is drawn from them when the decoded frames are not in memory."""
from __future__ import annotations

import logging
import os
import stat
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from backends.base import EncodedImage
from components import datasource
from components.cloze.prompts import JPEG_QUALITY, MAX_HEIGHT
from components.base.errors import MediaError
from components.base.lru import SingleFlightLRU
from components.media import DiskCache, mark_kept, open_video, to_jpeg_bytes

if TYPE_CHECKING:
    from PIL import Image

#: JPEGs and grids kept: ~0.5 MB a clip
CACHE_SIZE = 256
#: decoded frames kept (16 x 640x360 RGB, ~11 MB a clip): two questions' worth, enough for a
#: question's grids and JPEGs to share one decode without a batch run holding gigabytes of them
PIL_CACHE_SIZE = 12


@dataclass
class FrameCaches:
    """The frames a process keeps in memory, by clip identity (path, size, time), kind, count
    and height: `made` the JPEGs and grids, `decoded` the decoded pictures."""

    made: SingleFlightLRU[tuple, list] = field(default_factory=lambda: SingleFlightLRU(CACHE_SIZE))
    decoded: SingleFlightLRU[tuple, list] = field(default_factory=lambda: SingleFlightLRU(PIL_CACHE_SIZE))

    def clear(self) -> None:
        self.made.clear()
        self.decoded.clear()


#: the app's frames (every function below takes `caches=` another, e.g. a test's own)
FRAMES = FrameCaches()
GRID_TILE_HEIGHT = 120
_prefetcher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cloze-prefetch")
# a question's clips decoded side by side in the request (the decoders release the GIL)
_decoders = ThreadPoolExecutor(max_workers=max(2, min(6, os.cpu_count() or 2)), thread_name_prefix="cloze-decode")
log = logging.getLogger(__name__)


def _key(path: Path, kind: str, n: int, max_height: int | None) -> tuple:
    try:   # a file on this machine (a batch run asks for six a question): no more is looked up
        st = os.stat(path)
    except OSError:
        st = None
    if st is None:
        path = datasource.local(path)  # a repository's clip is fetched here, in the worker decoding it
        try:
            st = os.stat(path)
        except OSError:
            st = None
    if st is None or not stat.S_ISREG(st.st_mode):
        raise MediaError(f"Clip not found: {path}. Restore it or regenerate the instance.")
    # the path as given (made absolute, not resolved: ~20 us a clip on every question) and the
    # file it names now; two paths to one file (a symlink, a hard link) keep an entry each
    return os.path.abspath(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, kind, n, max_height


def _kept(path: Path, n: int, max_height: int | None, caches: FrameCaches) -> list | None:
    """The clip's decoded frames if they are still kept (nothing is decoded)."""
    kept = caches.decoded.peek(_key(path, "pil", n, max_height))
    return None if kept is None else list(kept)


def _cached(path: Path, kind: str, n: int, max_height: int | None, make, caches: FrameCaches) -> list:
    """One entry per (file identity, kind, n, max_height); an entry being made (by another
    request or the prefetcher) is waited for, not made twice."""
    store = caches.decoded if kind == "pil" else caches.made
    return list(store.get(_key(path, kind, n, max_height), make))


def _sampled(path: Path, n: int, max_height: int | None, *, in_decoder: bool = False) -> list[Image.Image]:
    """Bin-centred frames (upstream rule; skips the first and last frame), RGB, at most
    `max_height` pixels high (None: original size): decoded full size and resized with OpenCV's
    bilinear resize as the released evaluators do (`cv2.resize(frame, (int(w * scale), 360))`:
    the same pixels), or (`in_decoder`, for display only) scaled by the decoder."""
    src = open_video(path)
    try:
        frames = src.bin_centred(n, max_height=max_height, exact_resize=not in_decoder and "opencv")
    finally:
        src.close()
    if not frames:
        raise MediaError(f"{path} has too few frames (need at least 3) to sample; re-cut this clip.")
    return [fr.image if fr.image.mode == "RGB" else fr.image.convert("RGB") for fr in frames]


def _disk_params(n: int, max_height: int | None) -> dict:
    """What makes a clip's model JPEGs besides its content: the disk cache key's parameters."""
    return {"use": "cloze-model-frames", "sampling": "bin_centred", "n": n, "max_height": max_height,
            "resize": "opencv-linear", "format": "jpeg", "quality": JPEG_QUALITY}


def _as_encoded(stored: list[tuple[bytes, dict]]) -> list[EncodedImage]:
    return [EncodedImage(data, meta["mime"], int(meta["width"]), int(meta["height"])) for data, meta in stored]


def _on_disk(path: Path, n: int, max_height: int | None) -> list[EncodedImage] | None:
    """The clip's model JPEGs when the disk cache holds them (nothing decoded), else None."""
    found = DiskCache().lookup_encoded(datasource.local(path), _disk_params(n, max_height))
    return None if found is None else _as_encoded(found)


def clip_jpegs(path: str | Path, n: int = 16, *, max_height: int | None = MAX_HEIGHT,
               caches: FrameCaches = FRAMES) -> list[EncodedImage]:
    """The clip's frames as the released evaluation sends them: bin-centred, at most `max_height`
    high (360; None for the open-model style), JPEG quality 85, encoded once and kept on disk."""
    path = Path(path)

    def encode():  # from the display's frames: one decode serves both
        for img in clip_frames(path, n, jpeg=False, max_height=max_height, caches=caches):
            yield to_jpeg_bytes(img, JPEG_QUALITY), {"mime": "image/jpeg", "width": img.width,
                                                     "height": img.height}

    def make() -> list[EncodedImage]:   # the clip is on this machine: _key fetched it
        stored = DiskCache().get_or_compute_encoded(path, _disk_params(n, max_height), encode)
        return _as_encoded(stored)

    return _cached(path, "jpeg", n, max_height, make, caches)


def clip_frames(path: str | Path, n: int = 16, *, jpeg: bool = True,
                max_height: int | None = MAX_HEIGHT, caches: FrameCaches = FRAMES) -> list[Image.Image]:
    """The same frames as pictures: decoded from the JPEG the model receives (`jpeg=True`, for the
    edge baseline), or straight from the video (`jpeg=False`, for display)."""
    path = Path(path)
    if jpeg:
        return [e.to_pil() for e in clip_jpegs(path, n, max_height=max_height, caches=caches)]
    return _cached(path, "pil", n, max_height, lambda: _sampled(path, n, max_height), caches)


def clip_grid(path: str | Path, n: int = 16, *, max_height: int | None = MAX_HEIGHT,
              caches: FrameCaches = FRAMES) -> Image.Image:
    """The clip's display frames drawn as one `frame_grid`, kept. Drawn from the frames a model is
    sent when they are decoded already, or from their JPEGs in the disk cache; else decoded
    straight at the grid's tile height by the decoder's scaler (no full-size RGB frames made and
    resized): the grid is only looked at."""
    path = Path(path)

    def make() -> list[Image.Image]:
        images = _kept(path, n, max_height, caches)
        if images is None:
            stored = _on_disk(path, n, max_height)
            if stored is not None:
                images = [_small(e, GRID_TILE_HEIGHT) for e in stored]
        if images is None:
            images = _sampled(path, n, min(max_height or GRID_TILE_HEIGHT, GRID_TILE_HEIGHT), in_decoder=True)
        return [mark_kept(frame_grid(images, tile_height=GRID_TILE_HEIGHT))]
    return _cached(path, "grid", n, max_height, make, caches)[0]


def _small(image: EncodedImage, height: int) -> Image.Image:
    """A JPEG decoded at the smallest scale (1/2, 1/4, 1/8) still at least `height` high."""
    import io

    from PIL import Image

    with Image.open(io.BytesIO(image.data)) as im:
        im.draft("RGB", (max(1, image.width * height // max(1, image.height)), height))
        return im.convert("RGB")


def clip_grids(paths: list[Path], n: int = 16, *, max_height: int | None = MAX_HEIGHT,
               caches: FrameCaches = FRAMES) -> list[Image.Image]:
    """`clip_grid` of each clip, the ones not kept yet decoded at the same time (a repository's
    clips fetched all at once first: the decoding pool has as many workers as cores)."""
    datasource.fetch_all(paths, progress=False)
    return list(_decoders.map(lambda path: clip_grid(path, n, max_height=max_height, caches=caches), paths))


def prefetch(paths: list[Path], n: int = 16, *, kind: str = "grid", max_height: int | None = MAX_HEIGHT,
             caches: FrameCaches = FRAMES) -> None:
    """Make, in the background, what an action is about to show or send for these clips (the next
    question's): "grid" (display), "jpeg" (a model's frames). One worker, so a prefetch never takes
    more than one core from the requests it serves."""
    make = clip_grid if kind == "grid" else clip_jpegs

    def work() -> None:
        try:
            datasource.fetch_all(paths, progress=False)  # a repository's clips, side by side
        except Exception as exc:  # noqa: BLE001 - the real request reports it
            log.debug("cloze prefetch of %s failed: %s", paths, exc)
        for path in paths:
            try:
                make(path, n, max_height=max_height, caches=caches)
            except Exception as exc:  # noqa: BLE001 - the real request reports it
                log.debug("cloze prefetch of %s failed: %s", path, exc)
    _prefetcher.submit(work)


def frame_grid(images: list[Image.Image], per_row: int = 4, tile_height: int = GRID_TILE_HEIGHT) -> Image.Image:
    """Frames in a grid, `per_row` per row, each numbered 1..n in its top-left corner (on the
    picture, so the grid spends its area on frames, not on caption rows)."""
    from PIL import Image, ImageDraw

    if not images:
        raise MediaError("No frames to show in the grid.")
    w0, h0 = images[0].size
    tw = max(1, round(w0 * tile_height / h0))
    th = tile_height
    gap = 3
    rows = (len(images) + per_row - 1) // per_row
    grid = Image.new("RGB", (per_row * tw + (per_row + 1) * gap, rows * th + (rows + 1) * gap), (13, 17, 23))
    draw = ImageDraw.Draw(grid)
    for i, img in enumerate(images):
        r, c = divmod(i, per_row)
        x = gap + c * (tw + gap)
        y = gap + r * (th + gap)
        grid.paste(img.convert("RGB").resize((tw, th)), (x, y))
        label = str(i + 1)
        draw.rectangle((x, y, x + 7 + 7 * len(label), y + 14), fill=(0, 0, 0))
        draw.text((x + 4, y + 2), label, fill=(255, 255, 255))
    return grid
