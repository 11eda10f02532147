"""The disk frames cache: bounded by APP_FRAME_CACHE_MB (least recently used entries evicted, a
read counts as a use), never evicting an entry being written, never reading a half-written or
truncated entry."""
from __future__ import annotations

import os
import shutil
import time

from components.media import DiskCache
from components.media.cache_bound import DEFAULT_FRAME_CACHE_MB, STALE_TEMP_S, frame_cache_limit

KB = 1024


def _blob(tag: int, size: int = 300 * KB) -> bytes:
    return os.urandom(size - 1) + bytes([tag])


class Counted:
    """compute() for get_or_compute_encoded: the same bytes for a name every time, calls counted."""

    def __init__(self):
        self.calls: list[str] = []
        self._data: dict[str, bytes] = {}

    def __call__(self, name: str, size: int = 300 * KB):
        def compute():
            self.calls.append(name)
            data = self._data.setdefault(name, _blob(len(self._data), size))
            return [(data, {"mime": "application/octet-stream", "width": 1, "height": 1})]
        return compute


def _entry(cache: DiskCache, video, name: str):
    """The entry's one file (components.media.cache: `<key>.pack`)."""
    return cache.root / "frames" / (cache.key(video, kind="encoded", name=name) + ".pack")


def _age(entry, seconds_ago: float) -> None:
    t = time.time() - seconds_ago
    os.utime(entry, (t, t))


def test_writing_past_the_bound_evicts_the_least_recently_used_entry(tmp_path, monkeypatch):
    monkeypatch.setenv("APP_FRAME_CACHE_MB", "1")             # 1 MiB: three 300 KB entries fit
    video = tmp_path / "v.mp4"
    video.write_bytes(b"not decoded here")
    cache, compute = DiskCache(tmp_path / "cache"), Counted()
    for name in ("a", "b", "c"):
        cache.get_or_compute_encoded(video, {"name": name}, compute(name))
    _age(_entry(cache, video, "a"), 300)                     # a: the oldest write ...
    _age(_entry(cache, video, "b"), 200)
    _age(_entry(cache, video, "c"), 100)
    assert cache.lookup_encoded(video, {"name": "a"}) is not None   # ... but read just now
    assert compute.calls == ["a", "b", "c"]

    cache.get_or_compute_encoded(video, {"name": "d"}, compute("d"))  # 1.2 MB > 1 MiB
    assert not _entry(cache, video, "b").exists()            # least recently used: gone
    for name in ("a", "c", "d"):
        assert _entry(cache, video, name).is_file()
    used = sum(f.stat().st_size for f in (cache.root / "frames").rglob("*") if f.is_file())
    assert used <= 1024 * KB
    cache.get_or_compute_encoded(video, {"name": "b"}, compute("b"))   # asked again: recomputed
    assert compute.calls == ["a", "b", "c", "d", "b"]
    assert [p.name for p in (cache.root / "frames").iterdir() if p.name.startswith(".")] == []


def test_an_entry_being_written_is_never_evicted_and_a_stale_one_is_cleared(tmp_path, monkeypatch):
    monkeypatch.setenv("APP_FRAME_CACHE_MB", "1")
    video = tmp_path / "v.mp4"
    video.write_bytes(b"x")
    cache, compute = DiskCache(tmp_path / "cache"), Counted()
    frames = cache.root / "frames"
    frames.mkdir(parents=True)
    writing = frames / ".tmp-being-written"                  # another writer's entry in progress
    writing.mkdir()
    (writing / "000000.bin").write_bytes(_blob(1, 900 * KB))
    crashed = frames / ".tmp-left-by-a-crash"
    crashed.mkdir()
    (crashed / "000000.bin").write_bytes(_blob(2, 100 * KB))
    old = time.time() - STALE_TEMP_S - 60
    os.utime(crashed, (old, old))

    cache.get_or_compute_encoded(video, {"name": "big"}, compute("big", 1200 * KB))
    assert (writing / "000000.bin").is_file()                # in progress: kept
    assert not crashed.exists()                              # an hour old: a crash's leftover
    assert _entry(cache, video, "big").is_file()             # the entry just written stays, alone
    assert cache.lookup_encoded(video, {"name": "big"}) is not None
    assert compute.calls == ["big"]


def test_a_truncated_or_unfinished_entry_is_never_read(tmp_path):
    video = tmp_path / "v.mp4"
    video.write_bytes(b"x")
    cache, compute = DiskCache(tmp_path / "cache"), Counted()
    first = cache.get_or_compute_encoded(video, {"name": "a"}, compute("a"))
    entry = _entry(cache, video, "a")
    whole = entry.read_bytes()
    entry.write_bytes(whole[:1000])                           # a write cut short
    assert cache.lookup_encoded(video, {"name": "a"}) is None
    again = cache.get_or_compute_encoded(video, {"name": "a"}, compute("a"))
    assert compute.calls == ["a", "a"]                        # recomputed ...
    assert again[0][0] == first[0][0] and entry.read_bytes() == whole  # ... and replaced

    entry.write_bytes(whole[whole.index(b"\n", 20) + 1:])    # the bytes without their index
    assert cache.lookup_encoded(video, {"name": "a"}) is None
    cache.get_or_compute_encoded(video, {"name": "a"}, compute("a"))
    assert compute.calls == ["a", "a", "a"]

    # an entry still under its temp name (a writer that has not renamed it yet) is not read
    other = _entry(cache, video, "b")
    shutil.copyfile(entry, other.with_name("." + other.name + ".x1y2.tmp"))
    assert cache.lookup_encoded(video, {"name": "b"}) is None


def test_a_file_longer_than_its_index_says_is_not_read(tmp_path):
    """The bare-descriptor read asks for one byte more than the index lists, so a file that grew
    (two writers' bytes in one file) reads as damaged, not as its first bytes."""
    video = tmp_path / "v.mp4"
    video.write_bytes(b"x")
    cache, compute = DiskCache(tmp_path / "cache"), Counted()
    first = cache.get_or_compute_encoded(video, {"name": "a"}, compute("a"))
    assert [d for d, _ in cache.lookup_encoded(video, {"name": "a"})] == [d for d, _ in first]
    data_file = _entry(cache, video, "a")
    data_file.write_bytes(data_file.read_bytes() + b"z")
    assert cache.lookup_encoded(video, {"name": "a"}) is None


def test_a_truncated_picture_entry_is_recomputed(tmp_path, index_video):
    from components.media import VideoSource

    cache, calls = DiskCache(tmp_path / "cache"), []

    def compute():
        calls.append(1)
        return VideoSource(index_video).iter_fps(0, 2, fps=2)

    first = cache.get_or_compute_frames(index_video, {"fps": 2}, compute)
    entry = next((cache.root / "frames").iterdir())
    entry.write_bytes(entry.read_bytes()[:-200])              # the last picture cut short
    again = cache.get_or_compute_frames(index_video, {"fps": 2}, compute)
    assert len(calls) == 2 and len(again) == len(first)


def test_the_bound_comes_from_app_frame_cache_mb(monkeypatch):
    monkeypatch.setenv("APP_FRAME_CACHE_MB", "512")
    assert frame_cache_limit() == 512 * 1024 * 1024
    for bad in ("lots", "-5", "0", "1.5"):
        monkeypatch.setenv("APP_FRAME_CACHE_MB", bad)
        assert frame_cache_limit() == DEFAULT_FRAME_CACHE_MB * 1024 * 1024
    monkeypatch.delenv("APP_FRAME_CACHE_MB")
    assert frame_cache_limit() == DEFAULT_FRAME_CACHE_MB * 1024 * 1024


def test_a_cache_that_cannot_be_written_still_serves_what_was_made(tmp_path, caplog):
    video = tmp_path / "v.mp4"
    video.write_bytes(b"x")
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder should be")
    cache, compute = DiskCache(blocked), Counted()
    first = cache.get_or_compute_encoded(video, {"name": "a"}, compute("a"))
    again = cache.get_or_compute_encoded(video, {"name": "a"}, compute("a"))
    assert [d for d, _ in first] == [d for d, _ in again] and compute.calls == ["a", "a"]
    assert "cannot be written" in caplog.text and "APP_CACHE_DIR" in caplog.text
