"""The group-of-pictures pool: time-ordered requests decoded linearly in parallel threads give
exactly the frames the random-access reader gives, in order, and stop cleanly."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from components.base.errors import MediaError
from components.media import VideoSource
from components.media.gop_pool import group_by_keyframe, read_sorted
from tests.media.videos import read_index, write_index_video


@pytest.fixture(scope="module")
def movie(tmp_path_factory):
    """30 s at 24 fps, 160x96, a keyframe every 240 frames (10 s)."""
    return write_index_video(tmp_path_factory.mktemp("pool") / "movie.mp4", 720, fps=24,
                             gop=240, width=160, height=96)


def test_groups_follow_the_keyframes(movie):
    timeline = VideoSource(movie).timeline
    assert timeline.keyframe_indices() == [0, 240, 480]
    assert group_by_keyframe(timeline, [0, 5, 239, 240, 300, 700]) == [[0, 5, 239], [240, 300], [700]]


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_pool_gives_the_random_access_frames(movie, workers):
    src = VideoSource(movie, workers=workers)
    wanted = list(range(0, 720, 24))
    pooled = src.frames_at_indices(wanted)            # sorted: the pool
    single = src.frames_at_indices(wanted[::-1])[::-1]  # unsorted: the backend reader (decord)
    assert src.backend == "decord"
    assert [read_index(f.image) for f in pooled] == wanted
    assert [(f.index, f.time) for f in pooled] == [(i, i / 24) for i in wanted]
    assert all(np.array_equal(np.asarray(a.image), np.asarray(b.image)) for a, b in zip(pooled, single))


def test_pool_in_small_pieces_and_repeats(movie):
    src = VideoSource(movie, workers=2)
    timeline = src.timeline
    got = [i for i, _ in read_sorted(src.path, timeline, list(range(200, 500, 7)), None,
                                     workers=2, piece=3)]
    assert got == list(range(200, 500, 7))
    frames = src.frames_at_indices([1, 1, 2, 300, 300, 300, 301, 719, 719])
    assert [f.index for f in frames] == [1, 1, 2, 300, 300, 300, 301, 719, 719]
    assert [read_index(f.image) for f in frames] == [1, 1, 2, 300, 300, 300, 301, 719, 719]


def test_stopping_early_ends_the_worker_threads(movie):
    src = VideoSource(movie, workers=3)
    before = threading.active_count()
    frames = src.iter_fps(0, 30, fps=24, batch=4)
    assert [read_index(next(frames).image) for _ in range(3)] == [0, 1, 2]
    assert threading.active_count() > before
    frames.close()
    assert threading.active_count() == before


def test_a_failing_worker_is_a_clear_error(tmp_path, movie):
    # The second group's data overwritten: the pool's worker fails there, the message names the
    # file and the time, and the frames before the damage came out first.
    data = bytearray(movie.read_bytes())
    cut = len(data) // 2
    data[cut:cut + 20000] = b"\xff" * 20000
    bad = tmp_path / "damaged.mp4"
    bad.write_bytes(bytes(data))
    src = VideoSource(bad, decoder="pyav", workers=2)
    seen = []
    with pytest.raises(MediaError) as err:
        for f in src.iter_fps(0, 30, fps=1):
            seen.append(read_index(f.image))
    assert "damaged.mp4" in str(err.value) and "could not be decoded near 00:00:" in str(err.value)
    assert seen == list(range(0, 24 * len(seen), 24)) and len(seen) >= 5


def test_decoders_are_kept_between_requests(movie, monkeypatch):
    # Sampling a movie chunk by chunk opens each pool decoder once (a two-hour MP4's container
    # index is parsed per open), and the frames stay right.
    import components.media.gop_pool as pool

    opened = []
    real = pool.PyAVReader

    def counting(*args, **kwargs):
        opened.append(1)
        return real(*args, **kwargs)

    def sampled(start: int) -> None:
        frames = src.sample_fps(start, start + 10, fps=1)
        assert [read_index(f.image) for f in frames] == [24 * (start + k) for k in range(10)]

    monkeypatch.setattr(pool, "PyAVReader", counting)
    src = VideoSource(movie, workers=2)
    for start in (0, 10, 20):   # one group each: one decoder, opened once
        sampled(start)
    assert len(opened) == 1
    # two groups, two workers: the second worker opens a decoder of its own, unless the first has
    # already given the kept one back (on a busy machine the second thread may start that late)
    sampled(5)
    assert len(opened) in (1, 2)
    before = len(opened)
    src.sample_fps(0, 10, fps=1, max_side=80)  # another size: a new decoder (one group)
    assert len(opened) == before + 1
