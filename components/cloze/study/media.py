"""What an annotator's browser receives: candidate media under opaque per-question names.

A clip is copied into a per-study cache as `sha256(study:annotator:task:slot)[:24].mp4`, so no URL,
download or response carries an option name (GT, Rand1, Early, ...). Each copy ends in an MP4
`free` box (players skip it) holding bytes derived from its name: gradio files a served copy under
a hash of its content, and without the salt the true middle, which is in all three questions of a
stem, would carry the same hash in every one of them. A source a browser cannot play is converted
to H.264 MP4 once; the check (ffprobe) runs once per source file, not per request. Frames are drawn as the released app's compact edge view: BEGINNING's
last 4 frames, each candidate's first 2 and last 2 frames, END's first 4 frames, in one image."""
from __future__ import annotations

import hashlib
import logging
import shutil
import struct
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from components import datasource
from components.cloze.data import Instance
from components.cloze.questions import LETTERS, Question
from components.base.errors import MediaError
from components.base.io import atomic_write
from components.base.lru import SingleFlightLRU
from components.media import open_video
from components.media.probe import browser_playable

if TYPE_CHECKING:
    from PIL import Image

SLOTS = ("BEGINNING", "END", *LETTERS)
EDGE_TILE_HEIGHT = 90
EDGE_VIEWS_KEPT = 512
#: the app's drawn views by their clips' paths, sizes and times (a changed clip: a new key); the
#: views take `cache=` another, e.g. a test's own
EDGE_VIEWS: SingleFlightLRU[tuple, Image.Image] = SingleFlightLRU(EDGE_VIEWS_KEPT)
_prefetcher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="study-prefetch")
log = logging.getLogger(__name__)


def opaque_name(study: str, annotator: str, task_index: int | str, slot: str) -> str:
    """A file name that says nothing about the clip behind it."""
    return hashlib.sha256(f"{study}:{annotator}:{task_index}:{slot}".encode()).hexdigest()[:24] + ".mp4"


#: sources checked (one entry per clip file, a few hundred bytes each)
PLAYABLE_KEPT = 16384
#: the app's checked sources (`playable_source` takes `checked=` another, e.g. a test's own)
PLAYABLE: SingleFlightLRU[tuple, Path] = SingleFlightLRU(PLAYABLE_KEPT)


def playable_source(src: Path, cache: Path, *, checked: SingleFlightLRU[tuple, Path] = PLAYABLE) -> Path:
    """`src` if a browser plays it as MP4, else an MP4 made from it once (kept in `cache`)."""
    st = src.stat()
    key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)  # hard links of one clip: one check

    def check() -> Path:
        if src.suffix.lower() == ".mp4" and browser_playable(src):
            return src
        from gradio import processing_utils  # ffmpeg, as gradio's own Video would convert it

        converted = Path(processing_utils.convert_video_to_playable_mp4(
            str(src), cache_dir=str(cache / "converted")))
        if converted.suffix.lower() != ".mp4":
            raise MediaError(f"{src} could not be converted to a browser-playable MP4; re-encode it "
                             "with: ffmpeg -i in -c:v libx264 -pix_fmt yuv420p out.mp4")
        return converted
    return checked.get(key, check)


def _salt(name: str) -> bytes:
    pad = hashlib.sha256(f"free:{name}".encode()).digest()
    return struct.pack(">I4s", 8 + len(pad), b"free") + pad


def _materialise(src: Path, dest: Path) -> Path:
    """A salted copy of `src` at `dest` (reused while its size matches)."""
    salt = _salt(dest.name)
    if dest.exists() and dest.stat().st_size == src.stat().st_size + len(salt):
        return dest

    def copy(out: BinaryIO) -> None:
        with open(src, "rb") as data:
            shutil.copyfileobj(data, out)
        out.write(salt)
    return atomic_write(dest, copy, durable=False)  # a cache: a lost copy is made again


def question_clips(inst: Instance, q: Question) -> list[Path]:
    """[before, after, A..D] (named by option: never sent to a browser). From a repository they
    are fetched by what reads them (`fetched`), so a prefetch fetches in the background."""
    return [inst.clip_path(n) for n in ("before", "after", *q.options)]


def fetched(clips: list[Path]) -> list[Path]:
    """The clips as local files: those of a repository not fetched yet fetched side by side."""
    datasource.fetch_all(clips, progress=False)
    return clips


def opaque_videos(cache: Path, study: str, annotator: str, task_index: int, inst: Instance,
                  q: Question) -> list[str]:
    """The six clips copied into `cache` under opaque names, in SLOTS order, each playable in a
    browser as it is (so the page's players need no per-request probing)."""
    return opaque_copies(cache, study, annotator, task_index, fetched(question_clips(inst, q)))


def opaque_copies(cache: Path, study: str, annotator: str, key: int | str, clips: list[Path]) -> list[str]:
    """`clips` ([before, after, A..D]) copied as `opaque_videos` copies a question's."""
    return [str(_materialise(playable_source(src, cache), cache / opaque_name(study, annotator, key, slot)))
            for slot, src in zip(SLOTS, clips)]


def _edge_frames(path: Path, first: int, last: int) -> tuple[list, list]:
    if not path.is_file():
        raise MediaError(f"Clip not found: {path}. Restore it or rebuild the study folder.")
    src = open_video(path)
    try:
        total = src.num_frames
        if total <= 0:
            raise MediaError(f"{path} has no frames; re-cut this clip.")
        idx = sorted({*range(min(first, total)), *range(max(0, total - last), total)})
        frames = {i: f.image.convert("RGB") for i, f in
                  zip(idx, src.frames_at_indices(idx, max_height=EDGE_TILE_HEIGHT * 2))}
    finally:
        src.close()
    head = [frames[i] for i in range(min(first, total))]
    tail = [frames[i] for i in range(max(0, total - last), total)]
    return head, tail


def _tile(img: Image.Image, height: int) -> Image.Image:
    w, h = img.size
    return img.resize((max(1, round(w * height / h)), height))


def _file_key(p: Path) -> tuple:
    pinned = datasource.stamp(p)  # a repository's file never changes at its commit
    if pinned:
        return (pinned,)
    return (p.stat().st_size, p.stat().st_mtime_ns) if p.exists() else ()


def _edge_key(clips: list[Path]) -> tuple:
    return tuple((str(p), *_file_key(p)) for p in clips)


def edge_view(clips: list[Path], *, cache: SingleFlightLRU[tuple, Image.Image] = EDGE_VIEWS) -> Image.Image:
    """One image: row 1 BEGINNING (last 4) | END (first 4); rows 2-3 candidates A B / C D, each
    first 2 | last 2 frames, labelled. Cached by the clips' paths, sizes and times; a view being
    drawn (by `prefetch_edge_view`) is waited for, not drawn twice."""
    return cache.get(_edge_key(clips), lambda: _draw_edge_view(clips))


def frames_name(study: str, key: str, clips: list[Path], kind: str) -> str:
    """The opaque file name of a question's frames image: one per question, display and state of
    its clips (a replaced clip gives a new name), shared by the set's annotators (it shows what
    every one of them sees)."""
    what = f"{study}:{key}:{kind}:{_edge_key(clips)!r}"
    return hashlib.sha256(what.encode()).hexdigest()[:24] + ".jpg"


def frames_file(cache: Path, study: str, key: str, clips: list[Path], kind: str) -> str:
    """The question's frames image as a JPEG under an opaque name in the media cache, written once:
    the page is told its name, so it knows when the image it shows is this question's."""
    dest = cache / frames_name(study, key, clips, kind)
    if not dest.exists():
        image = frames_view(clips, kind)
        atomic_write(dest, lambda out: image.save(out, format="JPEG", quality=85), durable=False)
    return str(dest)


def frames_view(clips: list[Path], kind: str) -> Image.Image:
    """The question drawn for a frames display: "frames" the edge view, "frames16" the grids."""
    return grid16_view(clips) if kind == "frames16" else edge_view(clips)


def grid16_view(clips: list[Path], *, cache: SingleFlightLRU[tuple, Image.Image] = EDGE_VIEWS) -> Image.Image:
    """The released app's older frames display, in one image: each clip as 16 frames at
    endpoint-inclusive indices floor(i * (total - 1) / 15), 4 per row, captioned 1..16; BEGINNING
    and END on the first row, A B and C D below. Cached like the edge view."""
    return cache.get(("grid16", *_edge_key(clips)), lambda: _draw_grid16(clips))


GRID_TILE_HEIGHT = 54
#: the drawn labels' font sizes (px of the image). A phone shows each strip of the picture at the
#: screen's width (page.py), ~0.7 of its size for the edge view, ~1.2 for the grids: these keep a
#: strip's label at 12 px or more on a 390 px screen (tests/browser/test_phone.py measures it)
EDGE_LABEL_PX = 22
GRID_LABEL_PX = 16
GRID_NUMBER_PX = 12


def label_font(size: int):
    """The font the pictures' labels are drawn in (Pillow's own, at `size` px: nothing to install)."""
    from PIL import ImageFont

    return ImageFont.load_default(size=size)


def _grid_frames(path: Path) -> list:
    if not path.is_file():
        raise MediaError(f"Clip not found: {path}. Restore it or rebuild the study folder.")
    src = open_video(path)
    try:
        if src.num_frames <= 0:
            raise MediaError(f"{path} has no frames; re-cut this clip.")
        return [f.image.convert("RGB") for f in src.endpoint(16, max_height=GRID_TILE_HEIGHT * 2)]
    finally:
        src.close()


def _draw_grid16(clips: list[Path]) -> Image.Image:
    from PIL import Image, ImageDraw

    th, cap, gap, label = GRID_TILE_HEIGHT, GRID_NUMBER_PX + 3, 10, GRID_LABEL_PX + 6
    name_font, number_font = label_font(GRID_LABEL_PX), label_font(GRID_NUMBER_PX)
    grids = [[_tile(f, th) for f in _grid_frames(p)] for p in fetched(clips)]
    tw = grids[0][0].size[0]
    gw, gh = 4 * (tw + 2), 4 * (th + cap) + label
    canvas = Image.new("RGB", (2 * gw + 3 * gap, 3 * gh + 4 * gap), "white")
    draw = ImageDraw.Draw(canvas)
    for slot, (name, frames) in enumerate(zip(("BEGINNING", "END", *LETTERS), grids)):
        r, c = divmod(slot, 2)
        x0, y0 = gap + c * (gw + gap), gap + r * (gh + gap)
        draw.text((x0, y0), name, fill="black", font=name_font)
        for k, img in enumerate(frames):
            x, y = x0 + (k % 4) * (tw + 2), y0 + label + (k // 4) * (th + cap)
            canvas.paste(img, (x, y))
            draw.text((x + 2, y + th), str(k + 1), fill="#444", font=number_font)
    return canvas


def prefetch_edge_view(clips: list[Path], kind: str = "frames",
                       file: tuple[Path, str, str] | None = None) -> None:
    """Draw a question's edge view in the background (the one an annotator will see next), so the
    answer that leads there does not wait for six clips to be decoded; with `file` = (cache,
    study, key) its JPEG is written too."""
    def draw() -> None:
        try:
            if file is not None:
                frames_file(file[0], file[1], file[2], clips, kind)
            else:
                frames_view(clips, kind)
        except Exception as exc:  # noqa: BLE001 - the real request reports it
            log.debug("edge view prefetch failed: %s", exc)
    _prefetcher.submit(draw)


def _draw_edge_view(clips: list[Path]) -> Image.Image:
    th = EDGE_TILE_HEIGHT
    clips = fetched(clips)
    before = [_tile(f, th) for f in _edge_frames(clips[0], 0, 4)[1]]
    after = [_tile(f, th) for f in _edge_frames(clips[1], 4, 0)[0]]
    cands = []
    for p in clips[2:]:
        head, tail = _edge_frames(p, 2, 2)
        cands.append([_tile(f, th) for f in (*head, *tail)])
    return edge_layout(before, after, cands, before[0].size[0] if before else th, th)


def edge_layout(before: list, after: list, cands: list[list], tw: int, th: int) -> Image.Image:
    """The edge view's picture: BEGINNING (last 4 frames) | END (first 4); candidates A B / C D,
    first 2 | last 2 frames each, every strip captioned (the study's practice question too)."""
    from PIL import Image, ImageDraw

    gap, cap = 6, EDGE_LABEL_PX + 8
    width = 8 * tw + 7 * 2 + 3 * gap + 24
    canvas = Image.new("RGB", (width, 3 * (th + cap) + 4 * gap), "white")
    draw = ImageDraw.Draw(canvas)
    font = label_font(EDGE_LABEL_PX)

    def strip(images, x: int, y: int, label: str) -> None:
        draw.text((x, y), label, fill="black", font=font)
        for k, img in enumerate(images):
            canvas.paste(img, (x + k * (tw + 2), y + cap))

    half = 4 * (tw + 2) + gap + 12
    strip(before, 12, gap, "BEGINNING (last 4 frames)")
    strip(after, 12 + half, gap, "END (first 4 frames)")
    for i, frames in enumerate(cands):
        r, c = divmod(i, 2)
        strip(frames, 12 + c * half, gap + (r + 1) * (th + cap + gap), f"{LETTERS[i]}  (first 2 | last 2)")
    return canvas
