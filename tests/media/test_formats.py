"""Files a user would bring (made by the ffmpeg command line): every one opens, reads the right
frames at the right times, through decord where it reads them right and PyAV otherwise."""
from __future__ import annotations

import re

import pytest

from components.base.errors import MediaError
from components.media import VideoSource
from tests.media.ffmpeg_videos import FORMATS, WIDTH, HEIGHT, write_format
from tests.media.videos import read_index

#: decord reads these right; AV1 it cannot open, HEVC from x265 has open GOPs (decord returns
#: wrong frames after a seek there: tests/media/test_formats.py::test_decord_is_wrong_on_open_gop)
EXPECTED_BACKEND = {"hevc_mkv": "pyav", "vp9_webm": "decord", "h264_10bit": "decord",
                    "mov": "decord", "mpeg4_avi": "decord", "av1_mp4": "pyav", "av1_webm": "pyav"}
WANTED = [0, 13, 47, 25, 5, 12, 11, 36, 35]  # across GOPs (12 frames), backwards, repeats of GOPs
DECODER_LOG = re.compile(r"\[\d\d:\d\d:\d\d\]|/github/workspace|\.cc:\d+|Errno|Check failed")


@pytest.fixture(scope="module")
def formats(tmp_path_factory):
    folder = tmp_path_factory.mktemp("formats")
    return {name: write_format(folder, name) for name in FORMATS}


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_every_format_reads_the_right_frames(formats, name):
    src = VideoSource(formats[name])
    info = src.info
    assert (info.num_frames, info.fps, info.width, info.height, info.duration) == \
        (48, 24.0, WIDTH, HEIGHT, 2.0)
    frames = src.frames_at_indices(WANTED)
    assert [read_index(f.image) for f in frames] == WANTED
    assert [f.index for f in frames] == WANTED
    assert [f.time for f in frames] == [i / 24 for i in WANTED]
    assert src.backend == EXPECTED_BACKEND[name]
    # time-based sampling, and reduced-size decoding
    sampled = src.sample_fps(0.0, 2.0, fps=4, max_side=48)
    assert [f.index for f in sampled] == list(range(0, 48, 6))
    assert [f.time for f in sampled] == [k / 4 for k in range(8)]
    assert {f.image.size for f in sampled} == {(48, 32)}
    assert [read_index(f.image.resize((WIDTH, HEIGHT))) for f in sampled] == list(range(0, 48, 6))


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_pyav_reader_agrees_with_the_fast_path(formats, name):
    src = VideoSource(formats[name], decoder="pyav")
    assert src.backend == "pyav"
    frames = src.frames_at_indices(WANTED)
    assert [read_index(f.image) for f in frames] == WANTED
    assert [f.time for f in frames] == [i / 24 for i in WANTED]
    assert [read_index(f.image) for f in src.iter_fps(0, 2, fps=24, batch=5)] == list(range(48))


def test_mkv_millisecond_timestamps_give_exact_frame_times(formats):
    # Matroska stores 42 ms, 83 ms, ...: the rate is constant, so times are index / fps.
    src = VideoSource(formats["vp9_webm"])
    assert src.timeline.time_base.denominator == 1000 and src.timeline.cfr
    assert src.frame_times.tolist() == [i / 24 for i in range(48)]


def test_decord_is_wrong_on_open_gop(formats):
    # Why HEVC goes to PyAV: forced through decord, a seek lands on the wrong frames.
    src = VideoSource(formats["hevc_mkv"], decoder="decord")
    assert src.timeline.open_gop
    got = [read_index(f.image) for f in src.frames_at_indices(WANTED)]
    assert got != WANTED


def test_av1_through_decord_only_is_a_clear_error(formats):
    src = VideoSource(formats["av1_mp4"], decoder="decord")
    with pytest.raises(MediaError) as err:
        src.frames_at([0.0])
    msg = str(err.value)
    assert "av1.mp4" in msg and "decoder='auto'" in msg
    assert not DECODER_LOG.search(msg), msg


def test_corrupt_data_in_the_middle_is_a_clear_error(tmp_path, formats):
    # The index at the front (faststart), a quarter of the frame data overwritten: opening or
    # decoding fails with a message naming the file, never the decoder's own text.
    import subprocess

    for name in ("av1_mp4", "mov"):
        moved = tmp_path / f"faststart_{formats[name].name}"
        subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", str(formats[name]), "-c",
                        "copy", "-movflags", "+faststart", str(moved)], check=True)
        data = bytearray(moved.read_bytes())
        a, b = int(len(data) * 0.55), int(len(data) * 0.8)
        data[a:b] = b"\xff" * (b - a)
        bad = tmp_path / f"broken_{formats[name].name}"
        bad.write_bytes(bytes(data))
        with pytest.raises(MediaError) as err:
            VideoSource(bad).frames_at_indices(list(range(48)))
        msg = str(err.value)
        assert bad.name in msg and "corrupt" in msg and "ffmpeg -i in.mp4" in msg, msg
        assert not DECODER_LOG.search(msg), msg
