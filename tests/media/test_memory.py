"""Bounded memory: iterating a long window costs no more memory than a short one."""
from __future__ import annotations

import gc
import os

import pytest

from components.media import VideoSource
from tests.media.videos import read_index, write_index_video

_PAGE = os.sysconf("SC_PAGE_SIZE")


def _rss() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * _PAGE


def _peak_growth(frames, keep: bool = False) -> tuple[int, int]:
    """(peak RSS growth in bytes while consuming `frames`, number of frames)."""
    gc.collect()
    base = peak = _rss()
    kept, count = [], 0
    for frame in frames:
        count += 1
        if keep:
            kept.append(frame)
        if count % 8 == 0:
            peak = max(peak, _rss())
    peak = max(peak, _rss())
    return peak - base, count


@pytest.fixture(scope="module")
def two_minute_video(media_dir):
    """2 min at 8 fps, 320x240 (230 kB per RGB frame), keyframe every 10 s."""
    return write_index_video(media_dir / "two_min.mp4", 960, fps=8, width=320, height=240, gop=80)


_MEASURE = """
import json, sys
sys.path.insert(0, {root!r})
from components.media import VideoSource
from tests.media.test_memory import _peak_growth
src = VideoSource({video!r})
_peak_growth(src.iter_fps(0, 20, fps=4))  # warm up allocator and decoder
short, n_short = _peak_growth(src.iter_fps(0, 15, fps=4))
long, n_long = _peak_growth(src.iter_fps(0, 120, fps=4))
kept, _ = _peak_growth(src.iter_fps(0, 120, fps=4), keep=True)
print(json.dumps([short, n_short, long, n_long, kept]))
"""


def test_iter_fps_memory_flat_in_window_length(two_minute_video):
    # A fresh process: in a long test session the allocator reuses pages freed by earlier tests,
    # which hides growth from RSS and would make the control below meaningless.
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[2])
    out = subprocess.run([sys.executable, "-c", _MEASURE.format(root=root, video=str(two_minute_video))],
                         capture_output=True, text=True, timeout=300, cwd=root)
    assert out.returncode == 0, out.stderr[-2000:]
    short, n_short, long, n_long, kept = json.loads(out.stdout.strip().splitlines()[-1])
    assert (n_short, n_long) == (60, 480)
    # 480 frames kept would be ~110 MB; streamed, the long window must cost about what the short
    # one does: one batch of 32 frames (7 MB) plus what the decoder threads buffer (measured
    # 14-22 MB whatever the window length), hence 40 MB of slack.
    assert long <= 2 * short + 40 * 2**20, (short, long)
    # The measurement is sensitive: keeping the frames shows the growth.
    assert kept > long + 0.5 * n_long * 320 * 240 * 3, (long, kept)


def test_iter_fps_long_window_frames_correct(two_minute_video):
    src = VideoSource(two_minute_video)
    frames = list(src.iter_fps(0, 120, fps=0.5, max_side=160))
    assert {f.image.size for f in frames} == {(160, 120)}
    # Scale back up to read the bit blocks at their original positions.
    assert [read_index(f.image.resize((320, 240))) for f in frames] == list(range(0, 960, 16))
    assert [f.time for f in frames] == [float(t) for t in range(0, 120, 2)]


def test_no_decoding_ahead_after_a_read(two_minute_video):
    # decord keeps decoding (and holding) frames after get_batch unless told to stop
    # (dmlc/decord#197, #208): memory would then grow with the movie, not with what was read.
    import time

    src = VideoSource(two_minute_video)
    src.frames_at([1.0])
    gc.collect()
    before = _rss()
    time.sleep(1.0)
    frames = src.frames_at([2.0, 3.0])
    time.sleep(1.0)
    assert [read_index(f.image) for f in frames] == [16, 24]
    assert _rss() - before < 30 * 2**20, (_rss() - before) / 2**20
