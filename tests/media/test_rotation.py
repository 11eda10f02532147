"""Rotation metadata: frames come out upright, as a browser (and the ffmpeg command line) shows
them; sizes are the displayed sizes."""
from __future__ import annotations

import numpy as np
import pytest

from components.media import VideoSource
from tests.media.ffmpeg_videos import HEIGHT, WIDTH, ffmpeg_first_frame, red_corner, write_rotated

# What this ffmpeg writes for `-metadata:s:v rotate=D` and reads back as the display matrix,
# checked against its own display of the file in test_upright_as_ffmpeg_shows_it.
CORNER = {90: "bl", 180: "br", 270: "tr"}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("rotation")


@pytest.mark.parametrize("degrees", [90, 180, 270])
@pytest.mark.parametrize("suffix", [".mp4", ".mov"])
def test_upright_as_ffmpeg_shows_it(folder, degrees, suffix):
    path = write_rotated(folder, degrees, suffix)
    shown = ffmpeg_first_frame(path)
    assert red_corner(shown) == CORNER[degrees]
    src = VideoSource(path)
    assert src.rotation == degrees
    displayed = (HEIGHT, WIDTH) if degrees in (90, 270) else (WIDTH, HEIGHT)
    assert src.size == displayed and (src.info.width, src.info.height) == displayed
    frame = src.frames_at([0.0])[0]
    assert frame.image.size == displayed
    assert red_corner(frame.image) == CORNER[degrees]
    assert np.abs(np.asarray(frame.image, dtype=int) - shown.astype(int)).mean() < 4


@pytest.mark.parametrize("degrees", [90, 270])
def test_rotated_and_resized(folder, degrees):
    src = VideoSource(write_rotated(folder, degrees))
    small = src.frames_at([0.0], max_side=48)[0]
    exact = src.frames_at([0.0], max_side=48, exact_resize=True)[0]
    assert small.image.size == exact.image.size == (32, 48)
    assert red_corner(small.image) == red_corner(exact.image) == CORNER[degrees]
    assert [f.image.size for f in src.sample_fps(0, 0.5, fps=4, max_height=24)] == [(16, 24)] * 2


def test_unrotated_file_is_untouched(folder):
    src = VideoSource(write_rotated(folder, 90).with_name("upright.mp4"))  # its source
    assert src.rotation == 0 and src.size == (WIDTH, HEIGHT)
    assert red_corner(src.frames_at([0.0])[0].image) == "tl"
    assert src.backend is None or src.backend == "decord"


@pytest.mark.parametrize("degrees", [90, 180])
def test_cut_clip_of_a_rotated_source_is_upright(folder, degrees, tmp_path):
    from components.media import cut_clip

    out = cut_clip(write_rotated(folder, degrees), 0.0, 0.25, tmp_path / f"cut{degrees}.mp4")
    clip = VideoSource(out)
    assert clip.rotation == 0 and clip.num_frames == 6
    assert clip.size == ((HEIGHT, WIDTH) if degrees == 90 else (WIDTH, HEIGHT))
    assert red_corner(clip.frames_at([0.0])[0].image) == CORNER[degrees]
