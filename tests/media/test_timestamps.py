"""Presentation timestamps: a variable-frame-rate clip is timed and sampled by real time."""
from __future__ import annotations

import pytest

from components.media import VideoSource
from tests.media.ffmpeg_videos import vfr_times, write_vfr
from tests.media.videos import read_index


@pytest.fixture(scope="module")
def vfr_video(tmp_path_factory):
    """0-119 at 30 fps (0 .. 3.967 s), nothing until 5.0 s, then 120-149 at 15 fps."""
    return write_vfr(tmp_path_factory.mktemp("vfr"))


@pytest.fixture(params=["auto", "pyav"])
def vfr(request, vfr_video):
    return VideoSource(vfr_video, decoder=request.param)


def test_frame_times_are_the_presentation_timestamps(vfr):
    assert not vfr.timeline.cfr
    assert vfr.num_frames == 150
    assert vfr.frame_times.tolist() == vfr_times()
    assert vfr.duration == 7.0  # the last frame (6.933 s) lasts 1/15 s
    # the old rule, index / average fps, would call frame 149 6.95 s and frame 120 5.6 s
    assert vfr.time_of(149) == 149 / 15 - 3 and vfr.time_of(120) == 5.0


def test_each_frame_carries_its_own_time(vfr):
    wanted = [0, 119, 120, 121, 149, 60, 130]
    frames = vfr.frames_at_indices(wanted)
    assert [read_index(f.image) for f in frames] == wanted
    assert [f.time for f in frames] == [vfr_times()[i] for i in wanted]


def test_one_fps_is_one_frame_per_second_of_real_time(vfr):
    frames = vfr.sample_fps(0, vfr.duration, fps=1)
    # 4 s is nearer 3.967 s (frame 119) than 5.0 s; 5 s and 6 s are frames 120 and 135
    assert [f.index for f in frames] == [0, 30, 60, 90, 119, 120, 135]
    assert [read_index(f.image) for f in frames] == [0, 30, 60, 90, 119, 120, 135]
    assert [f.time for f in frames] == [0.0, 1.0, 2.0, 3.0, 119 / 30, 5.0, 6.0]
    assert [f.index for f in vfr.iter_fps(0, vfr.duration, fps=1, batch=2)] == \
        [f.index for f in frames]


def test_frames_at_picks_the_nearest_frame_by_time(vfr):
    frames = vfr.frames_at([4.48, 4.49, 5.49, 5.5, 100.0, -1.0])
    # 4.4833 s is half-way between 3.9667 and 5.0, and 5.5 s between 5.4667 (127) and 5.5333
    # (128): the later frame wins (round half up, as at a constant rate)
    assert [f.index for f in frames] == [119, 120, 127, 128, 149, 0]
    assert vfr.index_at((119 / 30 + 5.0) / 2) == 120
    assert vfr.index_at((119 / 30 + 5.0) / 2 - 1e-6) == 119
    assert [read_index(f.image) for f in frames] == [f.index for f in frames]


def test_constant_rate_times_stay_index_over_fps(index_video):
    src = VideoSource(index_video)
    assert src.timeline.cfr
    assert src.frame_times.tolist() == [i / 24 for i in range(120)]
    assert [src.index_at(t) for t in (0.5 / 24, 1.02, 1.021)] == [1, 24, 25]
