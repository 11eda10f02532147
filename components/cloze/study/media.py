"""What an annotator's browser receives: candidate media under opaque per-question names.

A clip is hard-linked (or copied, across file systems) into a per-study cache as
`sha256(study:annotator:task:slot)[:24].mp4`, so no URL, download or response carries an option
name (GT, Rand1, Early, ...). Frames are drawn as the released app's compact edge view: BEGINNING's
last 4 frames, each candidate's first 2 and last 2 frames, END's first 4 frames, in one image."""
from __future__ import annotations

import hashlib
import os
import shutil
import threading
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING

from components.cloze.layout import Instance
from components.cloze.questions import LETTERS, Question
from components.common.errors import MediaError
from components.media import open_video

if TYPE_CHECKING:
    from PIL import Image

SLOTS = ("BEGINNING", "END", *LETTERS)
EDGE_TILE_HEIGHT = 90
_edge_cache: OrderedDict[tuple, Image.Image] = OrderedDict()
_edge_lock = threading.Lock()
_EDGE_CACHE_SIZE = 512


def opaque_name(study: str, annotator: str, task_index: int, slot: str) -> str:
    """A file name that says nothing about the clip behind it."""
    return hashlib.sha256(f"{study}:{annotator}:{task_index}:{slot}".encode()).hexdigest()[:24] + ".mp4"


def _link(src: Path, dest: Path) -> Path:
    if dest.exists() and dest.stat().st_size == src.stat().st_size:
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".part")
    tmp.unlink(missing_ok=True)
    try:
        os.link(src, tmp)
    except OSError:
        shutil.copyfile(src, tmp)
    os.replace(tmp, dest)
    return dest


def question_clips(inst: Instance, q: Question) -> list[Path]:
    """[before, after, A..D] as files on disk (named by option: never sent to a browser)."""
    return [inst.clip_path(n) for n in ("before", "after", *q.options)]


def opaque_videos(cache: Path, study: str, annotator: str, task_index: int, inst: Instance,
                  q: Question) -> list[str]:
    """The six clips linked into `cache` under opaque names, in SLOTS order."""
    return [str(_link(src, cache / opaque_name(study, annotator, task_index, slot)))
            for slot, src in zip(SLOTS, question_clips(inst, q))]


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


def edge_view(clips: list[Path]) -> Image.Image:
    """One image: row 1 BEGINNING (last 4) | END (first 4); rows 2-3 candidates A B / C D, each
    first 2 | last 2 frames, labelled. Cached by the clips' paths, sizes and times."""
    from PIL import Image, ImageDraw

    key = tuple((str(p), *((p.stat().st_size, p.stat().st_mtime_ns) if p.exists() else ())) for p in clips)
    with _edge_lock:
        if key in _edge_cache:
            _edge_cache.move_to_end(key)
            return _edge_cache[key]
    th = EDGE_TILE_HEIGHT
    before = [_tile(f, th) for f in _edge_frames(clips[0], 0, 4)[1]]
    after = [_tile(f, th) for f in _edge_frames(clips[1], 4, 0)[0]]
    cands = []
    for p in clips[2:]:
        head, tail = _edge_frames(p, 2, 2)
        cands.append([_tile(f, th) for f in (*head, *tail)])
    tw = before[0].size[0] if before else th
    gap, cap = 6, 20
    width = 8 * tw + 7 * 2 + 3 * gap + 24
    canvas = Image.new("RGB", (width, 3 * (th + cap) + 4 * gap), "white")
    draw = ImageDraw.Draw(canvas)

    def strip(images, x: int, y: int, label: str) -> None:
        draw.text((x, y), label, fill="black")
        for k, img in enumerate(images):
            canvas.paste(img, (x + k * (tw + 2), y + cap))

    half = 4 * (tw + 2) + gap + 12
    strip(before, 12, gap, "BEGINNING (last 4 frames)")
    strip(after, 12 + half, gap, "END (first 4 frames)")
    for i, frames in enumerate(cands):
        r, c = divmod(i, 2)
        strip(frames, 12 + c * half, gap + (r + 1) * (th + cap + gap), f"{LETTERS[i]}  (first 2 | last 2)")
    with _edge_lock:
        _edge_cache[key] = canvas
        while len(_edge_cache) > _EDGE_CACHE_SIZE:
            _edge_cache.popitem(last=False)
    return canvas
