"""Reopening: the file is hashed once per open, and a stored timeline is not indexed again."""
from __future__ import annotations

import numpy as np
import pytest

import components.media.cache as cache_module
import components.media.video as video_module
from components.media import DiskCache, VideoSource, file_identity, open_video
from components.window_search.movie import Movie
from tests.media.ffmpeg_videos import write_vfr
from tests.media.videos import read_index, write_index_video


@pytest.fixture
def hash_calls(monkeypatch):
    calls = []
    real = cache_module.file_identity

    def counting(path):
        calls.append(str(path))
        return real(path)

    monkeypatch.setattr(cache_module, "file_identity", counting)
    monkeypatch.setattr(video_module, "file_identity", counting)
    return calls


@pytest.fixture
def index_builds(monkeypatch):
    calls = []
    real = video_module.build_index

    def counting(path):
        calls.append(str(path))
        return real(path)

    monkeypatch.setattr(video_module, "build_index", counting)
    return calls


def test_source_identity_is_the_file_identity_and_keys_agree(index_video):
    src = VideoSource(index_video)
    assert src.identity == file_identity(index_video)
    assert DiskCache.key(src, kind="frames", fps=1) == DiskCache.key(index_video, kind="frames", fps=1)


def test_movie_frames_hash_the_video_once(tmp_path, hash_calls):
    video = write_index_video(tmp_path / "movie.mp4", 240, fps=24, gop=48)
    movie = Movie(video, cache=DiskCache(tmp_path / "cache"), chunk_seconds=4.0)
    cap = movie.chunk_frame_cap
    for attempt in range(3):  # misses, then hits
        for c in movie.chunks:
            assert movie.is_cached(c.start, c.end, 1.0, cap) == (attempt > 0)
            frames = movie.frames(c.start, c.end, 1.0, cap)
            assert [read_index(f.image.resize((64, 48))) for f in frames] == \
                [int(t * 24) for t in range(int(c.start), int(c.end))]
    assert hash_calls.count(str(video)) == 1
    assert movie.prepare() == 0  # everything cached: nothing decoded


def test_open_video_does_not_hash_per_call(tmp_path, hash_calls):
    video = write_index_video(tmp_path / "clip.mp4", 12)
    sources = {id(open_video(video)) for _ in range(5)}
    assert len(sources) == 1 and hash_calls.count(str(video)) == 1


def test_stored_timeline_is_not_indexed_again(tmp_path, index_builds):
    video = write_vfr(tmp_path)
    cache = DiskCache(tmp_path / "cache")
    first = VideoSource(video, index_cache=cache)
    again = VideoSource(video, index_cache=cache)
    assert index_builds == [str(video)]
    assert again.backend is None  # no decoder opened by a reopen
    assert np.array_equal(again.timeline.pts, first.timeline.pts)
    assert again.frame_times.tolist() == first.frame_times.tolist()
    assert (again.info, again.timeline.cfr, again.rotation) == (first.info, False, 0)
    assert [f.time for f in again.sample_fps(0, 7, 1)] == [f.time for f in first.sample_fps(0, 7, 1)]
    # no cache: always indexed; a corrupt entry: indexed again and replaced
    VideoSource(video, index_cache=False)
    assert len(index_builds) == 2
    for entry in (tmp_path / "cache" / "json").iterdir():
        entry.write_text("{not json")
    assert VideoSource(video, index_cache=cache).num_frames == 150
    assert len(index_builds) == 3
    VideoSource(video, index_cache=cache)
    assert len(index_builds) == 3


def test_short_clips_are_not_stored_in_the_default_cache(tmp_path, monkeypatch, index_builds):
    monkeypatch.setenv("APP_CACHE_DIR", str(tmp_path / "default"))
    video = write_index_video(tmp_path / "short.mp4", 24)
    VideoSource(video)
    VideoSource(video)
    assert len(index_builds) == 2 and not (tmp_path / "default").exists()
    monkeypatch.setattr(video_module, "INDEX_CACHE_MIN_FRAMES", 20)  # "long" from 20 frames
    VideoSource(video)
    VideoSource(video)
    assert len(index_builds) == 3 and any((tmp_path / "default" / "json").iterdir())
