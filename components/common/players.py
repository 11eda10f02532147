"""Files for the page's players: served where they lie, and probed once.

gradio hashes every file it sends (the whole file, each time) and copies it into its own cache,
unless the file lies in a static path: a two-hour movie would be read end to end on each
window-search page and kept twice on disk. `serve_in_place(folders)` makes the data folders static.

Each time a gr.Video is sent a file, gradio runs `ffprobe` on it to check that a browser can play
it (`processing_utils.video_is_playable`, ~90 ms on 2 cores): the movie on every window-search
page, the clip on every Impact clip change, six clips a Cloze question in video display. A file's
answer does not change while the file does not, so `probe_videos_once()` keeps each answer by the
file's identity (path, size, mtime): a changed or new file is probed again, an unplayable one is
still converted by gradio. `trusting_own_media` goes further for media this app encoded itself.
"""
from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gradio as gr
from gradio import processing_utils
from gradio.data_classes import FileData

from components.base.io import atomic_write_bytes
from components.base.lru import SingleFlightLRU
from components.media import is_kept

_VERDICTS: SingleFlightLRU[tuple, bool] = SingleFlightLRU(4096)
_PROBE: Callable[[str], bool] = processing_utils.video_is_playable
_STATIC: set[str] = set()
#: (id of a kept image, cache folder, name, format) -> (the file it was written to, its size)
_SENT: dict[tuple, tuple[str, int]] = {}
_SENT_LOCK = threading.Lock()


def _identity(path: str) -> tuple | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return os.path.realpath(path), st.st_size, st.st_mtime_ns


def playable(path: str) -> bool:
    """gradio's verdict on `path`, probed once per version of the file."""
    key = _identity(path)
    if key is None:        # gradio says what is wrong with a missing file; nothing to keep
        return _PROBE(path)
    return _VERDICTS.get(key, lambda: _PROBE(path))


def serve_in_place(folders: list[str]) -> None:
    """Serve the files under `folders` from where they lie and probe each video once. Called
    before the page is built (gradio reads the static paths as it builds) by each launcher. gradio
    keeps one list for the process and adds to it (each served file is checked against every
    entry), so a folder is added once."""
    new = [str(Path(f).resolve()) for f in folders]
    new = [f for f in dict.fromkeys(new) if f not in _STATIC]
    if new:
        gr.set_static_paths(new)
        _STATIC.update(new)
    probe_videos_once()


def probe_videos_once() -> None:
    """Make every gr.Video of this process use `playable`, and every image gradio sends be
    written once (`save_image_once`) (idempotent). Called by the pages that build players (the
    explorer and the study page), before they serve."""
    processing_utils.video_is_playable = playable
    processing_utils.save_pil_to_cache = save_image_once


def save_image_once(img: Any, cache_dir: str, name: str = "image", format: str = "webp") -> str:
    """gradio's `save_pil_to_cache`, without rewriting a file the page may be reading. gradio names
    the file by its bytes' hash and writes it again, truncated first, every time the same image is
    sent: a browser fetching it meanwhile (another page showing the same Cloze question, or a
    second event of the same page) got a file that changed size under the server ("Too much data
    for declared Content-Length") and a broken image. Written once, by a rename of a whole file.
    An image a cache keeps unchanged (media.mark_kept: a Cloze clip's frame grid) is encoded once:
    gradio encodes every image it sends (~3 ms a grid, six a question) only to name its file."""
    key = (id(img), str(cache_dir), name, format) if is_kept(img) else None
    if key is not None:
        with _SENT_LOCK:
            sent = _SENT.get(key)
        if sent is not None and _size(sent[0]) == sent[1]:   # the file still whole
            return sent[0]
    data = processing_utils.encode_pil_to_bytes(img, format)
    path = (Path(cache_dir) / processing_utils.hash_bytes(data) / f"{name}.{format}").resolve()
    try:
        whole = path.stat().st_size == len(data)
    except OSError:
        whole = False
    if not whole:
        atomic_write_bytes(path, data, durable=False)
    if key is not None:
        with _SENT_LOCK:
            if key not in _SENT:   # forgotten with the image (its id may then be reused)
                weakref.finalize(img, _forget_sent, key)
            _SENT[key] = (str(path), len(data))
    return str(path)


def _size(path: str) -> int | None:
    try:
        return os.stat(path).st_size
    except OSError:
        return None


def _forget_sent(key: tuple) -> None:
    with _SENT_LOCK:
        _SENT.pop(key, None)


def _serve_as_is(value: str | Path | None, original: Callable[[Any], Any]) -> FileData | None:
    if isinstance(value, (str, Path)):
        return FileData(path=str(value), orig_name=Path(value).name)
    return original(value)


def trusting_own_media(video: gr.Video) -> gr.Video:
    """A player of media this app made browser-playable itself when it wrote them (the study's
    clips): no probe at all. Set on the instance: a gr.Video subclass would make gradio write a .pyi
    stub beside the module that defines it."""
    original = video.postprocess
    video.postprocess = lambda value: _serve_as_is(value, original)  # type: ignore[method-assign]
    return video
