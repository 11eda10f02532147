"""The size bound of the disk cache's frames/ folder: least recently used entries are evicted.

An entry is one file, `<key>.pack` (or, as written before packs, a folder `<key>/` of files and
their index.json). Its last use is the modification time of its pack (of the old layout, of its
index.json), touched by reads (`touch`). After each store the folder's size is checked against `APP_FRAME_CACHE_MB` (default
`DEFAULT_FRAME_CACHE_MB`); over it, the least recently used entries are removed until the folder
is under `LOW_WATER` of the bound, so a full cache is scanned once per ~10% of the bound written,
not on every store. Never removed: an entry being written (a temp file or folder, a name starting with a dot: base/io's
`atomic_write` temp files, `.tmp-*` folders of older versions; one left over from a crash is
removed once it is `STALE_TEMP_S` old) and the entry just stored. An entry is removed by renaming
it away first, so a reader finds it whole or not at all (a reader that already opened a pack
reads it to its end; one that opened an old entry's index.json and then misses a file
recomputes, as for any damaged entry).
"""
from __future__ import annotations

import logging
import os
import shutil
import threading
import time
import uuid
from pathlib import Path

#: the frames cache's default bound: a full TempCloze run (~1,500 stems x 12 clips x 16 frames at
#: 360 px, ~0.5 MB a clip) and a few prepared movies fit, so a second model reuses every clip
DEFAULT_FRAME_CACHE_MB = 16 * 1024
LOW_WATER = 0.9
STALE_TEMP_S = 3600.0
#: stores between rescans of a folder that is under its bound (other processes write there too)
RESCAN_EVERY = 512
TEMP_PREFIX = "."
EVICT_PREFIX = ".evict-"
#: the suffix of an entry's one file
PACK_SUFFIX = ".pack"
log = logging.getLogger(__name__)


def frame_cache_limit() -> int:
    """The bound in bytes: env APP_FRAME_CACHE_MB (a positive whole number of MiB), else the
    default; anything else is reported once in the log and the default used."""
    raw = os.environ.get("APP_FRAME_CACHE_MB", "").strip()
    if raw:
        if raw.isdigit() and int(raw) > 0:
            return int(raw) * 1024 * 1024
        log.warning("APP_FRAME_CACHE_MB=%r is not a positive whole number of MiB; using %d",
                    raw, DEFAULT_FRAME_CACHE_MB)
    return DEFAULT_FRAME_CACHE_MB * 1024 * 1024


def touch(entry: Path) -> None:
    """Mark `entry` used now (a pack's mtime; an old entry's index.json's); a read-only cache is
    left as it is."""
    try:
        os.utime(entry if entry.name.endswith(PACK_SUFFIX) else entry / "index.json")
    except OSError:
        pass


def entry_size(entry: Path) -> int:
    """Bytes of an entry: its pack, or every file of an old entry's folder."""
    if entry.name.endswith(PACK_SUFFIX):
        try:
            return entry.stat().st_size
        except OSError:
            return 0
    total = 0
    try:
        with os.scandir(entry) as files:
            for f in files:
                try:
                    total += f.stat(follow_symlinks=False).st_size
                except OSError:
                    pass
    except OSError:
        pass
    return total


class FolderBound:
    """The running size of one frames/ folder as this process knows it, and its eviction."""

    def __init__(self, folder: Path):
        self.folder = folder
        self._lock = threading.Lock()
        self._size: int | None = None  # None: not scanned yet
        self._stores = 0

    def stored(self, entry: Path, size: int, limit: int | None = None) -> list[Path]:
        """Account for a new entry of `size` bytes; evict when over the bound. Returns the
        entries removed."""
        limit = frame_cache_limit() if limit is None else limit
        with self._lock:
            self._stores += 1
            if self._size is not None and self._stores % RESCAN_EVERY:
                self._size += size
                if self._size <= limit:
                    return []
            return self._evict(limit, keep=entry)

    def _evict(self, limit: int, keep: Path) -> list[Path]:
        entries = scan(self.folder)
        total = sum(size for _, size, _ in entries)
        removed = []
        if total > limit:
            target = int(limit * LOW_WATER)
            for _, size, path in sorted(entries):  # least recently used first
                if total <= target:
                    break
                if path.name == keep.name:
                    continue
                if remove(path):
                    total -= size
                    removed.append(path)
        self._size = total
        return removed


def scan(folder: Path) -> list[tuple[float, int, Path]]:
    """(last use, bytes, path) of every finished entry; stale temp and evicted folders removed."""
    out = []
    now = time.time()
    try:
        listing = list(os.scandir(folder))
    except OSError:
        return out
    for d in listing:
        path = Path(d.path)
        if d.name.startswith(EVICT_PREFIX):
            _delete(path)
            continue
        if d.name.startswith(TEMP_PREFIX):  # being written (or left by a crash: removed when old)
            try:
                if now - d.stat(follow_symlinks=False).st_mtime > STALE_TEMP_S:
                    _delete(path)
            except OSError:
                pass
            continue
        if d.name.endswith(PACK_SUFFIX) and d.is_file(follow_symlinks=False):
            try:
                st = d.stat(follow_symlinks=False)
            except OSError:  # removed meanwhile
                continue
            out.append((st.st_mtime, st.st_size, path))
            continue
        if not d.is_dir(follow_symlinks=False):
            continue
        try:
            used = os.stat(path / "index.json").st_mtime
        except OSError:  # no index: not a readable entry, oldest of all
            used = 0.0
        out.append((used, entry_size(path), path))
    return out


def _delete(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            path.unlink()
        except OSError:
            pass


def remove(entry: Path) -> bool:
    """Rename `entry` away (atomic: readers see all of it or none), then delete it."""
    gone = entry.with_name(f"{EVICT_PREFIX}{entry.name}-{uuid.uuid4().hex[:8]}")
    try:
        os.replace(entry, gone)
    except OSError:  # already removed by another process
        return False
    _delete(gone)
    return True


_bounds: dict[Path, FolderBound] = {}
_bounds_lock = threading.Lock()


def bound_for(folder: Path) -> FolderBound:
    """The process's one FolderBound of `folder`."""
    key = Path(os.path.abspath(folder))
    with _bounds_lock:
        found = _bounds.get(key)
        if found is None:
            found = _bounds[key] = FolderBound(key)
        return found
