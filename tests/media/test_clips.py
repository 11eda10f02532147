"""Clips written with PyAV: frame-accurate cuts, reverse, thirds, loop, GIF/MP4 from frames."""
from __future__ import annotations

import av
import numpy as np
import pytest
from PIL import Image

from components.base.errors import MediaError
from components.media import VideoSource, cut_clip, loop_segment, reorder_thirds, reverse_clip, \
    write_frames, write_video_from_arrays
from components.media.clips import third_bounds
from tests.media.videos import index_image, read_index, write_index_video


def _indices(path) -> list[int]:
    src = VideoSource(path)
    return [read_index(f.image) for f in src.frames_at_indices(range(src.info.num_frames))]


def _stream_facts(path):
    with av.open(str(path)) as c:
        v = c.streams.video[0]
        return (v.codec_context.name, v.codec_context.pix_fmt, float(v.average_rate),
                len(c.streams.audio))


def test_cut_clip_keeps_frames_round_start_to_round_end(index_video, tmp_path):
    out = cut_clip(index_video, 1.0, 2.0, tmp_path / "cut.mp4")
    assert _indices(out) == list(range(24, 48))  # [round(24), round(48)) end exclusive
    assert _stream_facts(out) == ("h264", "yuv420p", 24.0, 0)
    # 0.52 s * 24 = 12.48 -> 12 ; 1.23 s * 24 = 29.52 -> 30
    assert _indices(cut_clip(index_video, 0.52, 1.23, tmp_path / "c2.mp4")) == list(range(12, 30))


def test_cut_clip_is_faststart(index_video, tmp_path):
    data = cut_clip(index_video, 0, 1, tmp_path / "fs.mp4").read_bytes()
    assert 0 <= data.find(b"moov") < data.find(b"mdat")


def test_cut_clip_past_end_and_empty_window(index_video, tmp_path):
    assert _indices(cut_clip(index_video, 4.5, 99, tmp_path / "end.mp4")) == list(range(108, 120))
    with pytest.raises(MediaError, match=r"holds no frames.*choose a longer window"):
        cut_clip(index_video, 2.0, 2.01, tmp_path / "empty.mp4")
    assert not (tmp_path / "empty.mp4").exists()


def test_cut_clip_of_long_gop_video(long_gop_video, tmp_path):
    out = cut_clip(long_gop_video, 12.5, 13.5, tmp_path / "mid.mp4")
    assert _indices(out) == list(range(300, 324))


def test_reverse_really_reverses(index_video, tmp_path):
    clip = cut_clip(index_video, 1.0, 2.0, tmp_path / "c.mp4")
    assert _indices(reverse_clip(clip, tmp_path / "r.mp4")) == list(range(47, 23, -1))


def test_reorder_thirds_default_is_b_c_a(index_video, tmp_path):
    clip = cut_clip(index_video, 0.0, 1.25, tmp_path / "c.mp4")  # frames 0..29, thirds of 10
    assert third_bounds(30) == [0, 10, 20, 30]
    got = _indices(reorder_thirds(clip, tmp_path / "s.mp4"))
    assert got == list(range(10, 20)) + list(range(20, 30)) + list(range(0, 10))
    got = _indices(reorder_thirds(clip, tmp_path / "s2.mp4", order=(2, 0, 1)))
    assert got == list(range(20, 30)) + list(range(0, 20))
    with pytest.raises(ValueError):
        reorder_thirds(clip, tmp_path / "bad.mp4", order=(0, 0, 1))


def test_loop_segment_repeats(index_video, tmp_path):
    out = loop_segment(index_video, 1.0, 1.5, 3, tmp_path / "loop.mp4")
    assert _indices(out) == list(range(24, 36)) * 3


def test_reordering_refuses_long_clips(index_video, tmp_path):
    with pytest.raises(MediaError, match=r"would have 120 frames \(> 100\).*cut a shorter window"):
        reverse_clip(index_video, tmp_path / "r.mp4", max_frames=100)
    with pytest.raises(MediaError, match=r"would have 360 frames"):
        loop_segment(index_video, 0, 5, 3, tmp_path / "l.mp4", max_frames=300)


def test_write_frames_mp4_from_pil_and_arrays(tmp_path):
    arrays = [index_image(i) for i in (5, 9, 200)]
    mp4 = write_frames([Image.fromarray(a) for a in arrays], tmp_path / "p.mp4", fps=2)
    assert _indices(mp4) == [5, 9, 200]
    src = VideoSource(mp4)
    assert src.info.fps == 2.0 and src.info.num_frames == 3
    assert _indices(write_video_from_arrays(iter(arrays), tmp_path / "a.mp4", fps=10)) == [5, 9, 200]


def test_write_frames_odd_size_is_cropped_even(tmp_path):
    arrays = [np.pad(index_image(i), ((0, 1), (0, 1), (0, 0)), constant_values=128) for i in (3, 4)]
    out = write_frames(arrays, tmp_path / "odd.mp4", fps=5)
    assert VideoSource(out).info.width == 64 and VideoSource(out).info.height == 48
    assert _indices(out) == [3, 4]


def test_write_frames_gif(tmp_path):
    arrays = [index_image(i) for i in (1, 2, 300)]
    gif = write_frames(arrays, tmp_path / "x.gif", fps=4)
    with Image.open(gif) as im:
        assert im.format == "GIF" and im.n_frames == 3
        assert im.info["duration"] == 250
        got = []
        for k in range(3):
            im.seek(k)
            got.append(read_index(im.convert("RGB")))
    assert got == [1, 2, 300]


def test_write_frames_rejects_unknown_suffix_and_no_frames(tmp_path):
    with pytest.raises(ValueError, match=r"\.mp4 or \.gif"):
        write_frames([index_image(0)], tmp_path / "x.avi", fps=1)
    with pytest.raises(MediaError, match="no frames"):
        write_frames([], tmp_path / "none.mp4", fps=1)
    assert not list(tmp_path.iterdir())  # nothing half-written left behind


def test_clip_reencoded_from_odd_sized_source(tmp_path):
    src = write_index_video(tmp_path / "odd.mp4", 24, width=66, height=50)
    out = cut_clip(src, 0, 0.5, tmp_path / "o.mp4")
    assert _indices(out) == list(range(12))


def test_cuts_from_a_b_frame_source_mid_gop(tmp_path):
    # write_video_from_arrays encodes with B-frames and one long GOP: cuts must still be exact.
    src = write_video_from_arrays((index_image(i) for i in range(100)), tmp_path / "b.mp4", fps=24)
    with av.open(str(src)) as c:
        assert c.streams.video[0].codec_context.has_b_frames
    assert _indices(cut_clip(src, 1.5, 3.0, tmp_path / "c.mp4")) == list(range(36, 72))
    assert _indices(loop_segment(src, 3.5, 3.75, 2, tmp_path / "l.mp4")) == list(range(84, 90)) * 2


def test_reverse_in_segments(index_video, tmp_path, monkeypatch):
    import components.media.clips as clips

    monkeypatch.setattr(clips, "_SEGMENT_BYTES", 1)  # segments of the 32-frame minimum
    assert _indices(reverse_clip(index_video, tmp_path / "r.mp4")) == list(range(119, -1, -1))
