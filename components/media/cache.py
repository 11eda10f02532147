"""Disk cache keyed by file identity + parameters.

Layout under the root (default: $APP_CACHE_DIR or ~/.cache/video-bench-explorer):
    frames/<key>/index.json + 000000.jpg ...   (get_or_compute_frames: pictures stored as JPEG
                                                q=92; get_or_compute_encoded: bytes already
                                                encoded, e.g. the JPEGs a model is sent, kept as
                                                they are)
    arrays/<key>.npy                           (get_or_compute_array)
    json/<key>.json                            (get_or_compute_json)
Keys are built over the video's identity (`file_identity`: size, mtime and a hash of its first
and last MiB). Every method taking a path also takes an opened source (anything with a string
`identity` attribute, e.g. a VideoSource, which computes it once when it opens), so a caller that
asks many times does not hash the file many times.
Every entry is written to a temporary name in the same directory and renamed into place, so a
crash never leaves a half-written entry under the final name; an entry that fails to load
(corrupt, partial, missing files, a file shorter than its index says) is recomputed and replaced.
frames/ is bounded (APP_FRAME_CACHE_MB, least recently used entries evicted: cache_bound.py); a
read marks the entry used.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any
from collections.abc import Callable, Iterable

from components.base.io import atomic_write, fsync_dir
from components.media.cache_bound import TEMP_PREFIX, bound_for, touch
from components.media.frames import Frame

_MIB = 1024 * 1024
CACHE_VERSION = 1
JPEG_QUALITY = 92
#: permissions of a stored frames folder (mkdtemp alone would leave 0700)
DIR_MODE = 0o755
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
    with open(p, "rb") as fh:
        head = fh.read(_MIB)
        if st.st_size > _MIB:
            fh.seek(max(_MIB, st.st_size - _MIB))
            tail = fh.read(_MIB)
        else:
            tail = b""
    h.update(f"{st.st_size}:{st.st_mtime_ns}:".encode())
    h.update(hashlib.sha256(head).digest())
    h.update(hashlib.sha256(tail).digest())
    return h.hexdigest()


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
        """Frames from the cache, or `compute()` stored as JPEG (q=92) + index.json."""
        final = self.root / "frames" / self.key(video_path, kind="frames", **params)
        cached = _load_frames(final)
        if cached is not None:
            touch(final)
            return cached
        size = _store_frames(final, compute())
        bound_for(final.parent).stored(final, size)
        # Return what a later cache hit returns (decoded JPEGs), so hits and misses agree; the
        # computed frames are not kept meanwhile, so peak memory is one copy of the frames.
        loaded = _load_frames(final)
        if loaded is None:
            raise OSError(f"frame cache entry {final} could not be read back after writing it")
        return loaded

    def lookup_encoded(self, video_path: str | Path | Any, params: dict) -> list[tuple[bytes, dict]] | None:
        """The stored encoded pictures ([(bytes, their index entry)]), or None when absent or
        damaged. Nothing is decoded."""
        final = self.root / "frames" / self.key(video_path, kind="encoded", **params)
        found = _load_encoded(final)
        if found is not None:
            touch(final)
        return found

    def get_or_compute_encoded(self, video_path: str | Path | Any, params: dict,
                               compute: Callable[[], Iterable[tuple[bytes, dict]]]) -> list[tuple[bytes, dict]]:
        """Pictures already encoded (e.g. the JPEGs a model is sent) from the cache, or
        `compute()` stored byte for byte. Each item is (bytes, a JSON-able dict describing them:
        mime, width, height, ...); the dict comes back with "file" and "bytes" added."""
        found = self.lookup_encoded(video_path, params)
        if found is not None:
            return found
        final = self.root / "frames" / self.key(video_path, kind="encoded", **params)
        items = [(bytes(data), dict(meta)) for data, meta in compute()]
        try:
            size = _store_entry(final, items)
            bound_for(final.parent).stored(final, size)
        except OSError as exc:  # a full disk, a read-only or misnamed cache: served, not kept
            _warn_once(f"The frames cache {self.root} cannot be written ({exc.strerror or exc}); "
                       "frames are made again by every run. Point APP_CACHE_DIR at a writable folder.")
        return [(data, {**meta, "file": f"{i:06d}.bin", "bytes": len(data)})
                for i, (data, meta) in enumerate(items)]

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


def _store_frames(final: Path, frames: Iterable[Frame]) -> int:
    """Write `frames` as JPEGs (q=92) + index.json (see `_store_entry`); returns the bytes
    written."""
    import io

    def encoded():
        for frame in frames:
            buf = io.BytesIO()
            frame.image.convert("RGB").save(buf, format="JPEG", quality=JPEG_QUALITY)
            yield buf.getvalue(), {"time": frame.time, "index": frame.index}
    return _store_entry(final, encoded(), suffix=".jpg")


def _store_entry(final: Path, items: Iterable[tuple[bytes, dict]], suffix: str = ".bin") -> int:
    """Write each item's bytes to a file and an index.json listing them (each with its size) into
    a temp folder beside `final`, then rename it into place (and fsync the parent), so `final` is
    complete or absent, never partial. Returns the bytes written (0 when a whole entry of the same
    key was stored meanwhile: that one is kept)."""
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX, dir=final.parent))
    try:
        entries, total = [], 0
        for i, (data, meta) in enumerate(items):
            name = f"{i:06d}{suffix}"
            (tmp / name).write_bytes(data)
            entries.append({**meta, "file": name, "bytes": len(data)})
            total += len(data)
        index = json.dumps({"frames": entries}).encode()
        (tmp / "index.json").write_bytes(index)
        total += len(index)
        os.chmod(tmp, DIR_MODE)
        if final.exists():
            if _is_whole(final):  # another thread or process stored it meanwhile: readers may be
                shutil.rmtree(tmp, ignore_errors=True)  # reading theirs, so keep it
                return 0
            shutil.rmtree(final, ignore_errors=True)  # damaged: replaced
        try:
            os.replace(tmp, final)
        except OSError:  # another process stored the same entry first: keep theirs
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    fsync_dir(final.parent)
    return total


def _index_items(entry: Path) -> list[dict] | None:
    index = entry / "index.json"
    if not index.is_file():
        return None
    try:
        items = json.loads(index.read_text())["frames"]
        return items if isinstance(items, list) else None
    except Exception:  # noqa: BLE001 - corrupt / partial entry: caller recomputes
        return None


def _is_whole(entry: Path) -> bool:
    """Every file the entry's index lists is there at the size it says (nothing is read)."""
    items = _index_items(entry)
    if items is None:
        return False
    try:
        return all(os.path.getsize(entry / item["file"]) == int(item["bytes"]) for item in items)
    except (OSError, KeyError, TypeError, ValueError):
        return False


def _read_all(path: str) -> bytes:
    """A small file's bytes through the bare descriptor (a Python file object costs several
    times the read of a 20 kB file)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _load_encoded(entry: Path) -> list[tuple[bytes, dict]] | None:
    """Every file of the entry as stored, or None when one is missing or not the size its index
    says (a truncated write). Read with plain string paths: a batch run reads a clip's 16 files
    for each question, and pathlib's joins cost more than the reads."""
    folder = os.fspath(entry) + os.sep
    try:
        items = json.loads(_read_all(folder + "index.json"))["frames"]
        if not isinstance(items, list):
            return None
        out = []
        for item in items:
            size = int(item["bytes"])
            fd = os.open(folder + item["file"], os.O_RDONLY)
            try:
                data = os.read(fd, size + 1)  # one byte more: a longer file shows too
            finally:
                os.close(fd)
            if len(data) != size:
                return None
            out.append((data, item))
        return out
    except Exception:  # noqa: BLE001 - absent, corrupt or partial entry: caller recomputes
        return None


def _load_frames(entry: Path) -> list[Frame] | None:
    from PIL import Image

    items = _index_items(entry)
    if items is None:
        return None
    try:
        frames = []
        for item in items:
            if "bytes" in item and os.path.getsize(entry / item["file"]) != int(item["bytes"]):
                return None  # truncated (a JPEG decoder may pad a short file silently)
            with Image.open(entry / item["file"]) as im:
                im.load()
                image = im.convert("RGB")
            frames.append(Frame(image=image, time=float(item["time"]), index=int(item["index"])))
        return frames
    except Exception:  # noqa: BLE001 - corrupt / partial entry: caller recomputes
        return None
