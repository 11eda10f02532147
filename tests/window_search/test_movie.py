"""Movie: fixed-length chunks (last one partial), 1 fps sampling with a cap, per-chunk disk cache."""
from __future__ import annotations

import gc
import weakref

import pytest

from components.base.errors import MediaError
from components.media import DiskCache
from components.window_search.movie import Movie, chunk_bounds
from tests.window_search.conftest import write_srt, write_test_video


def test_chunk_bounds_cover_the_movie_and_the_last_chunk_is_partial():
    assert chunk_bounds(400.0, 180.0) == [(0.0, 180.0), (180.0, 360.0), (360.0, 400.0)]
    assert chunk_bounds(360.0, 180.0) == [(0.0, 180.0), (180.0, 360.0)]
    assert chunk_bounds(100.0, 180.0) == [(0.0, 100.0)]
    assert chunk_bounds(0.0, 180.0) == []
    with pytest.raises(ValueError):
        chunk_bounds(10.0, 0)


def test_movie_chunks_frames_at_1fps_and_cap(video_25s, cache):
    movie = Movie(video_25s, chunk_seconds=10, cache=cache, chunk_frame_cap=None)
    assert movie.duration == pytest.approx(25.0)
    assert [(c.index, c.start, c.end) for c in movie.chunks] == [(0, 0.0, 10.0), (1, 10.0, 20.0), (2, 20.0, 25.0)]
    frames = movie.chunk_frames(2)
    assert [f.time for f in frames] == pytest.approx([20, 21, 22, 23, 24])
    capped = Movie(video_25s, chunk_seconds=10, cache=cache, chunk_frame_cap=4)
    assert len(capped.chunk_frames(0)) == 4
    assert movie.movie_id == "v25" and not movie.has_subtitles and movie.cues(0, 25) == []


def test_second_prepare_reads_the_cache_and_decodes_nothing(video_25s, cache):
    first = Movie(video_25s, chunk_seconds=10, cache=cache)
    assert first.prepare() == 25  # 10 + 10 + 5 frames at 1 fps
    second = Movie(video_25s, chunk_seconds=10, cache=cache)
    assert second.prepare() == 0
    assert second.decoded_frames == 0
    assert [f.time for f in second.chunk_frames(1)] == pytest.approx(list(range(10, 20)))
    # the cache is keyed by the sampled window: 5 s chunks reuse only [20, 25) of the 10 s chunking
    other = Movie(video_25s, chunk_seconds=5, cache=cache)
    assert other.prepare() == 20


def test_cues_are_windowed_and_missing_subtitles_are_a_clear_error(video_25s, cache, tmp_path):
    srt = write_srt(tmp_path / "s.srt", [(1, 3, "Harry, over here."), (12, 14, "Lloyd!")])
    movie = Movie(video_25s, srt, chunk_seconds=10, cache=cache)
    assert [c.text for c in movie.cues(0, 10)] == ["Harry, over here."]
    assert movie.chunk_text(1) == "Lloyd!"
    with pytest.raises(MediaError, match="nope.srt"):
        Movie(video_25s, tmp_path / "nope.srt", cache=cache)


class CountingCache:
    """The real DiskCache, plus weak references to every frame it hands out."""

    def __init__(self, root):
        self.inner = DiskCache(root)
        self.handed_out: list[weakref.ref] = []

    def __getattr__(self, name):  # key, root, arrays, json: the real cache's
        return getattr(self.inner, name)

    def get_or_compute_frames(self, video_path, params, compute):
        frames = self.inner.get_or_compute_frames(video_path, params, compute)
        self.handed_out += [weakref.ref(f.image) for f in frames]
        return frames


def _peak_live_frames(movie: Movie, cache: CountingCache) -> int:
    """Most frames alive at once while `prepare` walks the chunks."""
    peak = 0

    def progress(_i, _n):
        nonlocal peak
        gc.collect()
        peak = max(peak, sum(1 for r in cache.handed_out if r() is not None))

    movie.prepare(progress)
    assert len(cache.handed_out) > 0
    return peak


def test_preparing_a_long_movie_holds_one_chunk_at_a_time(tmp_path, cache):
    """Stand-in for a two-hour movie: we do not encode two hours of video. Instead a low-res video
    of 6 chunks and one of 2 chunks (30 frames each at 1 fps) are prepared; the most frames alive at
    once must be the same - one chunk's worth - so memory does not grow with the movie's length."""
    long_video = write_test_video(tmp_path / "long.mp4", 180.0, fps=1.0, size=(32, 32))
    short_video = write_test_video(tmp_path / "short.mp4", 60.0, fps=1.0, size=(32, 32))
    long_cache, short_cache = CountingCache(tmp_path / "c1"), CountingCache(tmp_path / "c2")
    peak_long = _peak_live_frames(Movie(long_video, chunk_seconds=30, cache=long_cache, chunk_frame_cap=None),
                                  long_cache)
    peak_short = _peak_live_frames(Movie(short_video, chunk_seconds=30, cache=short_cache,
                                         chunk_frame_cap=None), short_cache)
    assert len(long_cache.handed_out) == 180 and len(short_cache.handed_out) == 60
    assert peak_long <= peak_short <= 30  # at most one chunk of frames alive, whatever the length


def test_the_localizer_sends_pictures_encoded_once_and_kept(video_25s, cache, monkeypatch):
    """What the model is sent for a window is made once (the JPEG an API backend made of each
    stored frame before: the same bytes) and read back as it is by the next request: no stored
    frame decoded, nothing encoded again."""
    from backends.images import jpeg_data_url
    from backends.openai_api import to_openai_messages
    from components.common import sent_frames as sent_frames_module
    from components.window_search.localizer import ModelLocalizer
    from tests.window_search.agent_fixtures import ScriptedBackend

    movie = Movie(video_25s, chunk_seconds=10, cache=cache)
    stored = movie.frames(2.0, 12.0, fps=1.0, cap=32)
    encoded = []
    real = sent_frames_module.encode
    monkeypatch.setattr(sent_frames_module, "encode", lambda *a, **k: encoded.append(1) or real(*a, **k))
    urls = []
    for _ in range(2):
        backend = ScriptedBackend(fn=lambda request: "[3.0, 5.0]")
        ModelLocalizer(backend).localize("q", (2.0, 12.0), Movie(video_25s, chunk_seconds=10, cache=cache))
        messages = to_openai_messages(backend.requests[0].messages)
        urls.append([p["image_url"]["url"] for m in messages for p in m["content"] if p["type"] == "image_url"])
        assert len(encoded) == len(stored)  # the first request encoded each frame; the second none
    assert urls[0] == urls[1] == [jpeg_data_url(f.image) for f in stored]
