"""Disk cache keyed by file identity + parameters.

Layout under the root (default: $APP_CACHE_DIR or ~/.cache/video-bench-explorer):
    frames/<key>.pack                          (get_or_compute_frames: pictures stored as JPEG
                                                q=92; get_or_compute_encoded: bytes already
                                                encoded, e.g. the JPEGs a model is sent, kept as
                                                they are; one file an entry: a header line, the
                                                index as one JSON line, the items back to back)
    frames/<key>/index.json + 000000.jpg ...   (the same, as written before packs: still read,
                                                never written; evicted as any entry)
    arrays/<key>.npy                           (get_or_compute_array)
    json/<key>.json                            (get_or_compute_json)
Keys are built over the video's identity (`file_identity`: size, mtime and a hash of its first
and last MiB). Every method taking a path also takes an opened source (anything with a string
`identity` attribute, e.g. a VideoSource, which computes it once when it opens), so a caller that
asks many times does not hash the file many times.
Every entry is written through components.base.io's atomic writes (a temp name beside it, renamed
into place), so a crash never leaves a half-written entry under the final name; an entry that
fails to load (corrupt, partial, a file shorter or longer than its index says) is recomputed and
replaced. One file an entry: a batch run reads a clip's 16 JPEGs with one open and one read
(a folder of files cost ~50 system calls a clip, each a hand-over of the GIL at high
concurrency). frames/ is bounded (APP_FRAME_CACHE_MB, least recently used entries evicted:
cache_bound.py); a read marks the entry used (at most once a minute).
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from pathlib import Path
from typing import Any
from collections.abc import Callable, Iterable

from components.base.io import atomic_write
from components.media.cache_bound import PACK_SUFFIX, bound_for, remove, touch
from components.media.frames import Frame

_MIB = 1024 * 1024
CACHE_VERSION = 1
JPEG_QUALITY = 92
#: the first line of a frames entry's pack file (a format of its own: a later one names another)
PACK_MAGIC = b"vbe-frames-pack 1\n"
#: a read marks its entry used when the last mark is older than this (the eviction order needs
#: no finer clock, and a batch run reads each clip's entry several times a minute)
TOUCH_EVERY_S = 60.0
log = logging.getLogger(__name__)


def default_cache_dir() -> Path:
    env = os.environ.get("APP_CACHE_DIR")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "video-bench-explorer"


#: identities already computed by this process, by (path, device, inode, size, mtime, ctime):
#: any write to the file, or a change of its mtime, changes its ctime, so an unchanged key is an
#: unchanged file (a batch run asks for a clip's identity on every question that shows it)
_IDENTITIES: dict[tuple, str] = {}
_IDENTITIES_MAX = 65536


def file_identity(path: str | Path) -> str:
    """size, mtime and sha256 of the first and last MiB -> hex digest (hashed once per process
    while the file is unchanged: `_IDENTITIES`)."""
    st = os.stat(path)
    memo = (os.fspath(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    found = _IDENTITIES.get(memo)
    if found is None:
        found = _hash_identity(Path(path), st)
        if len(_IDENTITIES) >= _IDENTITIES_MAX:
            _IDENTITIES.clear()
        _IDENTITIES[memo] = found
    return found


def _hash_identity(p: Path, st: os.stat_result) -> str:
    h = hashlib.sha256()
    fd = os.open(p, os.O_RDONLY)   # the bare descriptor: a file object costs three more calls
    try:
        head = _read_at(fd, _MIB, 0)
        tail = _read_at(fd, _MIB, max(_MIB, st.st_size - _MIB)) if st.st_size > _MIB else b""
    finally:
        os.close(fd)
    h.update(f"{st.st_size}:{st.st_mtime_ns}:".encode())
    h.update(hashlib.sha256(head).digest())
    h.update(hashlib.sha256(tail).digest())
    return h.hexdigest()


def _read_at(fd: int, size: int, offset: int) -> bytes:
    """Up to `size` bytes from `offset` (fewer only at the file's end)."""
    chunks, got = [], 0
    while got < size:
        chunk = os.pread(fd, size - got, offset + got)
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def identity_of(target: str | Path | Any) -> str:
    """`target.identity` when it has one (an opened source), else file_identity(target)."""
    identity = getattr(target, "identity", None)
    return identity if isinstance(identity, str) else file_identity(target)


class DiskCache:
    def __init__(self, root: str | Path | None = None):
        self.root = Path(root) if root is not None else default_cache_dir()

    @staticmethod
    def key(path: str | Path | Any, /, **params: Any) -> str:
        """Key over the file identity and the parameters (JSON, sorted keys). `path` is a file,
        or an opened source carrying its `identity` (no re-hashing)."""
        blob = json.dumps({"v": CACHE_VERSION, "file": identity_of(path), "params": params},
                          sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:40]

    # -- frames ----------------------------------------------------------------------------------
    def get_or_compute_frames(self, video_path: str | Path | Any, params: dict,
                              compute: Callable[[], Iterable[Frame]]) -> list[Frame]:
        """Frames from the cache, or `compute()` stored as JPEG (q=92) in one pack."""
        entry = self.root / "frames" / self.key(video_path, kind="frames", **params)
        cached = _load_frames(entry, mark_used=True)
        if cached is not None:
            return cached
        # a pack whose bytes are all there but whose pictures do not decode is replaced, not kept
        undecodable = _load_pack(pack_path(entry)) is not None
        size = _store_frames(entry, compute(), keep_whole=not undecodable)
        bound_for(entry.parent).stored(pack_path(entry), size)
        # Return what a later cache hit returns (decoded JPEGs), so hits and misses agree; the
        # computed frames are not kept meanwhile, so peak memory is one copy of the frames.
        loaded = _load_frames(entry)
        if loaded is None:
            raise OSError(f"frame cache entry {pack_path(entry)} could not be read back after writing it")
        return loaded

    def holds(self, video_path: str | Path | Any, kind: str, params: dict) -> bool:
        """True when an entry of `kind` ("frames" or "encoded") under `params` is stored (its
        file or, of the old layout, its index is there; nothing is read)."""
        entry = self.root / "frames" / self.key(video_path, kind=kind, **params)
        return pack_path(entry).is_file() or (entry / "index.json").is_file()

    def lookup_encoded(self, video_path: str | Path | Any, params: dict) -> list[tuple[bytes, dict]] | None:
        """The stored encoded pictures ([(bytes, their index entry)]), or None when absent or
        damaged. Nothing is decoded."""
        entry = self.root / "frames" / self.key(video_path, kind="encoded", **params)
        return _load_stored(entry, mark_used=True)

    def get_or_compute_encoded(self, video_path: str | Path | Any, params: dict,
                               compute: Callable[[], Iterable[tuple[bytes, dict]]]) -> list[tuple[bytes, dict]]:
        """Pictures already encoded (e.g. the JPEGs a model is sent) from the cache, or
        `compute()` stored byte for byte. Each item is (bytes, a JSON-able dict describing them:
        mime, width, height, ...); the dict comes back with "bytes" added."""
        found = self.lookup_encoded(video_path, params)
        if found is not None:
            return found
        entry = self.root / "frames" / self.key(video_path, kind="encoded", **params)
        items = [(bytes(data), dict(meta)) for data, meta in compute()]
        try:
            size = _store_entry(entry, items)
            bound_for(entry.parent).stored(pack_path(entry), size)
        except OSError as exc:  # a full disk, a read-only or misnamed cache: served, not kept
            _warn_once(f"The frames cache {self.root} cannot be written ({exc.strerror or exc}); "
                       "frames are made again by every run. Point APP_CACHE_DIR at a writable folder.")
        return [(data, {**meta, "bytes": len(data)}) for data, meta in items]

    # -- arrays ----------------------------------------------------------------------------------
    def get_or_compute_array(self, path: str | Path | Any, params: dict,
                             compute: Callable[[], Any]) -> Any:
        """np.ndarray from the cache (.npy), or `compute()` stored atomically."""
        import numpy as np

        final = self.root / "arrays" / f"{self.key(path, kind='array', **params)}.npy"
        if final.exists():
            try:
                return np.load(final, allow_pickle=False)
            except Exception:  # noqa: BLE001 - corrupt entry: recompute
                pass
        value = np.asarray(compute())
        atomic_write(final, lambda fh: np.save(fh, value, allow_pickle=False))
        return value

    # -- json ------------------------------------------------------------------------------------
    def get_or_compute_json(self, path: str | Path, params: dict, compute: Callable[[], Any]) -> Any:
        found = self.lookup_json(path, params)
        if found is not None:
            return found
        return self.store_json(path, params, compute())

    def lookup_json(self, path: str | Path | Any, params: dict) -> Any | None:
        """The stored JSON value, or None when absent or unreadable."""
        final = self.root / "json" / f"{self.key(path, kind='json', **params)}.json"
        if final.exists():
            try:
                return json.loads(final.read_text())["value"]
            except Exception:  # noqa: BLE001 - corrupt entry: recompute
                pass
        return None

    def store_json(self, path: str | Path | Any, params: dict, value: Any) -> Any:
        """Store `value` (atomically); returns it as a later lookup returns it."""
        final = self.root / "json" / f"{self.key(path, kind='json', **params)}.json"
        data = json.dumps({"value": value}).encode()
        atomic_write(final, lambda fh: fh.write(data))
        return json.loads(data)["value"]


_warned: set[str] = set()


def _warn_once(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        log.warning(message)


def pack_path(entry: Path) -> Path:
    """The one file an entry is stored in (`entry` names it without its suffix)."""
    return entry.with_name(entry.name + PACK_SUFFIX)


def _store_frames(entry: Path, frames: Iterable[Frame], *, keep_whole: bool = True) -> int:
    """Write `frames` as JPEGs (q=92) into the entry's pack (see `_store_entry`); returns the
    bytes written."""
    import io

    def encoded():
        for frame in frames:
            buf = io.BytesIO()
            frame.image.convert("RGB").save(buf, format="JPEG", quality=JPEG_QUALITY)
            yield buf.getvalue(), {"time": frame.time, "index": frame.index}
    return _store_entry(entry, encoded(), keep_whole=keep_whole)


def _store_entry(entry: Path, items: Iterable[tuple[bytes, dict]], *, keep_whole: bool = True) -> int:
    """Write every item into the entry's one pack file (`pack_path`: a header line, the index as
    one JSON line listing each item's size, then the items' bytes back to back) through
    base/io's `atomic_write` (a temp file beside it, fsynced, renamed into place, the folder
    fsynced), so the pack is whole or absent, never partial. A whole entry of the same key stored
    meanwhile is kept (0 returned; unless not `keep_whole`); an entry of the old layout (a folder) that was damaged is
    removed. Returns the bytes written."""
    items = [(bytes(data), dict(meta)) for data, meta in items]
    final = pack_path(entry)
    if keep_whole and _load_pack(final) is not None:  # another thread or process stored it meanwhile: kept
        return 0
    index = json.dumps({"frames": [{**meta, "bytes": len(data)} for data, meta in items]}).encode()

    def write(fh) -> None:
        fh.write(PACK_MAGIC)
        fh.write(index + b"\n")
        for data, _ in items:
            fh.write(data)
    atomic_write(final, write)
    if entry.is_dir():  # the old layout's entry, damaged (a whole one is read, never replaced)
        remove(entry)
    return len(PACK_MAGIC) + len(index) + 1 + sum(len(data) for data, _ in items)


def _read_file(path: str) -> tuple[bytes, float] | None:
    """A file's bytes and its mtime through the bare descriptor (one open, fstat, read, close:
    a Python file object costs several times the read of a small file); None when absent."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        data = os.read(fd, st.st_size + 1)  # one byte more: a file that grew meanwhile shows
        while len(data) <= st.st_size:      # a short read (not a regular file system's)
            more = os.read(fd, st.st_size + 1 - len(data))
            if not more:
                break
            data += more
        return data, st.st_mtime
    finally:
        os.close(fd)


def _load_pack(path: Path, *, mark_used: bool = False) -> list[tuple[bytes, dict]] | None:
    """Every item of a pack file, or None when it is absent, damaged, cut short or longer than
    its index says. `mark_used`: a read marks it used (its mtime, at most once a minute)."""
    try:
        found = _read_file(os.fspath(path))
    except OSError:
        return None
    if found is None:
        return None
    blob, mtime = found
    try:
        if not blob.startswith(PACK_MAGIC):
            return None
        end = blob.index(b"\n", len(PACK_MAGIC))
        items = json.loads(blob[len(PACK_MAGIC):end])["frames"]
        if not isinstance(items, list):
            return None
        out, at = [], end + 1
        for item in items:
            size = int(item["bytes"])
            out.append((blob[at:at + size], item))
            at += size
        if at != len(blob):
            return None
    except Exception:  # noqa: BLE001 - corrupt / partial entry: caller recomputes
        return None
    if mark_used and time.time() - mtime > TOUCH_EVERY_S:
        touch(path)
    return out


def _load_stored(entry: Path, *, mark_used: bool = False) -> list[tuple[bytes, dict]] | None:
    """The entry's items: its pack, or an entry of the old layout (a folder of files and their
    index.json, written before packs: still read, never written); None when neither is whole."""
    found = _load_pack(pack_path(entry), mark_used=mark_used)
    if found is None:
        found = _load_folder(entry)
        if found is not None and mark_used:
            touch(entry)
    return found


def _load_folder(entry: Path) -> list[tuple[bytes, dict]] | None:
    """The old layout: every file of the entry as stored, or None when one is missing or not the
    size its index says (a truncated write)."""
    folder = os.fspath(entry) + os.sep
    try:
        found = _read_file(folder + "index.json")
        if found is None:
            return None
        items = json.loads(found[0])["frames"]
        if not isinstance(items, list):
            return None
        out = []
        for item in items:
            size = int(item["bytes"])
            got = _read_file(folder + item["file"])
            if got is None or len(got[0]) != size:
                return None
            out.append((got[0], item))
        return out
    except Exception:  # noqa: BLE001 - absent, corrupt or partial entry: caller recomputes
        return None


def _load_frames(entry: Path, *, mark_used: bool = False) -> list[Frame] | None:
    import io

    from PIL import Image

    stored = _load_stored(entry, mark_used=mark_used)
    if stored is None:
        return None
    try:
        frames = []
        for data, item in stored:
            with Image.open(io.BytesIO(data)) as im:
                im.load()
                image = im.convert("RGB")
            frames.append(Frame(image=image, time=float(item["time"]), index=int(item["index"])))
        return frames
    except Exception:  # noqa: BLE001 - corrupt entry: caller recomputes
        return None
