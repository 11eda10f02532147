"""A value read from a file, read again only when the file changes (pure; no gradio).

The tabs read their annotation files when a page asks for them, not when the app is built: the
app starts at the same speed whatever the data's size, and a file that appears later (example
data made in the background on a Space's first start) or is edited is picked up by the next page.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

from components.base.lru import SingleFlightLRU

T = TypeVar("T")


def file_stamp(path: Path) -> tuple | None:
    """(size, mtime) of `path`, or None when it does not exist."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


class WatchedFile(Generic[T]):
    """`load()` for `path`, kept until the file's size or mtime changes (or it appears or goes);
    read once however many requests ask at once. `load` handles a missing file itself."""

    def __init__(self, path: Path, load: Callable[[], T]) -> None:
        self.path = Path(path)
        self._load = load
        self._kept: SingleFlightLRU[tuple | None, T] = SingleFlightLRU(1)

    def get(self) -> T:
        return self._kept.get(file_stamp(self.path), self._load)
