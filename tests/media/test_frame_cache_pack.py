"""The frames cache keeps an entry in one file (issue 35): a batch run reads a clip's 16 JPEGs
with one open; entries of the layout written before (a folder of files and their index.json)
are still read, a damaged one is made again as a pack, and the size bound counts and evicts both."""
from __future__ import annotations

import json
import os
import time

from components.media import DiskCache
from components.media import cache as cache_module

KB = 1024


def _items(n: int = 16, size: int = 5 * KB, tag: int = 0) -> list[tuple[bytes, dict]]:
    return [(bytes([tag, i]) + os.urandom(size - 2), {"mime": "image/jpeg", "width": 640, "height": 360})
            for i in range(n)]


def _old_entry(cache: DiskCache, video, params: dict, items) -> os.PathLike:
    """An entry as the cache wrote it before packs: frames/<key>/ with 000000.bin ... and index.json."""
    entry = cache.root / "frames" / cache.key(video, kind="encoded", **params)
    entry.mkdir(parents=True)
    index = []
    for i, (data, meta) in enumerate(items):
        (entry / f"{i:06d}.bin").write_bytes(data)
        index.append({**meta, "file": f"{i:06d}.bin", "bytes": len(data)})
    (entry / "index.json").write_text(json.dumps({"frames": index}))
    return entry


def test_a_clips_sixteen_pictures_are_read_from_one_file(tmp_path, monkeypatch):
    video = tmp_path / "v.mp4"
    video.write_bytes(b"not decoded here")
    cache, items = DiskCache(tmp_path / "cache"), _items()
    cache.get_or_compute_encoded(video, {"n": 16}, lambda: items)
    assert [p.suffix for p in (cache.root / "frames").iterdir()] == [".pack"]

    opened: list[str] = []
    real_open = os.open

    def counting_open(path, *args, **kwargs):
        opened.append(os.fspath(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(cache_module.os, "open", counting_open)
    found = cache.lookup_encoded(video, {"n": 16})
    assert [data for data, _ in found] == [data for data, _ in items]
    assert [(m["mime"], m["width"], m["height"], m["bytes"]) for _, m in found] == \
        [("image/jpeg", 640, 360, 5 * KB)] * 16
    assert len(opened) == 1 and opened[0].endswith(".pack")


def test_an_entry_of_the_old_layout_is_still_read(tmp_path):
    video = tmp_path / "v.mp4"
    video.write_bytes(b"x")
    cache, items = DiskCache(tmp_path / "cache"), _items()
    _old_entry(cache, video, {"n": 16}, items)
    made = []
    got = cache.get_or_compute_encoded(video, {"n": 16}, lambda: made.append(1) or items)
    assert made == [] and [d for d, _ in got] == [d for d, _ in items]   # a hit: nothing made
    assert cache.holds(video, "encoded", {"n": 16})


def test_a_damaged_entry_of_the_old_layout_is_made_again_as_a_pack(tmp_path):
    video = tmp_path / "v.mp4"
    video.write_bytes(b"x")
    cache, items = DiskCache(tmp_path / "cache"), _items()
    old = _old_entry(cache, video, {"n": 16}, items)
    (old / "000003.bin").write_bytes(b"cut")                  # a torn write of the old code
    made = []
    got = cache.get_or_compute_encoded(video, {"n": 16}, lambda: made.append(1) or items)
    assert made == [1] and [d for d, _ in got] == [d for d, _ in items]  # a miss, never an error
    assert not old.exists()                                   # the damaged folder is gone
    assert [p.suffix for p in (cache.root / "frames").iterdir()] == [".pack"]
    assert [d for d, _ in cache.lookup_encoded(video, {"n": 16})] == [d for d, _ in items]


def test_the_bound_counts_and_evicts_both_layouts(tmp_path, monkeypatch):
    monkeypatch.setenv("APP_FRAME_CACHE_MB", "1")             # 1 MiB
    video = tmp_path / "v.mp4"
    video.write_bytes(b"x")
    cache = DiskCache(tmp_path / "cache")
    old = _old_entry(cache, video, {"name": "old"}, _items(2, 300 * KB, tag=1))  # 600 KB, old layout
    t = time.time() - 600
    os.utime(old / "index.json", (t, t))                      # least recently used
    cache.get_or_compute_encoded(video, {"name": "a"}, lambda: _items(1, 300 * KB, tag=2))
    cache.get_or_compute_encoded(video, {"name": "b"}, lambda: _items(1, 300 * KB, tag=3))
    assert not old.exists()                                   # 1.2 MB > 1 MiB: the old one went
    packs = sorted((cache.root / "frames").iterdir())
    assert [p.suffix for p in packs] == [".pack", ".pack"]
    assert sum(p.stat().st_size for p in packs) <= 1024 * KB


def test_a_read_marks_a_pack_used_at_most_once_a_minute(tmp_path):
    video = tmp_path / "v.mp4"
    video.write_bytes(b"x")
    cache = DiskCache(tmp_path / "cache")
    cache.get_or_compute_encoded(video, {"n": 1}, lambda: _items(1))
    pack = next((cache.root / "frames").iterdir())
    recent = time.time() - 5
    os.utime(pack, (recent, recent))
    cache.lookup_encoded(video, {"n": 1})
    assert pack.stat().st_mtime == recent                     # used seconds ago: left as it is
    old = time.time() - 3600
    os.utime(pack, (old, old))
    cache.lookup_encoded(video, {"n": 1})
    assert pack.stat().st_mtime != old                        # an hour ago: marked used now
