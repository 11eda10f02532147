"""Where a repository's files appear on this machine, and the file questions the data modules ask.

A mount ties a local folder (the *lexical* root, a real folder the app may also write into) to
a folder of a repository at one commit. Until a file is fetched it exists only in the mount's
listing; `local(path)` fetches it into the Hugging Face cache and links it at its lexical path,
so from then on it is an ordinary file there (and still one after a restart, offline too). The
other functions answer from the listing and the disk together, so a data module asks them the
same questions for a local folder (where they are plain `os` calls) and for a repository.

Nothing here talks to the Hub: a mount brings its own `fetch` (components/datasource/hub.py).
"""
from __future__ import annotations

import fnmatch
import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from components.base.io import LINK_TEMP_SUFFIX, atomic_symlink


class Index:
    """A folder's files as listed once: relative path -> size, and each folder's entries."""

    def __init__(self, files: dict[str, int]) -> None:
        self.files = dict(files)
        self.children: dict[str, dict[str, int | None]] = {"": {}}
        for path, size in self.files.items():
            parent, _, name = path.rpartition("/")
            self.children.setdefault(parent, {})[name] = size
            while parent:
                up, _, folder = parent.rpartition("/")
                siblings = self.children.setdefault(up, {})
                if folder in siblings:
                    break
                siblings[folder] = None
                self.children.setdefault(parent, {})
                parent = up

    def is_file(self, rel: str) -> bool:
        return rel in self.files

    def is_dir(self, rel: str) -> bool:
        return rel in self.children

    def entries(self, rel: str) -> dict[str, int | None]:
        """name -> size (None for a folder) of the folder `rel`; {} when it is not one."""
        return self.children.get(rel, {})

    def total_bytes(self) -> int:
        return sum(self.files.values())


@dataclass
class Mount:
    root: str                                  # absolute local folder (lexical)
    index: Index
    fetch: Callable[[str], str]                # relative path -> the fetched file's path
    source: str                                # the pinned spec, e.g. hf://datasets/o/n@<commit>/cloze
    linked: set[str] = field(default_factory=set)

    def rel(self, path: str) -> str | None:
        if path == self.root:
            return ""
        if path.startswith(self.root + os.sep):
            return path[len(self.root) + 1:].replace(os.sep, "/")
        return None


_mounts: list[Mount] = []
_lock = threading.Lock()


def add_mount(mount: Mount) -> None:
    """Register `mount` (replacing one at the same root); its root folder is created."""
    os.makedirs(mount.root, exist_ok=True)
    with _lock:
        _mounts[:] = sorted([m for m in _mounts if m.root != mount.root] + [mount],
                            key=lambda m: len(m.root), reverse=True)


def remove_mounts(under: str | Path | None = None) -> None:
    """Forget the mounts at or below `under` (all of them without it); nothing on disk changes."""
    with _lock:
        if under is None:
            _mounts.clear()
            return
        base = os.path.abspath(under)
        _mounts[:] = [m for m in _mounts if not (m.root == base or m.root.startswith(base + os.sep))]


def mounts() -> list[Mount]:
    with _lock:
        return list(_mounts)


def find(path: str | Path) -> tuple[Mount, str] | None:
    """The mount holding `path` and the path relative to its root, or None (a local path)."""
    if not _mounts:  # no repository opened: every path is local (the common case, kept cheap)
        return None
    text = os.path.abspath(path)
    with _lock:
        for m in _mounts:
            rel = m.rel(text)
            if rel is not None:
                return m, rel
    return None


def source_of(path: str | Path) -> str | None:
    """The pinned spec of the repository `path` comes from (None for a local path, also one in a
    mounted folder that the repository does not hold, e.g. a run the app wrote there)."""
    hit = find(path)
    if hit is None:
        return None
    mount, rel = hit
    return mount.source if mount.index.is_file(rel) or mount.index.is_dir(rel) else None


def local(path: str | Path) -> Path:
    """`path` as a file on this machine: fetched (and linked there) first when it is a repository
    file not fetched yet. A local path, or one no listing names, is returned as it is (the reader
    then says it is missing)."""
    p = Path(path)
    if os.path.exists(p):
        return p
    hit = find(p)
    if hit is None:
        return p
    mount, rel = hit
    if not mount.index.is_file(rel):
        return p
    target = mount.fetch(rel)
    atomic_symlink(target, os.path.abspath(p))
    mount.linked.add(rel)
    return p


def local_all(paths: Iterable[str | Path]) -> list[Path]:
    return [local(p) for p in paths]


def exists(path: str | Path) -> bool:
    return is_file(path) or is_dir(path)


def is_file(path: str | Path) -> bool:
    hit = find(path)
    if hit is not None and hit[0].index.is_file(hit[1]):
        return True
    return os.path.isfile(path)


def is_dir(path: str | Path) -> bool:
    hit = find(path)
    if hit is not None and hit[0].index.is_dir(hit[1]):
        return True
    return os.path.isdir(path)


def size(path: str | Path) -> int | None:
    """Bytes of a file (from the listing when it is not fetched yet), None when there is none."""
    hit = find(path)
    if hit is not None and hit[0].index.is_file(hit[1]):
        return hit[0].index.files[hit[1]]
    try:
        return os.stat(path).st_size if os.path.isfile(path) else None
    except OSError:
        return None


def entries(path: str | Path) -> dict[str, int | None]:
    """name -> size (None for a folder) of the folder `path`, listed and on disk together."""
    out: dict[str, int | None] = {}
    hit = find(path)
    if hit is not None:
        out.update(hit[0].index.entries(hit[1]))
    try:
        with os.scandir(path) as found:
            for entry in found:
                if entry.name in out or entry.name.endswith(LINK_TEMP_SUFFIX):
                    continue
                try:
                    out[entry.name] = None if entry.is_dir() else entry.stat().st_size
                except OSError:  # a dangling link: the listing (above) is what counts
                    continue
    except OSError:
        pass
    return out


def subfolders(path: str | Path) -> list[Path]:
    """The folders in `path`, sorted by name."""
    base = Path(path)
    return [base / name for name, s in sorted(entries(base).items()) if s is None]


def glob(root: str | Path, pattern: str) -> list[Path]:
    """Files under `root` matching a relative pattern whose parts may hold `*` (no `**`)."""
    found = [Path(root)]
    for part in pattern.split("/"):
        step = []
        for folder in found:
            names = entries(folder)
            step.extend(folder / n for n in sorted(names) if fnmatch.fnmatchcase(n, part))
        found = step
    return [p for p in found if is_file(p)]


def stamp(path: str | Path) -> str | None:
    """What identifies a mounted folder's contents: its pinned spec (immutable); None if local."""
    return source_of(path)
