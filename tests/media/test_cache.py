"""DiskCache: hits avoid recomputation, entries are atomic, corrupt entries are recomputed."""
from __future__ import annotations

import json
import os

import numpy as np

from components.media import DiskCache, VideoSource, default_cache_dir, file_identity
from tests.media.videos import read_index, write_index_video


def test_default_cache_dir_env(monkeypatch, tmp_path):
    monkeypatch.setenv("APP_CACHE_DIR", str(tmp_path / "c"))
    assert default_cache_dir() == tmp_path / "c"
    assert DiskCache().root == tmp_path / "c"
    monkeypatch.delenv("APP_CACHE_DIR")
    assert default_cache_dir().parts[-2:] == (".cache", "video-bench-explorer")


def test_file_identity_changes_with_content_and_mtime(tmp_path):
    p = tmp_path / "f.bin"
    p.write_bytes(b"x" * (3 * 1024 * 1024))
    a = file_identity(p)
    assert a == file_identity(p)
    os.utime(p, ns=(1, 1))
    b = file_identity(p)
    assert b != a
    with open(p, "r+b") as fh:  # same size and mtime, different last MiB
        fh.seek(-10, 2)
        fh.write(b"y" * 10)
    os.utime(p, ns=(1, 1))
    assert file_identity(p) != b


def test_an_unchanged_file_is_read_for_its_identity_once(tmp_path, monkeypatch):
    """A batch run asks for each clip's identity on every question that shows it: the file is read
    (its first and last MiB hashed) the first time only, and again once it changes, even when its
    size and mtime are put back."""
    from components.media import cache

    p = tmp_path / "clip.bin"
    p.write_bytes(b"x" * (3 * 1024 * 1024))
    opened = []
    real_open = os.open
    monkeypatch.setattr(cache.os, "open", lambda f, *a, **k: opened.append(os.fspath(f)) or real_open(f, *a, **k))
    first = [file_identity(p) for _ in range(5)]
    assert len(set(first)) == 1 and opened.count(str(p)) == 1
    before = os.stat(p)
    monkeypatch.setattr(cache.os, "open", real_open)
    with open(p, "r+b") as fh:  # same size, mtime put back: a new ctime
        fh.seek(-10, 2)
        fh.write(b"y" * 10)
    os.utime(p, ns=(before.st_atime_ns, before.st_mtime_ns))
    monkeypatch.setattr(cache.os, "open", lambda f, *a, **k: opened.append(os.fspath(f)) or real_open(f, *a, **k))
    assert [file_identity(p) for _ in range(3)] == [file_identity(p)] * 3 != first[:3]
    assert opened.count(str(p)) == 2


def test_frames_cache_hit_does_not_decode_again(index_video, tmp_path):
    cache = DiskCache(tmp_path / "cache")
    calls = []

    def compute():
        calls.append(1)
        return VideoSource(index_video).iter_fps(0, 5, fps=2)

    params = {"fps": 2, "window": [0, 5]}
    first = cache.get_or_compute_frames(index_video, params, compute)
    second = DiskCache(tmp_path / "cache").get_or_compute_frames(index_video, params, compute)
    assert len(calls) == 1
    assert [f.index for f in second] == [f.index for f in first] == list(range(0, 120, 12))
    assert [f.time for f in second] == [i / 24 for i in range(0, 120, 12)]
    assert [read_index(f.image) for f in second] == list(range(0, 120, 12))
    cache.get_or_compute_frames(index_video, {"fps": 1, "window": [0, 5]}, compute)
    assert len(calls) == 2  # other params, other entry


def test_frames_cache_corrupt_entry_is_recomputed(index_video, tmp_path):
    cache = DiskCache(tmp_path)
    calls = []

    def compute():
        calls.append(1)
        return VideoSource(index_video).frames_at([0, 1])

    cache.get_or_compute_frames(index_video, {"k": 1}, compute)
    entry = next((tmp_path / "frames").iterdir())
    whole = entry.read_bytes()
    last = whole.rindex(b"\xff\xd8")                         # the second JPEG's start
    entry.write_bytes(whole[:last] + b"not a jpeg".ljust(len(whole) - last, b"."))
    frames = cache.get_or_compute_frames(index_video, {"k": 1}, compute)
    assert len(calls) == 2 and [read_index(f.image) for f in frames] == [0, 24]
    entry.write_bytes(whole.replace(b'"frames"', b'{partial', 1))
    cache.get_or_compute_frames(index_video, {"k": 1}, compute)
    assert len(calls) == 3
    assert not [p for p in (tmp_path / "frames").iterdir() if p.name.startswith(".")]


def test_cache_invalidated_when_video_changes(tmp_path):
    video = write_index_video(tmp_path / "v.mp4", 10)
    cache = DiskCache(tmp_path / "c")
    calls = []

    def compute():
        calls.append(1)
        return VideoSource(video).frames_at([0])

    cache.get_or_compute_frames(video, {}, compute)
    write_index_video(video, 20)
    cache.get_or_compute_frames(video, {}, compute)
    assert len(calls) == 2


def test_array_and_json_cache(index_video, tmp_path):
    cache = DiskCache(tmp_path)
    calls = []

    def arr():
        calls.append("a")
        return np.arange(6, dtype=np.float32).reshape(2, 3)

    def js():
        calls.append("j")
        return {"cues": [1, 2], "name": "x"}

    a1 = cache.get_or_compute_array(index_video, {"model": "m"}, arr)
    a2 = cache.get_or_compute_array(index_video, {"model": "m"}, arr)
    assert a2.dtype == np.float32 and np.array_equal(a1, a2)
    assert cache.get_or_compute_json(index_video, {"p": 1}, js) == {"cues": [1, 2], "name": "x"}
    assert cache.get_or_compute_json(index_video, {"p": 1}, js) == {"cues": [1, 2], "name": "x"}
    assert calls == ["a", "j"]
    npy = next((tmp_path / "arrays").iterdir())
    npy.write_bytes(npy.read_bytes()[:20])  # truncated entry
    assert np.array_equal(cache.get_or_compute_array(index_video, {"model": "m"}, arr), a1)
    j = next((tmp_path / "json").iterdir())
    j.write_text("{")
    cache.get_or_compute_json(index_video, {"p": 1}, js)
    assert calls == ["a", "j", "a", "j"]
    assert json.loads(j.read_text())["value"]["name"] == "x"


def test_key_depends_on_params_not_order(index_video):
    k = DiskCache.key(index_video, a=1, b=[1, 2])
    assert k == DiskCache.key(index_video, b=[1, 2], a=1)
    assert k != DiskCache.key(index_video, a=2, b=[1, 2])
    assert DiskCache.key(index_video, path="x")  # a parameter may be called "path"


def test_many_threads_making_one_entry_at_once_all_get_it_whole(index_video, tmp_path):
    """Threads that miss the same entry together each store it; a store finding the entry stored
    meanwhile keeps that one (its readers may be reading it), so every thread reads it back
    whole (a store that removed it made another thread's read-back fail)."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    cache = DiskCache(tmp_path / "cache")
    together = threading.Barrier(8)

    def compute():
        frames = list(VideoSource(index_video).iter_fps(0, 5, fps=2))
        together.wait(timeout=60)  # every thread has missed before any stores
        return frames

    with ThreadPoolExecutor(8) as pool:
        got = list(pool.map(lambda _: cache.get_or_compute_frames(index_video, {"fps": 2}, compute), range(8)))
    assert all([read_index(f.image) for f in frames] == list(range(0, 120, 12)) for frames in got)
    assert [p.name for p in (tmp_path / "cache" / "frames").iterdir()] == \
        [DiskCache.key(index_video, kind="frames", fps=2) + ".pack"]
